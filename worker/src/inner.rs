//! The state a worker's tasks and slot threads share, and small helpers they all use.

use std::collections::{BTreeMap, VecDeque};
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

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
    pub(crate) running: Mutex<BTreeMap<String, (String, Arc<Cancel>)>>,
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
            v.extend(r.iter().map(|(l, (run, _))| (l.clone(), run.clone())));
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

    pub(crate) fn target_held(&self) -> usize {
        let slots = self.opts.slots.max(1);
        let mean = self.mean_secs.lock().map(|m| *m).unwrap_or(0.0);
        let extra =
            if mean > 0.0 { ((self.opts.prefetch_seconds * slots as f64 / mean) as usize).min(1024) } else { 0 };
        slots + extra
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

pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".into())
}
