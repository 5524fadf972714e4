//! A step-timed block inside a warp procedure under the `whisker` profile (engine `+sem51`).
//!
//! Whisker's fork times `wait` (and `say … for secs`, `play sound until done`, `glide`) by the
//! step count, which does not move inside a step; scratch-vm's warp loop re-runs a yielding
//! block at once until the thread's 500 ms warp timer, a wall clock, runs out, and the thread
//! goes on in the next step. Read in the real Whisker on a held-out GitHub game (`jogo`, sample
//! 8 of `experiments/github-editor-projects.txt`): a boy's walk cycle, a warp procedure of
//! `forever { switch costume; wait 0.1 }`, leaves the rock's green-flag script its turn in the
//! first step, where clowder's hang guard used to end the step.

use std::sync::Arc;

use clowder_vm::project::{LoadLimits, load};
use clowder_vm::{Profile, StepOutcome, Value, Vm, VmOptions};

/// A stage with two green-flag scripts: `walk`, a warp procedure `forever { change w by 1;
/// wait 0.1 }`, and `change s by 1` in a `forever` (one per step).
fn project() -> Arc<clowder_vm::Project> {
    let json = serde_json::json!({
        "targets": [{
            "isStage": true, "name": "Stage", "variables": {"w": ["w", 0], "s": ["s", 0]}, "lists": {},
            "broadcasts": {},
            "blocks": {
                "f1": {"opcode": "event_whenflagclicked", "next": "c1", "parent": null, "inputs": {}, "fields": {},
                       "shadow": false, "topLevel": true, "x": 0, "y": 0},
                "c1": {"opcode": "procedures_call", "next": null, "parent": "f1", "inputs": {}, "fields": {},
                       "shadow": false, "topLevel": false,
                       "mutation": {"tagName": "mutation", "children": [], "proccode": "walk", "argumentids": "[]",
                                    "warp": "true"}},
                "d1": {"opcode": "procedures_definition", "next": "l1", "parent": null,
                       "inputs": {"custom_block": [1, "p1"]}, "fields": {}, "shadow": false, "topLevel": true,
                       "x": 0, "y": 200},
                "p1": {"opcode": "procedures_prototype", "next": null, "parent": "d1", "inputs": {}, "fields": {},
                       "shadow": true, "topLevel": false,
                       "mutation": {"tagName": "mutation", "children": [], "proccode": "walk", "argumentids": "[]",
                                    "argumentnames": "[]", "argumentdefaults": "[]", "warp": "true"}},
                "l1": {"opcode": "control_forever", "next": null, "parent": "d1",
                       "inputs": {"SUBSTACK": [2, "w1"]}, "fields": {}, "shadow": false, "topLevel": false},
                "w1": {"opcode": "data_changevariableby", "next": "w2", "parent": "l1",
                       "inputs": {"VALUE": [1, [4, "1"]]}, "fields": {"VARIABLE": ["w", "w"]},
                       "shadow": false, "topLevel": false},
                "w2": {"opcode": "control_wait", "next": null, "parent": "w1",
                       "inputs": {"DURATION": [1, [5, "0.1"]]}, "fields": {}, "shadow": false, "topLevel": false},
                "f2": {"opcode": "event_whenflagclicked", "next": "l2", "parent": null, "inputs": {}, "fields": {},
                       "shadow": false, "topLevel": true, "x": 300, "y": 0},
                "l2": {"opcode": "control_forever", "next": null, "parent": "f2",
                       "inputs": {"SUBSTACK": [2, "s1"]}, "fields": {}, "shadow": false, "topLevel": false},
                "s1": {"opcode": "data_changevariableby", "next": null, "parent": "l2",
                       "inputs": {"VALUE": [1, [4, "1"]]}, "fields": {"VARIABLE": ["s", "s"]},
                       "shadow": false, "topLevel": false}
            },
            "currentCostume": 0, "layerOrder": 0, "volume": 100, "sounds": [],
            "costumes": [{"name": "b", "assetId": "62640000000000000000000000000000", "md5ext": "62640000000000000000000000000000.svg", "dataFormat": "svg",
                          "rotationCenterX": 240, "rotationCenterY": 180}]
        }],
        "monitors": [], "extensions": [], "meta": {"semver": "3.0.0"}
    });
    Arc::new(load(json.to_string().as_bytes(), "warp_wait.json", &LoadLimits::default()).expect("the project loads"))
}

fn number(vm: &Vm, name: &str) -> f64 {
    match vm.variable(vm.stage_id(), name) {
        Some(Value::Num(n)) => n,
        other => panic!("{name} is {other:?}"),
    }
}

#[test]
fn whisker_ends_a_warp_threads_turn_at_a_step_timed_block() {
    let mut vm = Vm::new(project(), VmOptions { profile: Profile::Whisker, seed: 1, ..VmOptions::default() });
    vm.green_flag();
    for _ in 0..10 {
        assert_eq!(vm.step(), StepOutcome::Ran, "no hang under whisker");
    }
    // The other script ran in every step; the walk went round once per `wait 0.1` (3 steps
    // at Whisker's acceleration, the first round in the first step).
    assert_eq!(number(&vm, "s"), 10.0);
    assert_eq!(number(&vm, "w"), 4.0);
}

#[test]
fn scratch_vm_profiles_keep_the_bounded_warp() {
    // The design: a warp loop whose wait cannot end inside the step spins until the hang guard.
    let mut vm = Vm::new(project(), VmOptions { profile: Profile::Default, seed: 1, ..VmOptions::default() });
    vm.green_flag();
    assert_eq!(vm.step(), StepOutcome::Hang);
}
