//! Operators (scratch-vm `blocks/scratch3_operators.js`).

use crate::blocks::data::MAX_STRING_LEN;
use crate::engine::value::{JsStr, compare, is_int, push_str, to_bool, to_number, with_str};
use crate::engine::{State, V};
use crate::program::{MathOp, Program, Rep};
use crate::util::jsmath;
use crate::util::math::floor_f64;
use crate::util::mathlib::MathLib;
use crate::value::{char_at_utf16, js_round, round10, utf16_len};

/// An operator on its two argument slots (`a1` is `undefined` for the one-input operators).
pub(crate) fn eval(st: &mut State, prog: &Program, rep: &Rep, a0: &V, a1: &V) -> V {
    let a = |i: usize| -> &V { if i == 0 { a0 } else { a1 } };
    match rep {
        Rep::Add => V::num(to_number(prog, a(0)) + to_number(prog, a(1))),
        Rep::Sub => V::num(to_number(prog, a(0)) - to_number(prog, a(1))),
        Rep::Mul => V::num(to_number(prog, a(0)) * to_number(prog, a(1))),
        Rep::Div => V::num(to_number(prog, a(0)) / to_number(prog, a(1))),
        Rep::Lt => V::bool(compare(prog, a(0), a(1)).is_lt()),
        Rep::Eq => V::bool(compare(prog, a(0), a(1)).is_eq()),
        Rep::Gt => V::bool(compare(prog, a(0), a(1)).is_gt()),
        Rep::And => V::bool(to_bool(prog, a(0)) && to_bool(prog, a(1))),
        Rep::Or => V::bool(to_bool(prog, a(0)) || to_bool(prog, a(1))),
        Rep::Not => V::bool(!to_bool(prog, a(0))),
        Rep::Random => {
            let from = to_number(prog, a(0));
            let to = to_number(prog, a(1));
            let (low, high) = if from <= to { (from, to) } else { (to, from) };
            if low == high {
                return V::num(low);
            }
            let ints = is_int(prog, a(0)) && is_int(prog, a(1));
            let r = st.random();
            if ints { V::num(low + floor_f64(r * ((high + 1.0) - low))) } else { V::num((r * (high - low)) + low) }
        }
        Rep::Join => {
            let mut s = String::new();
            push_str(prog, a(0), &mut s);
            push_str(prog, a(1), &mut s);
            if s.len() > MAX_STRING_LEN && utf16_len(&s) > MAX_STRING_LEN {
                st.budget.error = Some(crate::engine::StepError("RangeError: Invalid string length".into()));
                return V::lit(prog.lit_empty);
            }
            V::Str(JsStr::from(s))
        }
        Rep::LetterOf => {
            let index = to_number(prog, a(0)) - 1.0;
            with_str(prog, a(1), |s| {
                let len = utf16_len(s) as f64;
                if index < 0.0 || index >= len || index.is_nan() {
                    // NaN: `index < 0 || index >= length` is false, charAt(NaN) = charAt(0)
                    if index.is_nan() && len > 0.0 {
                        return V::Str(JsStr::from(char_at_utf16(s, 0)));
                    }
                    return V::lit(prog.lit_empty);
                }
                V::Str(JsStr::from(char_at_utf16(s, index.floor() as usize)))
            })
        }
        Rep::Length => V::num(with_str(prog, a(0), utf16_len) as f64),
        Rep::Contains => with_str(prog, a(0), |x| {
            with_str(prog, a(1), |y| {
                if x.is_ascii() && y.is_ascii() {
                    V::bool(x.to_ascii_lowercase().contains(&y.to_ascii_lowercase()))
                } else {
                    V::bool(crate::value::js_to_lower(x).contains(&crate::value::js_to_lower(y)))
                }
            })
        }),
        Rep::Mod => V::num(js_mod(to_number(prog, a(0)), to_number(prog, a(1)))),
        Rep::Round => V::num(js_round(to_number(prog, a(0)))),
        Rep::MathOp(op) => {
            let n = to_number(prog, a(0));
            V::num(mathop(*op, n, st.maths))
        }
        _ => V::Undef,
    }
}

/// `operator_mod`: the result takes the divisor's sign.
#[inline]
pub(crate) fn js_mod(n: f64, m: f64) -> f64 {
    let mut r = n % m;
    if r / m < 0.0 {
        r += m;
    }
    r
}

/// `operator_mathop` in degrees, with scratch-vm's 10-decimal rounding of trig results, in
/// the `Math` of `maths`.
pub(crate) fn mathop(op: MathOp, n: f64, maths: MathLib) -> f64 {
    use std::f64::consts::PI;
    match op {
        MathOp::Abs => n.abs(),
        MathOp::Floor => n.floor(),
        MathOp::Ceiling => n.ceil(),
        MathOp::Sqrt => jsmath::sqrt(n),
        MathOp::Sin => round10(maths.sin((PI * n) / 180.0)),
        MathOp::Cos => round10(maths.cos((PI * n) / 180.0)),
        MathOp::Tan => {
            let a = n % 360.0;
            if a == -270.0 || a == 90.0 {
                f64::INFINITY
            } else if a == -90.0 || a == 270.0 {
                f64::NEG_INFINITY
            } else {
                round10(maths.tan((PI * a) / 180.0))
            }
        }
        MathOp::Asin => (maths.asin(n) * 180.0) / PI,
        MathOp::Acos => (maths.acos(n) * 180.0) / PI,
        MathOp::Atan => (maths.atan(n) * 180.0) / PI,
        MathOp::Ln => maths.log(n),
        MathOp::Log => maths.log(n) / std::f64::consts::LN_10,
        MathOp::Exp => maths.exp(n),
        MathOp::Pow10 => maths.pow(10.0, n),
        MathOp::Zero => 0.0,
    }
}
