//! Neatest: a run is a function of its seed (digest, networks and dynamic suite), its dynamic
//! suite replays as it was generated, and a network judges a program by the events it offers.

use std::sync::Arc;

use clowder_testgen::neatest::replay::{ReplayOptions, replay_suite};
use clowder_testgen::neatest::{DynamicSuite, VersionHint};
use clowder_testgen::testkit::{Arg, ProjectBuilder};
use clowder_testgen::{Algorithm, AlgorithmConfig, Budget, RunOutcome, generate};
use clowder_vm::Project;

/// A small game: keys move a sprite; a branch needs the sprite far right; a click ends it.
fn game() -> Project {
    let mut p = ProjectBuilder::new();
    p.global_var("score");
    let a = p.sprite("Player");
    let t = p.t(a);
    let flag = t.when_flag();
    let set = t.set_var("score", Arg::n(0.0));
    let x = t.var("score");
    let cond = t.gt(Arg::b(&x), Arg::n(3.0));
    let hide = t.hide();
    let iff = t.if_(&cond, &[hide]);
    let fe = t.forever(&[iff]);
    t.script(flag, &[set, fe]);
    let k = t.when_key("right arrow");
    let ch = t.change_var("score", Arg::n(1.0));
    let m = t.move_steps(10.0);
    t.script(k, &[ch, m]);
    let k = t.when_key("left arrow");
    let m = t.move_steps(-10.0);
    t.script(k, &[m]);
    p.load()
}

fn config() -> AlgorithmConfig {
    let mut cfg = AlgorithmConfig::new(Algorithm::Neatest);
    for (k, v) in [("population_size", 10), ("number_of_species", 2), ("stable_count", 2), ("play_steps", 300)] {
        cfg.params.insert(k.to_string(), serde_json::json!(v));
    }
    cfg
}

fn run(p: &Arc<Project>, seed: u64) -> RunOutcome {
    let out = generate(Arc::clone(p), &config(), seed, Budget::Steps(30_000), &mut |_| {});
    out.unwrap_or_else(|e| panic!("neatest run failed: {e}"))
}

#[test]
fn a_neatest_run_is_a_function_of_its_seed() {
    let p = Arc::new(game());
    let a = run(&p, 3);
    let b = run(&p, 3);
    assert_eq!(a.digest, b.digest);
    assert_eq!(a.dynamic_suite, b.dynamic_suite);
    let reliable = a.reliable_covered.unwrap_or(0);
    assert!(reliable > 0, "the green flag script is covered on every seed");
    assert!(reliable <= a.covered, "reliable coverage {reliable} exceeds coverage {}", a.covered);
    assert!(a.steps <= 30_000);
}

#[test]
fn a_dynamic_suite_replays_deterministically_and_covers_what_it_was_kept_for() {
    let p = Arc::new(game());
    let out = run(&p, 1);
    let text = out.dynamic_suite.unwrap_or_default();
    let suite = DynamicSuite::from_json(&text, VersionHint::Auto).unwrap_or_else(|e| panic!("reloading: {e}"));
    assert!(!suite.networks.is_empty());
    // Saving the loaded suite gives the same file.
    assert_eq!(suite.to_json(), text);
    let opts = ReplayOptions::default();
    let r1 = replay_suite(Arc::clone(&p), &suite, 1, &opts).unwrap_or_else(|e| panic!("{e}"));
    let r2 = replay_suite(Arc::clone(&p), &suite, 1, &opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r1, r2);
    let best = r1.iter().map(|r| r.suite_covered).max().unwrap_or(0);
    assert!(best > 0 && best <= r1[0].total_statements);
}

#[test]
fn a_slower_whisker_machine_plays_fewer_steps_before_the_suites_wall_clock_timeout() {
    let p = Arc::new(game());
    let text = run(&p, 1).dynamic_suite.unwrap_or_default();
    let suite = DynamicSuite::from_json(&text, VersionHint::Auto).unwrap_or_else(|e| panic!("reloading: {e}"));
    let timeout_ms = suite.timeout().unwrap_or(10_000.0);
    let ideal = replay_suite(Arc::clone(&p), &suite, 1, &ReplayOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    // The game never ends by itself: at acceleration 10 a network plays the whole timeout.
    let full = (timeout_ms / 1000.0 * 10.0 * 30.0).ceil() as u64;
    assert!(ideal.iter().all(|r| r.steps == full), "{ideal:?}");
    // On a machine whose steps take timeout/20 ms, the timeout ends every playthrough at 20 steps.
    let slow = ReplayOptions { whisker_wall_ms: Some(timeout_ms / 20.0), ..ReplayOptions::default() };
    let rows = replay_suite(Arc::clone(&p), &suite, 1, &slow).unwrap_or_else(|e| panic!("{e}"));
    assert!(!rows.is_empty() && rows.iter().all(|r| r.steps == 20), "{rows:?}");
}

#[test]
fn a_network_without_outputs_for_the_offered_events_judges_the_program_faulty() {
    // One input, one output: a network that only knows how to wait.
    let text = r#"{"Configs": {"timeout": 1000, "eventSelection": "activation"},
      "Networks": {"Network 0": {"id": 1, "aF": "RELU", "cM": "fully",
        "Nodes": {"Node 0": {"id": 0, "t": "I", "aF": "NONE", "sprite": "Player", "feature": "X"},
                  "Node 1": {"id": 1, "t": "C", "aF": "NONE", "event": "WaitEvent", "d": 1},
                  "Node 2": {"id": 2, "t": "R", "aF": "NONE", "event": "WaitEvent", "eventP": "Duration", "d": 1}},
        "Cons": {"Con 0": {"s": 0, "t": 1, "w": 1.0, "e": true, "i": 0, "r": false},
                 "Con 1": {"s": 0, "t": 2, "w": 0.5, "e": true, "i": 1, "r": false}}}}}"#;
    let suite = DynamicSuite::from_json(text, VersionHint::Auto).unwrap_or_else(|e| panic!("{e}"));
    let rows = replay_suite(Arc::new(game()), &suite, 1, &ReplayOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert!(r.new_events.iter().any(|e| e == "KeyPressEvent-right arrow"), "{:?}", r.new_events);
    assert_eq!(r.verdict, "fail");
    // The flag script ran: its statements are covered.
    assert!(r.covered_statements > 0);
}

#[test]
fn judged_against_itself_a_program_passes_and_against_a_changed_one_fails() {
    use clowder_testgen::neatest::replay::Reference;
    let p = Arc::new(game());
    let out = run(&p, 2);
    let suite = DynamicSuite::from_json(&out.dynamic_suite.unwrap_or_default(), VersionHint::Auto)
        .unwrap_or_else(|e| panic!("{e}"));
    let opts =
        ReplayOptions { reference: Some(Reference { project: Arc::clone(&p), seeds: 30 }), ..Default::default() };
    let same = replay_suite(Arc::clone(&p), &suite, 1, &opts).unwrap_or_else(|e| panic!("{e}"));
    assert!(same.iter().all(|r| r.verdict == "pass" && r.surprise_count == 0), "{same:?}");
    // The same game where the left arrow is the space key: a new event for every network.
    let mut b = ProjectBuilder::new();
    b.global_var("score");
    let a = b.sprite("Player");
    let t = b.t(a);
    let flag = t.when_flag();
    let set = t.set_var("score", Arg::n(0.0));
    t.script(flag, &[set]);
    let k = t.when_key("space");
    let m = t.move_steps(-10.0);
    t.script(k, &[m]);
    let changed = Arc::new(b.load());
    let judged = replay_suite(changed, &suite, 1, &opts).unwrap_or_else(|e| panic!("{e}"));
    assert!(judged.iter().any(|r| r.verdict == "fail"), "{judged:?}");
}

/// A branch only a drag reaches: the cat says hello when it touches the goal, which sits in a
/// corner, and nothing but the green flag moves anything.
fn drag_only() -> Project {
    let mut p = ProjectBuilder::new();
    let cat = p.sprite("Cat");
    let goal = p.sprite("Goal");
    let t = p.t(cat);
    let flag = t.when_flag();
    let cond = t.touching("Goal");
    let hello = t.say(Arg::t("hello"));
    let iff = t.if_(&cond, &[hello]);
    let fe = t.forever(&[iff]);
    t.script(flag, &[fe]);
    let g = p.t(goal);
    let flag = g.when_flag();
    let go = g.goto_xy(Arg::n(200.0), Arg::n(150.0));
    g.script(flag, &[go]);
    p.load()
}

#[test]
fn networks_drag_only_when_asked() {
    let p = Arc::new(drag_only());
    let play = |drags: bool| {
        let mut cfg = config();
        cfg.params.insert("drag_events".into(), serde_json::json!(drags));
        generate(Arc::clone(&p), &cfg, 1, Budget::Steps(30_000), &mut |_| {})
            .unwrap_or_else(|e| panic!("neatest run failed: {e}"))
    };
    // As Whisker: no drags, so the branch stays uncovered.
    let without = play(false);
    assert!(without.covered < without.total_targets, "{} of {}", without.covered, without.total_targets);
    assert!(!without.dynamic_suite.unwrap_or_default().contains("dragEvents"));
    let with = play(true);
    assert_eq!(with.covered, with.total_targets, "a drag onto the goal covers the branch");
    let text = with.dynamic_suite.unwrap_or_default();
    let suite = DynamicSuite::from_json(&text, VersionHint::Auto).unwrap_or_else(|e| panic!("reloading: {e}"));
    // The suite says its networks drag, so its replays offer drags again.
    let rows = replay_suite(Arc::clone(&p), &suite, 5, &ReplayOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let best = rows.iter().map(|r| r.suite_covered).max().unwrap_or(0);
    assert_eq!(best, rows[0].total_statements, "replayed on a new seed, the drag covers it again");
}
