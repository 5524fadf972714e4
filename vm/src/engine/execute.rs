//! Running one block (scratch-vm's `execute`): count it for the hang guard, evaluate its
//! inputs' reporters in project.json input order (children before parents, scratch-vm's
//! `_ops` order), then dispatch to the block's implementation in [`crate::blocks`] or
//! [`crate::extensions`].

use std::rc::Rc;

use super::branch::{eval_args_distance, has_condition};
use super::resume::eval_args_resumable;
use super::value::{to_number, to_rc_string};
use super::{Resume, State, ThRef, V};
use crate::blocks::{control, data, events, looks, motion, operators, procedures, sensing, sound};
use crate::extensions::{music, offline, pen};
use crate::program::{Args, Cmd, ExprId, Program, Rep};

/// Executes the block on top of thread `t` (scratch-vm `execute`): counts one
/// operation for the hang guard, evaluates inputs, runs the block.
pub(crate) fn execute(st: &mut State, prog: &Program, t: ThRef) {
    if st.budget.hung {
        return;
    }
    #[cfg(feature = "op-profile")]
    let _node = st.th(t).peek().map(super::profile::Guard::block);
    st.budget.ops += 1;
    if st.budget.ops > st.opts.max_ops_per_step {
        st.budget.hung = true;
        return;
    }
    let Some(cur) = st.th(t).peek() else { return };
    let Some(blk) = prog.blocks.get(cur as usize) else {
        // A block id that names no block: scratch-vm retires the thread.
        st.thm(t).retire();
        return;
    };
    st.mark(cur);
    let base = st.stack.len();
    let ok = if blk.args.has_promise {
        eval_args_resumable(st, prog, t, &blk.args, base)
    } else if let Some(below) =
        st.observe.instrument.as_ref().filter(|_| has_condition(&blk.cmd)).map(|i| i.distance_bounds(cur))
    {
        eval_args_distance(st, prog, t, &blk.args, base, below);
        true
    } else {
        eval_args(st, prog, t, &blk.args, base);
        true
    };
    if ok {
        run_cmd(st, prog, t, cur, &blk.cmd, base);
    }
    st.stack.truncate(base);
}

/// Makes `stack[base..base + n]` the argument slots of a block (`undefined` until evaluated).
/// Pushes when the stack ends at `base` (always, in practice): `Vec::resize` passes its fill
/// value through memory and stalls on reading it back, on the interpreter's hottest path.
#[inline]
pub(super) fn arg_slots(stack: &mut Vec<V>, base: usize, n: usize) {
    if stack.len() == base {
        for _ in 0..n {
            stack.push(V::Undef);
        }
    } else {
        stack.resize(base + n, V::Undef);
    }
}

/// Evaluates `args` into `st.stack[base..base + n]`.
#[inline]
pub(super) fn eval_args(st: &mut State, prog: &Program, t: ThRef, args: &Args, base: usize) {
    if args.in_order && st.stack.len() == base {
        // Each input's evaluation leaves the stack as it found it, so its value lands in its
        // slot by a push: no `undefined` slots written first and overwritten (a tenth of a
        // clone swarm's step went to those).
        for &(_, e) in args.list.iter() {
            let v = arg_value(st, prog, t, e);
            st.stack.push(v);
        }
        return;
    }
    arg_slots(&mut st.stack, base, args.n as usize);
    for &(slot, e) in args.list.iter() {
        let v = arg_value(st, prog, t, e);
        if let Some(x) = st.stack.get_mut(base + slot as usize) {
            *x = v;
        }
    }
}

/// One input's value for [`eval_args`].
#[inline(always)]
fn arg_value(st: &mut State, prog: &Program, t: ThRef, e: ExprId) -> V {
    // Most inputs are constants: read here, with `eval`'s counts, instead of through a call
    // whose prologue costs more than the constant (clone swarms: a third of a step's
    // evaluations).
    match prog.exprs.get(e as usize).map(|x| &x.rep) {
        Some(Rep::Const(c)) => {
            #[cfg(feature = "op-profile")]
            let _node = super::profile::Guard::expr(e);
            st.budget.evals += 1;
            st.budget.consts += 1;
            V::from_const(*c)
        }
        _ => eval(st, prog, t, e),
    }
}

/// Evaluates a reporter.
pub(crate) fn eval(st: &mut State, prog: &Program, t: ThRef, e: ExprId) -> V {
    #[cfg(feature = "op-profile")]
    let _node = super::profile::Guard::expr(e);
    st.budget.evals += 1;
    let Some(x) = prog.exprs.get(e as usize) else { return V::Undef };
    // The reporters that heavy scripts are made of skip the argument stack: their inputs are
    // evaluated into locals, in the same order and with the same counts (issue 36's profile:
    // pushing, reading back and truncating the stack was most of a reporter's cost).
    match &x.rep {
        Rep::Const(c) => {
            st.budget.consts += 1;
            return V::from_const(*c);
        }
        Rep::Var(r) if x.args.list.is_empty() => {
            let target = st.th(t).target;
            return st.get_var(prog, target, *r);
        }
        Rep::Arg(name) if x.args.list.is_empty() => return procedures::get_param(st, t, *name),
        Rep::LengthOfList(r) if x.args.list.is_empty() => return data::length_of_list(st, prog, t, *r),
        &Rep::Shared { group, slot } => {
            // The wrapper is not an evaluation of its own.
            st.budget.evals -= 1;
            // scratch-vm builds a block's cached form when the block first runs, before any
            // of its inputs; every input runs each time, so building here, at the first shared
            // input the running block evaluates, binds the same way (and costs nothing in
            // programs without shared reporters).
            if let (Some(info), Some(cur)) = (prog.shared.as_deref(), st.th(t).peek()) {
                st.build_shared(info, cur);
            }
            let v = match x.args.list.first() {
                Some(&(_, inner)) => eval(st, prog, t, inner),
                None => V::Undef,
            };
            return match st.shared.as_deref_mut() {
                Some(sh) => sh.report(group, slot, v),
                None => v,
            };
        }
        Rep::ItemOfList(r) if x.args.n == 1 => {
            let [i, _] = eval_two(st, prog, t, &x.args);
            return data::item_of_list(st, prog, t, *r, &i);
        }
        Rep::Add | Rep::Sub | Rep::Mul | Rep::Div | Rep::Mod | Rep::Round | Rep::MathOp(_) if x.args.n <= 2 => {
            let [a, b] = eval_two_num(st, prog, t, &x.args);
            return V::num(arith(&x.rep, a, b, st.maths));
        }
        rep if rep.is_operator() && x.args.n <= 2 => {
            st.budget.rich += u64::from(!rep.is_light());
            let [a0, a1] = eval_two(st, prog, t, &x.args);
            return operators::eval(st, prog, &x.rep, &a0, &a1);
        }
        _ => {}
    }
    // Constants returned above; the light reporters' fast paths count nothing more.
    st.budget.rich += u64::from(!x.rep.is_light());
    let base = st.stack.len();
    eval_args(st, prog, t, &x.args, base);
    let v = apply_rep(st, prog, t, &x.rep, base);
    st.stack.truncate(base);
    v
}

/// `Cast.toNumber` of the reporter's value ([`eval`] then [`to_number`]), with the same
/// evaluations and counts, but arithmetic and variables never build a [`V`]: the number
/// stays in a register (a `V` is returned through memory, and reading it back right after
/// the callee wrote it stalls; issue 36's profile).
pub(crate) fn eval_num(st: &mut State, prog: &Program, t: ThRef, e: ExprId) -> f64 {
    #[cfg(feature = "op-profile")]
    let _node = super::profile::Guard::expr(e);
    let Some(x) = prog.exprs.get(e as usize) else {
        st.budget.evals += 1;
        return 0.0;
    };
    let n = match &x.rep {
        Rep::Const(c) => {
            st.budget.evals += 1;
            st.budget.consts += 1;
            return to_number(prog, &V::from_const(*c));
        }
        Rep::Add | Rep::Sub | Rep::Mul | Rep::Div | Rep::Mod | Rep::Round | Rep::MathOp(_) if x.args.n <= 2 => {
            st.budget.evals += 1;
            let [a, b] = eval_two_num(st, prog, t, &x.args);
            arith(&x.rep, a, b, st.maths)
        }
        Rep::Var(r) if x.args.list.is_empty() => {
            st.budget.evals += 1;
            let target = st.th(t).target;
            return st.var_num(prog, target, *r);
        }
        Rep::Arg(name) if x.args.list.is_empty() => {
            st.budget.evals += 1;
            return procedures::param_num(st, prog, t, *name);
        }
        _ => return to_number(prog, &eval(st, prog, t, e)),
    };
    if n.is_nan() { 0.0 } else { n }
}

/// The arithmetic operators on their inputs as numbers (scratch-vm's `operator_*`).
#[inline]
fn arith(rep: &Rep, a: f64, b: f64, maths: crate::util::mathlib::MathLib) -> f64 {
    match rep {
        Rep::Add => a + b,
        Rep::Sub => a - b,
        Rep::Mul => a * b,
        Rep::Div => a / b,
        Rep::Mod => operators::js_mod(a, b),
        Rep::Round => crate::value::js_round(a),
        Rep::MathOp(op) => operators::mathop(*op, a, maths),
        _ => f64::NAN,
    }
}

/// [`eval_two`] with the inputs as numbers (a slot without input reads `undefined`: 0).
#[inline(always)]
fn eval_two_num(st: &mut State, prog: &Program, t: ThRef, args: &Args) -> [f64; 2] {
    let mut out = [0.0, 0.0];
    for &(slot, e) in args.list.iter() {
        if slot < args.n
            && let Some(x) = out.get_mut(slot as usize)
        {
            *x = eval_num(st, prog, t, e);
        } else {
            let _ = eval(st, prog, t, e);
        }
    }
    out
}

/// Evaluates the inputs of a reporter with at most two slots into locals, as
/// [`eval_args`] would into the stack: project.json order, values of slots the opcode does
/// not read dropped. Inlined: a returned pair of values would go through memory.
#[inline(always)]
fn eval_two(st: &mut State, prog: &Program, t: ThRef, args: &Args) -> [V; 2] {
    let mut out = [V::Undef, V::Undef];
    for &(slot, e) in args.list.iter() {
        let v = eval(st, prog, t, e);
        if slot < args.n
            && let Some(x) = out.get_mut(slot as usize)
        {
            *x = v;
        }
    }
    out
}

pub(super) fn apply_rep(st: &mut State, prog: &Program, t: ThRef, rep: &Rep, base: usize) -> V {
    match rep {
        Rep::Const(c) => V::from_const(*c),
        Rep::NoFn | Rep::Undefined => V::Undef,
        Rep::Unknown(name) => {
            st.note_unknown(prog, *name);
            V::Undef
        }
        rep if rep.is_operator() => {
            // Cloned, not taken: the branch distances read the operands after the operator.
            let (a0, a1) = (st.arg(base, 0).clone(), st.arg(base, 1).clone());
            operators::eval(st, prog, rep, &a0, &a1)
        }
        Rep::XPos | Rep::YPos | Rep::Direction => motion::eval(st, t, rep),
        Rep::Size | Rep::CostumeNumName { .. } | Rep::BackdropNumName { .. } => looks::eval(st, prog, t, rep),
        Rep::Var(_)
        | Rep::ListContents(_)
        | Rep::ItemOfList(_)
        | Rep::ItemNumOfList(_)
        | Rep::LengthOfList(_)
        | Rep::ListContains(_) => data::eval(st, prog, t, rep, base),
        Rep::Volume => sound::volume(st, t),
        Rep::Arg(name) => procedures::get_param(st, t, *name),
        Rep::Counter => V::num(st.counter),
        Rep::Tempo => V::num(st.ext.tempo),
        Rep::Translate | Rep::ViewerLanguage | Rep::VideoOn => offline::eval(st, prog, t, rep, base).0,
        _ => sensing::eval(st, prog, t, rep, base),
    }
}

// ---------------------------------------------------------------- commands

fn run_cmd(st: &mut State, prog: &Program, t: ThRef, cur: u32, cmd: &Cmd, base: usize) {
    match cmd {
        Cmd::Nop | Cmd::NoFn | Cmd::Hat | Cmd::Definition => {}
        Cmd::Unknown(name) => st.note_unknown(prog, *name),
        Cmd::Expr(e) => {
            if let Some(x) = prog.exprs.get(*e as usize)
                && x.rep == Rep::Translate
            {
                // The reporter is the block's last operation: its promise moves the thread on.
                let b2 = st.stack.len();
                eval_args(st, prog, t, &x.args, b2);
                let (_, promise) = offline::eval(st, prog, t, &x.rep, b2);
                st.stack.truncate(b2);
                if promise {
                    st.promise_wait(t, Resume::Advance);
                }
                return;
            }
            let _ = eval(st, prog, t, *e);
        }
        Cmd::HatGreaterThan { .. } | Cmd::HatTouching | Cmd::HatMakeyKey | Cmd::HatMakeyCode | Cmd::HatVideoMotion => {
            events::hat_predicate(st, prog, t, cur, cmd, base)
        }
        Cmd::Repeat { .. }
        | Cmd::RepeatUntil { .. }
        | Cmd::While { .. }
        | Cmd::ForEach { .. }
        | Cmd::Forever { .. }
        | Cmd::Wait
        | Cmd::WaitUntil
        | Cmd::If { .. }
        | Cmd::IfElse { .. }
        | Cmd::AllAtOnce { .. }
        | Cmd::Stop(_)
        | Cmd::CreateClone
        | Cmd::DeleteClone
        | Cmd::IncrCounter
        | Cmd::ClearCounter => control::run(st, prog, t, cur, cmd, base),
        Cmd::Broadcast(_) | Cmd::BroadcastAndWait(_) => events::run(st, prog, t, cmd, base),
        Cmd::Say { .. }
        | Cmd::SayForSecs { .. }
        | Cmd::Show
        | Cmd::Hide
        | Cmd::SwitchCostume
        | Cmd::SwitchBackdrop
        | Cmd::SwitchBackdropAndWait
        | Cmd::NextCostume
        | Cmd::NextBackdrop
        | Cmd::ChangeEffect(_)
        | Cmd::SetEffect(_)
        | Cmd::ClearEffects
        | Cmd::ChangeSize
        | Cmd::SetSize
        | Cmd::GoFrontBack { .. }
        | Cmd::GoLayers { .. } => looks::run(st, prog, t, cmd, base),
        Cmd::MoveSteps
        | Cmd::GotoXY
        | Cmd::Goto
        | Cmd::TurnRight
        | Cmd::TurnLeft
        | Cmd::PointInDirection
        | Cmd::PointTowards
        | Cmd::Glide
        | Cmd::GlideTo
        | Cmd::Bounce
        | Cmd::SetRotationStyle(_)
        | Cmd::ChangeX
        | Cmd::SetX
        | Cmd::ChangeY
        | Cmd::SetY => motion::run(st, prog, t, cmd, base),
        Cmd::PlaySound { .. }
        | Cmd::StopAllSounds
        | Cmd::SoundEffect { .. }
        | Cmd::ClearSoundEffects
        | Cmd::SetVolume
        | Cmd::ChangeVolume => sound::run(st, prog, t, cmd, base),
        Cmd::Ask | Cmd::ResetTimer | Cmd::SetDragMode { .. } => sensing::run(st, prog, t, cmd, base),
        Cmd::SetVar(_)
        | Cmd::ChangeVar(_)
        | Cmd::AddToList(_)
        | Cmd::DeleteOfList(_)
        | Cmd::DeleteAllOfList(_)
        | Cmd::InsertAtList(_)
        | Cmd::ReplaceItemOfList(_) => data::run(st, prog, t, cmd, base),
        Cmd::Call(info) => procedures::call(st, prog, t, info, base),
        Cmd::PenClear
        | Cmd::PenStamp
        | Cmd::PenDown
        | Cmd::PenUp
        | Cmd::PenSetColor
        | Cmd::PenParam { .. }
        | Cmd::PenSize { .. }
        | Cmd::PenShade { .. }
        | Cmd::PenHue { .. } => pen::run(st, prog, t, cmd, base),
        Cmd::MusicDrum | Cmd::MusicRest | Cmd::MusicNote | Cmd::MusicInstrument { .. } | Cmd::MusicTempo { .. } => {
            music::run(st, prog, t, cmd, base)
        }
        Cmd::Speak | Cmd::SetVoice | Cmd::SetLanguage | Cmd::VideoToggle | Cmd::VideoTransparency => {
            offline::run(st, prog, t, cmd, base)
        }
    }
}

impl State {
    /// Argument `i` of the running block.
    #[inline]
    pub(crate) fn arg(&self, base: usize, i: usize) -> &V {
        self.stack.get(base + i).unwrap_or(&V::Undef)
    }

    /// Takes argument `i` of the running block out of the stack.
    #[inline]
    pub(crate) fn take_arg(&mut self, base: usize, i: usize) -> V {
        self.stack.get_mut(base + i).map(|v| std::mem::replace(v, V::Undef)).unwrap_or(V::Undef)
    }

    #[inline]
    pub(crate) fn num_arg(&self, prog: &Program, base: usize, i: usize) -> f64 {
        to_number(prog, self.arg(base, i))
    }

    /// `Cast.toString` as a shared string.
    pub(crate) fn to_string(&self, prog: &Program, v: &V) -> Rc<str> {
        to_rc_string(prog, v)
    }

    pub(crate) fn note_unknown(&mut self, prog: &Program, name: u32) {
        let op = prog.lit_str(name);
        match self.observe.unknown.get_mut(op) {
            Some(n) => *n += 1,
            None => {
                self.observe.unknown.insert(op.to_string(), 1);
            }
        }
    }
}
