//! How much faster than Scratch time a hand-written suite runs: FruitCatching's suite (se2p/
//! whisker's example, from `CLOWDER_WHISKER_EXAMPLES`) on its game (`CLOWDER_CORPORA/
//! whisker-rq1`). Whisker runs a suite at wall-clock speed (acceleration 1: one step per
//! 1000/30 ms), so the Scratch time the tests ran is Whisker's wall time; the ratio is that
//! time over ours. `cargo bench -p clowder-suites --bench suite_speed [-- SUITE GAME]`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clowder_suites::{Limits, Suite};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let (suite, game) = match args.as_slice() {
        [s, g, ..] => (PathBuf::from(s), PathBuf::from(g)),
        _ => {
            let Some(examples) = std::env::var_os("CLOWDER_WHISKER_EXAMPLES") else {
                eprintln!("SKIP: set CLOWDER_WHISKER_EXAMPLES (or pass SUITE GAME) to measure a suite");
                return;
            };
            let corpora =
                std::env::var_os("CLOWDER_CORPORA").map_or_else(|| PathBuf::from("../shared/corpora"), PathBuf::from);
            (
                PathBuf::from(examples).join("FruitCatchingTest.js"),
                corpora.join("whisker-rq1").join("FruitCatching.sb3"),
            )
        }
    };
    let (Ok(s), Ok(p)) = (Suite::load(&suite), clowder_vm::Project::load_path(&game, &Default::default())) else {
        eprintln!("SKIP: {} or {} missing or invalid", suite.display(), game.display());
        return;
    };
    let project = Arc::new(p);
    let limits = Limits::default();
    let mut best = f64::INFINITY;
    let mut steps = 0u64;
    for _ in 0..3 {
        let t0 = Instant::now();
        let r = clowder_suites::run_project(&s, &project, "bench", 1, &limits);
        best = best.min(t0.elapsed().as_secs_f64());
        steps = r.rows.iter().map(|row| row.steps).sum();
    }
    let scratch_s = steps as f64 / 30.0;
    println!(
        "{}: {} tests, {steps} steps = {scratch_s:.1} s of Scratch time (Whisker's wall time at acceleration 1); \
         clowder {best:.2} s (best of 3); ratio {:.0}x",
        s.name(),
        s.tests().len(),
        scratch_s / best
    );
}
