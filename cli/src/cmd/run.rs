//! `clowder run EXPERIMENT`: the embedded default. A coordinator (with its
//! durable store in the results folder) on an ephemeral loopback port and one
//! local worker with one pinned slot per core, talking over gRPC exactly as
//! remote workers would. Running it again on the same results folder resumes;
//! with more seeds it runs only the new runs.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clowder_coordinator::{Coordinator, CoordinatorOptions, Experiment};
use clowder_worker::{Control, ProcessExecutor, WorkerOptions, run_worker};
use tokio::sync::{oneshot, watch};

use super::common;
use crate::progress::Progress;

/// Arguments of `clowder run`.
pub struct RunArgs {
    pub experiment: PathBuf,
    pub workers: Option<usize>,
    pub output: Option<PathBuf>,
    pub quiet: bool,
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let mut exp = common::load_experiment(&args.experiment)?;
    if let Some(out) = &args.output {
        exp.results_dir = out.join(&exp.spec.name);
    }
    let slots = args.workers.unwrap_or_else(|| clowder_worker::cores::allowed_cores().len()).max(1);
    common::runtime(2)?.block_on(run_async(exp, slots, args.quiet))
}

/// The progress of `run` and `status` (a bar on a terminal, lines on a log).
pub fn progress_bar(total: u64, quiet: bool) -> Progress {
    Progress::new(total, "runs", quiet)
}

async fn run_async(exp: Experiment, slots: usize, quiet: bool) -> anyhow::Result<ExitCode> {
    // A secret for the loopback server (other local users cannot inject results),
    // kept in the results folder (owner-only) so `clowder status RESULTS` and extra
    // `clowder worker --token-file RESULTS/token` processes can join; reused on resume.
    std::fs::create_dir_all(&exp.results_dir).with_context(|| format!("creating {}", exp.results_dir.display()))?;
    let token_path = exp.results_dir.join("token");
    let token = match std::fs::read_to_string(&token_path) {
        Ok(t) if !t.trim().is_empty() => t.trim().to_string(),
        _ => {
            let t = common::random_token()?;
            common::write_token_file(&token_path, &t)?;
            t
        }
    };
    let coord = Arc::new(Coordinator::new(
        exp,
        CoordinatorOptions { token: Some(token.clone()), lease_timeout: Duration::from_secs(30), ..Default::default() },
    )?);
    let exp = coord.experiment().clone();
    let (addr_tx, addr_rx) = oneshot::channel();
    let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
    let server = {
        let c = Arc::clone(&coord);
        tokio::spawn(async move {
            c.serve(
                std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
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
    let (ctl_tx, ctl_rx) = watch::channel(Control::Run);
    let mut wopts = WorkerOptions::new(format!("http://{addr}"));
    wopts.token = Some(token);
    wopts.name = "local".into();
    wopts.slots = slots;
    // Ctrl-C waits for running runs as long as they take.
    wopts.drain_timeout = Duration::from_secs(7 * 24 * 3600);
    let executor = Arc::new(ProcessExecutor::current_exe().map_err(anyhow::Error::msg)?);
    let worker = tokio::spawn(run_worker(wopts, executor, ctl_rx));

    let mut progress = coord.progress();
    let first = coord.progress_now();
    let sub = coord.submitted();
    let budget = format!("{} {}", exp.budget.amount(), exp.budget.unit());
    let (entries, budget) = if exp.suites.is_empty() {
        (format!("{} algorithm configurations", exp.configuration_count()), budget)
    } else {
        // Dynamic suites play each network to the suite's own timeout, not to the steps per test.
        let dynamic = exp.suites.iter().filter(|s| s.is_dynamic()).count();
        let budget = match dynamic {
            0 => format!("{budget} per test"),
            d if d == exp.suites.len() => "each network to its suite's timeout".to_string(),
            d => format!("{budget} per test; {d} dynamic suites to their own timeout"),
        };
        (format!("{} suites on their projects", exp.suites.len()), budget)
    };
    eprintln!(
        "clowder: {} — {} runs ({entries} × {} seeds, {budget}) on {} slots; {} new, {} already done",
        exp.spec.name,
        first.total,
        exp.seeds.len(),
        slots,
        sub.new_runs,
        first.resumed,
    );
    let pb = progress_bar(first.total, quiet);
    pb.set_position(first.done);
    pb.reset_eta();
    let mut interrupted = 0;
    loop {
        let p = progress.borrow_and_update().clone();
        pb.set_position(p.done);
        pb.set_message(format!("{} running, {} limit, {} failed", p.running, p.limited, p.failed));
        if p.finished {
            break;
        }
        tokio::select! {
            changed = progress.changed() => if changed.is_err() { break },
            _ = tokio::signal::ctrl_c() => {
                interrupted += 1;
                if interrupted == 1 {
                    pb.println("interrupted: no new runs are started; waiting for running ones (Ctrl-C again to stop them)");
                    coord.cancel(false);
                    let _ = ctl_tx.send(Control::Drain);
                } else {
                    pb.println("stopping running runs; they stay pending and run when the study is resumed");
                    let _ = ctl_tx.send(Control::Abort);
                    break;
                }
            }
            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
        }
    }
    pb.finish_and_clear();
    // Finished (or stopping): the worker need not wait for its next poll.
    if interrupted == 0 {
        let _ = ctl_tx.send(Control::Drain);
    }
    let worker_error = match worker.await {
        Ok(Ok(_)) => None,
        Ok(Err(e)) => Some(e.to_string()),
        Err(e) => Some(e.to_string()),
    };
    coord.flush().await?;
    let _ = shutdown_tx.send(());
    let _ = server.await;
    let files = coord.export()?;
    print!("{}", coord.summary());
    eprintln!("results: {}", exp.results_dir.display());
    if !quiet {
        for f in &files {
            eprintln!("  {}", f.display());
        }
    }
    if let Some(e) = &worker_error {
        eprintln!("worker error: {e}");
    }
    let p = coord.progress_now();
    if p.determinism_failures > 0 {
        eprintln!("{} DETERMINISM FAILURES (see determinism_failures.csv)", p.determinism_failures);
    }
    if interrupted > 0 {
        eprintln!("stopped early: {} of {} runs finished; run the same command again to resume", p.done, p.total);
        return Ok(ExitCode::from(130));
    }
    if worker_error.is_some() || p.done < p.total || p.determinism_failures > 0 {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
