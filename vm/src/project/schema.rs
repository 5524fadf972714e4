//! The JSON schema scratch-vm validates a project against before loading it (scratch-parser's
//! `sb3_schema.json` and `sb3_definitions.json`, checked by ajv): a file that breaks one of its
//! rules is not a project scratch-vm runs (it reports a load error), so it is a load error here
//! too, naming the rule. [`block`] and [`top_level_primitive`] are the block rules (checked
//! where the blocks are read); [`project`] is every other rule: `meta`, the stage first and
//! sprites after it, each target's property types, variables, lists, broadcasts, comments,
//! costumes and sounds. Written from the schema's rules with ajv's meaning of them (`integer`
//! is a number without a fraction, `required` is presence, `uniqueItems` compares deeply and
//! regardless of key order, `maxLength` counts code points).

use super::json::{J, Obj};

/// A rule of the schema a project breaks outside its blocks.
pub(super) struct Broken {
    /// The target it is in (its index in `targets`), if any.
    pub target: Option<usize>,
    /// Which rule, in words.
    pub why: String,
}

/// Why the project (the parsed `project.json`, an object) breaks the schema outside its blocks,
/// if it does.
pub(super) fn project(root: &Obj) -> Option<Broken> {
    let top = |why: String| Some(Broken { target: None, why });
    let meta = match root.get("meta") {
        None => return top("no `meta`".into()),
        Some(J::Obj(m)) => m,
        Some(v) => return top(format!("`meta` is {}, not an object", v.type_name())),
    };
    if let Some(why) = meta_rules(meta) {
        return top(format!("`meta`: {why}"));
    }
    let targets = match root.get("targets") {
        None => return top("no `targets`".into()),
        Some(J::Arr(a)) => a,
        Some(v) => return top(format!("`targets` is {}, not an array", v.type_name())),
    };
    for (i, t) in targets.iter().enumerate() {
        let J::Obj(o) = t else { return top(format!("target #{i} is {}, not an object", t.type_name())) };
        let why = if i == 0 { stage(o) } else { sprite(o) }.or_else(|| target(o));
        if let Some(why) = why {
            return Some(Broken { target: Some(i), why });
        }
    }
    None
}

fn meta_rules(m: &Obj) -> Option<String> {
    let semver = match m.get("semver") {
        None => return Some("no `semver`".into()),
        Some(v) => v,
    };
    // `^(3\.[0-9]+\.[0-9]+)$`
    if let J::Str(s) = semver {
        let parts: Vec<&str> = s.split('.').collect();
        let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
        if !(parts.len() == 3 && parts[0] == "3" && digits(parts[1]) && digits(parts[2])) {
            return Some(format!("`semver` {s:?} is not 3.x.y"));
        }
    } else {
        return Some(format!("`semver` is {}, not a string", semver.type_name()));
    }
    // `^([0-9]+\.[0-9]+\.[0-9]+)($|-)`
    match m.get("vm") {
        None => {}
        Some(J::Str(s)) => {
            let head = s.split_once('-').map_or(s.as_str(), |(h, _)| h);
            let parts: Vec<&str> = head.split('.').collect();
            let ok = parts.len() == 3 && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
            if !ok {
                return Some(format!("`vm` {s:?} is not x.y.z"));
            }
        }
        Some(v) => return Some(format!("`vm` is {}, not a string", v.type_name())),
    }
    string_prop(m, "agent").or_else(|| string_prop(m, "origin"))
}

/// The stage's own rules (the first target).
fn stage(o: &Obj) -> Option<String> {
    required(o, &["name", "isStage"])
        .or_else(|| match o.get("name") {
            None => None,
            Some(J::Str(n)) if n == "Stage" => None,
            Some(J::Str(n)) => Some(format!("the stage is named {n:?}, not \"Stage\"")),
            Some(v) => Some(format!("`name` is {}, not a string", v.type_name())),
        })
        .or_else(|| match o.get("isStage") {
            None | Some(J::Bool(true)) => None,
            Some(_) => Some("the first target's `isStage` is not true".into()),
        })
        .or_else(|| number_prop(o, "tempo"))
        .or_else(|| number_prop(o, "videoTransparency"))
        .or_else(|| enum_prop(o, "videoState", &["on", "off", "on-flipped"]))
        .or_else(|| match o.get("layerOrder") {
            None => None,
            Some(J::Num(n)) if *n == 0.0 => None,
            Some(_) => Some("the stage's `layerOrder` is not 0".into()),
        })
}

/// A sprite's own rules (every target after the first).
fn sprite(o: &Obj) -> Option<String> {
    required(o, &["name", "isStage"])
        .or_else(|| match o.get("name") {
            Some(J::Str(n)) if n == "_stage_" => Some("a sprite is named \"_stage_\"".into()),
            _ => string_prop(o, "name"),
        })
        .or_else(|| match o.get("isStage") {
            None | Some(J::Bool(false)) => None,
            Some(_) => Some("`isStage` is not false (only the first target is the stage)".into()),
        })
        .or_else(|| bool_prop(o, "visible"))
        .or_else(|| ["x", "y", "size", "direction"].iter().find_map(|k| number_prop(o, k)))
        .or_else(|| bool_prop(o, "draggable"))
        .or_else(|| enum_prop(o, "rotationStyle", &["all around", "don't rotate", "left-right"]))
        .or_else(|| match o.get("layerOrder") {
            None => None,
            Some(J::Num(n)) if is_integer(*n) && *n >= 1.0 => None,
            Some(_) => Some("`layerOrder` is not an integer of at least 1".into()),
        })
}

/// The rules of every target.
fn target(o: &Obj) -> Option<String> {
    if let Some(why) = required(o, &["variables", "costumes", "sounds", "blocks"]) {
        return Some(why);
    }
    if let Some(v) = o.get("currentCostume")
        && !matches!(v, J::Num(n) if is_integer(*n) && *n >= 0.0)
    {
        return Some("`currentCostume` is not an integer of at least 0".into());
    }
    if let Some(why) = number_prop(o, "volume").or_else(|| object_prop(o, "blocks")) {
        return Some(why);
    }
    let each = |key: &str, rule: fn(&J) -> Option<String>| -> Option<String> {
        match o.get(key) {
            None => None,
            Some(J::Obj(m)) => m.iter().find_map(|(id, v)| rule(v).map(|why| format!("`{key}` {id:?}: {why}"))),
            Some(v) => Some(format!("`{key}` is {}, not an object", v.type_name())),
        }
    };
    if let Some(why) = each("variables", scalar_variable)
        .or_else(|| each("lists", list))
        .or_else(|| {
            each("broadcasts", |v| (!matches!(v, J::Str(_))).then(|| format!("is {}, not a string", v.type_name())))
        })
        .or_else(|| each("comments", comment))
    {
        return Some(why);
    }
    asset_array(o, "costumes", true, costume).or_else(|| asset_array(o, "sounds", false, sound))
}

/// `costumes` or `sounds`: an array of unique items, each following `rule`.
fn asset_array(o: &Obj, key: &str, non_empty: bool, rule: fn(&Obj) -> Option<String>) -> Option<String> {
    let items = match o.get(key) {
        None => return None,
        Some(J::Arr(a)) => a,
        Some(v) => return Some(format!("`{key}` is {}, not an array", v.type_name())),
    };
    if non_empty && items.is_empty() {
        return Some(format!("`{key}` is empty"));
    }
    // Compared by a canonical form, not pairwise: a file can hold very many costumes.
    let mut seen = std::collections::BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let why = match item {
            J::Obj(m) => rule(m),
            v => Some(format!("is {}, not an object", v.type_name())),
        };
        if let Some(why) = why {
            return Some(format!("`{key}` #{i}: {why}"));
        }
        let mut form = String::new();
        canonical(item, &mut form);
        if !seen.insert(form) {
            return Some(format!("`{key}` #{i} is the same as an earlier one (the schema wants unique items)"));
        }
    }
    None
}

fn costume(m: &Obj) -> Option<String> {
    asset_common(m, &["png", "svg", "jpeg", "jpg", "bmp", "gif"], false)
        .or_else(|| integer_prop(m, "bitmapResolution"))
        .or_else(|| number_prop(m, "rotationCenterX"))
        .or_else(|| number_prop(m, "rotationCenterY"))
}

fn sound(m: &Obj) -> Option<String> {
    asset_common(m, &["wav", "wave", "mp3"], true)
        .or_else(|| integer_prop(m, "rate"))
        .or_else(|| integer_prop(m, "sampleCount"))
}

/// What costumes and sounds share: `assetId` (32 hex digits), `dataFormat` (one of
/// `formats`), `md5ext` (32 hex digits, a dot, letters, and digits for sounds), `name`.
fn asset_common(m: &Obj, formats: &[&str], digits_in_ext: bool) -> Option<String> {
    required(m, &["assetId", "dataFormat", "name"])
        .or_else(|| match m.get("assetId") {
            Some(J::Str(s)) if is_md5(s) => None,
            Some(J::Str(s)) => Some(format!("`assetId` {s:?} is not 32 hex digits")),
            Some(v) => Some(format!("`assetId` is {}, not a string", v.type_name())),
            None => None,
        })
        .or_else(|| enum_prop(m, "dataFormat", formats))
        .or_else(|| match m.get("md5ext") {
            None => None,
            Some(J::Str(s)) => {
                let ok = s.split_once('.').is_some_and(|(hash, ext)| {
                    is_md5(hash)
                        && !ext.is_empty()
                        && ext.bytes().all(|b| b.is_ascii_alphabetic() || (digits_in_ext && b.is_ascii_digit()))
                });
                (!ok).then(|| format!("`md5ext` {s:?} is not 32 hex digits, a dot and an extension"))
            }
            Some(v) => Some(format!("`md5ext` is {}, not a string", v.type_name())),
        })
        .or_else(|| string_prop(m, "name"))
}

/// `[name, value]` or `[name, value, true]` (a cloud variable); the value a string, number or
/// boolean. `[name]` alone passes (the value is then `undefined`).
fn scalar_variable(v: &J) -> Option<String> {
    let J::Arr(a) = v else { return Some(format!("is {}, not an array", v.type_name())) };
    if a.len() > 3 {
        return Some(format!("has {} items, more than 3", a.len()));
    }
    if a.first().is_some_and(|n| !matches!(n, J::Str(_))) {
        return Some("its name is not a string".into());
    }
    if a.get(1).is_some_and(|x| !is_scalar(x)) {
        return Some("its value is not a string, number or boolean".into());
    }
    if a.get(2).is_some_and(|c| !matches!(c, J::Bool(true))) {
        return Some("its third item is not true".into());
    }
    None
}

/// `[name, [items…]]`, each item a string, number or boolean.
fn list(v: &J) -> Option<String> {
    let J::Arr(a) = v else { return Some(format!("is {}, not an array", v.type_name())) };
    if a.len() > 2 {
        return Some(format!("has {} items, more than 2", a.len()));
    }
    if a.first().is_some_and(|n| !matches!(n, J::Str(_))) {
        return Some("its name is not a string".into());
    }
    match a.get(1) {
        None => None,
        Some(J::Arr(items)) => {
            items.iter().any(|x| !is_scalar(x)).then(|| "an item is not a string, number or boolean".into())
        }
        Some(x) => Some(format!("its contents are {}, not an array", x.type_name())),
    }
}

fn comment(v: &J) -> Option<String> {
    let J::Obj(m) = v else { return Some(format!("is {}, not an object", v.type_name())) };
    let optional = |key: &str, ok: fn(&J) -> bool| match m.get(key) {
        Some(x) if !ok(x) => Some(format!("`{key}` is {}", x.type_name())),
        _ => None,
    };
    required(m, &["text"])
        .or_else(|| match m.get("text") {
            Some(J::Str(t)) if t.chars().count() > 8000 => {
                Some(format!("its text has {} characters, more than 8000", t.chars().count()))
            }
            _ => string_prop(m, "text"),
        })
        .or_else(|| optional("blockId", |x| matches!(x, J::Str(_) | J::Null)))
        .or_else(|| bool_prop(m, "minimized"))
        .or_else(|| optional("x", |x| matches!(x, J::Num(_) | J::Null)))
        .or_else(|| optional("y", |x| matches!(x, J::Num(_) | J::Null)))
        .or_else(|| number_prop(m, "width"))
        .or_else(|| number_prop(m, "height"))
}

fn required(o: &Obj, keys: &[&str]) -> Option<String> {
    keys.iter().find(|k| !o.has(k)).map(|k| format!("no `{k}`"))
}

fn typed(o: &Obj, key: &str, what: &str, ok: impl Fn(&J) -> bool) -> Option<String> {
    match o.get(key) {
        Some(v) if !ok(v) => Some(format!("`{key}` is {}, not {what}", v.type_name())),
        _ => None,
    }
}

fn string_prop(o: &Obj, key: &str) -> Option<String> {
    typed(o, key, "a string", |v| matches!(v, J::Str(_)))
}

fn number_prop(o: &Obj, key: &str) -> Option<String> {
    typed(o, key, "a number", |v| matches!(v, J::Num(_)))
}

fn integer_prop(o: &Obj, key: &str) -> Option<String> {
    match o.get(key) {
        Some(J::Num(n)) if !is_integer(*n) => Some(format!("`{key}` {n} is not an integer")),
        _ => typed(o, key, "an integer", |v| matches!(v, J::Num(_))),
    }
}

fn bool_prop(o: &Obj, key: &str) -> Option<String> {
    typed(o, key, "a boolean", |v| matches!(v, J::Bool(_)))
}

fn object_prop(o: &Obj, key: &str) -> Option<String> {
    typed(o, key, "an object", |v| matches!(v, J::Obj(_)))
}

fn enum_prop(o: &Obj, key: &str, allowed: &[&str]) -> Option<String> {
    match o.get(key) {
        None => None,
        Some(J::Str(s)) if allowed.contains(&s.as_str()) => None,
        Some(v) => Some(format!("`{key}` is {}, not one of {}", describe(v), allowed.join(", "))),
    }
}

fn describe(v: &J) -> String {
    match v {
        J::Str(s) => format!("{s:?}"),
        v => v.type_name().to_string(),
    }
}

fn is_scalar(v: &J) -> bool {
    matches!(v, J::Str(_) | J::Num(_) | J::Bool(_))
}

fn is_integer(n: f64) -> bool {
    n.is_finite() && n.fract() == 0.0
}

fn is_md5(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A text form of a value in which two values are equal exactly when ajv's `uniqueItems`
/// counts them equal (deep, objects whatever their key order, `-0` equal to `0`).
fn canonical(v: &J, out: &mut String) {
    use std::fmt::Write as _;
    match v {
        J::Null => out.push('n'),
        J::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        // `+ 0.0` makes -0 into 0, as `===` compares them.
        J::Num(n) => {
            let _ = write!(out, "#{:?};", n + 0.0);
        }
        J::Str(s) => {
            let _ = write!(out, "s{}:{s}", s.len());
        }
        J::Arr(a) => {
            out.push('[');
            for x in a {
                canonical(x, out);
            }
            out.push(']');
        }
        J::Obj(o) => {
            let mut keys: Vec<(&str, &J)> = o.iter().collect();
            keys.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (k, x) in keys {
                let _ = write!(out, "{}:{k}", k.len());
                canonical(x, out);
            }
            out.push('}');
        }
    }
}

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
