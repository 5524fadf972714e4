//! Custom blocks (scratch-vm `blocks/scratch3_procedures.js`, `Sequencer.stepToProcedure`).

use crate::engine::{Ctx, Frame, MAX_STACK_DEPTH, State, Status, ThRef, Thread, V};
use crate::program::{CallInfo, Cmd, ParamSrc, Program};

/// `procedures_call`: binds the parameters on the call's frame and pushes the
/// definition; yields on a recursive call outside warp mode.
pub(crate) fn call(st: &mut State, prog: &Program, t: ThRef, info: &CallInfo, base: usize) {
    if matches!(st.th(t).stack.last().map(|f| &f.ctx), Some(Ctx::Executed)) {
        return;
    }
    let Some(params) = &info.params else { return };
    let mut bound = st.thm(t).fresh_params();
    // The names are distinct (the compiler merged repeated ones), so the list is built in one
    // pass, in place (one capacity check, no search per name).
    bound.extend(params.iter().map(|&(name, src)| match src {
        ParamSrc::Slot(s) => (name, st.arg(base, s as usize).clone()),
        ParamSrc::Default(c) => (name, V::from_const(c)),
    }));
    let th = st.thm(t);
    let Some(f) = th.stack.last_mut() else { return };
    match &mut f.params {
        Some(p) => {
            for (n, v) in bound.drain(..) {
                match p.iter_mut().find(|(x, _)| *x == n) {
                    Some(e) => e.1 = v,
                    None => p.push((n, v)),
                }
            }
            Thread::keep_params(&mut th.param_pool, bound);
        }
        None => f.params = Some(bound),
    }
    f.ctx = Ctx::Executed;
    let Some(def) = info.definition else { return };
    // isRecursiveCall (the 6 stack entries below the call) only decides a yield outside warp
    // mode, so a call in or into warp mode skips the walk (it has no other effect).
    let sp = th.stack.len() - 1;
    let warp = info.warp || th.stack.get(sp).is_some_and(|f| f.warp);
    let recursive = !warp && is_recursive_call(prog, th.stack.get(..sp).unwrap_or_default(), info.proccode);
    if th.stack.len() >= MAX_STACK_DEPTH {
        st.budget.hung = true;
        return;
    }
    th.push(def);
    let top = th.stack.last_mut();
    let Some(top) = top else { return };
    if top.warp {
        // Inside warp the timer never runs out (virtual clock): nothing to do.
    } else if info.warp {
        top.warp = true;
    } else if recursive {
        th.status = Status::Yield;
    }
}

/// scratch-vm's `isRecursiveCall`: whether one of the 6 frames below the call (`below`, the
/// nearest last) is a call of the same procedure.
fn is_recursive_call(prog: &Program, below: &[Frame], proccode: u32) -> bool {
    below.iter().rev().take(6).any(
        |f| matches!(prog.blocks.get(f.block as usize).map(|x| &x.cmd), Some(Cmd::Call(c)) if c.proccode == proccode),
    )
}

/// [`get_param`] as a number (`Cast.toNumber`), without cloning the value.
pub(crate) fn param_num(st: &State, prog: &Program, t: ThRef, name: u32) -> f64 {
    for f in st.th(t).stack.iter().rev() {
        if let Some(p) = &f.params {
            return p.iter().find(|(n, _)| *n == name).map_or(0.0, |(_, v)| crate::engine::value::to_number(prog, v));
        }
    }
    0.0
}

/// `thread.getParam`: the nearest frame with parameters decides.
pub(crate) fn get_param(st: &State, t: ThRef, name: u32) -> V {
    for f in st.th(t).stack.iter().rev() {
        if let Some(p) = &f.params {
            return p.iter().find(|(n, _)| *n == name).map_or(V::num(0.0), |(_, v)| v.clone());
        }
    }
    V::num(0.0)
}
