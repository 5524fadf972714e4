//! Result exports (the contract with `analysis`, docs/exports.md): `runs`,
//! `timeline`, `mutants`, `provenance` and `determinism_failures`, each as CSV
//! and Parquet, read from the study's store.
//!
//! Rows are sorted by project, algorithm, seed (then the row's own key), and
//! nothing but `duration_ms` depends on timing, so identical studies give
//! identical `runs`, `timeline` and `mutants` files apart from that column.

use std::path::{Path, PathBuf};

use clowder_proto::{MutantVerdict, RunResult};
use prost::Message;

use crate::store::Store;
use crate::tabular::{Column, Kind, TableWriter, Value, col, opt};

/// Columns of `runs.csv` / `runs.parquet`.
pub const RUNS_COLUMNS: &[Column] = &[
    col("run_id", Kind::Str),
    col("dataset", Kind::Str),
    col("project", Kind::Str),
    col("project_hash", Kind::Str),
    col("algorithm", Kind::Str),
    col("config", Kind::Str),
    col("seed", Kind::U64),
    col("budget_unit", Kind::Str),
    col("budget", Kind::U64),
    col("status", Kind::Str),
    col("error", Kind::Str),
    opt("coverage", Kind::F64),
    opt("covered", Kind::U32),
    opt("total_targets", Kind::U32),
    opt("steps", Kind::U64),
    opt("executions", Kind::U64),
    opt("evaluations", Kind::U64),
    opt("work", Kind::U64),
    opt("tests_before_min", Kind::U32),
    opt("tests_after_min", Kind::U32),
    opt("events_before_min", Kind::U32),
    opt("events_after_min", Kind::U32),
    opt("full_coverage", Kind::Bool),
    opt("steps_to_full_coverage", Kind::U64),
    opt("mutants", Kind::U32),
    opt("mutants_killed", Kind::U32),
    opt("mutants_excluded", Kind::U32),
    opt("mutants_timeout", Kind::U32),
    opt("mutation_score", Kind::F64),
    opt("geometry", Kind::Str),
    opt("reproducible", Kind::Bool),
    opt("digest", Kind::Str),
    opt("duration_ms", Kind::U64),
];

/// Columns of `timeline.csv` / `timeline.parquet`.
pub const TIMELINE_COLUMNS: &[Column] = &[
    col("run_id", Kind::Str),
    col("dataset", Kind::Str),
    col("project", Kind::Str),
    col("algorithm", Kind::Str),
    col("seed", Kind::U64),
    col("status", Kind::Str),
    col("steps", Kind::U64),
    col("executions", Kind::U64),
    col("covered", Kind::U32),
    col("total_targets", Kind::U32),
];

/// Columns of `mutants.csv` / `mutants.parquet`.
pub const MUTANTS_COLUMNS: &[Column] = &[
    col("run_id", Kind::Str),
    col("dataset", Kind::Str),
    col("project", Kind::Str),
    col("algorithm", Kind::Str),
    col("seed", Kind::U64),
    col("status", Kind::Str),
    col("mutant_id", Kind::Str),
    col("operator", Kind::Str),
    col("block_id", Kind::Str),
    col("verdict", Kind::Str),
    col("stratum_size", Kind::U32),
];

/// Columns of `provenance.csv` / `provenance.parquet` (one row per finished run;
/// differs between identical studies by nature).
pub const PROVENANCE_COLUMNS: &[Column] = &[
    col("run_id", Kind::Str),
    col("host", Kind::Str),
    col("worker_id", Kind::Str),
    opt("core", Kind::U32),
    col("pinned", Kind::Bool),
    col("engine_version", Kind::Str),
    col("memory_limit_bytes", Kind::U64),
    col("memory_limit_kind", Kind::Str),
    col("attempts", Kind::U32),
    col("duration_ms", Kind::U64),
    col("memory_peak_bytes", Kind::U64),
    col("cpu_ms", Kind::U64),
    col("isolation", Kind::Str),
    col("peer", Kind::Str),
    col("clowder_version", Kind::Str),
];

/// Columns of `determinism_failures.csv` / `.parquet`: second completions of a
/// run whose status or digest differed from the stored (first) one.
pub const DETERMINISM_COLUMNS: &[Column] = &[
    col("run_id", Kind::Str),
    col("project", Kind::Str),
    col("algorithm", Kind::Str),
    col("seed", Kind::U64),
    col("stored_status", Kind::Str),
    col("stored_digest", Kind::Str),
    col("reported_status", Kind::Str),
    col("reported_digest", Kind::Str),
    col("reported_host", Kind::Str),
    col("reported_worker_id", Kind::Str),
];

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Every run in the store, not only the latest submission's.
    pub all: bool,
    /// Write into this folder instead of the results folder.
    pub out_dir: Option<PathBuf>,
}

/// A run row as read from the store.
struct Row {
    run_id: String,
    dataset: String,
    project: String,
    project_hash: String,
    algorithm: String,
    config: String,
    seed: u64,
    budget_unit: String,
    budget: u64,
    status: String,
    error: String,
    attempts: u32,
    result: Option<RunResult>,
}

fn verdict_key(m: &MutantVerdict) -> (&str, &str, &str) {
    (m.mutant_id.as_str(), m.operator.as_str(), m.block_id.as_str())
}

/// Writes all exports of the study in `results_dir`; returns the files written.
pub fn export_results(results_dir: &Path, opts: &ExportOptions) -> Result<Vec<PathBuf>, String> {
    let store = Store::open_read_only(results_dir).map_err(|e| e.to_string())?;
    let out_dir = opts.out_dir.clone().unwrap_or_else(|| results_dir.to_path_buf());
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let generation = store.current_generation().map_err(|e| e.to_string())?;
    let conn = store.conn();
    // One read transaction: a consistent snapshot even while a coordinator writes.
    conn.execute_batch("BEGIN").map_err(|e| e.to_string())?;
    let result = write_all(&store, &out_dir, generation, opts.all);
    let _ = conn.execute_batch("COMMIT");
    result
}

fn write_all(store: &Store, out_dir: &Path, generation: u64, all: bool) -> Result<Vec<PathBuf>, String> {
    let conn = store.conn();
    let sql = format!(
        "SELECT run_id, dataset, project, project_hash, algorithm, config_json, seed, budget_unit, budget, status,
                error, attempts, result
         FROM runs {}
         ORDER BY project, algorithm, (seed < 0), seed, run_id",
        if all { "" } else { "WHERE generation = ?1" }
    );
    let mut st = conn.prepare(&sql).map_err(|e| e.to_string())?;
    let map = |r: &rusqlite::Row<'_>| -> rusqlite::Result<(Row, Option<Vec<u8>>)> {
        Ok((
            Row {
                run_id: r.get(0)?,
                dataset: r.get(1)?,
                project: r.get(2)?,
                project_hash: r.get(3)?,
                algorithm: r.get(4)?,
                config: r.get(5)?,
                seed: r.get::<_, i64>(6)? as u64,
                budget_unit: r.get(7)?,
                budget: r.get::<_, i64>(8)? as u64,
                status: r.get(9)?,
                error: r.get(10)?,
                attempts: r.get::<_, i64>(11)? as u32,
                result: None,
            },
            r.get(12)?,
        ))
    };
    let rows =
        if all { st.query_map([], map) } else { st.query_map([generation as i64], map) }.map_err(|e| e.to_string())?;

    let mut runs = TableWriter::create(out_dir, "runs", RUNS_COLUMNS)?;
    let mut timeline = TableWriter::create(out_dir, "timeline", TIMELINE_COLUMNS)?;
    let mut mutants = TableWriter::create(out_dir, "mutants", MUTANTS_COLUMNS)?;
    let mut provenance = TableWriter::create(out_dir, "provenance", PROVENANCE_COLUMNS)?;
    for row in rows {
        let (mut row, blob) = row.map_err(|e| e.to_string())?;
        if let Some(b) = blob {
            row.result =
                Some(RunResult::decode(b.as_slice()).map_err(|e| format!("run {}: stored result: {e}", row.run_id))?);
        }
        runs.push(&runs_row(&row))?;
        let Some(r) = &row.result else { continue };
        let ctx = |v: &mut Vec<Value>| {
            v.push(row.run_id.clone().into());
            v.push(row.dataset.clone().into());
            v.push(row.project.clone().into());
            v.push(row.algorithm.clone().into());
            v.push(row.seed.into());
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
                let mut v = Vec::with_capacity(TIMELINE_COLUMNS.len());
                ctx(&mut v);
                v.extend([steps.into(), executions.into(), covered.into(), r.total_targets.into()]);
                timeline.push(&v)?;
            }
        }
        let mut verdicts: Vec<&MutantVerdict> = r.mutants.iter().collect();
        verdicts.sort_by(|a, b| verdict_key(a).cmp(&verdict_key(b)));
        for m in verdicts {
            let mut v = Vec::with_capacity(MUTANTS_COLUMNS.len());
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
        let p = r.provenance.clone().unwrap_or_default();
        provenance.push(&[
            row.run_id.clone().into(),
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
    }
    drop(st);
    let mut written = Vec::new();
    written.extend(runs.finish()?);
    written.extend(timeline.finish()?);
    written.extend(mutants.finish()?);
    written.extend(provenance.finish()?);
    written.extend(write_determinism_failures(store, out_dir)?);
    Ok(written)
}

fn runs_row(row: &Row) -> Vec<Value> {
    let mut v: Vec<Value> = vec![
        row.run_id.clone().into(),
        row.dataset.clone().into(),
        row.project.clone().into(),
        row.project_hash.clone().into(),
        row.algorithm.clone().into(),
        row.config.clone().into(),
        row.seed.into(),
        row.budget_unit.clone().into(),
        row.budget.into(),
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
                r.geometry.clone().into(),
                r.reproducible.into(),
                r.digest.clone().into(),
                r.duration_ms.into(),
            ]);
        }
        other => {
            let n = RUNS_COLUMNS.len() - v.len();
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

fn write_determinism_failures(store: &Store, out_dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut st = store
        .conn()
        .prepare(
            "SELECT d.run_id, r.project, r.algorithm, r.seed, d.stored_status, d.stored_digest, d.reported_status,
                    d.reported_digest, d.result
             FROM determinism_failures d JOIN runs r ON r.run_id = d.run_id
             ORDER BY r.project, r.algorithm, (r.seed < 0), r.seed, d.run_id, d.reported_digest, d.id",
        )
        .map_err(|e| e.to_string())?;
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)? as u64,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, String>(7)?,
                r.get::<_, Vec<u8>>(8)?,
            ))
        })
        .map_err(|e| e.to_string())?;
    let mut w = TableWriter::create(out_dir, "determinism_failures", DETERMINISM_COLUMNS)?;
    for row in rows {
        let (run_id, project, algorithm, seed, ss, sd, rs, rd, blob) = row.map_err(|e| e.to_string())?;
        let p = RunResult::decode(blob.as_slice()).ok().and_then(|r| r.provenance).unwrap_or_default();
        w.push(&[
            run_id.into(),
            project.into(),
            algorithm.into(),
            seed.into(),
            ss.into(),
            sd.into(),
            rs.into(),
            rd.into(),
            p.host.into(),
            p.worker_id.into(),
        ])?;
    }
    w.finish()
}
