//! clowder's worker: registers with a coordinator, leases runs, executes each
//! on a pinned slot thread (in its own child process by default), streams
//! timeline samples and results back, and survives coordinator restarts.
//!
//! Async only at the edges (gRPC); each slot is a plain thread pinned to its
//! own core that executes one run at a time synchronously.
//!
//! Life of a worker: register (retrying with backoff until the coordinator
//! answers) → lease batches (sized so the local queue holds about a second of
//! work, never less than one run per slot) → execute → report (the result is
//! kept and re-sent until the coordinator acknowledges it, which it does only
//! after storing it) → exit when the coordinator says the study is done.
//! SIGTERM (or SLURM's pre-timeout signal) drains: queued runs are handed
//! back at once, running ones may finish within the drain timeout, then they
//! are stopped and handed back too.

#![warn(missing_docs)]

pub mod cache;
pub mod cores;
pub mod exec;
pub mod limits;

use std::collections::{BTreeMap, VecDeque};
use std::io::Write as _;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use clowder_proto::coordinator_client::CoordinatorClient;
use clowder_proto::{
    FetchProjectRequest, HeartbeatRequest, LeaseRequest, Provenance, RegisterRequest, ReleaseRequest, ReportAck,
    ReportMessage, RunResult, RunSpec, RunStatus, TimelineSample, report_message,
};
use tokio::sync::{Notify, mpsc, oneshot, watch};
use tonic::Request;
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

pub use exec::{Cancel, ExecOutcome, Executor, Job, ProcessExecutor, SlotEnv, ThreadExecutor};

/// clowder's version, recorded in provenance.
pub const CLOWDER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Worker settings.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// Coordinator URL, e.g. `http://127.0.0.1:7878` or `https://host:7878`.
    pub coordinator: String,
    /// Shared token sent with every RPC.
    pub token: Option<String>,
    /// Name shown in provenance and status.
    pub name: String,
    /// Runs executed at the same time (one pinned thread each).
    pub slots: usize,
    /// Pin each slot's thread to its own core.
    pub pin: bool,
    /// Folder of the per-core lock files (cores are claimed across processes).
    pub core_lock_dir: PathBuf,
    /// CA certificate (PEM) to trust for `https://` coordinators; without it
    /// the system's roots are used.
    pub tls_ca_pem: Option<Vec<u8>>,
    /// TLS server name to expect (default: the URL's host).
    pub tls_domain: Option<String>,
    /// Local address to connect from.
    pub bind: Option<IpAddr>,
    /// Project cache folder.
    pub cache_dir: PathBuf,
    /// Give up when the coordinator has been unreachable for this long.
    pub reconnect_timeout: Duration,
    /// On drain, let running runs finish for at most this long.
    pub drain_timeout: Duration,
    /// Append one line per acknowledged result here (`run_id status digest`).
    pub journal: Option<PathBuf>,
    /// Memory limit per run, overriding the coordinator's.
    pub memory_limit: Option<u64>,
    /// CPU time limit per run in seconds (0 = none), overriding the coordinator's.
    pub cpu_limit: Option<u64>,
    /// Use cgroup memory limits where writable (else `RLIMIT_AS`).
    pub cgroups: bool,
    /// Aim to hold this many seconds of queued work (short runs lease in batches).
    pub prefetch_seconds: f64,
    /// Print events to stderr.
    pub log: bool,
}

impl WorkerOptions {
    /// Defaults for a worker of `coordinator`: one slot per allowed core, pinned.
    pub fn new(coordinator: impl Into<String>) -> Self {
        Self {
            coordinator: coordinator.into(),
            token: None,
            name: hostname(),
            slots: cores::allowed_cores().len().max(1),
            pin: true,
            core_lock_dir: cores::default_lock_dir(),
            tls_ca_pem: None,
            tls_domain: None,
            bind: None,
            cache_dir: cache::default_cache_dir(),
            reconnect_timeout: Duration::from_secs(600),
            drain_timeout: Duration::from_secs(60),
            journal: None,
            memory_limit: None,
            cpu_limit: None,
            cgroups: true,
            prefetch_seconds: 1.0,
            log: false,
        }
    }
}

/// What the worker should do (sent through a `watch` channel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Keep working.
    Run,
    /// Stop leasing, hand back queued runs, let running ones finish within the
    /// drain timeout, deliver results, exit.
    Drain,
    /// Like drain, but stop running runs at once.
    Abort,
}

/// Errors that stop a worker.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// Bad settings (URL, token, TLS files).
    #[error("worker setup: {0}")]
    Setup(String),
    /// The coordinator refused the worker (token, engine version).
    #[error("coordinator {url} refused this worker: {msg}")]
    Refused {
        /// URL.
        url: String,
        /// The coordinator's message.
        msg: String,
    },
    /// The coordinator stayed unreachable.
    #[error("coordinator {url} unreachable for {secs} s (last error: {msg})")]
    Unreachable {
        /// URL.
        url: String,
        /// How long.
        secs: u64,
        /// Last error.
        msg: String,
    },
}

/// What a worker did.
#[derive(Debug, Clone, Default)]
pub struct WorkerStats {
    /// Results the coordinator acknowledged.
    pub runs: u64,
    /// Results it did not accept (not part of the study).
    pub rejected: u64,
    /// Acknowledged results that were second completions (compared by digest).
    pub duplicates: u64,
    /// Runs handed back unfinished (drain, revoked).
    pub released: u64,
    /// Results never delivered (coordinator unreachable at exit).
    pub undelivered: u64,
}

/// Adds the shared token to every request.
#[derive(Clone)]
pub struct AddToken(Option<MetadataValue<tonic::metadata::Ascii>>);

impl tonic::service::Interceptor for AddToken {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, tonic::Status> {
        if let Some(t) = &self.0 {
            req.metadata_mut().insert(clowder_proto::TOKEN_METADATA_KEY, t.clone());
        }
        Ok(req)
    }
}

/// A coordinator client that sends the token with every call.
pub type Client = CoordinatorClient<InterceptedService<Channel, AddToken>>;

/// A client for `opts.coordinator` with its token and TLS settings (connects
/// lazily and reconnects by itself).
pub fn client(opts: &WorkerOptions) -> Result<Client, WorkerError> {
    let setup = |m: String| WorkerError::Setup(format!("coordinator {}: {m}", opts.coordinator));
    let mut ep = Endpoint::from_shared(opts.coordinator.clone())
        .map_err(|e| setup(format!("not a URL: {e}")))?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(20))
        .keep_alive_timeout(Duration::from_secs(20))
        .keep_alive_while_idle(true)
        .local_address(opts.bind);
    if opts.coordinator.starts_with("https://") {
        let mut tls = tonic::transport::ClientTlsConfig::new();
        tls = match &opts.tls_ca_pem {
            Some(ca) => tls.ca_certificate(tonic::transport::Certificate::from_pem(ca)),
            None => tls.with_native_roots(),
        };
        if let Some(d) = &opts.tls_domain {
            tls = tls.domain_name(d.clone());
        }
        ep = ep.tls_config(tls).map_err(|e| setup(format!("TLS: {e}")))?;
    } else if opts.tls_ca_pem.is_some() {
        return Err(setup("a TLS CA was given but the URL is not https://".into()));
    }
    let token = match &opts.token {
        Some(t) => Some(t.parse().map_err(|_| setup("the token is not valid ASCII metadata".into()))?),
        None => None,
    };
    Ok(CoordinatorClient::with_interceptor(ep.connect_lazy(), AddToken(token))
        .max_decoding_message_size(256 << 20)
        .max_encoding_message_size(256 << 20))
}

/// Errors after which retrying cannot help.
fn is_fatal(s: &tonic::Status) -> bool {
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
struct Backoff {
    n: u32,
    salt: u64,
}

impl Backoff {
    fn new(salt: &str) -> Self {
        Self {
            n: 0,
            salt: u64::from_le_bytes(blake3::hash(salt.as_bytes()).as_bytes()[..8].try_into().unwrap_or([0; 8])),
        }
    }
    fn next(&mut self) -> Duration {
        // Capped at 2 s (clowder_coordinator::MAX_WORKER_BACKOFF): a coordinator
        // that finishes right after a restart lingers that long for stragglers.
        let base = 100u64.saturating_mul(1 << self.n.min(6)).min(2_000);
        self.n += 1;
        let jitter =
            (self.salt.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(u64::from(self.n)) >> 40) % (base / 2 + 1);
        Duration::from_millis(base / 2 + jitter)
    }
    fn reset(&mut self) {
        self.n = 0;
    }
}

/// A run handed to a slot.
struct Started {
    samples: mpsc::UnboundedReceiver<TimelineSample>,
    result: oneshot::Receiver<RunResult>,
}

struct Inner {
    opts: WorkerOptions,
    host: String,
    worker_id: Mutex<String>,
    queue: Mutex<VecDeque<Job>>,
    queue_cv: Condvar,
    running: Mutex<BTreeMap<String, (String, Arc<Cancel>)>>,
    /// Finished runs whose result is not acknowledged yet (lease → run): their
    /// leases stay alive so that a slow delivery does not get the run re-leased.
    delivering: Mutex<BTreeMap<String, String>>,
    closing: AtomicBool,
    slot_done: Notify,
    /// Mean run duration (seconds, exponential average); 0 = unknown.
    mean_secs: Mutex<f64>,
    unacked: AtomicU64,
    delivered: Notify,
    stats: Mutex<WorkerStats>,
    journal: Mutex<Option<std::fs::File>>,
    /// Set when delivery should stop retrying (the worker is giving up).
    give_up: AtomicBool,
}

impl Inner {
    fn log(&self, m: impl AsRef<str>) {
        if self.opts.log {
            eprintln!("worker {}: {}", self.opts.name, m.as_ref());
        }
    }

    fn worker_id(&self) -> String {
        self.worker_id.lock().map(|w| w.clone()).unwrap_or_default()
    }

    fn held_leases(&self) -> Vec<(String, String)> {
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

    fn forget_delivering(&self, lease_id: &str) {
        if let Ok(mut d) = self.delivering.lock() {
            d.remove(lease_id);
        }
    }

    fn held(&self) -> usize {
        self.queue.lock().map(|q| q.len()).unwrap_or(0) + self.running.lock().map(|r| r.len()).unwrap_or(0)
    }

    fn target_held(&self) -> usize {
        let slots = self.opts.slots.max(1);
        let mean = self.mean_secs.lock().map(|m| *m).unwrap_or(0.0);
        let extra =
            if mean > 0.0 { ((self.opts.prefetch_seconds * slots as f64 / mean) as usize).min(1024) } else { 0 };
        slots + extra
    }

    fn note_ack(&self, r: &RunResult, ack: &ReportAck) {
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

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".into())
}

/// Runs a worker until the coordinator has no more runs, or `control` says
/// otherwise. `executor` executes each run on its slot's pinned thread.
pub async fn run_worker(
    opts: WorkerOptions,
    executor: Arc<dyn Executor>,
    mut control: watch::Receiver<Control>,
) -> Result<WorkerStats, WorkerError> {
    let mut client = client(&opts)?;
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
    let inner = Arc::new(Inner {
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
    });
    let opts = inner.opts.clone();
    let url = opts.coordinator.clone();
    let cache = Arc::new(cache::ProjectCache::new(opts.cache_dir.clone()));

    // Slots first: pinning and cgroups are set up before anything is leased.
    let all_cores = cores::allowed_cores();
    let cgroup = if opts.cgroups { limits::WorkerCgroup::create().map(Arc::new) } else { None };
    let (started_tx, mut started_rx) = mpsc::unbounded_channel::<Started>();
    let (ready_tx, mut ready_rx) = mpsc::unbounded_channel::<Option<usize>>();
    let mut slot_threads = Vec::new();
    for slot in 0..opts.slots.max(1) {
        let inner = Arc::clone(&inner);
        let executor = Arc::clone(&executor);
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
    for _ in 0..opts.slots.max(1) {
        if let Some(Some(c)) = ready_rx.recv().await {
            pinned_cores.push(c as u32);
        }
    }
    pinned_cores.sort_unstable();

    // Reporter: one task per started run.
    let reporter = {
        let inner = Arc::clone(&inner);
        let client = client.clone();
        tokio::spawn(async move {
            while let Some(s) = started_rx.recv().await {
                inner.unacked.fetch_add(1, Ordering::SeqCst);
                let inner = Arc::clone(&inner);
                let client = client.clone();
                tokio::spawn(async move {
                    report_run(&inner, client, s).await;
                    inner.unacked.fetch_sub(1, Ordering::SeqCst);
                    inner.delivered.notify_waiters();
                });
            }
        })
    };

    // Register (the coordinator may not be up yet: retry).
    let mut backoff = Backoff::new(&opts.name);
    let mut last_contact = Instant::now();
    let mut last_error: String;
    let register = |client: &mut Client| {
        let req = RegisterRequest {
            worker_name: opts.name.clone(),
            host: inner.host.clone(),
            slots: opts.slots as u32,
            engine_version: clowder_vm::ENGINE_VERSION.to_string(),
            cores: pinned_cores.clone(),
            clowder_version: CLOWDER_VERSION.to_string(),
            worker_id: inner.worker_id(),
        };
        let mut c = client.clone();
        async move { c.register(req).await.map(|r| r.into_inner()) }
    };
    let heartbeat_every: Duration;
    let outcome: Result<(), WorkerError> = 'main: {
        loop {
            if *control.borrow() != Control::Run {
                break 'main Ok(());
            }
            match register(&mut client).await {
                Ok(r) => {
                    inner.log(format!("registered as {} with {} ({})", r.worker_id, url, r.experiment));
                    *inner.worker_id.lock().unwrap_or_else(|e| e.into_inner()) = r.worker_id;
                    heartbeat_every = Duration::from_millis(r.heartbeat_interval_ms.clamp(20, 60_000));
                    break;
                }
                Err(s) if is_fatal(&s) => {
                    break 'main Err(WorkerError::Refused { url: url.clone(), msg: s.message().to_string() });
                }
                Err(s) => {
                    last_error = s.message().to_string();
                    if last_contact.elapsed() > opts.reconnect_timeout {
                        break 'main Err(WorkerError::Unreachable {
                            url: url.clone(),
                            secs: opts.reconnect_timeout.as_secs(),
                            msg: last_error,
                        });
                    }
                    let wait = backoff.next();
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = control.changed() => {}
                    }
                }
            }
        }
        backoff.reset();
        last_contact = Instant::now();

        // Heartbeats keep every held lease alive; revoked ones are dropped/stopped.
        let heartbeat = {
            let inner = Arc::clone(&inner);
            let mut client = client.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(heartbeat_every).await;
                    let held = inner.held_leases();
                    if held.is_empty() {
                        continue;
                    }
                    let (lease_ids, run_ids) = held.into_iter().unzip();
                    let req =
                        HeartbeatRequest { worker_id: inner.worker_id(), lease_ids, steps_done: Vec::new(), run_ids };
                    let Ok(resp) = client.heartbeat(req).await else { continue };
                    let revoked = resp.into_inner().revoked_lease_ids;
                    if revoked.is_empty() {
                        continue;
                    }
                    if let Ok(mut q) = inner.queue.lock() {
                        q.retain(|j| !revoked.contains(&j.spec.lease_id));
                    }
                    if let Ok(r) = inner.running.lock() {
                        for l in &revoked {
                            if let Some((run, c)) = r.get(l) {
                                inner.log(format!("lease {l} of run {run} revoked: stopping it"));
                                c.cancel();
                            }
                        }
                    }
                    inner.slot_done.notify_one();
                }
            })
        };

        let mut done = false;
        let mut need_register = false;
        let result = loop {
            if *control.borrow() != Control::Run {
                break Ok(());
            }
            if done && inner.held() == 0 {
                break Ok(());
            }
            let held = inner.held();
            let target = inner.target_held();
            if done || held >= target {
                tokio::select! {
                    _ = inner.slot_done.notified() => {}
                    _ = control.changed() => {}
                    _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                }
                continue;
            }
            if need_register && let Ok(r) = register(&mut client).await {
                inner.log(format!("re-registered as {}", r.worker_id));
                *inner.worker_id.lock().unwrap_or_else(|e| e.into_inner()) = r.worker_id;
                need_register = false;
            }
            let req = LeaseRequest { worker_id: inner.worker_id(), max_runs: (target - held) as u32 };
            match client.lease(req).await {
                Ok(resp) => {
                    backoff.reset();
                    last_contact = Instant::now();
                    let resp = resp.into_inner();
                    if resp.runs.is_empty() {
                        if resp.done {
                            inner.log("the coordinator has no more runs");
                            done = true;
                            continue;
                        }
                        tokio::select! {
                            _ = tokio::time::sleep(Duration::from_millis(resp.retry_after_ms.clamp(10, 5_000))) => {}
                            _ = control.changed() => {}
                        }
                        continue;
                    }
                    for spec in resp.runs {
                        match ensure_project(&mut client, &cache, &spec).await {
                            Ok(path) => {
                                let mut spec = spec;
                                if let Some(m) = opts.memory_limit {
                                    spec.memory_limit_bytes = m;
                                }
                                if let Some(c) = opts.cpu_limit {
                                    spec.cpu_limit_seconds = c;
                                }
                                if let Ok(mut q) = inner.queue.lock() {
                                    q.push_back(Job { spec, project_path: path });
                                }
                                inner.queue_cv.notify_one();
                            }
                            Err(r) => {
                                // Reported like a run result: the coordinator retries or gives up.
                                inner.log(format!("run {}: {}", spec.run_id, r.error));
                                let none = Measured { memory_limit_kind: "none", ..Default::default() };
                                let r = with_ids(r, &spec, &inner, None, "none", &none);
                                inner.unacked.fetch_add(1, Ordering::SeqCst);
                                let inner2 = Arc::clone(&inner);
                                let client = client.clone();
                                tokio::spawn(async move {
                                    deliver(&inner2, client, r).await;
                                    inner2.unacked.fetch_sub(1, Ordering::SeqCst);
                                    inner2.delivered.notify_waiters();
                                });
                            }
                        }
                    }
                }
                Err(s) if is_fatal(&s) => {
                    break Err(WorkerError::Refused { url: url.clone(), msg: s.message().to_string() });
                }
                Err(s) => {
                    if !need_register {
                        inner.log(format!("coordinator unreachable ({}); retrying", s.message()));
                    }
                    need_register = true;
                    last_error = s.message().to_string();
                    if last_contact.elapsed() > opts.reconnect_timeout {
                        break Err(WorkerError::Unreachable {
                            url: url.clone(),
                            secs: opts.reconnect_timeout.as_secs(),
                            msg: last_error.clone(),
                        });
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(backoff.next()) => {}
                        _ = control.changed() => {}
                    }
                }
            }
        };
        // Drain or finish. Keep heartbeating while runs finish.
        let ctl = *control.borrow();
        if ctl != Control::Run || result.is_err() {
            let queued: Vec<Job> = inner.queue.lock().map(|mut q| q.drain(..).collect()).unwrap_or_default();
            if !queued.is_empty() {
                let n = queued.len() as u64;
                let req = ReleaseRequest {
                    worker_id: inner.worker_id(),
                    lease_ids: queued.iter().map(|j| j.spec.lease_id.clone()).collect(),
                    run_ids: queued.iter().map(|j| j.spec.run_id.clone()).collect(),
                    reason: if result.is_err() { "worker stopping".into() } else { "worker draining".into() },
                };
                if client.release(req).await.is_ok() {
                    inner.stats.lock().unwrap_or_else(|e| e.into_inner()).released += n;
                }
            }
        }
        inner.closing.store(true, Ordering::SeqCst);
        inner.queue_cv.notify_all();
        // Finishing normally: wait for running runs; draining: at most the drain timeout.
        let mut deadline = (ctl != Control::Run).then(|| Instant::now() + opts.drain_timeout);
        loop {
            if inner.running.lock().map(|r| r.is_empty()).unwrap_or(true) {
                break;
            }
            if deadline.is_none() && *control.borrow() == Control::Drain {
                deadline = Some(Instant::now() + opts.drain_timeout);
            }
            if *control.borrow() == Control::Abort || deadline.is_some_and(|d| Instant::now() >= d) {
                let n = inner.running.lock().map(|r| {
                    r.values().for_each(|(_, c)| c.cancel());
                    r.len()
                });
                inner.log(format!("stopping {} running runs and handing them back", n.unwrap_or(0)));
                break;
            }
            tokio::select! {
                _ = inner.slot_done.notified() => {}
                _ = control.changed() => {}
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
        heartbeat.abort();
        result
    };
    // Slots finish their current run (or see it cancelled) and exit.
    inner.closing.store(true, Ordering::SeqCst);
    inner.queue_cv.notify_all();
    if outcome.is_err()
        && let Ok(r) = inner.running.lock()
    {
        r.values().for_each(|(_, c)| c.cancel());
    }
    let joined = tokio::task::spawn_blocking(move || {
        for t in slot_threads {
            let _ = t.join();
        }
    })
    .await;
    if let Err(e) = joined {
        inner.log(format!("joining slots: {e}"));
    }
    // Deliver every result (bounded: a vanished coordinator cannot hold us forever).
    let flush_deadline =
        Instant::now() + if outcome.is_err() { Duration::from_secs(5) } else { opts.reconnect_timeout };
    while inner.unacked.load(Ordering::SeqCst) > 0 && Instant::now() < flush_deadline {
        let _ = tokio::time::timeout(Duration::from_millis(100), inner.delivered.notified()).await;
    }
    inner.give_up.store(true, Ordering::SeqCst);
    reporter.abort();
    let mut stats = inner.stats.lock().map(|s| s.clone()).unwrap_or_default();
    stats.undelivered = inner.unacked.load(Ordering::SeqCst);
    // The slots are gone: remove the worker's cgroups.
    drop(cgroup);
    outcome.map(|_| stats)
}

/// What an executor measured about a run, for its provenance.
#[derive(Default)]
struct Measured {
    memory_peak_bytes: u64,
    memory_limit_kind: &'static str,
    cpu_ms: u64,
}

fn with_ids(
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
            r.insert(job.spec.lease_id.clone(), (job.spec.run_id.clone(), Arc::clone(&cancel)));
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

/// Streams a run's samples while it runs, then its result; re-sends the
/// result until it is acknowledged.
async fn report_run(inner: &Inner, client: Client, s: Started) {
    let Started { mut samples, mut result } = s;
    let (tx, rx) = mpsc::channel::<ReportMessage>(64);
    let call = {
        let mut client = client.clone();
        tokio::spawn(async move { client.report(tokio_stream::wrappers::ReceiverStream::new(rx)).await })
    };
    let mut samples_open = true;
    let final_result = loop {
        tokio::select! {
            s = samples.recv(), if samples_open => match s {
                // Progress only: dropped when the coordinator is slow or gone.
                Some(s) => { let _ = tx.try_send(ReportMessage { body: Some(report_message::Body::Sample(s)) }); }
                None => samples_open = false,
            },
            r = &mut result => break r,
        }
    };
    let Ok(final_result) = final_result else {
        // The slot went away without a result (worker shutting down).
        call.abort();
        return;
    };
    let sent = tx.send(ReportMessage { body: Some(report_message::Body::Result(final_result.clone())) }).await.is_ok();
    drop(tx);
    if sent && let Ok(Ok(ack)) = call.await {
        inner.note_ack(&final_result, ack.get_ref());
        inner.forget_delivering(&final_result.lease_id);
        return;
    }
    deliver(inner, client, final_result).await;
}

/// Sends a result until the coordinator acknowledges (or definitively refuses) it.
async fn deliver(inner: &Inner, client: Client, r: RunResult) {
    deliver_until_done(inner, client, &r).await;
    inner.forget_delivering(&r.lease_id);
}

async fn deliver_until_done(inner: &Inner, mut client: Client, r: &RunResult) {
    let mut backoff = Backoff::new(&r.run_id);
    loop {
        let msg = ReportMessage { body: Some(report_message::Body::Result(r.clone())) };
        match client.report(tokio_stream::iter(vec![msg])).await {
            Ok(ack) => {
                inner.note_ack(r, ack.get_ref());
                return;
            }
            Err(s) if is_fatal(&s) => {
                inner.log(format!("result of run {} refused: {}", r.run_id, s.message()));
                return;
            }
            Err(_) => {
                if inner.give_up.load(Ordering::SeqCst) {
                    return;
                }
                tokio::time::sleep(backoff.next()).await;
            }
        }
    }
}

/// The project of a run in the local cache (fetched once per machine).
async fn ensure_project(
    client: &mut Client,
    cache: &cache::ProjectCache,
    spec: &RunSpec,
) -> Result<PathBuf, RunResult> {
    let infra = |m: String| exec::failure(RunStatus::InfraFailure, m);
    let file_name =
        if spec.file_name.is_empty() { format!("{}.json", spec.project_name) } else { spec.file_name.clone() };
    if let Some(p) = cache.get(&spec.project_hash, &file_name) {
        return Ok(p);
    }
    let mut stream = client
        .fetch_project(FetchProjectRequest { project_hash: spec.project_hash.clone() })
        .await
        .map_err(|e| infra(format!("fetching project {}: {}", spec.project_name, e.message())))?
        .into_inner();
    let mut bytes = Vec::new();
    while let Some(chunk) =
        stream.message().await.map_err(|e| infra(format!("fetching project {}: {}", spec.project_name, e.message())))?
    {
        if chunk.total_size > max_project_bytes() || (bytes.len() + chunk.data.len()) as u64 > max_project_bytes() {
            return Err(infra(format!("project {} is larger than the limit", spec.project_name)));
        }
        bytes.extend_from_slice(&chunk.data);
    }
    cache.put(&spec.project_hash, &file_name, &bytes).map_err(infra)
}

/// Largest project accepted over the wire (the loader's own limit).
fn max_project_bytes() -> u64 {
    clowder_vm::LoadLimits::default().max_file_bytes
}
