//! Determinism: the same project, configuration, seed and budget give the same
//! digest in this process and in a fresh one; a run with a smaller step budget
//! is an exact prefix of the same run with a larger one.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use clowder_testgen::testkit::{Arg, ProjectBuilder};
use clowder_testgen::{Algorithm, AlgorithmConfig, Budget, RunOutcome, generate};
use clowder_vm::Project;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().map(PathBuf::from).unwrap_or_default()
}

/// A program with keys, clicks, broadcasts, waits and loops.
fn mixed_program() -> Project {
    let mut p = ProjectBuilder::new();
    p.global_var("x");
    p.message("go");
    let a = p.sprite("A");
    let b = p.sprite("B");
    let t = p.t(a);
    let flag = t.when_flag();
    let set = t.set_var("x", Arg::n(0.0));
    let x = t.var("x");
    let cond = t.gt(Arg::b(&x), Arg::n(2.0));
    let send = t.broadcast("go");
    let iff = t.if_(&cond, &[send]);
    let fe = t.forever(&[iff]);
    t.script(flag, &[set, fe]);
    let k = t.when_key("space");
    let ch = t.change_var("x", Arg::n(1.0));
    let w = t.wait(0.5);
    t.script(k, &[ch, w]);
    let t = p.t(b);
    let recv = t.when_receive("go");
    let s1 = t.say(Arg::t("hi"));
    let w = t.wait(1.0);
    let s2 = t.say(Arg::t("bye"));
    t.script(recv, &[s1, w, s2]);
    let c = t.when_clicked();
    let m = t.move_steps(10.0);
    let rep = t.repeat(Arg::n(3.0), &[m]);
    let hide = t.hide();
    t.script(c, &[rep, hide]);
    p.load()
}

fn projects() -> Vec<(String, Arc<Project>)> {
    let mut out = vec![("mixed".to_string(), Arc::new(mixed_program()))];
    let smoke = repo_root().join("datasets/smoke");
    for name in ["clicker.json", "guess.json", "relay.json"] {
        let path = smoke.join(name);
        if let Ok(p) = Project::load_path(&path, &clowder_vm::LoadLimits::default()) {
            out.push((name.to_string(), Arc::new(p)));
        }
    }
    out
}

fn run(project: &Arc<Project>, alg: Algorithm, seed: u64, budget: Budget) -> RunOutcome {
    generate(Arc::clone(project), &AlgorithmConfig::new(alg), seed, budget, &mut |_| {}).expect("run")
}

const CHILD: &str = "CLOWDER_TESTGEN_DIGEST_CHILD";

#[test]
fn same_digest_across_processes() {
    if let Ok(spec) = std::env::var(CHILD) {
        // Child mode: print the digests of the requested runs.
        for (name, p) in projects() {
            for alg in [Algorithm::Random, Algorithm::Mosa, Algorithm::Mio] {
                let o = run(&p, alg, 7, Budget::Steps(4000));
                println!("DIGEST {spec} {name} {} {}", alg.name(), o.digest);
            }
        }
        return;
    }
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new(exe)
        .args(["--exact", "same_digest_across_processes", "--nocapture", "--test-threads=1"])
        .env(CHILD, "child")
        .output()
        .expect("child process runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut checked = 0;
    for (name, p) in projects() {
        for alg in [Algorithm::Random, Algorithm::Mosa, Algorithm::Mio] {
            let here = run(&p, alg, 7, Budget::Steps(4000)).digest;
            let again = run(&p, alg, 7, Budget::Steps(4000)).digest;
            assert_eq!(here, again, "{name} {}: same digest twice in one process", alg.name());
            let line = format!("DIGEST child {name} {} {here}", alg.name());
            assert!(text.contains(&line), "{name} {}: child process printed a different digest:\n{text}", alg.name());
            checked += 1;
        }
    }
    assert!(checked >= 3);
    // A different seed gives a different run on a program with choices.
    let p = Arc::new(mixed_program());
    assert_ne!(
        run(&p, Algorithm::Random, 1, Budget::Steps(4000)).digest,
        run(&p, Algorithm::Random, 2, Budget::Steps(4000)).digest
    );
}

fn check_prefix(name: &str, p: &Arc<Project>, alg: Algorithm, small: u64, large: u64) {
    let a = run(p, alg, 3, Budget::Steps(small));
    let b = run(p, alg, 3, Budget::Steps(large));
    let what = format!("{name} {}", alg.name());
    if a.steps_to_full_coverage.is_none() {
        assert_eq!(a.steps, small, "{what}: the small run stops exactly at its budget");
    }
    let b_prefix: Vec<_> = b.timeline.iter().filter(|t| t.steps <= small).copied().collect();
    assert_eq!(a.timeline, b_prefix, "{what}: timeline is a prefix");
    let set = |o: &RunOutcome| -> Vec<u32> {
        let mut v: Vec<u32> = o.first_covered.iter().filter(|(_, s)| *s <= small).map(|(b, _)| *b).collect();
        v.sort_unstable();
        v
    };
    assert_eq!(set(&a), set(&b), "{what}: same covered targets at the small budget");
    assert_eq!(a.first_covered.len(), set(&a).len());
}

#[test]
fn smaller_budget_is_a_prefix() {
    for (name, p) in projects() {
        for alg in [Algorithm::Random, Algorithm::Mosa, Algorithm::Mio] {
            check_prefix(&name, &p, alg, 1_500, 6_000);
            check_prefix(&name, &p, alg, 777, 778);
        }
    }
}

#[test]
fn real_projects_prefix() {
    let corpora =
        std::env::var("CLOWDER_CORPORA").map(PathBuf::from).unwrap_or_else(|_| repo_root().join("../shared/corpora"));
    let dir = corpora.join("whisker-rq1");
    if !dir.is_dir() {
        // Straight to stderr: libtest captures eprintln!, and a SKIP must show.
        drop(std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("SKIP: {} not found (set CLOWDER_CORPORA)\n", dir.display()),
        ));
        return;
    }
    for name in ["Fangen.sb3", "Pong.sb3", "HappyNewYear.sb3"] {
        // The folder is there, so every project must be: a missing or unloadable one is a
        // failure, not a project to skip (the test would otherwise check nothing).
        let p = Project::load_path(&dir.join(name), &clowder_vm::LoadLimits::default())
            .unwrap_or_else(|e| panic!("{name} does not load: {e}"));
        let p = Arc::new(p);
        for alg in [Algorithm::Random, Algorithm::Mosa, Algorithm::Mio] {
            check_prefix(name, &p, alg, 4_000, 12_000);
        }
    }
}
