//! Replays of concrete events outside the budget (minimisation, assertions, mutation
//! analysis), and the snapshots that let a replay continue where another left off.

use super::{Executor, Live, executed};
use crate::events::Event;
use crate::sut::Sut;
use crate::trace::Trace;
use crate::work::Kind;

/// A replay's VM after some of its events ([`Executor::replay_from`]): a replay of more
/// events with the same beginning continues from a copy instead of starting over, with the
/// same trace (the VM is deterministic and a copy is the whole state).
#[derive(Clone)]
pub struct Snapshot(Live);

/// What [`Executor::replay_from`] returns.
pub struct Replayed {
    /// The trace (of the replay so far when it stopped at its target).
    pub trace: Trace,
    /// It stopped because its target was covered.
    pub stopped: bool,
    /// The snapshots it kept, by the number of its events before them.
    pub kept: Vec<(usize, Snapshot)>,
}

/// A snapshot is taken after an event when the VM did at least this many times a copy's work
/// since the last one (or its start): copies never cost much more than the replays they save.
pub const SNAPSHOT_WORTH: u64 = 2;

impl Executor<'_> {
    /// Replays concrete events in a fresh VM outside the budget (minimisation);
    /// returns the trace.
    pub fn replay(&mut self, events: &[Event]) -> Trace {
        let mut live = self.start(false);
        for ev in events {
            self.apply(&mut live, ev);
        }
        self.end(&live);
        self.trace_of(&live)
    }

    /// A copy of `live` to continue from later; its copy's work is charged.
    fn snapshot(&mut self, live: &Live) -> Snapshot {
        self.add_work(Kind::Start, live.sut.vm().clone_work());
        let mut copy = live.clone();
        copy.base = live.sut.work_parts();
        copy.base_unknown = live.sut.unknown_opcodes();
        Snapshot(copy)
    }

    /// Replays `events` outside the budget like [`Executor::replay`], continuing from `from`
    /// (the VM after the events before these) or in a fresh VM; with `until`, it stops once
    /// target `until` is covered (then the trace is of the replay so far). Returns the trace,
    /// whether it stopped so, and the snapshots it kept: `(j, s)` is the VM after `j` of
    /// `events` (before the last; with `from`, `j ≥ 1`), kept where the VM worked
    /// [`Executor::snapshot_worth`] copies since the previous one.
    pub fn replay_from(&mut self, from: Option<&Snapshot>, events: &[Event], until: Option<usize>) -> Replayed {
        let mut live = match from {
            Some(s) => {
                self.add_work(Kind::Start, s.0.sut.vm().clone_work());
                s.0.clone()
            }
            None => self.start(false),
        };
        let mut kept = Vec::new();
        // Work since the last snapshot: a fresh VM's start counts.
        let p = &self.ctx.project;
        let mut credit = if from.is_none() { crate::work::vm_start(p.blocks.len(), p.targets.len()) } else { 0 };
        let mut mark = live.sut.work();
        self.stop_at = until.and_then(|t| self.ctx.model.targets.blocks.get(t).copied());
        let mut stopped = self.stop_at.is_some_and(|b| executed(&live.sut, b));
        for (j, ev) in events.iter().enumerate() {
            if stopped {
                break;
            }
            if j > 0 || from.is_none() {
                let since = live.sut.work().saturating_sub(mark).saturating_add(credit);
                // A copy costs at least `CLONE`: below that the (slower) size estimate cannot
                // say yes, so it is not computed.
                let floor = self.snapshot_worth.saturating_mul(clowder_vm::geometry::cost::CLONE);
                if since >= floor
                    && since >= self.snapshot_worth.saturating_mul(live.sut.vm().clone_work())
                    && !self.work_capped()
                {
                    kept.push((j, self.snapshot(&live)));
                    mark = live.sut.work();
                    credit = 0;
                }
            }
            self.apply(&mut live, ev);
            stopped = live.cut && self.stop_at.is_some_and(|b| executed(&live.sut, b));
        }
        self.stop_at = None;
        self.end(&live);
        Replayed { trace: self.trace_of(&live), stopped, kept }
    }

    /// Replays concrete events in a fresh VM outside the budget, like
    /// [`Executor::replay`], calling `observe` with the VM before the first
    /// event (with 0) and after each event and its one-step wait (with the
    /// number of events sent so far); stops early when `observe` returns false.
    /// Returns the steps run.
    pub fn replay_observed(&mut self, events: &[Event], observe: &mut dyn FnMut(usize, &mut Sut) -> bool) -> u64 {
        let before = self.replay_steps;
        let mut live = self.start(false);
        if observe(0, &mut live.sut) {
            for (i, ev) in events.iter().enumerate() {
                self.apply(&mut live, ev);
                if !observe(i + 1, &mut live.sut) {
                    break;
                }
            }
        }
        self.end(&live);
        self.replay_steps - before
    }
}
