//! An order-preserving JSON tree with JavaScript's object semantics.
//!
//! scratch-vm walks `project.json` objects with `for … in`, so the order of
//! blocks, inputs and variables is the JS property order: keys that are array
//! indices (`"0"`, `"17"`, …) first in ascending numeric order, then the other
//! keys in insertion order; a duplicate key keeps its first position and its
//! last value (`JSON.parse`). serde_json's own `Map` sorts keys in this
//! workspace, hence this small tree. It also applies scratch-parser's one
//! pre-processing step: backspace characters (`\b`, `\u0008`) are removed
//! from every string.

use std::collections::HashMap;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::util::object::array_index;

/// A JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum J {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number.
    Num(f64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<J>),
    /// An object.
    Obj(Obj),
}

/// A JSON object in JS property order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Obj(pub(crate) Vec<(String, J)>);

impl Obj {
    /// The value of `key` (linear: objects looked up by key are small).
    pub fn get(&self, key: &str) -> Option<&J> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether `key` is present (JS `hasOwnProperty`).
    pub fn has(&self, key: &str) -> bool {
        self.0.iter().any(|(k, _)| k == key)
    }

    /// Entries in JS property order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &J)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the object has no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value of `key`, to change it.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut J> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets `key`: in place when present, else appended (an edit keeps every other key's
    /// position, so scratch-vm walks the edited object in the same order).
    pub fn set(&mut self, key: &str, value: J) {
        match self.get_mut(key) {
            Some(v) => *v = value,
            None => self.0.push((key.to_string(), value)),
        }
    }

    /// Removes `key`; its value, if it was present.
    pub fn remove(&mut self, key: &str) -> Option<J> {
        let pos = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(pos).1)
    }
}

impl J {
    /// The object, if this is one.
    pub fn as_obj(&self) -> Option<&Obj> {
        match self {
            J::Obj(o) => Some(o),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_arr(&self) -> Option<&[J]> {
        match self {
            J::Arr(a) => Some(a),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            J::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The object, if this is one, to change it.
    pub fn as_obj_mut(&mut self) -> Option<&mut Obj> {
        match self {
            J::Obj(o) => Some(o),
            _ => None,
        }
    }

    /// The array, if this is one, to change it.
    pub fn as_arr_mut(&mut self) -> Option<&mut Vec<J>> {
        match self {
            J::Arr(a) => Some(a),
            _ => None,
        }
    }

    /// JS truthiness of the value.
    pub fn truthy(&self) -> bool {
        match self {
            J::Null => false,
            J::Bool(b) => *b,
            J::Num(n) => !(*n == 0.0 || n.is_nan()),
            J::Str(s) => !s.is_empty(),
            J::Arr(_) | J::Obj(_) => true,
        }
    }

    /// A short name of the JSON type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            J::Null => "null",
            J::Bool(_) => "a boolean",
            J::Num(_) => "a number",
            J::Str(_) => "a string",
            J::Arr(_) => "an array",
            J::Obj(_) => "an object",
        }
    }
}

/// Written back as JSON text in JS property order (what `JSON.stringify` of the parsed
/// object gives, up to number formatting), e.g. for an edited project.
impl Serialize for J {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            J::Null => s.serialize_unit(),
            J::Bool(b) => s.serialize_bool(*b),
            // Integral values as integers: `10`, not `10.0`.
            J::Num(n) if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 => s.serialize_i64(*n as i64),
            J::Num(n) => s.serialize_f64(*n),
            J::Str(t) => s.serialize_str(t),
            J::Arr(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            J::Obj(o) => {
                let mut map = s.serialize_map(Some(o.len()))?;
                for (k, v) in &o.0 {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// Removes U+0008, as scratch-parser strips `\b` escapes before `JSON.parse`.
fn strip_backspace(s: String) -> String {
    if s.contains('\u{8}') { s.replace('\u{8}', "") } else { s }
}

impl<'de> Deserialize<'de> for J {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JVisitor)
    }
}

struct JVisitor;

impl<'de> Visitor<'de> for JVisitor {
    type Value = J;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<J, E> {
        Ok(J::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<J, E> {
        Ok(J::Null)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<J, E> {
        Ok(J::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<J, E> {
        Ok(J::Num(v as f64))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<J, E> {
        Ok(J::Num(v as f64))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<J, E> {
        Ok(J::Num(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<J, E> {
        Ok(J::Str(strip_backspace(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<J, E> {
        Ok(J::Str(strip_backspace(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<J, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element::<J>()? {
            out.push(v);
        }
        Ok(J::Arr(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<J, A::Error> {
        let mut entries: Vec<(String, J)> = Vec::new();
        // Duplicate keys are rare; an index is only built for larger objects.
        let mut index: Option<HashMap<String, usize>> = None;
        let mut has_index_keys = false;
        while let Some(k) = map.next_key::<String>()? {
            let k = strip_backspace(k);
            let v = map.next_value::<J>()?;
            has_index_keys |= array_index(&k).is_some();
            let pos = match &mut index {
                Some(ix) => ix.get(&k).copied(),
                None => {
                    let pos = entries.iter().position(|(e, _)| *e == k);
                    if entries.len() >= 16 {
                        index = Some(entries.iter().enumerate().map(|(i, (e, _))| (e.clone(), i)).collect());
                    }
                    pos
                }
            };
            match pos {
                Some(p) => entries[p].1 = v,
                None => {
                    if let Some(ix) = &mut index {
                        ix.insert(k.clone(), entries.len());
                    }
                    entries.push((k, v));
                }
            }
        }
        if has_index_keys {
            // Stable: index keys to the front in numeric order, the rest keep insertion order.
            entries.sort_by_key(|(k, _)| array_index(k).map_or((1, 0), |i| (0, i)));
        }
        Ok(J::Obj(Obj(entries)))
    }
}

/// Rejects JSON nested deeper than `max` before the parser recurses into it.
pub(crate) fn check_depth(bytes: &[u8], max: usize) -> Result<(), String> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for &b in bytes {
        if in_str {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_str = false;
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Err(format!("nested deeper than {max} levels"));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Replaces `\uXXXX` escapes of unpaired UTF-16 surrogates by `\uFFFD`.
///
/// `JSON.parse` accepts lone surrogates but Rust strings cannot hold them;
/// this is only used after a first parse failed, so valid files pay nothing.
pub(crate) fn replace_lone_surrogates(text: &str) -> Option<String> {
    fn hex4(b: &[u8]) -> Option<u16> {
        let s = std::str::from_utf8(b.get(..4)?).ok()?;
        u16::from_str_radix(s, 16).ok()
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        if b.get(i + 1) != Some(&b'u') {
            i += 2; // any other escape is two bytes; this also skips `\\`
            continue;
        }
        let Some(cu) = hex4(&b[i + 2..]) else {
            i += 2;
            continue;
        };
        let is_high = (0xD800..0xDC00).contains(&cu);
        let is_low = (0xDC00..0xE000).contains(&cu);
        if is_high {
            let next_low = b.get(i + 6) == Some(&b'\\')
                && b.get(i + 7) == Some(&b'u')
                && hex4(b.get(i + 8..).unwrap_or(&[])).is_some_and(|c| (0xDC00..0xE000).contains(&c));
            if next_low {
                i += 12;
                continue;
            }
        }
        if is_high || is_low {
            out.push_str(&text[copied..i]);
            out.push_str("\\uFFFD");
            i += 6;
            copied = i;
            changed = true;
        } else {
            i += 6;
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// Parses JSON text into a [`J`] tree (depth must have been checked).
pub(crate) fn parse(text: &str) -> Result<J, String> {
    match serde_json::from_str::<J>(text) {
        Ok(j) => Ok(j),
        Err(e) => match replace_lone_surrogates(text) {
            Some(fixed) => serde_json::from_str::<J>(&fixed).map_err(|e| e.to_string()),
            None => Err(e.to_string()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(j: &J) -> Vec<&str> {
        j.as_obj().unwrap().iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn keeps_js_property_order() {
        let j = parse(r#"{"b":1,"a":2,"10":3,"2":4,"02":5,"4294967295":6,"4294967294":7}"#).unwrap();
        assert_eq!(keys(&j), ["2", "10", "4294967294", "b", "a", "02", "4294967295"]);
    }

    #[test]
    fn duplicate_keys_keep_first_position_and_last_value() {
        let j = parse(r#"{"x":1,"y":2,"x":3}"#).unwrap();
        let o = j.as_obj().unwrap();
        assert_eq!(keys(&j), ["x", "y"]);
        assert_eq!(o.get("x"), Some(&J::Num(3.0)));
        // Also past the size where the duplicate index kicks in.
        let mut text = String::from("{");
        for i in 0..40 {
            text.push_str(&format!("\"k{i}\":{i},"));
        }
        text.push_str("\"k3\":\"last\"}");
        let j = parse(&text).unwrap();
        let o = j.as_obj().unwrap();
        assert_eq!(o.len(), 40);
        assert_eq!(o.0[3], ("k3".to_string(), J::Str("last".into())));
    }

    #[test]
    fn strips_backspaces_like_scratch_parser() {
        let j = parse(r#"{"a\b":"x\by\u0008z","k":"\\b"}"#).unwrap();
        let o = j.as_obj().unwrap();
        assert_eq!(o.get("a"), Some(&J::Str("xyz".into())));
        // An escaped backslash followed by `b` is not a backspace.
        assert_eq!(o.get("k"), Some(&J::Str("\\b".into())));
    }

    #[test]
    fn numbers_are_exact_doubles() {
        let j = parse("[0.1, -0, 1e21, 12345678901234567890123, 5e-324]").unwrap();
        let a = j.as_arr().unwrap();
        assert_eq!(a[0], J::Num(0.1));
        assert!(matches!(a[1], J::Num(z) if z == 0.0 && z.is_sign_negative()));
        assert_eq!(a[2], J::Num(1e21));
        assert_eq!(a[3], J::Num(1.2345678901234568e22));
        assert_eq!(a[4], J::Num(5e-324));
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let j = parse(r#"["a\ud800b", "\udc00", "\ud83d\ude00", "\\ud800"]"#).unwrap();
        let a = j.as_arr().unwrap();
        assert_eq!(a[0], J::Str("a\u{FFFD}b".into()));
        assert_eq!(a[1], J::Str("\u{FFFD}".into()));
        assert_eq!(a[2], J::Str("😀".into()));
        assert_eq!(a[3], J::Str("\\ud800".into()));
    }

    #[test]
    fn depth_check_counts_only_structure() {
        assert!(check_depth(b"[[[1]]]", 3).is_ok());
        assert!(check_depth(b"[[[[1]]]]", 3).is_err());
        assert!(check_depth(br#"["[[[[[[", "\"[[[["]"#, 1).is_ok());
    }
}
