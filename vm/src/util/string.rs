//! JavaScript's string operations on Rust strings: lengths and indices in UTF-16 code units,
//! Unicode case mapping, `trim`'s whitespace and code-unit comparison.
//!
//! Strings are kept as Rust UTF-8 strings. JS strings are UTF-16 and may hold lone
//! surrogates (`letter 1 of "😀"`); here such a half becomes U+FFFD (a documented
//! deviation: lengths and indices are still counted in UTF-16 code units, exactly like JS).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

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

/// scratch-vm `StringUtil.replaceUnsafeChars` (variable, list and broadcast ids): `<>&'"`
/// become `lt`, `gt`, `amp`, `apos`, `quot`.
pub fn replace_unsafe_chars(id: &str) -> String {
    if !id.contains(['<', '>', '&', '\'', '"']) {
        return id.to_string();
    }
    let mut out = String::with_capacity(id.len() + 8);
    for c in id.chars() {
        match c {
            '<' => out.push_str("lt"),
            '>' => out.push_str("gt"),
            '&' => out.push_str("amp"),
            '\'' => out.push_str("apos"),
            '"' => out.push_str("quot"),
            c => out.push(c),
        }
    }
    out
}

/// Names made unique as scratch-vm's `StringUtil.unusedName` makes them, one after another
/// (sprite names at install, costume names of a sprite): a name that is free is kept, a taken
/// one gets its trailing digits replaced by the first number from 2 on that makes it free.
///
/// Names only ever join the set, so the first free number of a base never goes down; it is
/// remembered per base, and a file with many equal names costs linear time, not quadratic as
/// scratch-vm's search from 2 each time (same names, less work).
#[derive(Debug, Default)]
pub struct UniqueNames {
    taken: BTreeSet<String>,
    next: BTreeMap<String, u64>,
}

impl UniqueNames {
    /// An empty set of names.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes `name` as is (a name exempt from renaming, such as the stage's).
    pub fn insert(&mut self, name: &str) {
        self.taken.insert(name.to_string());
    }

    /// `unusedName(name, taken)`, then takes the result.
    pub fn claim(&mut self, name: &str) -> String {
        if self.taken.insert(name.to_string()) {
            return name.to_string();
        }
        let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
        let mut i = self.next.get(base).copied().unwrap_or(2);
        let free = loop {
            let candidate = format!("{base}{i}");
            if !self.taken.contains(&candidate) {
                break candidate;
            }
            i += 1;
        };
        self.next.insert(base.to_string(), i + 1);
        self.taken.insert(free.clone());
        free
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unused_names_and_unsafe_chars() {
        let mut names = UniqueNames::new();
        names.insert("Sprite1");
        assert_eq!(names.claim("Sprite1"), "Sprite2");
        assert_eq!(names.claim("Cat"), "Cat");
        // The search goes on from where the base's last one stopped, skipping names taken
        // since, and a name taken as is later is still seen.
        assert_eq!(names.claim("Cat"), "Cat2");
        names.insert("Cat3");
        assert_eq!(names.claim("Cat7"), "Cat7");
        assert_eq!(names.claim("Cat"), "Cat4");
        assert_eq!(names.claim("Cat2"), "Cat5");
        assert_eq!(names.claim("Sprite"), "Sprite");
        assert_eq!(names.claim("Sprite"), "Sprite3");
        assert_eq!(replace_unsafe_chars("a<b&'\""), "altbampaposquot");
    }

    #[test]
    fn utf16_helpers() {
        assert_eq!(utf16_len("a😀"), 3);
        assert_eq!(char_at_utf16("a😀b", 3), "b");
        assert_eq!(char_at_utf16("a😀b", 1), "\u{FFFD}");
        assert_eq!(utf16_prefix("ab😀", 3), "ab\u{FFFD}");
        assert_eq!(compare_utf16("\u{ff61}", "😀"), Ordering::Greater);
    }
}
