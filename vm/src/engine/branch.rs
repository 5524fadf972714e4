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
/// `below` bounds them (to true, to false): a distance at or above its bound cannot change
/// what is recorded ([`crate::instrument::Instrument::distance_bounds`]).
pub(super) fn eval_args_distance(
    st: &mut State,
    prog: &Program,
    t: ThRef,
    args: &Args,
    base: usize,
    below: (f64, f64),
) {
    arg_slots(&mut st.stack, base, args.n as usize);
    st.observe.cond_dist = None;
    for &(slot, e) in args.list.iter() {
        let v = if slot == 0 {
            let (v, dt, df) = eval_distance(st, prog, t, e, below);
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
/// `below` bounds the distances (to true, to false): one below its bound is answered
/// exactly, one at or above it by some value at or above it (NaN only where it is NaN), so
/// searches stop at the bound and the minima recorded are the same. Under `not` the bounds
/// swap; an operand of `and` or `or` gets its node's bounds, tightened by the distances of
/// the operands evaluated before it ([`sum_bound`], [`min_bound`]).
fn eval_distance(st: &mut State, prog: &Program, t: ThRef, e: ExprId, below: (f64, f64)) -> (V, f64, f64) {
    #[cfg(feature = "op-profile")]
    let _node = super::profile::Guard::expr(e);
    st.budget.evals += 1;
    let Some(x) = prog.exprs.get(e as usize) else { return (V::Undef, 1.0, 0.0) };
    st.budget.rich += u64::from(!x.rep.is_light() && !matches!(x.rep, Rep::Const(_)));
    let truth = |v: &V| if to_bool(prog, v) { (0.0, 1.0) } else { (1.0, 0.0) };
    match x.rep {
        Rep::And | Rep::Or | Rep::Not => {
            let base = st.stack.len();
            arg_slots(&mut st.stack, base, x.args.n as usize);
            // A missing operand is `undefined`, which is false.
            let mut d = [(1.0, 0.0); 2];
            // The operands evaluated so far, and missing ones, have known distances: they
            // tighten the bounds of the operands after them.
            let mut known = [true; 2];
            for &(slot, _) in x.args.list.iter() {
                if let Some(k) = known.get_mut(slot as usize) {
                    *k = false;
                }
            }
            for &(slot, c) in x.args.list.iter() {
                let other = usize::from(slot == 0);
                let inner = match x.rep {
                    Rep::Not => (below.1, below.0),
                    _ if !known[other] => below,
                    Rep::And => (sum_bound(below.0, d[other].0), min_bound(below.1, d[other].1)),
                    _ => (min_bound(below.0, d[other].0), sum_bound(below.1, d[other].1)),
                };
                let (v, dt, df) = eval_distance(st, prog, t, c, inner);
                if let Some(s) = st.stack.get_mut(base + slot as usize) {
                    *s = v;
                    if let Some(ds) = d.get_mut(slot as usize) {
                        *ds = (dt, df);
                    }
                }
                if let Some(k) = known.get_mut(slot as usize) {
                    *k = true;
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
            if below.0 <= 0.0 {
                // The minimum is 0 already: no search can lower it.
                return (v, 0.0, 0.0);
            }
            let me = st.th(t).target;
            let before = st.geometry.work();
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
                        st.geometry.color_distance(&scene, me, rgb, below.0).unwrap_or(1.0)
                    };
                    st.geometry.set_observing(false);
                    d
                }
            };
            st.budget.distance += st.geometry.work().saturating_sub(before);
            (v, d, 0.0)
        }
        _ => {
            let v = eval(st, prog, t, e);
            let (dt, df) = truth(&v);
            (v, dt, df)
        }
    }
}

/// The bound of an operand of a minimum whose bound is `below` and whose other operand is
/// `other`: the minimum is `other` whenever the operand is at or above it (a NaN operand is
/// ignored by `f64::min`).
fn min_bound(below: f64, other: f64) -> f64 {
    if other.is_nan() { below } else { below.min(other) }
}

/// The bound of an operand of a sum whose bound is `below` and whose other operand is
/// `other` (distances are non-negative or NaN): a `b` with `other + b ≥ below` in floating
/// point (`below − other`, rounded up where needed), so that an operand at or above it keeps
/// the sum at or above `below`; 0 when the sum is NaN or at least `below` whatever the operand.
fn sum_bound(below: f64, other: f64) -> f64 {
    if other.is_nan() || other >= below {
        return 0.0;
    }
    if !below.is_finite() {
        return below;
    }
    // Positive: `below − other` is 0 only when they are equal (gradual underflow).
    let mut b = below - other;
    while other + b < below {
        // The next float up (`f64::next_up` is newer than the crate's Rust version).
        b = f64::from_bits(b.to_bits() + 1);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::{min_bound, sum_bound};
    use crate::rng::SplitMix64;

    /// An operand at or above its bound keeps the sum or minimum at or above the node's bound
    /// (or equal to the other operand), in floating point.
    #[test]
    fn operand_bounds_keep_the_node_at_or_above_its_bound() {
        let mut rng = SplitMix64::new(7);
        let value = |rng: &mut SplitMix64| match rng.below(8) {
            0 => 0.0,
            1 => 1.0,
            2 => f64::INFINITY,
            3 => f64::NAN,
            // Full 53-bit fractions at scales apart, where `below − other` rounds.
            _ => (rng.next_u64() >> 11) as f64 / (1u64 << 52) as f64 * (1u64 << rng.below(8)) as f64,
        };
        for _ in 0..20_000 {
            let (below, other, t) = (value(&mut rng), value(&mut rng), value(&mut rng));
            if below.is_nan() {
                continue;
            }
            let b = sum_bound(below, other);
            // The bound itself is the operand that matters most (the sum's rounding).
            for t in [t, b] {
                if t >= b {
                    let sum = other + t;
                    assert!(sum >= below || sum.is_nan(), "sum: {other} + {t} under {below} (bound {b})");
                }
            }
            let m = min_bound(below, other);
            if t >= m {
                let node = t.min(other);
                assert!(node >= below || node == other, "min: {t} min {other} under {below} (bound {m})");
            }
        }
    }
}
