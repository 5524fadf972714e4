//! The per-opcode profile (`--features op-profile`) counts every block and reporter the
//! interpreter runs, once each: its counts add up to the work meter's block and reporter
//! counts, and a procedure called 50 times shows 50 calls.
#![cfg(feature = "op-profile")]

use std::collections::BTreeMap;
use std::sync::Arc;

use clowder_vm::geometry::cost;
use clowder_vm::op_profile;
use clowder_vm::project::{LoadLimits, load};
use clowder_vm::{Vm, VmOptions};
use serde_json::json;

mod common;

/// The reporters `Rep::is_light` names, as the profile's rows name them.
const LIGHT: [&str; 17] = [
    "Var",
    "Arg",
    "LengthOfList",
    "ItemOfList",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Mod",
    "Round",
    "MathOp",
    "Lt",
    "Eq",
    "Gt",
    "And",
    "Or",
    "Not",
];

/// `when flag clicked: set v to 0, add "3" to L, repeat 50 { step (v) }` with
/// `define step (x): set v to (x + item 1 of L); if v > 20 then set s to (join v "a")`.
fn project() -> String {
    let b = |opcode: &str,
             next: Option<&str>,
             parent: Option<&str>,
             inputs: serde_json::Value,
             fields: serde_json::Value| {
        json!({"opcode": opcode, "next": next, "parent": parent, "inputs": inputs, "fields": fields,
               "shadow": false, "topLevel": parent.is_none()})
    };
    let mutation = json!({"tagName": "mutation", "children": [], "proccode": "step %s", "argumentids": "[\"xid\"]",
                          "argumentnames": "[\"x\"]", "argumentdefaults": "[\"\"]", "warp": "false"});
    let var = |name: &str, id: &str| json!({"VARIABLE": [name, id]});
    let blocks = json!({
        "flag": b("event_whenflagclicked", Some("zero"), None, json!({}), json!({})),
        "zero": b("data_setvariableto", Some("add"), Some("flag"), json!({"VALUE": [1, [10, "0"]]}), var("v", "vid")),
        "add": b("data_addtolist", Some("rep"), Some("zero"), json!({"ITEM": [1, [10, "3"]]}), json!({"LIST": ["L", "lid"]})),
        "rep": b("control_repeat", None, Some("add"), json!({"TIMES": [1, [6, "50"]], "SUBSTACK": [2, "call"]}), json!({})),
        "call": {"opcode": "procedures_call", "next": null, "parent": "rep", "fields": {}, "shadow": false,
                 "topLevel": false, "mutation": mutation.clone(), "inputs": {"xid": [3, "vrep", [10, ""]]}},
        "vrep": b("data_variable", None, Some("call"), json!({}), var("v", "vid")),
        "def": b("procedures_definition", Some("set"), None, json!({"custom_block": [1, "proto"]}), json!({})),
        "proto": {"opcode": "procedures_prototype", "next": null, "parent": "def", "fields": {}, "shadow": true,
                  "topLevel": false, "mutation": mutation, "inputs": {"xid": [1, "xarg"]}},
        "xarg": {"opcode": "argument_reporter_string_number", "next": null, "parent": "proto", "inputs": {},
                 "fields": {"VALUE": ["x", null]}, "shadow": true, "topLevel": false},
        "set": b("data_setvariableto", Some("if"), Some("def"), json!({"VALUE": [3, "sum", [10, ""]]}), var("v", "vid")),
        "sum": b("operator_add", None, Some("set"), json!({"NUM1": [3, "x", [4, ""]], "NUM2": [3, "item", [4, ""]]}), json!({})),
        "x": b("argument_reporter_string_number", None, Some("sum"), json!({}), json!({"VALUE": ["x", null]})),
        "item": b("data_itemoflist", None, Some("sum"), json!({"INDEX": [1, [7, "1"]]}), json!({"LIST": ["L", "lid"]})),
        "if": b("control_if", None, Some("set"), json!({"CONDITION": [2, "gt"], "SUBSTACK": [2, "sets"]}), json!({})),
        "gt": b("operator_gt", None, Some("if"), json!({"OPERAND1": [3, "v2", [10, ""]], "OPERAND2": [1, [10, "20"]]}), json!({})),
        "v2": b("data_variable", None, Some("gt"), json!({}), var("v", "vid")),
        "sets": b("data_setvariableto", None, Some("if"), json!({"VALUE": [3, "join", [10, ""]]}), var("s", "sid")),
        "join": b("operator_join", None, Some("sets"), json!({"STRING1": [3, "v3", [10, ""]], "STRING2": [1, [10, "a"]]}), json!({})),
        "v3": b("data_variable", None, Some("join"), json!({}), var("v", "vid"))
    });
    common::stage_and_sprite(
        json!({"variables": {"vid": ["v", 0], "sid": ["s", ""]}, "lists": {"lid": ["L", []]}}),
        json!({"blocks": blocks}),
    )
}

#[test]
fn counts_add_up_to_the_work_meters_blocks_and_reporters() {
    let p =
        Arc::new(load(project().as_bytes(), "profile.json", &LoadLimits::default()).expect("the test project loads"));
    let mut vm = Vm::new(Arc::clone(&p), VmOptions::default());
    op_profile::reset();
    vm.green_flag();
    for _ in 0..200 {
        vm.step();
    }
    let [blocks, reporters, ..] = vm.work_parts();
    let rows = op_profile::take(&p, None);
    let count = |kind: &str, name: &str| rows.iter().find(|r| r.kind == kind && r.name == name).map_or(0, |r| r.count);
    let by_kind = |kind: &str| rows.iter().filter(|r| r.kind == kind).map(|r| r.count).sum::<u64>();
    assert_eq!(by_kind("command") * cost::BLOCK, blocks, "{rows:#?}");
    // No random draws here: the reporters' units are evaluations, light ones and constants.
    let consts = count("reporter", "Const");
    let light: u64 =
        rows.iter().filter(|r| r.kind == "reporter" && LIGHT.contains(&r.name.as_str())).map(|r| r.count).sum();
    let rich = by_kind("reporter") - consts - light;
    assert!(light > 0 && rich > 0, "{rows:#?}");
    assert_eq!(rich * cost::EVAL + light * cost::EVAL_LIGHT + consts * cost::CONST, reporters, "{rows:#?}");
    assert_eq!(vm.operations(), by_kind("command") + by_kind("reporter") - consts, "{rows:#?}");
    assert_eq!(count("command", "Call"), 50);
    assert_eq!(count("reporter", "Add"), 50);
    assert_eq!(count("reporter", "Arg"), 50);
    assert_eq!(count("reporter", "ItemOfList"), 50);
    // v runs 3, 6, …, 150: above 20 from the seventh call on, each time formatted by `join`.
    assert_eq!(count("reporter", "Join"), 44);
    assert_eq!(count("event", "number formatted as string"), 44);
    assert!(rows.iter().all(|r| r.self_ns >= 0.0 && r.self_ns.is_finite()));
    let kinds: BTreeMap<&str, usize> = rows.iter().fold(BTreeMap::new(), |mut m, r| {
        *m.entry(r.kind).or_default() += 1;
        m
    });
    assert_eq!(kinds.get("outside"), Some(&1));
    // Off after `take`: nothing is counted until the next `reset`.
    vm.step();
    assert!(op_profile::take(&p, None).iter().all(|r| r.count == 0));
}
