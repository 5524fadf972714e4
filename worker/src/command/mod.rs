//! Runs of an external command-line generator (engine kind `command`, docs/engines.md).
//!
//! The tool runs with the guarantees of clowder's own runs: in its own process group, pinned
//! to the slot's core, under the run's memory limit (the slot's cgroup, else `RLIMIT_AS`) and
//! a wall-time limit, in a working folder made fresh for the run, with its stdout and stderr
//! kept on disk (their tail goes into the stored result). A tool stopped by a limit still
//! yields a result with status `limit` and whatever partial result it wrote; a tool that exits
//! non-zero is an `error` with the tail of its stderr.

pub mod parsers;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clowder_proto::command::{self as wire, CommandConfig};
use clowder_proto::{RunResult, RunSpec, RunStatus, TimelineSample};

use crate::exec::{ExecOutcome, failure};
use crate::limits::{MemoryLimiter, set_rlimit_as, set_rlimit_cpu};
use crate::{Cancel, Job, SlotEnv};
use parsers::ToolResult;

/// Covered/total scale of tools that report coverage as a fraction only: `covered` and
/// `total_targets` are then parts per million.
pub const FRACTION_SCALE: u32 = 1_000_000;

/// Timeline steps per second: the exports' time axis (30 steps are one Scratch second).
const STEPS_PER_SECOND: f64 = 30.0;

/// Grace between SIGTERM and SIGKILL when the wall-time limit ends a tool (lets it write).
const TERM_GRACE: Duration = Duration::from_secs(2);

/// Stderr kept in a result's `error`.
const TAIL_BYTES: usize = 2000;

/// The folder under which run folders are made: `$CLOWDER_COMMAND_WORKDIR`, else
/// `<results>/work` when the study's results folder is on this machine, else the temp folder.
fn work_root(cfg: &CommandConfig) -> PathBuf {
    if let Some(d) = std::env::var_os("CLOWDER_COMMAND_WORKDIR") {
        return PathBuf::from(d);
    }
    match cfg.vars.get("results").map(PathBuf::from) {
        Some(r) if r.is_dir() => r.join("work"),
        // SAFETY: getuid cannot fail.
        _ => std::env::temp_dir().join(format!("clowder-work-{}", unsafe { libc::getuid() })),
    }
}

/// The last `TAIL_BYTES` of a file (however large the file), trimmed to whole lines.
fn tail_of(path: &Path) -> String {
    use std::io::{Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else { return String::new() };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(TAIL_BYTES as u64);
    let mut buf = Vec::with_capacity(TAIL_BYTES);
    if f.seek(SeekFrom::Start(start)).is_err() || f.take(TAIL_BYTES as u64).read_to_end(&mut buf).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&buf);
    let text = if start > 0 { text.split_once('\n').map_or(&*text, |x| x.1) } else { &text };
    text.trim().to_string()
}

/// A prepared run: argv, environment, folders.
struct Prepared {
    argv: Vec<String>,
    env: BTreeMap<String, String>,
    dir: PathBuf,
    result_file: Option<PathBuf>,
}

/// Makes the run folder fresh, copies the subject in and fills in the placeholders.
fn prepare(job: &Job, cfg: &CommandConfig) -> Result<Prepared, (RunStatus, String)> {
    let spec = &job.spec;
    let infra = |m: String| (RunStatus::InfraFailure, m);
    let dir = work_root(cfg).join(&spec.run_id);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| infra(format!("clearing {}: {e}", dir.display())))?;
    }
    let subject_dir = dir.join("subject");
    let out = dir.join("out");
    for d in [&subject_dir, &out] {
        std::fs::create_dir_all(d).map_err(|e| infra(format!("creating {}: {e}", d.display())))?;
    }
    let file_name = if spec.file_name.is_empty() { spec.project_name.clone() } else { spec.file_name.clone() };
    if file_name.is_empty() || file_name.contains('/') || file_name.starts_with('.') {
        return Err((RunStatus::Error, format!("subject file name {file_name:?} is not a plain file name")));
    }
    let bytes = std::fs::read(&job.project_path).map_err(|e| infra(format!("reading cached subject: {e}")))?;
    if blake3::hash(&bytes).to_hex().as_str() != spec.project_hash {
        return Err(infra(format!("cached subject {file_name} does not match its hash")));
    }
    let subject = subject_dir.join(&file_name);
    std::fs::write(&subject, &bytes).map_err(|e| infra(format!("writing {}: {e}", subject.display())))?;
    let module = file_name.strip_suffix(".py").unwrap_or(&file_name).to_string();
    let budget = spec.budget.as_ref().map(|b| b.amount).unwrap_or(0);
    let unit = crate::exec::budget_of(spec).map(|b| b.unit().to_string()).unwrap_or_default();
    let path = |p: &Path| p.to_string_lossy().to_string();
    let lookup = |name: &str| -> Option<String> {
        Some(match name {
            "subject" => path(&subject),
            "subject_dir" => path(&subject_dir),
            "module" => module.clone(),
            "seed" => spec.seed.to_string(),
            "budget" => budget.to_string(),
            "budget_unit" => unit.clone(),
            "out" => path(&out),
            "workdir" => path(&dir),
            "run_id" => spec.run_id.clone(),
            other => return cfg.params.get(other).or_else(|| cfg.vars.get(other)).cloned(),
        })
    };
    let bad = |e: String| (RunStatus::Error, e);
    let argv = cfg.command.iter().map(|a| wire::substitute(a, &lookup)).collect::<Result<Vec<_>, _>>().map_err(bad)?;
    let mut env = BTreeMap::new();
    for (k, v) in &cfg.env {
        env.insert(k.clone(), wire::substitute(v, &lookup).map_err(bad)?);
    }
    let result_file = match cfg.result_file.as_str() {
        "" => None,
        f => Some(PathBuf::from(wire::substitute(f, &lookup).map_err(bad)?)),
    };
    Ok(Prepared { argv, env, dir, result_file })
}

/// How the tool's process ended.
struct Ended {
    status: libc::c_int,
    maxrss: u64,
    cpu_secs: f64,
    wall_limited: bool,
    cancelled: bool,
}

/// Waits for the tool, enforcing the wall-time limit and cancellation on its whole group.
fn supervise(pid: u32, wall: Duration, cancel: &Cancel) -> std::io::Result<Ended> {
    let t0 = Instant::now();
    let pgid = pid as libc::pid_t;
    let mut termed_at: Option<Instant> = None;
    let (mut wall_limited, mut cancelled) = (false, false);
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: zeroed rusage is valid; pointers are to locals.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above; the pid is our unreaped child.
        let r = unsafe { libc::wait4(pgid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pgid {
            // Whatever the tool left running in its group goes with it.
            // SAFETY: plain syscall on the tool's own process group.
            unsafe { libc::killpg(pgid, libc::SIGKILL) };
            let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            return Ok(Ended {
                status,
                maxrss: (usage.ru_maxrss.max(0) as u64) * 1024,
                cpu_secs: secs(usage.ru_utime) + secs(usage.ru_stime),
                wall_limited,
                cancelled,
            });
        }
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        if cancel.is_cancelled() && !cancelled {
            cancelled = true;
            // SAFETY: as above.
            unsafe { libc::killpg(pgid, libc::SIGKILL) };
        }
        if !wall_limited && t0.elapsed() >= wall {
            wall_limited = true;
            termed_at = Some(Instant::now());
            // SAFETY: as above.
            unsafe { libc::killpg(pgid, libc::SIGTERM) };
        }
        if termed_at.is_some_and(|t| t.elapsed() >= TERM_GRACE) {
            termed_at = None;
            // SAFETY: as above.
            unsafe { libc::killpg(pgid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts the tool: own process group, dies with the worker, pinned, limited.
fn spawn(
    p: &Prepared,
    core: Option<usize>,
    rlimit: Option<u64>,
    cpu_limit: u64,
) -> std::io::Result<std::process::Child> {
    let file = |name: &str| std::fs::File::create(p.dir.join(name));
    let mut cmd = Command::new(&p.argv[0]);
    cmd.args(&p.argv[1..])
        .envs(&p.env)
        .current_dir(&p.dir)
        .stdin(Stdio::null())
        .stdout(file("stdout.txt")?)
        .stderr(file("stderr.txt")?);
    // SAFETY: getpid cannot fail.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the hook only makes async-signal-safe calls (setpgid, prctl, getppid, signal,
    // sched_setaffinity, setrlimit) between fork and exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(move || {
            // Its own group: limits and cancellation reach everything it starts.
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            if let Some(c) = core {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(c, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            if let Some(bytes) = rlimit {
                set_rlimit_as(bytes)?;
            }
            if cpu_limit > 0 {
                set_rlimit_cpu(cpu_limit)?;
            }
            Ok(())
        });
    }
    cmd.spawn()
}

/// Reads and parses what the tool wrote.
fn parse_output(cfg: &CommandConfig, p: &Prepared) -> Result<ToolResult, String> {
    let (what, file) = match &p.result_file {
        Some(f) => (f.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default(), f.clone()),
        None => ("stdout".to_string(), p.dir.join("stdout.txt")),
    };
    if !file.exists() {
        return Err(format!("{what}: not written by the tool ({})", file.display()));
    }
    let text = parsers::read_bounded(&file)?;
    match cfg.parser.as_str() {
        wire::PARSER_PYNGUIN => parsers::pynguin_statistics(&text, cfg.timeline_interval),
        wire::PARSER_JSON_LAST_LINE => parsers::json_last_line(&text),
        other => Err(format!("unknown parser {other:?}")),
    }
    .map_err(|e| format!("{what}: {e}"))
}

/// A tool's result as a wire result: coverage, timeline on the exports' time axis (change
/// points only), mutation score and a digest of all of it.
fn to_result(t: &ToolResult, status: RunStatus, error: String, deterministic: bool) -> RunResult {
    let (covered, total) =
        t.counts.unwrap_or(((t.coverage * f64::from(FRACTION_SCALE)).round() as u32, FRACTION_SCALE));
    let mut timeline = vec![TimelineSample::default()];
    for &(secs, c) in &t.timeline {
        let steps = (secs * STEPS_PER_SECOND).round() as u64;
        let cov = ((c * f64::from(total)).round() as u32).min(total);
        let last = timeline.last().map_or(0, |s| s.covered);
        if cov != last {
            timeline.push(TimelineSample { steps, covered: cov, ..Default::default() });
        }
    }
    let end_steps = t.timeline.last().map_or(0, |&(s, _)| (s * STEPS_PER_SECOND).round() as u64);
    let full = timeline.iter().find(|s| s.covered >= total && total > 0).map(|s| s.steps);
    let mut h = blake3::Hasher::new();
    h.update(format!("{covered}/{total}|{:?}|", t.mutation_score).as_bytes());
    for s in &timeline {
        h.update(format!("{}:{};", s.steps, s.covered).as_bytes());
    }
    RunResult {
        status: status as i32,
        error,
        coverage: t.coverage,
        covered,
        total_targets: total,
        steps: end_steps,
        digest: h.finalize().to_hex().to_string(),
        timeline,
        full_coverage: full.is_some() || covered >= total,
        steps_to_full_coverage: full.unwrap_or(0),
        mutation_score: t.mutation_score,
        reproducible: deterministic,
        geometry: "none".into(),
        ..Default::default()
    }
}

/// Executes `job` if it is a command run (its configuration says so); `None` for runs of
/// clowder's own engine. The executors call this first.
pub fn dispatch(job: &Job, env: &SlotEnv, cancel: &Cancel) -> Option<ExecOutcome> {
    Some(match CommandConfig::from_config_json(&job.spec.config_json)? {
        Ok(cfg) => execute(job, env, &cfg, cancel),
        Err(e) => ExecOutcome { result: failure(RunStatus::Error, e), memory_limit_kind: "none", ..Default::default() },
    })
}

/// Executes a command run on the calling (pinned) thread. Never panics on tool output.
pub fn execute(job: &Job, env: &SlotEnv, cfg: &CommandConfig, cancel: &Cancel) -> ExecOutcome {
    let spec: &RunSpec = &job.spec;
    let limit = spec.memory_limit_bytes;
    // Thread isolation has no cgroup: the tool gets RLIMIT_AS like a process run would.
    let (memory, kind) = match (&env.memory, limit) {
        (_, 0) => (&MemoryLimiter::None, "none"),
        (MemoryLimiter::None, _) => (&MemoryLimiter::RlimitAs, "rlimit-as"),
        (m, _) => (m, m.kind()),
    };
    let mut outcome = ExecOutcome { memory_limit_kind: kind, ..Default::default() };
    let p = match prepare(job, cfg) {
        Ok(p) => p,
        Err((status, e)) => {
            outcome.result = failure(status, e);
            return outcome;
        }
    };
    let oom_before = match memory.prepare(limit) {
        Ok(n) => n,
        Err(e) => {
            outcome.result = failure(RunStatus::InfraFailure, e);
            return outcome;
        }
    };
    let rlimit = matches!(memory, MemoryLimiter::RlimitAs).then_some(limit);
    let mut child = match spawn(&p, env.core, rlimit, spec.cpu_limit_seconds) {
        Ok(c) => c,
        Err(e) => {
            // A tool missing on this machine is the machine's problem: another may have it.
            let why = format!("starting {}: {e} (did the experiment's set-up run on this machine?)", p.argv[0]);
            outcome.result = failure(RunStatus::InfraFailure, why);
            return outcome;
        }
    };
    let pid = child.id();
    if let Err(e) = memory.attach(pid) {
        // SAFETY: plain syscall on the tool's own group.
        unsafe { libc::killpg(pid as libc::pid_t, libc::SIGKILL) };
        let _ = child.wait();
        outcome.result = failure(RunStatus::InfraFailure, e);
        return outcome;
    }
    let ended = match supervise(pid, Duration::from_secs(cfg.wall_seconds.max(1)), cancel) {
        Ok(e) => e,
        Err(e) => {
            outcome.result = failure(RunStatus::InfraFailure, format!("waiting for the tool (pid {pid}): {e}"));
            return outcome;
        }
    };
    let mem = memory.report(oom_before, ended.maxrss);
    outcome.memory_peak_bytes = mem.peak_bytes;
    outcome.cpu_ms = (ended.cpu_secs * 1000.0) as u64;
    outcome.result = classify(cfg, &p, &ended, mem.oom_killed, rlimit.is_some(), limit, spec.cpu_limit_seconds);
    outcome
}

/// The status of an ended tool and its (partial) result.
fn classify(
    cfg: &CommandConfig,
    p: &Prepared,
    e: &Ended,
    oom_killed: bool,
    rlimit: bool,
    limit: u64,
    cpu_limit: u64,
) -> RunResult {
    let stderr = tail_of(&p.dir.join("stderr.txt"));
    let logs = format!("full output in {}", p.dir.display());
    let signal = libc::WIFSIGNALED(e.status).then(|| libc::WTERMSIG(e.status));
    let memory_hit = oom_killed
        || (rlimit
            && ["MemoryError", "Cannot allocate memory", "memory allocation of", "std::bad_alloc", "out of memory"]
                .iter()
                .any(|m| stderr.contains(m)));
    let limited = |what: String, phase: &str| {
        // Killed by a limit: whatever the tool wrote until then is its partial result.
        let mut r = match parse_output(cfg, p) {
            Ok(t) => to_result(&t, RunStatus::Limit, format!("{what}; partial result"), cfg.deterministic),
            Err(why) => failure(RunStatus::Limit, format!("{what}; no partial result ({why})")),
        };
        r.limit_phase = phase.to_string();
        r
    };
    if e.cancelled {
        failure(RunStatus::Cancelled, "cancelled")
    } else if e.wall_limited {
        limited(format!("wall-time limit of {} s reached, the tool was stopped", cfg.wall_seconds), "wall")
    } else if memory_hit {
        let how = if oom_killed { "killed by the cgroup OOM killer" } else { "RLIMIT_AS: allocation failed" };
        limited(format!("memory limit of {} MiB exceeded ({how})", limit >> 20), "memory")
    } else if cpu_limit > 0
        && (signal == Some(libc::SIGXCPU) || (signal == Some(libc::SIGKILL) && e.cpu_secs >= cpu_limit as f64))
    {
        // As for clowder's own runs: an infrastructure guard, never a result.
        failure(
            RunStatus::InfraFailure,
            format!(
                "{}{cpu_limit} s exceeded (RLIMIT_CPU after {:.0} s; depends on the machine's speed and load, so \
                 not a result)",
                clowder_proto::CPU_LIMIT_REASON,
                e.cpu_secs
            ),
        )
    } else if signal == Some(libc::SIGKILL) {
        failure(RunStatus::InfraFailure, format!("the tool was killed (SIGKILL) from outside; {logs}"))
    } else if let Some(sig) = signal {
        failure(RunStatus::Error, format!("the tool crashed with signal {sig}; {logs}; stderr ends:\n{stderr}"))
    } else if libc::WEXITSTATUS(e.status) != 0 {
        let code = libc::WEXITSTATUS(e.status);
        failure(RunStatus::Error, format!("the tool exited with code {code}; {logs}; stderr ends:\n{stderr}"))
    } else {
        match parse_output(cfg, p) {
            Ok(t) => to_result(&t, RunStatus::Ok, String::new(), cfg.deterministic),
            Err(why) => failure(RunStatus::Error, format!("parsing the tool's result: {why}; {logs}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_become_change_points_on_the_step_axis() {
        let t = ToolResult {
            coverage: 0.5,
            counts: None,
            timeline: vec![(1.0, 0.25), (2.0, 0.25), (3.0, 0.5)],
            mutation_score: None,
        };
        let r = to_result(&t, RunStatus::Ok, String::new(), false);
        let pts: Vec<(u64, u32)> = r.timeline.iter().map(|s| (s.steps, s.covered)).collect();
        assert_eq!(pts, vec![(0, 0), (30, 250_000), (90, 500_000)], "unchanged points dropped");
        assert_eq!((r.covered, r.total_targets, r.steps), (500_000, FRACTION_SCALE, 90));
        assert!(!r.full_coverage && !r.reproducible);
        let again = to_result(&t, RunStatus::Ok, String::new(), true);
        assert_eq!(again.digest, r.digest, "the digest is of the result only");
        assert!(again.reproducible);
        let counted = ToolResult { counts: Some((4, 4)), coverage: 1.0, timeline: vec![(0.5, 1.0)], ..t };
        let r = to_result(&counted, RunStatus::Ok, String::new(), false);
        assert!(r.full_coverage && r.steps_to_full_coverage == 15 && r.covered == 4);
    }
}
