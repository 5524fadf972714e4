//! Mutation analysis on hand-made projects with known verdicts, false
//! positives, and determinism of verdicts and digests.

use std::sync::Arc;

use clowder_testgen::assertions::{self, Assertion};
use clowder_testgen::config::Budget;
use clowder_testgen::events::{Event, EventInfo};
use clowder_testgen::execution::{Executor, RunCtx};
use clowder_testgen::mutation::analysis::Subject;
use clowder_testgen::mutation::{self, MutationMode, MutationReport, Operator, Verdict};
use clowder_testgen::result::{Test, TimelinePoint};
use clowder_testgen::testkit::{Arg, ProjectBuilder};
use clowder_testgen::{Algorithm, AlgorithmConfig, Params, Prepared, RunOptions};
use clowder_vm::Project;
use serde_json::json;

/// Cat: `when a key pressed: change x by (30 * 2)`; `when flag clicked: set score to 0`.
fn project() -> Project {
    let mut p = ProjectBuilder::new();
    p.global_var("score");
    p.global_var("lives");
    let c = p.sprite("Cat");
    let t = p.t(c);
    let mul = t.block("operator_multiply", json!({"NUM1": [1, [4, "30"]], "NUM2": [1, [4, "2"]]}), json!({}));
    let change = t.change_x(Arg::b(&mul));
    let hat = t.when_key("a");
    t.script(hat, &[change]);
    let flag = t.when_flag();
    let set = t.set_var("score", Arg::n(0.0));
    t.script(flag, &[set]);
    p.load()
}

struct Run {
    project: Arc<Project>,
    prepared: Prepared,
    info: EventInfo,
    params: Params,
    seed: u64,
}

impl Run {
    fn new(project: Project, seed: u64) -> Self {
        let project = Arc::new(project);
        let prepared = Prepared::new(&project);
        let info = EventInfo::new(&project, seed);
        let params = Params::from_config(&AlgorithmConfig::new(Algorithm::Random)).unwrap();
        Run { project, prepared, info, params, seed }
    }

    fn with_assertions(&self, events: Vec<Vec<Event>>) -> Vec<Test> {
        let mut sink = |_: &TimelinePoint| {};
        let ctx = RunCtx {
            project: Arc::clone(&self.project),
            model: &self.prepared.model,
            info: &self.info,
            params: &self.params,
            vm_seed: self.seed,
        };
        let mut exec = Executor::new(ctx, Budget::Executions(1), &mut sink);
        let mut suite: Vec<Test> = events.into_iter().map(|events| Test { events, ..Test::default() }).collect();
        assertions::add_to_suite(&mut exec, &mut suite);
        suite
    }

    fn subject(&self) -> Subject<'_> {
        Subject {
            project: Arc::clone(&self.project),
            model: &self.prepared.model,
            info: &self.info,
            params: &self.params,
            seed: self.seed,
        }
    }

    fn analyse(&self, suite: &[Test], mode: MutationMode) -> MutationReport {
        mutation::analyse(&self.subject(), suite, mode).expect("mode is on")
    }
}

fn press_a() -> Vec<Event> {
    vec![Event::KeyPress { key: "a".into(), steps: 1 }, Event::Wait { steps: 3 }]
}

fn verdict_of(r: &MutationReport, op: Operator, detail_prefix: &str) -> Verdict {
    r.verdicts
        .iter()
        .find(|v| v.operator == op && v.detail.starts_with(detail_prefix))
        .unwrap_or_else(|| panic!("no {op} {detail_prefix}"))
        .verdict
}

#[test]
fn known_verdicts() {
    let run = Run::new(project(), 1);
    let suite = run.with_assertions(vec![press_a()]);
    assert_eq!(
        suite[0].assertions[0],
        vec![Assertion::Position { target: assertions::TargetRef { sprite: "Cat".into(), clone: 0 }, x: 60.0, y: 0.0 }]
    );
    let r = run.analyse(&suite, MutationMode::All);
    assert_eq!(r.excluded_tests, 0);
    // x ends at 32, 28 or 15 instead of 60: beyond the ±5 tolerance.
    assert_eq!(verdict_of(&r, Operator::AOR, "operator_multiply"), Verdict::Killed);
    assert_eq!(verdict_of(&r, Operator::SBD, "delete motion_changexby"), Verdict::Killed);
    assert_eq!(verdict_of(&r, Operator::KRM, "a ->"), Verdict::Killed, "another key: the script never starts");
    assert_eq!(verdict_of(&r, Operator::SDM, "delete script of event_whenkeypressed"), Verdict::Killed);
    // Setting score to its initial value is invisible: equivalent mutants survive.
    assert_eq!(verdict_of(&r, Operator::SBD, "delete data_setvariableto"), Verdict::Survived);
    assert_eq!(verdict_of(&r, Operator::SDM, "delete script of event_whenflagclicked"), Verdict::Survived);
    let killed = r.verdicts.iter().filter(|v| v.verdict == Verdict::Killed).count() as u32;
    assert_eq!(r.total.killed, killed);
    assert_eq!(r.total.generated, r.verdicts.len() as u32);
    assert_eq!(r.score(), Some(f64::from(killed) / f64::from(r.total.generated)));
    let killer = r.verdicts.iter().find(|v| v.verdict == Verdict::Killed).unwrap();
    assert_eq!((killer.test, killer.event), (Some(0), Some(1)), "killed by test 0 after its first event");
    let aor = r.per_operator.iter().find(|s| s.operator == Some(Operator::AOR)).unwrap();
    assert_eq!((aor.generated, aor.killed, aor.score()), (1, 1, Some(1.0)));
}

#[test]
fn false_positives_are_excluded_and_counted() {
    let run = Run::new(project(), 1);
    let mut suite = run.with_assertions(vec![press_a(), press_a()]);
    // Test 1 expects the wrong position: it fails on the original already.
    suite[1].assertions[0] = vec![Assertion::Position {
        target: assertions::TargetRef { sprite: "Cat".into(), clone: 0 },
        x: -100.0,
        y: 0.0,
    }];
    let r = run.analyse(&suite, MutationMode::All);
    assert_eq!(r.excluded_tests, 1);
    assert!(r.verdicts.iter().all(|v| v.verdict != Verdict::Excluded), "test 0 still judges");
    assert!(r.verdicts.iter().filter(|v| v.verdict == Verdict::Killed).all(|v| v.test == Some(0)));

    // Only false positives: nothing can be judged.
    let only_bad = vec![suite[1].clone()];
    let r = run.analyse(&only_bad, MutationMode::All);
    assert_eq!(r.excluded_tests, 1);
    assert_eq!(r.total.excluded, r.total.generated);
    assert_eq!(r.score(), None);

    // No tests at all: nothing is detected.
    let r = run.analyse(&[], MutationMode::All);
    assert_eq!(r.total.survived, r.total.generated);
    assert_eq!(r.score(), Some(0.0));
}

#[test]
fn same_suite_and_mutants_give_the_same_verdicts() {
    let suite = Run::new(project(), 3).with_assertions(vec![press_a(), vec![Event::Wait { steps: 10 }]]);
    let first = Run::new(project(), 3).analyse(&suite, MutationMode::All);
    for _ in 0..3 {
        assert_eq!(Run::new(project(), 3).analyse(&suite, MutationMode::All), first);
    }
    let sampled = Run::new(project(), 3).analyse(&suite, MutationMode::SamplePerOperator(1));
    assert_eq!(sampled, Run::new(project(), 3).analyse(&suite, MutationMode::SamplePerOperator(1)));
    assert!(sampled.total.generated <= 8 && sampled.enumerated == first.enumerated);
}

#[test]
fn generated_runs_carry_verdicts_in_their_digest() {
    let cfg = AlgorithmConfig::new(Algorithm::Random);
    let run = |mode| {
        clowder_testgen::generate_with(
            Arc::new(project()),
            &cfg,
            5,
            Budget::Steps(3000),
            &RunOptions { mutation: mode, ..RunOptions::default() },
            &mut |_| {},
        )
        .unwrap()
    };
    let off = run(MutationMode::Off);
    let on = run(MutationMode::All);
    let again = run(MutationMode::All);
    assert!(off.mutation.is_none());
    assert_eq!(on.mutation, again.mutation);
    assert_eq!(on.digest, again.digest);
    assert_ne!(on.digest, off.digest, "the digest covers the verdicts");
    assert_eq!(on.suite, off.suite, "analysis does not change the suite");
    assert!(on.suite.iter().all(|t| t.assertions.len() == t.events.len()), "assertions after every event");
    let report = on.mutation.unwrap();
    assert_eq!(report.enumerated as usize, mutation::enumerate(&project()).len());
    assert!(report.total.killed > 0, "{report:?}");
}

/// The follow-up job on a stored suite (`analyse_suite`) gives the verdicts the run would have
/// had with mutation analysis on, for every algorithm and sampling mode.
#[test]
fn a_stored_suite_gets_the_verdicts_of_an_in_run_analysis() {
    for algorithm in [Algorithm::Random, Algorithm::Mosa, Algorithm::Mio] {
        let cfg = AlgorithmConfig::new(algorithm);
        for mode in [MutationMode::All, MutationMode::SamplePerOperator(1)] {
            let run = |mutation| {
                clowder_testgen::generate_with(
                    Arc::new(project()),
                    &cfg,
                    7,
                    Budget::Steps(3000),
                    &RunOptions { mutation, ..RunOptions::default() },
                    &mut |_| {},
                )
                .unwrap()
            };
            let in_run = run(mode).mutation.expect("mutation analysis on");
            let stored = run(MutationMode::Off);
            let p = Arc::new(project());
            let prepared = Prepared::new(&p);
            let later = clowder_testgen::analyse_suite(p, &prepared, &cfg, 7, &stored.suite, mode).unwrap();
            assert_eq!(later.as_ref(), Some(&in_run), "{algorithm:?} {mode:?}");
        }
    }
    let mut cfg = AlgorithmConfig::new(Algorithm::Random);
    cfg.params.insert("assertions".into(), json!(false));
    let p = Arc::new(project());
    let prepared = Prepared::new(&p);
    assert!(clowder_testgen::analyse_suite(p, &prepared, &cfg, 7, &[], MutationMode::All).is_err());
}

#[test]
fn a_mutant_of_a_compiled_project_runs_its_own_program() {
    use clowder_vm::{Profile, Vm, VmOptions};
    let original = Arc::new(project());
    let x_after_a = |p: &Arc<Project>| {
        let mut vm = Vm::new(Arc::clone(p), VmOptions { profile: Profile::Default, ..Default::default() });
        vm.green_flag();
        vm.step();
        vm.key_down("a");
        vm.step();
        vm.step();
        let (_, cat) = vm.targets_in_execution_order().find(|(_, t)| !t.is_stage).unwrap();
        cat.x
    };
    assert_eq!(x_after_a(&original), 60.0, "the original is compiled and run first");
    let aor = mutation::enumerate(&original).into_iter().find(|m| m.operator == Operator::AOR).unwrap();
    let mutant = Arc::new(mutation::mutate(&original, &aor).unwrap());
    let expected = match &aor.edit {
        mutation::Edit::SetOpcode { opcode, .. } => match opcode.as_str() {
            "operator_add" => 32.0,
            "operator_subtract" => 28.0,
            _ => 15.0,
        },
        e => panic!("{e:?}"),
    };
    assert_eq!(x_after_a(&mutant), expected, "{}", aor.detail);
    assert_eq!(x_after_a(&original), 60.0, "the original is untouched");
}

/// Skipping the tests that never reach a mutant's edit changes nothing in the report: the
/// same verdicts, killing tests and events, and replayed steps as replaying every test.
#[test]
fn skipping_unreached_tests_gives_the_exhaustive_report() {
    let mut p = ProjectBuilder::new();
    p.global_var("score");
    let c = p.sprite("Cat");
    let t = p.t(c);
    let flag = t.when_flag();
    let set = t.set_var("score", Arg::n(0.0));
    let score = t.var("score");
    let gt = t.gt(Arg::b(&score), Arg::n(1.0));
    let add = t.block("operator_add", json!({"NUM1": [1, [4, "1"]], "NUM2": [1, [4, "2"]]}), json!({}));
    let then = t.change_x(Arg::b(&add));
    let els = t.move_steps(10.0);
    let branch = t.if_else(&gt, &[then], &[els]);
    let forever = t.forever(&[branch]);
    t.script(flag, &[set, forever]);
    let key_a = t.when_key("a");
    let mul = t.block("operator_multiply", json!({"NUM1": [1, [4, "30"]], "NUM2": [1, [4, "2"]]}), json!({}));
    let change = t.change_x(Arg::b(&mul));
    let more = t.change_var("score", Arg::n(1.0));
    t.script(key_a, &[change, more]);
    let key_b = t.when_key("b");
    let hi = t.say(Arg::t("hi"));
    t.script(key_b, &[hi]);
    let run = Run::new(p.load(), 5);
    let b = vec![Event::KeyPress { key: "b".into(), steps: 1 }, Event::Wait { steps: 2 }];
    let idle = vec![Event::Wait { steps: 4 }];
    let twice = [press_a(), press_a()].concat();
    let suite = run.with_assertions(vec![idle, press_a(), twice, b]);
    let subject = run.subject();
    let fast = mutation::analyse(&subject, &suite, MutationMode::All).expect("on");
    let every = mutation::analysis::analyse_exhaustive(&subject, &suite, MutationMode::All).expect("on");
    assert_eq!(fast, every);
    assert!(fast.total.killed > 0 && fast.total.survived > 0, "both verdicts occur: {:?}", fast.total);
}

/// Judging on several threads gives the report and the work of one thread (verdicts in mutant
/// order, work summed), tells the plan before the first verdict and every verdict once; the
/// plan replays only reached mutants and expects no more work than its bound.
#[test]
fn parallel_analysis_equals_the_sequential_one_and_reports_its_plan() {
    use clowder_testgen::mutation::analysis::Progress;
    let cfg = AlgorithmConfig::new(Algorithm::Mio);
    let p = Arc::new(project());
    let prepared = Prepared::new(&p);
    let stored = clowder_testgen::generate_prepared_with(
        Arc::clone(&p),
        &prepared,
        &cfg,
        3,
        Budget::Steps(3000),
        &RunOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    let analyse = |workers, progress: &mut dyn FnMut(&Progress)| {
        let p = Arc::clone(&p);
        clowder_testgen::analyse_suite_parallel(
            p,
            &prepared,
            &cfg,
            3,
            &stored.suite,
            MutationMode::All,
            None,
            workers,
            progress,
        )
        .unwrap()
        .unwrap()
    };
    let one = analyse(1, &mut |_| {});
    let mut plans = Vec::new();
    let mut judged = Vec::new();
    let three = analyse(3, &mut |e| match e {
        Progress::Plan(plan) => plans.push((*plan, judged.len())),
        Progress::Judged { done, verdict, .. } => judged.push((*done, verdict.mutant_id.clone())),
    });
    assert_eq!(one.0, three.0);
    assert_eq!(one.1.by_kind(), three.1.by_kind());
    assert_eq!(plans.len(), 1);
    let (plan, before) = plans[0];
    assert_eq!(before, 0, "the plan comes before the first verdict");
    assert_eq!(plan.mutants, one.0.verdicts.len());
    assert!(plan.replayed > 0 && plan.replayed <= plan.mutants, "{plan:?}");
    assert!(plan.expected_work <= plan.bound_work, "{plan:?}");
    assert_eq!(judged.iter().map(|(d, _)| *d).collect::<Vec<_>>(), (1..=plan.mutants).collect::<Vec<_>>());
    let mut ids: Vec<_> = judged.into_iter().map(|(_, id)| id).collect();
    ids.sort();
    let mut want: Vec<_> = one.0.verdicts.iter().map(|v| v.mutant_id.clone()).collect();
    want.sort();
    assert_eq!(ids, want);
}

/// A work cap on the analysis stops it at the same mutant for any number of threads: the
/// mutants judged are a seeded subset, each with its uncapped verdict, and the rest are
/// counted as unjudged (and the report without a cap serialises as before).
#[test]
fn a_capped_analysis_judges_the_same_seeded_subset_on_any_number_of_threads() {
    let cfg = AlgorithmConfig::new(Algorithm::Mio);
    let p = Arc::new(project());
    let prepared = Prepared::new(&p);
    let opts = RunOptions::default();
    let stored = clowder_testgen::generate_prepared_with(
        Arc::clone(&p),
        &prepared,
        &cfg,
        3,
        Budget::Steps(3000),
        &opts,
        &mut |_| {},
    )
    .unwrap();
    let analyse = |cap, workers| {
        clowder_testgen::analyse_suite_parallel(
            Arc::clone(&p),
            &prepared,
            &cfg,
            3,
            &stored.suite,
            MutationMode::All,
            cap,
            workers,
            &mut |_| {},
        )
        .unwrap()
        .unwrap()
    };
    let all = analyse(None, 1).0;
    assert_eq!(all.unjudged, 0);
    assert!(!serde_json::to_string(&all).unwrap().contains("unjudged"), "uncapped reports unchanged");
    // A cap of 1 stops before the first mutant (the baseline's work is above it); one unit
    // above the baseline's work lets exactly one mutant in.
    let (none, baseline) = analyse(Some(1), 1);
    assert!(none.verdicts.is_empty() && none.unjudged as usize == all.verdicts.len());
    let cap = Some(baseline.total() + 1);
    let one = analyse(cap, 1);
    let three = analyse(cap, 3);
    assert_eq!(one.0, three.0, "the cap falls on the same mutant");
    assert_eq!(one.1.by_kind(), three.1.by_kind());
    let r = &one.0;
    assert_eq!(r.verdicts.len(), 1, "{} judged, {} unjudged", r.verdicts.len(), r.unjudged);
    assert_eq!(r.verdicts.len() as u32 + r.unjudged, all.verdicts.len() as u32);
    assert_eq!(r.total.generated, r.verdicts.len() as u32);
    for v in &r.verdicts {
        assert!(all.verdicts.contains(v), "{v:?} is the uncapped verdict");
    }
    assert_ne!(r.verdicts.first(), all.verdicts.first(), "a shuffled subset, not the first mutant");
}

/// An edge-activated hat evaluates its input every step (executing the hat) without firing:
/// a mutant of that input is reached and killed although the original never fired the hat.
#[test]
fn an_edit_in_an_edge_activated_hat_is_replayed_and_killed() {
    let mut p = ProjectBuilder::new();
    let c = p.sprite("Cat");
    let t = p.t(c);
    // `when timer > (5 + 5)`: ten seconds, beyond the test; `5 - 5` fires at once.
    let add = t.block("operator_add", json!({"NUM1": [1, [4, "5"]], "NUM2": [1, [4, "5"]]}), json!({}));
    let hat = t.when_greater_than("TIMER", Arg::b(&add));
    let hi = t.say(Arg::t("late"));
    let away = t.move_steps(50.0);
    t.script(hat, &[hi, away]);
    let flag = t.when_flag();
    let start = t.move_steps(10.0);
    t.script(flag, &[start]);
    let run = Run::new(p.load(), 1);
    let suite = run.with_assertions(vec![vec![Event::Wait { steps: 30 }]]);
    assert!(suite[0].assertions.iter().flatten().next().is_some(), "the test asserts something");
    let fast = run.analyse(&suite, MutationMode::All);
    assert_eq!(verdict_of(&fast, Operator::AOR, ""), Verdict::Killed, "{:?}", fast.verdicts);
    let subject = run.subject();
    let every = mutation::analysis::analyse_exhaustive(&subject, &suite, MutationMode::All).expect("on");
    assert_eq!(fast, every);
}

/// A test whose step is cut short by the operation budget (a warp loop that never ends) is
/// skipped for the mutants it does not reach, with the exhaustive report: the hang cuts the
/// mutant's run at the same operation, and a hat started in the cut step runs in neither.
#[test]
fn hanging_tests_skip_unreached_mutants_with_the_exhaustive_report() {
    let mut p = ProjectBuilder::new();
    p.global_var("score");
    p.message("go");
    let c = p.sprite("Cat");
    let t = p.t(c);
    let flag = t.when_flag();
    let home = t.goto_xy(Arg::n(0.0), Arg::n(0.0));
    let zero = t.set_var("score", Arg::n(0.0));
    t.script(flag, &[home, zero]);
    // `spin`: a warp loop that runs away in the step it starts.
    let def = t.define_warp("spin");
    let score = t.var("score");
    let huge = t.gt(Arg::b(&score), Arg::n(1e12));
    let more = t.change_var("score", Arg::n(1.0));
    let until = t.repeat_until(&huge, &[more]);
    t.script(def, &[until]);
    let key_a = t.when_key("a");
    let mul = t.block("operator_multiply", json!({"NUM1": [1, [4, "30"]], "NUM2": [1, [4, "2"]]}), json!({}));
    let change = t.change_x(Arg::b(&mul));
    let go = t.broadcast("go");
    let spin = t.call("spin");
    t.script(key_a, &[change, go, spin]);
    // Started by the broadcast in the step that hangs: stopped before it runs.
    let on_go = t.when_receive("go");
    let add = t.block("operator_add", json!({"NUM1": [1, [4, "1"]], "NUM2": [1, [4, "2"]]}), json!({}));
    let late = t.change_x(Arg::b(&add));
    t.script(on_go, &[late]);
    let key_b = t.when_key("b");
    let hi = t.say(Arg::t("hi"));
    t.script(key_b, &[hi]);
    let run = Run::new(p.load(), 3);
    let b = vec![Event::KeyPress { key: "b".into(), steps: 1 }, Event::Wait { steps: 2 }];
    let suite =
        run.with_assertions(vec![vec![Event::Wait { steps: 3 }], press_a(), b.clone(), [press_a(), b].concat()]);
    let subject = run.subject();
    assert!(mutation::Baseline::new(&subject, &suite).hanging_tests() >= 2, "the tests pressing a hang");
    let fast = mutation::analyse(&subject, &suite, MutationMode::All).expect("on");
    let every = mutation::analysis::analyse_exhaustive(&subject, &suite, MutationMode::All).expect("on");
    assert_eq!(fast, every);
    assert!(fast.total.killed > 0 && fast.total.survived > 0, "both verdicts occur: {:?}", fast.total);
    assert_eq!(verdict_of(&fast, Operator::AOR, "operator_add"), Verdict::Survived, "{:?}", fast.verdicts);
}
