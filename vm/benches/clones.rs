//! Clone scaling (issue 16, acceptance 4): the cost of a step against the number of clones
//! when every clone asks `touching (its own sprite)?` and `touching color red?` every frame.
//!
//!   cargo bench -p clowder-vm --bench clones [-- --steps N]
//!
//! The project is built here (a ball costume, a white backdrop with red bands; no corpus
//! needed): the green flag creates N − 1 clones of the ball, then every instance goes to a
//! random position and, forever, moves, bounces off the edge, turns when it touches another
//! ball and turns back when it touches red. After N + 30 warm-up steps the next `--steps`
//! steps (default 300) are timed. "Near pairs" counts, per step, the pairs of balls whose
//! boxes overlap (the drawables that are actually near each other): the cost per step should
//! grow with the number of balls plus near pairs, not with the square of the number of balls.
//!
//! Timings are wall-clock and only meaningful side by side within one run.

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use clowder_vm::{LoadLimits, Profile, Vm, VmOptions};
use serde_json::{Value, json};

/// Ball costume side in texels (resolution 2: half that in stage units).
const BALL: u32 = 24;

fn png(w: u32, h: u32, f: impl Fn(u32, u32) -> [u8; 4]) -> Vec<u8> {
    let img = image::RgbaImage::from_fn(w, h, |x, y| image::Rgba(f(x, y)));
    let mut out = Vec::new();
    // A buffer write cannot fail short of memory.
    img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).expect("PNG encoding");
    out
}

/// The asset id of costume `name` (scratch-vm's schema wants 32 hex digits): the name in hex.
fn asset_id(name: &str) -> String {
    let hex: String = name.bytes().map(|b| format!("{b:02x}")).collect();
    format!("{hex:0<32}")
}

fn costume(name: &str, w: u32, h: u32) -> Value {
    json!({"name": name, "dataFormat": "png", "assetId": asset_id(name), "md5ext": format!("{}.png", asset_id(name)),
           "rotationCenterX": w / 2, "rotationCenterY": h / 2, "bitmapResolution": 2})
}

/// Blocks as `id → block`; ids are assigned in order.
struct Blocks(serde_json::Map<String, Value>);

impl Blocks {
    fn add(&mut self, opcode: &str, inputs: Value, fields: Value, top: bool) -> String {
        let id = format!("b{}", self.0.len());
        self.0.insert(
            id.clone(),
            json!({"opcode": opcode, "next": null, "parent": null, "inputs": inputs, "fields": fields,
                   "shadow": false, "topLevel": top, "x": 0, "y": 0}),
        );
        id
    }

    fn shadow(&mut self, opcode: &str, fields: Value) -> String {
        let id = self.add(opcode, json!({}), fields, false);
        if let Some(b) = self.0.get_mut(&id) {
            b["shadow"] = json!(true);
        }
        id
    }

    /// Links `ids` into a stack under `parent` (its `next` or a substack input).
    fn chain(&mut self, ids: &[String]) {
        for w in ids.windows(2) {
            if let Some(b) = self.0.get_mut(&w[0]) {
                b["next"] = json!(w[1]);
            }
            if let Some(b) = self.0.get_mut(&w[1]) {
                b["parent"] = json!(w[0]);
            }
        }
    }

    fn num(v: f64) -> Value {
        json!([1, [4, v.to_string()]])
    }
}

fn project(n: u32) -> Vec<u8> {
    let mut b = Blocks(serde_json::Map::new());
    // when flag clicked: repeat n-1 { create clone of myself }; broadcast go
    let flag = b.add("event_whenflagclicked", json!({}), json!({}), true);
    let menu = b.shadow("control_create_clone_of_menu", json!({"CLONE_OPTION": ["_myself_", null]}));
    let clone = b.add("control_create_clone_of", json!({"CLONE_OPTION": [1, menu]}), json!({}), false);
    let rep = b.add(
        "control_repeat",
        json!({"TIMES": Blocks::num((n - 1) as f64), "SUBSTACK": [2, clone]}),
        json!({}),
        false,
    );
    let go = b.add("event_broadcast", json!({"BROADCAST_INPUT": [1, [11, "go", "go"]]}), json!({}), false);
    b.chain(&[flag, rep, go]);
    // when I receive go: go to random position; point in direction (pick random); forever {...}
    let recv = b.add("event_whenbroadcastreceived", json!({}), json!({"BROADCAST_OPTION": ["go", "go"]}), true);
    let to = b.shadow("motion_goto_menu", json!({"TO": ["_random_", null]}));
    let goto = b.add("motion_goto", json!({"TO": [1, to]}), json!({}), false);
    let rnd = b.add("operator_random", json!({"FROM": Blocks::num(1.0), "TO": Blocks::num(360.0)}), json!({}), false);
    let point = b.add("motion_pointindirection", json!({"DIRECTION": [3, rnd, [8, "90"]]}), json!({}), false);
    let mv = b.add("motion_movesteps", json!({"STEPS": Blocks::num(4.0)}), json!({}), false);
    let bounce = b.add("motion_ifonedgebounce", json!({}), json!({}), false);
    let tmenu = b.shadow("sensing_touchingobjectmenu", json!({"TOUCHINGOBJECTMENU": ["Ball", null]}));
    let touching = b.add("sensing_touchingobject", json!({"TOUCHINGOBJECTMENU": [1, tmenu]}), json!({}), false);
    let right = b.add("motion_turnright", json!({"DEGREES": Blocks::num(15.0)}), json!({}), false);
    let if1 = b.add("control_if", json!({"CONDITION": [2, touching], "SUBSTACK": [2, right]}), json!({}), false);
    let red = b.add("sensing_touchingcolor", json!({"COLOR": [1, [9, "#ff0000"]]}), json!({}), false);
    let left = b.add("motion_turnleft", json!({"DEGREES": Blocks::num(15.0)}), json!({}), false);
    let if2 = b.add("control_if", json!({"CONDITION": [2, red], "SUBSTACK": [2, left]}), json!({}), false);
    b.chain(&[mv.clone(), bounce, if1, if2]);
    let forever = b.add("control_forever", json!({"SUBSTACK": [2, mv]}), json!({}), false);
    b.chain(&[recv, goto, point, forever]);
    // Parents of inputs (the loader wants a forest).
    let ids: Vec<String> = b.0.keys().cloned().collect();
    for id in ids {
        let inputs = b.0.get(&id).map(|v| v["inputs"].clone()).unwrap_or(Value::Null);
        if let Value::Object(m) = inputs {
            for v in m.values() {
                if let Some(child) = v.get(1).and_then(Value::as_str)
                    && let Some(c) = b.0.get_mut(child)
                {
                    c["parent"] = json!(id);
                }
            }
        }
    }
    let stage = json!({"isStage": true, "name": "Stage", "variables": {}, "lists": {}, "broadcasts": {"go": "go"},
        "blocks": {}, "comments": {}, "currentCostume": 0, "costumes": [costume("backdrop", 960, 720)], "sounds": [],
        "volume": 100, "layerOrder": 0, "tempo": 60, "videoTransparency": 50, "videoState": "on",
        "textToSpeechLanguage": null});
    let ball = json!({"isStage": false, "name": "Ball", "variables": {}, "lists": {}, "broadcasts": {},
        "blocks": Value::Object(b.0), "comments": {}, "currentCostume": 0, "costumes": [costume("ball", BALL, BALL)],
        "sounds": [], "volume": 100, "layerOrder": 1, "visible": true, "x": 0, "y": 0, "size": 100,
        "direction": 90, "draggable": false, "rotationStyle": "all around"});
    let pj = json!({"targets": [stage, ball], "monitors": [], "extensions": [], "meta": {"semver": "3.0.0"}});
    let backdrop = png(960, 720, |_, y| if (330..360).contains(&y) || y > 690 { [255, 0, 0, 255] } else { [255; 4] });
    let r = BALL as f64 / 2.0;
    let ball_png = png(BALL, BALL, |x, y| {
        let (dx, dy) = (x as f64 + 0.5 - r, y as f64 + 0.5 - r);
        if dx * dx + dy * dy <= r * r { [30, 90, 200, 255] } else { [0; 4] }
    });
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    for (name, data) in [
        ("project.json".to_string(), serde_json::to_vec(&pj).unwrap_or_default()),
        (format!("{}.png", asset_id("backdrop")), backdrop),
        (format!("{}.png", asset_id("ball")), ball_png),
    ] {
        // Writing to memory cannot fail short of memory.
        zip.start_file(name, opts).expect("zip entry");
        zip.write_all(&data).expect("zip write");
    }
    zip.finish().expect("zip").into_inner()
}

/// Pairs of balls whose boxes overlap now.
fn near_pairs(vm: &Vm) -> u64 {
    let pos: Vec<(f64, f64)> =
        vm.targets_in_execution_order().filter(|(_, t)| !t.is_stage).map(|(_, t)| (t.x, t.y)).collect();
    let side = BALL as f64 / 2.0 + 1.0;
    let mut n = 0;
    for (i, a) in pos.iter().enumerate() {
        for b in &pos[i + 1..] {
            if (a.0 - b.0).abs() <= side && (a.1 - b.1).abs() <= side {
                n += 1;
            }
        }
    }
    n
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let steps: u64 = args
        .iter()
        .position(|a| a == "--steps")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    println!("| balls | µs per step | µs per ball and step | near pairs per step | queries per step |");
    println!("|---:|---:|---:|---:|---:|");
    let mut base = None;
    for n in [1u32, 10, 100, 300] {
        let bytes = project(n);
        let project = match clowder_vm::project::load(&bytes, "clones.sb3", &LoadLimits::default()) {
            Ok(p) => Arc::new(p),
            Err(e) => {
                eprintln!("the benchmark's own project does not load: {e}");
                return;
            }
        };
        let mut vm = Vm::new(project, VmOptions { seed: 1, profile: Profile::Default, ..VmOptions::default() });
        assert_eq!(vm.geometry_mode(), "exact");
        vm.green_flag();
        for _ in 0..n as u64 + 30 {
            vm.step();
        }
        let balls = vm.targets_in_execution_order().filter(|(_, t)| !t.is_stage).count();
        assert_eq!(balls, n as usize, "all clones exist");
        let mut near = 0;
        let mut nanos = 0u128;
        for _ in 0..steps {
            let t = Instant::now();
            vm.step();
            nanos += t.elapsed().as_nanos();
            near += near_pairs(&vm);
        }
        let per_step = nanos as f64 / steps as f64 / 1000.0;
        let per_ball = per_step / n as f64;
        base.get_or_insert(per_ball);
        println!("| {n} | {per_step:.1} | {per_ball:.2} | {:.1} | {} |", near as f64 / steps as f64, 2 * n);
    }
}
