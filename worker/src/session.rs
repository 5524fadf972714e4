//! A worker's session with its coordinator: register (retrying until it answers), keep the
//! held leases alive with heartbeats, lease runs into the local queue until the study is done
//! or the worker is told to stop, then hand back what is queued and wait for what runs.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use clowder_proto::{
    FetchProjectRequest, HeartbeatRequest, LeaseRequest, RegisterRequest, RegisterResponse, ReleaseRequest, RunResult,
    RunSpec, RunStatus,
};
use tokio::sync::watch;

use crate::inner::{Backoff, Inner, is_fatal};
use crate::report::deliver;
use crate::slots::{Measured, with_ids};
use crate::{CLOWDER_VERSION, Client, Control, Job, WorkerError, cache, exec};

/// One session: from registering to the last running run.
pub(crate) struct Session<'a> {
    pub(crate) inner: &'a Arc<Inner>,
    pub(crate) client: Client,
    pub(crate) control: &'a mut watch::Receiver<Control>,
    pub(crate) cache: Arc<cache::ProjectCache>,
    /// Cores the slots pinned to (sent when registering).
    pub(crate) pinned_cores: Vec<u32>,
    pub(crate) backoff: Backoff,
    pub(crate) last_contact: Instant,
}

impl Session<'_> {
    /// Runs the session; `Ok` when the study is done or the worker was told to stop.
    pub(crate) async fn run(mut self) -> Result<(), WorkerError> {
        let Some(heartbeat_every) = self.register_until_accepted().await? else { return Ok(()) };
        self.backoff.reset();
        self.last_contact = Instant::now();
        let heartbeat = spawn_heartbeat(Arc::clone(self.inner), self.client.clone(), heartbeat_every);
        let result = self.lease_loop().await;
        self.wind_down(&result).await;
        heartbeat.abort();
        result
    }

    fn url(&self) -> String {
        self.inner.opts.coordinator.clone()
    }

    /// One `Register` call.
    async fn register(&self) -> Result<RegisterResponse, tonic::Status> {
        let opts = &self.inner.opts;
        let req = RegisterRequest {
            worker_name: opts.name.clone(),
            host: self.inner.host.clone(),
            slots: opts.slots as u32,
            engine_version: clowder_vm::ENGINE_VERSION.to_string(),
            cores: self.pinned_cores.clone(),
            clowder_version: CLOWDER_VERSION.to_string(),
            worker_id: self.inner.worker_id(),
        };
        let mut c = self.client.clone();
        c.register(req).await.map(|r| r.into_inner())
    }

    /// Registers, retrying with backoff (the coordinator may not be up yet); the heartbeat
    /// interval it asks for, or `None` when told to stop first.
    async fn register_until_accepted(&mut self) -> Result<Option<Duration>, WorkerError> {
        loop {
            if *self.control.borrow() != Control::Run {
                return Ok(None);
            }
            match self.register().await {
                Ok(r) => {
                    self.inner.log(format!("registered as {} with {} ({})", r.worker_id, self.url(), r.experiment));
                    *self.inner.worker_id.lock().unwrap_or_else(|e| e.into_inner()) = r.worker_id;
                    return Ok(Some(Duration::from_millis(r.heartbeat_interval_ms.clamp(20, 60_000))));
                }
                Err(s) if is_fatal(&s) => {
                    return Err(WorkerError::Refused { url: self.url(), msg: s.message().to_string() });
                }
                Err(s) => {
                    if self.last_contact.elapsed() > self.inner.opts.reconnect_timeout {
                        return Err(WorkerError::Unreachable {
                            url: self.url(),
                            secs: self.inner.opts.reconnect_timeout.as_secs(),
                            msg: s.message().to_string(),
                        });
                    }
                    let wait = self.backoff.next();
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = self.control.changed() => {}
                    }
                }
            }
        }
    }

    /// Leases runs while there is room in the local queue, until the coordinator has no more
    /// runs (and the held ones finished) or the worker is told to stop.
    async fn lease_loop(&mut self) -> Result<(), WorkerError> {
        let inner = Arc::clone(self.inner);
        let mut done = false;
        let mut need_register = false;
        loop {
            if *self.control.borrow() != Control::Run {
                return Ok(());
            }
            if done && inner.held() == 0 {
                return Ok(());
            }
            let held = inner.held();
            let target = inner.target_held();
            if held > target {
                // Hand back only what would wait long (`take_excess`): runs of about the
                // prefetch's length are not worth a round trip back and forth.
                let excess = inner.take_excess();
                if !excess.is_empty() {
                    let n = excess.len();
                    inner.log(format!("handing back {n} queued runs: runs take longer than the prefetch assumed"));
                    self.hand_back(excess, "runs take longer than the worker's prefetch assumed").await;
                }
            }
            if done || held >= target {
                tokio::select! {
                    _ = inner.slot_done.notified() => {}
                    _ = self.control.changed() => {}
                    _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                }
                continue;
            }
            if need_register && let Ok(r) = self.register().await {
                inner.log(format!("re-registered as {}", r.worker_id));
                *inner.worker_id.lock().unwrap_or_else(|e| e.into_inner()) = r.worker_id;
                need_register = false;
            }
            let req = LeaseRequest { worker_id: inner.worker_id(), max_runs: (target - held) as u32 };
            match self.client.lease(req).await {
                Ok(resp) => {
                    self.backoff.reset();
                    self.last_contact = Instant::now();
                    let resp = resp.into_inner();
                    if resp.runs.is_empty() {
                        if resp.done {
                            inner.log("the coordinator has no more runs");
                            done = true;
                            continue;
                        }
                        tokio::select! {
                            _ = tokio::time::sleep(Duration::from_millis(resp.retry_after_ms.clamp(10, 5_000))) => {}
                            _ = self.control.changed() => {}
                        }
                        continue;
                    }
                    self.queue_leased(resp.runs).await;
                }
                Err(s) if is_fatal(&s) => {
                    return Err(WorkerError::Refused { url: self.url(), msg: s.message().to_string() });
                }
                Err(s) => {
                    if !need_register {
                        inner.log(format!("coordinator unreachable ({}); retrying", s.message()));
                    }
                    need_register = true;
                    if self.last_contact.elapsed() > inner.opts.reconnect_timeout {
                        return Err(WorkerError::Unreachable {
                            url: self.url(),
                            secs: inner.opts.reconnect_timeout.as_secs(),
                            msg: s.message().to_string(),
                        });
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(self.backoff.next()) => {}
                        _ = self.control.changed() => {}
                    }
                }
            }
        }
    }

    /// Queues leased runs for the slots once their project is in the local cache; a project
    /// that cannot be fetched is reported like a run result (the coordinator retries or gives
    /// up).
    async fn queue_leased(&mut self, runs: Vec<RunSpec>) {
        let inner = self.inner;
        for spec in runs {
            match ensure_project(&mut self.client, &self.cache, &spec).await {
                Ok(path) => {
                    let mut spec = spec;
                    if let Some(m) = inner.opts.memory_limit {
                        spec.memory_limit_bytes = m;
                    }
                    if let Some(c) = inner.opts.cpu_limit {
                        spec.cpu_limit_seconds = c;
                    }
                    if let Ok(mut q) = inner.queue.lock() {
                        q.push_back(Job { spec, project_path: path });
                    }
                    inner.queue_cv.notify_one();
                }
                Err(r) => {
                    inner.log(format!("run {}: {}", spec.run_id, r.error));
                    let none = Measured { memory_limit_kind: "none", ..Default::default() };
                    let r = with_ids(r, &spec, inner, None, "none", &none);
                    inner.unacked.fetch_add(1, Ordering::SeqCst);
                    let inner2 = Arc::clone(inner);
                    let client = self.client.clone();
                    tokio::spawn(async move {
                        deliver(&inner2, client, r).await;
                        inner2.unacked.fetch_sub(1, Ordering::SeqCst);
                        inner2.delivered.notify_waiters();
                    });
                }
            }
        }
    }

    /// Hands leased runs that no slot started back to the coordinator (they are leased again
    /// at once, to any worker, without counting an attempt). Runs the coordinator could not be
    /// told about are leased again when their leases expire, as a lost worker's are.
    async fn hand_back(&mut self, jobs: Vec<Job>, reason: &str) {
        if jobs.is_empty() {
            return;
        }
        let n = jobs.len() as u64;
        let req = ReleaseRequest {
            worker_id: self.inner.worker_id(),
            lease_ids: jobs.iter().map(|j| j.spec.lease_id.clone()).collect(),
            run_ids: jobs.iter().map(|j| j.spec.run_id.clone()).collect(),
            reason: reason.into(),
        };
        if self.client.release(req).await.is_ok() {
            self.inner.stats.lock().unwrap_or_else(|e| e.into_inner()).released += n;
        }
    }

    /// Drain or finish: hands queued runs back when stopping, then waits for the running
    /// ones (finishing normally: until they end; draining: at most the drain timeout), still
    /// heartbeating.
    async fn wind_down(&mut self, result: &Result<(), WorkerError>) {
        let inner = self.inner;
        let ctl = *self.control.borrow();
        if ctl != Control::Run || result.is_err() {
            let queued: Vec<Job> = inner.queue.lock().map(|mut q| q.drain(..).collect()).unwrap_or_default();
            let reason = if result.is_err() { "worker stopping" } else { "worker draining" };
            self.hand_back(queued, reason).await;
        }
        inner.closing.store(true, Ordering::SeqCst);
        inner.queue_cv.notify_all();
        let mut deadline = (ctl != Control::Run).then(|| Instant::now() + inner.opts.drain_timeout);
        loop {
            if inner.running.lock().map(|r| r.is_empty()).unwrap_or(true) {
                break;
            }
            if deadline.is_none() && *self.control.borrow() == Control::Drain {
                deadline = Some(Instant::now() + inner.opts.drain_timeout);
            }
            if *self.control.borrow() == Control::Abort || deadline.is_some_and(|d| Instant::now() >= d) {
                let n = inner.running.lock().map(|r| {
                    r.values().for_each(|x| x.cancel.cancel());
                    r.len()
                });
                inner.log(format!("stopping {} running runs and handing them back", n.unwrap_or(0)));
                break;
            }
            tokio::select! {
                _ = inner.slot_done.notified() => {}
                _ = self.control.changed() => {}
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
    }
}

/// Heartbeats keep every held lease alive; revoked ones are dropped from the queue or stopped.
fn spawn_heartbeat(inner: Arc<Inner>, mut client: Client, every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let held = inner.held_leases();
            if held.is_empty() {
                continue;
            }
            let (lease_ids, run_ids) = held.into_iter().unzip();
            let req = HeartbeatRequest { worker_id: inner.worker_id(), lease_ids, steps_done: Vec::new(), run_ids };
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
                    if let Some(x) = r.get(l) {
                        inner.log(format!("lease {l} of run {} revoked: stopping it", x.run_id));
                        x.cancel.cancel();
                    }
                }
            }
            inner.slot_done.notify_one();
        }
    })
}

/// The project of a run in the local cache (fetched once per machine), and the suite (and an
/// Itch plan's template) of a test run beside it (`crate::grading::suite_path`).
async fn ensure_project(
    client: &mut Client,
    cache: &cache::ProjectCache,
    spec: &RunSpec,
) -> Result<PathBuf, RunResult> {
    let file_name =
        if spec.file_name.is_empty() { format!("{}.json", spec.project_name) } else { spec.file_name.clone() };
    let what = format!("project {}", spec.project_name);
    let path = ensure_file(client, cache, &spec.project_hash, &file_name, &what, max_project_bytes()).await?;
    // A malformed configuration is the run's own (deterministic) error, reported when it runs.
    if let Some(Ok(t)) = clowder_proto::test_run::TestRunConfig::parse(&spec.config_json) {
        let what = format!("suite {}", t.suite);
        ensure_file(client, cache, &t.suite_hash, "suite.js", &what, clowder_suites::MAX_SUITE_BYTES).await?;
        if let (Some(name), Some(hash)) = (&t.template, &t.template_hash) {
            let what = format!("template {name} of {}", t.suite);
            ensure_file(client, cache, hash, name, &what, max_project_bytes()).await?;
        }
    }
    Ok(path)
}

/// A file the coordinator serves by content hash, in the local cache.
async fn ensure_file(
    client: &mut Client,
    cache: &cache::ProjectCache,
    hash: &str,
    file_name: &str,
    what: &str,
    max_bytes: u64,
) -> Result<PathBuf, RunResult> {
    let infra = |m: String| exec::failure(RunStatus::InfraFailure, m);
    if let Some(p) = cache.get(hash, file_name) {
        return Ok(p);
    }
    let mut stream = client
        .fetch_project(FetchProjectRequest { project_hash: hash.to_string() })
        .await
        .map_err(|e| infra(format!("fetching {what}: {}", e.message())))?
        .into_inner();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.message().await.map_err(|e| infra(format!("fetching {what}: {}", e.message())))? {
        if chunk.total_size > max_bytes || (bytes.len() + chunk.data.len()) as u64 > max_bytes {
            return Err(infra(format!("{what} is larger than the limit")));
        }
        bytes.extend_from_slice(&chunk.data);
    }
    cache.put(hash, file_name, &bytes).map_err(infra)
}

/// Largest project accepted over the wire (the loader's own limit).
fn max_project_bytes() -> u64 {
    clowder_vm::LoadLimits::default().max_file_bytes
}
