//! `clowder worker --coordinator URL`: joins a coordinator and executes runs,
//! one per pinned core, until the study is done. SIGTERM (and SLURM's
//! pre-timeout signal) drains; a second signal stops running runs at once.

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clowder_worker::{Control, Executor, ProcessExecutor, ThreadExecutor, WorkerOptions, run_worker};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

use super::common::{self, ClientTlsArgs, TokenArgs};

/// How runs are isolated from the worker.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// Each run in its own child process (per-run memory limit; a crash takes nothing else down).
    Process,
    /// Runs on the slot threads of the worker process (no memory limit).
    Thread,
}

/// Arguments of `clowder worker`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Coordinator URL (http://host:port or https://host:port).
    #[arg(long, required_unless_present = "exec_child")]
    pub coordinator: Option<String>,
    #[command(flatten)]
    pub token: TokenArgs,
    #[command(flatten)]
    pub tls: ClientTlsArgs,
    /// Runs at the same time (default: one per core this process may use).
    #[arg(long)]
    pub slots: Option<usize>,
    /// Do not pin slot threads to cores.
    #[arg(long)]
    pub no_pin: bool,
    /// Name in provenance and status (default: the host name).
    #[arg(long)]
    pub name: Option<String>,
    /// Local address to connect from.
    #[arg(long)]
    pub bind: Option<IpAddr>,
    /// Project cache folder (default: $CLOWDER_CACHE or ~/.cache/clowder/projects).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Memory limit per run in MiB (default: the experiment's).
    #[arg(long)]
    pub memory_mb: Option<u64>,
    /// CPU time limit per run in seconds, 0 for none (default: the experiment's).
    #[arg(long)]
    pub cpu_seconds: Option<u64>,
    /// Limit memory with RLIMIT_AS even where cgroups are writable.
    #[arg(long)]
    pub no_cgroups: bool,
    /// How runs are isolated.
    #[arg(long, value_enum, default_value_t = Isolation::Process)]
    pub isolation: Isolation,
    /// On SIGTERM, let running runs finish for at most this many seconds, then hand them back.
    #[arg(long, default_value_t = 60)]
    pub drain_timeout: u64,
    /// Exit when the coordinator has been unreachable for this many seconds.
    #[arg(long, default_value_t = 600)]
    pub reconnect_timeout: u64,
    /// Append one line per acknowledged result to this file.
    #[arg(long)]
    pub journal: Option<PathBuf>,
    /// Print only errors.
    #[arg(long)]
    pub quiet: bool,
    /// Internal: execute one run given on stdin (started by the worker itself).
    #[arg(long, hide = true)]
    pub exec_child: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.exec_child {
        let code = clowder_worker::exec::child_main();
        return Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)));
    }
    let Some(url) = &args.coordinator else { anyhow::bail!("--coordinator is required") };
    let mut opts = WorkerOptions::new(common::normalise_url(url));
    opts.token = args.token.get()?;
    opts.tls_ca_pem = args.tls.ca()?;
    opts.tls_domain = args.tls.tls_domain.clone();
    if let Some(s) = args.slots {
        if s == 0 || s > 4096 {
            anyhow::bail!("--slots must be between 1 and 4096");
        }
        opts.slots = s;
    }
    opts.pin = !args.no_pin;
    if let Some(n) = &args.name {
        opts.name = n.clone();
    }
    opts.bind = args.bind;
    if let Some(c) = &args.cache {
        opts.cache_dir = c.clone();
    }
    opts.memory_limit = args.memory_mb.map(|m| m.saturating_mul(1 << 20));
    opts.cpu_limit = args.cpu_seconds;
    opts.cgroups = !args.no_cgroups;
    opts.drain_timeout = Duration::from_secs(args.drain_timeout);
    opts.reconnect_timeout = Duration::from_secs(args.reconnect_timeout);
    opts.journal = args.journal.clone();
    opts.log = !args.quiet;
    let executor: Arc<dyn Executor> = match args.isolation {
        Isolation::Process => Arc::new(ProcessExecutor::current_exe().map_err(anyhow::Error::msg)?),
        Isolation::Thread => Arc::new(ThreadExecutor),
    };
    let quiet = args.quiet;
    common::runtime(2)?.block_on(async move {
        let (tx, rx) = watch::channel(Control::Run);
        let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
        let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
        let name = opts.name.clone();
        let mut worker = tokio::spawn(run_worker(opts, executor, rx));
        let mut signals = 0;
        let joined = loop {
            tokio::select! {
                r = &mut worker => break r,
                _ = term.recv() => signals += 1,
                _ = int.recv() => signals += 1,
            }
            let next = if signals == 1 { Control::Drain } else { Control::Abort };
            if !quiet {
                eprintln!(
                    "worker {name}: {}",
                    if signals == 1 {
                        "draining: queued runs are handed back, running ones may finish (signal again to stop them)"
                    } else {
                        "stopping running runs and handing them back"
                    }
                );
            }
            let _ = tx.send(next);
        };
        match joined {
            Ok(Ok(stats)) => {
                if !quiet {
                    eprintln!(
                        "worker {name}: {} results delivered ({} duplicates), {} handed back, {} not accepted, {} undelivered",
                        stats.runs, stats.duplicates, stats.released, stats.rejected, stats.undelivered
                    );
                }
                Ok(if stats.undelivered > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
            }
            Ok(Err(e)) => Err(anyhow::Error::new(e)),
            Err(e) => Err(anyhow::anyhow!("worker task: {e}")),
        }
    })
}
