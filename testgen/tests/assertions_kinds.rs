//! Regression assertions: each kind fires when its property changes and stays
//! silent when nothing changes, on recorded observations and on real replays
//! of hand-made projects.

use std::sync::Arc;

use clowder_testgen::assertions::{self, Assertion, Snapshot, TargetRef};
use clowder_testgen::config::Budget;
use clowder_testgen::events::{Event, EventInfo};
use clowder_testgen::execution::{Executor, RunCtx};
use clowder_testgen::result::{Test, TimelinePoint};
use clowder_testgen::testkit::{Arg, ProjectBuilder};
use clowder_testgen::{Algorithm, AlgorithmConfig, Params, Prepared};
use clowder_vm::Project;
use serde_json::{Value, json};

fn cat() -> TargetRef {
    TargetRef { sprite: "Cat".into(), clone: 0 }
}

/// One observation of every kind, and a changed value for each.
fn every_kind() -> Vec<(Assertion, Assertion)> {
    let t = cat;
    vec![
        (Assertion::Backdrop { costume: 0 }, Assertion::Backdrop { costume: 1 }),
        (
            Assertion::CloneCount { sprite: "Cat".into(), count: 0 },
            Assertion::CloneCount { sprite: "Cat".into(), count: 2 },
        ),
        (Assertion::Costume { target: t(), costume: 0 }, Assertion::Costume { target: t(), costume: 1 }),
        (Assertion::Direction { target: t(), direction: 90.0 }, Assertion::Direction { target: t(), direction: 105.0 }),
        (
            Assertion::Effect { target: t(), effect: "ghost".into(), value: 0.0 },
            Assertion::Effect { target: t(), effect: "ghost".into(), value: 50.0 },
        ),
        (Assertion::Layer { target: t(), layer: 1 }, Assertion::Layer { target: t(), layer: 2 }),
        (
            Assertion::List { target: TargetRef::stage(), list: "items".into(), length: 0 },
            Assertion::List { target: TargetRef::stage(), list: "items".into(), length: 1 },
        ),
        (Assertion::Position { target: t(), x: 0.0, y: 0.0 }, Assertion::Position { target: t(), x: 10.0, y: 0.0 }),
        (
            Assertion::Say { target: t(), text: String::new(), think: false },
            Assertion::Say { target: t(), text: "Hi".into(), think: false },
        ),
        (Assertion::Size { target: t(), size: 100.0 }, Assertion::Size { target: t(), size: 110.0 }),
        (
            Assertion::Touching { target: t(), other: "Dog".into(), touching: false },
            Assertion::Touching { target: t(), other: "Dog".into(), touching: true },
        ),
        (
            Assertion::TouchingEdge { target: t(), touching: false },
            Assertion::TouchingEdge { target: t(), touching: true },
        ),
        (
            Assertion::Variable {
                target: TargetRef::stage(),
                variable: "score".into(),
                value: "0".into(),
                boolean: false,
            },
            Assertion::Variable {
                target: TargetRef::stage(),
                variable: "score".into(),
                value: "1".into(),
                boolean: false,
            },
        ),
        (Assertion::Visibility { target: t(), visible: true }, Assertion::Visibility { target: t(), visible: false }),
        (Assertion::Volume { target: t(), volume: 100.0 }, Assertion::Volume { target: t(), volume: 50.0 }),
    ]
}

#[test]
fn each_kind_fires_on_its_change_only() {
    let kinds = every_kind();
    assert_eq!(kinds.len(), 15, "Table 4 has 15 kinds");
    let base = Snapshot::from_assertions(kinds.iter().map(|(a, _)| a.clone()));
    assert_eq!(base.len(), 15, "each kind is a distinct property");
    assert!(base.changes_since(&base).is_empty(), "silent without a change");
    for (i, (_, changed)) in kinds.iter().enumerate() {
        let next = Snapshot::from_assertions(
            kinds.iter().enumerate().map(|(j, (a, b))| if i == j { b.clone() } else { a.clone() }),
        );
        let fired = next.changes_since(&base);
        assert_eq!(fired, vec![changed.clone()], "{}", changed.kind());
        assert!(changed.accepts(next.get(&changed.key())), "{}: holds where recorded", changed.kind());
        assert!(!changed.accepts(base.get(&changed.key())), "{}: fails on the old state", changed.kind());
    }
    // A property that appears (a new clone, a new variable) is recorded too.
    let mut more: Vec<Assertion> = kinds.iter().map(|(a, _)| a.clone()).collect();
    let clone = TargetRef { sprite: "Cat".into(), clone: 1 };
    more.push(Assertion::Position { target: clone.clone(), x: 0.0, y: 0.0 });
    let fired = Snapshot::from_assertions(more).changes_since(&base);
    assert_eq!(fired, vec![Assertion::Position { target: clone, x: 0.0, y: 0.0 }]);
}

/// Replays `events` on `project` and returns the assertions after each event.
fn record(project: Project, events: Vec<Event>) -> Vec<Vec<Assertion>> {
    let project = Arc::new(project);
    let prepared = Prepared::new(&project);
    let info = EventInfo::new(&project, 1);
    let params = Params::from_config(&AlgorithmConfig::new(Algorithm::Random)).unwrap();
    let mut sink = |_: &TimelinePoint| {};
    let ctx =
        RunCtx { project: Arc::clone(&project), model: &prepared.model, info: &info, params: &params, vm_seed: 1 };
    let mut exec = Executor::new(ctx, Budget::Executions(1), &mut sink);
    let mut suite = vec![Test { events, ..Test::default() }];
    assertions::add_to_suite(&mut exec, &mut suite);
    // Checking the suite on the same program: every assertion holds where it was recorded.
    let test = &suite[0];
    let mut failures = 0;
    exec.replay_observed(&test.events, &mut |k, sut| {
        if k > 0 {
            failures += test.assertions[k - 1].iter().filter(|a| !assertions::holds(a, sut)).count();
        }
        true
    });
    assert_eq!(failures, 0, "assertions hold on the program they were recorded on");
    suite.remove(0).assertions
}

fn key(k: &str) -> Event {
    Event::KeyPress { key: k.into(), steps: 1 }
}

/// A sprite whose key scripts each change one property, plus a key without a script.
fn keyed_project() -> Project {
    let mut p = ProjectBuilder::new();
    p.global_var("score");
    p.backdrop("night");
    let st = p.stage();
    let next = p.t(st).block("looks_nextbackdrop", json!({}), json!({}));
    let hat = p.t(st).when_key("i");
    p.t(st).script(hat, &[next]);
    let c = p.sprite("Cat");
    let t = p.t(c);
    let scripts: Vec<(&str, String)> = vec![
        ("a", t.change_x(Arg::n(10.0))),
        ("b", t.block("motion_turnright", json!({"DEGREES": [1, [4, "15"]]}), json!({}))),
        ("c", t.block("looks_changesizeby", json!({"CHANGE": [1, [4, "10"]]}), json!({}))),
        ("d", t.block("looks_nextcostume", json!({}), json!({}))),
        ("e", t.hide()),
        ("f", t.change_var("score", Arg::n(1.0))),
        ("g", t.block("data_addtolist", json!({"ITEM": [1, [10, "x"]]}), json!({"LIST": ["items", "l_items"]}))),
        ("h", t.block("looks_think", json!({"MESSAGE": [1, [10, "hmm"]]}), json!({}))),
        ("j", t.block("looks_changeeffectby", json!({"CHANGE": [1, [4, "50"]]}), json!({"EFFECT": ["GHOST", null]}))),
        ("l", t.block("sound_changevolumeby", json!({"VOLUME": [1, [4, "-10"]]}), json!({}))),
        ("m", t.block("looks_gotofrontback", json!({}), json!({"FRONT_BACK": ["back", null]}))),
    ];
    for (k, body) in scripts {
        let hat = t.when_key(k);
        t.script(hat, &[body]);
    }
    // A second sprite, in front of Cat, far away from it.
    let d = p.sprite("Dog");
    p.t(d).xy = (200.0, 100.0);
    let mut j = p.json();
    // A second costume and a global list, which the builder does not offer.
    let cat = &mut j["targets"][1];
    let extra = json!({"assetId": "01000000000000000000000000000000", "dataFormat": "svg", "md5ext": "01000000000000000000000000000000.svg", "name": "costume2",
                       "rotationCenterX": 0, "rotationCenterY": 0});
    if let Some(Value::Array(cs)) = cat.get_mut("costumes") {
        cs.push(extra);
    }
    j["targets"][0]["lists"] = json!({"l_items": ["items", []]});
    let bytes = serde_json::to_vec(&j).unwrap();
    clowder_vm::project::load(&bytes, "keyed.json", &clowder_vm::LoadLimits::default()).unwrap()
}

#[test]
fn replayed_changes_become_assertions_of_their_kind() {
    let expected = [
        ("a", "position"),
        ("b", "direction"),
        ("c", "size"),
        ("d", "costume"),
        ("e", "visibility"),
        ("f", "variable"),
        ("g", "list"),
        ("h", "say"),
        ("i", "backdrop"),
        ("j", "effect"),
        ("l", "volume"),
    ];
    let mut events: Vec<Event> = Vec::new();
    for (k, _) in expected {
        events.push(key(k));
        events.push(key("z")); // no script: nothing changes
    }
    let recorded = record(keyed_project(), events);
    for (i, (k, kind)) in expected.iter().enumerate() {
        let after = &recorded[2 * i];
        let kinds: Vec<&str> = after.iter().map(|a| a.kind()).collect();
        assert_eq!(kinds, vec![*kind], "key {k}: {after:?}");
        assert!(recorded[2 * i + 1].is_empty(), "after key z nothing changed: {:?}", recorded[2 * i + 1]);
    }
    // Values are the new state.
    assert_eq!(recorded[0], vec![Assertion::Position { target: cat(), x: 10.0, y: 0.0 }]);
    assert_eq!(recorded[2], vec![Assertion::Direction { target: cat(), direction: 105.0 }]);
    assert_eq!(
        recorded[10],
        vec![Assertion::Variable {
            target: TargetRef::stage(),
            variable: "score".into(),
            value: "1".into(),
            boolean: false
        }]
    );
    assert_eq!(recorded[12], vec![Assertion::List { target: TargetRef::stage(), list: "items".into(), length: 1 }]);
    assert_eq!(recorded[14], vec![Assertion::Say { target: cat(), text: "hmm".into(), think: true }]);
    assert_eq!(recorded[16], vec![Assertion::Backdrop { costume: 1 }]);
    assert_eq!(recorded[18], vec![Assertion::Effect { target: cat(), effect: "ghost".into(), value: 50.0 }]);
    assert_eq!(recorded[20], vec![Assertion::Volume { target: cat(), volume: 90.0 }]);
}

#[test]
fn layer_changes_of_both_sprites() {
    // Cat (layer 1) goes to the front: Dog moves back.
    let mut p = ProjectBuilder::new();
    let c = p.sprite("Cat");
    let front = p.t(c).block("looks_gotofrontback", json!({}), json!({"FRONT_BACK": ["front", null]}));
    let hat = p.t(c).when_key("m");
    p.t(c).script(hat, &[front]);
    let _ = p.sprite("Dog");
    let recorded = record(p.load(), vec![key("m"), key("m")]);
    let dog = TargetRef { sprite: "Dog".into(), clone: 0 };
    assert_eq!(
        recorded[0],
        vec![Assertion::Layer { target: cat(), layer: 2 }, Assertion::Layer { target: dog, layer: 1 }]
    );
    assert!(recorded[1].is_empty(), "already in front: nothing changes");
}

#[test]
fn touching_follows_the_geometry() {
    // Cat glides onto Dog; both are boxes of the same costume size.
    let mut p = ProjectBuilder::new();
    let c = p.sprite("Cat");
    let go = p.t(c).goto_xy(Arg::n(0.0), Arg::n(0.0));
    let hat = p.t(c).when_key("t");
    p.t(c).script(hat, &[go]);
    p.t(c).xy = (-150.0, 0.0);
    let d = p.sprite("Dog");
    p.t(d).xy = (0.0, 0.0);
    let edge = p.t(d).goto_xy(Arg::n(240.0), Arg::n(0.0));
    let hat = p.t(d).when_key("e");
    p.t(d).script(hat, &[edge]);
    let project = p.load();
    let geometry = clowder_vm::Vm::new(
        Arc::new(project.clone()),
        clowder_vm::VmOptions { profile: clowder_vm::Profile::Default, ..Default::default() },
    )
    .geometry_mode();
    let recorded = record(project, vec![key("t"), key("e")]);
    let kinds = |i: usize| recorded[i].iter().map(|a| a.kind()).collect::<Vec<_>>();
    if geometry == "none" {
        // Without geometry nothing ever touches: touching never changes, so it is never asserted.
        assert_eq!(kinds(0), vec!["position"], "{:?}", recorded[0]);
        assert_eq!(kinds(1), vec!["position"], "{:?}", recorded[1]);
    } else {
        let dog = TargetRef { sprite: "Dog".into(), clone: 0 };
        assert!(recorded[0].contains(&Assertion::Touching { target: cat(), other: "Dog".into(), touching: true }));
        assert!(recorded[0].contains(&Assertion::Touching {
            target: dog.clone(),
            other: "Cat".into(),
            touching: true
        }));
        assert!(recorded[1].contains(&Assertion::TouchingEdge { target: dog, touching: true }), "{:?}", recorded[1]);
    }
}

#[test]
fn a_new_clone_is_counted_and_observed() {
    let mut p = ProjectBuilder::new();
    let c = p.sprite("Cat");
    let t = p.t(c);
    let hat = t.when_key("space");
    let clone = t.create_clone("_myself_");
    t.script(hat, &[clone]);
    let recorded = record(p.load(), vec![key("space"), key("z")]);
    let first = &recorded[0];
    assert!(first.contains(&Assertion::CloneCount { sprite: "Cat".into(), count: 1 }), "{first:?}");
    let clone1 = TargetRef { sprite: "Cat".into(), clone: 1 };
    assert!(first.contains(&Assertion::Position { target: clone1.clone(), x: 0.0, y: 0.0 }), "{first:?}");
    let about_original: Vec<&Assertion> =
        first.iter().filter(|a| !matches!(a, Assertion::CloneCount { .. }) && a.key().target() != &clone1).collect();
    // The clone is inserted behind its parent, so the original moves up one layer.
    assert_eq!(about_original, vec![&Assertion::Layer { target: cat(), layer: 2 }], "nothing else changed");
    assert!(recorded[1].is_empty());
}

#[test]
fn suite_json_and_javascript_carry_the_assertions() {
    let recorded = record(keyed_project(), vec![key("a")]);
    let test = Test { events: vec![key("a")], assertions: recorded };
    let json = serde_json::to_string(&test).unwrap();
    assert!(
        json.contains(r#""assertions":[[{"kind":"position","target":{"sprite":"Cat","clone":0},"x":10.0,"y":0.0}]]"#),
        "{json}"
    );
    let back: Test = serde_json::from_str(&json).unwrap();
    assert_eq!(back, test);
    let js = clowder_testgen::export::whisker_js(&[test], "mio", 1, &clowder_testgen::export::Restore::default());
    assert!(js.contains("  await t.runForSteps(1);\n  t.assert.withinRange(t.getSprite(\"Cat\").x, 10, 5, "), "{js}");
    // Without assertions the JSON is what it was before assertions existed.
    let bare = serde_json::to_string(&Test { events: vec![key("a")], ..Test::default() }).unwrap();
    assert!(!bare.contains("assertions"));
}

/// What Whisker times on its wall clock (music beats, `when timer >`) depends on how fast its
/// machine steps: a check on a state those blocks decide is left out, the rest stay (the
/// round trip's brain-game and rock-band failures; `clowder_vm::whisker::WALL_MS_PER_STEP`).
#[test]
fn checks_that_hang_on_whiskers_wall_clock_are_left_out() {
    let mut p = ProjectBuilder::new();
    p.global_var("score");
    p.backdrop("day");
    p.backdrop("night");
    let st = p.stage();
    // `when timer > 2`: 60 steps on the virtual clock, 13-50 at Whisker's real step lengths.
    let hat = p.t(st).when_greater_than("TIMER", Arg::n(2.0));
    let night = p.t(st).block("looks_nextbackdrop", json!({}), json!({}));
    p.t(st).script(hat, &[night]);
    let c = p.sprite("Cat");
    let t = p.t(c);
    // Key d: x := 10, a quarter beat of drum (8 steps here, 16-63 in Whisker), x := 20.
    let hat = t.when_key("d");
    let a = t.change_x(Arg::n(10.0));
    let drum = t.play_drum("1", 0.25);
    let b = t.change_x(Arg::n(10.0));
    t.script(hat, &[a, drum, b]);
    // Key f: score := score + 1, no clock involved.
    let hat = t.when_key("f");
    let f = t.change_var("score", Arg::n(1.0));
    t.script(hat, &[f]);
    let events = vec![
        Event::KeyPress { key: "d".into(), steps: 1 },
        Event::Wait { steps: 12 },
        Event::KeyPress { key: "f".into(), steps: 1 },
        Event::Wait { steps: 30 },
    ];
    let recorded = record(p.load(), events);
    let position = |x: f64| Assertion::Position { target: cat(), x, y: 0.0 };
    // The first move comes before the drum: kept.
    assert!(recorded[0].contains(&position(10.0)), "{:?}", recorded[0]);
    // On the virtual clock the drum is over after 12 more steps (x = 20); on Whisker's
    // wall clock it may not be: the check is left out.
    assert!(recorded[1].iter().all(|a| a.kind() != "position"), "{:?}", recorded[1]);
    let score =
        Assertion::Variable { target: TargetRef::stage(), variable: "score".into(), value: "1".into(), boolean: false };
    assert!(recorded[2].contains(&score), "{:?}", recorded[2]);
    // 46 steps in: `when timer > 2` has fired at Whisker's speeds, not on the virtual clock.
    assert!(recorded[3].iter().all(|a| a.kind() != "backdrop"), "{:?}", recorded[3]);
}

/// Whisker seeds its random stream again before every test, so scratch-vm's `uid()` hands a
/// clone the id the sb3 loader gave an original, and Whisker's wrappers, cached by id, hand
/// that clone its original's wrapper: `getClones()[i]` reads the original. Here the stage
/// has no block and the sprite's three compact inputs (`repeat 5`, `go to x: 10 y: 20`) come
/// before its own id, the loader's fifth `uid()`; the clones' ids are the test's first five,
/// so the fifth clone's is the original's (held-out sample 11's Breakout, read in the real
/// Whisker: its 36th brick clone read as the hidden original brick).
#[test]
fn a_clone_whose_whisker_id_repeats_its_originals_is_read_through_the_originals_wrapper() {
    let json = r#"{"targets": [
        {"isStage": true, "name": "Stage", "variables": {}, "lists": {}, "broadcasts": {}, "blocks": {},
         "comments": {}, "currentCostume": 0, "sounds": [], "volume": 100, "layerOrder": 0, "costumes": [{"assetId": "00000000000000000000000000000000",
         "dataFormat": "svg", "md5ext": "00000000000000000000000000000000.svg", "name": "backdrop1", "rotationCenterX": 0, "rotationCenterY": 0}]},
        {"isStage": false, "name": "S", "variables": {}, "lists": {}, "broadcasts": {}, "comments": {},
         "currentCostume": 0, "sounds": [], "volume": 100, "layerOrder": 1, "costumes": [{"assetId": "00000000000000000000000000000000",
         "dataFormat": "svg", "md5ext": "00000000000000000000000000000000.svg", "name": "costume1", "rotationCenterX": 0, "rotationCenterY": 0}],
         "visible": true, "x": 0, "y": 0, "size": 100, "direction": 90, "draggable": false,
         "rotationStyle": "all around",
         "blocks": {
           "f": {"opcode": "event_whenflagclicked", "next": "r", "parent": null, "inputs": {}, "fields": {},
                 "shadow": false, "topLevel": true, "x": 0, "y": 0},
           "r": {"opcode": "control_repeat", "next": null, "parent": "f",
                 "inputs": {"TIMES": [1, [6, "5"]], "SUBSTACK": [2, "c"]}, "fields": {}, "shadow": false, "topLevel": false},
           "c": {"opcode": "control_create_clone_of", "next": null, "parent": "r",
                 "inputs": {"CLONE_OPTION": [1, "m"]}, "fields": {}, "shadow": false, "topLevel": false},
           "m": {"opcode": "control_create_clone_of_menu", "next": null, "parent": "c", "inputs": {},
                 "fields": {"CLONE_OPTION": ["_myself_", null]}, "shadow": true, "topLevel": false},
           "h": {"opcode": "control_start_as_clone", "next": "g", "parent": null, "inputs": {}, "fields": {},
                 "shadow": false, "topLevel": true, "x": 0, "y": 200},
           "g": {"opcode": "motion_gotoxy", "next": null, "parent": "h",
                 "inputs": {"X": [1, [4, "10"]], "Y": [1, [4, "20"]]}, "fields": {}, "shadow": false, "topLevel": false}
         }}
      ], "monitors": [], "extensions": [], "meta": {"semver": "3.0.0"}}"#;
    let project = clowder_vm::project::load(json.as_bytes(), "ids.json", &clowder_vm::LoadLimits::default())
        .expect("the project loads");
    let recorded = record(project, vec![Event::Wait { steps: 10 }]);
    let first = &recorded[0];
    let clone = |i: u32| TargetRef { sprite: "S".into(), clone: i };
    assert!(first.contains(&Assertion::CloneCount { sprite: "S".into(), count: 5 }), "{first:?}");
    for i in 1..=4 {
        assert!(first.contains(&Assertion::Position { target: clone(i), x: 10.0, y: 20.0 }), "clone {i}: {first:?}");
    }
    // The fifth clone stands at (10, 20), but the exported test reads the original there.
    assert!(first.contains(&Assertion::Position { target: clone(5), x: 0.0, y: 0.0 }), "{first:?}");
}
