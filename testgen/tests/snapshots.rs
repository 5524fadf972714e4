//! Replays from snapshots (test minimisation): continuing a replay from a copy of its VM after
//! some events gives the trace a replay from the start gives, on real projects; and a run's
//! minimised suite does not depend on which snapshots were kept (only its work does).
//! Corpus projects SKIP visibly without `CLOWDER_CORPORA` (default `../shared/corpora`).

use std::path::PathBuf;
use std::sync::Arc;

use clowder_testgen::events::EventInfo;
use clowder_testgen::execution::{Executor, RunCtx};
use clowder_testgen::rng::Rng;
use clowder_testgen::testkit::{Arg, ProjectBuilder};
use clowder_testgen::{Algorithm, AlgorithmConfig, Budget, Params, Prepared, minimize};
use clowder_vm::{LoadLimits, Project};

fn corpus_projects() -> Vec<(String, Project)> {
    let root = std::env::var_os("CLOWDER_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora"));
    if !root.is_dir() {
        drop(std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("SKIP: corpora folder not found (set CLOWDER_CORPORA); built-in project only\n"),
        ));
        return Vec::new();
    }
    let mut out = Vec::new();
    for (dir, every) in [("whisker-rq1", 2), ("codeclub", 10), ("random-sample", 80)] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else { continue };
        let mut fs: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        fs.retain(|p| p.extension().is_some_and(|e| e == "sb3" || e == "json"));
        fs.sort();
        for f in fs.into_iter().step_by(every) {
            let p = Project::load_path(&f, &LoadLimits::default()).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            out.push((f.display().to_string(), p));
        }
    }
    out
}

/// A small program: keys move a sprite and count, branches on the count, a click.
fn builtin() -> Project {
    let mut p = ProjectBuilder::new();
    p.global_var("n");
    let a = p.sprite("A");
    let t = p.t(a);
    let flag = t.when_flag();
    let set = t.set_var("n", Arg::n(0.0));
    t.script(flag, &[set]);
    for (key, dx) in [("right arrow", 10.0), ("left arrow", -10.0)] {
        let k = t.when_key(key);
        let mv = t.change_x(Arg::n(dx));
        let inc = t.change_var("n", Arg::n(1.0));
        let n = t.var("n");
        let big = t.gt(Arg::b(&n), Arg::n(3.0));
        let say = t.say(Arg::t("many"));
        let iff = t.if_(&big, &[say]);
        t.script(k, &[mv, inc, iff]);
    }
    let c = t.when_clicked();
    let n = t.var("n");
    let odd = t.gt(Arg::b(&n), Arg::n(1.0));
    let back = t.change_x(Arg::n(-5.0));
    let iff = t.if_(&odd, &[back]);
    t.script(c, &[iff]);
    p.load()
}

fn params() -> Params {
    Params::from_config(&AlgorithmConfig::new(Algorithm::Mio)).expect("the default configuration")
}

#[test]
fn a_replay_continued_from_a_snapshot_has_the_trace_of_a_full_replay() {
    let mut projects = vec![("built-in".to_string(), builtin())];
    projects.extend(corpus_projects());
    let mut checked = 0;
    for (name, p) in projects {
        let p = Arc::new(p);
        let prepared = Prepared::new(&p);
        let params = params();
        let info = EventInfo::new(&p, 7);
        let mut sink = |_: &clowder_testgen::TimelinePoint| {};
        let ctx = RunCtx { project: Arc::clone(&p), model: &prepared.model, info: &info, params: &params, vm_seed: 7 };
        let mut exec = Executor::new(ctx, Budget::Steps(u64::MAX), &mut sink);
        exec.snapshot_worth = 0;
        let mut rng = Rng::new(7, 1);
        for _ in 0..3 {
            let codons: Vec<u32> = (0..24).map(|_| rng.below(1 << 16) as u32).collect();
            let e = exec.execute_outside_budget(codons);
            if e.events.len() < 2 {
                continue;
            }
            let full = exec.replay(&e.events);
            assert_eq!(full, e.trace, "{name}: a replay has the execution's trace");
            let again = exec.replay_from(None, &e.events, None);
            assert_eq!(again.trace, full, "{name}: keeping snapshots changes nothing");
            assert!(!again.stopped);
            assert_eq!(again.kept.len(), e.events.len(), "{name}: a snapshot after every event but the last");
            for (j, s) in &again.kept {
                let cont = exec.replay_from(Some(s), &e.events[*j..], None);
                assert_eq!(cont.trace, full, "{name}: continued after {j} of {} events", e.events.len());
                assert!(cont.kept.iter().all(|(m, _)| *m >= 1), "{name}: positions after the snapshot's");
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no replay was continued");
    eprintln!("snapshots: {checked} continued replays equal their full replays");
}

#[test]
fn the_minimised_suite_does_not_depend_on_the_snapshots_kept() {
    let mut projects = vec![("built-in".to_string(), builtin())];
    projects.extend(corpus_projects().into_iter().take(6));
    for (name, p) in projects {
        let p = Arc::new(p);
        let prepared = Prepared::new(&p);
        let params = params();
        let info = EventInfo::new(&p, 11);
        let mut suites = Vec::new();
        let mut work = Vec::new();
        for worth in [u64::MAX, 0, clowder_testgen::execution::SNAPSHOT_WORTH] {
            let mut sink = |_: &clowder_testgen::TimelinePoint| {};
            let ctx =
                RunCtx { project: Arc::clone(&p), model: &prepared.model, info: &info, params: &params, vm_seed: 11 };
            let mut exec = Executor::new(ctx, Budget::Steps(u64::MAX), &mut sink);
            exec.snapshot_worth = worth;
            let mut rng = Rng::new(11, 2);
            let tests: Vec<_> = (0..6)
                .map(|_| {
                    let codons: Vec<u32> = (0..30).map(|_| rng.below(1 << 16) as u32).collect();
                    std::rc::Rc::new(exec.execute_outside_budget(codons))
                })
                .collect();
            let before = exec.work();
            let mut min_rng = Rng::new(11, 3);
            suites.push(minimize::minimize_suite(&mut exec, &mut min_rng, &tests));
            work.push(exec.work() - before);
        }
        assert_eq!(suites[0], suites[1], "{name}: snapshots after every event");
        assert_eq!(suites[0], suites[2], "{name}: the default snapshots");
        eprintln!("{name}: minimisation work without / every event / default: {work:?}");
    }
}
