//! A reporter held in two input slots (files the Scratch editor never writes, generated ones
//! do): scratch-vm keeps one cached form per block id, so the reporter's value goes only to the
//! slot of the holder whose cached form was built last; the other holder reads what its own
//! slot holds (`undefined`, or a value from when it was built last). The expected values are
//! what the fidelity oracle (scratch-vm 5.0.300) reports for the same project.

use std::sync::Arc;

use clowder_vm::project::{LoadLimits, load};
use clowder_vm::{Value, Vm, VmOptions};
use serde_json::{Value as Json, json};

mod common;

fn blk(op: &str, next: Option<&str>, parent: Option<&str>, inputs: Json, fields: Json, top: bool) -> Json {
    json!({"opcode": op, "next": next, "parent": parent, "inputs": inputs, "fields": fields,
           "shadow": false, "topLevel": top})
}

/// Script A: `forever { change n by 1; set a to (S); set c to (join (T) (T)) }`; script B:
/// `forever { set b to (S) }`, with S = `n + 0` held by both `set`s and T = `n * 10` held by
/// both inputs of the `join`.
fn project() -> String {
    let none = json!({});
    let blocks = json!({
        "fa": blk("event_whenflagclicked", Some("la"), None, none.clone(), none.clone(), true),
        "la": blk("control_forever", None, Some("fa"), json!({"SUBSTACK": [2, "chg"]}), none.clone(), false),
        "chg": blk("data_changevariableby", Some("seta"), Some("la"), json!({"VALUE": [1, [4, "1"]]}),
                   json!({"VARIABLE": ["n", "vn"]}), false),
        "seta": blk("data_setvariableto", Some("setc"), Some("chg"), json!({"VALUE": [3, "S", [10, ""]]}),
                    json!({"VARIABLE": ["a", "va"]}), false),
        "setc": blk("data_setvariableto", None, Some("seta"), json!({"VALUE": [3, "J", [10, ""]]}),
                    json!({"VARIABLE": ["c", "vc"]}), false),
        "J": blk("operator_join", None, Some("setc"),
                 json!({"STRING1": [3, "T", [10, "x"]], "STRING2": [3, "T", [10, "y"]]}), none.clone(), false),
        "T": blk("operator_multiply", None, Some("J"),
                 json!({"NUM1": [3, [12, "n", "vn"], [4, "1"]], "NUM2": [1, [4, "10"]]}), none.clone(), false),
        "fb": blk("event_whenflagclicked", Some("lb"), None, none.clone(), none.clone(), true),
        "lb": blk("control_forever", None, Some("fb"), json!({"SUBSTACK": [2, "setb"]}), none.clone(), false),
        "setb": blk("data_setvariableto", None, Some("lb"), json!({"VALUE": [3, "S", [10, ""]]}),
                    json!({"VARIABLE": ["b", "vb"]}), false),
        "S": blk("operator_add", None, Some("seta"),
                 json!({"NUM1": [3, [12, "n", "vn"], [4, "0"]], "NUM2": [1, [4, "0"]]}), none, false),
    });
    common::stage_and_sprite(
        json!({}),
        json!({"blocks": blocks, "variables": {"vn": ["n", 0], "va": ["a", ""], "vb": ["b", ""], "vc": ["c", ""]}}),
    )
}

#[test]
fn a_shared_reporter_reports_into_the_slot_built_last() {
    let p = load(project().as_bytes(), "shared.json", &LoadLimits::default()).expect("a shared reporter loads");
    assert_eq!(p.shared.len(), 2, "S and T are each held twice");
    let mut vm = Vm::new(Arc::new(p), VmOptions::default());
    vm.green_flag();
    let sprite = vm.find_target("S", 0).expect("sprite S");
    let var = |vm: &Vm, name: &str| vm.variable(sprite, name);
    for n in 1..=4 {
        vm.step();
        assert_eq!(var(&vm, "n"), Some(Value::Num(f64::from(n))));
        // `set a` was built first; `set b` was built after it and gets every value since.
        assert_eq!(var(&vm, "a"), Some(Value::Num(1.0)), "step {n}: a keeps the value of its first step");
        assert_eq!(var(&vm, "b"), Some(Value::Num(f64::from(n))), "step {n}");
        // Both inputs of the join hold T: the later input is bound, the earlier stays undefined.
        assert_eq!(var(&vm, "c"), Some(Value::Str(format!("undefined{}", n * 10).into())), "step {n}");
    }
}

/// `Blocks.resetCache` (what an exported test's prologue calls on such a project): the
/// cached forms are built again in the order blocks run from then on, as on a fresh load.
#[test]
fn emptying_the_block_cache_binds_as_a_fresh_load() {
    let p = Arc::new(load(project().as_bytes(), "shared.json", &LoadLimits::default()).expect("loads"));
    let mut vm = Vm::new(Arc::clone(&p), VmOptions::default());
    vm.green_flag();
    let sprite = vm.find_target("S", 0).expect("sprite S");
    for _ in 0..3 {
        vm.step();
    }
    // Without the reset, `set a` would keep reading its stale slot (1): `set b` stays bound.
    vm.reset_block_cache();
    vm.green_flag();
    vm.step();
    let n = vm.variable(sprite, "n");
    assert_eq!(n, Some(Value::Num(4.0)));
    // Fresh binding: `set a` is built first again in this step, `set b` after it.
    assert_eq!(vm.variable(sprite, "a"), Some(Value::Num(4.0)), "a gets the first value after the reset");
    assert_eq!(vm.variable(sprite, "b"), Some(Value::Num(4.0)));
    assert_eq!(vm.variable(sprite, "c"), Some(Value::Str("undefined40".into())));
    vm.step();
    assert_eq!(vm.variable(sprite, "a"), Some(Value::Num(4.0)), "and keeps it, as on a fresh load");
}
