//! Blocks whose inputs hold promise reporters (translate): the values computed so far are
//! saved on the frame and the block runs again after the promise resolved, like scratch-vm's
//! `reported` mechanism.

use super::execute::{apply_rep, arg_slots};
use super::{Replay, Resume, State, Status, ThRef, V};
use crate::extensions::offline;
use crate::program::{Args, ExprId, Program, Rep};

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
pub(super) fn eval_args_resumable(st: &mut State, prog: &Program, t: ThRef, args: &Args, base: usize) -> bool {
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
    #[cfg(feature = "op-profile")]
    let _node = super::profile::Guard::expr(e);
    st.budget.evals += 1;
    let x = prog.exprs.get(e as usize)?;
    st.budget.rich += u64::from(!x.rep.is_light() && !matches!(x.rep, Rep::Const(_)));
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
        st.budget.consts += 1;
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
        let (v, promise) = offline::eval(st, prog, t, &x.rep, base);
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
