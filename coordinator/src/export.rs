//! Result exports (the contract with `analysis`, docs/exports.md): `runs`,
//! `timeline`, `mutants`, `provenance`, `determinism_failures` and (test studies) `tests`, each as CSV
//! and Parquet, read from the study's store. The tables' columns are defined once, in
//! `clowder_schema::tables`; this module fills their rows from stored results.
//!
//! Rows are sorted by project, algorithm, seed (then the row's own key), and
//! nothing but `duration_ms` depends on timing, so identical studies give
//! identical `runs`, `timeline` and `mutants` files apart from that column.

use std::path::{Path, PathBuf};

use clowder_proto::{MutantVerdict, RunResult};
use clowder_schema::{DETERMINISM_FAILURES, MUTANTS, PROVENANCE, RUNS, TIMELINE, TableWriter, Value, WriteError};

use crate::store::{RunQuery, Store, StoreError, StoredRun};

/// Why the exports could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Reading the store.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing a table.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// Creating the output folder.
    #[error("{path}: {source}")]
    Io {
        /// The folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Every run in the store, not only the latest submission's.
    pub all: bool,
    /// Write into this folder instead of the results folder.
    pub out_dir: Option<PathBuf>,
}

fn verdict_key(m: &MutantVerdict) -> (&str, &str, &str) {
    (m.mutant_id.as_str(), m.operator.as_str(), m.block_id.as_str())
}

/// Writes all exports of the study in `results_dir`; returns the files written.
pub fn export_results(results_dir: &Path, opts: &ExportOptions) -> Result<Vec<PathBuf>, ExportError> {
    let store = Store::open_read_only(results_dir)?;
    let out_dir = opts.out_dir.clone().unwrap_or_else(|| results_dir.to_path_buf());
    std::fs::create_dir_all(&out_dir).map_err(|source| ExportError::Io { path: out_dir.clone(), source })?;
    let generation = store.current_generation()?;
    let q = RunQuery { generation: (!opts.all).then_some(generation), statuses: &[], with_result: true };
    store.snapshot(|store| write_all(store, &out_dir, &q))
}

fn write_all(store: &Store, out_dir: &Path, q: &RunQuery<'_>) -> Result<Vec<PathBuf>, ExportError> {
    let mut runs = TableWriter::create(out_dir, RUNS)?;
    let mut timeline = TableWriter::create(out_dir, TIMELINE)?;
    let mut mutants = TableWriter::create(out_dir, MUTANTS)?;
    let mut provenance = TableWriter::create(out_dir, PROVENANCE)?;
    let mut tests = None;
    let mut dynamic: Vec<PathBuf> = Vec::new();
    store.for_each_run(q, |row: StoredRun| -> Result<(), ExportError> {
        runs.push(&runs_row(&row))?;
        let Some(r) = &row.result else { return Ok(()) };
        let run = &row.run;
        let ctx = |v: &mut Vec<Value>| {
            v.push(run.run_id.clone().into());
            v.push(run.dataset.clone().into());
            v.push(run.project.clone().into());
            v.push(run.algorithm.clone().into());
            v.push(run.seed.into());
            v.push(row.status.clone().into());
        };
        if !r.timeline.is_empty() {
            let mut points: Vec<(u64, u64, u32)> =
                r.timeline.iter().map(|p| (p.steps, p.executions, p.covered)).collect();
            // The contract: every timeline starts at (0 steps, 0 covered).
            if points.first().is_some_and(|p| p.0 != 0 || p.2 != 0) {
                points.insert(0, (0, 0, 0));
            }
            for (steps, executions, covered) in points {
                let mut v = Vec::with_capacity(TIMELINE.columns.len());
                ctx(&mut v);
                v.extend([steps.into(), executions.into(), covered.into(), r.total_targets.into()]);
                timeline.push(&v)?;
            }
        }
        let mut verdicts: Vec<&MutantVerdict> = r.mutants.iter().collect();
        verdicts.sort_by(|a, b| verdict_key(a).cmp(&verdict_key(b)));
        for m in verdicts {
            let mut v = Vec::with_capacity(MUTANTS.columns.len());
            ctx(&mut v);
            v.extend([
                m.mutant_id.clone().into(),
                m.operator.clone().into(),
                m.block_id.clone().into(),
                m.verdict.clone().into(),
                m.stratum_size.into(),
            ]);
            mutants.push(&v)?;
        }
        test_rows::push(&mut tests, out_dir, &row, r)?;
        if !r.dynamic_suite_json.is_empty() {
            dynamic.push(write_dynamic_suite(out_dir, &run.run_id, &r.dynamic_suite_json)?);
        }
        let p = r.provenance.clone().unwrap_or_default();
        provenance.push(&[
            run.run_id.clone().into(),
            p.host.into(),
            p.worker_id.into(),
            (if p.core >= 0 { Value::U(p.core as u64) } else { Value::Null }),
            p.pinned.into(),
            p.engine_version.into(),
            p.memory_limit_bytes.into(),
            p.memory_limit_kind.into(),
            row.attempts.max(p.attempts).into(),
            r.duration_ms.into(),
            p.memory_peak_bytes.into(),
            p.cpu_ms.into(),
            p.isolation.into(),
            p.peer.into(),
            p.clowder_version.into(),
        ])?;
        Ok(())
    })?;
    let mut written = Vec::new();
    written.extend(runs.finish()?);
    written.extend(timeline.finish()?);
    written.extend(mutants.finish()?);
    written.extend(provenance.finish()?);
    if let Some(t) = tests {
        written.extend(t.finish()?);
    }
    written.extend(write_determinism_failures(store, out_dir)?);
    written.extend(dynamic);
    Ok(written)
}

/// A Neatest run's dynamic suite as `dynamic/<run id>.json` (Whisker's format: replay it with
/// `clowder test FILE.json PROJECT --seeds …`).
fn write_dynamic_suite(out_dir: &Path, run_id: &str, json: &str) -> Result<PathBuf, ExportError> {
    let dir = out_dir.join("dynamic");
    std::fs::create_dir_all(&dir).map_err(|source| ExportError::Io { path: dir.clone(), source })?;
    // Run ids are the coordinator's own (hex digests); keep only safe characters anyway.
    let name: String = run_id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect();
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, json).map_err(|source| ExportError::Io { path: path.clone(), source })?;
    Ok(path)
}

fn runs_row(row: &StoredRun) -> Vec<Value> {
    let run = &row.run;
    let mut v: Vec<Value> = vec![
        run.run_id.clone().into(),
        run.dataset.clone().into(),
        run.project.clone().into(),
        run.project_hash.clone().into(),
        run.algorithm.clone().into(),
        run.config_json.clone().into(),
        run.seed.into(),
        run.budget.unit().into(),
        run.budget.amount().into(),
        row.status.clone().into(),
        row.error.replace(['\n', '\r'], " ").into(),
    ];
    match &row.result {
        // Results of a finished run, partial ones (`limit`) included (give-ups have an empty
        // one: zeros would lie).
        Some(r) if row.status != "infra_failure" && row.status != "pending" => {
            let analysed = r.mutants_generated > 0 || r.mutation_score.is_some();
            v.extend([
                r.coverage.into(),
                r.covered.into(),
                r.total_targets.into(),
                r.steps.into(),
                r.executions.into(),
                r.evaluations.into(),
                r.work.into(),
                r.tests_before_min.into(),
                r.tests_after_min.into(),
                r.events_before_min.into(),
                r.events_after_min.into(),
                r.full_coverage.into(),
                (if r.full_coverage { Value::U(r.steps_to_full_coverage) } else { Value::Null }),
                r.mutants_generated.into(),
                r.mutants_killed.into(),
                r.mutants_excluded.into(),
                r.mutants_timeout.into(),
                (if analysed { r.mutation_score.into() } else { Value::Null }),
                r.reliable_covered.into(),
            ]);
            // Results stored before sequence coverage existed have none: empty, not 0.
            match &r.sequence {
                Some(s) => v.extend([
                    s.alphabet.into(),
                    s.kh2.into(),
                    s.kh3.into(),
                    s.win2.into(),
                    s.win3.into(),
                    s.kh2_unmin.into(),
                    s.kh3_unmin.into(),
                    s.win2_unmin.into(),
                    s.win3_unmin.into(),
                ]),
                None => v.extend(std::iter::repeat_n(Value::Null, 9)),
            }
            v.extend([r.geometry.clone().into(), r.reproducible.into(), r.digest.clone().into(), r.duration_ms.into()]);
        }
        other => {
            let n = RUNS.columns.len() - v.len();
            v.extend(std::iter::repeat_n(Value::Null, n));
            if let Some(r) = other {
                // Keep the wall-clock time of a give-up if there is one.
                if let Some(last) = v.last_mut()
                    && r.duration_ms > 0
                {
                    *last = r.duration_ms.into();
                }
            }
        }
    }
    v
}

fn write_determinism_failures(store: &Store, out_dir: &Path) -> Result<Vec<PathBuf>, ExportError> {
    let mut w = TableWriter::create(out_dir, DETERMINISM_FAILURES)?;
    for d in store.determinism_failures()? {
        let p = d.reported.and_then(|r: RunResult| r.provenance).unwrap_or_default();
        w.push(&[
            d.run_id.into(),
            d.project.into(),
            d.algorithm.into(),
            d.seed.into(),
            d.stored_status.into(),
            d.stored_digest.into(),
            d.reported_status.into(),
            d.reported_digest.into(),
            p.host.into(),
            p.worker_id.into(),
        ])?;
    }
    Ok(w.finish()?)
}

mod test_rows;
#[cfg(test)]
mod tests;
