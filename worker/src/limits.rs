//! Per-run memory limits.
//!
//! Each run executes in its own child process (see `exec`), so a limit can be
//! exact per run. Preferred: a cgroup-v1 memory cgroup per slot, nested under
//! the worker's own memory cgroup (where that is writable, e.g. as root on
//! this kind of machine); the kernel's OOM killer then stops only that run,
//! and the cgroup tells us its peak usage and whether it hit the limit.
//! Otherwise: `RLIMIT_AS` on the child (allocation failures abort the run).
//! Which one applied is recorded in every run's provenance.
//!
//! cgroup v2 needs a delegated subtree with no processes in inner nodes; we do
//! not rearrange the worker's own cgroup for that and use `RLIMIT_AS` there.

use std::path::{Path, PathBuf};

/// How memory is limited for the runs of one slot.
#[derive(Debug)]
pub enum MemoryLimiter {
    /// A cgroup-v1 memory cgroup for the slot.
    CgroupV1 {
        /// The slot's cgroup folder.
        dir: PathBuf,
    },
    /// `RLIMIT_AS` set on each run's process.
    RlimitAs,
    /// No limit (runs inside the worker process).
    None,
}

/// Memory accounting of one finished run.
#[derive(Debug, Clone, Default)]
pub struct MemoryReport {
    /// Peak usage (cgroup) or max RSS of the run's process, bytes.
    pub peak_bytes: u64,
    /// The run hit its limit (cgroup OOM kill).
    pub oom_killed: bool,
}

/// The folder of the worker process's own cgroup-v1 memory cgroup, if the
/// memory controller is mounted as v1.
fn own_memory_cgroup_v1() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = text.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, ctrls, path) = (parts.next()?, parts.next()?, parts.next()?);
        ctrls.split(',').any(|c| c == "memory").then(|| path.to_string())
    })?;
    let mount = memory_v1_mount()?;
    Some(mount.join(rel.trim_start_matches('/')))
}

fn memory_v1_mount() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    for l in text.lines() {
        // "... mount_point ... - cgroup cgroup rw,memory"
        let (left, right) = l.split_once(" - ")?;
        let mut r = right.split_whitespace();
        if r.next() != Some("cgroup") {
            continue;
        }
        let opts = r.nth(1).unwrap_or("");
        if opts.split(',').any(|o| o == "memory") {
            return left.split_whitespace().nth(4).map(PathBuf::from);
        }
    }
    None
}

fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The cgroup folder of a worker process (holds one sub-folder per slot).
#[derive(Debug)]
pub struct WorkerCgroup {
    dir: PathBuf,
}

impl WorkerCgroup {
    /// Creates `<own memory cgroup>/clowder-<pid>` when cgroup-v1 memory is
    /// writable; `None` otherwise. Removes empty leftovers of dead workers.
    pub fn create() -> Option<Self> {
        let own = own_memory_cgroup_v1()?;
        if let Ok(rd) = std::fs::read_dir(&own) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if let Some(pid) = name.strip_prefix("clowder-").and_then(|p| p.parse::<u32>().ok())
                    && !pid_alive(pid)
                {
                    remove_tree(&e.path());
                }
            }
        }
        let dir = own.join(format!("clowder-{}", std::process::id()));
        std::fs::create_dir(&dir).or_else(|e| if dir.is_dir() { Ok(()) } else { Err(e) }).ok()?;
        // Writable for real? (A read-only bind mount lets mkdir fail above; some
        // setups allow mkdir but not limits.)
        if std::fs::write(dir.join("memory.limit_in_bytes"), "-1").is_err() {
            let _ = std::fs::remove_dir(&dir);
            return None;
        }
        Some(Self { dir })
    }

    /// A slot's limiter: its own cgroup, or `RLIMIT_AS` if that fails.
    pub fn slot(&self, slot: usize) -> MemoryLimiter {
        let dir = self.dir.join(format!("slot-{slot}"));
        match std::fs::create_dir(&dir) {
            Ok(()) => MemoryLimiter::CgroupV1 { dir },
            Err(_) if dir.is_dir() => MemoryLimiter::CgroupV1 { dir },
            Err(_) => MemoryLimiter::RlimitAs,
        }
    }
}

impl Drop for WorkerCgroup {
    fn drop(&mut self) {
        remove_tree(&self.dir);
    }
}

/// Removes a cgroup folder and its (empty) children; cgroup folders are
/// removed with rmdir, never by deleting files.
fn remove_tree(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                remove_tree(&e.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

fn read_u64(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn oom_kills(dir: &Path) -> u64 {
    std::fs::read_to_string(dir.join("memory.oom_control"))
        .ok()
        .and_then(|t| t.lines().find_map(|l| l.strip_prefix("oom_kill ").and_then(|n| n.trim().parse().ok())))
        .unwrap_or(0)
}

impl MemoryLimiter {
    /// Provenance name of the mechanism.
    pub fn kind(&self) -> &'static str {
        match self {
            MemoryLimiter::CgroupV1 { .. } => "cgroup-v1",
            MemoryLimiter::RlimitAs => "rlimit-as",
            MemoryLimiter::None => "none",
        }
    }

    /// Before a run: sets the limit and resets the peak. Returns the OOM-kill
    /// count to compare with afterwards.
    pub fn prepare(&self, limit_bytes: u64) -> Result<u64, String> {
        match self {
            MemoryLimiter::CgroupV1 { dir } => {
                let limit = if limit_bytes == 0 { "-1".to_string() } else { limit_bytes.to_string() };
                // With swap accounting, memory+swap must be >= memory at every moment and
                // must carry the same limit (or swap would bypass it): unlimit it first.
                let memsw = dir.join("memory.memsw.limit_in_bytes");
                let has_memsw = memsw.exists();
                if has_memsw {
                    let _ = std::fs::write(&memsw, "-1");
                }
                std::fs::write(dir.join("memory.limit_in_bytes"), &limit)
                    .map_err(|e| format!("setting {}: {e}", dir.join("memory.limit_in_bytes").display()))?;
                if has_memsw {
                    let _ = std::fs::write(&memsw, &limit);
                }
                let _ = std::fs::write(dir.join("memory.max_usage_in_bytes"), "0");
                Ok(oom_kills(dir))
            }
            _ => Ok(0),
        }
    }

    /// Moves a freshly started run process into the slot's cgroup.
    pub fn attach(&self, pid: u32) -> Result<(), String> {
        match self {
            MemoryLimiter::CgroupV1 { dir } => std::fs::write(dir.join("cgroup.procs"), pid.to_string())
                .map_err(|e| format!("moving run process {pid} into {}: {e}", dir.display())),
            _ => Ok(()),
        }
    }

    /// After a run: peak usage and whether the OOM killer stopped it.
    pub fn report(&self, oom_before: u64, rusage_maxrss_bytes: u64) -> MemoryReport {
        match self {
            MemoryLimiter::CgroupV1 { dir } => MemoryReport {
                peak_bytes: read_u64(&dir.join("memory.max_usage_in_bytes")).unwrap_or(rusage_maxrss_bytes),
                oom_killed: oom_kills(dir) > oom_before,
            },
            _ => MemoryReport { peak_bytes: rusage_maxrss_bytes, oom_killed: false },
        }
    }
}

/// Sets `RLIMIT_CPU` of the calling process (used between fork and exec): `SIGXCPU` at
/// `seconds` of CPU time, `SIGKILL` a few seconds later should the first be ignored.
///
/// # Safety
/// Async-signal-safe; may be called in a `pre_exec` hook.
pub unsafe fn set_rlimit_cpu(seconds: u64) -> std::io::Result<()> {
    let lim = libc::rlimit { rlim_cur: seconds as libc::rlim_t, rlim_max: seconds.saturating_add(5) as libc::rlim_t };
    // SAFETY: plain syscall with a valid pointer.
    if unsafe { libc::setrlimit(libc::RLIMIT_CPU, &lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Sets `RLIMIT_AS` of the calling process (used between fork and exec).
///
/// # Safety
/// Async-signal-safe; may be called in a `pre_exec` hook.
pub unsafe fn set_rlimit_as(bytes: u64) -> std::io::Result<()> {
    let lim = libc::rlimit { rlim_cur: bytes as libc::rlim_t, rlim_max: bytes as libc::rlim_t };
    // SAFETY: plain syscall with a valid pointer.
    if unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
