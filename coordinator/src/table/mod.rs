//! The run table: every run's state, the leases and the workers, in memory.
//!
//! Plain synchronous code behind one mutex; the gRPC service translates RPCs
//! into calls here and the store makes results durable. All counters are kept
//! incrementally so that every operation is O(1) or O(batch): a study of
//! 100 000 runs taking thousands of results per second never scans the table.
//!
//! State machine of a run:
//! `Pending → Leased → Committing → Finished`; `Leased → Pending` on lease
//! expiry, infrastructure failure or release; `Committing → Pending` when the
//! store fails. A result is accepted from any worker for any run that is not
//! `Finished` (results are deterministic; a late result from a lease that
//! expired is as good as any), and compared by digest when it is.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clowder_proto::{Budget as PBudget, BudgetKind, RunResult, RunSpec, RunStatus};
use clowder_testgen::Budget;

use crate::experiment::Run;
use crate::store::{FinalWrite, MismatchWrite, StoredFinal};

/// Infrastructure failures of one run tolerated before it is marked failed.
pub const MAX_ATTEMPTS: u32 = 3;

/// Attempts of a run that its CPU time limit keeps stopping: one retry (a less loaded machine
/// may finish it), then it is recorded as `infra_failure` with the limit's reason. That limit is
/// an infrastructure guard; the deterministic end of a runaway run is the work cap.
pub const CPU_LIMIT_ATTEMPTS: u32 = 2;

/// Where a run is.
#[derive(Debug, Clone)]
pub enum RunState {
    /// Waiting for a worker.
    Pending,
    /// Handed to a worker under this lease.
    Leased(String),
    /// A result is being written to the store.
    Committing,
    /// Final.
    Finished(StoredFinal),
}

/// One row of the table.
#[derive(Debug, Clone)]
pub struct RunEntry {
    /// The run.
    pub run: Run,
    /// Its state.
    pub state: RunState,
    /// Leases handed out so far in this coordinator process (plus one for a
    /// lease adopted from a previous one).
    pub attempts: u32,
    /// Of those, attempts stopped by the CPU time limit.
    pub cpu_limited: u32,
}

#[derive(Debug, Clone)]
struct Lease {
    index: usize,
    worker_id: String,
    deadline: Instant,
}

/// A worker as the coordinator sees it.
#[derive(Debug, Clone)]
pub struct WorkerRecord {
    /// Host name it reported.
    pub host: String,
    /// Address it connects from.
    pub peer: String,
    /// Slots.
    pub slots: u32,
    /// Leases it holds.
    pub running: u64,
    /// Results it delivered (this coordinator process).
    pub done: u64,
    /// Last RPC.
    pub last_seen: Instant,
    /// Was told that the study has nothing more for it.
    pub told_done: bool,
}

/// A project the coordinator serves.
#[derive(Debug, Clone)]
pub struct ProjectSource {
    /// Path on the coordinator's machine.
    pub path: PathBuf,
    /// File name (format hint).
    pub file_name: String,
    /// Size in bytes.
    pub size: u64,
}

/// Counts for progress display.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// Experiment name.
    pub experiment: String,
    /// All runs of the study.
    pub total: u64,
    /// Finished (any status).
    pub done: u64,
    /// Leased or being stored now.
    pub running: u64,
    /// Waiting.
    pub pending: u64,
    /// Finished with a status other than `ok` and `limit`.
    pub failed: u64,
    /// Finished with status `limit` (ended by the work cap: a partial result, not a failure).
    pub limited: u64,
    /// Of `failed`: gave up after infrastructure failures.
    pub infra_failed: u64,
    /// Finished before this coordinator process started.
    pub resumed: u64,
    /// Finished since it started.
    pub done_this_session: u64,
    /// Second completions whose digest differed.
    pub determinism_failures: u64,
    /// True when nothing more will happen.
    pub finished: bool,
    /// No new runs are handed out.
    pub cancelled: bool,
    /// Workers heard from recently.
    pub workers: Vec<(String, WorkerRecord)>,
    /// Last failures ("project run-id: reason"), newest last.
    pub recent_failures: Vec<String>,
    /// Runs finished per second over the last minute.
    pub rate_per_second: f64,
    /// Estimated time to finish.
    pub eta: Option<Duration>,
}

/// What to do with a reported result.
#[derive(Debug)]
pub enum ReportDecision {
    /// Not part of this study.
    Reject(String),
    /// Another result for the run is being stored right now; try again.
    Retry(String),
    /// Nothing to store (an infrastructure failure was handled in memory, or a
    /// stale failure report for a run that is already done).
    Handled,
    /// Store this final result, then acknowledge.
    Commit(FinalWrite),
    /// The run already has a result; equal digests.
    Duplicate,
    /// The run already has a result with another digest: store this.
    Mismatch(MismatchWrite),
}

/// Finished runs per second over a sliding minute, in one-second buckets.
#[derive(Debug, Clone)]
struct Rate {
    buckets: [u64; 60],
    last_second: u64,
}

impl Rate {
    fn add(&mut self, second: u64) {
        self.advance(second);
        self.buckets[(second % 60) as usize] += 1;
    }
    fn advance(&mut self, second: u64) {
        if second > self.last_second {
            let gap = (second - self.last_second).min(60);
            for s in 1..=gap {
                self.buckets[((self.last_second + s) % 60) as usize] = 0;
            }
            self.last_second = second;
        }
    }
    fn per_second(&mut self, second: u64, since_start: Duration) -> f64 {
        self.advance(second);
        let window = since_start.as_secs_f64().clamp(1.0, 60.0);
        self.buckets.iter().sum::<u64>() as f64 / window
    }
}

/// The run table.
#[derive(Debug)]
pub struct RunTable {
    experiment: String,
    entries: Vec<RunEntry>,
    // Lookups only; never iterated for anything that reaches a result.
    by_id: HashMap<String, usize>,
    pending: VecDeque<usize>,
    leases: HashMap<String, Lease>,
    workers: BTreeMap<String, WorkerRecord>,
    projects: BTreeMap<String, ProjectSource>,
    lease_timeout: Duration,
    generation: u64,
    next_lease: u64,
    next_worker: u64,
    cancelled: bool,
    recent_failures: VecDeque<String>,
    engine_version: String,
    memory_limit_bytes: u64,
    cpu_limit_seconds: u64,
    mutation: String,
    work_cap: u64,
    // counters
    n_pending: u64,
    n_running: u64,
    n_done: u64,
    n_failed: u64,
    n_infra_failed: u64,
    n_limited: u64,
    resumed: u64,
    done_this_session: u64,
    determinism_failures: u64,
    started: Instant,
    rate: Rate,
}

fn to_proto_budget(b: Budget) -> PBudget {
    match b {
        Budget::Steps(n) => PBudget { kind: BudgetKind::Steps as i32, amount: n },
        Budget::Executions(n) => PBudget { kind: BudgetKind::Executions as i32, amount: n },
        Budget::Evaluations(n) => PBudget { kind: BudgetKind::Evaluations as i32, amount: n },
        Budget::Seconds(n) => PBudget { kind: BudgetKind::Seconds as i32, amount: n },
    }
}

/// Short status names used in exports and in the store.
pub fn status_name(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Ok => "ok",
        RunStatus::ProjectRejected => "project_rejected",
        RunStatus::Error => "error",
        RunStatus::InfraFailure => "infra_failure",
        RunStatus::Cancelled => "cancelled",
        RunStatus::Limit => "limit",
        RunStatus::Unspecified => "unknown",
    }
}

/// One run at start-up: the run, its stored final state, its lease hint.
pub type InitialRun = (Run, Option<StoredFinal>, Option<(String, String)>);

/// Settings of a table.
#[derive(Debug, Clone)]
pub struct TableConfig {
    /// Experiment name.
    pub experiment: String,
    /// Leases expire after this long without a heartbeat.
    pub lease_timeout: Duration,
    /// This coordinator process's generation (makes lease and worker ids unique
    /// across restarts).
    pub generation: u64,
    /// Memory limit per run handed to workers.
    pub memory_limit_bytes: u64,
    /// CPU time limit per run handed to workers (seconds, 0 = none).
    pub cpu_limit_seconds: u64,
    /// Determinism failures already recorded.
    pub determinism_failures: u64,
    /// Mutation analysis for every run: "off", "on" or "sample:N".
    pub mutation: String,
    /// Work cap for every run, as [`RunSpec::work_cap`] carries it (0 = the engine's default).
    pub work_cap: u64,
}

impl RunTable {
    /// A table of `runs` (sorted in the order they should be handed out).
    /// Runs with a lease hint are held for one lease timeout so that the worker
    /// that had them before a restart can adopt them with its next heartbeat.
    pub fn new(
        cfg: TableConfig,
        runs: Vec<InitialRun>,
        projects: BTreeMap<String, ProjectSource>,
        now: Instant,
    ) -> Self {
        let mut t = Self {
            experiment: cfg.experiment,
            entries: Vec::with_capacity(runs.len()),
            by_id: HashMap::with_capacity(runs.len()),
            pending: VecDeque::new(),
            leases: HashMap::new(),
            workers: BTreeMap::new(),
            projects,
            lease_timeout: cfg.lease_timeout,
            generation: cfg.generation,
            next_lease: 0,
            next_worker: 0,
            cancelled: false,
            recent_failures: VecDeque::new(),
            engine_version: clowder_vm::ENGINE_VERSION.to_string(),
            memory_limit_bytes: cfg.memory_limit_bytes,
            cpu_limit_seconds: cfg.cpu_limit_seconds,
            mutation: cfg.mutation,
            work_cap: cfg.work_cap,
            n_pending: 0,
            n_running: 0,
            n_done: 0,
            n_failed: 0,
            n_infra_failed: 0,
            n_limited: 0,
            resumed: 0,
            done_this_session: 0,
            determinism_failures: cfg.determinism_failures,
            started: now,
            rate: Rate { buckets: [0; 60], last_second: 0 },
        };
        for (run, fin, hint) in runs {
            if t.by_id.contains_key(&run.run_id) {
                // The same run listed twice (identical project files) is run once.
                continue;
            }
            let i = t.entries.len();
            t.by_id.insert(run.run_id.clone(), i);
            let state = match (fin, hint) {
                (Some(f), _) => {
                    t.n_done += 1;
                    t.resumed += 1;
                    t.count_final(&f.status);
                    RunState::Finished(f)
                }
                (None, Some((lease_id, worker_id))) => {
                    t.n_running += 1;
                    t.leases.insert(lease_id.clone(), Lease { index: i, worker_id, deadline: now + t.lease_timeout });
                    RunState::Leased(lease_id)
                }
                (None, None) => {
                    t.n_pending += 1;
                    t.pending.push_back(i);
                    RunState::Pending
                }
            };
            t.entries.push(RunEntry { run, state, attempts: 0, cpu_limited: 0 });
        }
        t
    }

    /// Counts a final status: `ok` and `limit` are results, everything else a failure.
    fn count_final(&mut self, status: &str) {
        match status {
            "ok" => {}
            "limit" => self.n_limited += 1,
            other => {
                self.n_failed += 1;
                if other == "infra_failure" {
                    self.n_infra_failed += 1;
                }
            }
        }
    }

    /// Registers a worker; returns its id (unique across coordinator restarts).
    /// A worker re-registering after losing contact keeps the id it asks for.
    pub fn register(
        &mut self,
        name: &str,
        previous_id: &str,
        host: &str,
        peer: &str,
        slots: u32,
        now: Instant,
    ) -> String {
        let clean = |s: &str| -> String {
            s.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')).take(64).collect()
        };
        let id = if !previous_id.is_empty() && clean(previous_id) == previous_id && previous_id.starts_with('w') {
            previous_id.to_string()
        } else {
            self.next_worker += 1;
            format!("w{}.{}-{}", self.generation, self.next_worker, clean(name))
        };
        let running = self.workers.get(&id).map(|w| w.running).unwrap_or(0);
        self.workers.insert(
            id.clone(),
            WorkerRecord {
                host: host.to_string(),
                peer: peer.to_string(),
                slots,
                running,
                done: 0,
                last_seen: now,
                told_done: false,
            },
        );
        id
    }

    fn seen(&mut self, worker_id: &str, now: Instant) {
        if let Some(w) = self.workers.get_mut(worker_id) {
            w.last_seen = now;
        } else if !worker_id.is_empty() {
            // A worker registered with a previous coordinator process.
            self.workers.insert(
                worker_id.to_string(),
                WorkerRecord {
                    host: String::new(),
                    peer: String::new(),
                    slots: 0,
                    running: 0,
                    done: 0,
                    last_seen: now,
                    told_done: false,
                },
            );
        }
    }

    /// Removes a lease; the run's state is the caller's business.
    fn drop_lease(&mut self, lease_id: &str) -> Option<Lease> {
        let l = self.leases.remove(lease_id)?;
        if let Some(w) = self.workers.get_mut(&l.worker_id) {
            w.running = w.running.saturating_sub(1);
        }
        Some(l)
    }

    fn make_pending(&mut self, i: usize, front: bool) {
        if matches!(self.entries[i].state, RunState::Leased(_) | RunState::Committing) {
            self.n_running -= 1;
        }
        self.entries[i].state = RunState::Pending;
        self.n_pending += 1;
        if front {
            self.pending.push_front(i);
        } else {
            self.pending.push_back(i);
        }
    }

    /// Returns expired leases to the queue. Runs that ran out of attempts are
    /// returned as give-ups to store (their state is `Committing`).
    pub fn expire(&mut self, now: Instant) -> (Vec<String>, Vec<FinalWrite>) {
        let mut expired: Vec<(usize, String)> =
            self.leases.iter().filter(|(_, l)| l.deadline <= now).map(|(id, l)| (l.index, id.clone())).collect();
        expired.sort();
        let mut log = Vec::new();
        let mut give_ups = Vec::new();
        for (i, lease_id) in expired {
            let Some(l) = self.drop_lease(&lease_id) else { continue };
            if !matches!(&self.entries[i].state, RunState::Leased(cur) if *cur == lease_id) {
                continue;
            }
            let why = format!("lease {lease_id} of worker {} expired (worker lost)", l.worker_id);
            log.push(format!("run {} ({}): {why}", self.entries[i].run.run_id, self.entries[i].run.project));
            let give_up = self.entries[i].attempts >= MAX_ATTEMPTS;
            if let Some(g) = self.requeue_or_give_up(i, &why, give_up) {
                give_ups.push(g);
            }
        }
        (log, give_ups)
    }

    /// After an infrastructure failure: the run goes back to the queue, or with `give_up` it is
    /// recorded as `infra_failure` with `why` (returned as the write to store).
    fn requeue_or_give_up(&mut self, i: usize, why: &str, give_up: bool) -> Option<FinalWrite> {
        let attempts = self.entries[i].attempts;
        if give_up {
            let error = format!("{why}; gave up after {attempts} attempts");
            let r = RunResult {
                run_id: self.entries[i].run.run_id.clone(),
                status: RunStatus::InfraFailure as i32,
                error: error.clone(),
                provenance: Some(clowder_proto::Provenance { attempts, ..Default::default() }),
                ..Default::default()
            };
            self.entries[i].state = RunState::Committing;
            Some(FinalWrite {
                run_id: r.run_id.clone(),
                fin: StoredFinal {
                    status: "infra_failure".into(),
                    digest: String::new(),
                    coverage: 0.0,
                    steps: 0,
                    error,
                },
                attempts,
                result: prost::Message::encode_to_vec(&r),
                index: i,
                worker_id: String::new(),
            })
        } else {
            // Retries go to the front so a study's tail is not held up by them.
            self.make_pending(i, true);
            None
        }
    }

    /// Leases up to `max` runs to `worker_id`.
    pub fn lease(&mut self, worker_id: &str, max: usize, now: Instant) -> Vec<RunSpec> {
        self.seen(worker_id, now);
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
            let lease_id = format!("L{}.{}", self.generation, self.next_lease);
            self.n_pending -= 1;
            self.n_running += 1;
            self.leases.insert(
                lease_id.clone(),
                Lease { index: i, worker_id: worker_id.to_string(), deadline: now + self.lease_timeout },
            );
            if let Some(w) = self.workers.get_mut(worker_id) {
                w.running += 1;
            }
            let e = &mut self.entries[i];
            e.attempts += 1;
            e.state = RunState::Leased(lease_id.clone());
            let project = self.projects.get(&e.run.project_hash);
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
                memory_limit_bytes: self.memory_limit_bytes,
                cpu_limit_seconds: self.cpu_limit_seconds,
                work_cap: self.work_cap,
                mutation: self.mutation.clone(),
                attempt: e.attempts,
                dataset: e.run.dataset.clone(),
                file_name: project.map(|p| p.file_name.clone()).unwrap_or_default(),
                project_size: project.map(|p| p.size).unwrap_or(0),
            });
        }
        out
    }

    /// Extends leases; adopts leases of a previous coordinator process for
    /// runs that are still pending; returns the leases that are no longer valid.
    pub fn heartbeat(&mut self, worker_id: &str, leases: &[(String, String)], now: Instant) -> Vec<String> {
        self.seen(worker_id, now);
        let mut revoked = Vec::new();
        for (lease_id, run_id) in leases {
            if let Some(l) = self.leases.get_mut(lease_id) {
                l.deadline = now + self.lease_timeout;
                if l.worker_id != worker_id {
                    // Adopted from a lease hint written under the worker's old id.
                    let old = std::mem::replace(&mut l.worker_id, worker_id.to_string());
                    if let Some(w) = self.workers.get_mut(&old) {
                        w.running = w.running.saturating_sub(1);
                    }
                    if let Some(w) = self.workers.get_mut(worker_id) {
                        w.running += 1;
                    }
                }
                continue;
            }
            match self.by_id.get(run_id).copied() {
                // After a cancel nothing is adopted: `--revoke` made these runs pending on purpose.
                Some(i) if !self.cancelled && matches!(self.entries[i].state, RunState::Pending) => {
                    // The coordinator restarted while this worker held the run: adopt.
                    self.n_pending -= 1;
                    self.n_running += 1;
                    self.entries[i].state = RunState::Leased(lease_id.clone());
                    self.entries[i].attempts += 1;
                    self.leases.insert(
                        lease_id.clone(),
                        Lease { index: i, worker_id: worker_id.to_string(), deadline: now + self.lease_timeout },
                    );
                    if let Some(w) = self.workers.get_mut(worker_id) {
                        w.running += 1;
                    }
                }
                _ => revoked.push(lease_id.clone()),
            }
        }
        revoked
    }

    /// Takes leases back unfinished (a draining worker); the runs go to the
    /// front of the queue and the attempt does not count.
    pub fn release(&mut self, worker_id: &str, leases: &[(String, String)], now: Instant) -> u64 {
        self.seen(worker_id, now);
        let mut n = 0;
        for (lease_id, _) in leases {
            let Some(l) = self.drop_lease(lease_id) else { continue };
            if matches!(&self.entries[l.index].state, RunState::Leased(cur) if cur == lease_id) {
                self.entries[l.index].attempts = self.entries[l.index].attempts.saturating_sub(1);
                self.make_pending(l.index, true);
                n += 1;
            }
        }
        n
    }

    /// Decides what to do with a reported result.
    pub fn begin_report(&mut self, mut result: RunResult, peer: &str, now: Instant) -> ReportDecision {
        let Some(&i) = self.by_id.get(&result.run_id) else {
            return ReportDecision::Reject(format!("run {} is not part of study {}", result.run_id, self.experiment));
        };
        let status = RunStatus::try_from(result.status).unwrap_or(RunStatus::Unspecified);
        let worker_id = result.provenance.as_ref().map(|p| p.worker_id.clone()).unwrap_or_default();
        self.seen(&worker_id, now);
        let holds_lease = matches!(&self.entries[i].state, RunState::Leased(cur) if *cur == result.lease_id);
        match (&self.entries[i].state, status) {
            (RunState::Committing, _) => {
                ReportDecision::Retry(format!("another result of run {} is being stored", result.run_id))
            }
            (
                RunState::Finished(stored),
                RunStatus::Ok | RunStatus::Limit | RunStatus::Error | RunStatus::ProjectRejected,
            ) if stored.status != "infra_failure" => {
                let reported_status = status_name(status);
                // A result marked non-reproducible (wall-clock budget, a tool not declared
                // deterministic) is not expected to repeat: the first one stands.
                let unrepeatable = !result.reproducible && matches!(status, RunStatus::Ok | RunStatus::Limit);
                if unrepeatable || (stored.status == reported_status && stored.digest == result.digest) {
                    ReportDecision::Duplicate
                } else {
                    ReportDecision::Mismatch(MismatchWrite {
                        run_id: result.run_id.clone(),
                        stored_status: stored.status.clone(),
                        stored_digest: stored.digest.clone(),
                        reported_status: reported_status.to_string(),
                        reported_digest: result.digest.clone(),
                        result: prost::Message::encode_to_vec(&result),
                    })
                }
            }
            (RunState::Finished(_), RunStatus::InfraFailure | RunStatus::Cancelled | RunStatus::Unspecified) => {
                ReportDecision::Handled
            }
            (_, RunStatus::InfraFailure | RunStatus::Unspecified) => {
                if holds_lease {
                    self.drop_lease(&result.lease_id);
                    let e = &mut self.entries[i];
                    let cpu_limited = clowder_proto::cpu_limit_of_reason(&result.error).is_some();
                    let why = if cpu_limited {
                        // Kept at the start of the reason: resuming with a higher limit and
                        // `clowder verify` recognise these runs by it.
                        e.cpu_limited += 1;
                        format!("{} (worker {worker_id})", result.error)
                    } else {
                        let reason = if result.error.is_empty() { "infrastructure failure" } else { &result.error };
                        format!("worker {worker_id}: {reason}")
                    };
                    let give_up = e.attempts >= MAX_ATTEMPTS || e.cpu_limited >= CPU_LIMIT_ATTEMPTS;
                    if let Some(g) = self.requeue_or_give_up(i, &why, give_up) {
                        return ReportDecision::Commit(g);
                    }
                }
                ReportDecision::Handled
            }
            (_, RunStatus::Cancelled) => {
                if holds_lease {
                    self.drop_lease(&result.lease_id);
                    self.entries[i].attempts = self.entries[i].attempts.saturating_sub(1);
                    self.make_pending(i, true);
                }
                ReportDecision::Handled
            }
            // A real result for a run without one (or whose infrastructure give-up it replaces).
            // `limit` is one: the work cap ends the run at the same point on every machine.
            (_, RunStatus::Ok | RunStatus::Limit | RunStatus::Error | RunStatus::ProjectRejected) => {
                match std::mem::replace(&mut self.entries[i].state, RunState::Committing) {
                    RunState::Leased(l) => {
                        self.drop_lease(&l);
                    }
                    RunState::Pending => {
                        self.n_pending -= 1;
                        self.n_running += 1;
                    }
                    RunState::Finished(_) => {
                        // Replacing an infrastructure give-up.
                        self.n_done -= 1;
                        self.n_failed -= 1;
                        self.n_infra_failed -= 1;
                        self.n_running += 1;
                    }
                    RunState::Committing => {}
                }
                let attempts = self.entries[i].attempts.max(1);
                if let Some(p) = result.provenance.as_mut() {
                    p.attempts = attempts;
                    if p.peer.is_empty() {
                        p.peer = peer.to_string();
                    }
                }
                ReportDecision::Commit(FinalWrite {
                    run_id: result.run_id.clone(),
                    fin: StoredFinal {
                        status: status_name(status).to_string(),
                        digest: result.digest.clone(),
                        coverage: result.coverage,
                        steps: result.steps,
                        error: result.error.clone(),
                    },
                    attempts,
                    result: prost::Message::encode_to_vec(&result),
                    index: i,
                    worker_id,
                })
            }
        }
    }

    /// A result was committed: the run is finished.
    pub fn finish_commit(&mut self, w: &FinalWrite, now: Instant) {
        let i = w.index;
        if !matches!(self.entries[i].state, RunState::Committing) {
            return;
        }
        self.n_running -= 1;
        self.n_done += 1;
        self.done_this_session += 1;
        self.count_final(&w.fin.status);
        if w.fin.status != "ok" && w.fin.status != "limit" {
            let run = &self.entries[i].run;
            self.recent_failures.push_back(format!(
                "{} {} seed {} (run {}): {}: {}",
                run.project, run.algorithm, run.seed, run.run_id, w.fin.status, w.fin.error
            ));
            while self.recent_failures.len() > 10 {
                self.recent_failures.pop_front();
            }
        }
        if let Some(wr) = self.workers.get_mut(&w.worker_id) {
            wr.done += 1;
        }
        self.rate.add(now.saturating_duration_since(self.started).as_secs());
        self.entries[i].state = RunState::Finished(w.fin.clone());
    }

    /// Storing a result failed: the run can be reported again.
    pub fn abort_commit(&mut self, w: &FinalWrite) {
        if matches!(self.entries[w.index].state, RunState::Committing) {
            self.make_pending(w.index, true);
        }
    }

    /// A determinism failure was stored.
    pub fn note_mismatch(&mut self, run_id: &str, detail: &str) {
        self.determinism_failures += 1;
        self.recent_failures.push_back(format!("run {run_id}: determinism failure: {detail}"));
        while self.recent_failures.len() > 10 {
            self.recent_failures.pop_front();
        }
    }

    /// Stops handing out runs; with `revoke`, also takes back leased runs
    /// (workers hear it with their next heartbeat). Returns the runs affected.
    pub fn cancel(&mut self, revoke: bool) -> u64 {
        self.cancelled = true;
        let mut n = self.n_pending;
        if revoke {
            let mut ids: Vec<String> = self.leases.keys().cloned().collect();
            ids.sort();
            for id in ids {
                if let Some(l) = self.drop_lease(&id)
                    && matches!(&self.entries[l.index].state, RunState::Leased(cur) if *cur == id)
                {
                    self.entries[l.index].attempts = self.entries[l.index].attempts.saturating_sub(1);
                    self.make_pending(l.index, true);
                    n += 1;
                }
            }
        }
        n
    }

    /// Whether the table is cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled
    }

    /// True when no run will be handed out again.
    pub fn is_done(&self) -> bool {
        self.n_done == self.entries.len() as u64 || (self.cancelled && self.n_running == 0)
    }

    /// Notes that a worker was told the study is done for it.
    pub fn told_done(&mut self, worker_id: &str) {
        if let Some(w) = self.workers.get_mut(worker_id) {
            w.told_done = true;
        }
    }

    /// True when every worker heard from within one lease timeout has been
    /// told that the study is done (so the coordinator may exit).
    pub fn all_workers_told(&self, now: Instant) -> bool {
        self.workers.values().all(|w| w.told_done || now.saturating_duration_since(w.last_seen) > self.lease_timeout)
    }

    /// Where a project is, by content hash.
    pub fn project(&self, hash: &str) -> Option<&ProjectSource> {
        self.projects.get(hash)
    }

    /// Progress snapshot.
    pub fn progress(&mut self, now: Instant) -> Progress {
        let since = now.saturating_duration_since(self.started);
        let rate = self.rate.per_second(since.as_secs(), since);
        let remaining = self.entries.len() as u64 - self.n_done;
        let eta = (rate > 0.0 && remaining > 0).then(|| Duration::from_secs_f64(remaining as f64 / rate));
        let recent = self.lease_timeout * 2;
        Progress {
            experiment: self.experiment.clone(),
            total: self.entries.len() as u64,
            done: self.n_done,
            running: self.n_running,
            pending: self.n_pending,
            failed: self.n_failed,
            limited: self.n_limited,
            infra_failed: self.n_infra_failed,
            resumed: self.resumed,
            done_this_session: self.done_this_session,
            determinism_failures: self.determinism_failures,
            finished: self.is_done(),
            cancelled: self.cancelled,
            workers: self
                .workers
                .iter()
                .filter(|(_, w)| now.saturating_duration_since(w.last_seen) <= recent)
                .map(|(k, w)| (k.clone(), w.clone()))
                .collect(),
            recent_failures: self.recent_failures.iter().cloned().collect(),
            rate_per_second: rate,
            eta: if remaining == 0 { Some(Duration::ZERO) } else { eta },
        }
    }

    /// All entries, in hand-out order.
    pub fn entries(&self) -> &[RunEntry] {
        &self.entries
    }

    /// Looks a run up by id.
    pub fn get(&self, run_id: &str) -> Option<&RunEntry> {
        self.by_id.get(run_id).map(|&i| &self.entries[i])
    }

    /// The worker a lease belongs to.
    pub fn lease_worker(&self, lease_id: &str) -> Option<&str> {
        self.leases.get(lease_id).map(|l| l.worker_id.as_str())
    }
}

#[cfg(test)]
mod tests;
