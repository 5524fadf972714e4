//! `clowder slurm EXPERIMENT --workers W`: writes (and with `--submit`,
//! submits) an sbatch script that starts W pilot workers as a job array; each
//! connects to the study's coordinator, executes runs on its allocated cores
//! until the study is done, and drains on SLURM's pre-timeout signal so that
//! no run is lost when the time limit hits (unfinished runs are handed back
//! and leased again to another pilot).
//!
//! The coordinator runs outside the job (a login or service node): start it
//! with `clowder coordinator EXPERIMENT --listen 0.0.0.0:7878` first; its
//! address and token are then read from the results folder (which, like the
//! clowder binary, must be on a file system the compute nodes see).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clowder_coordinator::Experiment;

/// Arguments of `clowder slurm`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Experiment file (TOML).
    pub experiment: PathBuf,
    /// Pilot workers (array tasks).
    #[arg(long)]
    pub workers: u32,
    /// Cores (= slots, one run each) per worker.
    #[arg(long, default_value_t = 1)]
    pub cpus_per_worker: u32,
    /// Coordinator URL (default: read from the results folder's coordinator.addr).
    #[arg(long)]
    pub coordinator: Option<String>,
    /// Token file the workers read (default: the results folder's `token`).
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// CA certificate for an https:// coordinator.
    #[arg(long)]
    pub tls_ca: Option<PathBuf>,
    /// Results folder root (as given to the coordinator's --output).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Time limit per pilot (sbatch --time).
    #[arg(long, default_value = "24:00:00")]
    pub time: String,
    /// Seconds before the time limit at which SLURM signals the workers to drain.
    #[arg(long, default_value_t = 120)]
    pub signal_seconds: u32,
    /// Memory per worker in MiB (default: slots × the experiment's memory per run + 512).
    #[arg(long)]
    pub mem_mb: Option<u64>,
    /// Partition.
    #[arg(long)]
    pub partition: Option<String>,
    /// Account.
    #[arg(long)]
    pub account: Option<String>,
    /// More sbatch options, each as written after `#SBATCH` (repeatable).
    #[arg(long = "sbatch-option")]
    pub sbatch_options: Vec<String>,
    /// clowder binary on the compute nodes (default: this one).
    #[arg(long)]
    pub clowder: Option<PathBuf>,
    /// Where to write the script (default: <results>/slurm/workers.sbatch).
    #[arg(long)]
    pub script: Option<PathBuf>,
    /// Submit the script with sbatch.
    #[arg(long)]
    pub submit: bool,
}

/// Quotes a word for bash (single quotes).
fn sh(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-:=@+,%".contains(&b)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn absolute(p: &Path) -> anyhow::Result<PathBuf> {
    std::path::absolute(p).with_context(|| format!("resolving {}", p.display()))
}

/// The sbatch script.
pub fn script(args: &Args, exp: &Experiment, url: &str, token_file: &Path, clowder: &Path) -> anyhow::Result<String> {
    if args.workers == 0 || args.workers > 100_000 {
        bail!("--workers must be between 1 and 100000");
    }
    if args.cpus_per_worker == 0 || args.cpus_per_worker > 4096 {
        bail!("--cpus-per-worker must be between 1 and 4096");
    }
    if !args.time.bytes().all(|b| b.is_ascii_digit() || b == b':' || b == b'-') {
        bail!("--time {:?} is not a SLURM time (e.g. 24:00:00 or 2-00:00:00)", args.time);
    }
    let results = absolute(&exp.results_dir)?;
    let logs = results.join("slurm");
    let mem = args.mem_mb.unwrap_or(u64::from(args.cpus_per_worker) * exp.spec.limits.memory_mb + 512);
    let drain = args.signal_seconds.saturating_sub(20).max(10);
    let mut s = String::new();
    writeln!(s, "#!/bin/bash")?;
    writeln!(s, "# clowder pilot workers for study {:?}, written by `clowder slurm`.", exp.spec.name)?;
    writeln!(
        s,
        "# Each array task is one worker with {} slots; it leases runs from the coordinator",
        args.cpus_per_worker
    )?;
    writeln!(s, "# until the study is done. {}s before the time limit SLURM sends SIGTERM: the", args.signal_seconds)?;
    writeln!(s, "# worker hands queued runs back, lets running ones finish for {drain}s, then hands those back.")?;
    writeln!(s, "#SBATCH --job-name={}", sh(&format!("clowder-{}", exp.spec.name)))?;
    writeln!(s, "#SBATCH --array=0-{}", args.workers - 1)?;
    writeln!(s, "#SBATCH --ntasks=1")?;
    writeln!(s, "#SBATCH --cpus-per-task={}", args.cpus_per_worker)?;
    writeln!(s, "#SBATCH --mem={mem}M")?;
    writeln!(s, "#SBATCH --time={}", args.time)?;
    writeln!(s, "#SBATCH --signal=TERM@{}", args.signal_seconds)?;
    writeln!(s, "#SBATCH --output={}", sh(&logs.join("worker-%A_%a.out").to_string_lossy()))?;
    if let Some(p) = &args.partition {
        writeln!(s, "#SBATCH --partition={}", sh(p))?;
    }
    if let Some(a) = &args.account {
        writeln!(s, "#SBATCH --account={}", sh(a))?;
    }
    for o in &args.sbatch_options {
        if o.contains('\n') {
            bail!("--sbatch-option must be one line");
        }
        writeln!(s, "#SBATCH {o}")?;
    }
    writeln!(s, "set -euo pipefail")?;
    let mut cmd = vec![
        sh(&clowder.to_string_lossy()),
        "worker".into(),
        "--coordinator".into(),
        sh(url),
        "--token-file".into(),
        sh(&token_file.to_string_lossy()),
        "--slots".into(),
        args.cpus_per_worker.to_string(),
        "--name".into(),
        "\"slurm-${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"".into(),
        "--drain-timeout".into(),
        drain.to_string(),
    ];
    if let Some(ca) = &args.tls_ca {
        cmd.push("--tls-ca".into());
        cmd.push(sh(&absolute(ca)?.to_string_lossy()));
    }
    // srun makes the worker a job step: SLURM's --signal reaches it, and the
    // step's cgroup holds its cores (the worker pins within them) and memory.
    writeln!(s, "exec srun --ntasks=1 --cpus-per-task={} {}", args.cpus_per_worker, cmd.join(" "))?;
    Ok(s)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut exp = Experiment::load(&args.experiment)?;
    if let Some(out) = &args.output {
        exp.results_dir = out.join(&exp.spec.name);
    }
    let results = absolute(&exp.results_dir)?;
    let url = match &args.coordinator {
        Some(u) => super::common::normalise_url(u),
        None => {
            let f = results.join(clowder_coordinator::ADDRESS_FILE);
            let u = std::fs::read_to_string(&f).with_context(|| {
                format!("no --coordinator given and no {} (start `clowder coordinator` first)", f.display())
            })?;
            u.trim().to_string()
        }
    };
    if url.contains("://0.0.0.0:") || url.contains("://[::]:") {
        bail!(
            "the coordinator listens on all interfaces ({url}); pass --coordinator with a host name the nodes can reach"
        );
    }
    let token_file = absolute(&args.token_file.clone().unwrap_or_else(|| results.join("token")))?;
    if !token_file.is_file() {
        bail!("token file {} does not exist (the coordinator writes it, or pass --token-file)", token_file.display());
    }
    let clowder = match &args.clowder {
        Some(c) => absolute(c)?,
        None => std::env::current_exe().context("locating the clowder binary")?,
    };
    let text = script(&args, &exp, &url, &token_file, &clowder)?;
    let logs = results.join("slurm");
    std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
    let path = args.script.clone().unwrap_or_else(|| logs.join("workers.sbatch"));
    std::fs::write(&path, &text).with_context(|| format!("writing {}", path.display()))?;
    println!("{}", path.display());
    if !args.submit {
        eprintln!("submit with: sbatch {}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let out = std::process::Command::new("sbatch")
        .arg("--parsable")
        .arg(&path)
        .output()
        .context("running sbatch (is SLURM installed and on PATH?)")?;
    if !out.status.success() {
        bail!("sbatch failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
    }
    let job = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let jobs = logs.join("jobs.txt");
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&jobs)?;
    std::io::Write::write_all(&mut f, format!("{job}\n").as_bytes())?;
    println!("submitted job {job} ({} workers × {} cores)", args.workers, args.cpus_per_worker);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_is_safe() {
        assert_eq!(sh("abc/d.e"), "abc/d.e");
        assert_eq!(sh("a b"), "'a b'");
        assert_eq!(sh("it's"), r"'it'\''s'");
        assert_eq!(sh("$(rm -rf /)"), "'$(rm -rf /)'");
    }
}
