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
pub mod command;
pub mod cores;
pub mod exec;
pub mod grading;
mod inner;
pub mod limits;
mod report;
mod session;
mod slots;

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use clowder_proto::coordinator_client::CoordinatorClient;
use tokio::sync::watch;
use tonic::Request;
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

use inner::{Backoff, Inner, hostname};
use session::Session;

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

/// Runs a worker until the coordinator has no more runs, or `control` says
/// otherwise. `executor` executes each run on its slot's pinned thread.
pub async fn run_worker(
    opts: WorkerOptions,
    executor: Arc<dyn Executor>,
    mut control: watch::Receiver<Control>,
) -> Result<WorkerStats, WorkerError> {
    let client = client(&opts)?;
    let inner = Arc::new(Inner::new(opts)?);
    let cache = Arc::new(cache::ProjectCache::new(inner.opts.cache_dir.clone()));
    // Slots first: pinning and cgroups are set up before anything is leased.
    let cgroup = if inner.opts.cgroups { limits::WorkerCgroup::create().map(Arc::new) } else { None };
    let (slot_threads, started_rx, pinned_cores) = slots::start(&inner, &executor, cgroup.clone()).await?;
    let reporter = report::spawn_reporter(Arc::clone(&inner), client.clone(), started_rx);
    let backoff = Backoff::new(&inner.opts.name);
    let session = Session {
        inner: &inner,
        client,
        control: &mut control,
        cache,
        pinned_cores,
        backoff,
        last_contact: Instant::now(),
    };
    let outcome = session.run().await;
    // Slots finish their current run (or see it cancelled) and exit.
    inner.closing.store(true, Ordering::SeqCst);
    inner.queue_cv.notify_all();
    if outcome.is_err()
        && let Ok(r) = inner.running.lock()
    {
        r.values().for_each(|x| x.cancel.cancel());
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
        Instant::now() + if outcome.is_err() { Duration::from_secs(5) } else { inner.opts.reconnect_timeout };
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
