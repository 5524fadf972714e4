//! Branch distances of conditions (test generation's instrumentation): the same reporters run
//! in the same order as without it, so execution is unchanged.

use super::execute::{apply_rep, arg_slots, eval, eval_args};
use super::value::{is_ws, js_number, to_bool};
use super::{State, ThRef, V};
use crate::blocks::sensing;
use crate::program::{Args, Cmd, ExprId, Program, Rep};

/// Blocks whose CONDITION (slot 0) is instrumented.
pub(super) fn has_condition(cmd: &Cmd) -> bool {
    matches!(cmd, Cmd::If { .. } | Cmd::IfElse { .. } | Cmd::RepeatUntil { .. } | Cmd::While { .. } | Cmd::WaitUntil)
}

/// Like [`eval_args`], with the branch distances of slot 0 left in `st.observe.cond_dist`.
pub(super) fn eval_args_distance(st: &mut State, prog: &Program, t: ThRef, args: &Args, base: usize) {
    arg_slots(&mut st.stack, base, args.n as usize);
    st.observe.cond_dist = None;
    for &(slot, e) in args.list.iter() {
        let v = if slot == 0 {
            let (v, dt, df) = eval_distance(st, prog, t, e);
            st.observe.cond_dist = Some((dt, df));
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
    st.budget.evals += 1;
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
                    // A distance observes the run: it leaves the renderer's state as it was.
                    st.geometry.set_observing(true);
                    let d = if x.rep == Rep::ColorTouchingColor && st.geometry.touching_color(&scene, me, rgb) {
                        0.0
                    } else {
                        st.geometry.color_distance(&scene, me, rgb).unwrap_or(1.0)
                    };
                    st.geometry.set_observing(false);
                    d
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
