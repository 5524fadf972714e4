//! `clowder run EXPERIMENT`: the embedded default. A coordinator on an
//! ephemeral loopback port and N local workers that talk to it over gRPC.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clowder_coordinator::{Coordinator, CoordinatorOptions, Experiment};
use clowder_worker::{WorkerOptions, run_worker};
use indicatif::{ProgressBar, ProgressStyle};
use tokio::sync::{oneshot, watch};

/// Arguments of `clowder run`.
pub struct RunArgs {
    pub experiment: PathBuf,
    pub workers: Option<usize>,
    pub output: Option<PathBuf>,
    pub quiet: bool,
}

/// A per-session secret for the loopback server: other local users cannot
/// inject results into the study.
fn session_token() -> String {
    let mut buf = [0u8; 16];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        use std::io::Read;
        let _ = f.read_exact(&mut buf);
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let mut exp = Experiment::load(&args.experiment)?;
    if let Some(out) = &args.output {
        exp.results_dir = out.join(&exp.spec.name);
    }
    let workers =
        args.workers.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(workers + 2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(run_async(exp, workers, args.quiet))
}

async fn run_async(exp: Experiment, workers: usize, quiet: bool) -> anyhow::Result<ExitCode> {
    let token = session_token();
    let coord =
        Arc::new(Coordinator::new(exp, CoordinatorOptions { token: Some(token.clone()), ..Default::default() })?);
    let exp = coord.experiment().clone();
    let (addr_tx, addr_rx) = oneshot::channel();
    let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
    let server = {
        let c = Arc::clone(&coord);
        tokio::spawn(async move {
            c.serve(
                "127.0.0.1:0".parse().expect("literal address"),
                |a| {
                    let _ = addr_tx.send(a);
                },
                async {
                    let _ = shutdown_rx.await;
                },
            )
            .await
        })
    };
    let addr = match addr_rx.await {
        Ok(a) => a,
        Err(_) => {
            // The server failed before binding; report its error.
            server.await??;
            anyhow::bail!("coordinator stopped before listening");
        }
    };
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut handles = Vec::new();
    for i in 0..workers {
        let opts = WorkerOptions {
            coordinator: format!("http://{addr}"),
            token: Some(token.clone()),
            name: format!("local{i}"),
            slots: 1,
        };
        handles.push(tokio::spawn(run_worker(opts, stop_rx.clone())));
    }

    let mut progress = coord.progress();
    let total = progress.borrow().total;
    eprintln!(
        "clowder: {} — {} runs ({} projects × {} algorithms × {} seeds, {} {}) on {} workers",
        exp.spec.name,
        total,
        total / (exp.algorithms.len() * exp.seeds.len()).max(1) as u64,
        exp.algorithms.len(),
        exp.seeds.len(),
        exp.budget.amount(),
        exp.budget.unit(),
        workers
    );
    let pb = if quiet { ProgressBar::hidden() } else { ProgressBar::new(total) };
    pb.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs  {msg}  [{elapsed_precise}, eta {eta}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut interrupted = false;
    loop {
        let p = progress.borrow_and_update().clone();
        pb.set_position(p.done);
        pb.set_message(format!("{} running, {} failed", p.running, p.failed));
        if p.finished {
            break;
        }
        tokio::select! {
            changed = progress.changed() => if changed.is_err() { break },
            _ = tokio::signal::ctrl_c(), if !interrupted => {
                interrupted = true;
                pb.println("interrupted: no new runs are started; waiting for running ones (Ctrl-C again to abort)");
                coord.cancel();
                let _ = stop_tx.send(true);
            }
            _ = tokio::signal::ctrl_c(), if interrupted => {
                pb.println("aborting: unfinished runs are recorded as pending");
                break;
            }
            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
        }
    }
    pb.finish_and_clear();
    let _ = stop_tx.send(true);
    let mut worker_errors = Vec::new();
    for h in handles {
        if interrupted {
            h.abort();
            continue;
        }
        match h.await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => worker_errors.push(e.to_string()),
            Err(e) if e.is_cancelled() => {}
            Err(e) => worker_errors.push(e.to_string()),
        }
    }
    let path = coord.write_results()?;
    let _ = shutdown_tx.send(());
    let _ = server.await;
    print!("{}", coord.with_table(clowder_coordinator::summary::format));
    eprintln!("results: {}", path.display());
    for e in &worker_errors {
        eprintln!("worker error: {e}");
    }
    let p = coord.progress().borrow().clone();
    if interrupted {
        eprintln!("stopped early: {} of {} runs finished", p.done, p.total);
        return Ok(ExitCode::from(130));
    }
    if !worker_errors.is_empty() || p.done < p.total {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
