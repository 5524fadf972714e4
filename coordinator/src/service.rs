//! The gRPC face of the coordinator: translates RPCs into run-table calls.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use clowder_proto::coordinator_server::Coordinator as CoordinatorRpc;
use clowder_proto::{
    CancelRequest, CancelResponse, FetchProjectRequest, HeartbeatRequest, HeartbeatResponse, LeaseRequest,
    LeaseResponse, ProjectChunk, RegisterRequest, RegisterResponse, ReportAck, ReportMessage, StatusRequest,
    StatusUpdate, report_message,
};
use tokio::sync::watch;
use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

use crate::table::{Progress, RunTable};

/// Chunk size for project transfer.
const CHUNK: usize = 1 << 20;

/// Shared state behind the service.
pub struct Shared {
    /// The run table.
    pub table: Mutex<RunTable>,
    /// Progress broadcast (updated after every change).
    pub progress: watch::Sender<Progress>,
    /// Experiment name.
    pub experiment: String,
    /// Lease timeout.
    pub lease_timeout: Duration,
    /// Registered workers.
    pub workers: AtomicU64,
}

impl Shared {
    /// Locks the table. A poisoned lock (a panic elsewhere) still yields the data:
    /// the table's invariants hold between calls.
    pub fn lock(&self) -> MutexGuard<'_, RunTable> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes the current progress.
    pub fn publish(&self) {
        let p = self.lock().progress(self.workers.load(Ordering::Relaxed));
        self.progress.send_replace(p);
    }
}

/// The tonic service.
#[derive(Clone)]
pub struct Service {
    /// Shared state.
    pub shared: Arc<Shared>,
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

fn to_update(exp: &str, p: &Progress) -> StatusUpdate {
    StatusUpdate {
        experiment: exp.to_string(),
        total: p.total,
        done: p.done,
        running: p.running,
        pending: p.pending,
        failed: p.failed,
        workers: p.workers,
        resumed: 0,
        finished: p.finished,
        eta_ms: 0,
        recent_failures: p.recent_failures.clone(),
        determinism_failures: 0,
    }
}

#[tonic::async_trait]
impl CoordinatorRpc for Service {
    async fn register(&self, req: Request<RegisterRequest>) -> Result<Response<RegisterResponse>, Status> {
        let r = req.into_inner();
        if r.engine_version != clowder_vm::ENGINE_VERSION {
            return Err(Status::failed_precondition(format!(
                "worker engine {} differs from coordinator engine {}",
                r.engine_version,
                clowder_vm::ENGINE_VERSION
            )));
        }
        let id = self.shared.lock().register(&r.worker_name);
        self.shared.workers.fetch_add(1, Ordering::Relaxed);
        self.shared.publish();
        let timeout = self.shared.lease_timeout.as_millis() as u64;
        Ok(Response::new(RegisterResponse {
            worker_id: id,
            lease_timeout_ms: timeout,
            heartbeat_interval_ms: (timeout / 4).max(50),
        }))
    }

    async fn lease(&self, req: Request<LeaseRequest>) -> Result<Response<LeaseResponse>, Status> {
        let r = req.into_inner();
        let max = r.max_runs.clamp(1, 1024) as usize;
        let (runs, done) = {
            let mut t = self.shared.lock();
            let runs = t.lease(&r.worker_id, max, Instant::now());
            let p = t.progress(0);
            (runs, p.finished || (t.is_cancelled()) || (p.pending == 0 && p.running == 0))
        };
        self.shared.publish();
        Ok(Response::new(LeaseResponse { done: runs.is_empty() && done, retry_after_ms: 200, runs }))
    }

    async fn heartbeat(&self, req: Request<HeartbeatRequest>) -> Result<Response<HeartbeatResponse>, Status> {
        let r = req.into_inner();
        let revoked = self.shared.lock().heartbeat(&r.lease_ids, Instant::now());
        Ok(Response::new(HeartbeatResponse { revoked_lease_ids: revoked, draining: false }))
    }

    async fn report(&self, req: Request<Streaming<ReportMessage>>) -> Result<Response<ReportAck>, Status> {
        let mut stream = req.into_inner();
        while let Some(msg) = stream.message().await? {
            match msg.body {
                Some(report_message::Body::Sample(_)) => {
                    // Live samples only show progress; the final result carries the full timeline.
                }
                Some(report_message::Body::Result(result)) => {
                    let outcome = self.shared.lock().complete(result);
                    self.shared.publish();
                    return Ok(Response::new(match outcome {
                        Ok(()) => ReportAck { accepted: true, message: String::new() },
                        Err(m) => ReportAck { accepted: false, message: m },
                    }));
                }
                None => {}
            }
        }
        Err(Status::invalid_argument("report stream ended without a result"))
    }

    type FetchProjectStream = BoxStream<ProjectChunk>;

    async fn fetch_project(
        &self,
        req: Request<FetchProjectRequest>,
    ) -> Result<Response<Self::FetchProjectStream>, Status> {
        let hash = req.into_inner().project_hash;
        let Some((path, file_name)) = self.shared.lock().project(&hash).cloned() else {
            return Err(Status::not_found(format!("no project with hash {hash}")));
        };
        let bytes =
            tokio::fs::read(&path).await.map_err(|e| Status::unavailable(format!("{}: {e}", path.display())))?;
        // A file changed on disk since the experiment was expanded would corrupt run identity.
        if blake3::hash(&bytes).to_hex().as_str() != hash {
            return Err(Status::data_loss(format!("{} changed since the study started", path.display())));
        }
        let total = bytes.len() as u64;
        let mut chunks = Vec::new();
        for (i, c) in bytes.chunks(CHUNK).enumerate() {
            chunks.push(Ok(ProjectChunk {
                data: c.to_vec(),
                total_size: if i == 0 { total } else { 0 },
                file_name: if i == 0 { file_name.clone() } else { String::new() },
            }));
        }
        if chunks.is_empty() {
            chunks.push(Ok(ProjectChunk { data: Vec::new(), total_size: 0, file_name }));
        }
        Ok(Response::new(Box::pin(tokio_stream::iter(chunks))))
    }

    type StatusStream = BoxStream<StatusUpdate>;

    async fn status(&self, req: Request<StatusRequest>) -> Result<Response<Self::StatusStream>, Status> {
        let follow = req.into_inner().follow;
        let exp = self.shared.experiment.clone();
        let mut rx = self.shared.progress.subscribe();
        let first = to_update(&exp, &rx.borrow_and_update());
        if !follow {
            return Ok(Response::new(Box::pin(tokio_stream::iter(vec![Ok(first)]))));
        }
        let (tx, out) = tokio::sync::mpsc::channel(16);
        tokio::spawn(async move {
            if tx.send(Ok(first)).await.is_err() {
                return;
            }
            while rx.changed().await.is_ok() {
                let u = to_update(&exp, &rx.borrow_and_update());
                let finished = u.finished;
                if tx.send(Ok(u)).await.is_err() || finished {
                    return;
                }
            }
        });
        Ok(Response::new(Box::pin(tokio_stream::wrappers::ReceiverStream::new(out))))
    }

    async fn cancel(&self, _req: Request<CancelRequest>) -> Result<Response<CancelResponse>, Status> {
        let pending = {
            let mut t = self.shared.lock();
            t.cancel();
            t.progress(0).pending
        };
        self.shared.publish();
        Ok(Response::new(CancelResponse { cancelled: pending }))
    }
}

/// Checks the shared token on every call (constant-time comparison).
#[derive(Clone)]
pub struct TokenCheck {
    /// Expected token; `None` disables the check.
    pub token: Option<Arc<str>>,
}

impl tonic::service::Interceptor for TokenCheck {
    fn call(&mut self, req: Request<()>) -> Result<Request<()>, Status> {
        let Some(want) = &self.token else { return Ok(req) };
        let got = req.metadata().get(clowder_proto::TOKEN_METADATA_KEY).and_then(|v| v.to_str().ok()).unwrap_or("");
        let eq = got.len() == want.len() && got.bytes().zip(want.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0;
        if eq { Ok(req) } else { Err(Status::unauthenticated("missing or wrong worker token")) }
    }
}
