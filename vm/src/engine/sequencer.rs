//! The sequencer (scratch-vm's `Runtime._step`, `Sequencer.stepThreads` and `stepThread`):
//! one step runs every active thread exactly once, in `runtime.threads` order.
//!
//! Order of operations in step k (fidelity README): (1) clock := now(k);
//! (2) fire due virtual timers; (3) apply the inputs queued since the last
//! step; (4) drain microtasks; (5) `_step`: remove killed threads, start
//! edge-activated hats (they still see `currentMSecs = now(k-1)`), one tick
//! over all threads with `currentMSecs = now(k)`; (6) drain microtasks.

use super::{Ctx, Resume, STEP_MS, State, Status, ThRef, Thread};
use crate::program::{Cmd, ExprId, NONE, Program, Rep};
use crate::vm::StepOutcome;

impl State {
    // ------------------------------------------------------------------ step

    pub(crate) fn step(&mut self, prog: &Program) -> StepOutcome {
        let k = self.clock.steps;
        if let Some(ins) = &mut self.observe.instrument {
            ins.new_step();
        }
        self.clock.now = k as f64 * STEP_MS;
        self.budget.ops_total += self.budget.ops;
        self.budget.ops = 0;
        self.budget.error = None;
        self.fixpoint = super::fixpoint::FixPoint::new_step(self.opts.max_ops_per_step, self.opts.skip_fixed_loops);
        self.fire_timers(prog);
        self.apply_pending(prog);
        if !self.budget.hung {
            self.runtime_step(prog);
            // The fork draws a frame and adds to its step timer at the end of `_step` (an
            // exception skips both).
            if self.whisker() && !self.budget.hung && self.budget.error.is_none() {
                let scene = crate::geometry::render_scene!(prog, self);
                self.geometry.frame_drawn(&scene);
                self.clock.step_timer += crate::whisker::TIMER_INCREMENT;
            }
        }
        self.clock.steps += 1;
        if self.budget.hung {
            return StepOutcome::Hang;
        }
        self.drain_microtasks(prog);
        self.sweep_threads();
        self.check_thread_index();
        StepOutcome::Ran
    }

    /// Applies the queued inputs in call order, then drains microtasks.
    pub(crate) fn apply_pending(&mut self, prog: &Program) {
        let pending = std::mem::take(&mut self.io.pending);
        for inp in pending {
            self.apply_input(prog, inp);
            if self.budget.hung {
                break;
            }
        }
        self.drain_microtasks(prog);
    }

    /// scratch-vm `Runtime._step`.
    pub(crate) fn runtime_step(&mut self, prog: &Program) {
        // Threads told to stop since the last step go first.
        self.list_retain(|th| !th.killed);
        if prog.has_edge_hats {
            // `for (hatType in this._hats)`: core hats, then extension hats in load order.
            for &k in &prog.edge_order {
                self.start_hats(prog, k, None, None);
                if self.budget.hung {
                    return;
                }
            }
        }
        self.step_threads(prog);
    }

    /// scratch-vm `Sequencer.stepThreads` with exactly one tick.
    pub(crate) fn step_threads(&mut self, prog: &Program) {
        self.clock.current_msecs = self.clock.now;
        self.threads.tick_threads = 0;
        if self.threads.list.is_empty() {
            return;
        }
        self.threads.in_tick = true;
        self.drop_orphans();
        let mut stopped = false;
        let mut i = 0usize;
        loop {
            let t = match &self.threads.orphans {
                Some(o) => match o.get(i) {
                    Some(t) => *t,
                    None => break,
                },
                None => match self.threads.list.get(i) {
                    Some(t) => *t,
                    None => break,
                },
            };
            i += 1;
            {
                let th = self.th(t);
                if th.stack.is_empty() || th.status == Status::Done {
                    stopped = true;
                    continue;
                }
            }
            if self.th(t).status == Status::YieldTick {
                self.thm(t).status = Status::Running;
            }
            let st = self.th(t).status;
            if st == Status::Running || st == Status::Yield {
                self.threads.active = Some(t);
                self.step_thread(prog, t);
                if self.budget.hung || self.budget.error.is_some() {
                    // The exception aborts the rest of the step (P10): no filtering.
                    self.threads.in_tick = false;
                    self.drop_orphans();
                    return;
                }
            }
            let th = self.th(t);
            if th.stack.is_empty() || th.status == Status::Done {
                stopped = true;
            }
        }
        self.threads.active = None;
        self.threads.in_tick = false;
        self.drop_orphans();
        // Running and finished threads alike (scratch-vm adds `doneThreads` back).
        self.threads.tick_threads = self.threads.list.len();
        if stopped {
            self.list_retain(Thread::live);
        }
    }

    /// scratch-vm `Sequencer.stepThread`.
    pub(crate) fn step_thread(&mut self, prog: &Program, t: ThRef) {
        self.budget.resumes += 1;
        if self.th(t).peek() == Some(NONE) {
            let th = self.thm(t);
            th.pop();
            if th.stack.is_empty() {
                th.status = Status::Done;
                return;
            }
        }
        loop {
            let cur = match self.th(t).peek() {
                Some(b) if b != NONE => b,
                _ => return,
            };
            let mut warp = self.th(t).stack.last().is_some_and(|f| f.warp);
            super::execute::execute(self, prog, t);
            if self.budget.hung || self.budget.error.is_some() {
                return;
            }
            match self.th(t).status {
                Status::Yield => {
                    self.thm(t).status = Status::Running;
                    if warp && self.whisker_timer_spin(t) {
                        return;
                    }
                    if warp {
                        self.skip_warp_wait(prog, t, cur);
                        // The block runs again at once: a boundary of its spin.
                        if self.budget.ops >= self.fixpoint.next_spin {
                            self.probe_fixed_point(t, true);
                        }
                        continue;
                    }
                    return;
                }
                Status::PromiseWait | Status::YieldTick => return,
                _ => {}
            }
            let mut at_warp_loop = false;
            let th = self.thm(t);
            if th.peek() == Some(cur) {
                let next = prog.blocks.get(cur as usize).map_or(NONE, |b| b.next);
                th.reuse_top(next);
            }
            loop {
                match th.peek() {
                    Some(b) if b != NONE => break,
                    _ => {}
                }
                th.pop();
                let Some(f) = th.stack.last() else {
                    th.status = Status::Done;
                    return;
                };
                warp = f.warp;
                if f.is_loop {
                    if !warp {
                        return;
                    }
                    at_warp_loop = true;
                    continue;
                }
                let b = f.block;
                let next = prog.blocks.get(b as usize).map_or(NONE, |x| x.next);
                th.reuse_top(next);
            }
            let _ = warp;
            // A warp loop's boundary looks for a fixed point once the step has run many blocks.
            if at_warp_loop && self.budget.ops >= self.fixpoint.next {
                self.probe_fixed_point(t, false);
            }
        }
    }

    /// Under the `whisker` profile, whether the block a warp thread just yielded in is timed by
    /// the step count (`wait`, `say/think … for secs`, `play sound until done`, `glide`): re-run
    /// at once, it does the same thing until the step ends, since the count does not move inside
    /// a step. In Whisker such a spin ends when the thread's 500 ms warp timer (wall clock) runs
    /// out, and the thread goes on in the next step; here its turn ends at once, which is what
    /// Whisker shows but for the time it spent (scratch-vm's own warp timer reads virtual time
    /// here, so the other profiles spin until the hang guard, as the design says).
    /// A timer that has already run out in this step (`wait 0`) ends at the re-run, so only
    /// one still running counts.
    fn whisker_timer_spin(&self, t: ThRef) -> bool {
        let now = self.clock.steps as f64;
        self.whisker()
            && match self.th(t).stack.last().map(|f| &f.ctx) {
                Some(Ctx::StepTimer { offset, duration }) => now - offset < *duration,
                Some(Ctx::Glide(g)) => now - g.start < g.duration,
                _ => false,
            }
    }

    /// A warp thread whose `broadcast and wait` (or `switch backdrop and wait`) found a started
    /// thread still running re-runs that block at once and gets the same answer every time:
    /// no other thread runs and no time passes inside a warp spin, so it spins until the hang
    /// guard trips (Paper Minecraft's MIO runs did this hundreds of times, 5 million passes
    /// each: 94 % of their CPU). The passes are skipped: the hang guard counts them as it
    /// would have, the work meter does not (they are not done). Only where the block's inputs
    /// are constants: a reporter could draw random numbers or change on every pass.
    fn skip_warp_wait(&mut self, prog: &Program, t: ThRef, cur: u32) {
        let Some(blk) = prog.blocks.get(cur as usize) else { return };
        if !matches!(blk.cmd, Cmd::BroadcastAndWait(_) | Cmd::SwitchBackdropAndWait) || blk.args.has_promise {
            return;
        }
        let th = self.th(t);
        if th.peek() != Some(cur) || !matches!(th.stack.last().map(|f| &f.ctx), Some(Ctx::Started(_))) {
            return;
        }
        let constant = |e: ExprId| prog.exprs.get(e as usize).is_some_and(|x| matches!(x.rep, Rep::Const(_)));
        if !blk.args.list.iter().all(|&(_, e)| constant(e)) {
            return;
        }
        let max = self.opts.max_ops_per_step;
        if self.budget.ops < max {
            self.budget.skipped += max - self.budget.ops;
            self.budget.ops = max;
        }
    }

    /// Moves a thread whose block's promise resolved on to the next block
    /// (scratch-vm `handlePromise`'s continuation).
    pub(crate) fn resume_advance(&mut self, prog: &Program, t: ThRef) {
        let th = self.thm(t);
        th.status = Status::Running;
        let mut next;
        loop {
            let popped = th.stack.pop().map(|f| f.block);
            next = match popped {
                Some(b) if b != NONE => prog.blocks.get(b as usize).map_or(NONE, |x| x.next),
                _ => NONE,
            };
            if next != NONE {
                break;
            }
            match th.stack.last() {
                Some(f) if !f.is_loop => continue,
                _ => break,
            }
        }
        th.push(next);
    }

    pub(crate) fn drain_microtasks(&mut self, prog: &Program) {
        while !self.microtasks.is_empty() {
            let tasks = std::mem::take(&mut self.microtasks);
            for (t, r) in tasks {
                if !self.th_valid(t) {
                    continue;
                }
                match r {
                    Resume::Advance => {
                        if self.th(t).killed || self.th(t).stack.is_empty() {
                            self.thm(t).status = Status::Running;
                            continue;
                        }
                        self.resume_advance(prog, t);
                    }
                    Resume::Reporter => self.thm(t).status = Status::Running,
                }
            }
        }
    }

    /// The running block returned a promise: wait for the resolution checkpoint.
    pub(crate) fn promise_wait(&mut self, t: ThRef, resume: Resume) {
        let th = self.thm(t);
        if th.status == Status::Running {
            th.status = Status::PromiseWait;
        }
        self.microtasks.push((t, resume));
    }

    /// The running block returned a promise resolved by something else (timer, answer).
    pub(crate) fn promise_wait_external(&mut self, t: ThRef) {
        let th = self.thm(t);
        if th.status == Status::Running {
            th.status = Status::PromiseWait;
        }
    }

    /// `util.yield()`.
    #[inline]
    pub(crate) fn yield_thread(&mut self, t: ThRef) {
        self.thm(t).status = Status::Yield;
    }
}
