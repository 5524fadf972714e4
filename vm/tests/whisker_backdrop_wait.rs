//! `switch backdrop to … and wait` that starts scripts (engine `+sem52`).
//!
//! scratch-vm reads `util.stackFrame.startedThreads` after `runtime.startHats` has pointed the
//! shared BlockUtility at a started thread, finds nothing there and throws: the rest of the step
//! is lost (P10 of the fidelity oracle, the `default` profile). Whisker's scratch-vm fork guards
//! that read (`!util.stackFrame.startedThreads ||`), so there the block switches, starts the
//! hats and ends at once, without waiting, and the step goes on: the started scripts run in
//! the same step. Found on a held-out snake game whose start button and green flag both switch
//! the backdrop (`docs/vm.md`, "Bitmaps decoded by their bytes, and sample 10").

mod common;

use std::sync::Arc;

use clowder_vm::project::{LoadLimits, load};
use clowder_vm::{Profile, Vm, VmOptions};

/// Stage: green flag, `switch backdrop to b2 and wait`, `switch backdrop to b3`. Sprite `A`:
/// `when backdrop switches to b2`, `go to x: 50 y: 0`.
fn project() -> Arc<clowder_vm::Project> {
    let costume = |name: &str| {
        serde_json::json!({"name": name, "assetId": common::asset_id(name), "md5ext": format!("{}.svg", common::asset_id(name)), "dataFormat": "svg",
                           "rotationCenterX": 10, "rotationCenterY": 10})
    };
    let backdrop_menu = |id: &str, parent: &str, name: &str| {
        serde_json::json!({id: {"opcode": "looks_backdrops", "next": null, "parent": parent, "inputs": {},
                                "fields": {"BACKDROP": [name, null]}, "shadow": true, "topLevel": false}})
    };
    let mut stage_blocks = serde_json::json!({
        "f": {"opcode": "event_whenflagclicked", "next": "w", "parent": null, "inputs": {}, "fields": {},
              "shadow": false, "topLevel": true, "x": 0, "y": 0},
        "w": {"opcode": "looks_switchbackdroptoandwait", "next": "s", "parent": "f",
              "inputs": {"BACKDROP": [1, "m1"]}, "fields": {}, "shadow": false, "topLevel": false},
        "s": {"opcode": "looks_switchbackdropto", "next": null, "parent": "w",
              "inputs": {"BACKDROP": [1, "m2"]}, "fields": {}, "shadow": false, "topLevel": false}
    });
    for (id, parent, name) in [("m1", "w", "b2"), ("m2", "s", "b3")] {
        if let (Some(o), serde_json::Value::Object(m)) = (stage_blocks.as_object_mut(), backdrop_menu(id, parent, name))
        {
            o.extend(m);
        }
    }
    let sprite_blocks = serde_json::json!({
        "h": {"opcode": "event_whenbackdropswitchesto", "next": "g", "parent": null, "inputs": {},
              "fields": {"BACKDROP": ["b2", null]}, "shadow": false, "topLevel": true, "x": 0, "y": 0},
        "g": {"opcode": "motion_gotoxy", "next": null, "parent": "h",
              "inputs": {"X": [1, [4, "50"]], "Y": [1, [4, "0"]]}, "fields": {}, "shadow": false, "topLevel": false}
    });
    let json = serde_json::json!({
        "targets": [
            {"isStage": true, "name": "Stage", "variables": {}, "lists": {}, "broadcasts": {}, "blocks": stage_blocks,
             "currentCostume": 0, "costumes": [costume("b1"), costume("b2"), costume("b3")], "sounds": [],
             "layerOrder": 0, "volume": 100},
            {"isStage": false, "name": "A", "variables": {}, "lists": {}, "broadcasts": {}, "blocks": sprite_blocks,
             "currentCostume": 0, "costumes": [costume("c")], "sounds": [], "layerOrder": 1, "volume": 100,
             "visible": true, "x": 0, "y": 0, "size": 100, "direction": 90, "draggable": false,
             "rotationStyle": "all around"}
        ],
        "monitors": [], "extensions": [], "meta": {"semver": "3.0.0"}
    });
    Arc::new(
        load(json.to_string().as_bytes(), "backdrop_wait.json", &LoadLimits::default()).expect("the project loads"),
    )
}

/// After the green flag and one step: (A's x, the backdrop's index, whether the step threw).
fn first_step(profile: Profile) -> (f64, i64, bool) {
    let mut vm = Vm::new(project(), VmOptions { profile, seed: 1, ..VmOptions::default() });
    vm.green_flag();
    vm.step();
    let a = vm.find_target("A", 0).expect("A exists");
    let poses = vm.poses();
    let x = poses.iter().find(|p| p.target == a).map(|p| p.x).expect("A has a pose");
    let backdrop = poses.iter().find(|p| p.target != a).map(|p| p.costume).expect("the stage has a pose");
    (x, backdrop, vm.last_step_error().is_some())
}

#[test]
fn whisker_switch_backdrop_and_wait_ends_at_once_and_the_step_goes_on() {
    // The started script ran in the step, the block did not wait, nothing threw.
    assert_eq!(first_step(Profile::Whisker), (50.0, 2, false));
}

#[test]
fn scratch_vm_switch_backdrop_and_wait_throws_and_loses_the_step() {
    // The exception ends the step after the stage's block: A has not moved, b2 is shown.
    assert_eq!(first_step(Profile::Default), (0.0, 1, true));
}
