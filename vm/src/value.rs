//! Scratch values with JavaScript's exact conversions.
//!
//! Scratch variables hold JS numbers, strings or booleans, and every block
//! converts between them with scratch-vm's `Cast` rules, which rest on JS
//! `Number(string)` and `String(number)`. Getting these bit-exact is what
//! makes our traces comparable with the real scratch-vm.

use std::cmp::Ordering;
use std::fmt::Write as _;
use std::rc::Rc;

/// A Scratch value.
#[derive(Debug, Clone)]
pub enum Value {
    /// A JS number (f64, including NaN, ±Infinity and -0).
    Num(f64),
    /// A JS string.
    Str(Rc<str>),
    /// A JS boolean.
    Bool(bool),
}

impl Default for Value {
    fn default() -> Self {
        Value::Num(0.0)
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
            Value::Str(s) => !(s.is_empty() || &**s == "0" || s.eq_ignore_ascii_case("false")),
        }
    }

    /// JS `String(value)`.
    pub fn to_js_string(&self) -> Rc<str> {
        match self {
            Value::Str(s) => s.clone(),
            Value::Num(n) => Rc::from(number_to_js_string(*n)),
            Value::Bool(b) => Rc::from(if *b { "true" } else { "false" }),
        }
    }

    /// Writes JS `String(value)` into `out` without allocating an `Rc`.
    pub fn write_js_string(&self, out: &mut String) {
        match self {
            Value::Str(s) => out.push_str(s),
            Value::Num(n) => write_number(out, *n),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        }
    }

    /// scratch-vm `Cast.isWhiteSpace`: a string made only of whitespace (or empty).
    fn is_white_space(&self) -> bool {
        match self {
            Value::Str(s) => s.chars().all(is_js_whitespace),
            _ => false,
        }
    }

    /// scratch-vm `Cast.isInt`: numbers that are whole, strings without a `.`, booleans.
    pub fn is_int(&self) -> bool {
        match self {
            Value::Num(n) => n.is_nan() || n.fract() == 0.0,
            Value::Bool(_) => true,
            Value::Str(s) => !s.contains('.'),
        }
    }
}

/// scratch-vm `Cast.compare`: numeric when both sides are numbers (whitespace-only
/// strings are not), else case-insensitive string comparison.
pub fn compare(a: &Value, b: &Value) -> Ordering {
    let mut n1 = a.js_number();
    let mut n2 = b.js_number();
    if n1 == 0.0 && a.is_white_space() {
        n1 = f64::NAN;
    } else if n2 == 0.0 && b.is_white_space() {
        n2 = f64::NAN;
    }
    if n1.is_nan() || n2.is_nan() {
        let s1 = js_to_lower(&a.to_js_string());
        let s2 = js_to_lower(&b.to_js_string());
        return compare_utf16(&s1, &s2);
    }
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

/// JS string comparison is by UTF-16 code units, not by Unicode scalar values.
pub fn compare_utf16(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// JS `String.prototype.toLowerCase` (Unicode default case mapping).
pub fn js_to_lower(s: &str) -> String {
    if s.is_ascii() { s.to_ascii_lowercase() } else { s.to_lowercase() }
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
    let mut v = 0f64;
    for c in digits.chars() {
        match c.to_digit(radix) {
            Some(d) => v = v * f64::from(radix) + f64::from(d),
            None => return f64::NAN,
        }
    }
    v
}

/// `StrDecimalLiteral` without sign: digits [. digits] [exp] | . digits [exp].
fn is_decimal_literal(b: &[u8]) -> bool {
    let mut i = 0;
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
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

/// JS `Number.prototype.toString()` (radix 10): shortest round-trip digits with
/// JS's choice between fixed and exponential notation.
pub fn number_to_js_string(n: f64) -> String {
    let mut s = String::new();
    write_number(&mut s, n);
    s
}

fn write_number(out: &mut String, n: f64) {
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
    // Rust's `{:e}` prints the shortest digits that round-trip, like JS.
    let sci = format!("{:e}", n.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
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
            (0.000123, "0.000123"),
            (1234.5678, "1234.5678"),
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
    }

    #[test]
    fn to_bool_rules() {
        assert!(!Value::from("false").to_bool());
        assert!(!Value::from("0").to_bool());
        assert!(Value::from("0.0").to_bool());
        assert!(!Value::from(f64::NAN).to_bool());
    }
}
