//! Executing one run: the [`Executor`] seam, the mapping from testgen's
//! outcome to the wire result, and the two real executors.
//!
//! - [`ProcessExecutor`] (the default): each run executes in a child process
//!   (`clowder worker --exec-child`) started from the slot's pinned thread, so
//!   it inherits the pinning; its memory is limited per run (cgroup or
//!   `RLIMIT_AS`), and a run that crashes, overflows its stack or exceeds its
//!   memory takes nothing else down. The child executes the run synchronously
//!   on its (pinned) main thread and streams timeline samples back over a pipe.
//! - [`ThreadExecutor`]: the run executes on the calling thread in this
//!   process (for `clowder verify`, tests, and embedding); no memory limit.
//!
//! Both call [`run_in_process`], so they produce identical results.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use clowder_proto::{RunResult, RunSpec, RunStatus, TimelineSample};
use clowder_testgen::{AlgorithmConfig, Budget, RunOutcome};
use clowder_vm::LoadLimits;
use prost::Message;

use crate::limits::{MemoryLimiter, set_rlimit_as, set_rlimit_cpu};

/// A leased run whose project is in the local cache.
#[derive(Debug, Clone)]
pub struct Job {
    /// The run as leased.
    pub spec: RunSpec,
    /// The project file in the cache.
    pub project_path: PathBuf,
}

/// What a slot provides to an executor.
#[derive(Debug)]
pub struct SlotEnv {
    /// Slot number within the worker.
    pub slot: usize,
    /// The core the slot's thread is pinned to.
    pub core: Option<usize>,
    /// Memory limiting for this slot's runs.
    pub memory: MemoryLimiter,
}

/// Cancels a running run (lease revoked, worker draining).
#[derive(Debug, Default)]
pub struct Cancel {
    cancelled: AtomicBool,
    child: Mutex<Option<u32>>,
}

impl Cancel {
    /// Requests cancellation; kills the run's process if it has one.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        if let Some(pid) = *self.child.lock().unwrap_or_else(|e| e.into_inner()) {
            // SAFETY: plain syscall; the pid is our own child, not yet reaped
            // (the slot clears it before waiting).
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
        }
    }

    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    fn set_child(&self, pid: Option<u32>) {
        *self.child.lock().unwrap_or_else(|e| e.into_inner()) = pid;
    }
}

/// Executes runs synchronously on the calling (pinned) thread.
pub trait Executor: Send + Sync + 'static {
    /// Runs `job`; calls `on_sample` for every coverage change point while it
    /// runs. The result's status says how it ended; provenance is the slot's job.
    fn execute(
        &self,
        job: &Job,
        env: &SlotEnv,
        on_sample: &mut dyn FnMut(TimelineSample),
        cancel: &Cancel,
    ) -> ExecOutcome;

    /// Provenance name of the isolation (`process`, `thread`, …).
    fn isolation(&self) -> &'static str;
}

/// A run's result plus what the executor measured about it.
#[derive(Debug, Clone, Default)]
pub struct ExecOutcome {
    /// The result (status, metrics, timeline, digest).
    pub result: RunResult,
    /// Peak memory, bytes (0 if unknown).
    pub memory_peak_bytes: u64,
    /// Which memory limit applied.
    pub memory_limit_kind: &'static str,
    /// CPU time of the run, milliseconds (0 if unknown).
    pub cpu_ms: u64,
}

/// CPU time of the calling thread, milliseconds (0 if the clock is unavailable).
fn thread_cpu_ms() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec.max(0) as u64 * 1000 + ts.tv_nsec.max(0) as u64 / 1_000_000
}

/// A failed run's result.
pub fn failure(status: RunStatus, error: impl Into<String>) -> RunResult {
    RunResult { status: status as i32, error: error.into(), ..Default::default() }
}

/// The work cap a leased run runs with ([`clowder_testgen::RunOptions::work_cap`], 0 = none):
/// the spec's 0 is the engine's default for its budget, [`clowder_proto::NO_WORK_CAP`] none.
pub fn work_cap_of(spec: &RunSpec) -> u64 {
    match spec.work_cap {
        0 => budget_of(spec).map_or(clowder_testgen::DEFAULT_WORK_CAP, clowder_testgen::default_work_cap),
        clowder_proto::NO_WORK_CAP => 0,
        n => n,
    }
}

/// testgen's outcome as a wire result; `work_cap` is the cap the run ran with (for the reason
/// of a run it ended). The one place that maps result fields: when testgen grows a field, add
/// it here (and to the proto and exports).
pub fn outcome_to_result(o: &RunOutcome, work_cap: u64) -> RunResult {
    // The work cap ends a run at the same point on every machine: a final, partial result.
    let (status, error) = match &o.limit {
        Some(phase) => {
            (RunStatus::Limit, format!("work cap of {work_cap} reached in the {phase} (deterministic; partial result)"))
        }
        None => (RunStatus::Ok, String::new()),
    };
    RunResult {
        status: status as i32,
        error,
        work: o.work,
        limit_phase: o.limit.clone().unwrap_or_default(),
        coverage: o.coverage,
        covered: o.covered,
        total_targets: o.total_targets,
        steps: o.steps,
        executions: o.executions,
        evaluations: o.evaluations,
        digest: o.digest.clone(),
        timeline: o
            .timeline
            .iter()
            .map(|p| TimelineSample {
                steps: p.steps,
                executions: p.executions,
                covered: p.covered,
                ..Default::default()
            })
            .collect(),
        suite_json: serde_json::to_string(&o.suite).unwrap_or_default(),
        reliable_covered: o.reliable_covered,
        dynamic_suite_json: o.dynamic_suite.clone().unwrap_or_default(),
        tests_before_min: o.tests_before_min,
        tests_after_min: o.tests_after_min,
        events_before_min: o.events_before_min,
        events_after_min: o.events_after_min,
        steps_to_full_coverage: o.steps_to_full_coverage.unwrap_or(0),
        full_coverage: o.steps_to_full_coverage.is_some(),
        geometry: o.geometry.clone(),
        reproducible: o.reproducible,
        unknown_opcodes: o.unknown_opcodes.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        mutants: o.mutation.as_ref().map_or_else(Vec::new, |r| {
            r.verdicts
                .iter()
                .map(|v| clowder_proto::MutantVerdict {
                    operator: v.operator.name().to_string(),
                    block_id: v.block_id.clone(),
                    mutant_id: v.mutant_id.clone(),
                    verdict: v.verdict.as_str().to_string(),
                    stratum_size: r.stratum_size(v.operator),
                })
                .collect()
        }),
        mutants_generated: o.mutation.as_ref().map_or(0, |r| r.total.generated),
        mutants_killed: o.mutation.as_ref().map_or(0, |r| r.total.killed),
        mutants_excluded: o.mutation.as_ref().map_or(0, |r| r.total.excluded),
        mutants_timeout: o.mutation.as_ref().map_or(0, |r| r.total.timeout),
        mutation_score: o.mutation.as_ref().and_then(|r| r.score()),
        sequence: o.seq_alphabet.map(|alphabet| clowder_proto::SequenceCoverage {
            alphabet,
            kh2: o.seq_kh2,
            kh3: o.seq_kh3,
            win2: o.seq_win2,
            win3: o.seq_win3,
            kh2_unmin: o.seq_kh2_unmin,
            kh3_unmin: o.seq_kh3_unmin,
            win2_unmin: o.seq_win2_unmin,
            win3_unmin: o.seq_win3_unmin,
        }),
        ..Default::default()
    }
}

/// The budget of a leased run.
pub fn budget_of(spec: &RunSpec) -> Result<Budget, String> {
    match spec.budget.as_ref().map(|b| (b.kind(), b.amount)) {
        Some((clowder_proto::BudgetKind::Steps, n)) => Ok(Budget::Steps(n)),
        Some((clowder_proto::BudgetKind::Executions, n)) => Ok(Budget::Executions(n)),
        Some((clowder_proto::BudgetKind::Evaluations, n)) => Ok(Budget::Evaluations(n)),
        Some((clowder_proto::BudgetKind::Seconds, n)) => Ok(Budget::Seconds(n)),
        other => Err(format!("unsupported budget {other:?}")),
    }
}

pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Executes a run on the calling thread: load the project, generate, map.
/// Deterministic failures (project rejected, bad configuration, VM error,
/// panic) come back as results with their reason.
pub fn run_in_process(spec: &RunSpec, project_path: &Path, on_sample: &mut dyn FnMut(TimelineSample)) -> RunResult {
    let name = if spec.file_name.is_empty() { spec.project_name.clone() } else { spec.file_name.clone() };
    let bytes = match std::fs::read(project_path) {
        Ok(b) => b,
        Err(e) => return failure(RunStatus::InfraFailure, format!("reading cached project {name}: {e}")),
    };
    if blake3::hash(&bytes).to_hex().as_str() != spec.project_hash {
        return failure(RunStatus::InfraFailure, format!("cached project {name} does not match its hash"));
    }
    match clowder_proto::test_run::TestRunConfig::parse(&spec.config_json) {
        Some(Ok(t)) => {
            let template = crate::grading::template_path(project_path, &t);
            return crate::grading::run(
                spec,
                &t,
                &bytes,
                &crate::grading::suite_path(project_path, &t),
                template.as_deref(),
            );
        }
        Some(Err(e)) => return failure(RunStatus::Error, e),
        None => {}
    }
    let project = match clowder_vm::project::load(&bytes, &name, &LoadLimits::default()) {
        Ok(p) => Arc::new(p),
        Err(e) => return failure(RunStatus::ProjectRejected, e.to_string()),
    };
    let cfg: AlgorithmConfig = match serde_json::from_str(&spec.config_json) {
        Ok(c) => c,
        Err(e) => return failure(RunStatus::Error, format!("bad configuration {}: {e}", spec.config_json)),
    };
    let budget = match budget_of(spec) {
        Ok(b) => b,
        Err(e) => return failure(RunStatus::Error, e),
    };
    let work_cap = work_cap_of(spec);
    let opts = match clowder_testgen::MutationMode::parse(&spec.mutation) {
        Ok(mutation) => clowder_testgen::RunOptions { mutation, work_cap },
        Err(e) => return failure(RunStatus::Error, e),
    };
    let (run_id, lease_id) = (spec.run_id.clone(), spec.lease_id.clone());
    let seed = spec.seed;
    let generated = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        clowder_testgen::generate_with(project, &cfg, seed, budget, &opts, &mut |p| {
            on_sample(TimelineSample {
                run_id: run_id.clone(),
                lease_id: lease_id.clone(),
                steps: p.steps,
                executions: p.executions,
                covered: p.covered,
            })
        })
    }));
    match generated {
        Ok(Ok(o)) => outcome_to_result(&o, work_cap),
        Ok(Err(e)) => failure(RunStatus::Error, e.to_string()),
        // A panic is a bug in clowder, and deterministic: recorded, not retried.
        Err(p) => failure(RunStatus::Error, format!("internal error (panic): {}", panic_message(p.as_ref()))),
    }
}

/// Runs in the calling thread of the worker process.
#[derive(Debug, Default, Clone, Copy)]
pub struct ThreadExecutor;

impl Executor for ThreadExecutor {
    fn execute(
        &self,
        job: &Job,
        env: &SlotEnv,
        on_sample: &mut dyn FnMut(TimelineSample),
        cancel: &Cancel,
    ) -> ExecOutcome {
        if let Some(out) = crate::command::dispatch(job, env, cancel) {
            return out;
        }
        let cpu0 = thread_cpu_ms();
        let result = run_in_process(&job.spec, &job.project_path, on_sample);
        let cpu_ms = thread_cpu_ms().saturating_sub(cpu0);
        ExecOutcome { result, memory_peak_bytes: 0, memory_limit_kind: "none", cpu_ms }
    }

    fn isolation(&self) -> &'static str {
        "thread"
    }
}

// ---- the child-process protocol -------------------------------------------
//
// Frames: one tag byte, a little-endian u32 length, the payload.
// Parent → child: PATH (project file path, UTF-8), SPEC (RunSpec protobuf).
// Child → parent: SAMPLE (TimelineSample protobuf)*, RESULT (RunResult protobuf).

const TAG_PATH: u8 = 1;
const TAG_SPEC: u8 = 2;
const TAG_SAMPLE: u8 = 3;
const TAG_RESULT: u8 = 4;
const MAX_FRAME: usize = 512 << 20;

fn write_frame(w: &mut impl Write, tag: u8, payload: &[u8]) -> std::io::Result<()> {
    let len = u32::try_from(payload.len())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "frame too large"))?;
    w.write_all(&[tag])?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(payload)
}

fn read_frame(r: &mut impl Read) -> std::io::Result<Option<(u8, Vec<u8>)>> {
    let mut head = [0u8; 5];
    match r.read_exact(&mut head[..1]) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    r.read_exact(&mut head[1..])?;
    let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
    if len > MAX_FRAME {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("frame of {len} bytes")));
    }
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf)?;
    Ok(Some((head[0], buf)))
}

/// The body of `clowder worker --exec-child`: reads one job from stdin,
/// executes it, writes samples and the result to stdout. Returns the exit code.
pub fn child_main() -> i32 {
    let mut stdin = std::io::stdin().lock();
    let mut path = None;
    let mut spec = None;
    while path.is_none() || spec.is_none() {
        match read_frame(&mut stdin) {
            Ok(Some((TAG_PATH, p))) => path = Some(PathBuf::from(String::from_utf8_lossy(&p).to_string())),
            Ok(Some((TAG_SPEC, s))) => match RunSpec::decode(s.as_slice()) {
                Ok(s) => spec = Some(s),
                Err(e) => {
                    eprintln!("clowder run process: bad job: {e}");
                    return 2;
                }
            },
            Ok(Some((tag, _))) => {
                eprintln!("clowder run process: unexpected frame {tag}");
                return 2;
            }
            Ok(None) | Err(_) => {
                eprintln!("clowder run process: no job on stdin (this is started by `clowder worker`)");
                return 2;
            }
        }
    }
    let (Some(path), Some(spec)) = (path, spec) else { return 2 };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut write_failed = false;
    let result = run_in_process(&spec, &path, &mut |s| {
        // Samples are progress only; a failed write shows up at the result.
        if !write_failed {
            write_failed = write_frame(&mut out, TAG_SAMPLE, &s.encode_to_vec()).and_then(|_| out.flush()).is_err();
        }
    });
    if write_frame(&mut out, TAG_RESULT, &result.encode_to_vec()).and_then(|_| out.flush()).is_err() {
        return 3;
    }
    0
}

/// Runs each run in a child process (see the module docs).
#[derive(Debug, Clone)]
pub struct ProcessExecutor {
    /// Program to start (normally the `clowder` binary itself).
    pub program: PathBuf,
    /// Arguments that make it a run process (normally `worker --exec-child`).
    pub args: Vec<String>,
}

impl ProcessExecutor {
    /// Runs children as `<current executable> worker --exec-child`.
    pub fn current_exe() -> Result<Self, String> {
        let program = std::env::current_exe().map_err(|e| format!("locating the clowder executable: {e}"))?;
        Ok(Self { program, args: vec!["worker".into(), "--exec-child".into()] })
    }
}

/// `wait4` on a child: exit status, max RSS in bytes and CPU time (user + system) in seconds.
fn wait_child(pid: u32) -> std::io::Result<(libc::c_int, u64, f64)> {
    let mut status: libc::c_int = 0;
    // SAFETY: zeroed rusage is a valid value; pointers are to locals.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: as above.
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
        if r == pid as libc::pid_t {
            let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            let cpu = secs(usage.ru_utime) + secs(usage.ru_stime);
            return Ok((status, (usage.ru_maxrss.max(0) as u64) * 1024, cpu));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

impl ProcessExecutor {
    /// Starts the run process with its limits (set between fork and exec).
    fn spawn(&self, rlimit: bool, limit: u64, cpu_limit: u64) -> std::io::Result<std::process::Child> {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        // SAFETY: the hook only makes async-signal-safe calls (prctl, getppid,
        // signal, setrlimit) between fork and exec.
        let parent = unsafe { libc::getpid() };
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(move || {
                // Dies with the worker (kill -9 included): no orphaned runs.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                // SIGINT/SIGTERM are for the worker, which decides whether to let the
                // run finish (drain); the run process must not die of them first.
                libc::signal(libc::SIGINT, libc::SIG_IGN);
                libc::signal(libc::SIGTERM, libc::SIG_IGN);
                if rlimit {
                    set_rlimit_as(limit)?;
                }
                if cpu_limit > 0 {
                    set_rlimit_cpu(cpu_limit)?;
                }
                Ok(())
            });
        }
        cmd.spawn()
    }
}

/// Reads the run process's stderr, keeping the last 8 KiB: enough for a panic message or an
/// abort reason.
fn spawn_stderr_tail(mut stderr: std::process::ChildStderr) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut tail: Vec<u8> = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            tail.extend_from_slice(&buf[..n]);
            if tail.len() > 8192 {
                tail.drain(..tail.len() - 8192);
            }
        }
        String::from_utf8_lossy(&tail).to_string()
    })
}

/// Sends the job to the run process, then reads its frames until it closes stdout: the
/// samples go to `on_sample`; returns the result frame and the first protocol error.
fn exchange(
    mut stdin: std::process::ChildStdin,
    stdout: &mut std::process::ChildStdout,
    job: &Job,
    on_sample: &mut dyn FnMut(TimelineSample),
) -> (Option<RunResult>, Option<String>) {
    let path = job.project_path.to_string_lossy().to_string();
    let sent = write_frame(&mut stdin, TAG_PATH, path.as_bytes())
        .and_then(|_| write_frame(&mut stdin, TAG_SPEC, &job.spec.encode_to_vec()))
        .and_then(|_| stdin.flush());
    // EOF on its stdin: the run process has its whole job.
    drop(stdin);
    let mut result = None;
    let mut protocol_error = sent.err().map(|e| format!("sending the job: {e}"));
    let mut reader = std::io::BufReader::new(stdout);
    loop {
        match read_frame(&mut reader) {
            Ok(Some((TAG_SAMPLE, b))) => {
                if let Ok(s) = TimelineSample::decode(b.as_slice()) {
                    on_sample(s);
                }
            }
            Ok(Some((TAG_RESULT, b))) => match RunResult::decode(b.as_slice()) {
                Ok(r) => result = Some(r),
                Err(e) => protocol_error = Some(format!("bad result from run process: {e}")),
            },
            Ok(Some((tag, _))) => protocol_error = Some(format!("unexpected frame {tag} from run process")),
            Ok(None) => break,
            Err(e) => {
                protocol_error.get_or_insert(format!("reading from run process: {e}"));
                break;
            }
        }
    }
    (result, protocol_error)
}

/// How a run process that gave no usable result ended.
struct Ended {
    /// `wait4` status.
    status: libc::c_int,
    /// CPU seconds (user + system).
    cpu_used: f64,
    /// Killed by the cgroup's OOM killer.
    oom_killed: bool,
    /// The end of its stderr.
    tail: String,
    /// The first protocol error, if any.
    protocol_error: Option<String>,
}

impl Ended {
    /// The failure this end means: a memory limit (final), the CPU guard or a kill from
    /// outside (infrastructure), a crash, or an exit without a result.
    fn failure(self, rlimit: bool, limit: u64, cpu_limit: u64) -> RunResult {
        let Ended { status, cpu_used, oom_killed, tail, protocol_error } = self;
        let limit_text = format!("{} MiB", limit >> 20);
        if oom_killed {
            // The same run with the same limit exceeds it again: final, not retried.
            failure(
                RunStatus::Error,
                format!("memory limit of {limit_text} exceeded (killed by the cgroup OOM killer)"),
            )
        } else if tail.contains("memory allocation of") {
            failure(RunStatus::Error, format!("memory limit of {limit_text} exceeded (RLIMIT_AS: allocation failed)"))
        } else if cpu_limit > 0
            && libc::WIFSIGNALED(status)
            && (libc::WTERMSIG(status) == libc::SIGXCPU
                || (libc::WTERMSIG(status) == libc::SIGKILL && cpu_used >= cpu_limit as f64))
        {
            // An infrastructure guard, not a result: how far a run gets in N CPU-seconds depends
            // on the machine's speed and load (DESIGN §5). The coordinator tries it once more,
            // then records it as an infrastructure failure with this reason.
            failure(
                RunStatus::InfraFailure,
                format!(
                    "{}{cpu_limit} s exceeded (RLIMIT_CPU after {cpu_used:.0} s; depends on the machine's \
                     speed and load, so not a result: raise limits.cpu_seconds to let it finish, or set \
                     budget.work for a deterministic end)",
                    clowder_proto::CPU_LIMIT_REASON
                ),
            )
        } else if libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL {
            // Killed from outside (node OOM killer, operator, scheduler): infrastructure.
            failure(RunStatus::InfraFailure, "run process killed (SIGKILL) from outside".to_string())
        } else if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            let last = tail.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
            // Under RLIMIT_AS a failed stack or heap growth often ends in SIGSEGV
            // before any message: say that the limit is the likely cause.
            let hint = if rlimit && matches!(sig, libc::SIGSEGV | libc::SIGBUS | libc::SIGABRT) {
                format!(" (likely the memory limit of {limit_text}, RLIMIT_AS)")
            } else {
                String::new()
            };
            failure(RunStatus::Error, format!("run process crashed with signal {sig}{hint}: {last}"))
        } else {
            let code = libc::WEXITSTATUS(status);
            let why = protocol_error.unwrap_or_default();
            let last = tail.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
            failure(
                RunStatus::InfraFailure,
                format!("run process exited with code {code} without a result {why} {last}"),
            )
        }
    }
}

impl Executor for ProcessExecutor {
    fn execute(
        &self,
        job: &Job,
        env: &SlotEnv,
        on_sample: &mut dyn FnMut(TimelineSample),
        cancel: &Cancel,
    ) -> ExecOutcome {
        if let Some(out) = crate::command::dispatch(job, env, cancel) {
            return out;
        }
        let limit = job.spec.memory_limit_bytes;
        let kind = if limit == 0 { "none" } else { env.memory.kind() };
        let mut outcome = ExecOutcome { memory_limit_kind: kind, ..Default::default() };
        let oom_before = match env.memory.prepare(limit) {
            Ok(n) => n,
            Err(e) => {
                outcome.result = failure(RunStatus::InfraFailure, e);
                return outcome;
            }
        };
        let rlimit = matches!(env.memory, MemoryLimiter::RlimitAs) && limit > 0;
        let cpu_limit = job.spec.cpu_limit_seconds;
        let mut child = match self.spawn(rlimit, limit, cpu_limit) {
            Ok(c) => c,
            // Too little address space to even load the program: the limit is the
            // run's, so this is as deterministic as exceeding it later.
            Err(e) if rlimit && e.raw_os_error() == Some(libc::ENOMEM) => {
                outcome.result = failure(
                    RunStatus::Error,
                    format!("memory limit of {} MiB exceeded (RLIMIT_AS: the run process cannot start)", limit >> 20),
                );
                return outcome;
            }
            Err(e) => {
                outcome.result =
                    failure(RunStatus::InfraFailure, format!("starting run process {}: {e}", self.program.display()));
                return outcome;
            }
        };
        let pid = child.id();
        cancel.set_child(Some(pid));
        if cancel.is_cancelled() {
            cancel.cancel();
        }
        let (Some(stdin), Some(mut stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            cancel.cancel();
            let _ = wait_child(pid);
            outcome.result = failure(RunStatus::InfraFailure, "run process without pipes");
            return outcome;
        };
        // Into the cgroup before it reads its job (and allocates anything).
        if let Err(e) = env.memory.attach(pid) {
            cancel.cancel();
            let _ = wait_child(pid);
            cancel.set_child(None);
            outcome.result = failure(RunStatus::InfraFailure, e);
            return outcome;
        }
        let stderr_tail = spawn_stderr_tail(stderr);
        let (result, protocol_error) = exchange(stdin, &mut stdout, job, on_sample);
        cancel.set_child(None);
        let waited = wait_child(pid);
        let tail = stderr_tail.join().unwrap_or_default();
        let (status, maxrss, cpu_used) = match waited {
            Ok(w) => w,
            Err(e) => {
                outcome.result = failure(RunStatus::InfraFailure, format!("waiting for run process {pid}: {e}"));
                return outcome;
            }
        };
        let mem = env.memory.report(oom_before, maxrss);
        outcome.memory_peak_bytes = mem.peak_bytes;
        outcome.cpu_ms = (cpu_used * 1000.0) as u64;
        let ended = Ended { status, cpu_used, oom_killed: mem.oom_killed, tail, protocol_error };
        outcome.result = if cancel.is_cancelled() {
            failure(RunStatus::Cancelled, "cancelled")
        } else {
            match result {
                Some(r) if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 => r,
                _ => ended.failure(rlimit, limit, cpu_limit),
            }
        };
        outcome
    }

    fn isolation(&self) -> &'static str {
        "process"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_eof_is_clean() {
        let mut buf = Vec::new();
        write_frame(&mut buf, TAG_SAMPLE, b"abc").unwrap();
        write_frame(&mut buf, TAG_RESULT, b"").unwrap();
        let mut r = buf.as_slice();
        assert_eq!(read_frame(&mut r).unwrap(), Some((TAG_SAMPLE, b"abc".to_vec())));
        assert_eq!(read_frame(&mut r).unwrap(), Some((TAG_RESULT, Vec::new())));
        assert_eq!(read_frame(&mut r).unwrap(), None);
        // A truncated frame is an error, not a silent end.
        let mut short = &buf[..3];
        assert!(read_frame(&mut short).is_err());
    }

    #[test]
    fn in_process_run_of_a_smoke_project_is_deterministic() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/smoke/counter.json");
        let bytes = std::fs::read(&path).unwrap();
        let cfg = AlgorithmConfig::new(clowder_testgen::Algorithm::Random);
        let spec = RunSpec {
            run_id: "r".into(),
            project_hash: blake3::hash(&bytes).to_hex().to_string(),
            file_name: "counter.json".into(),
            config_json: cfg.normalized_json(),
            seed: 3,
            budget: Some(clowder_proto::Budget { kind: clowder_proto::BudgetKind::Steps as i32, amount: 600 }),
            ..Default::default()
        };
        let mut samples = Vec::new();
        let a = run_in_process(&spec, &path, &mut |s| samples.push(s));
        assert_eq!(a.status, RunStatus::Ok as i32, "{}", a.error);
        let b = run_in_process(&spec, &path, &mut |_| {});
        assert_eq!(a.digest, b.digest);
        // Every change point after the initial one was streamed while running.
        assert!(!samples.is_empty());
        let tail = &a.timeline[a.timeline.len() - samples.len()..];
        assert!(tail.iter().zip(&samples).all(|(t, s)| (t.steps, t.covered) == (s.steps, s.covered)));
    }

    #[test]
    fn the_work_cap_ends_a_run_with_status_limit_and_its_partial_result() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/smoke/counter.json");
        let bytes = std::fs::read(&path).unwrap();
        let cfg = AlgorithmConfig::new(clowder_testgen::Algorithm::Random);
        let spec = |work_cap: u64| RunSpec {
            run_id: "r".into(),
            project_hash: blake3::hash(&bytes).to_hex().to_string(),
            file_name: "counter.json".into(),
            config_json: cfg.normalized_json(),
            seed: 1,
            budget: Some(clowder_proto::Budget { kind: clowder_proto::BudgetKind::Steps as i32, amount: 3000 }),
            work_cap,
            ..Default::default()
        };
        assert_eq!(
            work_cap_of(&spec(0)),
            clowder_testgen::default_work_cap(Budget::Steps(3000)),
            "0: the engine's default for the budget"
        );
        assert_eq!(work_cap_of(&spec(clowder_proto::NO_WORK_CAP)), 0, "no cap");
        assert_eq!(work_cap_of(&spec(1000)), 1000);
        let free = run_in_process(&spec(clowder_proto::NO_WORK_CAP), &path, &mut |_| {});
        assert_eq!(free.status, RunStatus::Ok as i32, "{}", free.error);
        assert!(free.work > 1000 && free.limit_phase.is_empty() && free.error.is_empty(), "{free:?}");
        // The default cap is far above what this run does: the same run.
        let default = run_in_process(&spec(0), &path, &mut |_| {});
        assert_eq!((default.status, &default.digest, default.work), (free.status, &free.digest, free.work));
        // A cap a tenth of the way into the free run's work: the search ends there.
        let cap = free.work / 10;
        let capped = run_in_process(&spec(cap), &path, &mut |_| {});
        assert_eq!(capped.status, RunStatus::Limit as i32, "{}", capped.error);
        assert_eq!(capped.limit_phase, "search");
        assert_eq!(capped.error, format!("work cap of {cap} reached in the search (deterministic; partial result)"));
        assert!(capped.work >= cap && capped.work < free.work, "{} vs {}", capped.work, free.work);
        // A partial but complete result: coverage, timeline, suite and digest.
        assert!(capped.covered > 0 && capped.covered < capped.total_targets, "{capped:?}");
        assert!(!capped.timeline.is_empty() && !capped.suite_json.is_empty() && !capped.digest.is_empty());
        let again = run_in_process(&spec(cap), &path, &mut |_| {});
        assert_eq!((&again.digest, again.work, again.steps), (&capped.digest, capped.work, capped.steps));
    }

    #[test]
    fn a_project_that_does_not_load_is_rejected_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        std::fs::write(&path, b"{ not json").unwrap();
        let spec = RunSpec {
            project_hash: blake3::hash(b"{ not json").to_hex().to_string(),
            file_name: "broken.json".into(),
            ..Default::default()
        };
        let r = run_in_process(&spec, &path, &mut |_| {});
        assert_eq!(r.status, RunStatus::ProjectRejected as i32);
        assert!(r.error.contains("broken.json"), "{}", r.error);
    }
}
