//! Slots: one thread per run executed at a time, pinned to its own core, taking jobs from the
//! shared queue.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use clowder_proto::{Provenance, RunResult, RunSpec};
use tokio::sync::{mpsc, oneshot};

use crate::inner::{Inner, Running, Started};
use crate::{CLOWDER_VERSION, Cancel, Executor, SlotEnv, WorkerError, cores, limits};

/// Starts one thread per slot; returns them, the channel on which they announce started
/// runs, and the cores they pinned to (sorted).
pub(crate) async fn start(
    inner: &Arc<Inner>,
    executor: &Arc<dyn Executor>,
    cgroup: Option<Arc<limits::WorkerCgroup>>,
) -> Result<(Vec<std::thread::JoinHandle<()>>, mpsc::UnboundedReceiver<Started>, Vec<u32>), WorkerError> {
    let all_cores = cores::allowed_cores();
    let (started_tx, started_rx) = mpsc::unbounded_channel::<Started>();
    let (ready_tx, mut ready_rx) = mpsc::unbounded_channel::<Option<usize>>();
    let mut slot_threads = Vec::new();
    for slot in 0..inner.opts.slots.max(1) {
        let inner = Arc::clone(inner);
        let executor = Arc::clone(executor);
        let started_tx = started_tx.clone();
        let ready_tx = ready_tx.clone();
        let cores = all_cores.clone();
        let cgroup = cgroup.clone();
        let t = std::thread::Builder::new()
            .name(format!("clowder-slot-{slot}"))
            .spawn(move || slot_main(slot, inner, executor, started_tx, ready_tx, cores, cgroup))
            .map_err(|e| WorkerError::Setup(format!("starting slot thread: {e}")))?;
        slot_threads.push(t);
    }
    drop(started_tx);
    drop(ready_tx);
    let mut pinned_cores = Vec::new();
    for _ in 0..inner.opts.slots.max(1) {
        if let Some(Some(c)) = ready_rx.recv().await {
            pinned_cores.push(c as u32);
        }
    }
    pinned_cores.sort_unstable();
    Ok((slot_threads, started_rx, pinned_cores))
}

/// What an executor measured about a run, for its provenance.
#[derive(Default)]
pub(crate) struct Measured {
    pub(crate) memory_peak_bytes: u64,
    pub(crate) memory_limit_kind: &'static str,
    pub(crate) cpu_ms: u64,
}

/// `r` with the ids of its run and lease and the worker's provenance.
pub(crate) fn with_ids(
    mut r: RunResult,
    spec: &RunSpec,
    inner: &Inner,
    core: Option<usize>,
    isolation: &str,
    measured: &Measured,
) -> RunResult {
    r.run_id = spec.run_id.clone();
    r.lease_id = spec.lease_id.clone();
    r.provenance = Some(Provenance {
        host: inner.host.clone(),
        worker_id: inner.worker_id(),
        core: core.map(|c| c as i32).unwrap_or(-1),
        pinned: core.is_some(),
        engine_version: clowder_vm::ENGINE_VERSION.to_string(),
        memory_limit_bytes: if measured.memory_limit_kind == "none" { 0 } else { spec.memory_limit_bytes },
        memory_limit_kind: measured.memory_limit_kind.to_string(),
        attempts: spec.attempt,
        memory_peak_bytes: measured.memory_peak_bytes,
        cpu_ms: measured.cpu_ms,
        isolation: isolation.to_string(),
        clowder_version: CLOWDER_VERSION.to_string(),
        peer: String::new(),
    });
    r
}

fn slot_main(
    slot: usize,
    inner: Arc<Inner>,
    executor: Arc<dyn Executor>,
    started: mpsc::UnboundedSender<Started>,
    ready: mpsc::UnboundedSender<Option<usize>>,
    cores: Vec<usize>,
    cgroup: Option<Arc<limits::WorkerCgroup>>,
) {
    // Enumerate first, then claim one allowed core that no other slot (of any
    // clowder process on this machine) holds, then pin this thread to it.
    let claim = if inner.opts.pin { cores::claim_core(&cores, &inner.opts.core_lock_dir) } else { None };
    let core = match &claim {
        Some(c) => match cores::pin_current_thread(c.core) {
            Ok(()) => Some(c.core),
            Err(e) => {
                inner.log(format!("slot {slot}: pinning to core {} failed: {e}; running unpinned", c.core));
                None
            }
        },
        None => {
            if inner.opts.pin {
                inner.log(format!("slot {slot}: every allowed core is taken; running unpinned"));
            }
            None
        }
    };
    let memory = match (&cgroup, executor.isolation()) {
        (_, "thread") => limits::MemoryLimiter::None,
        (Some(cg), _) => cg.slot(slot),
        (None, _) => limits::MemoryLimiter::RlimitAs,
    };
    let env = SlotEnv { slot, core, memory };
    let _ = ready.send(core);
    drop(ready);
    loop {
        let job = {
            let mut q = inner.queue.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(j) = q.pop_front() {
                    break Some(j);
                }
                if inner.closing.load(Ordering::SeqCst) {
                    break None;
                }
                q = inner
                    .queue_cv
                    .wait_timeout(q, Duration::from_millis(200))
                    .map(|(g, _)| g)
                    .unwrap_or_else(|e| e.into_inner().0);
            }
        };
        let Some(job) = job else { break };
        let cancel = Arc::new(Cancel::default());
        if let Ok(mut r) = inner.running.lock() {
            let running =
                Running { run_id: job.spec.run_id.clone(), cancel: Arc::clone(&cancel), started: Instant::now() };
            r.insert(job.spec.lease_id.clone(), running);
        }
        let (sample_tx, sample_rx) = mpsc::unbounded_channel();
        let (result_tx, result_rx) = oneshot::channel();
        let _ = started.send(Started { samples: sample_rx, result: result_rx });
        let t0 = Instant::now();
        let out = executor.execute(
            &job,
            &env,
            &mut |s| {
                let _ = sample_tx.send(s);
            },
            &cancel,
        );
        let elapsed = t0.elapsed();
        drop(sample_tx);
        if let Ok(mut d) = inner.delivering.lock() {
            d.insert(job.spec.lease_id.clone(), job.spec.run_id.clone());
        }
        if let Ok(mut r) = inner.running.lock() {
            r.remove(&job.spec.lease_id);
        }
        if let Ok(mut m) = inner.mean_secs.lock() {
            let s = elapsed.as_secs_f64().max(1e-4);
            *m = if *m == 0.0 { s } else { 0.8 * *m + 0.2 * s };
        }
        let measured = Measured {
            memory_peak_bytes: out.memory_peak_bytes,
            memory_limit_kind: out.memory_limit_kind,
            cpu_ms: out.cpu_ms,
        };
        let mut r = with_ids(out.result, &job.spec, &inner, core, executor.isolation(), &measured);
        r.duration_ms = elapsed.as_millis() as u64;
        let _ = result_tx.send(r);
        inner.slot_done.notify_one();
    }
    drop(claim);
}
