//! Coordinator throughput: one coordinator (this process, with its real
//! SQLite store and group commit, `synchronous=FULL`) and a fleet of 64
//! workers on loopback (a child process) whose runs are fake and take 1 ms.
//! Reports results per second and the coordinator's CPU share.
//!
//! ```sh
//! cargo bench -p clowder-coordinator --bench throughput            # 64 workers, 100 000 runs
//! cargo bench -p clowder-coordinator --bench throughput -- 16 20000 # workers, runs
//! ```
//!
//! The fake executor lives here, not in production code: it sleeps 1 ms on
//! the slot thread and returns a result with a digest derived from the run id
//! (two timeline samples, streamed like a real run's).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clowder_coordinator::{Coordinator, CoordinatorOptions, Experiment};
use clowder_proto::{RunResult, RunStatus, TimelineSample};
use clowder_worker::{Cancel, Control, ExecOutcome, Executor, Job, SlotEnv, WorkerOptions};
use tokio::sync::{oneshot, watch};

struct FakeRun;

impl Executor for FakeRun {
    fn execute(
        &self,
        job: &Job,
        _env: &SlotEnv,
        on_sample: &mut dyn FnMut(TimelineSample),
        _c: &Cancel,
    ) -> ExecOutcome {
        std::thread::sleep(Duration::from_millis(1));
        let timeline = vec![
            TimelineSample { steps: 0, executions: 0, covered: 0, ..Default::default() },
            TimelineSample { steps: 10, executions: 1, covered: 3, ..Default::default() },
        ];
        for t in &timeline[1..] {
            on_sample(t.clone());
        }
        let result = RunResult {
            status: RunStatus::Ok as i32,
            coverage: 0.5,
            covered: 3,
            total_targets: 6,
            steps: 10,
            executions: 1,
            digest: blake3::hash(job.spec.run_id.as_bytes()).to_hex().to_string(),
            timeline,
            reproducible: true,
            ..Default::default()
        };
        ExecOutcome { result, memory_peak_bytes: 0, memory_limit_kind: "none", cpu_ms: 0 }
    }

    fn isolation(&self) -> &'static str {
        "thread"
    }
}

fn cpu_seconds() -> f64 {
    // SAFETY: zeroed rusage is valid; the pointer is to a local.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// The worker fleet (child process): `throughput --fleet URL TOKEN WORKERS CACHE`.
fn fleet(url: &str, token: &str, workers: usize, cache: &str) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    rt.block_on(async {
        let (_tx, rx) = watch::channel(Control::Run);
        let mut handles = Vec::new();
        for i in 0..workers {
            let mut o = WorkerOptions::new(url);
            o.token = Some(token.to_string());
            o.name = format!("bench{i}");
            o.slots = 1;
            o.pin = false;
            o.cgroups = false;
            o.cache_dir = cache.into();
            handles.push(tokio::spawn(clowder_worker::run_worker(o, Arc::new(FakeRun), rx.clone())));
        }
        for h in handles {
            match h.await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => eprintln!("fleet worker: {e}"),
                Err(e) => eprintln!("fleet worker: {e}"),
            }
        }
    });
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    if args.first().map(String::as_str) == Some("--fleet") {
        let [_, url, token, workers, cache] = &args[..] else { panic!("--fleet URL TOKEN WORKERS CACHE") };
        fleet(url, token, workers.parse().expect("workers"), cache);
        return;
    }
    let workers: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(64);
    let runs: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let tmp = tempfile::tempdir().expect("temp dir");
    let dataset = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/smoke/counter.json");
    let exp_path = tmp.path().join("bench.toml");
    std::fs::write(
        &exp_path,
        format!(
            "name = \"bench\"\ndataset = \"{}\"\nseeds = {runs}\nbudget = {{ steps = 10 }}\n\n[[algorithms]]\nname = \"random\"\n",
            dataset.display()
        ),
    )
    .expect("write experiment");
    let mut exp = Experiment::load(&exp_path).expect("experiment");
    exp.results_dir = tmp.path().join("results/bench");
    let token = "bench-token".to_string();
    let t_submit = Instant::now();
    let coord = Arc::new(
        Coordinator::new(
            exp,
            CoordinatorOptions {
                token: Some(token.clone()),
                lease_timeout: Duration::from_secs(30),
                ..Default::default()
            },
        )
        .expect("coordinator"),
    );
    let submit = t_submit.elapsed();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    rt.block_on(async move {
        let (addr_tx, addr_rx) = oneshot::channel::<SocketAddr>();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let server = {
            let c = Arc::clone(&coord);
            tokio::spawn(async move {
                c.serve(
                    SocketAddr::from(([127, 0, 0, 1], 0)),
                    |a| {
                        let _ = addr_tx.send(a);
                    },
                    async {
                        let _ = stop_rx.await;
                    },
                )
                .await
            })
        };
        let addr = addr_rx.await.expect("bound");
        let exe = std::env::current_exe().expect("bench executable");
        let cache = tmp.path().join("cache");
        let mut child = std::process::Command::new(exe)
            .args(["--fleet", &format!("http://{addr}"), &token, &workers.to_string()])
            .arg(&cache)
            .spawn()
            .expect("start the worker fleet");
        let mut progress = coord.progress();
        // Measure from the first result to the last: connection set-up and the
        // final linger are not coordinator throughput.
        let mut start: Option<(Instant, f64, u64)> = None;
        loop {
            let p = progress.borrow_and_update().clone();
            if start.is_none() && p.done > 0 {
                start = Some((Instant::now(), cpu_seconds(), p.done));
            }
            if p.finished {
                break;
            }
            if progress.changed().await.is_err() {
                break;
            }
        }
        let end = (Instant::now(), cpu_seconds());
        let (t0, cpu0, done0) = start.expect("some results");
        let p = coord.progress_now();
        let wall = end.0.duration_since(t0).as_secs_f64();
        let cpu = end.1 - cpu0;
        let (commits, writes) = coord.store_stats();
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        println!("coordinator throughput: {workers} workers on loopback, 1 ms fake runs, {} runs", p.total);
        println!("  submit (expand + store {} runs): {:.2} s", p.total, submit.as_secs_f64());
        println!(
            "  {:.0} results/s ({} results in {:.2} s, first to last)",
            (p.done - done0) as f64 / wall,
            p.done - done0,
            wall
        );
        println!(
            "  coordinator CPU: {:.2} s = {:.2} cores = {:.0}% of this {cores}-core machine",
            cpu,
            cpu / wall,
            100.0 * cpu / wall / cores as f64
        );
        println!(
            "  store: {commits} transactions for {writes} writes (results + lease hints), {:.1} writes per commit",
            writes as f64 / commits.max(1) as f64
        );
        // Tell every worker that the study is done before stopping.
        coord.linger(Duration::from_secs(10)).await;
        let _ = stop_tx.send(());
        let _ = server.await;
        let _ = child.wait();
        assert_eq!(p.done, p.total, "every run finished");
        assert_eq!(p.failed, 0);
    });
}
