//! Progress of the long commands (`run`, `status`, the replays and judgements of a study):
//! a bar on a terminal, and plain lines on a log or a pipe, where a bar draws nothing. A
//! 60 000-run study started with `nohup … > log` then says how far it is every half minute.
//!
//! The wall clock only times these messages; nothing it reads reaches a result.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// How often a log line is written where no bar can be drawn.
const LOG_EVERY: Duration = Duration::from_secs(30);

/// A count of `unit`s done out of a total: a bar on a terminal, lines elsewhere.
pub struct Progress {
    bar: ProgressBar,
    /// `Some` when stderr is not a terminal (and not quiet): the plain-line state.
    log: Option<Mutex<LogLines>>,
}

struct LogLines {
    unit: String,
    started: Instant,
    last: Instant,
    /// Whether a line was written since the last change of position or message.
    current: bool,
    pos: u64,
    len: u64,
    msg: String,
}

impl Progress {
    /// Counts `total` `unit`s on stderr; nothing at all when `quiet`.
    pub fn new(total: u64, unit: &str, quiet: bool) -> Self {
        Self::with_target(total, unit, quiet, std::io::stderr().is_terminal())
    }

    fn with_target(total: u64, unit: &str, quiet: bool, terminal: bool) -> Self {
        if quiet {
            return Progress { bar: ProgressBar::hidden(), log: None };
        }
        if !terminal {
            let now = Instant::now();
            let lines = LogLines {
                unit: unit.to_string(),
                started: now,
                last: now,
                current: false,
                pos: 0,
                len: total,
                msg: String::new(),
            };
            return Progress { bar: ProgressBar::hidden(), log: Some(Mutex::new(lines)) };
        }
        let bar = ProgressBar::new(total);
        let template = format!("{{bar:40}} {{pos}}/{{len}} {unit}  {{msg}}  [{{elapsed_precise}}, eta {{eta}}]");
        bar.set_style(ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()));
        Progress { bar, log: None }
    }

    /// Adds `n` to the count.
    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
        self.update(|l| l.pos = l.pos.saturating_add(n));
    }

    /// Sets the count.
    pub fn set_position(&self, pos: u64) {
        self.bar.set_position(pos);
        self.update(|l| l.pos = pos);
    }

    /// Sets the total.
    pub fn set_length(&self, len: u64) {
        self.bar.set_length(len);
        self.update(|l| l.len = len);
    }

    /// Sets the message shown after the count.
    pub fn set_message(&self, msg: String) {
        self.update(|l| l.msg.clone_from(&msg));
        self.bar.set_message(msg);
    }

    /// Starts the estimate of the time left afresh (after a resumed count was set).
    pub fn reset_eta(&self) {
        self.bar.reset_eta();
        self.update(|l| l.started = Instant::now());
    }

    /// Prints a line above the bar (or just the line on a log).
    pub fn println(&self, line: impl AsRef<str>) {
        match &self.log {
            Some(_) => eprintln!("{}", line.as_ref()),
            None => self.bar.println(line.as_ref()),
        }
    }

    /// Removes the bar; on a log, writes the final count unless the last line already said it.
    pub fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
        if let Some(log) = &self.log {
            let mut l = log.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if !l.current {
                eprintln!("{}", l.line());
                l.current = true;
            }
        }
    }

    fn update(&self, change: impl FnOnce(&mut LogLines)) {
        let Some(log) = &self.log else { return };
        let mut l = log.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        change(&mut l);
        l.current = false;
        let now = Instant::now();
        if now.duration_since(l.last) >= LOG_EVERY {
            l.last = now;
            l.current = true;
            eprintln!("{}", l.line());
        }
    }
}

impl LogLines {
    fn line(&self) -> String {
        let elapsed = self.started.elapsed();
        let pct = if self.len > 0 { 100.0 * self.pos as f64 / self.len as f64 } else { 100.0 };
        let eta = if self.pos > 0 && self.pos < self.len {
            let per = elapsed.as_secs_f64() / self.pos as f64;
            format!(", eta {}", clock((per * (self.len - self.pos) as f64) as u64))
        } else {
            String::new()
        };
        let msg = if self.msg.is_empty() { String::new() } else { format!(", {}", self.msg) };
        format!("{}/{} {} ({pct:.1} %){msg} [{}{eta}]", self.pos, self.len, self.unit, clock(elapsed.as_secs()))
    }
}

/// Seconds as `h:mm:ss`.
fn clock(secs: u64) -> String {
    format!("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_line_says_count_share_message_and_time() {
        let p = Progress::with_target(8, "runs", false, false);
        p.set_position(2);
        p.set_message("1 running, 0 limit, 0 failed".into());
        let l = p.log.as_ref().map(|l| l.lock().map(|l| l.line()).unwrap_or_default()).unwrap_or_default();
        assert!(l.starts_with("2/8 runs (25.0 %), 1 running, 0 limit, 0 failed [0:00:0"), "{l}");
        assert!(l.contains(", eta "), "{l}");
    }

    #[test]
    fn quiet_and_terminal_progress_write_no_lines() {
        assert!(Progress::with_target(3, "runs", true, false).log.is_none());
        assert!(Progress::with_target(3, "runs", false, true).log.is_none());
        assert_eq!(clock(3725), "1:02:05");
    }
}
