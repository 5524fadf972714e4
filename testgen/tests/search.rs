//! The algorithms on small programs where what they add over random testing matters.

use std::sync::Arc;

use clowder_testgen::testkit::{Arg, ProjectBuilder};
use clowder_testgen::{Algorithm, AlgorithmConfig, Budget, generate};

/// A statement behind a 40-second wait (1 200 steps): longer than a random
/// test usually lasts, reachable by extension local search's long waits.
fn long_wait() -> ProjectBuilder {
    let mut p = ProjectBuilder::new();
    let s = p.sprite("S");
    let t = p.t(s);
    let flag = t.when_flag();
    let w = t.wait(40.0);
    let say = t.say(Arg::t("finally"));
    t.script(flag, &[w, say]);
    p
}

/// A statement that needs five presses of space in one test.
fn counter() -> ProjectBuilder {
    let mut p = ProjectBuilder::new();
    p.global_var("n");
    let s = p.sprite("S");
    let t = p.t(s);
    let flag = t.when_flag();
    let set = t.set_var("n", Arg::n(0.0));
    t.script(flag, &[set]);
    let k = t.when_key("space");
    let ch = t.change_var("n", Arg::n(1.0));
    let n = t.var("n");
    let c = t.eq(Arg::b(&n), Arg::n(5.0));
    let say = t.say(Arg::t("five"));
    let iff = t.if_(&c, &[say]);
    t.script(k, &[ch, iff]);
    p
}

fn covered(p: &ProjectBuilder, alg: Algorithm, seed: u64, steps: u64) -> (f64, u64) {
    let o =
        generate(Arc::new(p.load()), &AlgorithmConfig::new(alg), seed, Budget::Steps(steps), &mut |_| {}).expect("run");
    assert!(o.covered <= o.total_targets);
    (o.coverage, o.steps)
}

#[test]
fn local_search_reaches_statements_behind_long_waits() {
    let p = long_wait();
    for alg in [Algorithm::Mosa, Algorithm::Mio] {
        let (cov, steps) = covered(&p, alg, 1, 180_000);
        assert_eq!(cov, 1.0, "{} covers the statement after the 40 s wait", alg.name());
        assert!(steps < 180_000, "{} stopped at full coverage", alg.name());
    }
}

#[test]
fn every_algorithm_covers_a_counter_program() {
    let p = counter();
    for alg in [Algorithm::Random, Algorithm::Mosa, Algorithm::Mio] {
        for seed in 1..=3 {
            assert_eq!(covered(&p, alg, seed, 60_000).0, 1.0, "{} seed {seed}", alg.name());
        }
    }
}

#[test]
fn suites_replay_to_the_reported_coverage() {
    // The minimised suite, replayed, covers every target the run reports covered.
    use clowder_testgen::execution::replay_once;
    use clowder_testgen::fitness::FitnessModel;
    let p = counter();
    let project = Arc::new(p.load());
    let model = FitnessModel::new(&project);
    let params = clowder_testgen::Params::from_config(&AlgorithmConfig::new(Algorithm::Mio)).expect("valid");
    for alg in [Algorithm::Random, Algorithm::Mosa, Algorithm::Mio] {
        let o = generate(Arc::clone(&project), &AlgorithmConfig::new(alg), 4, Budget::Steps(60_000), &mut |_| {})
            .expect("run");
        let mut union = vec![false; model.len()];
        for test in &o.suite {
            let tr = replay_once(Arc::clone(&project), &model, &params, 4, &test.events);
            for (t, u) in union.iter_mut().enumerate() {
                *u |= model.covers(t, &tr);
            }
        }
        assert_eq!(union.iter().filter(|u| **u).count() as u32, o.covered, "{}", alg.name());
        assert!(o.tests_after_min <= o.tests_before_min.max(1));
        assert!(o.events_after_min <= o.events_before_min);
    }
}
