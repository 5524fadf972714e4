//! The order in which JavaScript enumerates an object's own keys: keys that are array indices
//! first, in numeric order, then the others in insertion order. scratch-vm reads project.json
//! objects (targets' blocks, inputs, variables) in this order.

/// Whether `key` is a JS array index (canonical decimal in 0 ..= 2^32 − 2), which JS
/// enumerates before all other keys.
pub fn array_index(key: &str) -> Option<u32> {
    let b = key.as_bytes();
    if b.is_empty() || b.len() > 10 || !b.iter().all(u8::is_ascii_digit) || (b.len() > 1 && b[0] == b'0') {
        return None;
    }
    let v: u64 = key.parse().ok()?;
    if v <= u64::from(u32::MAX - 1) { u32::try_from(v).ok() } else { None }
}

/// Orders `(key, value)` pairs as JS enumerates an object's own properties (stable).
pub fn js_key_order<T>(items: Vec<(String, T)>) -> Vec<(String, T)> {
    let mut ints: Vec<(u32, (String, T))> = Vec::new();
    let mut rest = Vec::new();
    for it in items {
        match array_index(&it.0) {
            Some(n) => ints.push((n, it)),
            None => rest.push(it),
        }
    }
    if ints.is_empty() {
        return rest;
    }
    ints.sort_by_key(|(n, _)| *n);
    ints.into_iter().map(|(_, it)| it).chain(rest).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_key_order_puts_array_indices_first() {
        let items = vec![("b".to_string(), 1), ("10".to_string(), 2), ("a".to_string(), 3), ("2".to_string(), 4)];
        let keys: Vec<String> = js_key_order(items).into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["2", "10", "b", "a"]);
        assert_eq!(array_index("01"), None);
        assert_eq!(array_index("4294967295"), None);
        assert_eq!(array_index("4294967294"), Some(4_294_967_294));
    }
}
