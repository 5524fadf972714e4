//! Loader tests: one hand-made file per kind of input the loader must
//! interpret, fall back on, or reject.

use std::io::Write;
use std::sync::Arc;

use serde_json::{Value as JsonValue, json};

use super::loader::v8_sort_order;
use super::*;

fn stage() -> JsonValue {
    json!({"isStage": true, "name": "Stage", "variables": {}, "lists": {}, "broadcasts": {}, "blocks": {},
           "costumes": [{"name": "backdrop1", "assetId": "cd21514d0531fdffb22204e0ec5ed84a", "dataFormat": "svg",
                         "md5ext": "cd21514d0531fdffb22204e0ec5ed84a.svg", "rotationCenterX": 240, "rotationCenterY": 180}],
           "sounds": [], "layerOrder": 0, "tempo": 60, "volume": 100})
}

fn sprite(name: &str, layer: i64, blocks: JsonValue) -> JsonValue {
    json!({"isStage": false, "name": name, "variables": {}, "lists": {}, "broadcasts": {}, "blocks": blocks,
           "costumes": [{"name": "c1", "assetId": "bcf454acf82e4504149f7ffe07081dbc", "dataFormat": "svg",
                         "md5ext": "bcf454acf82e4504149f7ffe07081dbc.svg", "rotationCenterX": 48, "rotationCenterY": 50}],
           "sounds": [{"name": "Meow", "assetId": "83c36d806dc92327b9e7049a565c6bff", "dataFormat": "wav",
                       "format": "", "rate": 48000, "sampleCount": 40682, "md5ext": "83c36d806dc92327b9e7049a565c6bff.wav"}],
           "currentCostume": 0, "x": 0, "y": 0, "size": 100, "direction": 90, "visible": true,
           "draggable": false, "rotationStyle": "all around", "layerOrder": layer, "volume": 100})
}

fn project(targets: Vec<JsonValue>) -> JsonValue {
    json!({"targets": targets, "monitors": [], "extensions": [], "meta": {"semver": "3.0.0", "vm": "0.2.0", "agent": ""}})
}

fn one_sprite(blocks: JsonValue) -> JsonValue {
    project(vec![stage(), sprite("Sprite1", 1, blocks)])
}

/// A one-sprite project whose sprite `blocks` is the raw JSON text given, so
/// key order is exactly as written (serde_json's `json!` sorts keys).
fn one_sprite_raw(blocks: &str) -> String {
    one_sprite(json!("__BLOCKS__")).to_string().replace("\"__BLOCKS__\"", blocks)
}

fn ok_text(text: &str) -> Project {
    match load(text.as_bytes(), "test.json", &LoadLimits::default()) {
        Ok(p) => p,
        Err(e) => panic!("expected to load: {e}"),
    }
}

fn ok(p: &JsonValue) -> Project {
    match load(p.to_string().as_bytes(), "test.json", &LoadLimits::default()) {
        Ok(p) => p,
        Err(e) => panic!("expected to load: {e}"),
    }
}

fn err_bytes(bytes: &[u8], limits: &LoadLimits) -> LoadError {
    match load(bytes, "bad.sb3", limits) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

fn err(p: &JsonValue) -> LoadError {
    err_bytes(p.to_string().as_bytes(), &LoadLimits::default())
}

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in entries {
        w.start_file(*name, opts).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

fn sprite_blocks(p: &Project) -> &[Block] {
    let t = 1u32;
    let start = p.blocks.iter().position(|b| b.target == t).unwrap_or(p.blocks.len());
    let end = p.blocks.iter().rposition(|b| b.target == t).map_or(start, |e| e + 1);
    &p.blocks[start..end]
}

fn by_id<'a>(p: &'a Project, id: &str) -> &'a Block {
    p.blocks.iter().find(|b| b.id == id).unwrap_or_else(|| panic!("no block {id}"))
}

#[test]
fn project_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Project>();
}

#[test]
fn a_clone_does_not_share_the_compiled_program() {
    let proj = Arc::new(ok(&one_sprite(json!({}))));
    let _vm = crate::Vm::new(Arc::clone(&proj), crate::VmOptions::default());
    assert!(proj.compiled.get().is_some(), "Vm::new compiles the project");
    let copy: Project = (*proj).clone();
    assert!(copy.compiled.get().is_none(), "an edited clone must be compiled afresh");
}

#[test]
fn loads_targets_metadata_and_hash() {
    let p = one_sprite(json!({}));
    let bytes = p.to_string();
    let proj = ok(&p);
    assert_eq!(proj.targets.len(), 2);
    assert!(proj.targets[0].is_stage);
    assert_eq!(proj.content_hash, blake3::hash(bytes.as_bytes()).to_hex().to_string());
    let s = &proj.targets[1];
    assert_eq!(s.name, "Sprite1");
    assert_eq!(s.costumes[0].rotation_center_x, 48.0);
    assert!(s.costumes[0].has_rotation_center);
    assert_eq!(s.costumes[0].bitmap_resolution, 1.0);
    assert_eq!(s.sounds[0].sample_count, 40682.0);
    assert_eq!(s.sounds[0].rate, 48000.0);
    assert_eq!(s.sounds[0].md5ext, "83c36d806dc92327b9e7049a565c6bff.wav");
    assert_eq!(proj.meta.semver.as_deref(), Some("3.0.0"));
    assert_eq!(proj.targets[0].tempo, 60.0);
    assert!(proj.warnings.is_empty(), "{:?}", proj.warnings);
}

#[test]
fn sb3_zip_loads_like_bare_json_and_reads_only_costumes() {
    let p = one_sprite(json!({"a": {"opcode": "event_whenflagclicked", "next": null, "parent": null,
                                    "inputs": {}, "fields": {}, "shadow": false, "topLevel": true}}));
    let text = p.to_string();
    let svg = b"<svg xmlns='http://www.w3.org/2000/svg'/>";
    let bytes = zip_of(&[
        ("project.json", text.as_bytes()),
        ("bcf454acf82e4504149f7ffe07081dbc.svg", svg),
        ("83c36d806dc92327b9e7049a565c6bff.wav", b"RIFF...."),
    ]);
    let proj = load(&bytes, "p.sb3", &LoadLimits::default()).unwrap();
    assert_eq!(proj.targets.len(), 2);
    assert_eq!(proj.targets[1].scripts.len(), 1);
    assert_eq!(proj.assets.get("bcf454acf82e4504149f7ffe07081dbc.svg").map(Vec::as_slice), Some(&svg[..]));
    assert!(!proj.assets.contains_key("83c36d806dc92327b9e7049a565c6bff.wav"));
    // The stage's backdrop file is missing from the zip: a warning, not an error.
    assert!(proj.warnings.iter().any(|w| w.contains("cd21514d0531fdffb22204e0ec5ed84a.svg")), "{:?}", proj.warnings);
    // One folder down is accepted (scratch-parser's pattern), as is a folder for assets.
    let nested =
        zip_of(&[("My Game/project.json", text.as_bytes()), ("My Game/bcf454acf82e4504149f7ffe07081dbc.svg", svg)]);
    let proj = load(&nested, "n.sb3", &LoadLimits::default()).unwrap();
    assert!(proj.assets.contains_key("bcf454acf82e4504149f7ffe07081dbc.svg"));
}

#[test]
fn zip_crc_errors_are_tolerated_like_jszip() {
    let text = one_sprite(json!({})).to_string();
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    w.start_file("project.json", opts).unwrap();
    w.write_all(text.as_bytes()).unwrap();
    let mut bytes = w.finish().unwrap().into_inner();
    // Change "Sprite1" to "Sprite2" inside the stored data: the CRC no longer matches.
    let pos = bytes.windows(7).position(|w| w == b"Sprite1").unwrap();
    bytes[pos + 6] = b'2';
    let proj = load(&bytes, "crc.sb3", &LoadLimits::default()).unwrap();
    assert_eq!(proj.targets[1].name, "Sprite2");
}

#[test]
fn blocks_inputs_and_scripts_follow_js_property_order() {
    let hat = |next: &str| {
        format!(
            r#"{{"opcode": "event_whenflagclicked", "next": {next}, "parent": null, "inputs": {{}}, "fields": {{}},
               "shadow": false, "topLevel": true, "x": 0, "y": 0}}"#
        )
    };
    let blocks = format!(
        r#"{{"zeta": {}, "10": {}, "alpha": {}, "2": {},
            "call": {{"opcode": "operator_add", "next": null, "parent": "alpha", "topLevel": false, "shadow": false,
                      "inputs": {{"NUM2": [1, [4, "2"]], "NUM1": [1, [4, 1]], "3": [1, [10, "x"]]}}, "fields": {{}}}}}}"#,
        hat("null"),
        hat("null"),
        hat("\"call\""),
        hat("null")
    );
    let proj = ok_text(&one_sprite_raw(&blocks));
    let ids: Vec<&str> = sprite_blocks(&proj).iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids, ["2", "10", "zeta", "alpha", "call"]);
    let scripts: Vec<&str> = proj.targets[1].scripts.iter().map(|&i| proj.block(i).id.as_str()).collect();
    assert_eq!(scripts, ["2", "10", "zeta", "alpha"]);
    let call = by_id(&proj, "call");
    let names: Vec<&str> = call.inputs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["3", "NUM2", "NUM1"]);
    assert_eq!(call.input("NUM1"), Some(&Input::Lit(Lit::Num(1.0))));
    assert_eq!(call.input("NUM2"), Some(&Input::Lit(Lit::Str("2".into()))));
}

#[test]
fn inputs_resolve_like_scratch_vm_input_block() {
    let blocks = json!({
        "say": {"opcode": "looks_say", "next": "say2", "parent": null, "topLevel": true, "shadow": false, "fields": {},
                "inputs": {"MESSAGE": [3, "rep", "sh"]}},
        "rep": {"opcode": "operator_join", "next": null, "parent": "say", "topLevel": false, "shadow": false,
                "fields": {}, "inputs": {"STRING1": [1, "lit"], "STRING2": [3, null, [10, "obscured"]]}},
        "lit": {"opcode": "text", "next": null, "parent": "rep", "topLevel": false, "shadow": true,
                "inputs": {}, "fields": {"TEXT": ["hello"]}},
        "sh": {"opcode": "text", "next": null, "parent": "say", "topLevel": false, "shadow": true,
               "inputs": {}, "fields": {"TEXT": ["shadow"]}},
        "say2": {"opcode": "looks_say", "next": "go", "parent": "say", "topLevel": false, "shadow": false, "fields": {},
                 "inputs": {"MESSAGE": [2, null], "X": [3, [12, "v", "vid"], [10, ""]], "L": [3, [13, "l", "lid"], [10, ""]],
                            "B": [1, [11, "msg", "bid"]], "C": [1, [9, "#ff0000"]], "T": [1, [10, 7]],
                            "N": [1, [4]], "D": [1, "missing"], "DS": [3, "missing", [10, "fallback"]]}},
        "go": {"opcode": "motion_goto", "next": null, "parent": "say2", "topLevel": false, "shadow": false, "fields": {},
               "inputs": {"TO": [1, "menu"], "TWO": [1, "twofields"]}},
        "menu": {"opcode": "motion_goto_menu", "next": null, "parent": "go", "topLevel": false, "shadow": true,
                 "inputs": {}, "fields": {"TO": ["_random_", null]}},
        "twofields": {"opcode": "math_number", "next": null, "parent": "go", "topLevel": false, "shadow": true,
                      "inputs": {}, "fields": {"NUM": ["1"], "EXTRA": ["2"]}}
    });
    let proj = ok(&one_sprite(blocks));
    let say = by_id(&proj, "say");
    let rep = by_id(&proj, "rep");
    let rep_idx = proj.blocks.iter().position(|b| b.id == "rep").unwrap() as BlockIdx;
    assert_eq!(say.input("MESSAGE"), Some(&Input::Block(rep_idx)), "[3, block, shadow] runs the block");
    assert_eq!(rep.input("STRING1"), Some(&Input::Lit(Lit::Str("hello".into()))));
    assert_eq!(rep.input("STRING2"), Some(&Input::Empty), "[3, null, shadow] is undefined, not the shadow");
    let s2 = by_id(&proj, "say2");
    assert_eq!(s2.input("MESSAGE"), Some(&Input::Empty));
    assert_eq!(s2.input("X"), Some(&Input::Variable { name: "v".into(), id: "vid".into() }));
    assert_eq!(s2.input("L"), Some(&Input::List { name: "l".into(), id: "lid".into() }));
    assert_eq!(s2.input("B"), Some(&Input::Broadcast { name: "msg".into(), id: "bid".into() }));
    assert_eq!(s2.input("C"), Some(&Input::Lit(Lit::Str("#ff0000".into()))));
    assert_eq!(s2.input("T"), Some(&Input::Lit(Lit::Num(7.0))));
    assert_eq!(s2.input("N"), Some(&Input::Empty));
    assert_eq!(s2.input("D"), Some(&Input::Empty));
    assert_eq!(
        s2.input("DS"),
        Some(&Input::Lit(Lit::Str("fallback".into()))),
        "a missing block falls back to the shadow"
    );
    let go = by_id(&proj, "go");
    let menu_idx = proj.blocks.iter().position(|b| b.id == "menu").unwrap() as BlockIdx;
    assert_eq!(go.input("TO"), Some(&Input::Block(menu_idx)), "menus stay blocks");
    assert_eq!(go.input("TWO"), Some(&Input::Empty), "a literal block with two fields has no value");
    assert_eq!(proj.block(menu_idx).field("TO").map(|f| f.value.as_str()), Some("_random_"));
    assert_eq!(proj.block(menu_idx).field("TO").and_then(|f| f.id.clone()), None);
    assert!(proj.warnings.iter().any(|w| w.contains("missing block")), "{:?}", proj.warnings);
    // Parents are computed from the links; shadows that are not executed have none.
    assert_eq!(rep.parent, proj.blocks.iter().position(|b| b.id == "say").map(|i| i as BlockIdx));
    assert_eq!(by_id(&proj, "sh").parent, None);
}

#[test]
fn missing_next_is_marked_and_ends_nothing_else() {
    let blocks = json!({
        "a": {"opcode": "motion_movesteps", "next": "gone", "parent": null, "topLevel": true, "shadow": false,
              "inputs": {"STEPS": [1, [4, "10"]]}, "fields": {}}
    });
    let proj = ok(&one_sprite(blocks));
    let a = by_id(&proj, "a");
    assert!(a.next.is_none() && a.next_missing);
    assert!(proj.warnings.iter().any(|w| w.contains("`next` names a missing block")));
}

#[test]
fn fields_keep_their_json_type() {
    let blocks = json!({
        "n": {"opcode": "math_number", "next": null, "parent": null, "topLevel": true, "shadow": false, "inputs": {},
              "fields": {"NUM": [10], "B": [false, null], "X": "not an array", "V": ["name", "a<b"], "E": []}}
    });
    let proj = ok(&one_sprite(blocks));
    let b = by_id(&proj, "n");
    assert_eq!(b.field("NUM").map(|f| (&f.raw, f.value.as_str())), Some((&Lit::Num(10.0), "10")));
    assert_eq!(b.field("B").map(|f| (&f.raw, f.value.as_str())), Some((&Lit::Bool(false), "false")));
    assert!(b.field("X").is_none());
    assert_eq!(
        b.field("V").and_then(|f| f.id.clone()).as_deref(),
        Some("a<b"),
        "only VARIABLE/LIST/BROADCAST ids are made safe"
    );
    assert_eq!(b.field("E").map(|f| f.value.as_str()), Some(""));
}

#[test]
fn mutations_read_warp_and_json_arrays_like_scratch_vm() {
    let proto = |id: &str, warp: JsonValue| {
        (
            id.to_string(),
            json!({"opcode": "procedures_prototype", "next": null, "parent": null, "topLevel": true, "shadow": true,
                   "inputs": {}, "fields": {},
                   "mutation": {"tagName": "mutation", "children": [], "proccode": format!("p {id}"),
                                "argumentids": "[\"a\",\"b\"]", "argumentnames": "[\"x\",\"y\"]",
                                "argumentdefaults": "[\"\",false]", "warp": warp}}),
        )
    };
    let mut blocks = serde_json::Map::new();
    for (id, warp) in [
        ("t", json!("true")),
        ("f", json!("false")),
        ("b", json!(true)),
        ("n", json!("null")),
        ("none", JsonValue::Null),
    ] {
        let (k, v) = proto(id, warp);
        blocks.insert(k, v);
    }
    let proj = ok(&one_sprite(JsonValue::Object(blocks)));
    let warp = |id: &str| by_id(&proj, id).mutation.as_ref().unwrap().warp;
    assert!(warp("t") && warp("b"));
    assert!(!warp("f") && !warp("n") && !warp("none"));
    let m = by_id(&proj, "t").mutation.as_ref().unwrap();
    assert_eq!(m.argument_ids, ["a", "b"]);
    assert_eq!(m.argument_names, ["x", "y"]);
    assert_eq!(m.argument_defaults, ["", "false"]);
    // Other strings ("1", "yes") break scratch-vm's schema: the file is refused (below).
}

/// What scratch-vm's project schema refuses in a block is a load error naming the block and
/// the rule (each case checked against the fidelity oracle, which refuses the same files).
#[test]
fn blocks_against_scratch_vms_schema_are_refused() {
    let say = |inputs: JsonValue| {
        json!({"say": {"opcode": "looks_say", "next": null, "parent": null, "topLevel": true, "shadow": false,
                       "fields": {}, "inputs": inputs}})
    };
    let proto = |warp: JsonValue| {
        json!({"p": {"opcode": "procedures_prototype", "next": null, "parent": null, "topLevel": true,
                     "shadow": true, "inputs": {}, "fields": {},
                     "mutation": {"tagName": "mutation", "children": [], "proccode": "p", "argumentids": "[]",
                                  "warp": warp}}})
    };
    for (blocks, block, needle) in [
        (say(json!({"M": "not an array"})), "say", "not an array"),
        (say(json!({"M": [1, [10, true]]})), "say", "primitive"),
        (say(json!({"M": [1, [99, "x"]]})), "say", "primitive"),
        (say(json!({"M": [1, [4, null]]})), "say", "primitive"),
        (say(json!({"M": [4, [10, "x"]]})), "say", "first item"),
        (say(json!({"M": [1, [3, "b", [10, ""]]]})), "say", "primitive"),
        (proto(json!("1")), "p", "`warp`"),
        (proto(json!("yes")), "p", "`warp`"),
        (json!({"odd": [4, "1"]}), "odd", "variable or list reporter"),
    ] {
        let e = err(&one_sprite(blocks));
        assert_eq!(e.kind, LoadErrorKind::Malformed, "{e}");
        assert_eq!(e.block.as_deref(), Some(block), "{e}");
        assert!(e.msg.contains(needle) && e.msg.contains("schema"), "{e} should mention {needle:?}");
    }
}

#[test]
fn procedure_lookups_take_the_first_in_block_order() {
    let blocks = r#"{
        "def2": {"opcode": "procedures_definition", "next": null, "parent": null, "topLevel": true, "shadow": false,
                 "inputs": {"custom_block": [1, "proto2"]}, "fields": {}},
        "proto2": {"opcode": "procedures_prototype", "next": null, "parent": "def2", "topLevel": false, "shadow": true,
                   "inputs": {}, "fields": {}, "mutation": {"proccode": "jump", "argumentids": "[]", "argumentnames": "[]",
                                                             "argumentdefaults": "[]", "warp": "false"}},
        "def1": {"opcode": "procedures_definition", "next": null, "parent": null, "topLevel": true, "shadow": false,
                 "inputs": {"custom_block": [1, "proto1"]}, "fields": {}},
        "proto1": {"opcode": "procedures_prototype", "next": null, "parent": "def1", "topLevel": false, "shadow": true,
                   "inputs": {}, "fields": {}, "mutation": {"proccode": "jump", "argumentids": "[]", "argumentnames": "[]",
                                                             "argumentdefaults": "[]", "warp": "true"}}
    }"#;
    let proj = ok_text(&one_sprite_raw(blocks));
    let t = &proj.targets[1];
    assert_eq!(t.procedure_definition("jump").map(|i| proj.block(i).id.as_str()), Some("def2"));
    assert_eq!(t.procedure_prototype("jump").map(|i| proj.block(i).id.as_str()), Some("proto2"));
    assert_eq!(t.procedure_definition("fly"), None);
}

#[test]
fn top_level_compact_reporters_come_last_and_are_scripts_only_with_a_position() {
    let blocks = r#"{
        "v": [12, "score", "sid", 10, 20],
        "hat": {"opcode": "event_whenflagclicked", "next": null, "parent": null, "topLevel": true, "shadow": false,
                "inputs": {}, "fields": {}},
        "l": [13, "things", "lid"]
    }"#;
    let proj = ok_text(&one_sprite_raw(blocks));
    let ids: Vec<&str> = sprite_blocks(&proj).iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids, ["hat", "v", "l"]);
    let v = by_id(&proj, "v");
    assert_eq!(v.opcode, "data_variable");
    assert_eq!(v.field("VARIABLE").map(|f| (f.value.as_str(), f.id.as_deref())), Some(("score", Some("sid"))));
    let scripts: Vec<&str> = proj.targets[1].scripts.iter().map(|&i| proj.block(i).id.as_str()).collect();
    assert_eq!(scripts, ["hat", "v"]);
}

#[test]
fn layer_order_matches_v8_sort_including_missing_values() {
    // Expected orders computed with Node 20: objects sorted by (a, b) => a.k - b.k.
    let nan = f64::NAN;
    assert_eq!(v8_sort_order(&[0.0, nan, 2.0, 1.0]), [0, 1, 3, 2]);
    assert_eq!(v8_sort_order(&[0.0, 3.0, nan, 1.0, 2.0]), [0, 1, 2, 3, 4]);
    assert_eq!(v8_sort_order(&[nan, 2.0, 1.0, nan, 0.0]), [0, 4, 2, 1, 3]);
    assert_eq!(v8_sort_order(&[0.0, 5.0, 4.0, 3.0, nan, 1.0]), [0, 5, 3, 2, 1, 4]);
    assert_eq!(v8_sort_order(&[0.0, 2.0, 1.0, 1.0]), [0, 2, 3, 1]);
    let many: Vec<f64> = (0..100).map(|i| f64::from((i * 37) % 100)).collect();
    let order = v8_sort_order(&many);
    assert!(order.windows(2).all(|w| many[w[0]] <= many[w[1]]));

    let p = project(vec![
        stage(),
        sprite("Back", 3, json!({})),
        sprite("Front", 7, json!({})),
        sprite("Mid", 5, json!({})),
    ]);
    let proj = ok(&p);
    let names: Vec<&str> = proj.execution_order().iter().map(|&i| proj.targets[i].name.as_str()).collect();
    assert_eq!(names, ["Stage", "Back", "Mid", "Front"]);
    assert_eq!(proj.targets[2].layer_order, 3);
}

#[test]
fn target_properties_wrap_clamp_and_convert() {
    let mut s = sprite("S", 1, json!({}));
    s["direction"] = json!(270);
    s["x"] = json!(12.5);
    s["currentCostume"] = json!(7);
    s["rotationStyle"] = json!("left-right");
    s["visible"] = json!(false);
    s["draggable"] = json!(true);
    let mut s2 = sprite("T", 2, json!({}));
    s2["direction"] = json!(-180);
    s2["currentCostume"] = json!(0);
    let proj = ok(&project(vec![stage(), s, s2]));
    let (a, b) = (&proj.targets[1], &proj.targets[2]);
    // Kept as saved: the VM wraps it unless its profile is Whisker's (`whisker_profile.rs`).
    assert_eq!(a.direction, 270.0);
    assert_eq!(b.direction, -180.0);
    assert_eq!(a.x, 12.5);
    assert_eq!(a.current_costume, 0, "clamped to the one costume");
    assert_eq!(b.current_costume, 0);
    assert_eq!(a.rotation_style, "left-right");
    assert!(!a.visible && a.draggable);
}

#[test]
fn duplicate_sprite_names_are_made_unique_like_scratch_vm() {
    let proj = ok(&project(vec![
        stage(),
        sprite("Cat", 1, json!({})),
        sprite("Cat", 2, json!({})),
        sprite("Cat2", 3, json!({})),
        sprite("Cat", 4, json!({})),
        sprite("_mouse_", 5, json!({})),
        sprite("_mouse_", 6, json!({})),
    ]));
    let names: Vec<&str> = proj.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Stage", "Cat", "Cat2", "Cat3", "Cat4", "_mouse_", "_mouse_"]);
}

#[test]
fn declarations_share_one_id_space_and_unsafe_ids_are_replaced() {
    let mut st = stage();
    st["variables"] = json!({"v1": ["score", 5], "a<b": ["odd", "007"], "c": ["cloudy", 0, true], "x": ["flag", true],
                             "z": ["nothing"]});
    st["lists"] = json!({"v1": ["score list", [1, "two", false]], "l2": ["no items"]});
    st["broadcasts"] = json!({"m1": "go"});
    let blocks = json!({
        "set": {"opcode": "data_setvariableto", "next": null, "parent": null, "topLevel": true, "shadow": false,
                "inputs": {"VALUE": [1, [10, "1"]], "R": [3, [12, "odd", "a<b"], [10, ""]]},
                "fields": {"VARIABLE": ["odd", "a<b"]}}
    });
    let proj = ok(&project(vec![st, sprite("S", 1, blocks)]));
    let stage = &proj.targets[0];
    let vars: Vec<(&str, &str, &Lit)> =
        stage.variables.iter().map(|v| (v.id.as_str(), v.name.as_str(), &v.value)).collect();
    assert_eq!(
        vars,
        [
            ("c", "cloudy", &Lit::Num(0.0)),
            ("x", "flag", &Lit::Bool(true)),
            ("z", "nothing", &Lit::Undefined),
            ("altb", "odd", &Lit::Str("007".into()))
        ]
    );
    assert!(stage.variables[0].cloud);
    assert_eq!(stage.lists.len(), 2);
    assert_eq!(stage.lists[0].id, "v1", "the list replaced the variable with the same id");
    assert_eq!(stage.lists[0].items, [Lit::Num(1.0), Lit::Str("two".into()), Lit::Bool(false)]);
    assert!(stage.lists[1].items.is_empty());
    assert_eq!(stage.broadcasts, [("m1".to_string(), "go".to_string())]);
    let set = by_id(&proj, "set");
    assert_eq!(set.field("VARIABLE").and_then(|f| f.id.as_deref()), Some("altb"));
    assert_eq!(set.input("R"), Some(&Input::Variable { name: "odd".into(), id: "altb".into() }));
}

#[test]
fn sounds_and_costumes_fall_back_on_missing_metadata() {
    let mut s = sprite("S", 1, json!({}));
    let hash = "0123456789abcdef0123456789abcdef";
    s["costumes"] = json!([{"name": "c", "assetId": hash, "dataFormat": "png"}]);
    s["sounds"] = json!([{"name": "s", "assetId": hash, "dataFormat": "wav", "rate": 0, "sampleCount": -1}]);
    let proj = ok(&project(vec![stage(), s]));
    let t = &proj.targets[1];
    assert_eq!(t.costumes.len(), 1);
    assert_eq!(t.costumes[0].md5ext, format!("{hash}.png"));
    assert!(!t.costumes[0].has_rotation_center);
    assert_eq!(t.sounds[0].rate, 48000.0);
    assert_eq!(t.sounds[0].sample_count, 0.0);
    assert_eq!(t.sounds[0].md5ext, format!("{hash}.wav"));
    assert!(proj.warnings.iter().any(|w| w.contains("rate")));
}

/// What scratch-vm's project schema refuses outside the blocks is a load error naming the
/// target and the rule; what it allows loads (each case as the fidelity oracle decides it:
/// `scripts/fidelity-schema.py` runs these and more against the real scratch-vm).
#[test]
fn targets_against_scratch_vms_schema_are_refused() {
    type Change = fn(&mut JsonValue);
    let refused: [(Change, Option<&str>, &str); 12] = [
        (|p| p["meta"] = json!(null), None, "`meta` is null"),
        (|p| p["meta"]["semver"] = json!("2.0.0"), None, "semver"),
        (|p| p["targets"][0]["name"] = json!("Bühne"), Some("Bühne"), "named"),
        (|p| p["targets"][1]["x"] = json!("12.5"), Some("Sprite1"), "`x` is a string"),
        (|p| p["targets"][1]["layerOrder"] = json!(1.5), Some("Sprite1"), "layerOrder"),
        (|p| p["targets"][1]["currentCostume"] = json!(-3), Some("Sprite1"), "currentCostume"),
        (|p| p["targets"][0]["variables"] = json!({"v": ["v", null]}), Some("Stage"), "its value"),
        (|p| p["targets"][0]["lists"] = json!({"l": ["l", "nope"]}), Some("Stage"), "contents"),
        (|p| p["targets"][1]["costumes"] = json!([]), Some("Sprite1"), "`costumes` is empty"),
        (|p| p["targets"][1]["costumes"][0]["dataFormat"] = json!("webp"), Some("Sprite1"), "dataFormat"),
        (
            |p| {
                let c = p["targets"][1]["costumes"][0].clone();
                p["targets"][1]["costumes"] = json!([c.clone(), c]);
            },
            Some("Sprite1"),
            "unique",
        ),
        (|p| p["targets"][1]["comments"] = json!({"c": {"text": "x".repeat(8001)}}), Some("Sprite1"), "8000"),
    ];
    for (change, target, needle) in refused {
        let mut p = one_sprite(json!({}));
        change(&mut p);
        let e = err(&p);
        assert_eq!(e.kind, LoadErrorKind::Malformed, "{e}");
        assert_eq!(e.target.as_deref(), target, "{e}");
        assert!(e.msg.contains(needle) && e.msg.contains("schema"), "{e} should mention {needle:?}");
    }
    let allowed: [Change; 5] = [
        |p| p["targets"][0]["variables"] = json!({"v": ["v"]}),
        |p| p["targets"][0]["variables"] = json!({"v": ["☁ v", 0, true]}),
        |p| p["targets"][1]["comments"] = json!({"c": {"text": "😀".repeat(8000), "x": null}}),
        |p| p["meta"]["vm"] = json!("0.2.0-prerelease.20210330"),
        |p| p["targets"][1]["layerOrder"] = json!(7.0),
    ];
    for change in allowed {
        let mut p = one_sprite(json!({}));
        change(&mut p);
        ok(&p);
    }
}

#[test]
fn text_oddities_are_tolerated() {
    let text = one_sprite(json!({})).to_string().replace("Sprite1", "Sprite\\ud800\\b1");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(text.as_bytes());
    let proj = load(&bytes, "odd.json", &LoadLimits::default()).unwrap();
    assert_eq!(proj.targets[1].name, "Sprite\u{FFFD}1");
    let bad_utf8 = one_sprite(json!({})).to_string().replace("Sprite1", "Sprite\u{e9}").into_bytes();
    let mut bad = bad_utf8.clone();
    let pos = bad.windows(2).position(|w| w == "\u{e9}".as_bytes()).unwrap();
    bad[pos] = 0xff;
    let proj = load(&bad, "latin.json", &LoadLimits::default()).unwrap();
    assert!(proj.targets[1].name.starts_with("Sprite\u{FFFD}"));
    assert!(proj.warnings.iter().any(|w| w.contains("UTF-8")));
}

#[test]
fn monitors_are_read() {
    let mut p = one_sprite(json!({}));
    p["monitors"] = json!([{"id": "a&b", "mode": "slider", "opcode": "data_variable", "params": {"VARIABLE": "v"},
                            "spriteName": null, "value": 3, "visible": true, "sliderMin": -5, "sliderMax": 5,
                            "isDiscrete": false}, "junk"]);
    let proj = ok(&p);
    assert_eq!(proj.monitors.len(), 1);
    let m = &proj.monitors[0];
    assert_eq!(
        (m.id.as_str(), m.mode.as_str(), m.visible, m.slider_min, m.is_discrete),
        ("aampb", "slider", true, -5.0, false)
    );
    assert_eq!(m.params, [("VARIABLE".to_string(), "v".to_string())]);
}

// ---- rejections ----------------------------------------------------------

#[test]
fn rejects_non_projects_with_their_kind() {
    let limits = LoadLimits::default();
    let cases: Vec<(Vec<u8>, LoadErrorKind, &str)> = vec![
        (b"".to_vec(), LoadErrorKind::Json, "empty"),
        (b"{\"targets\": [".to_vec(), LoadErrorKind::Json, "not valid JSON"),
        (b"[1, 2]".to_vec(), LoadErrorKind::NotAProject, "not an object"),
        (b"{\"hello\": 1}".to_vec(), LoadErrorKind::NotAProject, "no `targets`"),
        (br#"{"objName": "Stage", "children": [], "info": {}}"#.to_vec(), LoadErrorKind::Scratch2, "Scratch 2"),
        (b"ScratchV02\x00\x00binary".to_vec(), LoadErrorKind::Scratch1, "Scratch 1.4"),
        (br#"{"isStage": false, "name": "S", "blocks": {}}"#.to_vec(), LoadErrorKind::Sprite, "sprite"),
        (b"1e400".to_vec(), LoadErrorKind::Json, "out of range"),
        (b"PK\x03\x04 this is no zip".to_vec(), LoadErrorKind::Zip, "not a readable zip"),
        (zip_of(&[("readme.txt", b"hi")]), LoadErrorKind::Zip, "no project.json"),
        (zip_of(&[("a/b/project.json", b"{}")]), LoadErrorKind::Zip, "nested too deep"),
        (zip_of(&[("sprite.json", b"{}")]), LoadErrorKind::Sprite, "sprite file"),
        (zip_of(&[("project.json", br#"{"objName": "Stage"}"#)]), LoadErrorKind::Scratch2, "Scratch 2"),
    ];
    for (bytes, kind, needle) in cases {
        let e = err_bytes(&bytes, &limits);
        assert_eq!(e.kind, kind, "{e}");
        assert!(e.to_string().contains(needle), "{e} should mention {needle:?}");
        assert!(e.to_string().starts_with("bad.sb3: "), "{e}");
    }
}

#[test]
fn rejects_broken_structure_naming_target_and_block() {
    let hat = json!({"opcode": "event_whenflagclicked", "next": null, "parent": null, "topLevel": true, "shadow": false,
                     "inputs": {}, "fields": {}});
    let mut no_costumes = sprite("Bare", 1, json!({}));
    no_costumes["costumes"] = json!([]);
    let mut stage2 = sprite("Stage2", 1, json!({}));
    stage2["isStage"] = json!(true);
    let mut nameless = sprite("x", 1, json!({}));
    nameless.as_object_mut().unwrap().remove("name");
    let cases: Vec<(JsonValue, Option<&str>, Option<&str>, &str)> = vec![
        (json!({"targets": 5}), None, None, "not an array"),
        (json!({"targets": []}), None, None, "needs a stage"),
        (project(vec![stage(), json!(3)]), None, None, "target #1 is a number"),
        (project(vec![sprite("S", 1, json!({}))]), Some("S"), None, "first target must be the stage"),
        (project(vec![stage(), stage2]), Some("Stage2"), None, "second stage"),
        (project(vec![stage(), nameless]), None, None, "has no name"),
        (project(vec![stage(), no_costumes]), Some("Bare"), None, "`costumes` is empty"),
        (one_sprite(json!([1, 2])), Some("Sprite1"), None, "`blocks` is an array"),
        (one_sprite(json!({"b1": 7})), Some("Sprite1"), Some("b1"), "neither a block object"),
        (one_sprite(json!({"b1": {"next": null}})), Some("Sprite1"), Some("b1"), "has no opcode"),
        (one_sprite(json!({"b1": {"opcode": 12}})), Some("Sprite1"), Some("b1"), "opcode is a number"),
        (one_sprite(json!({"ok": hat})), None, None, ""),
    ];
    for (p, target, block, needle) in cases {
        if needle.is_empty() {
            ok(&p);
            continue;
        }
        let e = err(&p);
        assert_eq!(e.kind, LoadErrorKind::Malformed, "{e}");
        assert_eq!(e.target.as_deref(), target, "{e}");
        assert_eq!(e.block.as_deref(), block, "{e}");
        assert!(e.msg.contains(needle), "{e} should mention {needle:?}");
    }
}

fn stmt(next: Option<&str>, inputs: JsonValue) -> JsonValue {
    json!({"opcode": "control_forever", "next": next, "parent": null, "topLevel": false, "shadow": false,
           "inputs": inputs, "fields": {}})
}

#[test]
fn rejects_cycles_and_shared_blocks() {
    let cases = vec![
        (json!({"a": stmt(Some("a"), json!({}))}), "a", "itself"),
        (
            json!({"a": stmt(Some("b"), json!({})), "b": stmt(Some("c"), json!({})), "c": stmt(Some("a"), json!({}))}),
            "",
            "cycle",
        ),
        (json!({"a": stmt(None, json!({"SUBSTACK": [2, "b"]})), "b": stmt(Some("a"), json!({}))}), "", "cycle"),
        (
            json!({"top": stmt(Some("x"), json!({})), "a": stmt(None, json!({"SUBSTACK": [2, "b"]})),
                   "b": stmt(None, json!({"SUBSTACK": [2, "a"]})), "x": stmt(None, json!({}))}),
            "",
            "cycle",
        ),
        (
            json!({"a": stmt(Some("c"), json!({})), "b": stmt(Some("c"), json!({})), "c": stmt(None, json!({}))}),
            "c",
            "two places",
        ),
        (
            json!({"a": stmt(None, json!({"SUBSTACK": [2, "c"], "S2": [1, "c"]})), "c": stmt(None, json!({}))}),
            "c",
            "two places",
        ),
        // A reporter held in two slots is allowed, but not when it contains itself.
        (
            json!({"a": stmt(None, json!({"X": [3, "r", [10, ""]]})), "b": stmt(None, json!({"X": [3, "r", [10, ""]]})),
                   "r": stmt(None, json!({"Y": [3, "q", [10, ""]]})), "q": stmt(None, json!({"Z": [3, "r", [10, ""]]}))}),
            "",
            "cycle",
        ),
    ];
    for (blocks, block, needle) in cases {
        let e = err(&one_sprite(blocks));
        assert_eq!(e.kind, LoadErrorKind::BlockGraph, "{e}");
        assert_eq!(e.target.as_deref(), Some("Sprite1"));
        if !block.is_empty() {
            assert_eq!(e.block.as_deref(), Some(block), "{e}");
        }
        assert!(e.msg.contains(needle), "{e} should mention {needle:?}");
    }
    // Shadows in the third slot are not execution links: sharing them is fine.
    let shared_shadow = json!({
        "a": stmt(None, json!({"X": [3, [12, "v", "v"], "sh"]})),
        "b": stmt(None, json!({"X": [3, [12, "v", "v"], "sh"]})),
        "sh": {"opcode": "text", "next": null, "parent": "a", "topLevel": false, "shadow": true, "inputs": {}, "fields": {"TEXT": [""]}}
    });
    ok(&one_sprite(shared_shadow));
    // A reporter in two input slots (generated files): loaded, listed, its parent the first holder.
    let shared = json!({
        "a": stmt(None, json!({"X": [3, "r", [10, ""]]})),
        "b": stmt(None, json!({"Y": [3, "r", [10, ""]], "Z": [3, "r", [10, ""]]})),
        "r": {"opcode": "operator_add", "next": null, "parent": "a", "topLevel": false, "shadow": false,
              "inputs": {}, "fields": {}}
    });
    let p = ok(&one_sprite(shared));
    let r = p.blocks.iter().position(|b| b.id == "r").expect("r") as BlockIdx;
    let a = p.blocks.iter().position(|b| b.id == "a").expect("a") as BlockIdx;
    assert_eq!(p.shared, vec![r]);
    assert_eq!(p.blocks[r as usize].parent, Some(a));
}

#[test]
fn limits_bound_every_dimension() {
    let base = one_sprite(json!({"a": stmt(None, json!({}))}));
    let text = base.to_string();
    let bytes = text.as_bytes();
    let small = |f: &dyn Fn(&mut LoadLimits)| {
        let mut l = LoadLimits::default();
        f(&mut l);
        l
    };
    let cases: Vec<(Vec<u8>, LoadLimits, &str)> = vec![
        (bytes.to_vec(), small(&|l| l.max_file_bytes = 100), "file is"),
        (bytes.to_vec(), small(&|l| l.max_json_bytes = 100), "project.json is"),
        (bytes.to_vec(), small(&|l| l.max_json_depth = 4), "nested deeper than 4"),
        (bytes.to_vec(), small(&|l| l.max_targets = 1), "2 targets"),
        (bytes.to_vec(), small(&|l| l.max_blocks = 0), "more than 0 blocks"),
        (zip_of(&[("project.json", bytes)]), small(&|l| l.max_json_bytes = 100), "larger than the limit of 100"),
        (zip_of(&[("project.json", bytes)]), small(&|l| l.max_uncompressed_bytes = 100), "zip bomb"),
        (zip_of(&[("project.json", bytes), ("a", b"1"), ("b", b"2")]), small(&|l| l.max_zip_entries = 2), "3 entries"),
    ];
    for (bytes, limits, needle) in cases {
        let e = err_bytes(&bytes, &limits);
        assert_eq!(e.kind, LoadErrorKind::Limit, "{e}");
        assert!(e.to_string().contains(needle), "{e} should mention {needle:?}");
    }
    // A real zip bomb: 24 MB of spaces compress to ~24 KB; the budget stops reading early.
    let spaces = vec![b' '; 24 << 20];
    let bomb = zip_of(&[("project.json", &spaces)]);
    assert!(bomb.len() < 1 << 20);
    let e = err_bytes(&bomb, &small(&|l| l.max_uncompressed_bytes = 4 << 20));
    assert_eq!(e.kind, LoadErrorKind::Limit, "{e}");
    // Initial list items.
    let mut st = stage();
    st["lists"] = json!({"l": ["big", [1, 2, 3, 4, 5]]});
    let p = project(vec![st]).to_string();
    let e = err_bytes(p.as_bytes(), &small(&|l| l.max_list_items = 4));
    assert!(e.msg.contains("list items"), "{e}");
    // Nesting of inputs.
    let mut blocks = serde_json::Map::new();
    for i in 0..10 {
        let child = if i < 9 { json!({"OPERAND": [2, format!("n{}", i + 1)]}) } else { json!({}) };
        blocks.insert(
            format!("n{i}"),
            json!({"opcode": "operator_not", "next": null, "parent": null,
                                                "topLevel": i == 0, "shadow": false, "inputs": child, "fields": {}}),
        );
    }
    let deep = one_sprite(JsonValue::Object(blocks)).to_string();
    assert!(load(deep.as_bytes(), "d", &small(&|l| l.max_block_depth = 9)).is_ok());
    let e = err_bytes(deep.as_bytes(), &small(&|l| l.max_block_depth = 8));
    assert_eq!((e.kind, e.block.as_deref()), (LoadErrorKind::Limit, Some("n9")), "{e}");
}

#[test]
fn zip64_and_lying_entry_counts_are_rejected_before_indexing() {
    let text = one_sprite(json!({})).to_string();
    let good = zip_of(&[("project.json", text.as_bytes())]);
    // Patch the end-of-central-directory record: claim 60 000 entries.
    let mut many = good.clone();
    let eocd = many.len() - 22;
    assert_eq!(many[eocd..eocd + 4], [0x50, 0x4b, 0x05, 0x06]);
    many[eocd + 8..eocd + 12].copy_from_slice(&[0x60, 0xea, 0x60, 0xea]);
    let e = err_bytes(&many, &LoadLimits::default());
    assert_eq!(e.kind, LoadErrorKind::Limit, "{e}");
    let mut z64 = good.clone();
    z64[eocd + 8..eocd + 12].copy_from_slice(&[0xff, 0xff, 0xff, 0xff]);
    let e = err_bytes(&z64, &LoadLimits::default());
    assert_eq!(e.kind, LoadErrorKind::Zip, "{e}");
    assert!(e.msg.contains("zip64"), "{e}");
}

#[test]
fn errors_display_file_target_block_and_reason() {
    let e = err(&one_sprite(json!({"b1": {"opcode": null}})));
    assert_eq!(e.to_string(), "bad.sb3: target \"Sprite1\": block \"b1\": opcode is null, not a string");
    assert_eq!(e.kind.as_str(), "malformed");
}

#[test]
fn load_path_reports_io_errors() {
    let e = Project::load_path(std::path::Path::new("/nonexistent/clowder/project.sb3"), &LoadLimits::default())
        .err()
        .unwrap();
    assert_eq!(e.kind, LoadErrorKind::Io);
    assert!(e.file.contains("project.sb3"));
}
