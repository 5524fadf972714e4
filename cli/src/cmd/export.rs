//! `clowder export RESULTS`: writes the CSV and Parquet exports of a study
//! from its store (also while its coordinator is running: a consistent snapshot).

use std::path::PathBuf;
use std::process::ExitCode;

use clowder_coordinator::export::{ExportOptions, export_results};

/// Arguments of `clowder export`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Results folder of a study (`results/<name>`).
    pub results: PathBuf,
    /// Every run in the store, not only those of the latest submission.
    #[arg(long)]
    pub all: bool,
    /// Write the files here instead of into the results folder.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let files = export_results(&args.results, &ExportOptions { all: args.all, out_dir: args.out })?;
    for f in files {
        println!("{}", f.display());
    }
    Ok(ExitCode::SUCCESS)
}
