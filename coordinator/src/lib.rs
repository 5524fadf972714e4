//! clowder's coordinator: expands an experiment into runs, keeps every run's
//! state in a durable store in the results folder, leases runs to workers over
//! gRPC, and exports the results.
//!
//! Restarting a coordinator on the same results folder resumes the study;
//! submitting the experiment again with more seeds or projects runs only what
//! is missing (run ids are content hashes, DESIGN §5).

#![warn(missing_docs)]

pub mod experiment;
pub mod export;
pub mod grading;
pub mod service;
pub mod store;
pub mod summary;
pub mod table;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clowder_proto::coordinator_server::CoordinatorServer;
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};

pub use experiment::{Experiment, Run, SpecError};
pub use store::SubmitStats;
pub use table::{Progress, RunTable};

/// File in the results folder that a running coordinator holds locked.
pub const LOCK_FILE: &str = "coordinator.lock";
/// File in the results folder with the address of the running coordinator.
pub const ADDRESS_FILE: &str = "coordinator.addr";
/// Longest pause between a worker's reconnection attempts (the worker's
/// backoff is capped at this; the coordinator's linger relies on it).
pub const MAX_WORKER_BACKOFF: Duration = Duration::from_secs(2);

/// TLS identity of the server (PEM).
#[derive(Debug, Clone)]
pub struct TlsIdentity {
    /// Certificate chain.
    pub cert_pem: Vec<u8>,
    /// Private key.
    pub key_pem: Vec<u8>,
}

/// Options of a coordinator.
#[derive(Debug, Clone)]
pub struct CoordinatorOptions {
    /// A lease expires when no heartbeat arrives for this long.
    pub lease_timeout: Duration,
    /// Shared worker token (`None`: no check, only sensible on loopback).
    pub token: Option<String>,
    /// Serve TLS with this identity.
    pub tls: Option<TlsIdentity>,
    /// Print events (workers, expiries, failures) to stderr.
    pub log: bool,
}

impl Default for CoordinatorOptions {
    fn default() -> Self {
        Self { lease_timeout: Duration::from_secs(30), token: None, tls: None, log: false }
    }
}

/// A coordinator for one experiment.
pub struct Coordinator {
    shared: Arc<service::Shared>,
    opts: CoordinatorOptions,
    experiment: Experiment,
    submitted: SubmitStats,
    /// Resumed a study: workers of the previous process may be backing off
    /// and reconnect only after a while.
    resumed_unfinished: bool,
    _lock: std::fs::File,
}

/// Errors starting or running a coordinator.
#[derive(Debug, thiserror::Error)]
pub enum CoordinatorError {
    /// The experiment file is wrong.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The dataset cannot be read.
    #[error(transparent)]
    Dataset(#[from] clowder_datasets::DatasetError),
    /// The store cannot be opened or written.
    #[error(transparent)]
    Store(#[from] store::StoreError),
    /// The exports cannot be written.
    #[error(transparent)]
    Export(#[from] export::ExportError),
    /// Other I/O.
    #[error("{0}")]
    Io(String),
}

/// Takes the results folder's lock: two coordinators on one store would hand
/// out the same runs twice.
fn lock_results(dir: &Path) -> Result<std::fs::File, CoordinatorError> {
    std::fs::create_dir_all(dir).map_err(|e| CoordinatorError::Io(format!("{}: {e}", dir.display())))?;
    let path = dir.join(LOCK_FILE);
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .read(true)
        .open(&path)
        .map_err(|e| CoordinatorError::Io(format!("{}: {e}", path.display())))?;
    // flock(2) directly: `File::try_lock` is newer than the workspace's MSRV.
    // SAFETY: plain syscall on a descriptor we own for the duration of the call.
    let rc = unsafe { libc::flock(std::os::unix::io::AsRawFd::as_raw_fd(&f), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            let who = std::fs::read_to_string(&path).unwrap_or_default();
            return Err(CoordinatorError::Io(format!(
                "{} is in use by another coordinator ({}); stop it first",
                dir.display(),
                who.trim()
            )));
        }
        return Err(CoordinatorError::Io(format!("locking {}: {e}", path.display())));
    }
    let _ = f.set_len(0);
    let _ = std::fs::write(&path, format!("pid {}\n", std::process::id()));
    Ok(f)
}

impl Coordinator {
    /// Expands `experiment` over its dataset, opens (or creates) the store in
    /// the results folder, submits the runs and loads their state.
    pub fn new(experiment: Experiment, opts: CoordinatorOptions) -> Result<Self, CoordinatorError> {
        let projects = clowder_datasets::discover(&experiment.dataset_path)?;
        if projects.is_empty() {
            return Err(CoordinatorError::Io(format!(
                "dataset {} contains no project files (.sb3 or .json)",
                experiment.dataset_path.display()
            )));
        }
        grading::check_projects(&experiment, &projects).map_err(CoordinatorError::Io)?;
        let runs = experiment::expand(&experiment, &projects);
        let dataset = experiment::dataset_name(&experiment.dataset_path);
        let lock = lock_results(&experiment.results_dir)?;
        // An external engine's tool is installed before anything is handed out (the lock
        // keeps two coordinators from running the set-up at once).
        if let Some(done) = experiment::command::run_setup(&experiment).map_err(CoordinatorError::Io)? {
            eprintln!("clowder: {done}");
        }
        let mut st = store::Store::open(&experiment.results_dir)?;
        let rows: Vec<store::ProjectRow> = projects
            .iter()
            .map(|p| store::ProjectRow {
                hash: p.content_hash.clone(),
                name: p.name.clone(),
                dataset: dataset.clone(),
                file_name: p.path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default(),
                path: std::fs::canonicalize(&p.path).unwrap_or_else(|_| p.path.clone()),
                size: p.size,
            })
            .collect();
        let submitted = st.submit(&experiment.spec.name, &experiment.source, &runs, &rows)?;
        let mut loaded = st.load_generation(submitted.generation)?;
        // Runs a lower CPU time limit stopped get another chance under a higher one (that
        // failure belongs to the machine and the limit, not to the run). Stores written before
        // the limit became an infrastructure guard recorded such runs as `error`.
        let limit = experiment.spec.limits.cpu_seconds;
        let reopen: Vec<String> = loaded
            .iter()
            .filter(|l| {
                l.finished.as_ref().is_some_and(|f| {
                    (f.status == "infra_failure" || f.status == "error")
                        && clowder_proto::cpu_limit_of_reason(&f.error).is_some_and(|n| limit == 0 || n < limit)
                })
            })
            .map(|l| l.run.run_id.clone())
            .collect();
        if !reopen.is_empty() {
            st.reopen_failed(&reopen)?;
            let again: std::collections::BTreeSet<&str> = reopen.iter().map(String::as_str).collect();
            for l in &mut loaded {
                if again.contains(l.run.run_id.as_str()) {
                    l.finished = None;
                }
            }
            eprintln!(
                "clowder: {} runs stopped by a lower CPU time limit run again (limits.cpu_seconds = {limit})",
                reopen.len()
            );
        }
        let determinism_failures = st.determinism_failure_count()?;
        // Any earlier coordinator process on this folder may have left workers
        // backing off (even if the study is complete now).
        let resumed_unfinished = submitted.generation > 1;
        let mut sources: BTreeMap<String, table::ProjectSource> = rows
            .into_iter()
            .map(|r| (r.hash, table::ProjectSource { path: r.path, file_name: r.file_name, size: r.size }))
            .collect();
        // Suites of a test experiment are served like projects (by content hash).
        sources.extend(grading::sources(&experiment));
        let now = Instant::now();
        let table = table::RunTable::new(
            table::TableConfig {
                experiment: experiment.spec.name.clone(),
                lease_timeout: opts.lease_timeout,
                generation: submitted.generation,
                memory_limit_bytes: experiment.spec.limits.memory_mb.saturating_mul(1 << 20),
                cpu_limit_seconds: experiment.spec.limits.cpu_seconds,
                determinism_failures,
                mutation: experiment.mutation().run_spec(),
                work_cap: experiment.work_cap_spec(),
            },
            loaded.into_iter().map(|l| (l.run, l.finished, l.lease_hint)).collect(),
            sources,
            now,
        );
        let table = Arc::new(Mutex::new(table));
        let changed = Arc::new(Notify::new());
        let hook: store::CommitHook = {
            let table = Arc::clone(&table);
            let changed = Arc::clone(&changed);
            Box::new(move |outcome| {
                let mut t = table.lock().unwrap_or_else(|e| e.into_inner());
                let now = Instant::now();
                match outcome {
                    Ok(done) => done.iter().for_each(|w| t.finish_commit(w, now)),
                    Err((failed, _)) => failed.iter().for_each(|w| t.abort_commit(w)),
                }
                drop(t);
                changed.notify_one();
            })
        };
        let (writer, _thread) = store::StoreWriter::spawn(st, hook)?;
        let progress = table.lock().unwrap_or_else(|e| e.into_inner()).progress(now);
        let (tx, _) = watch::channel(progress);
        let shared = Arc::new(service::Shared {
            table,
            store: writer,
            progress: tx,
            changed,
            experiment: experiment.spec.name.clone(),
            lease_timeout: opts.lease_timeout,
            log: opts.log,
        });
        Ok(Self { shared, opts, experiment, submitted, resumed_unfinished, _lock: lock })
    }

    /// The experiment.
    pub fn experiment(&self) -> &Experiment {
        &self.experiment
    }

    /// What the submission added to the store.
    pub fn submitted(&self) -> &SubmitStats {
        &self.submitted
    }

    /// Watches progress (snapshots are published at most every 50 ms while
    /// `serve` runs).
    pub fn progress(&self) -> watch::Receiver<Progress> {
        self.shared.progress.subscribe()
    }

    /// A progress snapshot now.
    pub fn progress_now(&self) -> Progress {
        self.shared.lock().progress(Instant::now())
    }

    /// Stops handing out runs; leased runs may still report (or, with
    /// `revoke`, are taken back).
    pub fn cancel(&self, revoke: bool) {
        self.shared.lock().cancel(revoke);
        self.shared.publish();
    }

    /// Binds `addr` (port 0 = ephemeral) and serves until `shutdown` resolves.
    /// Reports the bound address through `on_bound` before serving and writes
    /// it to `coordinator.addr` in the results folder.
    pub async fn serve(
        &self,
        addr: SocketAddr,
        on_bound: impl FnOnce(SocketAddr),
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), CoordinatorError> {
        let listener = TcpListener::bind(addr).await.map_err(|e| CoordinatorError::Io(format!("bind {addr}: {e}")))?;
        let local = listener.local_addr().map_err(|e| CoordinatorError::Io(e.to_string()))?;
        let scheme = if self.opts.tls.is_some() { "https" } else { "http" };
        let address_file = self.experiment.results_dir.join(ADDRESS_FILE);
        let address = format!("{scheme}://{local}\n");
        let _ = std::fs::write(&address_file, &address);
        on_bound(local);
        let background = self.spawn_background();
        let svc = service::Service { shared: Arc::clone(&self.shared) };
        let check = service::TokenCheck { token: self.opts.token.as_deref().map(Arc::from) };
        let mut builder = tonic::transport::Server::builder()
            .tcp_nodelay(true)
            .http2_keepalive_interval(Some(Duration::from_secs(20)))
            .http2_keepalive_timeout(Some(Duration::from_secs(20)));
        if let Some(tls) = &self.opts.tls {
            let identity = tonic::transport::Identity::from_pem(&tls.cert_pem, &tls.key_pem);
            builder = builder
                .tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))
                .map_err(|e| CoordinatorError::Io(format!("TLS configuration: {e}")))?;
        }
        let served = builder
            .add_service(tonic::service::interceptor::InterceptedService::new(
                CoordinatorServer::new(svc).max_decoding_message_size(256 << 20).max_encoding_message_size(256 << 20),
                check,
            ))
            .serve_with_incoming_shutdown(tokio_stream::wrappers::TcpListenerStream::new(listener), shutdown)
            .await
            .map_err(|e| CoordinatorError::Io(format!("server: {e}")));
        for b in background {
            b.abort();
        }
        let _ = self.shared.store.flush().await;
        self.shared.publish();
        // Nobody listens there any more (unless another coordinator took over).
        if std::fs::read_to_string(&address_file).is_ok_and(|a| a == address) {
            let _ = std::fs::remove_file(&address_file);
        }
        served
    }

    /// The lease reaper and the progress publisher.
    fn spawn_background(&self) -> Vec<tokio::task::JoinHandle<()>> {
        let reaper = {
            let shared = Arc::clone(&self.shared);
            let every = (self.opts.lease_timeout / 4).clamp(Duration::from_millis(20), Duration::from_secs(1));
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(every).await;
                    shared.reap().await;
                }
            })
        };
        let publisher = {
            let shared = Arc::clone(&self.shared);
            tokio::spawn(async move {
                loop {
                    // Republish on change, and every second for rates and worker liveness.
                    let _ = tokio::time::timeout(Duration::from_secs(1), shared.changed.notified()).await;
                    shared.publish();
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            })
        };
        vec![reaper, publisher]
    }

    /// Waits until every result handed to the store is committed.
    pub async fn flush(&self) -> Result<(), CoordinatorError> {
        self.shared.store.flush().await.map_err(CoordinatorError::Io)
    }

    /// Writes the exports (docs/exports.md) into the results folder; returns
    /// the files written. Call [`Coordinator::flush`] first.
    pub fn export(&self) -> Result<Vec<PathBuf>, CoordinatorError> {
        export::export_results(&self.experiment.results_dir, &export::ExportOptions::default())
            .map_err(CoordinatorError::from)
    }

    /// The per-algorithm summary table.
    pub fn summary(&self) -> String {
        summary::format(&self.shared.lock())
    }

    /// Waits (at most `max`) until every recently active worker has been told
    /// that the study is done, so that none is left retrying a gone coordinator.
    /// After a restart, also waits out one full worker backoff period, so that
    /// workers still reconnecting hear it too.
    pub async fn linger(&self, max: Duration) {
        let t0 = Instant::now();
        let min =
            if self.resumed_unfinished { MAX_WORKER_BACKOFF + Duration::from_millis(500) } else { Duration::ZERO };
        while t0.elapsed() < max && (t0.elapsed() < min || !self.shared.lock().all_workers_told(Instant::now())) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Transactions and writes committed by the store so far.
    pub fn store_stats(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        let s = self.shared.store.stats();
        (s.commits.load(Relaxed), s.writes.load(Relaxed))
    }

    /// Runs on a closure over the table.
    pub fn with_table<R>(&self, f: impl FnOnce(&RunTable) -> R) -> R {
        f(&self.shared.lock())
    }
}
