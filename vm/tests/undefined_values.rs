//! Values that are neither number, string nor boolean (engine `+sem55`).
//!
//! A variable saved with a name and no value (`["v"]`, as PictoBlox writes it) starts
//! `undefined` in scratch-vm: `say` shows "undefined", it equals no number, `change by` counts
//! from 0, a clone copies it. Blocks whose JS reads a method of their argument throw on it
//! (`switch costume to`, `switch backdrop to`, `set language to`): the rest of the step is lost
//! and the thread stays on the block (P10). `set language to` also throws on a number or a
//! boolean (`locale.toLowerCase` is not a function of either). Each case was read in the fidelity oracle
//! (`scripts/fidelity-bad-values.py` probes every input of every block this way).

mod common;

use std::sync::Arc;

use clowder_vm::project::{LoadLimits, load};
use clowder_vm::{Value, Vm, VmOptions};
use serde_json::json;

fn block(op: &str, parent: Option<&str>, next: Option<&str>, inputs: serde_json::Value) -> serde_json::Value {
    json!({"opcode": op, "next": next, "parent": parent, "inputs": inputs, "fields": {}, "shadow": false,
           "topLevel": parent.is_none(), "x": 0, "y": 0})
}

/// A sprite whose green flag runs `first` (fed the stage variable `v`, saved without a value)
/// and then says "after".
fn project(first: &str, slot: &str) -> Arc<clowder_vm::Project> {
    project_with(first, slot, json!(["v"]))
}

/// [`project`] with the variable saved as `saved`.
fn project_with(first: &str, slot: &str, saved: serde_json::Value) -> Arc<clowder_vm::Project> {
    let v = json!([3, [12, "v", "v1"], [10, "x"]]);
    let blocks = json!({
        "f": block("event_whenflagclicked", None, Some("a"), json!({})),
        "a": block(first, Some("f"), Some("b"), json!({slot: v})),
        "b": block("looks_think", Some("a"), None, json!({"MESSAGE": [1, [10, "after"]]})),
    });
    let text = common::stage_and_sprite(json!({"variables": {"v1": saved}}), json!({"blocks": blocks}));
    Arc::new(load(text.as_bytes(), "undefined.json", &LoadLimits::default()).expect("the project loads"))
}

#[test]
fn a_variable_saved_without_a_value_is_undefined() {
    let mut vm = Vm::new(project("looks_say", "MESSAGE"), VmOptions { seed: 1, ..VmOptions::default() });
    let stage = vm.stage_id();
    assert!(matches!(vm.variable(stage, "v"), Some(Value::Undefined)));
    vm.green_flag();
    vm.step();
    let s = vm.find_target("S", 0).expect("the sprite");
    assert_eq!(vm.bubble(s), Some((true, "after")), "say then think ran");
    assert_eq!(vm.last_step_error(), None);
}

#[test]
fn switching_to_an_undefined_costume_or_backdrop_throws_every_step() {
    for (op, slot, site) in [
        ("looks_switchcostumeto", "COSTUME", "_setCostume"),
        ("looks_switchbackdropto", "BACKDROP", "_setBackdrop"),
        ("looks_switchbackdroptoandwait", "BACKDROP", "_setBackdrop"),
    ] {
        let mut vm = Vm::new(project(op, slot), VmOptions { seed: 1, ..VmOptions::default() });
        vm.green_flag();
        for _ in 0..3 {
            vm.step();
            let error = vm.last_step_error().unwrap_or_default();
            assert!(
                error.starts_with("TypeError: Cannot read properties of undefined (reading 'toString')")
                    && error.contains(site),
                "{op}: {error:?}"
            );
            let s = vm.find_target("S", 0).expect("the sprite");
            assert_eq!(vm.bubble(s), None, "{op}: the thread never got past the block");
            assert_eq!(vm.live_threads(), 1, "{op}: the thread stays on the block");
        }
    }
}

#[test]
fn setting_the_speech_language_to_anything_but_a_string_throws() {
    for (saved, error) in [
        (json!(["v"]), "TypeError: Cannot read properties of undefined (reading 'toLowerCase')"),
        (json!(["v", 7]), "TypeError: locale.toLowerCase is not a function"),
        (json!(["v", true]), "TypeError: locale.toLowerCase is not a function"),
        (json!(["v", "fr"]), ""),
    ] {
        let mut vm = Vm::new(
            project_with("text2speech_setLanguage", "LANGUAGE", saved.clone()),
            VmOptions { seed: 1, ..VmOptions::default() },
        );
        vm.green_flag();
        vm.step();
        let got = vm.last_step_error().unwrap_or_default();
        assert!(got.starts_with(error) && (error.is_empty() == got.is_empty()), "{saved}: {got:?}");
        assert!(error.is_empty() || got.contains("setCurrentLanguage"), "{saved}: {got:?}");
    }
}
