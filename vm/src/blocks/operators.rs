//! Operators (scratch-vm `scratch3_operators.js`).

use std::cmp::Ordering;

use super::Eval;
use crate::value::{Value, compare};

pub(super) fn evaluate(ev: &mut Eval<'_>, op: &str) -> Option<Value> {
    let v = match op {
        "operator_add" => Value::Num(ev.arg("NUM1").to_number() + ev.arg("NUM2").to_number()),
        "operator_subtract" => Value::Num(ev.arg("NUM1").to_number() - ev.arg("NUM2").to_number()),
        "operator_multiply" => Value::Num(ev.arg("NUM1").to_number() * ev.arg("NUM2").to_number()),
        "operator_divide" => Value::Num(ev.arg("NUM1").to_number() / ev.arg("NUM2").to_number()),
        "operator_mod" => {
            let n = ev.arg("NUM1").to_number();
            let m = ev.arg("NUM2").to_number();
            let mut r = n % m;
            // Floored modulo: the result takes the divisor's sign.
            if r / m < 0.0 {
                r += m;
            }
            Value::Num(r)
        }
        "operator_round" => Value::Num(js_round(ev.arg("NUM").to_number())),
        "operator_lt" => Value::Bool(compare(&ev.arg("OPERAND1"), &ev.arg("OPERAND2")) == Ordering::Less),
        "operator_gt" => Value::Bool(compare(&ev.arg("OPERAND1"), &ev.arg("OPERAND2")) == Ordering::Greater),
        "operator_equals" => Value::Bool(compare(&ev.arg("OPERAND1"), &ev.arg("OPERAND2")) == Ordering::Equal),
        "operator_and" => Value::Bool(ev.arg("OPERAND1").to_bool() && ev.arg("OPERAND2").to_bool()),
        "operator_or" => Value::Bool(ev.arg("OPERAND1").to_bool() || ev.arg("OPERAND2").to_bool()),
        "operator_not" => Value::Bool(!ev.arg("OPERAND").to_bool()),
        "operator_join" => {
            let mut s = String::new();
            ev.arg("STRING1").write_js_string(&mut s);
            ev.arg("STRING2").write_js_string(&mut s);
            Value::from(s)
        }
        "operator_random" => {
            let from = ev.arg("FROM");
            let to = ev.arg("TO");
            let (n1, n2) = (from.to_number(), to.to_number());
            let (low, high) = if n1 <= n2 { (n1, n2) } else { (n2, n1) };
            if low == high {
                Value::Num(low)
            } else if from.is_int() && to.is_int() {
                let r = ev.vm.rng.next_f64();
                Value::Num(low + (r * (high + 1.0 - low)).floor())
            } else {
                let r = ev.vm.rng.next_f64();
                Value::Num(r * (high - low) + low)
            }
        }
        _ => return None,
    };
    Some(v)
}

/// JS `Math.round`: halves round towards +Infinity.
pub(crate) fn js_round(x: f64) -> f64 {
    let f = x.floor();
    if x - f >= 0.5 { f + 1.0 } else { f }
}
