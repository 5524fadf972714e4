//! The durable store: one SQLite database (WAL mode) in the study's results
//! folder. Every run of every submission is a row; a result is committed here
//! before the coordinator acknowledges it, so killing the coordinator at any
//! instant loses no acknowledged result, and restarting it resumes the study.
//!
//! Writes go through one thread ([`StoreWriter`]) that groups whatever has
//! queued up while the previous transaction was committing into the next one
//! (group commit): one fsync covers many results, which is what lets a single
//! coordinator take thousands of results per second with `synchronous=FULL`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use tokio::sync::{mpsc, oneshot};

use crate::experiment::Run;
use clowder_testgen::Budget;

mod queries;
pub use queries::{DeterminismFailure, RunQuery, StoredRun, Submission};

/// File name of the store inside the results folder.
pub const STORE_FILE: &str = "study.sqlite";
/// Schema version written into `meta`; a store with another version is refused.
pub const SCHEMA_VERSION: i64 = 1;
/// Most writes grouped into one transaction.
const MAX_BATCH: usize = 4096;

/// Errors of the store.
#[derive(Debug, thiserror::Error)]
#[error("store {path}: {msg}")]
pub struct StoreError {
    /// Database file.
    pub path: String,
    /// What failed.
    pub msg: String,
}

/// A project as recorded in the store (for serving, `clowder verify` and `clowder mutate-study`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRow {
    /// Content hash (blake3, hex).
    pub hash: String,
    /// Project name.
    pub name: String,
    /// Dataset name.
    pub dataset: String,
    /// File name (tells the loader the format).
    pub file_name: String,
    /// Absolute path at submission time.
    pub path: PathBuf,
    /// Size in bytes.
    pub size: u64,
}

/// A run's final state as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredFinal {
    /// Export status name (`ok`, `limit`, `error`, …).
    pub status: String,
    /// Digest (empty for failures).
    pub digest: String,
    /// Coverage (for summaries).
    pub coverage: f64,
    /// Steps used (for summaries).
    pub steps: u64,
    /// Failure reason.
    pub error: String,
}

/// A run of the current submission as loaded at start.
#[derive(Debug, Clone)]
pub struct LoadedRun {
    /// The run.
    pub run: Run,
    /// Final state, if it has one.
    pub finished: Option<StoredFinal>,
    /// Lease handed out before the coordinator stopped: (lease id, worker id).
    pub lease_hint: Option<(String, String)>,
}

/// What a submission changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubmitStats {
    /// Generation number of this submission (1 for the first).
    pub generation: u64,
    /// Runs in the submitted experiment.
    pub runs: u64,
    /// Runs not in the store before.
    pub new_runs: u64,
    /// Runs that already had a final result.
    pub already_done: u64,
}

fn budget_unit_amount(b: Budget) -> (&'static str, i64) {
    (b.unit(), b.amount() as i64)
}

fn budget_from(unit: &str, amount: i64) -> Option<Budget> {
    match unit {
        "steps" => Some(Budget::Steps(amount as u64)),
        "executions" => Some(Budget::Executions(amount as u64)),
        "evaluations" => Some(Budget::Evaluations(amount as u64)),
        "seconds" => Some(Budget::Seconds(amount as u64)),
        _ => None,
    }
}

/// The store (single connection; owned by one thread at a time).
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS submissions (
    generation INTEGER PRIMARY KEY,
    experiment TEXT NOT NULL,
    experiment_toml TEXT NOT NULL,
    engine_version TEXT NOT NULL,
    runs INTEGER NOT NULL,
    new_runs INTEGER NOT NULL,
    submitted_unix_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS projects (
    hash TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    dataset TEXT NOT NULL,
    file_name TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    dataset TEXT NOT NULL,
    project TEXT NOT NULL,
    project_hash TEXT NOT NULL,
    algorithm TEXT NOT NULL,
    config_json TEXT NOT NULL,
    seed INTEGER NOT NULL,          -- u64 stored as its i64 bit pattern
    budget_unit TEXT NOT NULL,
    budget INTEGER NOT NULL,
    engine_version TEXT NOT NULL,
    generation INTEGER NOT NULL,    -- last submission that included the run
    status TEXT NOT NULL DEFAULT 'pending',
    error TEXT NOT NULL DEFAULT '',
    digest TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    result BLOB,                    -- protobuf clowder.v1.RunResult
    lease_id TEXT,                  -- last lease handed out (a hint for resuming)
    lease_worker TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS runs_generation ON runs (generation);
CREATE TABLE IF NOT EXISTS determinism_failures (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    stored_status TEXT NOT NULL,
    stored_digest TEXT NOT NULL,
    reported_status TEXT NOT NULL,
    reported_digest TEXT NOT NULL,
    result BLOB NOT NULL
);
";

impl Store {
    /// Opens (creating if needed) the store in `dir` for writing.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError { path: dir.display().to_string(), msg: e.to_string() })?;
        let path = dir.join(STORE_FILE);
        let err = |msg: String| StoreError { path: path.display().to_string(), msg };
        let conn = Connection::open(&path).map_err(|e| err(e.to_string()))?;
        let mode: String =
            conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)).map_err(|e| err(e.to_string()))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(err(format!("cannot switch to WAL mode (got {mode})")));
        }
        // FULL: a committed result survives power loss, not only a killed process.
        conn.execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=OFF;").map_err(|e| err(e.to_string()))?;
        conn.busy_timeout(Duration::from_secs(30)).map_err(|e| err(e.to_string()))?;
        conn.execute_batch(SCHEMA).map_err(|e| err(e.to_string()))?;
        let s = Self { conn, path };
        match s.meta("schema_version")? {
            None => s.set_meta("schema_version", &SCHEMA_VERSION.to_string())?,
            Some(v) if v == SCHEMA_VERSION.to_string() => {}
            Some(v) => {
                return Err(s.err(format!(
                    "schema version {v}, this clowder reads version {SCHEMA_VERSION}; use a matching clowder"
                )));
            }
        }
        Ok(s)
    }

    /// Opens an existing store for reading (exports, verify) while a
    /// coordinator may be writing to it.
    pub fn open_read_only(dir: &Path) -> Result<Self, StoreError> {
        let path = dir.join(STORE_FILE);
        let err = |msg: String| StoreError { path: path.display().to_string(), msg };
        if !path.is_file() {
            return Err(err("no such file: is this a clowder results folder?".into()));
        }
        let conn =
            Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
                .map_err(|e| err(e.to_string()))?;
        conn.busy_timeout(Duration::from_secs(30)).map_err(|e| err(e.to_string()))?;
        let s = Self { conn, path };
        match s.meta("schema_version")? {
            Some(v) if v == SCHEMA_VERSION.to_string() => Ok(s),
            other => Err(s.err(format!("unsupported schema version {other:?}"))),
        }
    }

    fn err(&self, msg: impl std::fmt::Display) -> StoreError {
        StoreError { path: self.path.display().to_string(), msg: msg.to_string() }
    }

    /// Path of the database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A `meta` value.
    pub fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))
    }

    fn set_meta(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = ?2",
                [key, value],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// The latest submission's generation (0: none yet).
    pub fn current_generation(&self) -> Result<u64, StoreError> {
        self.conn
            .query_row("SELECT COALESCE(MAX(generation), 0) FROM submissions", [], |r| r.get::<_, i64>(0))
            .map(|g| g as u64)
            .map_err(|e| self.err(e))
    }

    /// Records a submission of `runs` (the expansion of `experiment_toml`):
    /// adds the runs the store does not have, marks all of them as part of the
    /// new generation, and records the projects. One transaction.
    pub fn submit(
        &mut self,
        experiment: &str,
        experiment_toml: &str,
        runs: &[Run],
        projects: &[ProjectRow],
    ) -> Result<SubmitStats, StoreError> {
        let engine = clowder_vm::ENGINE_VERSION;
        let path = self.path.display().to_string();
        let e = |e: rusqlite::Error| StoreError { path: path.clone(), msg: e.to_string() };
        let generation = self.current_generation()? + 1;
        if let Some(name) = self.meta("experiment")?
            && name != experiment
        {
            return Err(self.err(format!(
                "this results folder belongs to experiment {name:?}, not {experiment:?}; use another output folder"
            )));
        }
        let tx = self.conn.transaction().map_err(e)?;
        let mut stats = SubmitStats { generation, runs: runs.len() as u64, ..Default::default() };
        {
            let mut ins = tx
                .prepare(
                    "INSERT INTO runs (run_id, dataset, project, project_hash, algorithm, config_json, seed,
                        budget_unit, budget, engine_version, generation)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                     ON CONFLICT(run_id) DO NOTHING",
                )
                .map_err(e)?;
            let mut upd = tx.prepare("UPDATE runs SET generation = ?2 WHERE run_id = ?1").map_err(e)?;
            for r in runs {
                let (unit, amount) = budget_unit_amount(r.budget);
                let n = ins
                    .execute(params![
                        r.run_id,
                        r.dataset,
                        r.project,
                        r.project_hash,
                        r.algorithm,
                        r.config_json,
                        r.seed as i64,
                        unit,
                        amount,
                        engine,
                        generation as i64
                    ])
                    .map_err(e)?;
                if n == 1 {
                    stats.new_runs += 1;
                } else {
                    upd.execute(params![r.run_id, generation as i64]).map_err(e)?;
                }
            }
            let mut proj = tx
                .prepare(
                    "INSERT INTO projects (hash, name, dataset, file_name, path, size) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT(hash) DO UPDATE SET path = ?5, name = ?2, dataset = ?3, file_name = ?4",
                )
                .map_err(e)?;
            for p in projects {
                proj.execute(params![p.hash, p.name, p.dataset, p.file_name, p.path.to_string_lossy(), p.size as i64])
                    .map_err(e)?;
            }
            stats.already_done = tx
                .query_row(
                    "SELECT COUNT(*) FROM runs WHERE generation = ?1 AND status != 'pending'",
                    [generation as i64],
                    |r| r.get::<_, i64>(0),
                )
                .map_err(e)? as u64;
            let now_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0);
            tx.execute(
                "INSERT INTO submissions (generation, experiment, experiment_toml, engine_version, runs, new_runs,
                    submitted_unix_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    generation as i64,
                    experiment,
                    experiment_toml,
                    engine,
                    stats.runs as i64,
                    stats.new_runs as i64,
                    now_ms
                ],
            )
            .map_err(e)?;
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('experiment', ?1) ON CONFLICT(key) DO NOTHING",
                [experiment],
            )
            .map_err(e)?;
        }
        tx.commit().map_err(e)?;
        Ok(stats)
    }

    /// Makes failed runs pending again (their failure and result are dropped); only rows whose
    /// status is `infra_failure` (or `error`, as older stores recorded CPU time limits) change.
    /// Used for runs stopped by a CPU time limit lower than the current one.
    pub fn reopen_failed(&mut self, run_ids: &[String]) -> Result<u64, StoreError> {
        let path = self.path.display().to_string();
        let e = |m: rusqlite::Error| StoreError { path: path.clone(), msg: m.to_string() };
        let tx = self.conn.transaction().map_err(e)?;
        let mut n = 0;
        {
            let mut upd = tx
                .prepare(
                    "UPDATE runs SET status = 'pending', error = '', digest = '', result = NULL,
                        lease_id = NULL, lease_worker = NULL
                     WHERE run_id = ?1 AND status IN ('infra_failure', 'error')",
                )
                .map_err(e)?;
            for id in run_ids {
                n += upd.execute([id]).map_err(e)? as u64;
            }
        }
        tx.commit().map_err(e)?;
        Ok(n)
    }

    /// The runs of `generation` in export order (project, algorithm, seed, run id).
    pub fn load_generation(&self, generation: u64) -> Result<Vec<LoadedRun>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT run_id, dataset, project, project_hash, algorithm, config_json, seed, budget_unit, budget,
                        status, digest, error, result, lease_id, lease_worker
                 FROM runs WHERE generation = ?1
                 ORDER BY project, algorithm, (seed < 0), seed, run_id",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([generation as i64], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, i64>(6)?,
                    r.get::<_, String>(7)?,
                    r.get::<_, i64>(8)?,
                    r.get::<_, String>(9)?,
                    r.get::<_, String>(10)?,
                    r.get::<_, String>(11)?,
                    r.get::<_, Option<Vec<u8>>>(12)?,
                    r.get::<_, Option<String>>(13)?,
                    r.get::<_, Option<String>>(14)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (
                run_id,
                dataset,
                project,
                project_hash,
                algorithm,
                config_json,
                seed,
                unit,
                amount,
                status,
                digest,
                error,
                blob,
                lease,
                worker,
            ) = row.map_err(|e| self.err(e))?;
            let budget = budget_from(&unit, amount)
                .ok_or_else(|| self.err(format!("run {run_id}: unknown budget unit {unit:?}")))?;
            let finished = if status == "pending" {
                None
            } else {
                let (coverage, steps) = match blob.as_deref().map(<clowder_proto::RunResult as prost::Message>::decode)
                {
                    Some(Ok(r)) => (r.coverage, r.steps),
                    _ => (0.0, 0),
                };
                Some(StoredFinal { status, digest, coverage, steps, error })
            };
            out.push(LoadedRun {
                run: Run { run_id, dataset, project, project_hash, algorithm, config_json, seed: seed as u64, budget },
                finished,
                lease_hint: lease.zip(worker),
            });
        }
        Ok(out)
    }

    /// All recorded projects by hash.
    pub fn projects(&self) -> Result<BTreeMap<String, ProjectRow>, StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT hash, name, dataset, file_name, path, size FROM projects ORDER BY hash")
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([], |r| {
                Ok(ProjectRow {
                    hash: r.get(0)?,
                    name: r.get(1)?,
                    dataset: r.get(2)?,
                    file_name: r.get(3)?,
                    path: PathBuf::from(r.get::<_, String>(4)?),
                    size: r.get::<_, i64>(5)? as u64,
                })
            })
            .map_err(|e| self.err(e))?;
        let mut out = BTreeMap::new();
        for r in rows {
            let r = r.map_err(|e| self.err(e))?;
            out.insert(r.hash.clone(), r);
        }
        Ok(out)
    }

    /// Number of recorded determinism failures.
    pub fn determinism_failure_count(&self) -> Result<u64, StoreError> {
        self.conn
            .query_row("SELECT COUNT(*) FROM determinism_failures", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| self.err(e))
    }

    /// Applies a batch of writes in one transaction.
    fn apply(&mut self, batch: &[Write]) -> Result<(), String> {
        let tx = self.conn.transaction().map_err(|e| e.to_string())?;
        {
            let mut fin = tx
                .prepare_cached(
                    "UPDATE runs SET status = ?2, error = ?3, digest = ?4, attempts = ?5, result = ?6,
                        lease_id = NULL, lease_worker = NULL WHERE run_id = ?1",
                )
                .map_err(|e| e.to_string())?;
            let mut lease = tx
                .prepare_cached(
                    "UPDATE runs SET lease_id = ?2, lease_worker = ?3 WHERE run_id = ?1 AND status = 'pending'",
                )
                .map_err(|e| e.to_string())?;
            let mut mismatch = tx
                .prepare_cached(
                    "INSERT INTO determinism_failures (run_id, stored_status, stored_digest, reported_status,
                        reported_digest, result) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(|e| e.to_string())?;
            for w in batch {
                match w {
                    Write::Final(f) => {
                        let n = fin
                            .execute(params![
                                f.run_id,
                                f.fin.status,
                                f.fin.error,
                                f.fin.digest,
                                f.attempts as i64,
                                f.result
                            ])
                            .map_err(|e| e.to_string())?;
                        if n != 1 {
                            return Err(format!("run {} is not in the store", f.run_id));
                        }
                    }
                    Write::Lease { run_id, lease_id, worker_id } => {
                        lease.execute(params![run_id, lease_id, worker_id]).map_err(|e| e.to_string())?;
                    }
                    Write::Mismatch(m) => {
                        mismatch
                            .execute(params![
                                m.run_id,
                                m.stored_status,
                                m.stored_digest,
                                m.reported_status,
                                m.reported_digest,
                                m.result
                            ])
                            .map_err(|e| e.to_string())?;
                    }
                }
            }
        }
        tx.commit().map_err(|e| e.to_string())
    }
}

/// A final result to store.
#[derive(Debug, Clone)]
pub struct FinalWrite {
    /// Run.
    pub run_id: String,
    /// Status, digest, error and summary numbers.
    pub fin: StoredFinal,
    /// Leases handed out.
    pub attempts: u32,
    /// Encoded `RunResult`.
    pub result: Vec<u8>,
    /// Index of the run in the coordinator's table (passed back on commit).
    pub index: usize,
    /// Worker that delivered it (empty for coordinator-side give-ups).
    pub worker_id: String,
}

/// A second completion whose digest differs from the stored one.
#[derive(Debug, Clone)]
pub struct MismatchWrite {
    /// Run.
    pub run_id: String,
    /// Status stored first.
    pub stored_status: String,
    /// Digest stored first.
    pub stored_digest: String,
    /// Status reported now.
    pub reported_status: String,
    /// Digest reported now.
    pub reported_digest: String,
    /// Encoded `RunResult` of the second completion.
    pub result: Vec<u8>,
}

#[derive(Debug)]
enum Write {
    Final(FinalWrite),
    Lease { run_id: String, lease_id: String, worker_id: String },
    Mismatch(MismatchWrite),
}

enum Msg {
    Write(Write, Option<oneshot::Sender<Result<(), String>>>),
    Flush(oneshot::Sender<Result<(), String>>),
}

/// Called by the writer thread after each batch: the final results it
/// committed (`Ok`) or failed to commit (`Err`), before their senders hear back.
pub type CommitHook = Box<dyn Fn(Result<&[FinalWrite], (&[FinalWrite], &str)>) + Send>;

/// Handle to the writer thread.
#[derive(Clone)]
pub struct StoreWriter {
    tx: mpsc::Sender<Msg>,
    stats: std::sync::Arc<WriterStats>,
}

/// What the writer thread did (for benchmarks and status).
#[derive(Debug, Default)]
pub struct WriterStats {
    /// Transactions committed.
    pub commits: std::sync::atomic::AtomicU64,
    /// Writes (results, leases, determinism failures) in them.
    pub writes: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for StoreWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreWriter")
    }
}

impl StoreWriter {
    /// Starts the writer thread on `store`. `hook` sees every committed batch
    /// of final results before anyone is told they are stored.
    pub fn spawn(mut store: Store, hook: CommitHook) -> Result<(Self, std::thread::JoinHandle<()>), StoreError> {
        let (tx, mut rx) = mpsc::channel::<Msg>(1 << 16);
        let path = store.path.display().to_string();
        let stats = std::sync::Arc::new(WriterStats::default());
        let thread_stats = std::sync::Arc::clone(&stats);
        let handle = std::thread::Builder::new()
            .name("clowder-store".into())
            .spawn(move || {
                let mut batch: Vec<Msg> = Vec::new();
                while let Some(first) = rx.blocking_recv() {
                    batch.push(first);
                    while batch.len() < MAX_BATCH {
                        match rx.try_recv() {
                            Ok(m) => batch.push(m),
                            Err(_) => break,
                        }
                    }
                    let mut writes = Vec::with_capacity(batch.len());
                    let mut replies = Vec::with_capacity(batch.len());
                    for m in batch.drain(..) {
                        match m {
                            Msg::Write(w, reply) => {
                                writes.push(w);
                                replies.push(reply);
                            }
                            Msg::Flush(reply) => replies.push(Some(reply)),
                        }
                    }
                    let outcome = if writes.is_empty() { Ok(()) } else { store.apply(&writes) };
                    if outcome.is_ok() && !writes.is_empty() {
                        use std::sync::atomic::Ordering::Relaxed;
                        thread_stats.commits.fetch_add(1, Relaxed);
                        thread_stats.writes.fetch_add(writes.len() as u64, Relaxed);
                    }
                    let finals: Vec<FinalWrite> = writes
                        .into_iter()
                        .filter_map(|w| match w {
                            Write::Final(f) => Some(f),
                            _ => None,
                        })
                        .collect();
                    match &outcome {
                        Ok(()) => hook(Ok(&finals)),
                        Err(e) => hook(Err((&finals, e))),
                    }
                    for r in replies.into_iter().flatten() {
                        let _ = r.send(outcome.clone());
                    }
                }
            })
            .map_err(|e| StoreError { path, msg: format!("starting the writer thread: {e}") })?;
        Ok((Self { tx, stats }, handle))
    }

    async fn send(&self, w: Write) -> Result<(), String> {
        let (tx, rx) = oneshot::channel();
        self.tx.send(Msg::Write(w, Some(tx))).await.map_err(|_| "store writer stopped".to_string())?;
        rx.await.map_err(|_| "store writer stopped".to_string())?
    }

    /// Stores a final result; returns once it is committed.
    pub async fn commit_final(&self, f: FinalWrite) -> Result<(), String> {
        self.send(Write::Final(f)).await
    }

    /// Stores a determinism failure; returns once it is committed.
    pub async fn commit_mismatch(&self, m: MismatchWrite) -> Result<(), String> {
        self.send(Write::Mismatch(m)).await
    }

    /// Records a lease (a hint for resuming; not waited for).
    pub fn note_lease(&self, run_id: String, lease_id: String, worker_id: String) {
        // A full queue only loses a hint: the worker's heartbeat adopts the lease anyway.
        let _ = self.tx.try_send(Msg::Write(Write::Lease { run_id, lease_id, worker_id }, None));
    }

    /// Commit counters.
    pub fn stats(&self) -> &WriterStats {
        &self.stats
    }

    /// Waits until everything queued before is committed.
    pub async fn flush(&self) -> Result<(), String> {
        let (tx, rx) = oneshot::channel();
        self.tx.send(Msg::Flush(tx)).await.map_err(|_| "store writer stopped".to_string())?;
        rx.await.map_err(|_| "store writer stopped".to_string())?
    }
}

#[cfg(test)]
pub(crate) mod tests;
