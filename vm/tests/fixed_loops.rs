//! A warp loop that changes nothing has the rest of its spin skipped (`engine/fixpoint.rs`):
//! everything observable must be as if it had spun, only the work meter lower.
//!
//! Each case runs two VMs side by side, `skip_fixed_loops` on and off, with the test
//! generator's instrumentation, and compares after every step: the outcome (hangs on the same
//! steps), every target's state (the fidelity trace's step record), the blocks executed, and
//! every condition's counts and minimum branch distances. Hand-made projects check a loop that
//! is skipped (the work must drop, or the skip never happened), one whose state changes and
//! comes back inside the period (skipped too: its boundaries are equal), blocks that wait inside
//! warp (their re-runs are the spin's boundaries), and loops that must not be skipped (a
//! counter, random draws: the work must stay equal). Real projects: the
//! random-sample projects whose runaway touching loops made studies slow, and every 40th
//! random-sample project, with the oracle's generic inputs and the green flag again after
//! every hang (as a test generator's next test would), under the profiles with geometry.

use std::path::PathBuf;
use std::sync::Arc;

use clowder_vm::project::{LoadLimits, Project, load};
use clowder_vm::{Profile, StepOutcome, Vm, VmOptions};
use serde_json::json;

mod common;
use common::{corpora, generic, skip_note};

/// A sprite whose green flag calls a warp procedure `spin` forever; `body` is the blocks of
/// the procedure (a JSON object of blocks, `"loop"` the first), `vars` the stage variables.
fn warp_project(body: serde_json::Value) -> Arc<Project> {
    let mut blocks = json!({
        "flag": {"opcode": "event_whenflagclicked", "next": "call", "parent": null, "inputs": {}, "fields": {},
                 "shadow": false, "topLevel": true},
        "call": {"opcode": "procedures_call", "next": null, "parent": "flag", "inputs": {}, "fields": {},
                 "shadow": false, "topLevel": false,
                 "mutation": {"tagName": "mutation", "children": [], "proccode": "spin", "argumentids": "[]",
                              "warp": "true"}},
        "def": {"opcode": "procedures_definition", "next": "loop", "parent": null,
                "inputs": {"custom_block": [1, "proto"]}, "fields": {}, "shadow": false, "topLevel": true},
        "proto": {"opcode": "procedures_prototype", "next": null, "parent": "def", "inputs": {}, "fields": {},
                  "shadow": true, "topLevel": false,
                  "mutation": {"tagName": "mutation", "children": [], "proccode": "spin", "argumentids": "[]",
                               "argumentnames": "[]", "argumentdefaults": "[]", "warp": "true"}}
    });
    if let (Some(all), Some(more)) = (blocks.as_object_mut(), body.as_object()) {
        for (k, v) in more {
            all.insert(k.clone(), v.clone());
        }
    }
    let costume = json!([{"name": "c", "assetId": "bcf454acf82e4504149f7ffe07081dbc", "dataFormat": "svg",
                          "rotationCenterX": 0, "rotationCenterY": 0}]);
    let project = json!({"targets": [
        {"isStage": true, "name": "Stage", "variables": {"vid": ["v", 0]}, "lists": {}, "broadcasts": {},
         "blocks": {}, "costumes": costume, "sounds": [], "layerOrder": 0},
        {"isStage": false, "name": "S", "variables": {}, "lists": {}, "broadcasts": {}, "blocks": blocks,
         "costumes": costume, "sounds": [], "layerOrder": 1, "x": 0, "y": 170, "size": 100, "direction": 90,
         "visible": true}
    ], "meta": {"semver": "3.0.0"}});
    let loaded = load(project.to_string().as_bytes(), "spin.json", &LoadLimits::default());
    Arc::new(loaded.unwrap_or_else(|e| panic!("hand-made project does not load: {e}")))
}

fn block(opcode: &str, next: Option<&str>, inputs: serde_json::Value, fields: serde_json::Value) -> serde_json::Value {
    json!({"opcode": opcode, "next": next, "parent": null, "inputs": inputs, "fields": fields,
           "shadow": false, "topLevel": false})
}

fn var_field() -> serde_json::Value {
    json!({"VARIABLE": ["v", "vid"]})
}

/// `repeat until <(v) = -1>` around `sub`.
fn until_never(sub: &str) -> serde_json::Value {
    json!({
        "loop": block("control_repeat_until", None, json!({"CONDITION": [2, "cond"], "SUBSTACK": [2, sub]}), json!({})),
        "cond": block("operator_equals", None, json!({"OPERAND1": [3, "rv", [10, ""]], "OPERAND2": [1, [10, "-1"]]}), json!({})),
        "rv": block("data_variable", None, json!({}), var_field()),
    })
}

fn with(mut a: serde_json::Value, b: serde_json::Value) -> serde_json::Value {
    if let (Some(a), Some(b)) = (a.as_object_mut(), b.as_object()) {
        for (k, v) in b {
            a.insert(k.clone(), v.clone());
        }
    }
    a
}

/// What two runs differ in, step by step, or `None`; and the two works.
struct Compared {
    first_difference: Option<String>,
    hangs: u64,
    work_on: u64,
    work_off: u64,
}

fn compare(project: &Arc<Project>, profile: Profile, steps: u64, inputs: &dyn Fn(&mut Vm, u64)) -> Compared {
    let opts = |skip| VmOptions {
        profile,
        seed: 1,
        instrument: true,
        max_ops_per_step: 400_000,
        skip_fixed_loops: skip,
        ..VmOptions::default()
    };
    let mut on = Vm::new(project.clone(), opts(true));
    let mut off = Vm::new(project.clone(), opts(false));
    let mut hangs = 0;
    for k in 0..steps {
        for vm in [&mut on, &mut off] {
            inputs(vm, k);
        }
        let (a, b) = (on.step(), off.step());
        let (mut ra, mut rb) = (String::new(), String::new());
        on.write_step_record(k, &mut ra);
        off.write_step_record(k, &mut rb);
        let diff = if a != b {
            Some(format!("outcome {a:?} against {b:?}"))
        } else if ra != rb {
            Some(format!("state:\n{ra}\n{rb}"))
        } else if on.executed_bits() != off.executed_bits() {
            Some("blocks executed".to_string())
        } else if on.instrument().map(|i| i.conditions().to_vec()) != off.instrument().map(|i| i.conditions().to_vec())
        {
            Some("condition statistics".to_string())
        } else if on.instrument().map(|i| i.hat_starts().to_vec()) != off.instrument().map(|i| i.hat_starts().to_vec())
        {
            Some("hat starts".to_string())
        } else {
            None
        };
        if let Some(d) = diff {
            return Compared {
                first_difference: Some(format!("step {k}: {d}")),
                hangs,
                work_on: on.work(),
                work_off: off.work(),
            };
        }
        if a == StepOutcome::Hang {
            hangs += 1;
            // A test generator's next test: the program starts again.
            on.green_flag();
            off.green_flag();
        }
    }
    Compared { first_difference: None, hangs, work_on: on.work(), work_off: off.work() }
}

fn flag_at_zero(vm: &mut Vm, k: u64) {
    if k == 0 {
        vm.green_flag();
    }
}

#[test]
fn a_loop_that_changes_nothing_is_skipped_and_nothing_else_changes() {
    // `change y by (1)` against the top edge: fencing keeps the sprite where it is.
    let p = warp_project(with(
        until_never("move"),
        json!({"move": block("motion_changeyby", None, json!({"DY": [1, [4, "1"]]}), json!({}))}),
    ));
    for profile in [Profile::Default, Profile::Whisker] {
        let c = compare(&p, profile, 6, &flag_at_zero);
        assert_eq!(c.first_difference, None, "{profile:?}");
        assert_eq!(c.hangs, 6, "{profile:?}: every step hangs");
        assert!(c.work_on * 4 < c.work_off, "{profile:?}: skipped spins are not work: {} vs {}", c.work_on, c.work_off);
    }
}

#[test]
fn a_state_that_changes_and_comes_back_within_the_period_is_a_fixed_point() {
    // `set v to 1; set v to 0`: the hang guard trips inside the period, at the same block.
    let p = warp_project(with(
        until_never("s1"),
        json!({
            "s1": block("data_setvariableto", Some("s0"), json!({"VALUE": [1, [10, "1"]]}), var_field()),
            "s0": block("data_setvariableto", None, json!({"VALUE": [1, [10, "0"]]}), var_field()),
        }),
    ));
    for profile in [Profile::Headless, Profile::Default] {
        let c = compare(&p, profile, 5, &flag_at_zero);
        assert_eq!(c.first_difference, None, "{profile:?}");
        assert_eq!(c.hangs, 5);
        assert!(c.work_on * 4 < c.work_off, "{profile:?}: {} vs {}", c.work_on, c.work_off);
    }
}

#[test]
fn a_block_that_waits_inside_warp_has_its_spin_skipped() {
    // Virtual time does not move inside a step, so a warp thread that waits re-runs the
    // waiting block until the hang guard trips: `wait (1)`, `wait until <(v) = -1>`, and under
    // Whisker's fork `play sound until done` of a sound the sprite lacks (it waits for ever).
    // (Under Whisker's fork a `wait` still running ends the warp thread's turn instead, as
    // Whisker's warp timer does: `whisker_warp.rs`.)
    let wait =
        warp_project(json!({"loop": block("control_wait", None, json!({"DURATION": [1, [5, "1"]]}), json!({}))}));
    let until = warp_project(with(
        json!({"loop": block("control_wait_until", None, json!({"CONDITION": [2, "cond"]}), json!({}))}),
        json!({
            "cond": block("operator_equals", None, json!({"OPERAND1": [3, "rv", [10, ""]], "OPERAND2": [1, [10, "-1"]]}), json!({})),
            "rv": block("data_variable", None, json!({}), var_field()),
        }),
    ));
    let sound = warp_project(with(
        json!({"loop": block("sound_playuntildone", None, json!({"SOUND_MENU": [1, "menu"]}), json!({}))}),
        json!({"menu": {"opcode": "sound_sounds_menu", "next": null, "parent": "loop", "inputs": {},
                        "fields": {"SOUND_MENU": ["none", null]}, "shadow": true, "topLevel": false}}),
    ));
    // A spin that ends (`wait 0` runs twice), then a loop that changes nothing: the spin's
    // probe must not keep the loop's from starting.
    let then_loop = {
        // `until_never` names its loop `loop`; here the wait is first and the loop `rep`.
        let mut body = until_never("move");
        if let Some(o) = body.as_object_mut()
            && let Some(rep) = o.remove("loop")
        {
            o.insert("rep".to_string(), rep);
        }
        warp_project(with(
            body,
            json!({
                "loop": block("control_wait", Some("rep"), json!({"DURATION": [1, [5, "0"]]}), json!({})),
                "move": block("motion_changeyby", None, json!({"DY": [1, [4, "1"]]}), json!({})),
            }),
        ))
    };
    for (name, p, profiles) in [
        ("wait 0, then a loop", &then_loop, &[Profile::Default, Profile::Whisker][..]),
        ("wait", &wait, &[Profile::Default][..]),
        ("wait until", &until, &[Profile::Headless, Profile::Whisker][..]),
        ("play sound until done", &sound, &[Profile::Whisker][..]),
    ] {
        for &profile in profiles {
            let c = compare(p, profile, 5, &flag_at_zero);
            assert_eq!(c.first_difference, None, "{name} {profile:?}");
            assert_eq!(c.hangs, 5, "{name} {profile:?}: every step hangs");
            assert!(c.work_on * 4 < c.work_off, "{name} {profile:?}: {} vs {}", c.work_on, c.work_off);
        }
    }
}

#[test]
fn loops_that_change_something_are_not_skipped() {
    let counter = warp_project(with(
        until_never("inc"),
        json!({"inc": block("data_changevariableby", None, json!({"VALUE": [1, [4, "1"]]}), var_field())}),
    ));
    let random = warp_project(with(
        until_never("set"),
        json!({
            "set": block("data_setvariableto", None, json!({"VALUE": [3, "r", [10, ""]]}), var_field()),
            "r": block("operator_random", None, json!({"FROM": [1, [4, "0"]], "TO": [1, [4, "1"]]}), json!({})),
        }),
    ));
    let pen = warp_project(with(
        until_never("down"),
        json!({
            "down": block("pen_penDown", Some("move"), json!({}), json!({})),
            "move": block("motion_changeyby", None, json!({"DY": [1, [4, "1"]]}), json!({})),
        }),
    ));
    // A waiting block whose input draws a random number on every pass.
    let random_wait = warp_project(with(
        json!({"loop": block("control_wait_until", None, json!({"CONDITION": [2, "cond"]}), json!({}))}),
        json!({
            "cond": block("operator_equals", None, json!({"OPERAND1": [3, "r", [10, ""]], "OPERAND2": [1, [10, "-1"]]}), json!({})),
            "r": block("operator_random", None, json!({"FROM": [1, [4, "0"]], "TO": [1, [4, "1"]]}), json!({})),
        }),
    ));
    for (name, p) in [("counter", &counter), ("random", &random), ("pen", &pen), ("random wait", &random_wait)] {
        let c = compare(p, Profile::Default, 4, &flag_at_zero);
        assert_eq!(c.first_difference, None, "{name}");
        assert_eq!(c.hangs, 4, "{name}");
        assert_eq!(c.work_on, c.work_off, "{name}: nothing may be skipped");
    }
}

#[test]
fn real_projects_run_as_if_every_loop_had_spun() {
    let Some(root) = corpora() else {
        skip_note("corpora folder not found (set CLOWDER_CORPORA)");
        return;
    };
    let dir = root.join("random-sample");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        skip_note("no random-sample folder in the corpora");
        return;
    };
    let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    // The runaway touching loops of the study (fenced at an edge), then an even spread.
    let runaway = ["501018355", "402062721"];
    let mut chosen: Vec<&PathBuf> = files
        .iter()
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| runaway.iter().any(|r| n.starts_with(r))))
        .collect();
    chosen.extend(files.iter().step_by(40));
    let mut skipped_somewhere = false;
    for path in chosen {
        let Ok(bytes) = std::fs::read(path) else { continue };
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("project.json");
        let Ok(project) = load(&bytes, name, &LoadLimits::default()) else { continue };
        let project = Arc::new(project);
        for profile in [Profile::Default, Profile::Whisker] {
            let c = compare(&project, profile, 300, &generic);
            assert_eq!(c.first_difference, None, "{} {profile:?}", path.display());
            assert!(c.work_on <= c.work_off, "{} {profile:?}", path.display());
            skipped_somewhere |= c.work_on < c.work_off;
        }
    }
    assert!(skipped_somewhere, "no real project's loop was skipped: the check compared nothing");
}
