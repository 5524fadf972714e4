//! The state a worker's tasks and slot threads share, and small helpers they all use.

use std::collections::{BTreeMap, VecDeque};
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use clowder_proto::{ReportAck, RunResult, RunStatus, TimelineSample};
use tokio::sync::{Notify, mpsc, oneshot};

use crate::{Cancel, Job, WorkerError, WorkerOptions, WorkerStats};

/// Errors after which retrying cannot help.
pub(crate) fn is_fatal(s: &tonic::Status) -> bool {
    matches!(
        s.code(),
        tonic::Code::Unauthenticated
            | tonic::Code::PermissionDenied
            | tonic::Code::FailedPrecondition
            | tonic::Code::InvalidArgument
            | tonic::Code::Unimplemented
    )
}

/// Exponential backoff with jitter (jitter from a counter: it only spreads
/// reconnects, it never reaches a result).
pub(crate) struct Backoff {
    n: u32,
    salt: u64,
}

impl Backoff {
    pub(crate) fn new(salt: &str) -> Self {
        Self {
            n: 0,
            salt: u64::from_le_bytes(blake3::hash(salt.as_bytes()).as_bytes()[..8].try_into().unwrap_or([0; 8])),
        }
    }
    pub(crate) fn next(&mut self) -> Duration {
        // Capped at 2 s (clowder_coordinator::MAX_WORKER_BACKOFF): a coordinator
        // that finishes right after a restart lingers that long for stragglers.
        let base = 100u64.saturating_mul(1 << self.n.min(6)).min(2_000);
        self.n += 1;
        let jitter =
            (self.salt.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(u64::from(self.n)) >> 40) % (base / 2 + 1);
        Duration::from_millis(base / 2 + jitter)
    }
    pub(crate) fn reset(&mut self) {
        self.n = 0;
    }
}

/// A run a slot is executing.
pub(crate) struct Running {
    pub(crate) run_id: String,
    pub(crate) cancel: Arc<Cancel>,
    pub(crate) started: Instant,
}

/// A run handed to a slot.
pub(crate) struct Started {
    pub(crate) samples: mpsc::UnboundedReceiver<TimelineSample>,
    pub(crate) result: oneshot::Receiver<RunResult>,
}

pub(crate) struct Inner {
    pub(crate) opts: WorkerOptions,
    pub(crate) host: String,
    pub(crate) worker_id: Mutex<String>,
    pub(crate) queue: Mutex<VecDeque<Job>>,
    pub(crate) queue_cv: Condvar,
    /// Runs on a slot, by lease.
    pub(crate) running: Mutex<BTreeMap<String, Running>>,
    /// Finished runs whose result is not acknowledged yet (lease → run): their
    /// leases stay alive so that a slow delivery does not get the run re-leased.
    pub(crate) delivering: Mutex<BTreeMap<String, String>>,
    pub(crate) closing: AtomicBool,
    pub(crate) slot_done: Notify,
    /// Mean run duration (seconds, exponential average); 0 = unknown.
    pub(crate) mean_secs: Mutex<f64>,
    pub(crate) unacked: AtomicU64,
    pub(crate) delivered: Notify,
    pub(crate) stats: Mutex<WorkerStats>,
    pub(crate) journal: Mutex<Option<std::fs::File>>,
    /// Set when delivery should stop retrying (the worker is giving up).
    pub(crate) give_up: AtomicBool,
}

impl Inner {
    /// The shared state of a new worker (opens the journal, if any).
    pub(crate) fn new(opts: WorkerOptions) -> Result<Self, WorkerError> {
        let journal = match &opts.journal {
            Some(p) => Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .map_err(|e| WorkerError::Setup(format!("journal {}: {e}", p.display())))?,
            ),
            None => None,
        };
        Ok(Inner {
            host: hostname(),
            worker_id: Mutex::new(String::new()),
            queue: Mutex::new(VecDeque::new()),
            queue_cv: Condvar::new(),
            running: Mutex::new(BTreeMap::new()),
            delivering: Mutex::new(BTreeMap::new()),
            closing: AtomicBool::new(false),
            slot_done: Notify::new(),
            mean_secs: Mutex::new(0.0),
            unacked: AtomicU64::new(0),
            delivered: Notify::new(),
            stats: Mutex::new(WorkerStats::default()),
            journal: Mutex::new(journal),
            give_up: AtomicBool::new(false),
            opts,
        })
    }

    pub(crate) fn log(&self, m: impl AsRef<str>) {
        if self.opts.log {
            eprintln!("worker {}: {}", self.opts.name, m.as_ref());
        }
    }

    pub(crate) fn worker_id(&self) -> String {
        self.worker_id.lock().map(|w| w.clone()).unwrap_or_default()
    }

    pub(crate) fn held_leases(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = self
            .queue
            .lock()
            .map(|q| q.iter().map(|j| (j.spec.lease_id.clone(), j.spec.run_id.clone())).collect())
            .unwrap_or_default();
        if let Ok(r) = self.running.lock() {
            v.extend(r.iter().map(|(l, x)| (l.clone(), x.run_id.clone())));
        }
        if let Ok(d) = self.delivering.lock() {
            v.extend(d.iter().map(|(l, run)| (l.clone(), run.clone())));
        }
        v
    }

    pub(crate) fn forget_delivering(&self, lease_id: &str) {
        if let Ok(mut d) = self.delivering.lock() {
            d.remove(lease_id);
        }
    }

    pub(crate) fn held(&self) -> usize {
        self.queue.lock().map(|q| q.len()).unwrap_or(0) + self.running.lock().map(|r| r.len()).unwrap_or(0)
    }

    /// How many runs to hold, running and queued ([`queue_target`]).
    pub(crate) fn target_held(&self) -> usize {
        self.target_for(self.opts.prefetch_seconds)
    }

    /// [`queue_target`] for `prefetch` seconds with what this worker knows of run times.
    fn target_for(&self, prefetch: f64) -> usize {
        let mean = self.mean_secs.lock().map(|m| *m).unwrap_or(0.0);
        let mut running: Vec<f64> = self
            .running
            .lock()
            .map(|r| r.values().map(|x| x.started.elapsed().as_secs_f64()).collect())
            .unwrap_or_default();
        queue_target(self.opts.slots.max(1), prefetch, mean, &mut running)
    }

    /// Takes the queued runs that would wait longer than [`HAND_BACK_AFTER`] prefetches off the
    /// queue (the last leased first), for handing back: runs turned out to take longer than the
    /// prefetch assumed, and runs queued here would wait while other workers have free slots.
    /// (The margin keeps runs of about a second from being handed back and leased again.)
    pub(crate) fn take_excess(&self) -> Vec<Job> {
        let target = self.target_for(self.opts.prefetch_seconds * HAND_BACK_AFTER);
        let running = self.running.lock().map(|r| r.len()).unwrap_or(0);
        let keep = target.saturating_sub(running);
        let Ok(mut q) = self.queue.lock() else { return Vec::new() };
        if q.len() <= keep { Vec::new() } else { q.split_off(keep).into() }
    }

    pub(crate) fn note_ack(&self, r: &RunResult, ack: &ReportAck) {
        let mut s = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        let status = RunStatus::try_from(r.status).unwrap_or(RunStatus::Unspecified);
        if matches!(status, RunStatus::Cancelled | RunStatus::InfraFailure | RunStatus::Unspecified) {
            // Not a result: the run was handed back (or will be retried).
            if status == RunStatus::Cancelled {
                s.released += 1;
            }
            return;
        }
        if ack.accepted {
            s.runs += 1;
            if ack.duplicate {
                s.duplicates += 1;
            }
            if ack.determinism_failure {
                eprintln!("worker {}: run {}: {}", self.opts.name, r.run_id, ack.message);
            }
            if let Ok(mut j) = self.journal.lock()
                && let Some(f) = j.as_mut()
            {
                let _ = writeln!(
                    f,
                    "{} {} {} {}",
                    r.run_id,
                    status.as_str_name(),
                    r.digest,
                    if ack.duplicate { "dup" } else { "new" }
                );
                let _ = f.flush();
            }
        } else {
            s.rejected += 1;
            drop(s);
            self.log(format!("result of run {} not accepted: {}", r.run_id, ack.message));
        }
    }
}

/// Queued runs are handed back when they would wait this many times the prefetch.
pub(crate) const HAND_BACK_AFTER: f64 = 10.0;

/// How many runs a worker of `slots` slots should hold (running and queued) so that its queue
/// holds about `prefetch` seconds of work: `slots` plus what finishes in `prefetch` seconds.
/// The expected run time is the mean of finished runs (`mean`, 0 when none finished) or, when
/// larger, the lower median of how long the running runs have run so far (`running`, seconds;
/// reordered): a study whose first runs were quick and whose later ones take hours would
/// otherwise keep leasing by the quick runs' mean, holding hundreds of runs that wait behind one
/// slot while other workers idle. The median, not the longest, so that one long run among many
/// slots does not stop the prefetch of the others' quick runs.
pub(crate) fn queue_target(slots: usize, prefetch: f64, mean: f64, running: &mut [f64]) -> usize {
    let mut expected = mean;
    if !running.is_empty() {
        running.sort_by(f64::total_cmp);
        expected = expected.max(running[(running.len() - 1) / 2]);
    }
    let extra = if expected > 0.0 { ((prefetch * slots as f64 / expected) as usize).min(1024) } else { 0 };
    slots + extra
}

pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_target_follows_runs_that_outlast_the_mean() {
        // Quick runs finished (10 ms each): a second of them per slot.
        assert_eq!(queue_target(2, 1.0, 0.01, &mut []), 2 + 200);
        // The running runs have taken a minute each so far: no more than the slots.
        assert_eq!(queue_target(2, 1.0, 0.01, &mut [60.0, 75.0]), 2);
        // One long run among four slots whose others run quick runs: prefetch goes on by
        // the lower median.
        assert_eq!(queue_target(4, 1.0, 0.01, &mut [0.001, 0.002, 0.004, 3600.0]), 4 + 400);
        // Nothing known yet: one run per slot.
        assert_eq!(queue_target(3, 1.0, 0.0, &mut []), 3);
        assert_eq!(queue_target(1, 1.0, 0.0, &mut [0.5]), 1 + 2);
        // Never more than 1 024 extra.
        assert_eq!(queue_target(1, 1.0, 1e-9, &mut []), 1 + 1024);
    }

    #[test]
    fn excess_queued_runs_are_taken_last_leased_first() {
        let inner = Inner::new(WorkerOptions { slots: 1, ..WorkerOptions::new("http://127.0.0.1:1") }).unwrap();
        let job = |i: usize| Job {
            spec: clowder_proto::RunSpec { lease_id: format!("l{i}"), run_id: format!("r{i}"), ..Default::default() },
            project_path: std::path::PathBuf::new(),
        };
        *inner.mean_secs.lock().unwrap() = 0.1;
        inner.queue.lock().unwrap().extend((0..30).map(job));
        // Mean 0.1 s, nothing running yet: leasing would aim at the slot and 10 queued runs,
        // handing back keeps what the slot finishes in 10 prefetches (1 + 100): all 30.
        assert!(inner.take_excess().is_empty());
        *inner.mean_secs.lock().unwrap() = 0.5;
        // Now 1 + 20 are kept.
        let taken = inner.take_excess();
        assert_eq!(
            taken.iter().map(|j| j.spec.lease_id.as_str()).collect::<Vec<_>>(),
            (21..30).map(|i| format!("l{i}")).collect::<Vec<_>>()
        );
        assert_eq!(inner.queue.lock().unwrap().len(), 21);
        assert_eq!(inner.target_held(), 1 + 2);
        // A run that has been going for a minute: nothing more is worth queueing.
        inner.running.lock().unwrap().insert(
            "l-run".into(),
            Running {
                run_id: "r-run".into(),
                cancel: Arc::default(),
                started: Instant::now() - Duration::from_secs(60),
            },
        );
        assert_eq!(inner.take_excess().len(), 21);
        assert!(inner.queue.lock().unwrap().is_empty());
        assert!(inner.take_excess().is_empty());
    }
}
