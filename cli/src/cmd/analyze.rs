//! `clowder analyze RESULTS`.

use std::path::Path;
use std::process::ExitCode;

/// Prints the per-algorithm summary of a results folder.
pub fn run(results: &Path) -> anyhow::Result<ExitCode> {
    let rows = clowder_analysis::summarize(results)?;
    print!("{}", clowder_analysis::format_summary(&rows));
    Ok(ExitCode::SUCCESS)
}
