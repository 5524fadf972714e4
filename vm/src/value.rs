//! Scratch values with JavaScript's exact conversions.
//!
//! Scratch variables hold JS numbers, strings or booleans (and, in broken
//! projects, `undefined` or `null`), and every block converts between them with
//! scratch-vm's `Cast` rules, which rest on JS `Number(string)` and
//! `String(number)`. Getting these bit-exact is what makes our traces
//! comparable with the real scratch-vm. The helpers here are the JS primitives
//! those rules need (`Number()`, `Number.prototype.toString`, `toFixed`,
//! `Math.round`, `Math.min/max`, `ToInt32`, UTF-16 string comparison).
//!
//! Strings are kept as Rust UTF-8 strings. JS strings are UTF-16 and may hold
//! lone surrogates (`letter 1 of "😀"`); here such a half becomes U+FFFD (a
//! documented deviation: lengths and indices are still counted in UTF-16 code
//! units, exactly like JS).

use std::cmp::Ordering;
use std::fmt::Write as _;
use std::rc::Rc;

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
    /// JS `null` (only from broken project files).
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

/// `Cast.toBoolean` of a string: `""`, `"0"` and any case of `"false"` are false.
pub fn str_to_bool(s: &str) -> bool {
    !(s.is_empty() || s == "0" || (s.len() == 5 && s.eq_ignore_ascii_case("false")))
}

/// `Cast.isInt` of a number: NaN, or whole and printed without exponent
/// (`val === parseInt(String(val), 10)`).
pub fn num_is_int(n: f64) -> bool {
    n.is_nan() || (n.is_finite() && n.fract() == 0.0 && n.abs() < 1e21)
}

/// scratch-vm `Cast.isWhiteSpace` for strings: empty after JS `trim()`.
pub fn is_white_space_str(s: &str) -> bool {
    s.chars().all(is_js_whitespace)
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

/// The numeric branch of `Cast.compare` (both operands are numbers, not NaN).
pub fn compare_numbers(n1: f64, n2: f64) -> Ordering {
    if n1 == f64::INFINITY && n2 == f64::INFINITY || n1 == f64::NEG_INFINITY && n2 == f64::NEG_INFINITY {
        return Ordering::Equal;
    }
    let d = n1 - n2;
    if d < 0.0 {
        Ordering::Less
    } else if d > 0.0 {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

/// `String(a).toLowerCase()` compared with `String(b).toLowerCase()` by UTF-16 code units.
pub fn compare_lower(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        let (x, y) = (a.as_bytes(), b.as_bytes());
        for (p, q) in x.iter().zip(y) {
            let (p, q) = (p.to_ascii_lowercase(), q.to_ascii_lowercase());
            if p != q {
                return p.cmp(&q);
            }
        }
        return x.len().cmp(&y.len());
    }
    compare_utf16(&js_to_lower(a), &js_to_lower(b))
}

/// JS string comparison is by UTF-16 code units, not by Unicode scalar values.
pub fn compare_utf16(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.as_bytes().cmp(b.as_bytes());
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// JS `String.prototype.toLowerCase` (Unicode default case mapping).
pub fn js_to_lower(s: &str) -> String {
    if s.is_ascii() { s.to_ascii_lowercase() } else { s.to_lowercase() }
}

/// JS `String.prototype.toUpperCase`.
pub fn js_to_upper(s: &str) -> String {
    if s.is_ascii() { s.to_ascii_uppercase() } else { s.to_uppercase() }
}

/// Length of a string in UTF-16 code units (JS `length`).
pub fn utf16_len(s: &str) -> usize {
    if s.is_ascii() { s.len() } else { s.chars().map(char::len_utf16).sum() }
}

/// JS `s.charAt(i)` for an index already known to be in range (UTF-16 unit `i`).
/// A lone half of a surrogate pair becomes U+FFFD (see the module docs).
pub fn char_at_utf16(s: &str, i: usize) -> String {
    if s.is_ascii() {
        return s.get(i..i + 1).unwrap_or("").to_string();
    }
    let mut pos = 0usize;
    for c in s.chars() {
        let w = c.len_utf16();
        if i < pos + w {
            return if w == 1 { c.to_string() } else { "\u{FFFD}".to_string() };
        }
        pos += w;
    }
    String::new()
}

/// JS `s.substr(0, n)` in UTF-16 code units (a split pair's first half becomes U+FFFD).
pub fn utf16_prefix(s: &str, n: usize) -> String {
    if s.is_ascii() {
        return s[..n.min(s.len())].to_string();
    }
    let mut out = String::new();
    let mut pos = 0usize;
    for c in s.chars() {
        let w = c.len_utf16();
        if pos + w > n {
            if pos < n {
                out.push('\u{FFFD}');
            }
            break;
        }
        out.push(c);
        pos += w;
    }
    out
}

/// Whitespace as JS `String.prototype.trim` and `Number()` define it.
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{a}' | '\u{b}' | '\u{c}' | '\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

/// JS `Number(string)`.
pub fn js_string_to_number(s: &str) -> f64 {
    // Fast path: plain decimal integers (the common case for Scratch inputs).
    let b = s.as_bytes();
    if !b.is_empty() && b.len() <= 15 && b.iter().all(u8::is_ascii_digit) {
        let mut v: u64 = 0;
        for &d in b {
            v = v * 10 + u64::from(d - b'0');
        }
        return v as f64;
    }
    let t = s.trim_matches(is_js_whitespace);
    if t.is_empty() {
        return 0.0;
    }
    let b = t.as_bytes();
    // Radix prefixes take no sign in `Number()`.
    if b.len() > 2 && b[0] == b'0' {
        let radix = match b[1] {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            b'b' | b'B' => 2,
            _ => 0,
        };
        if radix != 0 {
            return parse_radix(&t[2..], radix);
        }
    }
    let (sign, body) = match b[0] {
        b'+' => (1.0, &t[1..]),
        b'-' => (-1.0, &t[1..]),
        _ => (1.0, t),
    };
    if body == "Infinity" {
        return sign * f64::INFINITY;
    }
    if !is_decimal_literal(body.as_bytes()) {
        return f64::NAN;
    }
    // The grammar is checked above, so Rust's parser (correctly rounded, like JS) applies.
    match body.parse::<f64>() {
        Ok(v) => sign * v,
        Err(_) => f64::NAN,
    }
}

fn parse_radix(digits: &str, radix: u32) -> f64 {
    if digits.is_empty() {
        return f64::NAN;
    }
    // JS parses arbitrarily long radix literals exactly (then rounds); for radix 2/8/16
    // accumulate exactly in u128 where possible, else fall back to repeated multiply.
    let mut exact: u128 = 0;
    let mut overflow = false;
    let mut v = 0f64;
    for c in digits.chars() {
        let Some(d) = c.to_digit(radix) else { return f64::NAN };
        if !overflow {
            match exact.checked_mul(u128::from(radix)).and_then(|x| x.checked_add(u128::from(d))) {
                Some(x) => exact = x,
                None => {
                    overflow = true;
                    v = exact as f64;
                }
            }
        }
        if overflow {
            v = v * f64::from(radix) + f64::from(d);
        }
    }
    if overflow { v } else { exact as f64 }
}

/// `StrDecimalLiteral` without sign: digits [. digits] [exp] | . digits [exp].
fn is_decimal_literal(b: &[u8]) -> bool {
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i;
    let mut frac_digits = 0;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let fs = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = i - fs;
    }
    if int_digits == 0 && frac_digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let es = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == es {
            return false;
        }
    }
    i == b.len()
}

/// JS `parseFloat` of a string that is known to be a plain decimal (used for toFixed results).
fn parse_plain(s: &str) -> f64 {
    s.parse::<f64>().unwrap_or(f64::NAN)
}

/// JS `Number.prototype.toString()` (radix 10): shortest round-trip digits with
/// JS's choice between fixed and exponential notation.
pub fn number_to_js_string(n: f64) -> String {
    let mut s = String::new();
    write_number(&mut s, n);
    s
}

/// Appends JS `String(n)` to `out`.
pub fn write_number(out: &mut String, n: f64) {
    if n.is_nan() {
        out.push_str("NaN");
        return;
    }
    if n == 0.0 {
        out.push('0');
        return;
    }
    if n.is_infinite() {
        out.push_str(if n > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    // Small integers: the common case, no float formatting needed.
    if n.fract() == 0.0 && n.abs() < 1e15 {
        let _ = write!(out, "{}", n as i64);
        return;
    }
    // Rust's `{:e}` prints the shortest digits that round-trip (closest when
    // several are shortest), like JS's Number::toString.
    let mut sci = String::with_capacity(32);
    let _ = write!(sci, "{:e}", n.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut exp = exp;
    // On an exact tie between two shortest candidates JS picks the even one;
    // Rust's shortest formatting does not promise that.
    if let Some((d, e)) = tie_to_even(n.abs(), digits.len()) {
        digits = d;
        exp = e;
    }
    let k = digits.len() as i32;
    let point = exp + 1; // JS's `n`: position of the decimal point
    if n < 0.0 {
        out.push('-');
    }
    if k <= point && point <= 21 {
        out.push_str(&digits);
        for _ in 0..(point - k) {
            out.push('0');
        }
    } else if 0 < point && point <= 21 {
        let (a, b) = digits.split_at(point as usize);
        out.push_str(a);
        out.push('.');
        out.push_str(b);
    } else if -6 < point && point <= 0 {
        out.push_str("0.");
        for _ in 0..(-point) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let (a, b) = digits.split_at(1);
        out.push_str(a);
        if !b.is_empty() {
            out.push('.');
            out.push_str(b);
        }
        let e = point - 1;
        let _ = write!(out, "e{}{}", if e >= 0 { "+" } else { "-" }, e.abs());
    }
}

/// When `x` lies exactly halfway between two `k`-digit decimals, the even one
/// (digits, exponent of the first digit); `None` otherwise.
fn tie_to_even(x: f64, k: usize) -> Option<(String, i32)> {
    let long = format!("{:.*e}", k + 30, x);
    let (m, e) = long.split_once('e')?;
    let e: i32 = e.parse().ok()?;
    let m: Vec<u8> = m.bytes().filter(|c| *c != b'.').collect();
    if m.get(k) != Some(&b'5') || !m[k + 1..].iter().all(|&c| c == b'0') {
        return None;
    }
    let mut d: Vec<u8> = m[..k].to_vec();
    if d.last().is_some_and(|c| (c - b'0') % 2 == 1) {
        // round up to the even neighbour
        let mut i = d.len();
        loop {
            if i == 0 {
                d.insert(0, b'1');
                d.pop();
                return Some((String::from_utf8(d).ok()?, e + 1));
            }
            i -= 1;
            if d[i] == b'9' {
                d[i] = b'0';
            } else {
                d[i] += 1;
                break;
            }
        }
    }
    while d.len() > 1 && d.last() == Some(&b'0') {
        d.pop();
    }
    Some((String::from_utf8(d).ok()?, e))
}

/// JS `Number.prototype.toFixed(digits)` for `digits <= 20`.
pub fn to_fixed(x: f64, digits: usize) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.abs() >= 1e21 || x.is_infinite() {
        return number_to_js_string(x);
    }
    let neg = x < 0.0;
    let ax = x.abs();
    // Rust rounds the exact binary value half-to-even; JS picks the larger
    // candidate on an exact tie. A tie needs the exact expansion to end in a 5
    // at digit `digits + 1`: then `ax * 2^(digits+1)` is whole (a terminating
    // expansion of that length has at most that many binary fraction bits) and
    // the formatting at `digits + 1` is exact.
    let longer = format!("{:.*}", digits + 1, ax);
    let mut s = format!("{:.*}", digits, ax);
    let scaled = ax * f64::from(2u32.pow(digits as u32 + 1));
    if longer.ends_with('5') && scaled.is_finite() && scaled.fract() == 0.0 {
        // Round the truncated value up by one unit in the last place.
        let trunc = &longer[..longer.len() - 1];
        let trunc = trunc.strip_suffix('.').unwrap_or(trunc);
        s = increment_decimal(trunc);
    }
    if neg { format!("-{s}") } else { s }
}

/// Adds one unit in the last place to a plain decimal string (`"0.12"` -> `"0.13"`, `"9.99"` -> `"10.00"`).
fn increment_decimal(s: &str) -> String {
    let mut bytes: Vec<u8> = s.as_bytes().to_vec();
    let mut i = bytes.len();
    loop {
        if i == 0 {
            bytes.insert(0, b'1');
            break;
        }
        i -= 1;
        match bytes[i] {
            b'.' => continue,
            b'9' => bytes[i] = b'0',
            d => {
                bytes[i] = d + 1;
                break;
            }
        }
    }
    String::from_utf8(bytes).unwrap_or_default()
}

/// `parseFloat(x.toFixed(10))`: scratch-vm's rounding of trig results.
pub fn round10(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let s = to_fixed(x, 10);
    parse_plain(&s)
}

/// JS `Math.round`: half-way cases round towards +Infinity; keeps -0.
pub fn js_round(x: f64) -> f64 {
    if !x.is_finite() || x.fract() == 0.0 {
        return x;
    }
    let f = x.floor();
    let r = if x - f >= 0.5 { f + 1.0 } else { f };
    if r == 0.0 && x < 0.0 { -0.0 } else { r }
}

/// JS `Math.max(a, b)` (NaN propagates; +0 beats -0).
pub fn js_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == 0.0 && b == 0.0 {
        return if a.is_sign_negative() && b.is_sign_negative() { -0.0 } else { 0.0 };
    }
    if a > b { a } else { b }
}

/// JS `Math.min(a, b)` (NaN propagates; -0 beats +0).
pub fn js_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == 0.0 && b == 0.0 {
        return if a.is_sign_negative() || b.is_sign_negative() { -0.0 } else { 0.0 };
    }
    if a < b { a } else { b }
}

/// scratch-vm `MathUtil.clamp`.
pub fn clamp(n: f64, min: f64, max: f64) -> f64 {
    js_min(js_max(n, min), max)
}

/// scratch-vm `MathUtil.wrapClamp`.
pub fn wrap_clamp(n: f64, min: f64, max: f64) -> f64 {
    let range = (max - min) + 1.0;
    n - ((n - min) / range).floor() * range
}

/// JS `ToInt32` (used by bitwise operators).
pub fn to_int32(x: f64) -> i32 {
    if !x.is_finite() {
        return 0;
    }
    let t = x.trunc();
    let m = t.rem_euclid(4294967296.0);
    (m as u64 as u32) as i32
}

/// JS `ToIntegerOrInfinity` then clamp into `[0, len]`, as `Array.prototype.splice` does for its start.
pub fn splice_index(x: f64, len: usize) -> usize {
    if x.is_nan() {
        return 0;
    }
    let t = x.trunc();
    if t < 0.0 {
        let r = len as f64 + t;
        if r < 0.0 { 0 } else { r as usize }
    } else if t > len as f64 {
        len
    } else {
        t as usize
    }
}

/// Degree trigonometry, JS `Math` functions (fdlibm, as V8 uses).
pub mod jsmath {
    /// `Math.sin`.
    pub fn sin(x: f64) -> f64 {
        crate::jsmath::sin(x)
    }
    /// `Math.cos`.
    pub fn cos(x: f64) -> f64 {
        crate::jsmath::cos(x)
    }
    /// `Math.tan`.
    pub fn tan(x: f64) -> f64 {
        libm::tan(x)
    }
    /// `Math.asin`.
    pub fn asin(x: f64) -> f64 {
        libm::asin(x)
    }
    /// `Math.acos`.
    pub fn acos(x: f64) -> f64 {
        libm::acos(x)
    }
    /// `Math.atan`.
    pub fn atan(x: f64) -> f64 {
        libm::atan(x)
    }
    /// `Math.atan2`.
    pub fn atan2(y: f64, x: f64) -> f64 {
        libm::atan2(y, x)
    }
    /// `Math.log`.
    pub fn ln(x: f64) -> f64 {
        crate::jsmath::log(x)
    }
    /// `Math.exp`.
    pub fn exp(x: f64) -> f64 {
        libm::exp(x)
    }
    /// `Math.pow`.
    pub fn pow(x: f64, y: f64) -> f64 {
        crate::jsmath::pow(x, y)
    }
    /// `Math.sqrt`.
    pub fn sqrt(x: f64) -> f64 {
        x.sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formatting_matches_js() {
        // Left: the value; right: what node prints for String(value).
        let table: &[(f64, &str)] = &[
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (-0.0, "0"),
            (1e-7, "1e-7"),
            (1e-6, "0.000001"),
            (123456789012345680000.0, "123456789012345680000"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (1.5, "1.5"),
            (-2.25e-10, "-2.25e-10"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (100.0, "100"),
            (-42.0, "-42"),
            (0.000123, "0.000123"),
            (1234.5678, "1234.5678"),
            (999999999999999.0, "999999999999999"),
            (1e15, "1000000000000000"),
            (-6.000000000000014, "-6.000000000000014"),
            (-98.94815063476562, "-98.94815063476562"), // exactly -98.948150634765625: a tie, JS picks the even digit
            (0.5, "0.5"),
            (2.5e-7, "2.5e-7"),
        ];
        for (v, want) in table {
            assert_eq!(number_to_js_string(*v), *want, "formatting {v:?}");
        }
    }

    #[test]
    fn string_parsing_matches_js() {
        let table: &[(&str, f64)] = &[
            ("", 0.0),
            ("  12  ", 12.0),
            ("0x1F", 31.0),
            ("-0x1F", f64::NAN),
            ("1e3", 1000.0),
            (".5", 0.5),
            ("5.", 5.0),
            ("+Infinity", f64::INFINITY),
            ("inf", f64::NAN),
            ("1_000", f64::NAN),
            ("0b101", 5.0),
            ("abc", f64::NAN),
            ("\u{a0}7\n", 7.0),
            ("007", 7.0),
            ("1e", f64::NAN),
            ("-", f64::NAN),
            (".", f64::NAN),
        ];
        for (s, want) in table {
            let got = js_string_to_number(s);
            assert!(got == *want || (got.is_nan() && want.is_nan()), "Number({s:?}) = {got}, want {want}");
        }
    }

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

    #[test]
    fn to_fixed_matches_js() {
        // node: (x).toFixed(d)
        assert_eq!(to_fixed(0.125, 2), "0.13");
        assert_eq!(to_fixed(1.005, 2), "1.00");
        assert_eq!(to_fixed(-1.5, 0), "-2");
        assert_eq!(to_fixed(2.5, 0), "3");
        assert_eq!(to_fixed(1.45, 1), "1.4");
        assert_eq!(to_fixed(-0.0, 2), "0.00");
        assert_eq!(to_fixed(12.3456, 2), "12.35");
        assert_eq!(to_fixed(9.995, 2), "9.99");
        assert_eq!(to_fixed(0.5, 0), "1");
        assert_eq!(round10(-1.2246467991473532e-16), 0.0);
        assert!(round10(-1.2246467991473532e-16).is_sign_negative());
    }

    #[test]
    fn math_round_matches_js() {
        assert_eq!(js_round(0.49999999999999994), 0.0);
        assert_eq!(js_round(2.5), 3.0);
        assert_eq!(js_round(-2.5), -2.0);
        assert!(js_round(-0.4).is_sign_negative());
        assert_eq!(js_round(-0.6), -1.0);
    }

    #[test]
    fn utf16_helpers() {
        assert_eq!(utf16_len("a😀"), 3);
        assert_eq!(char_at_utf16("a😀b", 3), "b");
        assert_eq!(char_at_utf16("a😀b", 1), "\u{FFFD}");
        assert_eq!(utf16_prefix("ab😀", 3), "ab\u{FFFD}");
        assert_eq!(compare_utf16("\u{ff61}", "😀"), Ordering::Greater);
    }

    #[test]
    fn int32() {
        assert_eq!(to_int32(4294967295.0), -1);
        assert_eq!(to_int32(-1.5), -1);
        assert_eq!(to_int32(f64::NAN), 0);
        assert_eq!(to_int32(16777215.0), 16777215);
    }
}
