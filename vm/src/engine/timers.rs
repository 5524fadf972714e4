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
    pub(crate) fn timer_value(&self) -> f64 {
        (self.current_msecs - self.timer_start) * self.timer_scale / 1000.0
    }

    /// Pending one-shot timers, plus the video-sensing frame loop (always re-armed).
    pub(crate) fn pending_timeouts(&self, prog: &Program) -> usize {
        self.timers.len() + usize::from(prog.video_loaded)
    }

    // ---------------------------------------------------------------- timers

    pub(crate) fn add_timer(&mut self, delay: f64, kind: TimerKind) -> u64 {
        // Node/browser coercion of the delay.
        let d = if (1.0..=2147483647.0).contains(&delay) { delay } else { 1.0 };
        self.timer_ids += 1;
        self.timer_seq += 1;
        let id = self.timer_ids;
        self.timers.push(VTimer { id, created: self.clock_now, due: self.clock_now + d, seq: self.timer_seq, kind });
        id
    }

    pub(crate) fn fire_timers(&mut self, prog: &Program) {
        loop {
            let now = self.clock_now;
            let best = self
                .timers
                .iter()
                .enumerate()
                .filter(|(_, t)| t.due <= now)
                .min_by(|a, b| a.1.due.total_cmp(&b.1.due).then(a.1.seq.cmp(&b.1.seq)))
                .map(|(i, _)| i);
            let Some(i) = best else { return };
            let timer = self.timers.remove(i);
            match timer.kind {
                TimerKind::Bubble { target, usage, think, thread } => {
                    self.last_bubble_timer = None;
                    if self.target(target).and_then(|t| t.bubble.as_ref()).is_some_and(|b| b.usage == usage) {
                        self.update_bubble(prog, target, think, V::Lit(prog.lit_empty));
                    }
                    self.microtasks.push((thread, Resume::Advance));
                }
                TimerKind::Sound { thread } => self.microtasks.push((thread, Resume::Advance)),
                TimerKind::MakeySequence { index } => {
                    if let Some(s) = self.makey_sequences.get_mut(index) {
                        s.2 = false;
                    }
                }
            }
        }
    }
}
