//! Skipping unreached replays on real projects whose tests run away: the corpora's projects
//! whose generated tests have steps cut short by the operation budget give the same report
//! with skipping as with every test replayed on every mutant (`analysis` module docs).
//! SKIPs visibly without the corpora (`CLOWDER_CORPORA`, default `../shared/corpora`).
//!
//! Ignored by default: these projects run away in every frame, and replaying every test on
//! every mutant takes about 6 minutes (the hand-made case in `mutation_analysis.rs` runs
//! always). Run it with `cargo test -p clowder-testgen --test mutation_corpora -- --ignored`.

use std::sync::Arc;

use clowder_testgen::config::Budget;
use clowder_testgen::events::EventInfo;
use clowder_testgen::mutation::analysis::{self, Baseline, Subject};
use clowder_testgen::testkit::corpora;
use clowder_testgen::{Algorithm, AlgorithmConfig, MutationMode, Params, Prepared, RunOptions};

/// The random-sample projects whose MIO suites (seed 1) hang in some step.
const HANGING: [&str; 3] =
    ["402062721_22-05-2021_10-38-37.json", "402153740_27-05-2021_13-59-58.json", "501018355_14-05-2021_05-53-20.json"];

#[test]
#[ignore = "about 6 minutes: run with --ignored"]
fn hanging_tests_skip_unreached_replays_without_changing_the_report() {
    let Some(dir) = corpora() else { return };
    let cfg = AlgorithmConfig::new(Algorithm::Mio);
    let params = Params::from_config(&cfg).expect("defaults");
    let mut with_hangs = 0;
    for name in HANGING {
        let path = dir.join("random-sample").join(name);
        let project = Arc::new(clowder_vm::Project::load_path(&path, &clowder_vm::LoadLimits::default()).expect(name));
        let prepared = Prepared::new(&project);
        let run = clowder_testgen::generate_prepared_with(
            Arc::clone(&project),
            &prepared,
            &cfg,
            1,
            Budget::Steps(STEPS),
            &RunOptions::default(),
            &mut |_| {},
        )
        .expect(name);
        let info = EventInfo::new(&project, 1);
        let subject =
            Subject { project: Arc::clone(&project), model: &prepared.model, info: &info, params: &params, seed: 1 };
        let hanging = Baseline::new(&subject, &run.suite).hanging_tests();
        eprintln!("{name}: {} tests, {hanging} hanging", run.suite.len());
        if hanging == 0 {
            continue;
        }
        with_hangs += 1;
        let mode = MutationMode::SamplePerOperator(PER_OPERATOR);
        let fast = analysis::analyse(&subject, &run.suite, mode).expect("on");
        let every = analysis::analyse_exhaustive(&subject, &run.suite, mode).expect("on");
        assert_eq!(fast, every, "{name}");
    }
    assert!(with_hangs >= 2, "only {with_hangs} of the projects had hanging tests: the check checked little");
}

/// Generation budget: enough for the suites to reach the runaway frames.
const STEPS: u64 = 1000;
/// Mutants per operator (the exhaustive replay of every test on every mutant is slow here).
const PER_OPERATOR: u32 = 4;
