//! Benchmark: test executions per second and wall time of whole runs at the
//! study's 180 000-step budget, on the fixed list of random-sample projects
//! (`testgen/data/random-sample-100.txt`: the first 100 projects of the
//! `datasets/random-sample-200` manifest, so the issue-4 coverage table can be read off
//! that study's seeds 1–5).
//!
//! `cargo bench -p clowder-testgen --bench generation` (release profile).
//! Environment: `CLOWDER_CORPORA` (default `../shared/corpora`),
//! `BENCH_PROJECTS` (how many of the listed projects, default 100),
//! `BENCH_ALGORITHM` (`mio`, `mosa` or `random`; default `mio`),
//! `BENCH_STEPS` (default 180000).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clowder_testgen::{Algorithm, AlgorithmConfig, Budget, Prepared, generate_prepared};

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let corpora =
        std::env::var("CLOWDER_CORPORA").map(PathBuf::from).unwrap_or_else(|_| root.join("../../shared/corpora"));
    let dir = corpora.join("random-sample");
    if !dir.is_dir() {
        eprintln!("SKIP: {} not found (set CLOWDER_CORPORA)", dir.display());
        return;
    }
    let list = std::fs::read_to_string(root.join("data/random-sample-100.txt")).unwrap_or_default();
    let n: usize = std::env::var("BENCH_PROJECTS").ok().and_then(|s| s.parse().ok()).unwrap_or(100);
    let steps: u64 = std::env::var("BENCH_STEPS").ok().and_then(|s| s.parse().ok()).unwrap_or(180_000);
    let alg =
        Algorithm::parse(&std::env::var("BENCH_ALGORITHM").unwrap_or_else(|_| "mio".into())).unwrap_or(Algorithm::Mio);
    let cfg = AlgorithmConfig::new(alg);
    let mut times = Vec::new();
    let (mut execs, mut total_steps, mut replay_steps) = (0u64, 0u64, 0u64);
    let mut search_secs = 0.0;
    let started = Instant::now();
    for name in list.lines().map(str::trim).filter(|l| !l.is_empty()).take(n) {
        let Ok(p) = clowder_vm::Project::load_path(&dir.join(name), &clowder_vm::LoadLimits::default()) else {
            eprintln!("{name}: not loadable, skipped");
            continue;
        };
        let p = Arc::new(p);
        let t0 = Instant::now();
        // A VM panic is a bug elsewhere; report it and go on.
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let prepared = Prepared::new(&p);
            generate_prepared(Arc::clone(&p), &prepared, &cfg, 1, Budget::Steps(steps), &mut |_| {})
        }));
        let secs = t0.elapsed().as_secs_f64();
        let out = match out {
            Ok(o) => o,
            Err(_) => {
                eprintln!("{name}: panicked");
                continue;
            }
        };
        match out {
            Ok(o) => {
                times.push(secs);
                execs += o.executions;
                total_steps += o.steps;
                replay_steps += o.minimization_steps;
                search_secs += secs;
                println!(
                    "{name}: {:.3} s, {} executions, {} steps, {} replay steps, coverage {:.3}",
                    secs, o.executions, o.steps, o.minimization_steps, o.coverage
                );
            }
            Err(e) => eprintln!("{name}: {e}"),
        }
    }
    if times.is_empty() {
        return;
    }
    times.sort_by(f64::total_cmp);
    let q = |f: f64| times[((times.len() - 1) as f64 * f).round() as usize];
    println!(
        "\n{} runs of {} at {steps} steps: median {:.3} s, p90 {:.3} s, max {:.3} s, mean {:.3} s; \
         {:.0} test executions/s, {:.0} search steps/s, {} replay steps; total {:.1} s",
        times.len(),
        alg.name(),
        q(0.5),
        q(0.9),
        q(1.0),
        search_secs / times.len() as f64,
        execs as f64 / search_secs,
        total_steps as f64 / search_secs,
        replay_steps,
        started.elapsed().as_secs_f64()
    );
}
