//! Building small Scratch projects in code, for tests (ours and other crates').
//!
//! ```
//! use clowder_testgen::testkit::{Arg, ProjectBuilder};
//! let mut p = ProjectBuilder::new();
//! let cat = p.sprite("Cat");
//! let hat = p.t(cat).when_flag();
//! let say = p.t(cat).say(Arg::t("Hi"));
//! p.t(cat).script(hat, &[say]);
//! let project = p.load();
//! assert_eq!(project.targets.len(), 2);
//! ```

use serde_json::{Map, Value, json};

/// The asset id of every costume the builder writes (scratch-vm's schema wants 32 hex digits).
pub const COSTUME_ASSET: &str = "00000000000000000000000000000000";
/// The file of every costume the builder writes (`md5ext`): no file by default, a test that
/// wants a costume's shape stores one under this name.
pub const COSTUME_FILE: &str = "00000000000000000000000000000000.svg";

/// An input argument: a literal or a reporter block (by id).
#[derive(Debug, Clone)]
pub enum Arg {
    /// A number literal.
    Num(f64),
    /// A text literal.
    Text(String),
    /// A reporter or boolean block id.
    Block(String),
}

impl Arg {
    /// A number literal.
    pub fn n(v: f64) -> Self {
        Arg::Num(v)
    }
    /// A text literal.
    pub fn t(s: &str) -> Self {
        Arg::Text(s.to_string())
    }
    /// A reporter block.
    pub fn b(id: &str) -> Self {
        Arg::Block(id.to_string())
    }
}

/// One sprite or the stage under construction.
#[derive(Debug, Clone)]
pub struct TargetBuilder {
    name: String,
    stage: bool,
    prefix: String,
    n: u32,
    blocks: Map<String, Value>,
    /// Position.
    pub xy: (f64, f64),
    /// Visibility.
    pub visible: bool,
    costumes: Vec<String>,
    variables: Vec<String>,
    layer: i64,
}

/// A project under construction; the stage is target 0.
#[derive(Debug, Clone)]
pub struct ProjectBuilder {
    targets: Vec<TargetBuilder>,
    broadcasts: Vec<String>,
}

impl Default for ProjectBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ProjectBuilder {
    /// A project with an empty stage.
    pub fn new() -> Self {
        let mut p = Self { targets: Vec::new(), broadcasts: Vec::new() };
        p.add_target("Stage", true);
        p
    }

    fn add_target(&mut self, name: &str, stage: bool) -> usize {
        let ix = self.targets.len();
        self.targets.push(TargetBuilder {
            name: name.to_string(),
            stage,
            prefix: format!("t{ix}b"),
            n: 0,
            blocks: Map::new(),
            xy: (0.0, 0.0),
            visible: true,
            costumes: vec![if stage { "backdrop1".into() } else { "costume1".into() }],
            variables: Vec::new(),
            layer: ix as i64,
        });
        ix
    }

    /// Adds a sprite; returns its index for [`ProjectBuilder::t`].
    pub fn sprite(&mut self, name: &str) -> usize {
        self.add_target(name, false)
    }

    /// The stage's index (0).
    pub fn stage(&self) -> usize {
        0
    }

    /// The target at `ix`.
    pub fn t(&mut self, ix: usize) -> &mut TargetBuilder {
        &mut self.targets[ix]
    }

    /// Declares a global variable (on the stage) with initial value 0.
    pub fn global_var(&mut self, name: &str) {
        if !self.targets[0].variables.iter().any(|v| v == name) {
            self.targets[0].variables.push(name.to_string());
        }
    }

    /// Adds a backdrop to the stage.
    pub fn backdrop(&mut self, name: &str) {
        self.targets[0].costumes.push(name.to_string());
    }

    /// The project.json value.
    pub fn json(&self) -> Value {
        let mut targets = Vec::new();
        let mut broadcasts = Map::new();
        for b in &self.broadcasts {
            broadcasts.insert(format!("m_{b}"), json!(b));
        }
        for t in &self.targets {
            let mut vars = Map::new();
            for v in &t.variables {
                vars.insert(format!("v_{v}"), json!([v, 0]));
            }
            let costumes: Vec<Value> = t
                .costumes
                .iter()
                .map(|c| {
                    json!({"assetId": COSTUME_ASSET, "dataFormat": "svg", "md5ext": COSTUME_FILE, "name": c,
                           "rotationCenterX": 0, "rotationCenterY": 0})
                })
                .collect();
            let mut o = json!({
                "isStage": t.stage, "name": t.name, "variables": vars, "lists": {},
                "broadcasts": if t.stage { Value::Object(broadcasts.clone()) } else { json!({}) },
                "blocks": Value::Object(t.blocks.clone()), "comments": {}, "currentCostume": 0,
                "costumes": costumes, "sounds": [], "volume": 100, "layerOrder": t.layer,
            });
            if !t.stage {
                let m = o.as_object_mut().expect("object");
                m.insert("visible".into(), json!(t.visible));
                m.insert("x".into(), json!(t.xy.0));
                m.insert("y".into(), json!(t.xy.1));
                m.insert("size".into(), json!(100));
                m.insert("direction".into(), json!(90));
                m.insert("draggable".into(), json!(false));
                m.insert("rotationStyle".into(), json!("all around"));
            }
            targets.push(o);
        }
        json!({"targets": targets, "monitors": [], "extensions": [], "meta": {"semver": "3.0.0"}})
    }

    /// The project.json bytes.
    pub fn bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.json()).unwrap_or_default()
    }

    /// Loads the project (panics on a builder bug: test code only).
    pub fn load(&self) -> clowder_vm::Project {
        clowder_vm::project::load(&self.bytes(), "testkit.json", &clowder_vm::LoadLimits::default())
            .expect("testkit project loads")
    }

    /// Registers a broadcast message name (also done by the broadcast helpers).
    pub fn message(&mut self, name: &str) {
        if !self.broadcasts.iter().any(|b| b == name) {
            self.broadcasts.push(name.to_string());
        }
    }
}

impl TargetBuilder {
    fn id(&mut self) -> String {
        self.n += 1;
        format!("{}{}", self.prefix, self.n)
    }

    /// Adds a raw block; returns its id.
    pub fn block(&mut self, opcode: &str, inputs: Value, fields: Value) -> String {
        let id = self.id();
        self.blocks.insert(
            id.clone(),
            json!({"opcode": opcode, "next": null, "parent": null, "inputs": inputs, "fields": fields,
                   "shadow": false, "topLevel": false}),
        );
        id
    }

    fn set(&mut self, id: &str, key: &str, v: Value) {
        if let Some(Value::Object(b)) = self.blocks.get_mut(id) {
            b.insert(key.to_string(), v);
        }
    }

    fn input(&mut self, owner: &str, name: &str, v: Value) {
        if let Some(Value::Object(b)) = self.blocks.get_mut(owner)
            && let Some(Value::Object(inputs)) = b.get_mut("inputs")
        {
            inputs.insert(name.to_string(), v);
        }
    }

    fn arg(&mut self, owner: &str, name: &str, a: Arg) {
        let v = match a {
            Arg::Num(n) => json!([1, [4, clowder_vm::value::number_to_js_string(n)]]),
            Arg::Text(s) => json!([1, [10, s]]),
            Arg::Block(id) => {
                self.set(&id, "parent", json!(owner));
                json!([3, id, [10, ""]])
            }
        };
        self.input(owner, name, v);
    }

    fn boolean(&mut self, owner: &str, name: &str, id: &str) {
        self.set(id, "parent", json!(owner));
        self.input(owner, name, json!([2, id]));
    }

    fn menu(&mut self, owner: &str, input: &str, opcode: &str, field: &str, value: &str) {
        let id = self.id();
        self.blocks.insert(
            id.clone(),
            json!({"opcode": opcode, "next": null, "parent": owner, "inputs": {},
                   "fields": {field: [value, null]}, "shadow": true, "topLevel": false}),
        );
        self.input(owner, input, json!([1, id]));
    }

    /// Makes `hat` a top-level script followed by `body`.
    pub fn script(&mut self, hat: String, body: &[String]) -> String {
        self.set(&hat, "topLevel", json!(true));
        self.set(&hat, "x", json!(0));
        self.set(&hat, "y", json!(0));
        let mut prev = hat.clone();
        for b in body {
            self.set(&prev, "next", json!(b));
            self.set(b, "parent", json!(prev));
            prev = b.clone();
        }
        hat
    }

    fn sub(&mut self, owner: &str, name: &str, body: &[String]) {
        let Some(first) = body.first() else { return };
        self.input(owner, name, json!([2, first]));
        self.set(first, "parent", json!(owner));
        for w in body.windows(2) {
            self.set(&w[0], "next", json!(w[1]));
            self.set(&w[1], "parent", json!(w[0]));
        }
    }

    // ---------------------------------------------------------------- hats

    /// `when green flag clicked`.
    pub fn when_flag(&mut self) -> String {
        self.block("event_whenflagclicked", json!({}), json!({}))
    }
    /// `when KEY key pressed`.
    pub fn when_key(&mut self, key: &str) -> String {
        self.block("event_whenkeypressed", json!({}), json!({"KEY_OPTION": [key, null]}))
    }
    /// `when [TIMER or LOUDNESS] > VALUE` (edge-activated: VALUE is evaluated every step).
    pub fn when_greater_than(&mut self, menu: &str, value: Arg) -> String {
        let b = self.block("event_whengreaterthan", json!({}), json!({"WHENGREATERTHANMENU": [menu, null]}));
        self.arg(&b, "VALUE", value);
        b
    }
    /// `when this sprite clicked`.
    pub fn when_clicked(&mut self) -> String {
        self.block("event_whenthisspriteclicked", json!({}), json!({}))
    }
    /// `when stage clicked`.
    pub fn when_stage_clicked(&mut self) -> String {
        self.block("event_whenstageclicked", json!({}), json!({}))
    }
    /// `when I receive MSG`.
    pub fn when_receive(&mut self, msg: &str) -> String {
        self.block("event_whenbroadcastreceived", json!({}), json!({"BROADCAST_OPTION": [msg, format!("m_{msg}")]}))
    }
    /// `when backdrop switches to NAME`.
    pub fn when_backdrop(&mut self, name: &str) -> String {
        self.block("event_whenbackdropswitchesto", json!({}), json!({"BACKDROP": [name, null]}))
    }
    /// `when I start as a clone`.
    pub fn when_clone(&mut self) -> String {
        self.block("control_start_as_clone", json!({}), json!({}))
    }
    /// `when loudness > V`.
    pub fn when_loudness_gt(&mut self, v: f64) -> String {
        let h = self.block("event_whengreaterthan", json!({}), json!({"WHENGREATERTHANMENU": ["LOUDNESS", null]}));
        self.arg(&h, "VALUE", Arg::n(v));
        h
    }
    /// `define PROCCODE` (no arguments).
    pub fn define(&mut self, proccode: &str) -> String {
        self.define_with_warp(proccode, false)
    }

    /// `define PROCCODE` (no arguments) run without screen refresh.
    pub fn define_warp(&mut self, proccode: &str) -> String {
        self.define_with_warp(proccode, true)
    }

    fn define_with_warp(&mut self, proccode: &str, warp: bool) -> String {
        let d = self.block("procedures_definition", json!({}), json!({}));
        let proto = self.id();
        self.blocks.insert(
            proto.clone(),
            json!({"opcode": "procedures_prototype", "next": null, "parent": d, "inputs": {}, "fields": {},
                   "shadow": true, "topLevel": false,
                   "mutation": {"tagName": "mutation", "children": [], "proccode": proccode,
                                "argumentids": "[]", "argumentnames": "[]", "argumentdefaults": "[]",
                                "warp": if warp { "true" } else { "false" }}}),
        );
        self.input(&d, "custom_block", json!([1, proto]));
        d
    }

    // ------------------------------------------------------------ statements

    /// `say TEXT`.
    pub fn say(&mut self, a: Arg) -> String {
        let b = self.block("looks_say", json!({}), json!({}));
        self.arg(&b, "MESSAGE", a);
        b
    }
    /// `say TEXT for SECS seconds`.
    pub fn say_for(&mut self, a: Arg, secs: f64) -> String {
        let b = self.block("looks_sayforsecs", json!({}), json!({}));
        self.arg(&b, "MESSAGE", a);
        self.arg(&b, "SECS", Arg::n(secs));
        b
    }
    /// `think TEXT`.
    pub fn think(&mut self, a: Arg) -> String {
        let b = self.block("looks_think", json!({}), json!({}));
        self.arg(&b, "MESSAGE", a);
        b
    }
    /// `think TEXT for SECS seconds`.
    pub fn think_for(&mut self, a: Arg, secs: f64) -> String {
        let b = self.block("looks_thinkforsecs", json!({}), json!({}));
        self.arg(&b, "MESSAGE", a);
        self.arg(&b, "SECS", Arg::n(secs));
        b
    }
    /// `move N steps`.
    pub fn move_steps(&mut self, n: f64) -> String {
        let b = self.block("motion_movesteps", json!({}), json!({}));
        self.arg(&b, "STEPS", Arg::n(n));
        b
    }
    /// `go to x: X y: Y`.
    pub fn goto_xy(&mut self, x: Arg, y: Arg) -> String {
        let b = self.block("motion_gotoxy", json!({}), json!({}));
        self.arg(&b, "X", x);
        self.arg(&b, "Y", y);
        b
    }
    /// `change x by N`.
    pub fn change_x(&mut self, n: Arg) -> String {
        let b = self.block("motion_changexby", json!({}), json!({}));
        self.arg(&b, "DX", n);
        b
    }
    /// `switch costume to NAME`.
    pub fn switch_costume(&mut self, name: &str) -> String {
        let b = self.block("looks_switchcostumeto", json!({}), json!({}));
        self.menu(&b, "COSTUME", "looks_costume", "COSTUME", name);
        b
    }
    /// `switch backdrop to NAME`.
    pub fn switch_backdrop(&mut self, name: &str) -> String {
        let b = self.block("looks_switchbackdropto", json!({}), json!({}));
        self.menu(&b, "BACKDROP", "looks_backdrops", "BACKDROP", name);
        b
    }
    /// `play drum (DRUM) for BEATS beats` (music extension).
    pub fn play_drum(&mut self, drum: &str, beats: f64) -> String {
        let b = self.block("music_playDrumForBeats", json!({}), json!({}));
        self.menu(&b, "DRUM", "music_menu_DRUM", "DRUM", drum);
        self.arg(&b, "BEATS", Arg::n(beats));
        b
    }
    /// `hide`.
    pub fn hide(&mut self) -> String {
        self.block("looks_hide", json!({}), json!({}))
    }
    /// `show`.
    pub fn show(&mut self) -> String {
        self.block("looks_show", json!({}), json!({}))
    }
    /// `wait SECS seconds`.
    pub fn wait(&mut self, secs: f64) -> String {
        let b = self.block("control_wait", json!({}), json!({}));
        self.arg(&b, "DURATION", Arg::n(secs));
        b
    }
    /// `set VAR to V` (global variable).
    pub fn set_var(&mut self, var: &str, v: Arg) -> String {
        let b = self.block("data_setvariableto", json!({}), json!({"VARIABLE": [var, format!("v_{var}")]}));
        self.arg(&b, "VALUE", v);
        b
    }
    /// `change VAR by V` (global variable).
    pub fn change_var(&mut self, var: &str, v: Arg) -> String {
        let b = self.block("data_changevariableby", json!({}), json!({"VARIABLE": [var, format!("v_{var}")]}));
        self.arg(&b, "VALUE", v);
        b
    }
    /// `broadcast MSG`.
    pub fn broadcast(&mut self, msg: &str) -> String {
        let b = self.block("event_broadcast", json!({}), json!({}));
        self.input(&b, "BROADCAST_INPUT", json!([1, [11, msg, format!("m_{msg}")]]));
        b
    }
    /// `broadcast MSG and wait`.
    pub fn broadcast_wait(&mut self, msg: &str) -> String {
        let b = self.block("event_broadcastandwait", json!({}), json!({}));
        self.input(&b, "BROADCAST_INPUT", json!([1, [11, msg, format!("m_{msg}")]]));
        b
    }
    /// `create clone of WHO` (`_myself_` or a sprite name).
    pub fn create_clone(&mut self, who: &str) -> String {
        let b = self.block("control_create_clone_of", json!({}), json!({}));
        self.menu(&b, "CLONE_OPTION", "control_create_clone_of_menu", "CLONE_OPTION", who);
        b
    }
    /// `delete this clone`.
    pub fn delete_clone(&mut self) -> String {
        self.block("control_delete_this_clone", json!({}), json!({}))
    }
    /// `stop OPTION`.
    pub fn stop(&mut self, option: &str) -> String {
        self.block("control_stop", json!({}), json!({"STOP_OPTION": [option, null]}))
    }
    /// Call of a procedure without arguments.
    pub fn call(&mut self, proccode: &str) -> String {
        let b = self.block("procedures_call", json!({}), json!({}));
        self.set(
            &b,
            "mutation",
            json!({"tagName": "mutation", "children": [], "proccode": proccode, "argumentids": "[]", "warp": "false"}),
        );
        b
    }
    /// `ask QUESTION and wait`.
    pub fn ask(&mut self, q: &str) -> String {
        let b = self.block("sensing_askandwait", json!({}), json!({}));
        self.arg(&b, "QUESTION", Arg::t(q));
        b
    }

    // ------------------------------------------------------------ C blocks

    /// `if COND then BODY`.
    pub fn if_(&mut self, cond: &str, body: &[String]) -> String {
        let b = self.block("control_if", json!({}), json!({}));
        self.boolean(&b, "CONDITION", cond);
        self.sub(&b, "SUBSTACK", body);
        b
    }
    /// `if COND then A else B`.
    pub fn if_else(&mut self, cond: &str, then: &[String], els: &[String]) -> String {
        let b = self.block("control_if_else", json!({}), json!({}));
        self.boolean(&b, "CONDITION", cond);
        self.sub(&b, "SUBSTACK", then);
        self.sub(&b, "SUBSTACK2", els);
        b
    }
    /// `repeat N`.
    pub fn repeat(&mut self, times: Arg, body: &[String]) -> String {
        let b = self.block("control_repeat", json!({}), json!({}));
        self.arg(&b, "TIMES", times);
        self.sub(&b, "SUBSTACK", body);
        b
    }
    /// `repeat until COND`.
    pub fn repeat_until(&mut self, cond: &str, body: &[String]) -> String {
        let b = self.block("control_repeat_until", json!({}), json!({}));
        self.boolean(&b, "CONDITION", cond);
        self.sub(&b, "SUBSTACK", body);
        b
    }
    /// `forever`.
    pub fn forever(&mut self, body: &[String]) -> String {
        let b = self.block("control_forever", json!({}), json!({}));
        self.sub(&b, "SUBSTACK", body);
        b
    }
    /// `wait until COND`.
    pub fn wait_until(&mut self, cond: &str) -> String {
        let b = self.block("control_wait_until", json!({}), json!({}));
        self.boolean(&b, "CONDITION", cond);
        b
    }

    // ------------------------------------------------------------ reporters

    /// A global variable reporter.
    pub fn var(&mut self, name: &str) -> String {
        self.block("data_variable", json!({}), json!({"VARIABLE": [name, format!("v_{name}")]}))
    }
    /// `x position`.
    pub fn x_position(&mut self) -> String {
        self.block("motion_xposition", json!({}), json!({}))
    }
    /// `answer`.
    pub fn answer(&mut self) -> String {
        self.block("sensing_answer", json!({}), json!({}))
    }
    /// `mouse x`.
    pub fn mouse_x(&mut self) -> String {
        self.block("sensing_mousex", json!({}), json!({}))
    }
    /// `A > B`.
    pub fn gt(&mut self, a: Arg, b: Arg) -> String {
        self.binop("operator_gt", a, b)
    }
    /// `A < B`.
    pub fn lt(&mut self, a: Arg, b: Arg) -> String {
        self.binop("operator_lt", a, b)
    }
    /// `A = B`.
    pub fn eq(&mut self, a: Arg, b: Arg) -> String {
        self.binop("operator_equals", a, b)
    }
    fn binop(&mut self, op: &str, a: Arg, b: Arg) -> String {
        let r = self.block(op, json!({}), json!({}));
        self.arg(&r, "OPERAND1", a);
        self.arg(&r, "OPERAND2", b);
        r
    }
    /// `A and B` (boolean blocks).
    pub fn and(&mut self, a: &str, b: &str) -> String {
        let r = self.block("operator_and", json!({}), json!({}));
        self.boolean(&r, "OPERAND1", a);
        self.boolean(&r, "OPERAND2", b);
        r
    }
    /// `A or B` (boolean blocks).
    pub fn or(&mut self, a: &str, b: &str) -> String {
        let r = self.block("operator_or", json!({}), json!({}));
        self.boolean(&r, "OPERAND1", a);
        self.boolean(&r, "OPERAND2", b);
        r
    }
    /// `not A`.
    pub fn not(&mut self, a: &str) -> String {
        let r = self.block("operator_not", json!({}), json!({}));
        self.boolean(&r, "OPERAND", a);
        r
    }
    /// `key KEY pressed?`.
    pub fn key_pressed(&mut self, key: &str) -> String {
        let r = self.block("sensing_keypressed", json!({}), json!({}));
        self.menu(&r, "KEY_OPTION", "sensing_keyoptions", "KEY_OPTION", key);
        r
    }
    /// `mouse down?`.
    pub fn mouse_down(&mut self) -> String {
        self.block("sensing_mousedown", json!({}), json!({}))
    }
    /// `touching WHAT?` (`_edge_`, `_mouse_` or a sprite name).
    pub fn touching(&mut self, what: &str) -> String {
        let r = self.block("sensing_touchingobject", json!({}), json!({}));
        self.menu(&r, "TOUCHINGOBJECTMENU", "sensing_touchingobjectmenu", "TOUCHINGOBJECTMENU", what);
        r
    }
}

/// The shared corpora folder (`CLOWDER_CORPORA`, default `../shared/corpora` beside the
/// workspace), or `None` after printing a visible SKIP line when it is absent.
pub fn corpora() -> Option<std::path::PathBuf> {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::var("CLOWDER_CORPORA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| root.join("../shared/corpora"));
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("SKIP: {} not found (set CLOWDER_CORPORA)", dir.display());
        None
    }
}
