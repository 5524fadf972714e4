//! The gRPC face of the coordinator: translates RPCs into run-table calls and
//! makes results durable before acknowledging them.

use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use clowder_proto::coordinator_server::Coordinator as CoordinatorRpc;
use clowder_proto::{
    CancelRequest, CancelResponse, FetchProjectRequest, HeartbeatRequest, HeartbeatResponse, LeaseRequest,
    LeaseResponse, ProjectChunk, RegisterRequest, RegisterResponse, ReleaseRequest, ReleaseResponse, ReportAck,
    ReportMessage, RunResult, StatusRequest, StatusUpdate, WorkerInfo, report_message,
};
use tokio::sync::{Notify, watch};
use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

use crate::store::StoreWriter;
use crate::table::{Progress, ReportDecision, RunTable};

/// Chunk size for project transfer.
const CHUNK: usize = 1 << 20;
/// Most runs handed out by one lease call.
pub const MAX_LEASE_BATCH: u32 = 1024;

/// Shared state behind the service.
pub struct Shared {
    /// The run table.
    pub table: Arc<Mutex<RunTable>>,
    /// The durable store's writer.
    pub store: StoreWriter,
    /// Progress broadcast.
    pub progress: watch::Sender<Progress>,
    /// Signals a change of the table (the publisher sends a new snapshot).
    pub changed: Arc<Notify>,
    /// Experiment name.
    pub experiment: String,
    /// Lease timeout.
    pub lease_timeout: Duration,
    /// Print events (registrations, expiries, failures) to stderr.
    pub log: bool,
}

impl Shared {
    /// Locks the table. A poisoned lock (a panic elsewhere) still yields the data:
    /// the table's invariants hold between calls.
    pub fn lock(&self) -> MutexGuard<'_, RunTable> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes that something changed (progress will be republished).
    pub fn touch(&self) {
        self.changed.notify_one();
    }

    /// Publishes a progress snapshot now.
    pub fn publish(&self) {
        let p = self.lock().progress(Instant::now());
        self.progress.send_replace(p);
    }

    fn log(&self, msg: impl AsRef<str>) {
        if self.log {
            eprintln!("coordinator: {}", msg.as_ref());
        }
    }

    /// Handles one reported result: stores it (or the determinism failure it
    /// reveals) and only then acknowledges it.
    pub async fn handle_result(&self, result: RunResult, peer: &str) -> Result<ReportAck, Status> {
        let run_id = result.run_id.clone();
        let decision = self.lock().begin_report(result, peer, Instant::now());
        let ack = |message: String| ReportAck { accepted: true, message, duplicate: false, determinism_failure: false };
        match decision {
            ReportDecision::Reject(m) => {
                self.log(format!("rejected a result from {peer}: {m}"));
                Ok(ReportAck { accepted: false, message: m, ..Default::default() })
            }
            ReportDecision::Retry(m) => Err(Status::unavailable(m)),
            ReportDecision::Handled => {
                self.touch();
                Ok(ack(String::new()))
            }
            ReportDecision::Duplicate => Ok(ReportAck { duplicate: true, ..ack("duplicate; digests equal".into()) }),
            ReportDecision::Mismatch(m) => {
                let detail = format!(
                    "stored {} {}, reported {} {}",
                    m.stored_status, m.stored_digest, m.reported_status, m.reported_digest
                );
                let store = self.store.clone();
                // Spawned: the write completes even if the worker hangs up.
                tokio::spawn(async move { store.commit_mismatch(m).await })
                    .await
                    .map_err(|e| Status::internal(e.to_string()))?
                    .map_err(|e| Status::unavailable(format!("storing a determinism failure of run {run_id}: {e}")))?;
                self.lock().note_mismatch(&run_id, &detail);
                self.log(format!("DETERMINISM FAILURE run {run_id}: {detail}"));
                self.touch();
                Ok(ReportAck {
                    duplicate: true,
                    determinism_failure: true,
                    ..ack(format!("determinism failure: {detail}"))
                })
            }
            ReportDecision::Commit(w) => {
                let store = self.store.clone();
                // Spawned: once queued, the commit and the table update (done by the
                // store's hook) happen even if this RPC is dropped.
                tokio::spawn(async move { store.commit_final(w).await })
                    .await
                    .map_err(|e| Status::internal(e.to_string()))?
                    .map_err(|e| Status::unavailable(format!("storing the result of run {run_id}: {e}")))?;
                Ok(ack(String::new()))
            }
        }
    }

    /// Returns expired leases to the queue (called periodically).
    pub async fn reap(&self) {
        let (log, give_ups) = self.lock().expire(Instant::now());
        for l in &log {
            self.log(l);
        }
        if !log.is_empty() {
            self.touch();
        }
        for g in give_ups {
            self.log(format!("run {}: {}", g.run_id, g.fin.error));
            let store = self.store.clone();
            let run_id = g.run_id.clone();
            if let Err(e) =
                tokio::spawn(async move { store.commit_final(g).await }).await.unwrap_or_else(|e| Err(e.to_string()))
            {
                self.log(format!("storing the give-up of run {run_id}: {e}"));
            }
        }
    }
}

/// The tonic service.
#[derive(Clone)]
pub struct Service {
    /// Shared state.
    pub shared: Arc<Shared>,
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// Converts a progress snapshot to its wire form.
pub fn to_update(p: &Progress, now: Instant) -> StatusUpdate {
    StatusUpdate {
        experiment: p.experiment.clone(),
        total: p.total,
        done: p.done,
        running: p.running,
        pending: p.pending,
        failed: p.failed,
        workers: p.workers.len() as u64,
        resumed: p.resumed,
        finished: p.finished,
        eta_ms: p.eta.map(|d| d.as_millis() as u64).unwrap_or(0),
        recent_failures: p.recent_failures.clone(),
        determinism_failures: p.determinism_failures,
        done_this_session: p.done_this_session,
        rate_per_second: p.rate_per_second,
        worker_list: p
            .workers
            .iter()
            .map(|(id, w)| WorkerInfo {
                worker_id: id.clone(),
                host: w.host.clone(),
                peer: w.peer.clone(),
                slots: w.slots,
                running: w.running,
                done: w.done,
                last_seen_ms: now.saturating_duration_since(w.last_seen).as_millis() as u64,
            })
            .collect(),
        infra_failed: p.infra_failed,
        cancelled: p.cancelled,
        limited: p.limited,
    }
}

fn peer_of<T>(req: &Request<T>) -> String {
    req.remote_addr().map(|a| a.to_string()).unwrap_or_default()
}

fn pairs(lease_ids: Vec<String>, run_ids: Vec<String>) -> Vec<(String, String)> {
    let mut run_ids = run_ids.into_iter();
    lease_ids.into_iter().map(|l| (l, run_ids.next().unwrap_or_default())).collect()
}

#[tonic::async_trait]
impl CoordinatorRpc for Service {
    async fn register(&self, req: Request<RegisterRequest>) -> Result<Response<RegisterResponse>, Status> {
        let peer = peer_of(&req);
        let r = req.into_inner();
        if r.engine_version != clowder_vm::ENGINE_VERSION {
            return Err(Status::failed_precondition(format!(
                "worker {} on {} runs engine {}, the coordinator runs {}: results would not be comparable",
                r.worker_name,
                r.host,
                r.engine_version,
                clowder_vm::ENGINE_VERSION
            )));
        }
        let id = self.shared.lock().register(&r.worker_name, &r.worker_id, &r.host, &peer, r.slots, Instant::now());
        self.shared.log(format!(
            "worker {id} registered from {peer} (host {}, {} slots, cores {:?})",
            r.host, r.slots, r.cores
        ));
        self.shared.touch();
        let timeout = self.shared.lease_timeout.as_millis() as u64;
        Ok(Response::new(RegisterResponse {
            worker_id: id,
            lease_timeout_ms: timeout,
            heartbeat_interval_ms: (timeout / 4).max(50),
            experiment: self.shared.experiment.clone(),
        }))
    }

    async fn lease(&self, req: Request<LeaseRequest>) -> Result<Response<LeaseResponse>, Status> {
        let r = req.into_inner();
        let max = r.max_runs.clamp(1, MAX_LEASE_BATCH) as usize;
        let (runs, done) = {
            let mut t = self.shared.lock();
            let runs = t.lease(&r.worker_id, max, Instant::now());
            let done = runs.is_empty() && t.is_done();
            if done {
                t.told_done(&r.worker_id);
            }
            (runs, done)
        };
        for s in &runs {
            self.shared.store.note_lease(s.run_id.clone(), s.lease_id.clone(), r.worker_id.clone());
        }
        if !runs.is_empty() {
            self.shared.touch();
        }
        // Idle workers poll again soon enough to pick up retried runs.
        let retry_after_ms = (self.shared.lease_timeout.as_millis() as u64 / 8).clamp(20, 1_000);
        Ok(Response::new(LeaseResponse { done, retry_after_ms, runs }))
    }

    async fn heartbeat(&self, req: Request<HeartbeatRequest>) -> Result<Response<HeartbeatResponse>, Status> {
        let r = req.into_inner();
        let leases = pairs(r.lease_ids, r.run_ids);
        let (revoked, draining) = {
            let mut t = self.shared.lock();
            (t.heartbeat(&r.worker_id, &leases, Instant::now()), t.is_cancelled())
        };
        if !revoked.is_empty() {
            self.shared.touch();
        }
        Ok(Response::new(HeartbeatResponse { revoked_lease_ids: revoked, draining }))
    }

    async fn report(&self, req: Request<Streaming<ReportMessage>>) -> Result<Response<ReportAck>, Status> {
        let peer = peer_of(&req);
        let mut stream = req.into_inner();
        while let Some(msg) = stream.message().await? {
            match msg.body {
                Some(report_message::Body::Sample(_)) => {
                    // Live samples only show that the run progresses (they keep the
                    // stream busy); the final result carries the full timeline.
                }
                Some(report_message::Body::Result(result)) => {
                    return self.shared.handle_result(result, &peer).await.map(Response::new);
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
        let Some(src) = self.shared.lock().project(&hash).cloned() else {
            return Err(Status::not_found(format!("no project with hash {hash}")));
        };
        let bytes = tokio::fs::read(&src.path)
            .await
            .map_err(|e| Status::unavailable(format!("reading project {}: {e}", src.path.display())))?;
        // A file changed on disk since the experiment was expanded would corrupt run identity.
        if blake3::hash(&bytes).to_hex().as_str() != hash {
            return Err(Status::data_loss(format!("{} changed since the study started", src.path.display())));
        }
        let total = bytes.len() as u64;
        let mut chunks = Vec::new();
        for (i, c) in bytes.chunks(CHUNK).enumerate() {
            chunks.push(Ok(ProjectChunk {
                data: c.to_vec(),
                total_size: if i == 0 { total } else { 0 },
                file_name: if i == 0 { src.file_name.clone() } else { String::new() },
            }));
        }
        if chunks.is_empty() {
            chunks.push(Ok(ProjectChunk { data: Vec::new(), total_size: 0, file_name: src.file_name }));
        }
        Ok(Response::new(Box::pin(tokio_stream::iter(chunks))))
    }

    type StatusStream = BoxStream<StatusUpdate>;

    async fn status(&self, req: Request<StatusRequest>) -> Result<Response<Self::StatusStream>, Status> {
        let follow = req.into_inner().follow;
        self.shared.publish();
        let mut rx = self.shared.progress.subscribe();
        let first = to_update(&rx.borrow_and_update(), Instant::now());
        if !follow || first.finished {
            return Ok(Response::new(Box::pin(tokio_stream::iter(vec![Ok(first)]))));
        }
        let (tx, out) = tokio::sync::mpsc::channel(16);
        tokio::spawn(async move {
            if tx.send(Ok(first)).await.is_err() {
                return;
            }
            while rx.changed().await.is_ok() {
                let u = to_update(&rx.borrow_and_update(), Instant::now());
                let finished = u.finished;
                if tx.send(Ok(u)).await.is_err() || finished {
                    return;
                }
            }
        });
        Ok(Response::new(Box::pin(tokio_stream::wrappers::ReceiverStream::new(out))))
    }

    async fn cancel(&self, req: Request<CancelRequest>) -> Result<Response<CancelResponse>, Status> {
        let revoke = req.into_inner().revoke_leased;
        let n = self.shared.lock().cancel(revoke);
        self.shared.log(format!("cancelled: no new runs are handed out ({n} runs affected)"));
        self.shared.touch();
        Ok(Response::new(CancelResponse { cancelled: n }))
    }

    async fn release(&self, req: Request<ReleaseRequest>) -> Result<Response<ReleaseResponse>, Status> {
        let r = req.into_inner();
        let leases = pairs(r.lease_ids, r.run_ids);
        let n = self.shared.lock().release(&r.worker_id, &leases, Instant::now());
        if n > 0 {
            self.shared.log(format!("worker {} handed back {n} runs ({})", r.worker_id, r.reason));
            self.shared.touch();
        }
        Ok(Response::new(ReleaseResponse { released: n }))
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
        let Some(got) = req.metadata().get(clowder_proto::TOKEN_METADATA_KEY) else {
            return Err(Status::unauthenticated("missing worker token (x-clowder-token)"));
        };
        let got = got.as_bytes();
        let eq = got.len() == want.len() && got.iter().zip(want.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0;
        if eq { Ok(req) } else { Err(Status::unauthenticated("wrong worker token")) }
    }
}
