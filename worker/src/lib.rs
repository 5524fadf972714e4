//! clowder's worker: registers with a coordinator, leases runs, executes them
//! with `testgen` and streams the results back.
//!
//! Async only at the edges (gRPC); each run executes synchronously on a
//! blocking thread.

#![warn(missing_docs)]

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clowder_proto::coordinator_client::CoordinatorClient;
use clowder_proto::{
    FetchProjectRequest, HeartbeatRequest, LeaseRequest, RegisterRequest, ReportMessage, RunResult, RunSpec, RunStatus,
    TimelineSample, report_message,
};
use clowder_testgen::{AlgorithmConfig, Budget};
use clowder_vm::{LoadLimits, Project};
use tokio::sync::watch;
use tonic::Request;
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

/// Worker settings.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// Coordinator URL, e.g. `http://127.0.0.1:7878`.
    pub coordinator: String,
    /// Shared token sent with every RPC.
    pub token: Option<String>,
    /// Name shown in provenance.
    pub name: String,
    /// Runs executed at the same time.
    pub slots: usize,
}

/// Errors that stop a worker.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// Cannot reach or talk to the coordinator.
    #[error("coordinator {url}: {msg}")]
    Connect {
        /// URL.
        url: String,
        /// What failed.
        msg: String,
    },
    /// An RPC failed.
    #[error("rpc {0}")]
    Rpc(#[from] tonic::Status),
}

/// What a worker did.
#[derive(Debug, Clone, Default)]
pub struct WorkerStats {
    /// Runs executed and reported.
    pub runs: u64,
    /// Results the coordinator did not accept.
    pub rejected: u64,
}

#[derive(Clone)]
struct AddToken(Option<MetadataValue<tonic::metadata::Ascii>>);

impl tonic::service::Interceptor for AddToken {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, tonic::Status> {
        if let Some(t) = &self.0 {
            req.metadata_mut().insert(clowder_proto::TOKEN_METADATA_KEY, t.clone());
        }
        Ok(req)
    }
}

type Client = CoordinatorClient<InterceptedService<Channel, AddToken>>;

/// Loaded projects by content hash, shared by a worker's slots.
type ProjectCache = Arc<Mutex<HashMap<String, Result<Arc<Project>, String>>>>;

async fn connect(opts: &WorkerOptions) -> Result<Client, WorkerError> {
    let err = |msg: String| WorkerError::Connect { url: opts.coordinator.clone(), msg };
    let channel = Endpoint::from_shared(opts.coordinator.clone())
        .map_err(|e| err(e.to_string()))?
        .connect_timeout(Duration::from_secs(10))
        .connect()
        .await
        .map_err(|e| err(e.to_string()))?;
    let token = match &opts.token {
        Some(t) => Some(t.parse().map_err(|_| err("token is not valid ASCII metadata".into()))?),
        None => None,
    };
    Ok(CoordinatorClient::with_interceptor(channel, AddToken(token))
        .max_decoding_message_size(256 << 20)
        .max_encoding_message_size(256 << 20))
}

/// Runs a worker until the coordinator has no more runs or `stop` becomes true.
pub async fn run_worker(opts: WorkerOptions, stop: watch::Receiver<bool>) -> Result<WorkerStats, WorkerError> {
    let mut client = connect(&opts).await?;
    let host = hostname();
    let reg = client
        .register(RegisterRequest {
            worker_name: opts.name.clone(),
            host: host.clone(),
            slots: opts.slots as u32,
            engine_version: clowder_vm::ENGINE_VERSION.to_string(),
        })
        .await?
        .into_inner();
    let worker_id = reg.worker_id;
    let active: Arc<Mutex<BTreeSet<String>>> = Arc::default();
    let heartbeat = {
        let mut client = client.clone();
        let active = Arc::clone(&active);
        let worker_id = worker_id.clone();
        let every = Duration::from_millis(reg.heartbeat_interval_ms.max(50));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let leases: Vec<String> = active.lock().map(|a| a.iter().cloned().collect()).unwrap_or_default();
                if leases.is_empty() {
                    continue;
                }
                let req = HeartbeatRequest { worker_id: worker_id.clone(), lease_ids: leases, steps_done: Vec::new() };
                if client.heartbeat(req).await.is_err() {
                    // Transient: the lease timeout tolerates missed beats.
                    continue;
                }
            }
        })
    };
    let cache: ProjectCache = Arc::default();
    let mut slots = Vec::new();
    for _ in 0..opts.slots.max(1) {
        let client = client.clone();
        let worker_id = worker_id.clone();
        let active = Arc::clone(&active);
        let cache = Arc::clone(&cache);
        let stop = stop.clone();
        let host = host.clone();
        slots.push(tokio::spawn(async move { slot_loop(client, worker_id, host, active, cache, stop).await }));
    }
    let mut stats = WorkerStats::default();
    let mut first_err = None;
    for s in slots {
        match s.await {
            Ok(Ok(st)) => {
                stats.runs += st.runs;
                stats.rejected += st.rejected;
            }
            Ok(Err(e)) => first_err = first_err.or(Some(e)),
            Err(e) => {
                first_err =
                    first_err.or(Some(WorkerError::Connect { url: opts.coordinator.clone(), msg: e.to_string() }))
            }
        }
    }
    heartbeat.abort();
    match first_err {
        Some(e) => Err(e),
        None => Ok(stats),
    }
}

async fn slot_loop(
    mut client: Client,
    worker_id: String,
    host: String,
    active: Arc<Mutex<BTreeSet<String>>>,
    cache: ProjectCache,
    stop: watch::Receiver<bool>,
) -> Result<WorkerStats, WorkerError> {
    let mut stats = WorkerStats::default();
    loop {
        if *stop.borrow() {
            return Ok(stats);
        }
        let lease = client.lease(LeaseRequest { worker_id: worker_id.clone(), max_runs: 1 }).await?.into_inner();
        if lease.runs.is_empty() {
            if lease.done {
                return Ok(stats);
            }
            tokio::time::sleep(Duration::from_millis(lease.retry_after_ms.clamp(10, 5_000))).await;
            continue;
        }
        for spec in lease.runs {
            if let Ok(mut a) = active.lock() {
                a.insert(spec.lease_id.clone());
            }
            let result = execute(&mut client, &cache, &spec, &worker_id, &host).await;
            if let Ok(mut a) = active.lock() {
                a.remove(&spec.lease_id);
            }
            let accepted = report(&mut client, result.0, result.1).await?;
            stats.runs += 1;
            if !accepted {
                stats.rejected += 1;
            }
        }
    }
}

async fn report(client: &mut Client, samples: Vec<TimelineSample>, result: RunResult) -> Result<bool, WorkerError> {
    let msgs: Vec<ReportMessage> = samples
        .into_iter()
        .map(|s| ReportMessage { body: Some(report_message::Body::Sample(s)) })
        .chain(std::iter::once(ReportMessage { body: Some(report_message::Body::Result(result)) }))
        .collect();
    let ack = client.report(tokio_stream::iter(msgs)).await?.into_inner();
    Ok(ack.accepted)
}

async fn fetch_project(client: &mut Client, cache: &ProjectCache, hash: &str) -> Result<Arc<Project>, RunResult> {
    if let Some(hit) = cache.lock().ok().and_then(|c| c.get(hash).cloned()) {
        return hit.map_err(|e| failure(RunStatus::ProjectRejected, e));
    }
    let mut stream = client
        .fetch_project(FetchProjectRequest { project_hash: hash.to_string() })
        .await
        .map_err(|e| failure(RunStatus::InfraFailure, format!("fetch project: {e}")))?
        .into_inner();
    let mut bytes = Vec::new();
    let mut name = String::new();
    while let Some(chunk) =
        stream.message().await.map_err(|e| failure(RunStatus::InfraFailure, format!("fetch project: {e}")))?
    {
        if name.is_empty() {
            name = chunk.file_name;
        }
        bytes.extend_from_slice(&chunk.data);
    }
    if blake3::hash(&bytes).to_hex().as_str() != hash {
        return Err(failure(RunStatus::InfraFailure, "project bytes do not match their hash".into()));
    }
    let loaded =
        clowder_vm::project::load(&bytes, &name, &LoadLimits::default()).map(Arc::new).map_err(|e| e.to_string());
    if let Ok(mut c) = cache.lock() {
        c.insert(hash.to_string(), loaded.clone());
    }
    loaded.map_err(|e| failure(RunStatus::ProjectRejected, e))
}

fn failure(status: RunStatus, error: String) -> RunResult {
    RunResult { status: status as i32, error, ..Default::default() }
}

/// Executes one run; returns the timeline samples to stream and the result.
async fn execute(
    client: &mut Client,
    cache: &ProjectCache,
    spec: &RunSpec,
    worker_id: &str,
    host: &str,
) -> (Vec<TimelineSample>, RunResult) {
    let started = Instant::now();
    let mut result = match fetch_project(client, cache, &spec.project_hash).await {
        Err(r) => r,
        Ok(project) => match run_blocking(project, spec).await {
            Ok(r) => r,
            Err(r) => r,
        },
    };
    result.run_id = spec.run_id.clone();
    result.lease_id = spec.lease_id.clone();
    result.duration_ms = started.elapsed().as_millis() as u64;
    result.provenance = Some(clowder_proto::Provenance {
        host: host.to_string(),
        worker_id: worker_id.to_string(),
        core: -1,
        pinned: false,
        engine_version: clowder_vm::ENGINE_VERSION.to_string(),
        memory_limit_bytes: 0,
        memory_limit_kind: "none".into(),
    });
    let samples = result
        .timeline
        .iter()
        .map(|p| TimelineSample { run_id: spec.run_id.clone(), lease_id: spec.lease_id.clone(), ..p.clone() })
        .collect();
    (samples, result)
}

async fn run_blocking(project: Arc<Project>, spec: &RunSpec) -> Result<RunResult, RunResult> {
    let cfg: AlgorithmConfig = serde_json::from_str(&spec.config_json)
        .map_err(|e| failure(RunStatus::Error, format!("bad configuration: {e}")))?;
    let budget = match spec.budget.as_ref().map(|b| (b.kind(), b.amount)) {
        Some((clowder_proto::BudgetKind::Steps, n)) => Budget::Steps(n),
        Some((clowder_proto::BudgetKind::Executions, n)) => Budget::Executions(n),
        Some((clowder_proto::BudgetKind::Evaluations, n)) => Budget::Evaluations(n),
        Some((clowder_proto::BudgetKind::Seconds, n)) => Budget::Seconds(n),
        other => return Err(failure(RunStatus::Error, format!("unsupported budget {other:?}"))),
    };
    let seed = spec.seed;
    let joined =
        tokio::task::spawn_blocking(move || clowder_testgen::generate(project, &cfg, seed, budget, &mut |_| {})).await;
    let outcome = match joined {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => return Err(failure(RunStatus::Error, e.to_string())),
        // A panic is a bug in clowder, and deterministic: recorded, not retried.
        Err(e) => return Err(failure(RunStatus::Error, format!("internal error (panic): {e}"))),
    };
    Ok(RunResult {
        status: RunStatus::Ok as i32,
        coverage: outcome.coverage,
        covered: outcome.covered,
        total_targets: outcome.total_targets,
        steps: outcome.steps,
        executions: outcome.executions,
        evaluations: outcome.evaluations,
        digest: outcome.digest.clone(),
        timeline: outcome
            .timeline
            .iter()
            .map(|p| TimelineSample {
                steps: p.steps,
                executions: p.executions,
                covered: p.covered,
                ..Default::default()
            })
            .collect(),
        suite_json: serde_json::to_string(&outcome.suite).unwrap_or_default(),
        tests_before_min: outcome.tests_before_min,
        tests_after_min: outcome.tests_after_min,
        events_before_min: outcome.events_before_min,
        events_after_min: outcome.events_after_min,
        steps_to_full_coverage: outcome.steps_to_full_coverage.unwrap_or(0),
        full_coverage: outcome.steps_to_full_coverage.is_some(),
        geometry: outcome.geometry.clone(),
        reproducible: outcome.reproducible,
        unknown_opcodes: outcome.unknown_opcodes.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        ..Default::default()
    })
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".into())
}
