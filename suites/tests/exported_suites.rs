//! An exported suite does in a Whisker runner what test generation executed: every event kind
//! is written with the parameters it was applied with, so its regression assertions pass in
//! clowder's own Whisker runner (the real Whisker's round trip, `scripts/whisker-roundtrip.sh`,
//! found exported drags truncated to whole pixels: Falling-Stars' test 6).

use std::sync::Arc;

use clowder_suites::{Limits, Status, Suite};
use clowder_testgen::assertions;
use clowder_testgen::config::Budget;
use clowder_testgen::events::{Event, EventInfo};
use clowder_testgen::execution::{Executor, RunCtx};
use clowder_testgen::export::Restore;
use clowder_testgen::result::{Test, TimelinePoint};
use clowder_testgen::testkit::{Arg, ProjectBuilder};
use clowder_testgen::{Algorithm, AlgorithmConfig, Params, Prepared};
use serde_json::json;

/// A cat that copies into variables what every kind of event changes: its position, the
/// mouse, the answer, the loudness, and counts of key presses and clicks.
fn recording_project() -> clowder_vm::Project {
    let mut p = ProjectBuilder::new();
    for v in ["px", "py", "mx", "my", "down", "ans", "loud", "keys", "clicks", "stage clicks"] {
        p.global_var(v);
    }
    let st = p.stage();
    let hat = p.t(st).when_stage_clicked();
    let inc = p.t(st).change_var("stage clicks", Arg::n(1.0));
    p.t(st).script(hat, &[inc]);
    let c = p.sprite("Cat");
    let t = p.t(c);
    let reporters = [
        ("px", "motion_xposition"),
        ("py", "motion_yposition"),
        ("mx", "sensing_mousex"),
        ("my", "sensing_mousey"),
        ("down", "sensing_mousedown"),
        ("ans", "sensing_answer"),
        ("loud", "sensing_loudness"),
    ];
    let mut body = Vec::new();
    for (var, opcode) in reporters {
        let r = t.block(opcode, json!({}), json!({}));
        body.push(t.set_var(var, Arg::b(&r)));
    }
    let copy = t.forever(&body);
    let hat = t.when_flag();
    t.script(hat, &[copy]);
    let hat = t.when_flag();
    let ask = t.ask("name?");
    t.script(hat, &[ask]);
    let hat = t.when_key("a");
    let inc = t.change_var("keys", Arg::n(1.0));
    t.script(hat, &[inc]);
    let hat = t.when_clicked();
    let inc = t.change_var("clicks", Arg::n(1.0));
    t.script(hat, &[inc]);
    p.load()
}

#[test]
fn every_event_kind_replays_in_the_whisker_runner_as_it_was_executed() {
    let project = Arc::new(recording_project());
    let events = vec![
        Event::KeyPress { key: "a".into(), steps: 2 },
        Event::TypeText { text: "Ada".into() },
        Event::MouseMove { x: 12.7, y: -3.2 },
        Event::MouseDown { down: true },
        Event::MouseDown { down: false },
        Event::ClickSprite { sprite: "Cat".into(), clone: 0, x: 0.0, y: 0.0, steps: 1 },
        Event::ClickStage,
        // Off whole pixels, as Whisker's drags are (a truncated start plus the sprite's size
        // times the cosine of an angle).
        Event::DragSprite { sprite: "Cat".into(), clone: 0, x: 10.6, y: -33.45 },
        Event::Sound { volume: 37.0, steps: 2 },
        Event::Wait { steps: 3 },
    ];
    let prepared = Prepared::new(&project);
    let info = EventInfo::new(&project, 1);
    let params = Params::from_config(&AlgorithmConfig::new(Algorithm::Random)).expect("params");
    let mut sink = |_: &TimelinePoint| {};
    let ctx =
        RunCtx { project: Arc::clone(&project), model: &prepared.model, info: &info, params: &params, vm_seed: 1 };
    let mut exec = Executor::new(ctx, Budget::Executions(1), &mut sink);
    let mut suite = vec![Test { events, ..Test::default() }];
    assertions::add_to_suite(&mut exec, &mut suite);
    let recorded: Vec<String> = suite[0].assertions.iter().flatten().map(|a| a.to_js()).collect();
    // The drag's exact position is part of what the test checks.
    assert!(recorded.iter().any(|a| a.contains("10.6")), "{recorded:#?}");

    let js = clowder_testgen::export::whisker_js(&suite, "random", 1, &Restore::sprites(&["Cat"]));
    let parsed = Suite::from_source("exported.js", &js).expect("the export parses");
    let result = clowder_suites::run_project(&parsed, &project, "recording", 1, &Limits::default());
    let row = &result.rows[0];
    assert_eq!(row.status, Status::Pass, "{js}\n{row:?}");
}

/// Whisker keeps a suite's renderer from test to test, and an SVG skin's collision silhouette
/// is the largest MIP ever drawn: on HappyNewYear (seed 7) the unicorn grows to 180 % in a long
/// first test, and after it the balloon clone at (20, 25) no longer touches it at step 38,
/// where it does on a fresh VM (what the generator saw; the real Whisker failed the exported
/// `touching` assertion so). The exported prologue drops the MIPs, and `clowder test`, which
/// models Whisker's kept renderer, honours that: with the prologue the second test sees a fresh
/// renderer's answer, without its MIP lines the carried one.
#[test]
fn the_exported_prologue_drops_mips_an_earlier_test_drew() {
    let corpora = std::env::var_os("CLOWDER_CORPORA")
        .map_or_else(|| std::path::PathBuf::from("../../shared/corpora"), Into::into);
    let path = corpora.join("whisker-rq1/HappyNewYear.sb3");
    if !path.exists() {
        eprintln!("SKIP: {} not found (set CLOWDER_CORPORA)", path.display());
        return;
    }
    let project = Arc::new(clowder_vm::Project::load_path(&path, &clowder_vm::LoadLimits::default()).expect("load"));
    let suite = vec![
        Test { events: vec![Event::Wait { steps: 400 }], ..Test::default() },
        Test { events: vec![Event::Wait { steps: 37 }], ..Test::default() },
    ];
    let order = Restore::sprites(&["Einhorn", "Luftballon"]);
    let js = clowder_testgen::export::whisker_js(&suite, "mosa", 7, &order);
    let check = "t.assert.ok(t.getSprite(\"Einhorn\").size > 100, \"grown\");\n  t.end();";
    let touch = "t.assert.ok(t.getSprite(\"Einhorn\").isTouchingSprite(\"Luftballon\"), \"touch\");\n  t.end();";
    // The first test checks that the unicorn grew; the second asks the question.
    let (first, second) = js.split_once("const test1").expect("two tests");
    let js = format!("{}const test1{}", first.replacen("t.end();", check, 1), second.replacen("t.end();", touch, 1));
    assert!(js.contains("resetMIPs"), "{js}");
    let run = |js: &str| {
        let parsed = Suite::from_source("exported.js", js).expect("the export parses");
        let r = clowder_suites::run_project(&parsed, &project, "HappyNewYear", 7, &Limits::default());
        r.rows.iter().map(|row| row.status).collect::<Vec<_>>()
    };
    assert_eq!(run(&js), vec![Status::Pass, Status::Pass], "{js}");
    let kept: String = js.lines().filter(|l| !l.contains("resetMIPs")).map(|l| format!("{l}\n")).collect();
    assert_eq!(run(&kept), vec![Status::Pass, Status::Fail], "{kept}");
}

/// A project of the corpora, or `None` (after a visible SKIP) when they are absent.
fn corpus_project(rel: &str) -> Option<Arc<clowder_vm::Project>> {
    let corpora = std::env::var_os("CLOWDER_CORPORA")
        .map_or_else(|| std::path::PathBuf::from("../../shared/corpora"), Into::into);
    let path = corpora.join(rel);
    if !path.exists() {
        eprintln!("SKIP: {} not found (set CLOWDER_CORPORA)", path.display());
        return None;
    }
    Some(Arc::new(clowder_vm::Project::load_path(&path, &clowder_vm::LoadLimits::default()).expect("load")))
}

/// `suite` with its regression assertions recorded as test generation records them (MOSA's
/// parameters, the `whisker` profile), exported, and run in clowder's Whisker runner with the
/// tests sharing one VM as in Whisker; with the exported file, and the verdicts.
fn record_export_run(project: &Arc<clowder_vm::Project>, seed: u64, mut suite: Vec<Test>) -> (String, Vec<Status>) {
    let prepared = Prepared::new(project);
    let info = EventInfo::new(project, seed);
    let params = Params::from_config(&AlgorithmConfig::new(Algorithm::Mosa)).expect("params");
    let mut sink = |_: &TimelinePoint| {};
    let ctx =
        RunCtx { project: Arc::clone(project), model: &prepared.model, info: &info, params: &params, vm_seed: seed };
    let mut exec = Executor::new(ctx, Budget::Executions(1), &mut sink);
    assertions::add_to_suite(&mut exec, &mut suite);
    let order = Restore::of(project);
    let js = clowder_testgen::export::whisker_js(&suite, "mosa", seed, &order);
    let statuses = run_js(project, seed, &js);
    (js, statuses)
}

fn run_js(project: &Arc<clowder_vm::Project>, seed: u64, js: &str) -> Vec<Status> {
    let parsed = Suite::from_source("exported.js", js).expect("the export parses");
    let r = clowder_suites::run_project(&parsed, project, "exported", seed, &Limits::default());
    r.rows.iter().map(|row| row.status).collect()
}

/// In Whisker a test's `isTouchingSprite` check is a query of the live renderer that leaves
/// the MIPs it makes (the asking sprite's 100 % texture), so it can change what the program
/// sees next. On grow-a-dragonfly (MOSA, seed 7) the checks that Insect2 and the dragonfly
/// (at 25 %) touch sharpen the dragonfly's silhouette, and three events later Insect2 is no
/// longer caught (`touching color`); the generator once recorded the state without the
/// checks, and the exported test failed in clowder's runner and in the real Whisker. Now the
/// recorder asks every exported touching check as the runner will: the test passes, and
/// without its touching checks the program takes the other path, so the control fails.
#[test]
fn exported_touching_checks_change_the_renderer_as_in_whisker_and_the_recorder_knows() {
    let Some(project) = corpus_project("codeclub/grow-a-dragonfly--Grow-a-dragonfly-complete.sb3") else { return };
    let drag = |sprite: &str, x: f64, y: f64| Event::DragSprite { sprite: sprite.into(), clone: 0, x, y };
    let events = vec![
        drag("Insect2", -130.0, -128.0),
        Event::MouseMoveTo { x: -126.53317669493077, y: -125.38611089418039 },
        drag("Insect", -125.58349955601825, -152.07847101467365),
        drag("Insect2", -101.3280019508093, -122.7171478470588),
    ];
    let (js, statuses) = record_export_run(&project, 7, vec![Test { events, ..Test::default() }]);
    assert!(js.contains(".isTouchingSprite(\"Dragonfly\")"), "{js}");
    assert_eq!(statuses, vec![Status::Pass], "{js}");
    let unasked: String = js.lines().filter(|l| !l.contains("isTouchingSprite")).map(|l| format!("{l}\n")).collect();
    assert_eq!(run_js(&project, 7, &unasked), vec![Status::Fail], "{unasked}");
}

/// Whisker clicks the green flag before a test's code runs, so the scripts start in the
/// execution order the test before left. On HappyNewYear (MOSA, seed 5) the unicorn ends the
/// first test in front; in the second, restored to the back by the prologue but started from
/// the front, it answered the new year one step late and a balloon clone went elsewhere (the
/// real Whisker failed the exported test so). The prologue clicks the green flag again when it
/// had to change the layer order: both tests pass, and without that line the second fails.
#[test]
fn the_exported_prologue_restarts_the_scripts_in_the_loaded_order() {
    let Some(project) = corpus_project("whisker-rq1/HappyNewYear.sb3") else { return };
    let wait = |steps| Event::Wait { steps };
    let suite = vec![
        Test { events: vec![wait(90)], ..Test::default() },
        Test { events: vec![wait(90), wait(43)], ..Test::default() },
    ];
    let (js, statuses) = record_export_run(&project, 5, suite);
    assert_eq!(statuses, vec![Status::Pass, Status::Pass], "{js}");
    let flag = "if (sprites.some((s, i) => s.layerOrder !== layers[i])) t.greenFlag();";
    assert!(js.contains(flag), "{js}");
    let once: String = js.lines().filter(|l| !l.contains(flag)).map(|l| format!("{l}\n")).collect();
    assert_eq!(run_js(&project, 5, &once), vec![Status::Pass, Status::Fail], "{once}");
}

/// scratch-vm's `setSize` clamps a size to what the costume allows (at least 5 px, at most
/// 1.5 stages), but a size saved in the project is loaded as it is: this fixture's Player is
/// saved at 30 %, and its costume allows no less than 100 %. The prologue hands the renderer
/// the restored looks without `setSize` (`setDirection` hands it the scale), so the size
/// stays as saved, as where the test was recorded. With `setSize` a Flappy Bird pipe saved at
/// 100 % became 73.6 % in Whisker and in `clowder test`, and its clones' size checks failed.
#[test]
fn the_exported_prologue_keeps_sizes_saved_beyond_the_costumes_limits() {
    let Some(project) = corpus_project("conformance/tw-prefers-first-occurence-of-procedure-387608267.sb3") else {
        return;
    };
    let suite = vec![Test { events: vec![Event::Wait { steps: 5 }], ..Test::default() }];
    let (js, statuses) = record_export_run(&project, 1, suite);
    assert_eq!(statuses, vec![Status::Pass], "{js}");
    assert!(!js.contains("g.setSize("), "{js}");
    let check = "  t.assert.equal(t.getSprite(\"Player\").size, 30, \"the size as saved\");\n  t.end();";
    let checked = js.replacen("  t.end();", check, 1);
    assert_eq!(run_js(&project, 1, &checked), vec![Status::Pass], "{checked}");
    let clamping = checked.replace("g.setDirection(g.direction);", "g.setDirection(g.direction); g.setSize(g.size);");
    assert_eq!(run_js(&project, 1, &clamping), vec![Status::Fail], "{clamping}");
}

/// A direction saved outside (−180, 180] (the editor's dial saved −270 for both sprites of this
/// random-sample project): Whisker's load and its restore between tests keep it as saved, and
/// so does the `whisker` profile where the tests are recorded, but the prologue's
/// `setDirection` wraps it. For such projects the prologue assigns the restored direction back
/// and hands the renderer every field (`updateAllDrawableProperties`), as the restore left
/// it: the direction stays −270, and without that line it reads 90.
#[test]
fn the_exported_prologue_keeps_directions_saved_out_of_range() {
    let Some(project) = corpus_project("random-sample/402032138_21-05-2021_01-46-27.json") else { return };
    let suite = vec![Test { events: vec![Event::Wait { steps: 5 }], ..Test::default() }];
    let (js, statuses) = record_export_run(&project, 1, suite);
    assert_eq!(statuses, vec![Status::Pass], "{js}");
    let check = "  t.assert.equal(t.getSprite(\"objeto1\").direction, -270, \"the direction as saved\");\n  t.end();";
    let checked = js.replacen("  t.end();", check, 1);
    assert_eq!(run_js(&project, 1, &checked), vec![Status::Pass], "{checked}");
    let raw = "if (g.direction !== d) { g.direction = d; g.updateAllDrawableProperties(); }";
    assert!(checked.contains(raw), "{checked}");
    let wrapping = checked.replace(raw, "");
    assert_eq!(run_js(&project, 1, &wrapping), vec![Status::Fail], "{wrapping}");
}
