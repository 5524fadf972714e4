//! Block implementations, one module per category (as scratch-vm's
//! `blocks/scratch3_*.js` and `extensions/scratch3_*`), the dispatcher that
//! runs a block (scratch-vm's `execute`), reporter evaluation and the `Cast`
//! rules on internal values.
//!
//! A command block runs as scratch-vm runs its cached `_ops`: its inputs'
//! reporters in project.json input order (children before parents), then the
//! block itself. Reporters that return promises (translate) suspend the block
//! with the values computed so far and resume it after the promise resolved,
//! like scratch-vm's `reported` mechanism.

mod control;
mod data;
mod events;
mod extensions;
mod looks;
mod motion;
mod music;
mod operators;
mod pen;
mod procedures;
pub(crate) mod sensing;
mod sound;

use std::cmp::Ordering;
use std::rc::Rc;

use crate::program::{Args, Cmd, ExprId, Program, Rep};
use crate::runtime::{Replay, Resume, State, Status, ThRef, V};
use crate::value::{self, compare_lower, compare_numbers, num_is_int, str_to_bool, write_number};

/// Executes the block on top of thread `t` (scratch-vm `execute`): counts one
/// operation for the hang guard, evaluates inputs, runs the block.
pub(crate) fn execute(st: &mut State, prog: &Program, t: ThRef) {
    if st.hung {
        return;
    }
    st.ops += 1;
    if st.ops > st.opts.max_ops_per_step {
        st.hung = true;
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
    } else if st.instrument.is_some() && has_condition(&blk.cmd) {
        eval_args_distance(st, prog, t, &blk.args, base);
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
fn arg_slots(stack: &mut Vec<V>, base: usize, n: usize) {
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
fn eval_args(st: &mut State, prog: &Program, t: ThRef, args: &Args, base: usize) {
    arg_slots(&mut st.stack, base, args.n as usize);
    for &(slot, e) in args.list.iter() {
        let v = eval(st, prog, t, e);
        if let Some(x) = st.stack.get_mut(base + slot as usize) {
            *x = v;
        }
    }
}

/// Evaluates a reporter.
pub(crate) fn eval(st: &mut State, prog: &Program, t: ThRef, e: ExprId) -> V {
    st.evals += 1;
    let Some(x) = prog.exprs.get(e as usize) else { return V::Undef };
    if let Rep::Const(c) = x.rep {
        return V::from_const(c);
    }
    let base = st.stack.len();
    eval_args(st, prog, t, &x.args, base);
    let v = apply_rep(st, prog, t, &x.rep, base);
    st.stack.truncate(base);
    v
}

fn apply_rep(st: &mut State, prog: &Program, t: ThRef, rep: &Rep, base: usize) -> V {
    match rep {
        Rep::Const(c) => V::from_const(*c),
        Rep::NoFn | Rep::Undefined => V::Undef,
        Rep::Unknown(name) => {
            st.note_unknown(prog, *name);
            V::Undef
        }
        Rep::Add
        | Rep::Sub
        | Rep::Mul
        | Rep::Div
        | Rep::Lt
        | Rep::Eq
        | Rep::Gt
        | Rep::And
        | Rep::Or
        | Rep::Not
        | Rep::Random
        | Rep::Join
        | Rep::LetterOf
        | Rep::Length
        | Rep::Contains
        | Rep::Mod
        | Rep::Round
        | Rep::MathOp(_) => operators::eval(st, prog, rep, base),
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
        Rep::Counter => V::Num(st.counter),
        Rep::Tempo => V::Num(st.tempo),
        Rep::Translate | Rep::ViewerLanguage | Rep::VideoOn => extensions::eval(st, prog, t, rep, base).0,
        _ => sensing::eval(st, prog, t, rep, base),
    }
}

// ------------------------------------------------------- branch distances

/// Blocks whose CONDITION (slot 0) is instrumented.
fn has_condition(cmd: &Cmd) -> bool {
    matches!(cmd, Cmd::If { .. } | Cmd::IfElse { .. } | Cmd::RepeatUntil { .. } | Cmd::While { .. } | Cmd::WaitUntil)
}

/// Like [`eval_args`], with the branch distances of slot 0 left in `st.cond_dist`.
fn eval_args_distance(st: &mut State, prog: &Program, t: ThRef, args: &Args, base: usize) {
    arg_slots(&mut st.stack, base, args.n as usize);
    st.cond_dist = None;
    for &(slot, e) in args.list.iter() {
        let v = if slot == 0 {
            let (v, dt, df) = eval_distance(st, prog, t, e);
            st.cond_dist = Some((dt, df));
            v
        } else {
            eval(st, prog, t, e)
        };
        if let Some(x) = st.stack.get_mut(base + slot as usize) {
            *x = v;
        }
    }
}

/// Evaluates a boolean reporter with its branch distances (to true, to false); the
/// same reporters run in the same order as [`eval`], so side effects are unchanged.
fn eval_distance(st: &mut State, prog: &Program, t: ThRef, e: ExprId) -> (V, f64, f64) {
    st.evals += 1;
    let Some(x) = prog.exprs.get(e as usize) else { return (V::Undef, 1.0, 0.0) };
    let truth = |v: &V| if to_bool(prog, v) { (0.0, 1.0) } else { (1.0, 0.0) };
    match x.rep {
        Rep::And | Rep::Or | Rep::Not => {
            let base = st.stack.len();
            arg_slots(&mut st.stack, base, x.args.n as usize);
            // A missing operand is `undefined`, which is false.
            let mut d = [(1.0, 0.0); 2];
            for &(slot, c) in x.args.list.iter() {
                let (v, dt, df) = eval_distance(st, prog, t, c);
                if let Some(s) = st.stack.get_mut(base + slot as usize) {
                    *s = v;
                    if let Some(ds) = d.get_mut(slot as usize) {
                        *ds = (dt, df);
                    }
                }
            }
            let v = apply_rep(st, prog, t, &x.rep, base);
            st.stack.truncate(base);
            let (dt, df) = match x.rep {
                Rep::And => (d[0].0 + d[1].0, d[0].1.min(d[1].1)),
                Rep::Or => (d[0].0.min(d[1].0), d[0].1 + d[1].1),
                _ => (d[0].1, d[0].0),
            };
            (v, dt, df)
        }
        Rep::Lt | Rep::Gt | Rep::Eq => {
            let base = st.stack.len();
            eval_args(st, prog, t, &x.args, base);
            let v = apply_rep(st, prog, t, &x.rep, base);
            let (a, b) = (st.arg(base, 0).clone(), st.arg(base, 1).clone());
            st.stack.truncate(base);
            let holds = to_bool(prog, &v);
            let (mut n1, mut n2) = (js_number(prog, &a), js_number(prog, &b));
            if n1 == 0.0 && is_ws(prog, &a) {
                n1 = f64::NAN;
            } else if n2 == 0.0 && is_ws(prog, &b) {
                n2 = f64::NAN;
            }
            if n1.is_nan() || n2.is_nan() {
                let (dt, df) = truth(&v);
                return (v, dt, df);
            }
            let (dt, df) = match x.rep {
                Rep::Gt => {
                    if holds {
                        (0.0, n1 - n2)
                    } else {
                        (n2 - n1 + 1.0, 0.0)
                    }
                }
                Rep::Lt => {
                    if holds {
                        (0.0, n2 - n1)
                    } else {
                        (n1 - n2 + 1.0, 0.0)
                    }
                }
                _ => {
                    if holds {
                        (0.0, 1.0)
                    } else {
                        ((n1 - n2).abs(), 0.0)
                    }
                }
            };
            (v, dt, df)
        }
        Rep::TouchingObject | Rep::TouchingColor | Rep::ColorTouchingColor => {
            let base = st.stack.len();
            eval_args(st, prog, t, &x.args, base);
            let v = apply_rep(st, prog, t, &x.rep, base);
            let arg = st.arg(base, 0).clone();
            st.stack.truncate(base);
            if to_bool(prog, &v) {
                return (v, 0.0, 1.0);
            }
            let me = st.th(t).target;
            let d = match x.rep {
                Rep::TouchingObject => st.touching_distance(prog, me, &arg),
                _ => {
                    let rgb = sensing::color_arg(prog, &arg);
                    let scene = crate::geometry::render_scene!(prog, st);
                    // `touching color` was just found false for this colour; `color is touching`
                    // measures from its first colour, which the sprite may still be touching.
                    if x.rep == Rep::ColorTouchingColor && st.geometry.touching_color(&scene, me, rgb) {
                        0.0
                    } else {
                        st.geometry.color_distance(&scene, me, rgb).unwrap_or(1.0)
                    }
                }
            };
            (v, d, 0.0)
        }
        _ => {
            let v = eval(st, prog, t, e);
            let (dt, df) = truth(&v);
            (v, dt, df)
        }
    }
}

// ------------------------------------------------------------ resumable path

/// State of one resumable evaluation (blocks whose inputs hold promise reporters).
struct Resumable {
    counter: usize,
    record: Vec<V>,
    replay: Option<Box<Replay>>,
    pending: Option<V>,
}

fn subtree_ops(prog: &Program, e: ExprId) -> usize {
    let Some(x) = prog.exprs.get(e as usize) else { return 0 };
    let own = usize::from(!matches!(x.rep, Rep::Const(_) | Rep::NoFn | Rep::Unknown(_)));
    own + x.args.list.iter().map(|&(_, c)| subtree_ops(prog, c)).sum::<usize>()
}

/// Like [`eval_args`], but a promise-returning reporter suspends the block: the
/// values computed so far are saved on the frame and the thread waits one
/// microtask checkpoint. Returns false when suspended.
fn eval_args_resumable(st: &mut State, prog: &Program, t: ThRef, args: &Args, base: usize) -> bool {
    let replay = st.thm(t).stack.last_mut().and_then(|f| f.replay.take());
    let mut r = Resumable { counter: 0, record: Vec::new(), replay, pending: None };
    arg_slots(&mut st.stack, base, args.n as usize);
    for &(slot, e) in args.list.iter() {
        let Some(v) = eval_resumable(st, prog, t, e, &mut r) else {
            let pending = r.counter;
            let resolved = r.pending.take().unwrap_or(V::Undef);
            if let Some(f) = st.thm(t).stack.last_mut() {
                f.replay = Some(Box::new(Replay { values: r.record, pending, resolved }));
            }
            let th = st.thm(t);
            if th.status == Status::Running {
                th.status = Status::PromiseWait;
            }
            st.microtasks.push((t, Resume::Reporter));
            return false;
        };
        if let Some(x) = st.stack.get_mut(base + slot as usize) {
            *x = v;
        }
    }
    true
}

fn eval_resumable(st: &mut State, prog: &Program, t: ThRef, e: ExprId, r: &mut Resumable) -> Option<V> {
    st.evals += 1;
    let x = prog.exprs.get(e as usize)?;
    let is_op = !matches!(x.rep, Rep::Const(_) | Rep::NoFn | Rep::Unknown(_));
    if is_op && let Some(rp) = &r.replay {
        let size = subtree_ops(prog, e);
        let my = r.counter + size - 1;
        if my < rp.pending {
            let start = r.counter;
            r.record.extend(rp.values.get(start..=my).unwrap_or(&[]).iter().cloned());
            r.counter += size;
            return Some(rp.values.get(my).cloned().unwrap_or(V::Undef));
        }
        if my == rp.pending {
            let start = r.counter;
            r.record.extend(rp.values.get(start..my).unwrap_or(&[]).iter().cloned());
            let v = rp.resolved.clone();
            r.record.push(v.clone());
            r.counter += size;
            return Some(v);
        }
    }
    if let Rep::Const(c) = x.rep {
        return Some(V::from_const(c));
    }
    let base = st.stack.len();
    arg_slots(&mut st.stack, base, x.args.n as usize);
    for &(slot, c) in x.args.list.iter() {
        let Some(v) = eval_resumable(st, prog, t, c, r) else {
            st.stack.truncate(base);
            return None;
        };
        if let Some(s) = st.stack.get_mut(base + slot as usize) {
            *s = v;
        }
    }
    let v = if x.rep == Rep::Translate {
        let (v, promise) = extensions::eval(st, prog, t, &x.rep, base);
        if promise {
            st.stack.truncate(base);
            r.pending = Some(v);
            return None;
        }
        v
    } else {
        apply_rep(st, prog, t, &x.rep, base)
    };
    st.stack.truncate(base);
    if is_op {
        r.record.push(v.clone());
        r.counter += 1;
    }
    Some(v)
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
                let (_, promise) = extensions::eval(st, prog, t, &x.rep, b2);
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
            extensions::run(st, prog, t, cmd, base)
        }
    }
}

// ------------------------------------------------------------------- casts

/// Result of scratch-vm `Cast.toListIndex`.
pub(crate) enum ListIndex {
    Invalid,
    All,
    At(usize),
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
        match self.unknown.get_mut(op) {
            Some(n) => *n += 1,
            None => {
                self.unknown.insert(op.to_string(), 1);
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

    /// scratch-vm `Cast.toListIndex`.
    pub(crate) fn list_index(&mut self, prog: &Program, index: &V, len: usize, accept_all: bool) -> ListIndex {
        if !matches!(index, V::Num(_)) {
            let s: Option<&str> = match index {
                V::Lit(l) => Some(prog.lit_str(*l)),
                V::Str(s) => Some(s),
                _ => None,
            };
            match s {
                Some("all") => return if accept_all { ListIndex::All } else { ListIndex::Invalid },
                Some("last") => return if len > 0 { ListIndex::At(len) } else { ListIndex::Invalid },
                Some("random" | "any") => {
                    if len > 0 {
                        let r = self.rng.next_f64();
                        return ListIndex::At(1 + (r * len as f64).floor() as usize);
                    }
                    return ListIndex::Invalid;
                }
                _ => {}
            }
        }
        let i = to_number(prog, index).floor();
        if i < 1.0 || i > len as f64 { ListIndex::Invalid } else { ListIndex::At(i as usize) }
    }
}

/// JS `Number(v)`.
#[inline]
pub(crate) fn js_number(prog: &Program, v: &V) -> f64 {
    match v {
        V::Num(n) => *n,
        V::Bool(b) => f64::from(u8::from(*b)),
        V::Lit(l) => prog.lit(*l).num,
        V::Str(s) => value::js_string_to_number(s),
        V::Undef => f64::NAN,
        V::Null => 0.0,
    }
}

/// scratch-vm `Cast.toNumber`.
#[inline]
pub(crate) fn to_number(prog: &Program, v: &V) -> f64 {
    let n = js_number(prog, v);
    if n.is_nan() { 0.0 } else { n }
}

/// scratch-vm `Cast.toBoolean`.
#[inline]
pub(crate) fn to_bool(prog: &Program, v: &V) -> bool {
    match v {
        V::Bool(b) => *b,
        V::Num(n) => !(*n == 0.0 || n.is_nan()),
        V::Lit(l) => str_to_bool(prog.lit_str(*l)),
        V::Str(s) => str_to_bool(s),
        V::Undef | V::Null => false,
    }
}

/// Calls `f` with JS `String(v)` (no allocation for strings).
pub(crate) fn with_str<R>(prog: &Program, v: &V, f: impl FnOnce(&str) -> R) -> R {
    match v {
        V::Lit(l) => f(prog.lit_str(*l)),
        V::Str(s) => f(s),
        V::Bool(b) => f(if *b { "true" } else { "false" }),
        V::Undef => f("undefined"),
        V::Null => f("null"),
        V::Num(n) => {
            let mut s = String::new();
            write_number(&mut s, *n);
            f(&s)
        }
    }
}

/// Appends JS `String(v)` to `out`.
pub(crate) fn push_str(prog: &Program, v: &V, out: &mut String) {
    match v {
        V::Num(n) => write_number(out, *n),
        _ => with_str(prog, v, |s| out.push_str(s)),
    }
}

/// JS `String(v)` as a shared string.
pub(crate) fn to_rc_string(prog: &Program, v: &V) -> Rc<str> {
    match v {
        V::Str(s) => s.clone(),
        _ => with_str(prog, v, |s: &str| Rc::from(s)),
    }
}

/// scratch-vm `Cast.isInt`.
pub(crate) fn is_int(prog: &Program, v: &V) -> bool {
    match v {
        V::Num(n) => num_is_int(*n),
        V::Bool(_) => true,
        V::Lit(l) => !prog.lit_str(*l).contains('.'),
        V::Str(s) => !s.contains('.'),
        V::Undef | V::Null => false,
    }
}

/// scratch-vm `Cast.isWhiteSpace`.
fn is_ws(prog: &Program, v: &V) -> bool {
    match v {
        V::Lit(l) => prog.lit(*l).ws,
        V::Str(s) => value::is_white_space_str(s),
        V::Null => true,
        _ => false,
    }
}

/// scratch-vm `Cast.compare`.
pub(crate) fn compare(prog: &Program, a: &V, b: &V) -> Ordering {
    if let (V::Num(x), V::Num(y)) = (a, b)
        && !x.is_nan()
        && !y.is_nan()
    {
        return compare_numbers(*x, *y);
    }
    let mut n1 = js_number(prog, a);
    let mut n2 = js_number(prog, b);
    if n1 == 0.0 && is_ws(prog, a) {
        n1 = f64::NAN;
    } else if n2 == 0.0 && is_ws(prog, b) {
        n2 = f64::NAN;
    }
    if n1.is_nan() || n2.is_nan() {
        return with_str(prog, a, |sa| with_str(prog, b, |sb| compare_lower(sa, sb)));
    }
    compare_numbers(n1, n2)
}

/// JS `===` (for `Array.prototype.indexOf`).
pub(crate) fn strict_eq(prog: &Program, a: &V, b: &V) -> bool {
    match (a, b) {
        (V::Num(x), V::Num(y)) => x == y,
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Undef, V::Undef) | (V::Null, V::Null) => true,
        (V::Lit(_) | V::Str(_), V::Lit(_) | V::Str(_)) => with_str(prog, a, |sa| with_str(prog, b, |sb| sa == sb)),
        _ => false,
    }
}

/// Whether two numbers are both whole (for integer fast paths).
#[allow(dead_code)]
pub(crate) fn both_int(a: f64, b: f64) -> bool {
    a.fract() == 0.0 && b.fract() == 0.0
}
