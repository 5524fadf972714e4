//! The interpreter's values ([`V`]: a [`crate::Value`] that may point at a program literal
//! instead of holding a string) and scratch-vm's `Cast` rules on them.

use std::cmp::Ordering;
use std::rc::Rc;

use super::State;
use crate::program::{Const, LitId, Program};
use crate::util::cast::{
    compare_numbers, is_white_space_str, js_string_to_number, num_is_int, str_to_bool, with_number_str, write_number,
};
use crate::util::math::floor_f64;
use crate::util::string::compare_lower;

/// An internal value: like [`Value`], plus references to the program's literals.
///
/// Two machine words whose payloads are all integer-class (a number is kept as its bits, a
/// boolean as two variants, a literal id as a word): rustc then returns a `V` in two
/// registers. As `Num(f64)` beside `Bool(bool)` and `Lit(u32)` (and before that a fat
/// `Rc<str>`), every reporter returned its value through memory, and copying it right after
/// the callee wrote it stalled the interpreter (issue 36's profile: about half the time of
/// heavy scripts).
#[derive(Debug, Clone)]
pub(crate) enum V {
    Num(Num),
    True,
    False,
    Lit(LitV),
    Str(JsStr),
    Undef,
    Null,
}

const _: () = assert!(std::mem::size_of::<V>() == 16);

/// A JS number, as its bits (see [`V`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Num(u64);

impl Num {
    #[inline]
    pub fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
    #[inline]
    pub fn is_nan(self) -> bool {
        self.get().is_nan()
    }
}

/// A program literal's id, one word wide (see [`V`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LitV(usize);

impl LitV {
    #[inline]
    pub fn id(self) -> LitId {
        // Made from a `LitId` only.
        self.0 as LitId
    }
}

impl V {
    /// A number.
    #[inline]
    pub fn num(n: f64) -> V {
        V::Num(Num(n.to_bits()))
    }
    /// A boolean.
    #[inline]
    pub fn bool(b: bool) -> V {
        if b { V::True } else { V::False }
    }
    /// A program literal.
    #[inline]
    pub fn lit(id: LitId) -> V {
        V::Lit(LitV(id as usize))
    }
}

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
            Const::Num(n) => V::num(n),
            Const::Bool(b) => V::bool(b),
            Const::Lit(l) => V::lit(l),
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
                V::Lit(l) => Some(prog.lit_str(l.id())),
                V::Str(s) => Some(s),
                _ => None,
            };
            match s {
                Some("all") => return if accept_all { ListIndex::All } else { ListIndex::Invalid },
                Some("last") => return if len > 0 { ListIndex::At(len) } else { ListIndex::Invalid },
                Some("random" | "any") => {
                    if len > 0 {
                        let r = self.random();
                        return ListIndex::At(1 + floor_f64(r * len as f64) as usize);
                    }
                    return ListIndex::Invalid;
                }
                _ => {}
            }
        }
        index_of_number(to_number(prog, index), len)
    }
}

/// `Cast.toListIndex` of a number (already `Cast.toNumber`ed) in a list of `len` items: no
/// random draw and no text, so a caller holding a number needs no `&mut State` for it.
#[inline]
pub(crate) fn index_of_number(n: f64, len: usize) -> ListIndex {
    let i = floor_f64(n);
    if i < 1.0 || i > len as f64 { ListIndex::Invalid } else { ListIndex::At(i as usize) }
}

#[inline]
pub(crate) fn js_number(prog: &Program, v: &V) -> f64 {
    match v {
        V::Num(n) => n.get(),
        V::True => 1.0,
        V::False => 0.0,
        V::Lit(l) => prog.lit(l.id()).num,
        V::Str(s) => {
            #[cfg(feature = "op-profile")]
            super::profile::count(super::profile::Event::StrToNum);
            js_string_to_number(s)
        }
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
        V::True => true,
        V::False => false,
        V::Num(n) => !(n.get() == 0.0 || n.is_nan()),
        V::Lit(l) => str_to_bool(prog.lit_str(l.id())),
        V::Str(s) => str_to_bool(s),
        V::Undef | V::Null => false,
    }
}

/// Calls `f` with JS `String(v)` (no allocation for strings).
pub(crate) fn with_str<R>(prog: &Program, v: &V, f: impl FnOnce(&str) -> R) -> R {
    match v {
        V::Lit(l) => f(prog.lit_str(l.id())),
        V::Str(s) => f(s),
        V::True => f("true"),
        V::False => f("false"),
        V::Undef => f("undefined"),
        V::Null => f("null"),
        V::Num(n) => {
            #[cfg(feature = "op-profile")]
            super::profile::count(super::profile::Event::NumToStr);
            with_number_str(n.get(), f)
        }
    }
}

/// Appends JS `String(v)` to `out`.
pub(crate) fn push_str(prog: &Program, v: &V, out: &mut String) {
    match v {
        V::Num(n) => {
            #[cfg(feature = "op-profile")]
            super::profile::count(super::profile::Event::NumToStr);
            write_number(out, n.get())
        }
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
        V::Num(n) => num_is_int(n.get()),
        V::True | V::False => true,
        V::Lit(l) => !prog.lit_str(l.id()).contains('.'),
        V::Str(s) => !s.contains('.'),
        V::Undef | V::Null => false,
    }
}

/// scratch-vm `Cast.isWhiteSpace`.
pub(crate) fn is_ws(prog: &Program, v: &V) -> bool {
    match v {
        V::Lit(l) => prog.lit(l.id()).ws,
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
        return compare_numbers(x.get(), y.get());
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
        (V::Num(x), V::Num(y)) => x.get() == y.get(),
        (V::True, V::True) | (V::False, V::False) => true,
        (V::True | V::False, V::True | V::False) => false,
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
