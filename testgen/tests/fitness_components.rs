//! Each fitness component on small hand-made projects: approach level across
//! a broadcast, branch distance of `x > 50`, touching distance, control-flow
//! distance in a long script, `repeat` remaining iterations, remaining wait
//! time; and the combination `2·AL + α(BD) + (BD > 0 ? 1 : α(CFD))`.

use std::sync::Arc;

use clowder_testgen::events::Event;
use clowder_testgen::execution::replay_once;
use clowder_testgen::fitness::{Components, FitnessModel, Scratch, alpha};
use clowder_testgen::testkit::{Arg, ProjectBuilder};
use clowder_testgen::trace::Trace;
use clowder_testgen::{Algorithm, AlgorithmConfig, Params};
use clowder_vm::Project;

fn params() -> Params {
    Params::from_config(&AlgorithmConfig::new(Algorithm::Mio)).expect("defaults")
}

struct Fixture {
    project: Arc<Project>,
    model: FitnessModel,
}

impl Fixture {
    fn new(p: &ProjectBuilder) -> Self {
        let project = Arc::new(p.load());
        let model = FitnessModel::new(&project);
        Self { project, model }
    }

    fn target(&self, sprite: usize, id: &str) -> usize {
        let b =
            self.project.blocks.iter().position(|b| b.id == id && b.target as usize == sprite).expect("block exists")
                as u32;
        self.model.target_of(b).expect("block is a target")
    }

    fn run(&self, events: &[Event]) -> Trace {
        replay_once(Arc::clone(&self.project), &self.model, &params(), 1, events)
    }

    fn comp(&self, t: usize, tr: &Trace) -> Components {
        self.model.components(t, tr, &mut Scratch::default())
    }

    /// The measured-distance slot of a block (for synthetic traces).
    fn slot(&self, sprite: usize, id: &str) -> usize {
        let b = self.project.blocks.iter().position(|b| b.id == id && b.target as usize == sprite).expect("block");
        self.model.measured_blocks().iter().position(|m| *m as usize == b).expect("measured block")
    }
}

fn wait(steps: u32) -> Event {
    Event::Wait { steps }
}

fn key(k: &str) -> Event {
    Event::KeyPress { key: k.into(), steps: 1 }
}

/// Sprite A: flag → set x to 10 → forever { if x > 50 then broadcast go };
/// space → change x by 30. Sprite B: when I receive go → say hi.
fn broadcast_program() -> (ProjectBuilder, String, String, String) {
    let mut p = ProjectBuilder::new();
    p.global_var("x");
    p.message("go");
    let a = p.sprite("A");
    let b = p.sprite("B");
    let t = p.t(a);
    let flag = t.when_flag();
    let set = t.set_var("x", Arg::n(10.0));
    let x = t.var("x");
    let cond = t.gt(Arg::b(&x), Arg::n(50.0));
    let send = t.broadcast("go");
    let iff = t.if_(&cond, std::slice::from_ref(&send));
    let fe = t.forever(std::slice::from_ref(&iff));
    t.script(flag, &[set, fe]);
    let k = t.when_key("space");
    let ch = t.change_var("x", Arg::n(30.0));
    t.script(k, &[ch]);
    let t = p.t(b);
    let recv = t.when_receive("go");
    let say = t.say(Arg::t("hi"));
    t.script(recv, std::slice::from_ref(&say));
    (p, iff, send, say)
}

#[test]
fn approach_level_across_a_broadcast() {
    let (p, _iff, send, say) = broadcast_program();
    let f = Fixture::new(&p);
    let target = f.target(2, &say);
    // x = 10: the receiver's say is three dependences away: message event
    // (level 0) ← broadcast (1) ← if x > 50 (2, reached).
    let tr = f.run(&[wait(3)]);
    let c = f.comp(target, &tr);
    assert_eq!(c.approach_level, 2, "{c:?}");
    assert!(c.branch_distance > 0.0);
    assert_eq!(c.fitness, 4.0 + alpha(c.branch_distance) + 1.0);
    // The broadcast itself is one level closer to the if's true branch.
    assert_eq!(f.comp(f.target(1, &send), &tr).approach_level, 0);
    // Two presses: x = 70 > 50, the message arrives, the say runs.
    let tr = f.run(&[key("space"), key("space"), wait(3)]);
    assert_eq!(f.comp(target, &tr).fitness, 0.0);
}

#[test]
fn branch_distance_formula_with_a_measured_distance() {
    // The VM measures `x > 50` at x = 42 as true-distance 50 − 42 + 1 = 9
    // (Korel); the if's body then has fitness α(9) + 1.
    let (p, iff, send, _) = broadcast_program();
    let f = Fixture::new(&p);
    let mut tr = f.run(&[wait(3)]);
    tr.dist[f.slot(1, &iff)] = [9.0, 0.0];
    let c = f.comp(f.target(1, &send), &tr);
    assert_eq!((c.approach_level, c.branch_distance), (0, 9.0));
    assert_eq!(c.fitness, alpha(9.0) + 1.0);
}

#[test]
fn branch_distance_of_x_greater_than_50_measured_by_the_vm() {
    let (p, iff, send, _) = broadcast_program();
    let f = Fixture::new(&p);
    let target = f.target(1, &send);
    let bd = |events: &[Event]| f.comp(target, &f.run(events)).branch_distance;
    assert_eq!(bd(&[wait(3)]), 41.0, "x = 10: 50 − 10 + 1");
    assert_eq!(bd(&[key("space"), wait(3)]), 11.0, "x = 40: 50 − 40 + 1");
    let _ = iff;
}

/// A long straight script held up by a broadcast-and-wait whose receiver waits.
#[test]
fn control_flow_distance_in_a_long_script() {
    let mut p = ProjectBuilder::new();
    p.message("slow");
    let s = p.sprite("S");
    let t = p.t(s);
    let flag = t.when_flag();
    let bw = t.broadcast_wait("slow");
    let moves: Vec<String> = (0..4).map(|i| t.move_steps(i as f64)).collect();
    let say = t.say(Arg::t("end"));
    let mut body = vec![bw];
    body.extend(moves.iter().cloned());
    body.push(say.clone());
    t.script(flag, &body);
    let recv = t.when_receive("slow");
    let w = t.wait(10.0);
    t.script(recv, &[w]);
    let f = Fixture::new(&p);
    let tr = f.run(&[wait(5)]);
    for (i, m) in moves.iter().enumerate() {
        let c = f.comp(f.target(1, m), &tr);
        assert_eq!((c.approach_level, c.branch_distance, c.cfg_distance), (0, 0.0, i as u32 + 1), "move {i}");
        assert_eq!(c.fitness, alpha(i as f64 + 1.0));
    }
    let c = f.comp(f.target(1, &say), &tr);
    assert_eq!(c.cfg_distance, 5);
}

/// flag → repeat 10 { change x by 1 } → say.
fn repeat_program() -> (ProjectBuilder, String, String) {
    let mut p = ProjectBuilder::new();
    p.global_var("x");
    let s = p.sprite("S");
    let t = p.t(s);
    let flag = t.when_flag();
    let ch = t.change_var("x", Arg::n(1.0));
    let rep = t.repeat(Arg::n(10.0), &[ch]);
    let say = t.say(Arg::t("done"));
    t.script(flag, &[rep.clone(), say.clone()]);
    (p, rep, say)
}

#[test]
fn repeat_distance_with_a_measured_distance() {
    let (p, rep, say) = repeat_program();
    let f = Fixture::new(&p);
    let mut tr = f.run(&[wait(2)]);
    let c = f.comp(f.target(1, &say), &tr);
    assert_eq!(c.approach_level, 0, "the say depends on the loop's exit");
    tr.dist[f.slot(1, &rep)] = [0.0, 7.0];
    let c = f.comp(f.target(1, &say), &tr);
    assert_eq!(c.branch_distance, 7.0);
    assert_eq!(c.fitness, alpha(7.0) + 1.0);
}

#[test]
fn repeat_remaining_iterations_measured_by_the_vm() {
    let (p, _rep, say) = repeat_program();
    let f = Fixture::new(&p);
    let target = f.target(1, &say);
    let bd = |steps: u32| f.comp(target, &f.run(&[wait(steps)])).branch_distance;
    // One iteration per step: fewer remaining iterations the longer we wait.
    let (a, b) = (bd(2), bd(5));
    assert!(a > b && b > 0.0, "{a} > {b} > 0");
    assert_eq!(bd(20), 0.0);
}

/// flag → wait 2 secs → say.
fn wait_program() -> (ProjectBuilder, String, String) {
    let mut p = ProjectBuilder::new();
    let s = p.sprite("S");
    let t = p.t(s);
    let flag = t.when_flag();
    let w = t.wait(2.0);
    let say = t.say(Arg::t("late"));
    t.script(flag, &[w.clone(), say.clone()]);
    (p, w, say)
}

#[test]
fn remaining_wait_time_with_a_measured_distance() {
    let (p, w, say) = wait_program();
    let f = Fixture::new(&p);
    let mut tr = f.run(&[wait(10)]);
    let c = f.comp(f.target(1, &say), &tr);
    assert_eq!(c.approach_level, 0, "the say depends on the wait completing");
    tr.dist[f.slot(1, &w)] = [0.75, 0.0];
    assert_eq!(f.comp(f.target(1, &say), &tr).fitness, alpha(0.75) + 1.0);
    // Long enough: covered.
    assert_eq!(f.comp(f.target(1, &say), &f.run(&[wait(70)])).fitness, 0.0);
}

#[test]
fn remaining_wait_time_measured_by_the_vm() {
    let (p, _w, say) = wait_program();
    let f = Fixture::new(&p);
    let target = f.target(1, &say);
    let bd = |steps: u32| f.comp(target, &f.run(&[wait(steps)])).branch_distance;
    let (a, b) = (bd(10), bd(40));
    assert!(a > b && b > 0.0 && a <= 1.0, "remaining fraction shrinks: {a} > {b}");
}

/// A at (0, 0) with `if touching B then say`; B at (100, 0).
fn touching_program() -> (ProjectBuilder, String, String) {
    let mut p = ProjectBuilder::new();
    let a = p.sprite("A");
    let b = p.sprite("B");
    p.t(b).xy = (100.0, 0.0);
    let t = p.t(a);
    let flag = t.when_flag();
    let touch = t.touching("B");
    let say = t.say(Arg::t("ouch"));
    let iff = t.if_(&touch, std::slice::from_ref(&say));
    let fe = t.forever(std::slice::from_ref(&iff));
    t.script(flag, &[fe]);
    (p, iff, say)
}

#[test]
fn touching_distance_with_a_measured_distance() {
    let (p, iff, say) = touching_program();
    let f = Fixture::new(&p);
    let mut tr = f.run(&[wait(3)]);
    tr.dist[f.slot(1, &iff)] = [100.0, 0.0];
    let c = f.comp(f.target(1, &say), &tr);
    assert_eq!((c.approach_level, c.branch_distance), (0, 100.0));
}

#[test]
fn touching_distance_measured_by_the_vm() {
    let (p, _iff, say) = touching_program();
    let f = Fixture::new(&p);
    let c = f.comp(f.target(1, &say), &f.run(&[wait(3)]));
    assert_eq!(c.branch_distance, 100.0, "centre distance when not touching");
}

#[test]
fn fitness_without_measurements_falls_back_to_inferred_distances() {
    let (p, _iff, send, _) = broadcast_program();
    let f = Fixture::new(&p);
    let tr = f.run(&[wait(3)]);
    let c = f.comp(f.target(1, &send), &tr);
    if c.branch_distance.is_finite() && tr.dist.iter().all(|d| d[0].is_infinite()) {
        assert_eq!(c.branch_distance, 1.0, "the if's body was not entered");
    }
}

/// Sprite S: flag → wait 2 secs → say; flag → wait 1 sec → stop all.
#[test]
fn remaining_wait_time_is_the_minimum_over_the_execution() {
    let mut p = ProjectBuilder::new();
    let s = p.sprite("S");
    let t = p.t(s);
    let flag = t.when_flag();
    let w = t.wait(2.0);
    let say = t.say(Arg::t("late"));
    t.script(flag, &[w, say.clone()]);
    let flag2 = t.when_flag();
    let w1 = t.wait(1.0);
    let stop = t.stop("all");
    t.script(flag2, &[w1, stop]);
    let f = Fixture::new(&p);
    // The stop ends the two-second wait halfway; no thread waits at the end of
    // the test, but the trace keeps how close the wait came to completing.
    let c = f.comp(f.target(1, &say), &f.run(&[wait(80)]));
    assert_eq!(c.approach_level, 0);
    assert!(c.branch_distance > 0.4 && c.branch_distance < 0.6, "about half the wait was left: {c:?}");
}
