//! Thread-list semantics under clone churn inside one tick.
//!
//! A clone that creates its successor and deletes itself runs the whole chain in one tick
//! (scratch-vm appends the new clone's thread to `runtime.threads`, which the tick is still
//! iterating). Each deletion stops the clone's threads and each broadcast restarts the
//! receiving script in place, so these are the scans that `startHats` and `stopForTarget`
//! make. Test builds also check the thread bookkeeping after every step
//! (`State::check_thread_index`).

use std::sync::Arc;

use clowder_vm::project::{LoadLimits, load};
use clowder_vm::{StepOutcome, Value, Vm, VmOptions};
use serde_json::json;

mod common;

const CHAIN: u32 = 3000;

fn project() -> String {
    let b = |opcode: &str, next: Option<&str>, top: bool, inputs: serde_json::Value, fields: serde_json::Value| {
        json!({"opcode": opcode, "next": next, "parent": null, "inputs": inputs, "fields": fields,
               "shadow": false, "topLevel": top})
    };
    let clone_menu = |parent: &str| {
        json!({"opcode": "control_create_clone_of_menu", "next": null, "parent": parent, "inputs": {},
               "fields": {"CLONE_OPTION": ["_myself_", null]}, "shadow": true, "topLevel": false})
    };
    let sprite = json!({
        "flag": b("event_whenflagclicked", Some("zero"), true, json!({}), json!({})),
        "zero": b("data_setvariableto", Some("first"), false, json!({"VALUE": [1, [10, "0"]]}), json!({"VARIABLE": ["n", "nid"]})),
        "first": b("control_create_clone_of", None, false, json!({"CLONE_OPTION": [1, "m1"]}), json!({})),
        "m1": clone_menu("first"),
        "hat": b("control_start_as_clone", Some("inc"), true, json!({}), json!({})),
        "inc": b("data_changevariableby", Some("ping"), false, json!({"VALUE": [1, [4, "1"]]}), json!({"VARIABLE": ["n", "nid"]})),
        "ping": b("event_broadcast", Some("if"), false,
                  json!({"BROADCAST_INPUT": [1, [11, "ping", "pid"]]}), json!({})),
        "if": b("control_if", Some("del"), false, json!({"CONDITION": [2, "lt"], "SUBSTACK": [2, "next"]}), json!({})),
        "lt": b("operator_lt", None, false,
                json!({"OPERAND1": [3, "nrep", [10, ""]], "OPERAND2": [1, [10, CHAIN.to_string()]]}), json!({})),
        "nrep": {"opcode": "data_variable", "next": null, "parent": "lt", "inputs": {},
                 "fields": {"VARIABLE": ["n", "nid"]}, "shadow": false, "topLevel": false},
        "next": b("control_create_clone_of", None, false, json!({"CLONE_OPTION": [1, "m2"]}), json!({})),
        "m2": clone_menu("next"),
        "del": b("control_delete_this_clone", None, false, json!({}), json!({}))
    });
    let stage = json!({
        "recv": b("event_whenbroadcastreceived", Some("incm"), true, json!({}), json!({"BROADCAST_OPTION": ["ping", "pid"]})),
        "incm": b("data_changevariableby", None, false, json!({"VALUE": [1, [4, "1"]]}), json!({"VARIABLE": ["m", "mid"]}))
    });
    common::stage_and_sprite(
        json!({"variables": {"nid": ["n", 0], "mid": ["m", 0]}, "broadcasts": {"pid": "ping"}, "blocks": stage}),
        json!({"name": "Chain", "blocks": sprite}),
    )
}

#[test]
fn clone_chain_runs_in_one_tick_and_broadcasts_restart_in_place() {
    let p = load(project().as_bytes(), "chain.json", &LoadLimits::default()).expect("the test project loads");
    let mut vm = Vm::new(Arc::new(p), VmOptions::default());
    let stage = vm.stage_id();
    vm.green_flag();
    assert_eq!(vm.step(), StepOutcome::Ran);
    // The whole chain ran in the first tick, and every clone deleted itself.
    assert_eq!(vm.variable(stage, "n"), Some(Value::Num(f64::from(CHAIN))));
    assert_eq!(vm.targets_in_execution_order().count(), 2, "all clones were deleted");
    // The first broadcast appended the stage's script, which ran once; every later broadcast
    // restarted it in its old list position, behind the running clone, so it did not run
    // again in this tick (pushing a new thread instead would have run it 3000 times).
    assert_eq!(vm.variable(stage, "m"), Some(Value::Num(1.0)));
    assert_eq!(vm.live_threads(), 1, "only the restarted receiver is left");
    assert_eq!(vm.step(), StepOutcome::Ran);
    assert_eq!(vm.variable(stage, "m"), Some(Value::Num(2.0)));
    assert_eq!(vm.live_threads(), 0);
}

/// A warp procedure whose `broadcast and wait` waits on a receiver that cannot run inside the
/// warp spin; `dynamic` names the message with a `join` reporter instead of a constant.
fn warp_wait_project(dynamic: bool) -> String {
    let b = |opcode: &str, next: Option<&str>, parent: Option<&str>, inputs: serde_json::Value| {
        json!({"opcode": opcode, "next": next, "parent": parent, "inputs": inputs, "fields": {},
               "shadow": false, "topLevel": parent.is_none() && next.is_some()})
    };
    let message = if dynamic { json!([3, "join", [11, "go", "gid"]]) } else { json!([1, [11, "go", "gid"]]) };
    let mutation = json!({"tagName": "mutation", "children": [], "proccode": "spin", "argumentids": "[]",
                          "argumentnames": "[]", "argumentdefaults": "[]", "warp": "true"});
    let mut blocks = json!({
        "flag": b("event_whenflagclicked", Some("call"), None, json!({})),
        "call": {"opcode": "procedures_call", "next": null, "parent": "flag", "inputs": {}, "fields": {},
                 "shadow": false, "topLevel": false, "mutation": mutation.clone()},
        "def": {"opcode": "procedures_definition", "next": "wait", "parent": null,
                "inputs": {"custom_block": [1, "proto"]}, "fields": {}, "shadow": false, "topLevel": true},
        "proto": {"opcode": "procedures_prototype", "next": null, "parent": "def", "inputs": {}, "fields": {},
                  "shadow": true, "topLevel": false, "mutation": mutation},
        "wait": b("event_broadcastandwait", None, Some("def"), json!({"BROADCAST_INPUT": message})),
        "recv": {"opcode": "event_whenbroadcastreceived", "next": "loop", "parent": null, "inputs": {},
                 "fields": {"BROADCAST_OPTION": ["go", "gid"]}, "shadow": false, "topLevel": true},
        "loop": b("control_forever", None, Some("recv"), json!({"SUBSTACK": [2, "move"]})),
        "move": b("motion_changexby", None, Some("loop"), json!({"DX": [1, [4, "1"]]}))
    });
    if dynamic && let Some(m) = blocks.as_object_mut() {
        m.insert(
            "join".into(),
            json!({"opcode": "operator_join", "next": null, "parent": "wait", "shadow": false, "topLevel": false,
                   "inputs": {"STRING1": [1, [10, "go"]], "STRING2": [1, [10, ""]]}, "fields": {}}),
        );
    }
    let costume = json!([{"name": "c", "assetId": "bcf454acf82e4504149f7ffe07081dbc", "dataFormat": "svg",
                          "rotationCenterX": 0, "rotationCenterY": 0}]);
    json!({"targets": [
        {"isStage": true, "name": "Stage", "variables": {}, "lists": {}, "broadcasts": {"gid": "go"},
         "blocks": {}, "costumes": costume, "sounds": [], "layerOrder": 0},
        {"isStage": false, "name": "Spinner", "variables": {}, "lists": {}, "broadcasts": {}, "blocks": blocks,
         "costumes": costume, "sounds": [], "layerOrder": 1, "x": 0, "y": 0, "size": 100, "direction": 90,
         "visible": true}
    ], "meta": {"semver": "3.0.0"}})
    .to_string()
}

/// The spin is skipped: where the block's inputs are constants, at once; with a reporter
/// input, once two re-runs find the same state (`engine/fixpoint.rs`). Either way the step
/// hangs exactly where the real spin (skipping off) hangs, since the hang guard counts the
/// skipped passes, but the work meter charges only what was done.
#[test]
fn warp_broadcast_and_wait_spin_hangs_where_the_real_spin_does_without_its_work() {
    const MAX: u64 = 20_000;
    let run = |dynamic: bool, skip_fixed_loops: bool| {
        let p = load(warp_wait_project(dynamic).as_bytes(), "spin.json", &LoadLimits::default())
            .expect("the test project loads");
        let opts = VmOptions { max_ops_per_step: MAX, skip_fixed_loops, ..VmOptions::default() };
        let mut vm = Vm::new(Arc::new(p), opts);
        vm.green_flag();
        let outcome = vm.step();
        (outcome, vm.steps(), vm.work_parts())
    };
    let (constant, probed, spun) = (run(false, false), run(true, true), run(true, false));
    for (name, r) in [("constant", &constant), ("probed", &probed), ("spun", &spun)] {
        assert_eq!(r.0, StepOutcome::Hang, "{name}");
        assert_eq!(r.1, spun.1, "{name}: hangs in the same step");
    }
    // The real spin executed about MAX blocks; the skipped ones a handful.
    for (name, r) in [("constant", &constant), ("probed", &probed)] {
        assert!(spun.2[0] > 100 * r.2[0].max(1), "work of blocks: spun {:?}, {name} {:?}", spun.2, r.2);
        assert!(r.2[0] > 0, "{name}: the blocks that did run are charged");
    }
}
