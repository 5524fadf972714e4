//! clowder's coordinator: expands an experiment into runs, leases them to
//! workers over gRPC, and collects their results.

#![warn(missing_docs)]

pub mod experiment;
pub mod export;
pub mod service;
pub mod summary;
pub mod table;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clowder_proto::coordinator_server::CoordinatorServer;
use tokio::net::TcpListener;
use tokio::sync::watch;

pub use experiment::{Experiment, Run, SpecError};
pub use table::{Progress, RunTable};

/// Options of a coordinator.
#[derive(Debug, Clone)]
pub struct CoordinatorOptions {
    /// A lease expires when no heartbeat arrives for this long.
    pub lease_timeout: Duration,
    /// Shared worker token (`None`: no check, only sensible on loopback).
    pub token: Option<String>,
}

impl Default for CoordinatorOptions {
    fn default() -> Self {
        Self { lease_timeout: Duration::from_secs(30), token: None }
    }
}

/// A coordinator for one experiment.
pub struct Coordinator {
    shared: Arc<service::Shared>,
    opts: CoordinatorOptions,
    experiment: Experiment,
}

/// Errors starting a coordinator.
#[derive(Debug, thiserror::Error)]
pub enum CoordinatorError {
    /// The experiment file is wrong.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The dataset cannot be read.
    #[error(transparent)]
    Dataset(#[from] clowder_datasets::DatasetError),
    /// Other I/O.
    #[error("{0}")]
    Io(String),
}

impl Coordinator {
    /// Expands `experiment` over its dataset.
    pub fn new(experiment: Experiment, opts: CoordinatorOptions) -> Result<Self, CoordinatorError> {
        let projects = clowder_datasets::discover(&experiment.dataset_path)?;
        if projects.is_empty() {
            return Err(CoordinatorError::Io(format!(
                "dataset {} contains no project files (.sb3 or .json)",
                experiment.dataset_path.display()
            )));
        }
        let runs = experiment::expand(&experiment, &projects);
        let files: BTreeMap<String, _> = projects
            .iter()
            .map(|p| {
                let file_name = p.path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
                (p.content_hash.clone(), (p.path.clone(), file_name))
            })
            .collect();
        let table = RunTable::new(runs, files, opts.lease_timeout);
        let progress = table.progress(0);
        let (tx, _) = watch::channel(progress);
        let shared = Arc::new(service::Shared {
            table: Mutex::new(table),
            progress: tx,
            experiment: experiment.spec.name.clone(),
            lease_timeout: opts.lease_timeout,
            workers: AtomicU64::new(0),
        });
        Ok(Self { shared, opts, experiment })
    }

    /// The experiment.
    pub fn experiment(&self) -> &Experiment {
        &self.experiment
    }

    /// Watches progress.
    pub fn progress(&self) -> watch::Receiver<Progress> {
        self.shared.progress.subscribe()
    }

    /// Stops handing out runs; leased runs may still report.
    pub fn cancel(&self) {
        self.shared.lock().cancel();
        self.shared.publish();
    }

    /// Binds `addr` (port 0 = ephemeral) and serves until `shutdown` resolves.
    /// Returns the bound address through `on_bound` before serving.
    pub async fn serve(
        &self,
        addr: SocketAddr,
        on_bound: impl FnOnce(SocketAddr),
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), CoordinatorError> {
        let listener = TcpListener::bind(addr).await.map_err(|e| CoordinatorError::Io(format!("bind {addr}: {e}")))?;
        let local = listener.local_addr().map_err(|e| CoordinatorError::Io(e.to_string()))?;
        on_bound(local);
        let svc = service::Service { shared: Arc::clone(&self.shared) };
        let check = service::TokenCheck { token: self.opts.token.as_deref().map(Arc::from) };
        tonic::transport::Server::builder()
            .add_service(tonic::service::interceptor::InterceptedService::new(
                CoordinatorServer::new(svc).max_decoding_message_size(256 << 20),
                check,
            ))
            .serve_with_incoming_shutdown(tokio_stream::wrappers::TcpListenerStream::new(listener), shutdown)
            .await
            .map_err(|e| CoordinatorError::Io(format!("server: {e}")))
    }

    /// Writes `runs.csv` into the results folder; returns its path.
    pub fn write_results(&self) -> Result<std::path::PathBuf, CoordinatorError> {
        let dir = &self.experiment.results_dir;
        std::fs::create_dir_all(dir).map_err(|e| CoordinatorError::Io(format!("{}: {e}", dir.display())))?;
        let path = dir.join("runs.csv");
        let t = self.shared.lock();
        export::write_runs_csv(&path, t.entries()).map_err(CoordinatorError::Io)?;
        Ok(path)
    }

    /// Runs on a closure over the table (for summaries).
    pub fn with_table<R>(&self, f: impl FnOnce(&RunTable) -> R) -> R {
        f(&self.shared.lock())
    }
}
