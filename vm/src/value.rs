//! Scratch values with JavaScript's exact conversions.
//!
//! Scratch variables hold JS numbers, strings or booleans (and, in broken
//! projects, `undefined` or `null`), and every block converts between them with
//! scratch-vm's `Cast` rules, which rest on JS `Number(string)` and
//! `String(number)`. The JS primitives themselves live in [`crate::util`]
//! (re-exported here, where they have always been reachable).

use std::cmp::Ordering;
use std::rc::Rc;

pub use crate::util::cast::{
    compare_numbers, is_white_space_str, js_string_to_number, num_is_int, number_to_js_string, round10, str_to_bool,
    to_fixed, write_number,
};
pub use crate::util::math::{clamp, js_max, js_min, js_round, splice_index, to_int32, wrap_clamp};
pub use crate::util::string::{
    char_at_utf16, compare_lower, compare_utf16, is_js_whitespace, js_to_lower, js_to_upper, utf16_len, utf16_prefix,
};

/// A Scratch value as JS holds it.
#[derive(Debug, Clone)]
pub enum Value {
    /// A JS number (f64, including NaN, ±Infinity and -0).
    Num(f64),
    /// A JS string.
    Str(Rc<str>),
    /// A JS boolean.
    Bool(bool),
    /// JS `undefined` (an empty input slot read by a block).
    Undefined,
    /// JS `null` (no file scratch-vm's schema lets load holds one; kept so that every JS value
    /// a block can meet has a form).
    Null,
}

impl Default for Value {
    fn default() -> Self {
        Value::Num(0.0)
    }
}

impl PartialEq for Value {
    /// Same JS type and same value (NaN equals NaN here, unlike `===`).
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::Num(a), Value::Num(b)) => a == b || (a.is_nan() && b.is_nan()),
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Undefined, Value::Undefined) | (Value::Null, Value::Null) => true,
            _ => false,
        }
    }
}

impl From<f64> for Value {
    fn from(n: f64) -> Self {
        Value::Num(n)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(Rc::from(s))
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Str(Rc::from(s))
    }
}

impl Value {
    /// The empty string.
    pub fn empty() -> Self {
        Value::Str(Rc::from(""))
    }

    /// JS `Number(value)` (NaN when the string is not numeric).
    pub fn js_number(&self) -> f64 {
        match self {
            Value::Num(n) => *n,
            Value::Bool(b) => f64::from(u8::from(*b)),
            Value::Str(s) => js_string_to_number(s),
            Value::Undefined => f64::NAN,
            Value::Null => 0.0,
        }
    }

    /// scratch-vm `Cast.toNumber`: like `Number()` but NaN becomes 0.
    pub fn to_number(&self) -> f64 {
        let n = self.js_number();
        if n.is_nan() { 0.0 } else { n }
    }

    /// scratch-vm `Cast.toBoolean`.
    pub fn to_bool(&self) -> bool {
        match self {
            Value::Bool(b) => *b,
            Value::Num(n) => !(*n == 0.0 || n.is_nan()),
            Value::Str(s) => str_to_bool(s),
            Value::Undefined | Value::Null => false,
        }
    }

    /// JS `String(value)`.
    pub fn to_js_string(&self) -> String {
        let mut s = String::new();
        self.write_js_string(&mut s);
        s
    }

    /// Appends JS `String(value)` to `out`.
    pub fn write_js_string(&self, out: &mut String) {
        match self {
            Value::Str(s) => out.push_str(s),
            Value::Num(n) => write_number(out, *n),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Undefined => out.push_str("undefined"),
            Value::Null => out.push_str("null"),
        }
    }

    /// scratch-vm `Cast.isInt`.
    pub fn is_int(&self) -> bool {
        match self {
            Value::Num(n) => num_is_int(*n),
            Value::Bool(_) => true,
            Value::Str(s) => !s.contains('.'),
            Value::Undefined | Value::Null => false,
        }
    }
}

/// scratch-vm `Cast.compare`: numeric when both sides are numbers (whitespace-only
/// strings are not), else case-insensitive string comparison.
pub fn compare(a: &Value, b: &Value) -> Ordering {
    let ws = |v: &Value| match v {
        Value::Str(s) => is_white_space_str(s),
        Value::Null => true,
        _ => false,
    };
    let mut n1 = a.js_number();
    let mut n2 = b.js_number();
    if n1 == 0.0 && ws(a) {
        n1 = f64::NAN;
    } else if n2 == 0.0 && ws(b) {
        n2 = f64::NAN;
    }
    if n1.is_nan() || n2.is_nan() {
        return compare_lower(&a.to_js_string(), &b.to_js_string());
    }
    compare_numbers(n1, n2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_rules() {
        assert_eq!(compare(&"10".into(), &"9".into()), Ordering::Greater);
        assert_eq!(compare(&"abc".into(), &"ABC".into()), Ordering::Equal);
        // Whitespace is not the number 0: " " < "0" as strings (node: Cast.compare(" ", 0) = -1).
        assert_eq!(compare(&" ".into(), &0.0.into()), Ordering::Less);
        assert_eq!(compare(&true.into(), &1.0.into()), Ordering::Equal);
        assert_eq!(compare(&Value::Num(f64::INFINITY), &Value::Num(f64::INFINITY)), Ordering::Equal);
    }

    #[test]
    fn to_bool_rules() {
        assert!(!Value::from("false").to_bool());
        assert!(!Value::from("FaLsE").to_bool());
        assert!(!Value::from("0").to_bool());
        assert!(Value::from("0.0").to_bool());
        assert!(!Value::from(f64::NAN).to_bool());
        assert!(!Value::Undefined.to_bool());
    }

    #[test]
    fn is_int_rules() {
        assert!(Value::Num(3.0).is_int());
        assert!(!Value::Num(1e21).is_int());
        assert!(!Value::Num(1.5).is_int());
        assert!(Value::Num(f64::NAN).is_int());
        assert!(!Value::Num(f64::INFINITY).is_int());
        assert!(Value::from("1e3").is_int());
        assert!(!Value::from("1.0").is_int());
    }
}
