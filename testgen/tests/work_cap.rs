//! The work cap: a runaway run ends at the same point on every machine, with its partial
//! result and the phase that reached the cap; a cap the run never reaches changes nothing.

use std::sync::Arc;

use clowder_testgen::testkit::{Arg, ProjectBuilder};
use clowder_testgen::{Algorithm, AlgorithmConfig, Budget, RunOptions, RunOutcome, generate_with};
use clowder_vm::Project;

/// A program whose every frame runs a warp procedure of 2 000 loop iterations (thousands of
/// block executions), plus branches on key presses for the search to cover and one it never
/// can (so full coverage never ends the search first).
fn runaway() -> Project {
    let mut p = ProjectBuilder::new();
    p.global_var("x");
    let a = p.sprite("A");
    let t = p.t(a);
    let def = t.define_warp("heavy");
    let ch = t.change_var("x", Arg::n(1.0));
    let rep = t.repeat(Arg::n(2_000.0), &[ch]);
    t.script(def, &[rep]);
    let flag = t.when_flag();
    let call = t.call("heavy");
    let x = t.var("x");
    let never = t.lt(Arg::b(&x), Arg::n(0.0));
    let unreachable = t.say(Arg::t("never"));
    let iff = t.if_(&never, &[unreachable]);
    let fe = t.forever(&[call, iff]);
    t.script(flag, &[fe]);
    for key in ["space", "left arrow", "up arrow"] {
        let k = t.when_key(key);
        let s = t.say(Arg::t(key));
        t.script(k, &[s]);
    }
    p.load()
}

fn run(p: &Arc<Project>, alg: Algorithm, cap: u64, steps: u64) -> RunOutcome {
    let opts = RunOptions { work_cap: cap, ..RunOptions::default() };
    generate_with(Arc::clone(p), &AlgorithmConfig::new(alg), 5, Budget::Steps(steps), &opts, &mut |_| {}).expect("run")
}

#[test]
fn a_runaway_run_ends_at_the_cap_with_its_partial_result() {
    let p = Arc::new(runaway());
    for alg in [Algorithm::Random, Algorithm::Mosa, Algorithm::Mio] {
        let cap = 4_000_000;
        let a = run(&p, alg, cap, 20_000);
        assert_eq!(a.limit.as_deref(), Some("search"), "{}: the cap ends the search", alg.name());
        assert!(a.steps < 20_000, "{}: the search stopped early ({} steps)", alg.name(), a.steps);
        // The search stops at the first step that starts at or past the cap.
        assert!(a.work >= cap, "{}: work {} reached the cap", alg.name(), a.work);
        assert!(a.covered > 0 && !a.timeline.is_empty() && !a.suite.is_empty(), "{}: a partial result", alg.name());
        // The same point every time: nothing but the counted work decides it.
        let b = run(&p, alg, cap, 20_000);
        assert_eq!((a.digest, a.steps, a.work), (b.digest.clone(), b.steps, b.work), "{}", alg.name());
        // A larger step budget does not change where the cap stops the run.
        let c = run(&p, alg, cap, 40_000);
        assert_eq!((b.digest, b.steps), (c.digest, c.steps), "{}", alg.name());
    }
}

#[test]
fn a_cap_that_is_not_reached_changes_nothing() {
    let p = Arc::new(runaway());
    for alg in [Algorithm::Random, Algorithm::Mio] {
        let free = run(&p, alg, 0, 300);
        assert_eq!(free.limit, None);
        let capped = run(&p, alg, free.work * 4, 300);
        assert_eq!(capped.limit, None, "{}", alg.name());
        assert_eq!(capped.digest, free.digest, "{}", alg.name());
        assert_eq!(capped.work, free.work, "{}: work is counted the same way with or without a cap", alg.name());
    }
}
