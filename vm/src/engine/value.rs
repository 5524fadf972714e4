//! The interpreter's values ([`V`]: a [`crate::Value`] that may point at a program literal
//! instead of holding a string) and scratch-vm's `Cast` rules on them.

use std::cmp::Ordering;
use std::rc::Rc;

use super::State;
use crate::program::{Const, Program};
use crate::util::cast::{
    compare_numbers, is_white_space_str, js_string_to_number, num_is_int, str_to_bool, write_number,
};
use crate::util::string::compare_lower;

/// An internal value: like [`Value`], plus references to the program's literals.
///
/// Two machine words (checked below): values move in registers. With a fat `Rc<str>` it was
/// three, every reporter returned its value through memory, and reading it back stalled the
/// interpreter (issue 36's profile: most of a reporter's cost on heavy scripts).
#[derive(Debug, Clone)]
pub(crate) enum V {
    Num(f64),
    Bool(bool),
    Lit(u32),
    Str(JsStr),
    Undef,
    Null,
}

const _: () = assert!(std::mem::size_of::<V>() == 16);

/// A string made at run time, shared by reference count behind one thin pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JsStr(Rc<String>);

impl JsStr {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for JsStr {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<String> for JsStr {
    fn from(s: String) -> JsStr {
        JsStr(Rc::new(s))
    }
}

impl From<&str> for JsStr {
    fn from(s: &str) -> JsStr {
        JsStr(Rc::new(s.to_string()))
    }
}

impl V {
    pub fn from_const(c: Const) -> V {
        match c {
            Const::Num(n) => V::Num(n),
            Const::Bool(b) => V::Bool(b),
            Const::Lit(l) => V::Lit(l),
            Const::Undef => V::Undef,
            Const::Null => V::Null,
        }
    }
}

/// Result of scratch-vm `Cast.toListIndex`.
pub(crate) enum ListIndex {
    Invalid,
    All,
    At(usize),
}

impl State {
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
                        let r = self.random();
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

#[inline]
pub(crate) fn js_number(prog: &Program, v: &V) -> f64 {
    match v {
        V::Num(n) => *n,
        V::Bool(b) => f64::from(u8::from(*b)),
        V::Lit(l) => prog.lit(*l).num,
        V::Str(s) => js_string_to_number(s),
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
        V::Str(s) => Rc::from(s.as_str()),
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
pub(crate) fn is_ws(prog: &Program, v: &V) -> bool {
    match v {
        V::Lit(l) => prog.lit(*l).ws,
        V::Str(s) => is_white_space_str(s),
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
