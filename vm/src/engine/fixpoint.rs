//! Warp loops that have stopped changing anything: the rest of their spin is skipped.
//!
//! A warp thread never yields inside a step (the warp timer reads virtual time, which does not
//! move), so a warp loop whose body no longer changes anything — `repeat until <not touching
//! (Map)>: change y by (1)` with the sprite held at the stage's edge by fencing — runs until
//! the hang guard trips: millions of blocks, each a touching question, in every step that gets
//! there. In the random sample such spins were 43 % of a whole study's CPU (`501018355`,
//! `402062721`), and the work cap ended those runs long before their step budget.
//!
//! The check is exact. When a step has run many blocks, each boundary of the running warp loop
//! takes a cheap summary (the thread's frames, its target, the stage); when two boundaries in a
//! row agree on it, the whole state is written out ([`State::fingerprint`]: everything a block
//! can read or change, counters and caches left out), and when that is equal at two boundaries
//! the VM is back where it was, so every later period does exactly what the last did: the hang
//! guard's count jumps over whole periods (the last one or two still run, and the guard trips
//! as before, on the same step), and the instrumentation's condition counts get what the
//! skipped periods would have added. Traces, coverage, branch distances and
//! condition counts are as if the loop had spun; the skipped blocks are not done, so the work
//! meter does not count them (as with [`State::skip_warp_wait`]'s spins).
//!
//! A warp thread also spins on a single block: one that waits (`wait`, `wait until`,
//! Whisker's step timers) yields, runs again at once and never sees its timer end. Each such
//! re-run is a boundary too (period: one block), probed from the first re-run with a probe
//! of its own, so that a spin that ends does not hold up a loop's probe.

use std::fmt::Write as _;

use super::{State, ThRef};

/// Fraction of the hang guard's count at which a step first looks for a fixed point (then at
/// twice as many blocks, and so on): steps that end sooner never pay for a probe.
const FIRST_PROBE_DIVISOR: u64 = 64;
/// Boundaries of the probed loop looked at before the probe gives up until the next
/// threshold (a loop nested in the spinning one has a different state at each of its own
/// iterations; the spin's period is usually one or two iterations).
const BOUNDARIES: u32 = 8;

/// A probe in progress: what was seen at the last boundary of a warp loop.
#[derive(Clone, Debug)]
struct Probe {
    thread: ThRef,
    /// Stack depth and block of the loop frame the probe compares at.
    depth: usize,
    block: u32,
    /// [`State::summary`] at the last boundary.
    summary: String,
    /// The whole fingerprint, with `budget.ops` and the instrumentation's condition counts,
    /// at the last boundary whose summary matched the one before (the whole state is written
    /// out only then: in a loop that does work, the summary already differs).
    full: Option<Written>,
    left: u32,
}

/// The whole state written out at a boundary, with what the skip needs from that moment.
#[derive(Clone, Debug)]
struct Written {
    state: String,
    /// `budget.ops` at the boundary.
    ops: u64,
    /// The instrumentation's condition counts (true, false) per block at the boundary.
    counts: Vec<(u64, u64)>,
}

/// The per-step state of the search for a fixed point (reset at every step).
#[derive(Clone, Debug)]
pub(crate) struct FixPoint {
    /// `budget.ops` from which the next probe starts at a warp loop's boundary.
    pub next: u64,
    /// The same at a waiting block's re-run ([`State::probe_fixed_point`]).
    pub next_spin: u64,
    /// The probe at a loop's boundaries and the one at a waiting block's re-runs, apart: a
    /// loop probe waits for its own boundary through those of loops nested in it, and a
    /// spin inside the loop must not take its place.
    probe: Option<Box<Probe>>,
    spin_probe: Option<Box<Probe>>,
}

impl FixPoint {
    /// No probe yet; at loops the first one after `max_ops / 64` blocks, at waiting blocks
    /// from the first re-run (never when off).
    pub(crate) fn new_step(max_ops: u64, on: bool) -> FixPoint {
        let (next, next_spin) = if on { ((max_ops / FIRST_PROBE_DIVISOR).max(1), 0) } else { (u64::MAX, u64::MAX) };
        FixPoint { next, next_spin, probe: None, spin_probe: None }
    }

    fn slot(&mut self, spin: bool) -> &mut Option<Box<Probe>> {
        if spin { &mut self.spin_probe } else { &mut self.probe }
    }
}

impl State {
    /// Called at a boundary of a warp loop of thread `t` (its loop frame on top) once
    /// `budget.ops >= fixpoint.next`, or, with `spin`, when a warp thread's block yielded
    /// and runs again at once, once `budget.ops >= fixpoint.next_spin`. Virtual time does
    /// not move inside a step, so `wait`, `wait until` and Whisker's `play sound until done`
    /// spin there until the hang guard trips: each re-run is a boundary with a period of one
    /// block. Those are probed from the first re-run, as their passes are too cheap to make
    /// a probe worth waiting for; a spin that ends (`wait 0`, a condition that came true)
    /// leaves its probe to the next spin.
    pub(crate) fn probe_fixed_point(&mut self, t: ThRef, spin: bool) {
        let th = self.th(t);
        let (depth, block) = match th.stack.last() {
            Some(f) => (th.stack.len(), f.block),
            None => return,
        };
        let ops = self.budget.ops;
        let waiting = self.fixpoint.slot(spin).take();
        let mut p = match waiting {
            Some(p) if p.thread == t && p.depth == depth && p.block == block => p,
            // Another loop's boundary: keep waiting for the probed one (no summary needed).
            Some(p) if !spin => {
                *self.fixpoint.slot(spin) = Some(p);
                return;
            }
            // No probe, or the probed spin has ended.
            _ => {
                let p = Probe { thread: t, depth, block, summary: self.summary(t), full: None, left: BOUNDARIES };
                *self.fixpoint.slot(spin) = Some(Box::new(p));
                return;
            }
        };
        p.left -= 1;
        let summary = self.summary(t);
        if summary != p.summary {
            p.summary = summary;
            p.full = None;
        } else {
            let full = self.fingerprint();
            let counts = self.condition_counts();
            match p.full.take() {
                Some(before) if before.state == full => {
                    self.skip_periods(ops - before.ops, &before.counts, &counts);
                    self.fixpoint.next = u64::MAX;
                    self.fixpoint.next_spin = u64::MAX;
                    return;
                }
                _ => p.full = Some(Written { state: full, ops, counts }),
            }
        }
        if p.left > 0 {
            *self.fixpoint.slot(spin) = Some(p);
        } else if spin {
            // Not a fixed point (yet): look again after twice as many blocks.
            self.fixpoint.next_spin = ops.saturating_mul(2).max(1);
        } else {
            self.fixpoint.next = ops.saturating_mul(2);
        }
    }

    /// The VM is where it was `period` blocks ago: the guard's count jumps over whole periods
    /// but the last one or two, which run, so it trips inside the loop at the block it always
    /// did; the condition counts get what the skipped periods would have added.
    fn skip_periods(&mut self, period: u64, before: &[(u64, u64)], after: &[(u64, u64)]) {
        let ops = self.budget.ops;
        let skip = (self.opts.max_ops_per_step.saturating_sub(ops) / period.max(1)).saturating_sub(1);
        if period == 0 || skip == 0 {
            return;
        }
        self.budget.ops += skip * period;
        self.budget.skipped += skip * period;
        if let Some(ins) = &mut self.observe.instrument {
            ins.add_condition_counts(before, after, skip);
        }
    }

    /// A cheap part of [`State::fingerprint`] that a loop doing work usually changes: the
    /// thread's frames (loop counters, parameters), its target and the stage (position, look,
    /// variables, list lengths), the random stream and the pen's generation. Equal summaries
    /// decide nothing; they only say when the whole state is worth writing out.
    fn summary(&self, t: ThRef) -> String {
        let mut s = String::with_capacity(256);
        let th = self.th(t);
        let _ = write!(s, "{:?}{:?}{}", th.stack, self.rng, self.pen_ops);
        for id in [th.target, self.stage()] {
            if let Some(x) = self.target(id) {
                let lens: Vec<usize> = x.lists.iter().map(Vec::len).collect();
                let _ = write!(
                    s,
                    "|{:?}{:?}{:?}{:?}{:?}{}{:?}{lens:?}",
                    x.x, x.y, x.direction, x.size, x.costume, x.visible, x.vars
                );
            }
        }
        s
    }

    /// The instrumentation's (true, false) counts per block (empty without it).
    fn condition_counts(&self) -> Vec<(u64, u64)> {
        self.observe
            .instrument
            .as_ref()
            .map(|i| i.conditions().iter().map(|c| (c.true_count, c.false_count)).collect())
            .unwrap_or_default()
    }

    /// Everything a block can read or change, written out: equal fingerprints at two
    /// boundaries mean the VM is in the same state. Left out: counters that only count (the
    /// budget's, the instrumentation's condition counts, handled apart), the logs' contents
    /// (append-only within a step: their lengths stand for them), and caches of values that
    /// are functions of what is here (the geometry's indexes, the render log, resolved menu
    /// literals). The destructuring names every field, so a new one must be placed here.
    pub(crate) fn fingerprint(&self) -> String {
        let State {
            opts: _,
            targets,
            threads,
            clock,
            timers,
            microtasks,
            io,
            ask,
            budget,
            observe,
            ext,
            rng,
            uid_base,
            counter,
            bubble_usage,
            stack,
            geometry,
            sound_durations: _,
            touch_cache: _,
            fixpoint: _,
            pen_ops,
            // Grows only when a clone is made, which the targets show.
            whisker_wrapped: _,
            shared,
            // A constant of the VM (its profile's), as `opts`.
            maths: _,
            glides,
        } = self;
        let super::target::Targets {
            slots,
            free,
            runtime_order,
            exec,
            render_log: _,
            render_log_base: _,
            layer_epoch,
            target_epoch,
            clone_count,
            clone_serial,
            stage_slot,
            draw,
        } = targets;
        let super::thread::Threads { slab, free_slots, list, by_target, orphans, in_tick, active, tick_threads } =
            threads;
        // The counters only count; `hung` and `error` end the step.
        let super::runtime::Budget {
            ops: _,
            ops_total: _,
            evals: _,
            consts: _,
            rich: _,
            draws: _,
            resumes: _,
            skipped: _,
            distance: _,
            hung,
            error,
        } = budget;
        let super::runtime::Observe {
            executed,
            unknown,
            instrument,
            cond_dist,
            say_log,
            move_log,
            move_scenes,
            listener_log,
            event_seq,
            stop_alls,
        } = observe;
        let mut s = String::with_capacity(4096);
        let _ = write!(
            s,
            "{slots:?}{free:?}{runtime_order:?}{exec:?}{layer_epoch}{target_epoch}{clone_count}{clone_serial:?}\
             {stage_slot}{draw:?}|{slab:?}{free_slots:?}{list:?}{by_target:?}{orphans:?}{in_tick}{active:?}\
             {tick_threads}|{clock:?}{timers:?}{microtasks:?}{io:?}{ask:?}|{error:?}{hung}|{executed:?}{unknown:?}{cond_dist:?}{:?}{:?}{:?}{move_scenes}{event_seq}{stop_alls}\
             |{ext:?}{rng:?}{uid_base}{counter:?}{bubble_usage}{stack:?}{pen_ops}{:?}{shared:?}{glides}",
            say_log.as_ref().map(Vec::len),
            move_log.as_ref().map(Vec::len),
            listener_log.as_ref().map(Vec::len),
            geometry.kept_mips(),
        );
        let _ = write!(s, "{:?}", geometry.kept_hulls());
        if let Some(ins) = instrument {
            ins.write_fingerprint(&mut s);
        }
        s
    }
}
