//! Cores: which ones this process may use, claiming one per slot, pinning.
//!
//! The allowed set comes from the scheduler affinity mask (so it honours SLURM
//! and container cpusets), not from the machine's core count. A slot claims a
//! core by holding an exclusive `flock` on a per-core lock file, so several
//! worker processes on one machine never pin two slots to the same core; a
//! slot that finds every allowed core taken runs unpinned and says so in the
//! run's provenance. The kernel drops the lock when the process dies.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// The cores this process may run on, ascending.
pub fn allowed_cores() -> Vec<usize> {
    // SAFETY: `set` is a plain bitmask owned by this frame; the kernel writes at
    // most `size_of::<cpu_set_t>()` bytes into it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return fallback_cores();
        }
        let cores: Vec<usize> = (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect();
        if cores.is_empty() { fallback_cores() } else { cores }
    }
}

fn fallback_cores() -> Vec<usize> {
    (0..std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).collect()
}

/// Pins the calling thread to `core`.
pub fn pin_current_thread(core: usize) -> io::Result<()> {
    if core >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("core {core} out of range")));
    }
    // SAFETY: as above; pid 0 = the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The core the calling thread runs on now.
pub fn current_core() -> Option<usize> {
    // SAFETY: no arguments, no memory.
    let c = unsafe { libc::sched_getcpu() };
    usize::try_from(c).ok()
}

/// A claimed core (released on drop).
#[derive(Debug)]
pub struct CoreClaim {
    /// The core.
    pub core: usize,
    _lock: File,
}

/// Default folder of the per-core lock files (per user, in the temp folder).
pub fn default_lock_dir() -> PathBuf {
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir().join(format!("clowder-cores-{uid}"))
}

/// Claims the first free core of `cores` (in order), or `None` when all are taken.
pub fn claim_core(cores: &[usize], lock_dir: &Path) -> Option<CoreClaim> {
    std::fs::create_dir_all(lock_dir).ok()?;
    for &core in cores {
        let path = lock_dir.join(format!("core-{core}.lock"));
        let Ok(f) = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path) else {
            continue;
        };
        // flock(2) directly: `File::try_lock` is newer than the workspace's MSRV.
        // SAFETY: plain syscall on a descriptor we own.
        if unsafe { libc::flock(std::os::unix::io::AsRawFd::as_raw_fd(&f), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Some(CoreClaim { core, _lock: f });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_exclusive_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let cores = [0, 1];
        let a = claim_core(&cores, dir.path()).unwrap();
        let b = claim_core(&cores, dir.path()).unwrap();
        assert_ne!(a.core, b.core);
        assert!(claim_core(&cores, dir.path()).is_none());
        drop(a);
        assert_eq!(claim_core(&cores, dir.path()).unwrap().core, 0);
    }

    #[test]
    fn pinning_moves_the_thread() {
        let cores = allowed_cores();
        assert!(!cores.is_empty());
        let last = *cores.last().unwrap();
        std::thread::spawn(move || {
            pin_current_thread(last).unwrap();
            // The scheduler honours the mask from the next time slice on.
            std::thread::yield_now();
            assert_eq!(current_core(), Some(last));
        })
        .join()
        .unwrap();
    }
}
