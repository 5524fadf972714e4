//! Custom blocks (scratch-vm `blocks/scratch3_procedures.js`, `Sequencer.stepToProcedure`).

use crate::engine::{Ctx, MAX_STACK_DEPTH, State, Status, ThRef, V};
use crate::program::{CallInfo, Cmd, ParamSrc, Program};

/// `procedures_call`: binds the parameters on the call's frame and pushes the
/// definition; yields on a recursive call outside warp mode.
pub(crate) fn call(st: &mut State, prog: &Program, t: ThRef, info: &CallInfo, base: usize) {
    if matches!(st.th(t).stack.last().map(|f| &f.ctx), Some(Ctx::Executed)) {
        return;
    }
    let Some(params) = &info.params else { return };
    let mut bound: Vec<(u32, V)> = Vec::with_capacity(params.len());
    for (name, src) in params {
        let v = match src {
            ParamSrc::Slot(s) => st.arg(base, *s as usize).clone(),
            ParamSrc::Default(c) => V::from_const(*c),
        };
        match bound.iter_mut().find(|(n, _)| n == name) {
            Some(e) => e.1 = v,
            None => bound.push((*name, v)),
        }
    }
    let th = st.thm(t);
    let Some(f) = th.stack.last_mut() else { return };
    match &mut f.params {
        Some(p) => {
            for (n, v) in bound {
                match p.iter_mut().find(|(x, _)| *x == n) {
                    Some(e) => e.1 = v,
                    None => p.push((n, v)),
                }
            }
        }
        None => f.params = Some(bound),
    }
    f.ctx = Ctx::Executed;
    let Some(def) = info.definition else { return };
    // isRecursiveCall: the 6 stack entries below the call.
    let sp = th.stack.len() - 1;
    let mut recursive = false;
    let mut count = 5i32;
    for i in (0..sp).rev() {
        let b = th.stack[i].block;
        if let Some(Cmd::Call(c)) = prog.blocks.get(b as usize).map(|x| &x.cmd)
            && c.proccode == info.proccode
        {
            recursive = true;
            break;
        }
        count -= 1;
        if count < 0 {
            break;
        }
    }
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
