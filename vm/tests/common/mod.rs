//! Helpers shared by the integration tests: the corpora, the oracle's inputs, hand-made
//! projects.

// Each test crate that includes this module uses some of the helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use clowder_vm::Vm;

/// The corpora folder: `$CLOWDER_CORPORA`, else `../shared/corpora` beside the repository;
/// `None` when it is absent (the tests that need it SKIP).
pub fn corpora() -> Option<PathBuf> {
    let root = std::env::var_os("CLOWDER_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora"));
    root.is_dir().then_some(root)
}

/// Prints `SKIP: what` where the test run shows it.
pub fn skip_note(what: &str) {
    // Straight to stderr: libtest captures eprintln!, and a SKIP must show.
    use std::io::Write as _;
    let _ = std::io::stderr().write_fmt(format_args!("SKIP: {what}\n"));
}

/// The oracle's generic input script (`test/sanity.py`), over 300 steps.
pub fn generic(vm: &mut Vm, k: u64) {
    match k {
        0 => vm.green_flag(),
        30 => vm.key_down("space"),
        36 => vm.key_up("space"),
        45 => vm.answer_text("42"),
        60 => vm.key_down("right arrow"),
        90 => vm.key_up("right arrow"),
        100 => vm.key_down("left arrow"),
        130 => vm.key_up("left arrow"),
        140 => vm.key_down("up arrow"),
        150 => vm.key_up("up arrow"),
        180 => vm.mouse_move(100.0, -50.0),
        182 => vm.mouse_button(true),
        184 => vm.mouse_button(false),
        190 => vm.click_stage(),
        230 => vm.answer_text("hello"),
        _ => {}
    }
}

/// An asset id for a hand-made file's asset `name`: scratch-vm's schema wants 32 hex digits
/// (`md5ext` is this, a dot and the extension). The name's bytes in hex, padded with zeros
/// (distinct names of up to 16 bytes give distinct ids).
pub fn asset_id(name: &str) -> String {
    let mut hex: String = name.bytes().map(|b| format!("{b:02x}")).collect();
    hex.truncate(32);
    format!("{hex:0<32}")
}

/// A project of the stage and one sprite, each the given JSON object laid over the defaults
/// (no variables, lists, broadcasts or blocks; one costume; the sprite `S` at the centre),
/// for tests that build their project by hand.
pub fn stage_and_sprite(stage: serde_json::Value, sprite: serde_json::Value) -> String {
    use serde_json::json;
    let costume = json!([{"name": "c", "assetId": "bcf454acf82e4504149f7ffe07081dbc", "dataFormat": "svg",
                          "rotationCenterX": 0, "rotationCenterY": 0}]);
    let over = |mut base: serde_json::Value, with: serde_json::Value| {
        if let (Some(b), serde_json::Value::Object(w)) = (base.as_object_mut(), with) {
            b.extend(w);
        }
        base
    };
    let empty = json!({"variables": {}, "lists": {}, "broadcasts": {}, "blocks": {}, "costumes": costume,
                       "sounds": []});
    let stage = over(over(empty.clone(), json!({"isStage": true, "name": "Stage", "layerOrder": 0})), stage);
    let sprite = over(
        over(
            empty,
            json!({"isStage": false, "name": "S", "layerOrder": 1, "x": 0, "y": 0, "size": 100,
                           "direction": 90, "visible": true}),
        ),
        sprite,
    );
    json!({"targets": [stage, sprite], "meta": {"semver": "3.0.0"}}).to_string()
}
