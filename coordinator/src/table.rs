//! The run table: every run's state, leases and results.
//!
//! Plain synchronous code behind a mutex; the gRPC service only translates.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clowder_proto::{Budget as PBudget, BudgetKind, RunResult, RunSpec, RunStatus};
use clowder_testgen::Budget;

use crate::experiment::Run;

/// Infrastructure failures of one run retried before it is marked failed.
pub const MAX_ATTEMPTS: u32 = 3;

/// Where a run is.
#[derive(Debug, Clone)]
pub enum RunState {
    /// Waiting for a worker.
    Pending,
    /// Handed to a worker.
    Leased {
        /// The lease.
        lease_id: String,
        /// Worker holding it.
        worker_id: String,
        /// When it expires without heartbeat.
        deadline: Instant,
    },
    /// A final result arrived.
    Finished(Box<RunResult>),
}

/// One row of the table.
#[derive(Debug, Clone)]
pub struct RunEntry {
    /// The run.
    pub run: Run,
    /// Its state.
    pub state: RunState,
    /// Attempts so far (leases handed out).
    pub attempts: u32,
}

/// Counts for progress display.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    /// All runs.
    pub total: u64,
    /// Finished (any status).
    pub done: u64,
    /// Leased now.
    pub running: u64,
    /// Waiting.
    pub pending: u64,
    /// Finished with a non-OK status.
    pub failed: u64,
    /// True when nothing more will happen.
    pub finished: bool,
    /// Registered workers.
    pub workers: u64,
    /// Last failures (run id: reason), newest last.
    pub recent_failures: Vec<String>,
}

/// The run table.
#[derive(Debug)]
pub struct RunTable {
    entries: Vec<RunEntry>,
    by_id: HashMap<String, usize>,
    pending: VecDeque<usize>,
    leases: HashMap<String, usize>,
    projects: BTreeMap<String, (PathBuf, String)>,
    lease_timeout: Duration,
    next_lease: u64,
    next_worker: u64,
    cancelled: bool,
    recent_failures: VecDeque<String>,
    engine_version: String,
}

fn to_proto_budget(b: Budget) -> PBudget {
    match b {
        Budget::Steps(n) => PBudget { kind: BudgetKind::Steps as i32, amount: n },
        Budget::Executions(n) => PBudget { kind: BudgetKind::Executions as i32, amount: n },
        Budget::Evaluations(n) => PBudget { kind: BudgetKind::Evaluations as i32, amount: n },
        Budget::Seconds(n) => PBudget { kind: BudgetKind::Seconds as i32, amount: n },
    }
}

impl RunTable {
    /// A table of `runs`, all pending. `projects` maps content hash to (path, file name).
    pub fn new(runs: Vec<Run>, projects: BTreeMap<String, (PathBuf, String)>, lease_timeout: Duration) -> Self {
        let mut by_id = HashMap::new();
        let mut entries = Vec::new();
        for r in runs {
            // The same run listed twice (identical project files) is run once.
            if by_id.contains_key(&r.run_id) {
                continue;
            }
            by_id.insert(r.run_id.clone(), entries.len());
            entries.push(RunEntry { run: r, state: RunState::Pending, attempts: 0 });
        }
        Self {
            pending: (0..entries.len()).collect(),
            entries,
            by_id,
            leases: HashMap::new(),
            projects,
            lease_timeout,
            next_lease: 0,
            next_worker: 0,
            cancelled: false,
            recent_failures: VecDeque::new(),
            engine_version: clowder_vm::ENGINE_VERSION.to_string(),
        }
    }

    /// Registers a worker; returns its id.
    pub fn register(&mut self, name: &str) -> String {
        self.next_worker += 1;
        format!("w{}-{}", self.next_worker, name)
    }

    /// Returns expired leases to the pending queue (or fails them after too many attempts).
    pub fn expire(&mut self, now: Instant) {
        let expired: Vec<(String, usize)> = self
            .leases
            .iter()
            .filter(|&(_, &i)| matches!(&self.entries[i].state, RunState::Leased { deadline, .. } if *deadline <= now))
            .map(|(l, &i)| (l.clone(), i))
            .collect();
        for (lease, i) in expired {
            self.leases.remove(&lease);
            self.requeue_or_fail(i, "lease expired (worker lost)");
        }
    }

    fn requeue_or_fail(&mut self, i: usize, why: &str) {
        let e = &mut self.entries[i];
        if e.attempts >= MAX_ATTEMPTS {
            let r = RunResult {
                run_id: e.run.run_id.clone(),
                status: RunStatus::InfraFailure as i32,
                error: format!("{why}; gave up after {} attempts", e.attempts),
                ..Default::default()
            };
            self.note_failure(i, &r.error.clone());
            self.entries[i].state = RunState::Finished(Box::new(r));
        } else {
            e.state = RunState::Pending;
            // Retries go to the front so a study's tail is not held up by them.
            self.pending.push_front(i);
        }
    }

    fn note_failure(&mut self, i: usize, why: &str) {
        self.recent_failures
            .push_back(format!("{} {}: {why}", self.entries[i].run.project, self.entries[i].run.run_id));
        while self.recent_failures.len() > 10 {
            self.recent_failures.pop_front();
        }
    }

    /// Leases up to `max` runs to `worker_id`.
    pub fn lease(&mut self, worker_id: &str, max: usize, now: Instant) -> Vec<RunSpec> {
        self.expire(now);
        let mut out = Vec::new();
        if self.cancelled {
            return out;
        }
        while out.len() < max {
            let Some(i) = self.pending.pop_front() else { break };
            if !matches!(self.entries[i].state, RunState::Pending) {
                continue;
            }
            self.next_lease += 1;
            let lease_id = format!("L{}", self.next_lease);
            let e = &mut self.entries[i];
            e.attempts += 1;
            e.state = RunState::Leased {
                lease_id: lease_id.clone(),
                worker_id: worker_id.to_string(),
                deadline: now + self.lease_timeout,
            };
            self.leases.insert(lease_id.clone(), i);
            out.push(RunSpec {
                run_id: e.run.run_id.clone(),
                lease_id,
                project_hash: e.run.project_hash.clone(),
                project_name: e.run.project.clone(),
                algorithm: e.run.algorithm.clone(),
                config_json: e.run.config_json.clone(),
                seed: e.run.seed,
                budget: Some(to_proto_budget(e.run.budget)),
                engine_version: self.engine_version.clone(),
                memory_limit_bytes: 0,
                mutation: "off".into(),
                attempt: e.attempts,
            });
        }
        out
    }

    /// Extends leases; returns the ones that are no longer valid.
    pub fn heartbeat(&mut self, lease_ids: &[String], now: Instant) -> Vec<String> {
        let mut revoked = Vec::new();
        for l in lease_ids {
            match self.leases.get(l).map(|&i| &mut self.entries[i].state) {
                Some(RunState::Leased { deadline, .. }) => *deadline = now + self.lease_timeout,
                _ => revoked.push(l.clone()),
            }
        }
        revoked
    }

    /// Records a result. Returns `Err` when the lease is unknown or revoked.
    pub fn complete(&mut self, result: RunResult) -> Result<(), String> {
        let Some(&i) = self.leases.get(&result.lease_id) else {
            return Err(format!("lease {} is not active", result.lease_id));
        };
        if self.entries[i].run.run_id != result.run_id {
            return Err(format!("lease {} is for another run", result.lease_id));
        }
        self.leases.remove(&result.lease_id);
        let status = RunStatus::try_from(result.status).unwrap_or(RunStatus::Unspecified);
        match status {
            RunStatus::InfraFailure | RunStatus::Cancelled | RunStatus::Unspecified => {
                let why = format!("{}: {}", status.as_str_name(), result.error);
                if self.cancelled {
                    self.entries[i].state = RunState::Pending;
                } else {
                    self.requeue_or_fail(i, &why);
                }
            }
            RunStatus::Ok => self.entries[i].state = RunState::Finished(Box::new(result)),
            RunStatus::ProjectRejected | RunStatus::Error => {
                self.note_failure(i, &result.error);
                self.entries[i].state = RunState::Finished(Box::new(result));
            }
        }
        Ok(())
    }

    /// Stops handing out runs.
    pub fn cancel(&mut self) {
        self.cancelled = true;
    }

    /// Whether the table is cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled
    }

    /// Path and file name of a project by content hash.
    pub fn project(&self, hash: &str) -> Option<&(PathBuf, String)> {
        self.projects.get(hash)
    }

    /// Progress counts.
    pub fn progress(&self, workers: u64) -> Progress {
        let mut p = Progress { total: self.entries.len() as u64, workers, ..Progress::default() };
        for e in &self.entries {
            match &e.state {
                RunState::Pending => p.pending += 1,
                RunState::Leased { .. } => p.running += 1,
                RunState::Finished(r) => {
                    p.done += 1;
                    if r.status != RunStatus::Ok as i32 {
                        p.failed += 1;
                    }
                }
            }
        }
        p.finished = p.done == p.total || (self.cancelled && p.running == 0);
        p.recent_failures = self.recent_failures.iter().cloned().collect();
        p
    }

    /// All entries.
    pub fn entries(&self) -> &[RunEntry] {
        &self.entries
    }

    /// Looks a run up by id.
    pub fn get(&self, run_id: &str) -> Option<&RunEntry> {
        self.by_id.get(run_id).map(|&i| &self.entries[i])
    }
}
