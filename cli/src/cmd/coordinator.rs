//! `clowder coordinator EXPERIMENT --listen ADDR`: a standalone coordinator
//! that remote workers join. Binds to loopback unless told otherwise; every RPC
//! must carry the shared token; TLS with `--tls-cert/--tls-key`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clowder_coordinator::{Coordinator, CoordinatorOptions, TlsIdentity};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::oneshot;

use super::common::{self, TokenArgs};

/// Arguments of `clowder coordinator`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Experiment file (TOML).
    pub experiment: PathBuf,
    /// Address to listen on. Loopback by default; use e.g. 0.0.0.0:7878 to accept
    /// workers from other machines (then use TLS).
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub listen: SocketAddr,
    /// Put results under this folder instead of the experiment's `output`.
    #[arg(long)]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub token: TokenArgs,
    /// TLS certificate chain (PEM).
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Seconds without a heartbeat after which a worker's leases expire.
    #[arg(long, default_value_t = 30.0)]
    pub lease_timeout: f64,
    /// Keep serving (status queries) after the study finished, until SIGTERM.
    #[arg(long)]
    pub keep_serving: bool,
    /// Print only errors.
    #[arg(long)]
    pub quiet: bool,
}

fn is_loopback(a: &SocketAddr) -> bool {
    a.ip().is_loopback()
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut exp = common::load_experiment(&args.experiment)?;
    if let Some(out) = &args.output {
        exp.results_dir = out.join(&exp.spec.name);
    }
    if !(args.lease_timeout > 0.05 && args.lease_timeout < 86_400.0) {
        anyhow::bail!("--lease-timeout must be between 0.05 and 86400 seconds");
    }
    std::fs::create_dir_all(&exp.results_dir).with_context(|| format!("creating {}", exp.results_dir.display()))?;
    let token_path = exp.results_dir.join("token");
    let token = match args.token.get()? {
        Some(t) => t,
        // Resuming: the workers still hold the study's token.
        None if token_path.is_file() => {
            TokenArgs { token: None, token_file: Some(token_path.clone()) }.get()?.context("empty token file")?
        }
        None => {
            let t = common::random_token()?;
            let path = token_path;
            common::write_token_file(&path, &t)?;
            if !args.quiet {
                eprintln!("coordinator: generated a worker token in {} (workers: --token-file)", path.display());
            }
            t
        }
    };
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(c), Some(k)) => Some(TlsIdentity {
            cert_pem: std::fs::read(c).with_context(|| format!("reading {}", c.display()))?,
            key_pem: std::fs::read(k).with_context(|| format!("reading {}", k.display()))?,
        }),
        _ => None,
    };
    if !is_loopback(&args.listen) && tls.is_none() && !args.quiet {
        eprintln!(
            "coordinator: WARNING: listening on {} without TLS: the token and results travel in clear text",
            args.listen
        );
    }
    let opts = CoordinatorOptions {
        lease_timeout: Duration::from_secs_f64(args.lease_timeout),
        token: Some(token),
        tls,
        log: !args.quiet,
    };
    let coord = Arc::new(Coordinator::new(exp, opts)?);
    common::runtime(2)?.block_on(serve(coord, args.listen, args.keep_serving, args.quiet))
}

async fn serve(
    coord: Arc<Coordinator>,
    listen: SocketAddr,
    keep_serving: bool,
    quiet: bool,
) -> anyhow::Result<ExitCode> {
    let exp = coord.experiment().clone();
    let first = coord.progress_now();
    let sub = coord.submitted().clone();
    let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
    let (addr_tx, addr_rx) = oneshot::channel();
    let server = {
        let c = Arc::clone(&coord);
        tokio::spawn(async move {
            c.serve(
                listen,
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
    let Ok(addr) = addr_rx.await else {
        server.await??;
        anyhow::bail!("coordinator stopped before listening");
    };
    if !quiet {
        eprintln!(
            "coordinator: {} listening on {addr}: {} runs, {} new in this submission, {} already done; results in {}",
            exp.spec.name,
            first.total,
            sub.new_runs,
            first.resumed,
            exp.results_dir.display()
        );
    }
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    let mut progress = coord.progress();
    let mut stopped = false;
    let mut last_report = std::time::Instant::now();
    loop {
        let p = progress.borrow_and_update().clone();
        if p.finished && !keep_serving {
            break;
        }
        if !quiet && last_report.elapsed() > Duration::from_secs(30) {
            last_report = std::time::Instant::now();
            eprintln!(
                "coordinator: {}/{} done, {} running, {} limit, {} failed, {} workers, {:.1} runs/s",
                p.done,
                p.total,
                p.running,
                p.limited,
                p.failed,
                p.workers.len(),
                p.rate_per_second
            );
        }
        tokio::select! {
            c = progress.changed() => if c.is_err() { break },
            _ = term.recv() => { stopped = true; break }
            _ = int.recv() => { stopped = true; break }
            _ = tokio::time::sleep(Duration::from_secs(5)) => {}
        }
    }
    if !stopped {
        // Let workers hear "done" instead of retrying a vanished coordinator.
        coord.linger(Duration::from_secs(10)).await;
    }
    coord.flush().await?;
    let _ = shutdown_tx.send(());
    match tokio::time::timeout(Duration::from_secs(10), server).await {
        Ok(Ok(Err(e))) => return Err(e.into()),
        Ok(Err(e)) => return Err(e.into()),
        _ => {}
    }
    let files = coord.export()?;
    let p = coord.progress_now();
    if !quiet {
        print!("{}", coord.summary());
        eprintln!("coordinator: exports written:");
        for f in &files {
            eprintln!("  {}", f.display());
        }
    }
    if p.determinism_failures > 0 {
        eprintln!("coordinator: {} DETERMINISM FAILURES (see determinism_failures.csv)", p.determinism_failures);
    }
    if stopped {
        eprintln!("coordinator: stopped with {} of {} runs done; start it again to resume", p.done, p.total);
        return Ok(ExitCode::from(130));
    }
    if p.done < p.total {
        eprintln!("coordinator: cancelled with {} of {} runs done; start it again to resume", p.done, p.total);
        return Ok(ExitCode::from(3));
    }
    Ok(if p.determinism_failures > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
