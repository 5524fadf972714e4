//! `tests.csv` / `tests.parquet`: the verdicts of test runs (experiment kind `test`), one row
//! per (run, test). Written only when a run of the study has verdicts, so generation studies
//! export the same files as before.

use std::path::Path;

use clowder_proto::RunResult;
use clowder_schema::{TESTS, TableWriter, Value};

use super::ExportError;
use crate::store::StoredRun;

/// Writes the test rows of one run, creating the table at its first row.
pub(super) fn push(
    writer: &mut Option<TableWriter>,
    out_dir: &Path,
    row: &StoredRun,
    result: &RunResult,
) -> Result<(), ExportError> {
    if result.tests.is_empty() {
        return Ok(());
    }
    let w = match writer {
        Some(w) => w,
        None => writer.insert(TableWriter::create(out_dir, TESTS)?),
    };
    let run = &row.run;
    // The suite's file name is in the run's configuration; the entry name is `algorithm`.
    let suite = clowder_proto::test_run::TestRunConfig::parse(&run.config_json)
        .and_then(Result::ok)
        .map_or_else(|| run.algorithm.clone(), |c| c.suite);
    let mut tests: Vec<_> = result.tests.iter().collect();
    tests.sort_by_key(|t| t.index);
    for t in tests {
        w.push(&[
            run.run_id.clone().into(),
            run.dataset.clone().into(),
            run.project.clone().into(),
            run.algorithm.clone().into(),
            run.seed.into(),
            row.status.clone().into(),
            suite.clone().into(),
            Value::from(t.index),
            t.test.clone().into(),
            t.status.clone().into(),
            t.message.clone().into(),
            t.steps.into(),
        ])?;
    }
    Ok(())
}
