//! What a test starts from: by default the VM of the tests before it, reset as the real
//! Whisker (emse22's `loadSaveState`) resets it; with `BetweenTests::Fresh` a freshly loaded
//! project. The regression cases from real games (BoatRace and FruitCatching mutants whose
//! verdicts in the real Whisker depend on the earlier tests) are in `whisker_examples.rs`.

use std::sync::Arc;

use clowder_suites::{BetweenTests, Limits, Status, Suite};
use clowder_testgen::testkit::{Arg, ProjectBuilder};

/// Stage variable `score`; `Cat` and `Dog` both at (0, 0), the dog in front. Keys act on
/// the cat: `h` hides it, `c` clones it, `s` adds 5 to the score, `m` moves it 50 right.
fn project() -> Arc<clowder_vm::Project> {
    let mut p = ProjectBuilder::new();
    p.global_var("score");
    let cat = p.sprite("Cat");
    for (key, block) in [("h", "hide"), ("c", "clone"), ("s", "score"), ("m", "move")] {
        let hat = p.t(cat).when_key(key);
        let b = match block {
            "hide" => p.t(cat).hide(),
            "clone" => p.t(cat).create_clone("_myself_"),
            "score" => p.t(cat).change_var("score", Arg::n(5.0)),
            _ => p.t(cat).change_x(Arg::n(50.0)),
        };
        p.t(cat).script(hat, &[b]);
    }
    p.sprite("Dog");
    Arc::new(p.load())
}

/// Test 1 changes what it can; test 2 logs what it starts from (the file the real Whisker ran).
const SUITE: &str = include_str!("data/BetweenTests.js");

/// What test 2 saw at its start, and the score after its 30 steps.
fn look(between_tests: BetweenTests) -> (serde_json::Value, String) {
    let suite = Suite::from_source("between.js", SUITE).expect("suite loads");
    let limits = Limits { between_tests, ..Limits::default() };
    let r = clowder_suites::run_project(&suite, &project(), "p", 1, &limits);
    assert_eq!(r.rows[0].status, Status::Pass, "{}", r.rows[0].message);
    assert_eq!(r.rows[1].status, Status::Pass, "{}", r.rows[1].message);
    let log = &r.rows[1].log;
    assert_eq!(log.len(), 2, "{log:?}");
    (serde_json::from_str(&log[0]).expect("JSON"), log[1].clone())
}

/// The values the real Whisker (emse22) logs for `data/BetweenTests.js` on
/// `data/BetweenTests.sb3` (written by `scripts/whisker_between_project.py`; 2026-11-24, seed
/// 1, acceleration 10): `seen {"visible":true,"x":0,"clones":0,"score":0,"catInFront":true,
/// "touching":false,"steps":8}` and `score 50`.
#[test]
fn whiskers_reset_restores_fields_but_not_layers_the_renderers_copy_nor_the_wrapper() {
    let (v, score) = look(BetweenTests::Whisker);
    // Assigned back: visibility, position, variables; clones deleted.
    assert_eq!(v["visible"], true);
    assert_eq!(v["x"], 0.0);
    assert_eq!(v["score"], 0.0);
    assert_eq!(v["clones"], 0);
    // Not restored: the layer order, and the renderer still has the cat's drawable hidden.
    assert_eq!(v["catInFront"], true);
    assert_eq!(v["touching"], false);
    // The wrapper's total steps and the random inputs test 1 registered carry over.
    assert_eq!(v["steps"], 8);
    assert_eq!(score, "50");
}

#[test]
fn fresh_tests_start_from_the_loaded_project() {
    let (v, score) = look(BetweenTests::Fresh);
    assert_eq!(v["visible"], true);
    assert_eq!(v["catInFront"], false);
    assert_eq!(v["touching"], true);
    assert_eq!(v["steps"], 0);
    assert_eq!(score, "0");
}

/// A suite of `tests/data` and the sb3 the real Whisker ran it on (`BetweenTests.sb3`).
fn on_whisker_sb3(suite: &str) -> (Suite, Arc<clowder_vm::Project>) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let suite = Suite::load(&dir.join(suite)).expect("suite loads");
    let project = Arc::new(
        clowder_vm::Project::load_path(&dir.join("BetweenTests.sb3"), &Default::default()).expect("project loads"),
    );
    (suite, project)
}

/// The same on the project written as an sb3 with real costumes, which the real Whisker ran.
#[test]
fn the_sb3_that_the_real_whisker_ran_gives_its_values() {
    let (suite, project) = on_whisker_sb3("BetweenTests.js");
    let r = clowder_suites::run_project(&suite, &project, "BetweenTests", 1, &Limits::default());
    assert_eq!(
        r.rows[1].log,
        [r#"{"visible":true,"x":0,"clones":0,"score":0,"catInFront":true,"touching":false,"steps":8}"#, "50"]
    );
}

/// The first test of a file starts as on a fresh VM, and a later test's result does not
/// depend on whether the tests before it were asked for one by one.
#[test]
fn a_single_test_runs_after_the_tests_before_it() {
    let suite = Suite::from_source("between.js", SUITE).expect("suite loads");
    let all = clowder_suites::run_project(&suite, &project(), "p", 1, &Limits::default());
    let second = clowder_suites::run_test(&suite, &project(), "p", 1, 1, &Limits::default());
    assert_eq!(all.rows[1].log, second.log);
}

/// Whisker evaluates a test file once: module-level variables and globals one test sets are
/// what the next test reads (the real Whisker's log is in the data file). With fresh tests
/// each test has the file evaluated anew. A timer left by a test does not fire in the next.
#[test]
fn module_level_state_is_shared_by_the_tests_of_a_file_as_in_whisker() {
    let (suite, project) = on_whisker_sb3("ModuleState.js");
    let log = |between_tests| {
        let limits = Limits { between_tests, ..Limits::default() };
        let r = clowder_suites::run_project(&suite, &project, "BetweenTests", 1, &limits);
        assert!(r.rows.iter().all(|r| r.status == Status::Pass), "{:?}", r.rows);
        r.rows[1].log.clone()
    };
    assert_eq!(
        log(BetweenTests::Whisker),
        [r#"{"counter":2,"seen":["first","second"],"fromFirst":"set by first","date":true}"#]
    );
    assert_eq!(log(BetweenTests::Fresh), [r#"{"counter":1,"seen":["second"],"fromFirst":"unset","date":true}"#]);
}
