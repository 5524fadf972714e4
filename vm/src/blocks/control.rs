//! Control blocks (scratch-vm `blocks/scratch3_control.js`).

use crate::engine::value::{to_bool, to_number, with_str};
use crate::engine::{Ctx, MAX_STACK_DEPTH, State, Status, ThRef, V};
use crate::program::{Cmd, NONE, Program, StopOpt};
use crate::value::{js_max, js_round};

pub(crate) fn run(st: &mut State, prog: &Program, t: ThRef, cur: u32, cmd: &Cmd, base: usize) {
    match *cmd {
        Cmd::Repeat { sub } => {
            let times = js_round(st.num_arg(prog, base, 0));
            let f = st.thm(t).stack.last_mut();
            let Some(f) = f else { return };
            let c = match f.ctx {
                Ctx::Counter(c) => c,
                _ => times,
            } - 1.0;
            f.ctx = Ctx::Counter(c);
            if let Some(ins) = &mut st.observe.instrument {
                ins.loop_remaining(cur, c);
            }
            if c >= 0.0 {
                start_branch(st, t, sub, true);
            }
        }
        Cmd::RepeatUntil { sub } => {
            let c = st.condition(prog, t, cur, base);
            if !c {
                start_branch(st, t, sub, true);
            }
        }
        Cmd::While { sub } => {
            let c = st.condition(prog, t, cur, base);
            if c {
                start_branch(st, t, sub, true);
            }
        }
        Cmd::ForEach { var, sub } => {
            let limit = crate::engine::value::js_number(prog, st.arg(base, 0));
            let Some(f) = st.thm(t).stack.last_mut() else { return };
            let index = match f.ctx {
                Ctx::Counter(i) => i,
                _ => 0.0,
            };
            f.ctx = Ctx::Counter(index);
            if index < limit {
                let index = index + 1.0;
                f.ctx = Ctx::Counter(index);
                let target = st.th(t).target;
                st.set_var(prog, target, var, V::num(index));
                start_branch(st, t, sub, true);
            }
        }
        Cmd::Forever { sub } => start_branch(st, t, sub, true),
        Cmd::Wait if st.whisker() => match step_timer_phase(st, t) {
            StepTimer::NeedsInit => {
                let steps = crate::whisker::instrumented_steps(to_number(prog, st.arg(base, 0)));
                start_step_timer(st, t, steps);
            }
            StepTimer::Running | StepTimer::Finished => {}
        },
        Cmd::Wait => {
            let now = st.clock.current_msecs;
            let Some(f) = st.thm(t).stack.last_mut() else { return };
            match f.ctx {
                Ctx::Timer { start, duration } => {
                    if now - start < duration {
                        st.yield_thread(t);
                    }
                }
                _ => {
                    let d = js_max(0.0, 1000.0 * to_number(prog, st.arg(base, 0)));
                    let f = st.thm(t).stack.last_mut();
                    if let Some(f) = f {
                        f.ctx = Ctx::Timer { start: now, duration: d };
                    }
                    st.yield_thread(t);
                }
            }
        }
        Cmd::WaitUntil => {
            let c = st.condition(prog, t, cur, base);
            if !c {
                st.yield_thread(t);
            }
        }
        Cmd::If { sub } => {
            let c = st.condition(prog, t, cur, base);
            if c {
                start_branch(st, t, sub, false);
            }
        }
        Cmd::IfElse { sub, sub2 } => {
            if st.condition(prog, t, cur, base) {
                start_branch(st, t, sub, false);
            } else {
                start_branch(st, t, sub2, false);
            }
        }
        Cmd::AllAtOnce { sub } => start_branch(st, t, sub, false),
        Cmd::Stop(opt) => match opt {
            StopOpt::All => st.stop_all(prog),
            StopOpt::Other => {
                let target = st.th(t).target;
                st.stop_for_target(prog, target, Some(t));
            }
            StopOpt::This => stop_this_script(st, prog, t),
            StopOpt::Nothing => {}
        },
        Cmd::CreateClone => {
            let opt = st.take_arg(base, 0);
            let me = st.th(t).target;
            let of = with_str(prog, &opt, |s| if s == "_myself_" { Some(me) } else { st.sprite_by_name(prog, s) });
            if let Some(of) = of {
                st.create_clone(prog, of);
            }
        }
        Cmd::DeleteClone => {
            let me = st.th(t).target;
            if st.target(me).is_some_and(|x| !x.is_original) {
                st.dispose_clone(prog, me);
                st.stop_for_target(prog, me, None);
            }
        }
        Cmd::IncrCounter => st.counter += 1.0,
        Cmd::ClearCounter => st.counter = 0.0,
        _ => {}
    }
}

/// `util.startBranch(n, isLoop)`.
pub(crate) fn start_branch(st: &mut State, t: ThRef, sub: u32, is_loop: bool) {
    let th = st.thm(t);
    if let Some(f) = th.stack.last_mut() {
        f.is_loop = is_loop;
    }
    if th.stack.len() >= MAX_STACK_DEPTH {
        st.budget.hung = true;
        return;
    }
    th.push(sub);
}

/// `thread.stopThisScript()`: pop until a procedure call (which then acts as return).
pub(crate) fn stop_this_script(st: &mut State, prog: &Program, t: ThRef) {
    let th = st.thm(t);
    while let Some(b) = th.peek() {
        if b != NONE && prog.blocks.get(b as usize).is_some_and(|x| matches!(x.cmd, Cmd::Call(_))) {
            break;
        }
        th.stack.pop();
    }
    if th.stack.is_empty() {
        th.status = Status::Done;
    }
}

impl State {
    /// A control block's CONDITION (slot 0) as a boolean; instrumented when enabled.
    #[inline]
    pub(crate) fn condition(&mut self, prog: &Program, _t: ThRef, cur: u32, base: usize) -> bool {
        let v = to_bool(prog, self.arg(base, 0));
        if let Some(ins) = &mut self.observe.instrument {
            let (dt, df) = self.observe.cond_dist.take().unwrap_or(if v { (0.0, 1.0) } else { (1.0, 0.0) });
            ins.condition(cur, v, dt, df);
        }
        v
    }

    /// `runtime.getSpriteTargetByName`: the first non-stage target with that sprite name.
    ///
    /// `rt_targets` starts with the originals in definition order (never disposed); clones are
    /// appended and share their original's name, so the first match is always among the
    /// originals: only those are compared (projects with hundreds of clones ask this per frame).
    pub(crate) fn sprite_by_name(&self, prog: &Program, name: &str) -> Option<crate::engine::TargetId> {
        let originals = self.targets.runtime_order.len().min(prog.defs.len());
        self.targets.runtime_order[..originals]
            .iter()
            .copied()
            .find(|&id| self.target(id).is_some_and(|x| !x.is_stage && prog.lit_str(prog.def(x.def).name) == name))
    }
}

/// Where Whisker's stack timer of the block on top of `t` stands (the fork's
/// `stackTimerNeedsInit` / `stackTimerFinished`, counted in steps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StepTimer {
    /// Not started: the block runs for the first time.
    NeedsInit,
    /// Started, not finished: the thread has yielded again.
    Running,
    /// `stepsExecuted - stepOffset >= duration`: the block completes now.
    Finished,
}

/// The phase of the step timer of the block on top of `t`; yields the thread while it runs.
pub(super) fn step_timer_phase(st: &mut State, t: ThRef) -> StepTimer {
    let now = st.clock.steps as f64;
    match st.th(t).stack.last().map(|f| &f.ctx) {
        Some(Ctx::StepTimer { offset, duration }) if now - offset >= *duration => StepTimer::Finished,
        Some(Ctx::StepTimer { .. }) => {
            st.yield_thread(t);
            StepTimer::Running
        }
        _ => StepTimer::NeedsInit,
    }
}

/// `util.startStackTimer` of the fork (duration in steps), then `util.yield()`.
pub(super) fn start_step_timer(st: &mut State, t: ThRef, duration: f64) {
    let offset = st.clock.steps as f64;
    if let Some(f) = st.thm(t).stack.last_mut() {
        f.ctx = Ctx::StepTimer { offset, duration };
    }
    st.yield_thread(t);
}
