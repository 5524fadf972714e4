//! Typed reads of a study's store for the exports, `clowder verify` and `clowder
//! mutate-study`: plain structs out, no SQL outside the store.

use clowder_proto::RunResult;
use prost::Message;
use rusqlite::{OptionalExtension, params_from_iter};

use super::{Store, StoreError, budget_from};
use crate::experiment::Run;

/// A stored run with its final state, as [`Store::for_each_run`] reads it.
#[derive(Debug, Clone)]
pub struct StoredRun {
    /// The run (identity, configuration, seed, budget).
    pub run: Run,
    /// Status name (`pending`, `ok`, `limit`, `error`, …).
    pub status: String,
    /// Failure reason (empty for `ok`).
    pub error: String,
    /// Digest (empty for failures and pending runs).
    pub digest: String,
    /// Engine version the run was submitted with (part of its id).
    pub engine_version: String,
    /// Last submission that included the run.
    pub generation: u64,
    /// Leases handed out.
    pub attempts: u32,
    /// The stored result, when [`RunQuery::with_result`] asked for it and there is one.
    pub result: Option<RunResult>,
}

/// Which runs [`Store::for_each_run`] visits, and what it reads of them.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunQuery<'a> {
    /// Only the runs of this submission (`None`: every run ever stored).
    pub generation: Option<u64>,
    /// Only runs with one of these statuses (empty: any status).
    pub statuses: &'a [&'a str],
    /// Decode each run's stored result (it holds the suite: leave off when not needed).
    pub with_result: bool,
}

/// A submission of the experiment to the results folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    /// Generation number (1 for the first).
    pub generation: u64,
    /// Experiment name.
    pub experiment: String,
    /// The experiment file as submitted.
    pub experiment_toml: String,
    /// Engine version of the submitting coordinator.
    pub engine_version: String,
}

/// A second completion of a run whose status or digest differed from the stored one.
#[derive(Debug, Clone)]
pub struct DeterminismFailure {
    /// Run.
    pub run_id: String,
    /// Its project.
    pub project: String,
    /// Its algorithm.
    pub algorithm: String,
    /// Its seed.
    pub seed: u64,
    /// Status stored first.
    pub stored_status: String,
    /// Digest stored first.
    pub stored_digest: String,
    /// Status reported by the second completion.
    pub reported_status: String,
    /// Digest reported by the second completion.
    pub reported_digest: String,
    /// The second completion's result; `None` if it does not decode (the failure is listed
    /// all the same).
    pub reported: Option<RunResult>,
}

impl Store {
    /// Runs `f` on the store inside one read transaction: everything it reads is one
    /// consistent snapshot, even while a coordinator writes.
    pub fn snapshot<T, E: From<StoreError>>(&self, f: impl FnOnce(&Store) -> Result<T, E>) -> Result<T, E> {
        self.conn.execute_batch("BEGIN").map_err(|e| self.err(e))?;
        let out = f(self);
        // A read transaction has nothing to commit; ending it cannot lose anything.
        let _ = self.conn.execute_batch("COMMIT");
        out
    }

    /// Calls `f` with each run that `q` selects, in export order (project, algorithm, seed,
    /// run id), one at a time: a study's results never sit in memory at once.
    pub fn for_each_run<E: From<StoreError>>(
        &self,
        q: &RunQuery<'_>,
        mut f: impl FnMut(StoredRun) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut filters = Vec::new();
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        if let Some(g) = q.generation {
            args.push((g as i64).into());
            filters.push(format!("generation = ?{}", args.len()));
        }
        if !q.statuses.is_empty() {
            let mut marks = Vec::new();
            for s in q.statuses {
                args.push(s.to_string().into());
                marks.push(format!("?{}", args.len()));
            }
            filters.push(format!("status IN ({})", marks.join(", ")));
        }
        let sql = format!(
            "SELECT run_id, dataset, project, project_hash, algorithm, config_json, seed, budget_unit, budget, status,
                    error, digest, engine_version, generation, attempts, {}
             FROM runs {} {}
             ORDER BY project, algorithm, (seed < 0), seed, run_id",
            if q.with_result { "result" } else { "NULL" },
            if filters.is_empty() { "" } else { "WHERE" },
            filters.join(" AND ")
        );
        let mut st = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let mut rows = st.query(params_from_iter(args)).map_err(|e| self.err(e))?;
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            let row = self.stored_run(r)?;
            f(row)?;
        }
        Ok(())
    }

    fn stored_run(&self, r: &rusqlite::Row<'_>) -> Result<StoredRun, StoreError> {
        let e = |e: rusqlite::Error| self.err(e);
        let run_id: String = r.get(0).map_err(e)?;
        let unit: String = r.get(7).map_err(e)?;
        let budget = budget_from(&unit, r.get(8).map_err(e)?)
            .ok_or_else(|| self.err(format!("run {run_id}: unknown budget unit {unit:?}")))?;
        let blob: Option<Vec<u8>> = r.get(15).map_err(e)?;
        let result = match blob {
            Some(b) => Some(
                RunResult::decode(b.as_slice())
                    .map_err(|d| self.err(format!("run {run_id}: stored result does not decode: {d}")))?,
            ),
            None => None,
        };
        Ok(StoredRun {
            run: Run {
                dataset: r.get(1).map_err(e)?,
                project: r.get(2).map_err(e)?,
                project_hash: r.get(3).map_err(e)?,
                algorithm: r.get(4).map_err(e)?,
                config_json: r.get(5).map_err(e)?,
                seed: r.get::<_, i64>(6).map_err(e)? as u64,
                budget,
                run_id,
            },
            status: r.get(9).map_err(e)?,
            error: r.get(10).map_err(e)?,
            digest: r.get(11).map_err(e)?,
            engine_version: r.get(12).map_err(e)?,
            generation: r.get::<_, i64>(13).map_err(e)? as u64,
            attempts: r.get::<_, i64>(14).map_err(e)? as u32,
            result,
        })
    }

    /// The stored result of one run (`None`: the run has none yet, or gave up without one).
    pub fn run_result(&self, run_id: &str) -> Result<Option<RunResult>, StoreError> {
        let blob: Option<Option<Vec<u8>>> = self
            .conn
            .query_row("SELECT result FROM runs WHERE run_id = ?1", [run_id], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))?;
        let Some(blob) = blob else { return Err(self.err(format!("no run {run_id} in the store"))) };
        blob.map(|b| {
            RunResult::decode(b.as_slice())
                .map_err(|d| self.err(format!("run {run_id}: stored result does not decode: {d}")))
        })
        .transpose()
    }

    /// Every submission, oldest first.
    pub fn submissions(&self) -> Result<Vec<Submission>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT generation, experiment, experiment_toml, engine_version FROM submissions ORDER BY generation",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([], |r| {
                Ok(Submission {
                    generation: r.get::<_, i64>(0)? as u64,
                    experiment: r.get(1)?,
                    experiment_toml: r.get(2)?,
                    engine_version: r.get(3)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// The recorded determinism failures in export order (project, algorithm, seed, run id,
    /// reported digest, then as recorded).
    pub fn determinism_failures(&self) -> Result<Vec<DeterminismFailure>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT d.run_id, r.project, r.algorithm, r.seed, d.stored_status, d.stored_digest, d.reported_status,
                        d.reported_digest, d.result
                 FROM determinism_failures d JOIN runs r ON r.run_id = d.run_id
                 ORDER BY r.project, r.algorithm, (r.seed < 0), r.seed, d.run_id, d.reported_digest, d.id",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([], |r| {
                Ok(DeterminismFailure {
                    run_id: r.get(0)?,
                    project: r.get(1)?,
                    algorithm: r.get(2)?,
                    seed: r.get::<_, i64>(3)? as u64,
                    stored_status: r.get(4)?,
                    stored_digest: r.get(5)?,
                    reported_status: r.get(6)?,
                    reported_digest: r.get(7)?,
                    reported: RunResult::decode(r.get::<_, Vec<u8>>(8)?.as_slice()).ok(),
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }
}
