//! Which targets have a bubble state, the difference between Whisker's `sayText` `""` and
//! `null` (engine `+sem52`).
//!
//! With a renderer, looks' `show` and `hide` re-render the bubble, and `_renderBubble` reads
//! the state through `_getBubbleState`, which gives a target without one a fresh, empty state.
//! Read in the real Whisker (a probe on a hand-made project of this shape): after the green
//! flag every original says `""` (the stop-all reset gives each one a state); a clone says
//! `null` until it runs `show` or `hide`, and `""` from then on, hidden or not. scratch-vm
//! without a renderer (the `default` profile's oracle) returns before it reads the state.

use std::sync::Arc;

use clowder_vm::project::{LoadLimits, load};
use clowder_vm::{Profile, Vm, VmOptions};

/// A green-flag script `create clone of myself`, and, if `on_clone` is given, a
/// `when I start as a clone` script of that one block.
fn cloner(on_clone: Option<&str>) -> serde_json::Value {
    let mut blocks = serde_json::json!({
        "f": {"opcode": "event_whenflagclicked", "next": "k", "parent": null, "inputs": {}, "fields": {},
              "shadow": false, "topLevel": true, "x": 0, "y": 0},
        "k": {"opcode": "control_create_clone_of", "next": null, "parent": "f",
              "inputs": {"CLONE_OPTION": [1, "m"]}, "fields": {}, "shadow": false, "topLevel": false},
        "m": {"opcode": "control_create_clone_of_menu", "next": null, "parent": "k", "inputs": {},
              "fields": {"CLONE_OPTION": ["_myself_", null]}, "shadow": true, "topLevel": false}
    });
    if let Some(op) = on_clone {
        blocks["h"] = serde_json::json!({"opcode": "control_start_as_clone", "next": "o", "parent": null,
            "inputs": {}, "fields": {}, "shadow": false, "topLevel": true, "x": 0, "y": 200});
        blocks["o"] = serde_json::json!({"opcode": op, "next": null, "parent": "h", "inputs": {}, "fields": {},
            "shadow": false, "topLevel": false});
    }
    blocks
}

fn project() -> Arc<clowder_vm::Project> {
    let costume = serde_json::json!([{"name": "c", "assetId": "63000000000000000000000000000000", "md5ext": "63000000000000000000000000000000.svg", "dataFormat": "svg",
                                      "rotationCenterX": 10, "rotationCenterY": 10}]);
    let sprite = |name: &str, layer: u32, visible: bool, on_clone: Option<&str>| {
        serde_json::json!({"isStage": false, "name": name, "variables": {}, "lists": {}, "broadcasts": {},
            "blocks": cloner(on_clone), "currentCostume": 0, "costumes": costume, "sounds": [],
            "layerOrder": layer, "volume": 100, "visible": visible, "x": 0, "y": 0, "size": 100,
            "direction": 90, "draggable": false, "rotationStyle": "all around"})
    };
    let json = serde_json::json!({
        "targets": [
            {"isStage": true, "name": "Stage", "variables": {}, "lists": {}, "broadcasts": {}, "blocks": {},
             "currentCostume": 0, "costumes": costume, "sounds": [], "layerOrder": 0, "volume": 100},
            sprite("Shower", 1, true, Some("looks_show")),
            sprite("Hider", 2, true, Some("looks_hide")),
            sprite("Plain", 3, true, None),
            sprite("HiddenShower", 4, false, Some("looks_show")),
        ],
        "monitors": [], "extensions": [], "meta": {"semver": "3.0.0"}
    });
    Arc::new(load(json.to_string().as_bytes(), "bubble_state.json", &LoadLimits::default()).expect("the project loads"))
}

/// Each sprite's (original, first clone) bubble text after the green flag and three steps;
/// `None` where the target has no bubble state (Whisker's `sayText` `null`).
fn say_texts(profile: Profile) -> Vec<(Option<String>, Option<String>)> {
    let mut vm = Vm::new(project(), VmOptions { profile, seed: 1, ..VmOptions::default() });
    vm.green_flag();
    for _ in 0..3 {
        vm.step();
    }
    let text = |name: &str, clone: u32| {
        let id = vm.find_target(name, clone).unwrap_or_else(|| panic!("{name} {clone} exists"));
        vm.bubble_state(id).map(|(_, t)| t.to_string())
    };
    ["Shower", "Hider", "Plain", "HiddenShower"].iter().map(|n| (text(n, 0), text(n, 1))).collect()
}

#[test]
fn whisker_clones_that_show_or_hide_say_the_empty_text() {
    let empty = || Some(String::new());
    assert_eq!(
        say_texts(Profile::Whisker),
        vec![(empty(), empty()), (empty(), empty()), (empty(), None), (empty(), empty())],
        "as the real Whisker read them: Shower, Hider, Plain, HiddenShower"
    );
}

#[test]
fn default_clones_keep_no_bubble_state() {
    let empty = || Some(String::new());
    assert_eq!(say_texts(Profile::Default), vec![(empty(), None); 4]);
}
