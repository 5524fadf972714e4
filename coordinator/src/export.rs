//! Result exports: `runs.csv`, one row per run.

use std::path::Path;

use clowder_proto::RunStatus;

use crate::table::{RunEntry, RunState};

/// Columns of `runs.csv`. `duration_ms` is the only timing column.
pub const RUNS_COLUMNS: &[&str] = &[
    "run_id",
    "project",
    "algorithm",
    "seed",
    "budget_unit",
    "budget",
    "status",
    "coverage",
    "covered",
    "total_targets",
    "steps",
    "executions",
    "tests",
    "geometry",
    "digest",
    "error",
    "duration_ms",
];

/// Short status names used in exports.
pub fn status_name(status: i32) -> &'static str {
    match RunStatus::try_from(status).unwrap_or(RunStatus::Unspecified) {
        RunStatus::Ok => "ok",
        RunStatus::ProjectRejected => "project_rejected",
        RunStatus::Error => "error",
        RunStatus::InfraFailure => "infra_failure",
        RunStatus::Cancelled => "cancelled",
        RunStatus::Unspecified => "unknown",
    }
}

/// Writes `runs.csv` with one row per run (unfinished runs get status `pending`),
/// sorted by project, algorithm and seed so that equal studies give equal files.
/// Written to a temporary file and renamed, so a crash never leaves half a file.
pub fn write_runs_csv(path: &Path, entries: &[RunEntry]) -> Result<(), String> {
    let mut rows: Vec<&RunEntry> = entries.iter().collect();
    rows.sort_by(|a, b| {
        (&a.run.project, &a.run.algorithm, a.run.seed).cmp(&(&b.run.project, &b.run.algorithm, b.run.seed))
    });
    let tmp = path.with_extension("csv.tmp");
    let mut w = csv::Writer::from_path(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    w.write_record(RUNS_COLUMNS).map_err(|e| e.to_string())?;
    for e in rows {
        let r = &e.run;
        let (status, res) = match &e.state {
            RunState::Finished(res) => (status_name(res.status), Some(res)),
            RunState::Pending | RunState::Leased { .. } => ("pending", None),
        };
        let num = |f: &dyn Fn(&clowder_proto::RunResult) -> String| res.map(|x| f(x)).unwrap_or_default();
        w.write_record([
            r.run_id.clone(),
            r.project.clone(),
            r.algorithm.clone(),
            r.seed.to_string(),
            r.budget.unit().to_string(),
            r.budget.amount().to_string(),
            status.to_string(),
            num(&|x| format!("{:.6}", x.coverage)),
            num(&|x| x.covered.to_string()),
            num(&|x| x.total_targets.to_string()),
            num(&|x| x.steps.to_string()),
            num(&|x| x.executions.to_string()),
            num(&|x| x.tests_after_min.to_string()),
            num(&|x| x.geometry.clone()),
            num(&|x| x.digest.clone()),
            num(&|x| x.error.replace(['\n', '\r'], " ")),
            num(&|x| x.duration_ms.to_string()),
        ])
        .map_err(|e| e.to_string())?;
    }
    w.flush().map_err(|e| e.to_string())?;
    drop(w);
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}
