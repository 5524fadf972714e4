//! The virtual clock and virtual `setTimeout`s (fidelity README P8): nothing here reads a
//! real clock; step k starts at `k × 1000/30` ms.

use super::{Resume, State, TargetId, ThRef, V};
use crate::program::Program;

/// Milliseconds per step: the compatibility (30 fps) frame, as a double.
pub const STEP_MS: f64 = 1000.0 / 30.0;

/// A virtual `setTimeout` (P8).
#[derive(Debug, Clone)]
pub(crate) struct VTimer {
    pub id: u64,
    pub created: f64,
    pub due: f64,
    pub seq: u64,
    pub kind: TimerKind,
}

#[derive(Debug, Clone)]
pub(crate) enum TimerKind {
    /// `say/think for secs` ended.
    Bubble { target: TargetId, usage: u64, think: bool, thread: ThRef },
    /// A sound played until done ended (profiles with sound durations).
    Sound { thread: ThRef },
    /// The Makey Makey "sequence completed" flag resets (100 ms after completion).
    MakeySequence { index: usize },
}

impl State {
    /// The `timer` reporter: the project timer, or Whisker's step timer.
    pub(crate) fn timer_value(&self) -> f64 {
        if self.whisker() { self.clock.step_timer } else { self.clock_timer() }
    }

    /// The clock device's project timer (`when timer >` reads it, also under Whisker, whose
    /// fork left it on the real clock; here it is the virtual one).
    pub(crate) fn clock_timer(&self) -> f64 {
        let ms = self.clock.current_msecs - self.clock.timer_start;
        match self.whisker_wall_ms() {
            // Whisker's instrumented project timer: real time × its acceleration (10).
            Some(real) => ms * (real * crate::whisker::ACCELERATION / STEP_MS) / 1000.0,
            None => ms / 1000.0,
        }
    }

    /// Milliseconds of the virtual clock as Whisker's unaccelerated wall clock would see them
    /// when [`crate::VmOptions::whisker_wall_ms`] is set (profile `whisker`); unchanged
    /// otherwise.
    pub(crate) fn whisker_wall(&self, virtual_ms: f64) -> f64 {
        match self.whisker_wall_ms() {
            Some(real) => virtual_ms * (real / STEP_MS),
            None => virtual_ms,
        }
    }

    fn whisker_wall_ms(&self) -> Option<f64> {
        if self.whisker() { self.opts.whisker_wall_ms } else { None }
    }

    /// Pending one-shot timers, plus the video-sensing frame loop (always re-armed).
    pub(crate) fn pending_timeouts(&self, prog: &Program) -> usize {
        self.timers.list.len() + usize::from(prog.video_loaded)
    }

    // ---------------------------------------------------------------- timers

    pub(crate) fn add_timer(&mut self, delay: f64, kind: TimerKind) -> u64 {
        // Node/browser coercion of the delay.
        let d = if (1.0..=2147483647.0).contains(&delay) { delay } else { 1.0 };
        self.timers.ids += 1;
        self.timers.seq += 1;
        let id = self.timers.ids;
        self.timers.list.push(VTimer {
            id,
            created: self.clock.now,
            due: self.clock.now + d,
            seq: self.timers.seq,
            kind,
        });
        id
    }

    pub(crate) fn fire_timers(&mut self, prog: &Program) {
        loop {
            let now = self.clock.now;
            let best = self
                .timers
                .list
                .iter()
                .enumerate()
                .filter(|(_, t)| t.due <= now)
                .min_by(|a, b| a.1.due.total_cmp(&b.1.due).then(a.1.seq.cmp(&b.1.seq)))
                .map(|(i, _)| i);
            let Some(i) = best else { return };
            let timer = self.timers.list.remove(i);
            match timer.kind {
                TimerKind::Bubble { target, usage, think, thread } => {
                    self.timers.last_bubble = None;
                    if self.target(target).and_then(|t| t.bubble.as_ref()).is_some_and(|b| b.usage == usage) {
                        self.update_bubble(prog, target, think, V::lit(prog.lit_empty));
                    }
                    self.microtasks.push((thread, Resume::Advance));
                }
                TimerKind::Sound { thread } => self.microtasks.push((thread, Resume::Advance)),
                TimerKind::MakeySequence { index } => {
                    if let Some(s) = self.ext.makey_sequences.get_mut(index) {
                        s.2 = false;
                    }
                }
            }
        }
    }
}

/// The step counter and the virtual clock.
#[derive(Debug, Clone)]
pub(crate) struct Clock {
    /// Steps executed so far.
    pub steps: u64,
    /// Virtual time at the start of the current step, ms (`now(k)`).
    pub now: f64,
    /// `runtime.currentMSecs`: what time-based blocks read (the previous step's clock while
    /// edge-activated hats are evaluated).
    pub current_msecs: f64,
    /// When the project timer was last reset, ms.
    pub timer_start: f64,
    /// Whisker's `runtime.stepTimer` (profile `whisker`): seconds, advanced at the end of each
    /// step.
    pub step_timer: f64,
}

/// The pending virtual `setTimeout`s.
#[derive(Debug, Clone)]
pub(crate) struct Timers {
    /// Pending timers (fired by due time, then creation order).
    pub list: Vec<VTimer>,
    /// Last timer id handed out.
    pub ids: u64,
    /// Creation counter (ties of equal due times fire in creation order).
    pub seq: u64,
    /// The last `say/think for secs` timer (`stop all` clears it).
    pub last_bubble: Option<u64>,
}
