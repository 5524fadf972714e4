//! Helpers shared by the test programs that start real `clowder` processes (`runtime.rs`,
//! `command_engine.rs`): spawning and killing them, waiting, reading exports.

// Each test program uses a part of these.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub static SERIAL: Mutex<()> = Mutex::new(());

pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap()
}

pub fn clowder() -> Command {
    Command::new(env!("CARGO_BIN_EXE_clowder"))
}

/// A child process killed on drop; its stderr goes to a log file.
pub struct Proc {
    child: Child,
    log: PathBuf,
    what: String,
}

impl Proc {
    pub fn spawn(mut cmd: Command, log: PathBuf, what: &str) -> Proc {
        let f = std::fs::OpenOptions::new().create(true).append(true).open(&log).unwrap();
        cmd.stdout(Stdio::null()).stderr(f).stdin(Stdio::null());
        let child = cmd.spawn().unwrap_or_else(|e| panic!("starting {what}: {e}"));
        Proc { child, log, what: what.to_string() }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn try_exit(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    pub fn wait(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let t0 = Instant::now();
        loop {
            if let Some(s) = self.try_exit() {
                return s;
            }
            if t0.elapsed() > timeout {
                let _ = self.child.kill();
                panic!("{} did not exit within {timeout:?}; log:\n{}", self.what, self.log_text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn wait_or(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let t0 = Instant::now();
        while t0.elapsed() < timeout {
            if let Some(s) = self.try_exit() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    pub fn log_text(&self) -> String {
        let t = std::fs::read_to_string(&self.log).unwrap_or_default();
        // The end is what explains a failure.
        match t.char_indices().rev().nth(6000) {
            Some((i, _)) => format!("…{}", &t[i..]),
            None => t,
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.try_exit().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub fn wait_until(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(t0.elapsed() < timeout, "timed out after {timeout:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts a coordinator and waits until it listens; returns it and its URL.
pub fn coordinator(exp: &Path, out: &Path, listen: &str, extra: &[&str], log: &Path) -> (Proc, String) {
    let results = out.join(exp_name(exp));
    let addr_file = results.join("coordinator.addr");
    let _ = std::fs::remove_file(&addr_file);
    let mut cmd = clowder();
    cmd.arg("coordinator").arg(exp).args(["--listen", listen, "--output"]).arg(out).args(extra);
    let mut p = Proc::spawn(cmd, log.to_path_buf(), "coordinator");
    let t0 = Instant::now();
    loop {
        if let Ok(u) = std::fs::read_to_string(&addr_file)
            && u.ends_with('\n')
        {
            return (p, u.trim().to_string());
        }
        if let Some(s) = p.try_exit() {
            panic!("coordinator exited ({s}) before listening; log:\n{}", p.log_text());
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "coordinator did not start; log:\n{}", p.log_text());
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub fn exp_name(exp: &Path) -> String {
    let text = std::fs::read_to_string(exp).unwrap();
    text.lines().find_map(|l| l.strip_prefix("name = \"")).unwrap().trim_end_matches('"').to_string()
}

pub fn worker(url: &str, token_file: &Path, name: &str, extra: &[&str], log: &Path, cache: &Path) -> Proc {
    let mut cmd = clowder();
    cmd.args(["worker", "--coordinator", url, "--token-file"])
        .arg(token_file)
        .args(["--name", name, "--cache"])
        .arg(cache)
        .args(extra);
    Proc::spawn(cmd, log.to_path_buf(), &format!("worker {name}"))
}

/// Rows of a CSV export as maps (column → value).
pub fn csv_rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let headers: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    r.records().map(|rec| headers.iter().cloned().zip(rec.unwrap().iter().map(str::to_string)).collect()).collect()
}

/// `clowder run` of `exp` into `out` with one worker, output discarded.
pub fn run_quiet(exp: &Path, out: &Path) -> std::process::ExitStatus {
    clowder()
        .arg("run")
        .arg(exp)
        .args(["--quiet", "--workers", "1", "--output"])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
}

pub fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else { continue };
        // Fields after the command name (which is in parentheses): state, ppid, …
        let Some(rest) = stat.rsplit_once(')').map(|x| x.1) else { continue };
        if rest.split_whitespace().nth(1).and_then(|x| x.parse::<u32>().ok()) == Some(pid) {
            out.push(p);
        }
    }
    out
}

pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}
