//! Custom blocks whose prototype names two inputs alike: scratch-vm binds the parameters one
//! by one into an object (`stackFrame.params[name] = value`), so the later input wins and an
//! absent later input binds its default. The compiler merges such names once (a call binds
//! a list of distinct names); these runs check that the merge keeps the later value.

use std::sync::Arc;

use clowder_vm::project::{LoadLimits, load};
use clowder_vm::{Value, Vm, VmOptions};
use serde_json::json;

mod common;

/// `when flag clicked: p (first) (second)`; `define p (a) (a): set v to (a)`; the second
/// input omitted from the call when `second` is `None`.
fn project(second: Option<&str>) -> String {
    let mutation = |tag: bool| {
        let mut m = json!({"tagName": "mutation", "children": [], "proccode": "p %s %s",
                           "argumentids": "[\"i1\",\"i2\"]", "warp": "false"});
        if tag && let Some(o) = m.as_object_mut() {
            o.insert("argumentnames".into(), json!("[\"a\",\"a\"]"));
            o.insert("argumentdefaults".into(), json!("[\"d1\",\"d2\"]"));
        }
        m
    };
    let mut inputs = json!({"i1": [1, [10, "first"]]});
    if let (Some(s), Some(o)) = (second, inputs.as_object_mut()) {
        o.insert("i2".into(), json!([1, [10, s]]));
    }
    let blocks = json!({
        "flag": {"opcode": "event_whenflagclicked", "next": "call", "parent": null, "inputs": {}, "fields": {},
                 "shadow": false, "topLevel": true},
        "call": {"opcode": "procedures_call", "next": null, "parent": "flag", "inputs": inputs, "fields": {},
                 "shadow": false, "topLevel": false, "mutation": mutation(false)},
        "def": {"opcode": "procedures_definition", "next": "set", "parent": null,
                "inputs": {"custom_block": [1, "proto"]}, "fields": {}, "shadow": false, "topLevel": true},
        "proto": {"opcode": "procedures_prototype", "next": null, "parent": "def", "inputs": {}, "fields": {},
                  "shadow": true, "topLevel": false, "mutation": mutation(true)},
        "set": {"opcode": "data_setvariableto", "next": null, "parent": "def",
                "inputs": {"VALUE": [3, "arg", [10, ""]]}, "fields": {"VARIABLE": ["v", "vid"]},
                "shadow": false, "topLevel": false},
        "arg": {"opcode": "argument_reporter_string_number", "next": null, "parent": "set", "inputs": {},
                "fields": {"VALUE": ["a", null]}, "shadow": false, "topLevel": false}
    });
    common::stage_and_sprite(json!({}), json!({"blocks": blocks, "variables": {"vid": ["v", 0]}}))
}

fn v_after_one_step(second: Option<&str>) -> Option<Value> {
    let p = load(project(second).as_bytes(), "p.json", &LoadLimits::default()).expect("the test project loads");
    let mut vm = Vm::new(Arc::new(p), VmOptions::default());
    vm.green_flag();
    vm.step();
    let s = vm.find_target("S", 0).expect("sprite S");
    vm.variable(s, "v")
}

#[test]
fn a_name_given_twice_binds_the_later_input() {
    assert_eq!(v_after_one_step(Some("second")), Some(Value::Str("second".into())));
}

#[test]
fn a_name_given_twice_binds_the_later_default_when_its_input_is_absent() {
    assert_eq!(v_after_one_step(None), Some(Value::Str("d2".into())));
}
