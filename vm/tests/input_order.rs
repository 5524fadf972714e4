//! A block's inputs are evaluated in project.json order and land in the slots their names
//! say, whatever that order: inputs listed in slot order are pushed as they are evaluated,
//! others are written into slots made first (`engine::execute::eval_args`). Both ways must give
//! the same values and the same counts, with reporters evaluated between the pushes, and with
//! missing and unknown inputs.

mod common;

use std::sync::Arc;

use clowder_vm::project::{LoadLimits, load};
use clowder_vm::{Vm, VmOptions};
use serde_json::json;

/// A project whose green flag runs `go to x: () y: ()` with `inputs` (the text of the inputs
/// object's members, in their order: serde_json's maps would sort them) and `more` blocks.
fn project(inputs: &str, more: &str) -> Arc<clowder_vm::Project> {
    let text = common::stage_and_sprite(json!({}), json!({"blocks": "@@BLOCKS@@"}));
    let blocks = format!(
        r#"{{"f": {{"opcode": "event_whenflagclicked", "next": "a", "parent": null, "inputs": {{}},
        "fields": {{}}, "shadow": false, "topLevel": true, "x": 0, "y": 0}},
        "a": {{"opcode": "motion_gotoxy", "next": null, "parent": "f", "inputs": {{{inputs}}},
        "fields": {{}}, "shadow": false, "topLevel": false}}{more}}}"#
    );
    let text = text.replace("\"@@BLOCKS@@\"", &blocks);
    Arc::new(load(text.as_bytes(), "input-order.json", &LoadLimits::default()).expect("the project loads"))
}

/// `, "id": NUM1 - NUM2` with `inputs` in the order given.
fn subtract(id: &str, parent: &str, inputs: &str) -> String {
    format!(
        r#", "{id}": {{"opcode": "operator_subtract", "next": null, "parent": "{parent}",
        "inputs": {{{inputs}}}, "fields": {{}}, "shadow": false, "topLevel": false}}"#
    )
}

/// The sprite's position after the first step, and the operations that step counted.
fn run(inputs: &str, more: &str) -> ((f64, f64), u64) {
    let mut vm = Vm::new(project(inputs, more), VmOptions { seed: 1, ..VmOptions::default() });
    vm.green_flag();
    vm.step();
    let s = vm.find_target("S", 0).expect("the sprite");
    let at = vm.target(s).map(|t| (t.x, t.y)).expect("its state");
    (at, vm.operations())
}

#[test]
fn inputs_in_any_order_fill_their_own_slots_with_the_same_counts() {
    // x = 100 - (1 - 4) = 103 (the inner reporter's inputs out of order), y = 50.
    let more = format!(
        "{}{}",
        subtract("o", "a", r#""NUM1": [1, [4, "100"]], "NUM2": [3, "i", [4, "0"]]"#),
        subtract("i", "o", r#""NUM2": [1, [4, "4"]], "NUM1": [1, [4, "1"]]"#)
    );
    let (a, ops_a) = run(r#""X": [3, "o", [4, "0"]], "Y": [1, [4, "50"]]"#, &more);
    let (b, ops_b) = run(r#""Y": [1, [4, "50"]], "X": [3, "o", [4, "0"]]"#, &more);
    assert_eq!(a, (103.0, 50.0), "in slot order");
    assert_eq!(b, (103.0, 50.0), "out of slot order");
    assert_eq!(ops_a, ops_b, "the same evaluations counted either way");
}

#[test]
fn missing_and_unknown_inputs_leave_their_slots_undefined() {
    // A missing input is `undefined`, which is 0. An input no slot names is still evaluated
    // (its reporter counts) but read by nothing.
    let (only_x, ops_x) = run(r#""X": [1, [4, "30"]]"#, "");
    let (only_y, _) = run(r#""Y": [1, [4, "40"]]"#, "");
    let more = subtract("i", "a", r#""NUM1": [1, [4, "1"]], "NUM2": [1, [4, "4"]]"#);
    let (unknown, ops_u) = run(r#""X": [1, [4, "30"]], "EXTRA": [3, "i", [4, "0"]]"#, &more);
    assert_eq!(only_x, (30.0, 0.0));
    assert_eq!(only_y, (0.0, 40.0));
    assert_eq!(unknown, (30.0, 0.0));
    assert!(ops_u > ops_x, "the unknown input's reporter ran: {ops_u} vs {ops_x}");
}
