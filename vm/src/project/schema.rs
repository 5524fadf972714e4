//! The block rules of the JSON schema scratch-vm validates a project against before loading
//! it (scratch-parser's `sb3_definitions.json`, `block` and `topLevelPrimitive`): a file that
//! breaks one is not a project scratch-vm runs, so it is a load error here too, naming the
//! rule. The schema's other rules (targets, costumes, sounds, variables, `meta`) are still
//! met with the fallbacks of the module docs.

use super::json::{J, Obj};

/// Why block `b` breaks the schema, if it does.
pub(super) fn block(b: &Obj) -> Option<String> {
    let string = |key: &str| match b.get(key) {
        None | Some(J::Str(_)) => None,
        Some(v) => Some(format!("`{key}` is {}, not a string", v.type_name())),
    };
    let optional_string = |key: &str| match b.get(key) {
        None | Some(J::Str(_) | J::Null) => None,
        Some(v) => Some(format!("`{key}` is {}, not a string or null", v.type_name())),
    };
    let boolean = |key: &str| match b.get(key) {
        None | Some(J::Bool(_)) => None,
        Some(v) => Some(format!("`{key}` is {}, not a boolean", v.type_name())),
    };
    let number = |key: &str| match b.get(key) {
        None | Some(J::Num(_)) => None,
        Some(v) => Some(format!("`{key}` is {}, not a number", v.type_name())),
    };
    let object = |key: &str| match b.get(key) {
        None | Some(J::Obj(_)) => None,
        Some(v) => Some(format!("`{key}` is {}, not an object", v.type_name())),
    };
    if let Some(why) = string("comment")
        .or_else(|| object("inputs"))
        .or_else(|| object("fields"))
        .or_else(|| optional_string("next"))
        .or_else(|| boolean("topLevel"))
        .or_else(|| optional_string("parent"))
        .or_else(|| boolean("shadow"))
        .or_else(|| number("x"))
        .or_else(|| number("y"))
        .or_else(|| object("mutation"))
    {
        return Some(why);
    }
    if let Some(J::Obj(m)) = b.get("mutation")
        && let Some(why) = mutation(m)
    {
        return Some(format!("`mutation`: {why}"));
    }
    if let Some(J::Obj(inputs)) = b.get("inputs") {
        for (name, v) in inputs.iter() {
            if let Some(why) = input(v) {
                return Some(format!("input {name}: {why}"));
            }
        }
    }
    None
}

fn mutation(m: &Obj) -> Option<String> {
    if m.get("tagName").is_some_and(|t| !matches!(t, J::Str(s) if s == "mutation")) {
        return Some("`tagName` is not \"mutation\"".into());
    }
    if !matches!(m.get("children"), None | Some(J::Arr(_))) {
        return Some("`children` is not an array".into());
    }
    for key in ["proccode", "argumentids"] {
        if !matches!(m.get(key), None | Some(J::Str(_))) {
            return Some(format!("`{key}` is not a string"));
        }
    }
    for key in ["warp", "hasnext"] {
        match m.get(key) {
            None | Some(J::Bool(_) | J::Null) => {}
            Some(J::Str(s)) if matches!(s.as_str(), "true" | "false" | "null") => {}
            Some(_) => return Some(format!("`{key}` is not a boolean, null or \"true\"/\"false\"/\"null\"")),
        }
    }
    None
}

/// An input: an array whose first item is 1, 2 or 3 and whose other items are each a block
/// id (string), null or a primitive.
fn input(v: &J) -> Option<String> {
    let J::Arr(a) = v else { return Some(format!("is {}, not an array", v.type_name())) };
    if let Some(first) = a.first()
        && !matches!(first, J::Num(k) if *k == 1.0 || *k == 2.0 || *k == 3.0)
    {
        return Some("its first item is not 1, 2 or 3".into());
    }
    for item in a.iter().skip(1) {
        match item {
            J::Str(_) | J::Null => {}
            J::Arr(p) if primitive(p) => {}
            _ => return Some("an item is neither a block id, null nor a primitive".into()),
        }
    }
    None
}

/// A compact primitive: `[4..8, number or string]`, `[9, "#rrggbb"]`, `[10, number or
/// string]`, `[11, name, id]`, `[12|13, name, id, numbers…]` (3–5 items).
fn primitive(p: &[J]) -> bool {
    let kind = match p.first() {
        Some(J::Num(k)) if k.fract() == 0.0 && (4.0..=13.0).contains(k) => *k as u8,
        _ => return false,
    };
    let str_or_num = |v: Option<&J>| matches!(v, None | Some(J::Str(_) | J::Num(_)));
    let string = |v: Option<&J>| matches!(v, None | Some(J::Str(_)));
    match kind {
        4..=8 | 10 => p.len() <= 2 && str_or_num(p.get(1)),
        9 => p.len() <= 2 && p.get(1).is_none_or(|v| matches!(v, J::Str(s) if is_hex_colour(s))),
        11 => p.len() <= 3 && string(p.get(1)) && string(p.get(2)),
        _ => top_level_primitive(p),
    }
}

/// A variable or list reporter: `[12|13, name, id]`, then at most two numbers (x, y).
pub(super) fn top_level_primitive(p: &[J]) -> bool {
    matches!(p.first(), Some(J::Num(k)) if *k == 12.0 || *k == 13.0)
        && (3..=5).contains(&p.len())
        && matches!(p.get(1), Some(J::Str(_)))
        && matches!(p.get(2), Some(J::Str(_)))
        && p.iter().skip(3).all(|v| matches!(v, J::Num(_)))
}

fn is_hex_colour(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 7 && b[0] == b'#' && b[1..].iter().all(u8::is_ascii_hexdigit)
}

#[cfg(test)]
mod tests {
    use super::super::json::{J, parse};
    use super::block;

    fn check(text: &str) -> Option<String> {
        match parse(text) {
            Ok(J::Obj(o)) => block(&o),
            other => panic!("test block is not an object: {other:?}"),
        }
    }

    #[test]
    fn blocks_the_editor_writes_pass() {
        for ok in [
            r##"{"opcode": "motion_movesteps", "next": null, "parent": "a", "inputs": {"STEPS": [1, [4, "10"]]},
                "fields": {}, "shadow": false, "topLevel": false}"##,
            r##"{"opcode": "data_setvariableto", "next": "b", "parent": null, "topLevel": true, "x": 12, "y": -3.5,
                "inputs": {"VALUE": [3, [12, "v", "vid"], [10, "0"]]}, "fields": {"VARIABLE": ["v", "vid"]}}"##,
            r##"{"opcode": "looks_say", "inputs": {"MESSAGE": [3, "r", [10, ""]], "E": [2, null], "C": [1, [9, "#a0FF3c"]],
                "B": [1, [11, "go", "bid"]], "L": [3, [13, "l", "lid", 1, 2], [10, 5]]}}"##,
            r##"{"opcode": "procedures_prototype", "mutation": {"tagName": "mutation", "children": [],
                "proccode": "p %s", "argumentids": "[\"a\"]", "warp": "false", "hasnext": null}}"##,
            r##"{"opcode": "x", "inputs": {"A": []}}"##,
        ] {
            assert_eq!(check(ok), None, "{ok}");
        }
    }

    #[test]
    fn what_the_schema_rejects_is_named() {
        for (bad, why) in [
            (
                r##"{"opcode": "looks_switchcostumeto", "inputs": {"COSTUME": [1, [3, "b0081", [10, ""]]]}}"##,
                "input COSTUME",
            ),
            (r##"{"opcode": "a", "inputs": {"X": [4, [4, "1"]]}}"##, "first item"),
            (r##"{"opcode": "a", "inputs": {"X": [1, 5]}}"##, "neither"),
            (r##"{"opcode": "a", "inputs": {"X": [1, [9, "#fff"]]}}"##, "neither"),
            (r##"{"opcode": "a", "inputs": {"X": [1, [4, "1", "2"]]}}"##, "neither"),
            (r##"{"opcode": "a", "inputs": {"X": [1, [12, "v"]]}}"##, "neither"),
            (r##"{"opcode": "a", "inputs": {"X": "r"}}"##, "not an array"),
            (r##"{"opcode": "a", "inputs": []}"##, "`inputs`"),
            (r##"{"opcode": "a", "next": 3}"##, "`next`"),
            (r##"{"opcode": "a", "topLevel": "true"}"##, "`topLevel`"),
            (r##"{"opcode": "a", "x": "1"}"##, "`x`"),
            (r##"{"opcode": "a", "mutation": {"warp": "yes"}}"##, "`warp`"),
            (r##"{"opcode": "a", "mutation": {"tagName": "m"}}"##, "`tagName`"),
        ] {
            let got = check(bad).unwrap_or_default();
            assert!(got.contains(why), "{bad}: {got:?} should name {why:?}");
        }
    }
}
