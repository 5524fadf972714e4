//! Projects with many of one thing (scripts, costumes, undeclared variables): above a size,
//! the VM finds them through indexes instead of scans, so that a large file costs linear time
//! (`scripts/load-scaling.py` measures the growth and, with `--oracle`, checks these shapes
//! against scratch-vm). Each test runs a shape below and above that size and asks the same
//! rule of both.

mod common;

use std::sync::Arc;

use clowder_vm::project::{LoadLimits, load};
use clowder_vm::{Value, Vm, VmOptions};
use serde_json::{Value as Json, json};

fn block(op: &str, parent: Option<&str>, next: Option<&str>, inputs: Json, fields: Json) -> Json {
    json!({"opcode": op, "next": next, "parent": parent, "inputs": inputs, "fields": fields, "shadow": false,
           "topLevel": parent.is_none(), "x": 0, "y": 0})
}

fn num(v: f64) -> Json {
    json!([1, [4, v.to_string()]])
}

fn vm_of(stage: Json, sprite: Json) -> Vm {
    let text = common::stage_and_sprite(stage, sprite);
    let project = load(text.as_bytes(), "large.json", &LoadLimits::default()).expect("the project loads");
    Vm::new(Arc::new(project), VmOptions { seed: 1, ..VmOptions::default() })
}

/// `n` scripts under `hat` (with `fields`): change x by 1, wait 0.1 s, change y by 1.
fn waiting_scripts(n: usize, hat: &str, fields: Json) -> Json {
    let mut blocks = serde_json::Map::new();
    for i in 0..n {
        let id = |s: &str| format!("{s}{i}");
        blocks.insert(id("h"), block(hat, None, Some(&id("x")), json!({}), fields.clone()));
        blocks.insert(
            id("x"),
            block("motion_changexby", Some(&id("h")), Some(&id("w")), json!({"DX": num(1.0)}), json!({})),
        );
        blocks.insert(
            id("w"),
            block("control_wait", Some(&id("x")), Some(&id("y")), json!({"DURATION": num(0.1)}), json!({})),
        );
        blocks.insert(id("y"), block("motion_changeyby", Some(&id("w")), None, json!({"DY": num(1.0)}), json!({})));
    }
    Json::Object(blocks)
}

fn position(vm: &Vm) -> (f64, f64) {
    let s = vm.find_target("S", 0).expect("the sprite");
    let t = vm.target(s).expect("the sprite");
    (t.x, t.y)
}

#[test]
fn a_broadcast_restarts_each_running_receiver_however_many() {
    // 100 receivers meet 100 threads on the second broadcast: the indexed path.
    for n in [5, 100] {
        let blocks = waiting_scripts(n, "event_whenbroadcastreceived", json!({"BROADCAST_OPTION": ["m", "b"]}));
        let mut vm = vm_of(json!({"broadcasts": {"b": "m"}}), json!({"blocks": blocks}));
        vm.broadcast("m");
        vm.step();
        vm.broadcast("m");
        for _ in 0..10 {
            vm.step();
        }
        // Each thread was restarted while waiting: x counted twice, y once.
        assert_eq!(position(&vm), (2.0 * n as f64, n as f64), "{n} receivers");
    }
}

#[test]
fn a_key_hat_leaves_each_running_script_alone_however_many() {
    for n in [5, 100] {
        let blocks = waiting_scripts(n, "event_whenkeypressed", json!({"KEY_OPTION": ["space", null]}));
        let mut vm = vm_of(json!({}), json!({"blocks": blocks}));
        vm.key_down("space");
        vm.step();
        vm.key_down("space");
        for _ in 0..10 {
            vm.step();
        }
        // A second press while the scripts wait starts nothing.
        assert_eq!(position(&vm), (n as f64, n as f64), "{n} scripts");
    }
}

#[test]
fn costumes_of_one_name_are_renamed_and_found_by_name_however_many() {
    for n in [5usize, 40] {
        let costumes: Vec<Json> = (0..n)
            .map(|i| {
                json!({"name": "c", "assetId": common::asset_id("c"), "dataFormat": "svg", "rotationCenterX": i,
                       "rotationCenterY": 0})
            })
            .collect();
        let last = format!("c{n}");
        let blocks = json!({
            "f": block("event_whenflagclicked", None, Some("s"), json!({}), json!({})),
            "s": block("looks_switchcostumeto", Some("f"), None, json!({"COSTUME": [1, "m"]}), json!({})),
            "m": {"opcode": "looks_costume", "next": null, "parent": "s", "inputs": {},
                  "fields": {"COSTUME": [last, null]}, "shadow": true, "topLevel": false},
        });
        let mut vm = vm_of(json!({}), json!({"blocks": blocks, "costumes": costumes}));
        vm.green_flag();
        vm.step();
        let s = vm.find_target("S", 0).expect("the sprite");
        // Names c, c2, c3, …: the last is c{n}, at index n - 1.
        assert_eq!(vm.target(s).expect("the sprite").costume, n as i64 - 1, "{n} costumes");
    }
}

#[test]
fn undeclared_variables_are_created_once_and_found_by_id_or_name_however_many() {
    for n in [3usize, 60] {
        let mut blocks = serde_json::Map::new();
        let ids: Vec<String> = (0..2 * n).map(|i| format!("b{i}")).collect();
        blocks.insert("f".into(), block("event_whenflagclicked", None, Some(&ids[0]), json!({}), json!({})));
        for i in 0..2 * n {
            // Each name is referred to twice, by two different undeclared ids: the second
            // reference finds the variable the first created, by name.
            let (name, id) = (format!("u{}", i % n), format!("id{i}"));
            let parent = if i == 0 { "f".to_string() } else { ids[i - 1].clone() };
            blocks.insert(
                ids[i].clone(),
                block(
                    "data_changevariableby",
                    Some(&parent),
                    ids.get(i + 1).map(String::as_str),
                    json!({"VALUE": num(1.0)}),
                    json!({"VARIABLE": [name, id]}),
                ),
            );
        }
        let mut vm = vm_of(json!({}), json!({"blocks": Json::Object(blocks)}));
        vm.green_flag();
        vm.step();
        let s = vm.find_target("S", 0).expect("the sprite");
        // Created at run time: listed with the variables, declared ones first.
        let vars = vm.scalar_variables(s);
        assert_eq!(vars.len(), n, "one variable per name, of {n}");
        for (i, (name, value)) in vars.iter().enumerate() {
            assert_eq!(*name, format!("u{i}"));
            assert!(matches!(value, Value::Num(x) if *x == 2.0), "u{i} of {n}: {value:?}");
        }
    }
}
