//! The 16 example suites of se2p/whisker (`whisker-web/src/examples/*Test.js`, branch
//! master) on their whisker-rq1 games. The suites are read from `CLOWDER_WHISKER_EXAMPLES`
//! (a folder of `*Test.js` files extracted from the whisker mirror, outside the repository)
//! and the games from `CLOWDER_CORPORA/whisker-rq1`; the test skips visibly without them.

use std::path::PathBuf;
use std::sync::Arc;

use clowder_suites::{Limits, Status, Suite};

fn dirs() -> Option<(PathBuf, PathBuf)> {
    let examples = PathBuf::from(std::env::var_os("CLOWDER_WHISKER_EXAMPLES")?);
    let corpora =
        std::env::var_os("CLOWDER_CORPORA").map_or_else(|| PathBuf::from("../../shared/corpora"), PathBuf::from);
    let games = corpora.join("whisker-rq1");
    (examples.is_dir() && games.is_dir()).then_some((examples, games))
}

#[test]
fn example_suites_pass_on_their_games() {
    let Some((examples, games)) = dirs() else {
        eprintln!("SKIP: set CLOWDER_WHISKER_EXAMPLES (and CLOWDER_CORPORA) to run the Whisker example suites");
        return;
    };
    let only = std::env::var("CLOWDER_WHISKER_ONLY").ok();
    let mut names: Vec<String> = std::fs::read_dir(&examples)
        .expect("examples folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|f| f.strip_suffix("Test.js").map(str::to_string))
        .filter(|n| only.as_deref().is_none_or(|o| o == n))
        .collect();
    names.sort();
    let (mut pass, mut total, mut errors) = (0, 0, 0);
    for name in names {
        let game = games.join(format!("{name}.sb3"));
        if !game.is_file() {
            continue;
        }
        // Nine of the suites call `t.wait(steps)`, which Whisker bound until December 2021 and
        // neither emse22 nor master has (their tests are errors in the real Whisker, and in
        // clowder): each test function gets it back here, as `runForSteps`.
        let path = examples.join(format!("{name}Test.js"));
        let source = std::fs::read_to_string(&path).expect("suite readable").replace(
            "async function (t) {",
            "async function (t) { if (!('wait' in t)) { t.wait = s => t.runForSteps(s); }",
        );
        let suite = Suite::from_source(&format!("{name}Test.js"), &source).expect("suite loads");
        let project = Arc::new(clowder_vm::Project::load_path(&game, &Default::default()).expect("game loads"));
        let r = clowder_suites::run_project(&suite, &project, &name, 1, &Limits::default());
        for row in &r.rows {
            if row.status != Status::Pass {
                eprintln!(
                    "  {name} #{} {} [{}] {} (steps {})",
                    row.index,
                    row.test,
                    row.status.as_str(),
                    row.message,
                    row.steps
                );
            }
        }
        eprintln!("{name}: {}/{} pass", r.count(Status::Pass), r.rows.len());
        pass += r.count(Status::Pass);
        total += r.rows.len();
        errors += r.count(Status::Error);
    }
    eprintln!("all: {pass}/{total} pass");
    assert_eq!(errors, 0, "no test of an example suite may end in an error");
    // docs/testing.md explains each of the 13 tests that do not pass (seed 1); BoatRace's 12
    // are the real Whisker's own failures (emse22: 20 of 32 pass there too).
    if only.is_none() && total == 120 {
        assert!(pass >= 107, "{pass}/120 example tests pass; 107 did when the failures were explained");
    }
}

/// A FruitCatching mutant whose bowl never moves (`SDM-000001`: the bowl's green-flag script
/// deleted), graded by the example suite: the real Whisker (emse22, seed 1) fails "Apple Points
/// Test" there, because emse22's `assume.equal('ground', 'bowl')` holds (it calls any two
/// non-numeric strings equal), so the test goes on and finds no points for the apple. Until
/// `+sem12` clowder skipped it (the assumption failed here).
#[test]
fn a_fruit_catching_mutant_is_judged_by_emse22s_assertions() {
    let Some((examples, games)) = dirs() else {
        eprintln!("SKIP: set CLOWDER_WHISKER_EXAMPLES (and CLOWDER_CORPORA) to run the Whisker example suites");
        return;
    };
    let source = std::fs::read_to_string(examples.join("FruitCatchingTest.js")).expect("suite readable");
    let suite = Suite::from_source("FruitCatchingTest.js", &source).expect("suite loads");
    let game =
        clowder_vm::Project::load_path(&games.join("FruitCatching.sb3"), &Default::default()).expect("game loads");
    let all = clowder_testgen::mutation::enumerate(&game);
    let m = all.iter().find(|m| m.id == "SDM-000001").expect("the mutant exists");
    let mutant = clowder_testgen::mutation::mutate(&game, m).expect("the mutant builds");
    let r = clowder_suites::run_project(&suite, &Arc::new(mutant), "SDM-000001", 1, &Limits::default());
    let row = r.rows.iter().find(|r| r.test == "Apple Points Test").expect("the test ran");
    assert_eq!(row.status, Status::Fail, "{}", row.message);
    assert!(row.message.contains("5 points"), "{}", row.message);
}

/// The verdicts of `test` on mutant `mutant_id` of `game` with its example suite, with the
/// tests sharing one VM as in Whisker and with every test on a fresh one.
fn verdicts_both_ways(game_name: &str, mutant_id: &str, test: &str) -> Option<(Status, Status)> {
    let (examples, games) = dirs()?;
    let source = std::fs::read_to_string(examples.join(format!("{game_name}Test.js"))).expect("suite readable");
    let suite = Suite::from_source(&format!("{game_name}Test.js"), &source).expect("suite loads");
    let game = clowder_vm::Project::load_path(&games.join(format!("{game_name}.sb3")), &Default::default())
        .expect("game loads");
    let all = clowder_testgen::mutation::enumerate(&game);
    let m = all.iter().find(|m| m.id == mutant_id).expect("the mutant exists");
    let mutant = Arc::new(clowder_testgen::mutation::mutate(&game, m).expect("the mutant builds"));
    let status = |between_tests| {
        let limits = Limits { between_tests, ..Limits::default() };
        let r = clowder_suites::run_project(&suite, &mutant, mutant_id, 1, &limits);
        let row = r.rows.iter().rev().find(|r| r.test == test).expect("the test ran");
        eprintln!("{mutant_id} {between_tests:?}: {} {}", row.status.as_str(), row.message);
        row.status
    };
    Some((status(clowder_suites::BetweenTests::Whisker), status(clowder_suites::BetweenTests::Fresh)))
}

/// BoatRace `SDM-000002` deletes the boat's green-flag script, so nothing sets the boat's
/// look or rotation at the start: in the real Whisker "boat stop after move" fails in the
/// suite ("Boat did move y": it starts from what the previous tests left that Whisker's reset
/// does not restore) and passes when run alone, as here.
#[test]
fn boat_race_mutant_verdict_depends_on_the_tests_before_it_as_in_whisker() {
    let Some((shared, fresh)) = verdicts_both_ways("BoatRace", "SDM-000002", "boat stop after move") else {
        eprintln!("SKIP: set CLOWDER_WHISKER_EXAMPLES (and CLOWDER_CORPORA) to run the Whisker example suites");
        return;
    };
    assert_eq!((shared, fresh), (Status::Fail, Status::Pass));
}

/// FruitCatching `SBD-000019` deletes the apple's `show` after a catch: an earlier test leaves
/// the apple hidden, and Whisker's reset assigns `visible` but leaves the renderer's drawable
/// hidden, so the bowl never touches it: "Apple Points Test" fails in the suite in the real
/// Whisker and passes alone (+5 points at step 57), as here.
#[test]
fn fruit_catching_mutant_sees_the_hidden_drawable_an_earlier_test_left_as_in_whisker() {
    let Some((shared, fresh)) = verdicts_both_ways("FruitCatching", "SBD-000019", "Apple Points Test") else {
        eprintln!("SKIP: set CLOWDER_WHISKER_EXAMPLES (and CLOWDER_CORPORA) to run the Whisker example suites");
        return;
    };
    assert_eq!((shared, fresh), (Status::Fail, Status::Pass));
}

/// BoatRace `SDM-000002` again: an earlier test crashed the boat, and Whisker's reset assigns
/// costume 0 while the renderer keeps the crash costume, whose larger shape reaches the gate.
/// In "boat crash gate costume" the boat's move into the gate and its own `switch costume`
/// (which hands the field to the renderer) happen in one step; the test's `onSpriteMoved`
/// callback runs inside the move, so it sees the crash costume the renderer still showed and
/// the touch (the real Whisker: pass in the suite, fail alone). Until `+sem20` the replayed
/// move showed the end of the step's renderer copy with the move's costume field: no touch.
#[test]
fn boat_race_mutant_move_callback_sees_the_renderers_costume_of_the_moment_as_in_whisker() {
    let Some((shared, fresh)) = verdicts_both_ways("BoatRace", "SDM-000002", "boat crash gate costume") else {
        eprintln!("SKIP: set CLOWDER_WHISKER_EXAMPLES (and CLOWDER_CORPORA) to run the Whisker example suites");
        return;
    };
    assert_eq!((shared, fresh), (Status::Pass, Status::Fail));
}
