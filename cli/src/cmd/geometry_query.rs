//! `clowder vm geometry-query PROJECT QUERIES.json`: answers the render oracle's
//! geometry questions (`shared/tools/render-oracle`, query format) with the VM's CPU
//! renderer and prints the answers in the oracle's answer format (JSON lines), so
//! `scripts/geometry.sh` can compare them question by question.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clowder_vm::geometry::query::answer_queries;
use clowder_vm::geometry::skin::CostumeSet;
use clowder_vm::{LoadLimits, Project};

/// Largest query file accepted, in bytes.
const MAX_QUERY_BYTES: u64 = 256 << 20;

/// Runs the subcommand.
pub fn run(project: &Path, queries: &Path) -> anyhow::Result<ExitCode> {
    let loaded = Project::load_path(project, &LoadLimits::default())
        .with_context(|| format!("loading {}", project.display()))?;
    let size = std::fs::metadata(queries).with_context(|| format!("reading {}", queries.display()))?.len();
    anyhow::ensure!(
        size <= MAX_QUERY_BYTES,
        "{}: {size} bytes, over the limit of {MAX_QUERY_BYTES}",
        queries.display()
    );
    let text = std::fs::read(queries).with_context(|| format!("reading {}", queries.display()))?;
    let json: serde_json::Value =
        serde_json::from_slice(&text).with_context(|| format!("{}: not valid JSON", queries.display()))?;
    let loaded = Arc::new(loaded);
    let costumes = CostumeSet::new(loaded.clone());
    for (target, costume, why) in costumes.approximations() {
        eprintln!("geometry-query: approximate costume {costume:?} of {target:?}: {why}");
    }
    let lines = answer_queries(&costumes, &json).map_err(|e| anyhow::anyhow!("{}: {e}", queries.display()))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for l in lines {
        writeln!(out, "{l}")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
