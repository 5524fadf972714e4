//! The pool: random tests of one project with their regression assertions, each test's
//! covered statements and event word, and which test kills which mutant.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use clowder_vm::project::Project;

use crate::config::{AlgorithmConfig, Budget, Params};
use crate::encoding::random_codons;
use crate::events::EventInfo;
use crate::execution::{Executor, RunCtx};
use crate::mutation::analysis::Subject;
use crate::mutation::{Baseline, MutationMode, Operator, TestOutcome};
use crate::result::{Test, TimelinePoint};
use crate::rng::Rng;
use crate::sequence::Alphabet;
use crate::{Prepared, assertions};

/// The random stream the pool's tests are drawn from (distinct from a run's search stream).
const POOL_PURPOSE: u64 = 0x005E_1EC7_9001;

/// How to build a pool.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    /// Tests in the pool.
    pub size: usize,
    /// The seed of the tests' codons, of every VM run and of the mutant sample.
    pub seed: u64,
    /// The generation parameters (random search's; test length is `min_events..max_events`).
    pub config: AlgorithmConfig,
    /// Cap on the VM work of generating the pool and recording its assertions (each), in
    /// `Vm::work` units; reaching it is an error (a pool of cut tests would be no random pool).
    pub work_cap: u64,
    /// Which mutants: all, or a seeded sample per operator.
    pub mutants: MutationMode,
    /// Threads replaying mutants (the result does not depend on it).
    pub threads: usize,
}

/// One mutant and the pool tests that kill it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolMutant {
    /// Mutant id (`AOR-000003`).
    pub id: String,
    /// Operator.
    pub operator: Operator,
    /// Pool tests whose assertions fail on it, increasing.
    pub killed_by: Vec<u32>,
    /// Pool tests whose replay on it ran away without failing an assertion.
    pub ran_away: u32,
    /// False when the mutant could not be judged (it does not fit the project, or its
    /// replays failed); it is then killed by none and left out of detection rates.
    pub judged: bool,
}

/// VM steps a pool took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolSteps {
    /// Executing the tests.
    pub generation: u64,
    /// Replaying them to record assertions.
    pub assertions: u64,
    /// Replaying them on the original and on every mutant.
    pub kill_matrix: u64,
}

/// A project's pool of random tests.
#[derive(Debug, Clone)]
pub struct Pool {
    /// The tests with their regression assertions.
    pub tests: Vec<Test>,
    /// Per test: the coverage targets (statements) it executes, increasing.
    pub statements: Vec<Vec<u32>>,
    /// Coverage targets of the project.
    pub targets: u32,
    /// The symbols of every pool test's events.
    pub alphabet: Alphabet,
    /// Per test: its events as symbol indices into `alphabet`.
    pub words: Vec<Vec<u32>>,
    /// Mutants in enumeration order.
    pub mutants: Vec<PoolMutant>,
    /// Tests that fail on the original project (they kill nothing).
    pub excluded_tests: u32,
    /// VM steps.
    pub steps: PoolSteps,
}

/// Why a pool could not be built.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// The configuration is invalid.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The work cap was reached.
    #[error("the pool's {phase} reached the work cap of {cap} units")]
    WorkCap {
        /// `generation` (with the tests done) or `assertions`.
        phase: String,
        /// The cap.
        cap: u64,
    },
}

/// Progress of [`build_pool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolProgress {
    /// Tests generated and their assertions recorded.
    Generated,
    /// Mutants replayed so far, of all.
    Mutants(usize, usize),
}

/// Builds `project`'s pool: `size` random tests (random search's test generator, each run to
/// its end in a fresh VM seeded with `seed`), their regression assertions (as a run records
/// them), and every selected mutant's kill row ([`Baseline::kill_row`]: the same replays, limits
/// and kill rule as the mutation analysis of a run's suite).
pub fn build_pool(
    project: Arc<Project>,
    prepared: &Prepared,
    opts: &PoolOptions,
    progress: &(dyn Fn(PoolProgress) + Sync),
) -> Result<Pool, PoolError> {
    opts.config.validate().map_err(PoolError::Config)?;
    let params = Params::from_config(&opts.config).map_err(PoolError::Config)?;
    let info = EventInfo::new(&project, opts.seed);
    let model = &prepared.model;
    let mut sink = |_: &TimelinePoint| {};
    let ctx = RunCtx { project: Arc::clone(&project), model, info: &info, params: &params, vm_seed: opts.seed };
    let mut exec = Executor::new(ctx, Budget::Executions(opts.size as u64), &mut sink);
    exec.cap_work("pool generation", Some(opts.work_cap));
    // A pool keeps each test's covered statements (fitness 0) and its states, no distances.
    exec.zero_distances_only();
    let mut rng = Rng::new(opts.seed, POOL_PURPOSE);
    let mut tests = Vec::with_capacity(opts.size);
    let mut statements = Vec::with_capacity(opts.size);
    for i in 0..opts.size {
        let e = exec.execute_outside_budget(random_codons(&mut rng, &params, info.reserved));
        if exec.work_capped() {
            return Err(PoolError::WorkCap { phase: format!("generation (after {i} tests)"), cap: opts.work_cap });
        }
        statements.push(e.fitness.iter().enumerate().filter(|(_, f)| **f == 0.0).map(|(t, _)| t as u32).collect());
        tests.push(Test { events: e.events, assertions: Vec::new() });
    }
    let generation = exec.replay_steps;
    exec.cap_work("pool assertions", Some(exec.work().saturating_add(opts.work_cap)));
    let assertion_steps = assertions::add_to_suite(&mut exec, &mut tests);
    if exec.work_capped() {
        return Err(PoolError::WorkCap { phase: "assertions".into(), cap: opts.work_cap });
    }
    let alphabet = Alphabet::from_tests(tests.iter().map(|t| t.events.as_slice()));
    let words = tests
        .iter()
        .map(|t| {
            let mut w = Vec::new();
            alphabet.encode(&t.events, &mut w);
            w
        })
        .collect();
    drop(exec);
    progress(PoolProgress::Generated);

    let subject = Subject { project: Arc::clone(&project), model, info: &info, params: &params, seed: opts.seed };
    let baseline = Baseline::new(&subject, &tests);
    let chosen = crate::mutation::select(&crate::mutation::enumerate(&project), opts.mutants, opts.seed);
    let (mutants, kill_steps) = kill_matrix(&baseline, &chosen, opts.threads, progress);
    Ok(Pool {
        statements,
        targets: model.len() as u32,
        alphabet,
        words,
        mutants,
        excluded_tests: baseline.excluded_tests(),
        steps: PoolSteps { generation, assertions: assertion_steps, kill_matrix: baseline.steps + kill_steps },
        tests,
    })
}

/// Every mutant's kill row, replayed on `threads` threads (rows are kept by mutant index, so the
/// result does not depend on the threads); the rows and the steps they took.
fn kill_matrix(
    baseline: &Baseline<'_, '_>,
    chosen: &[crate::mutation::Mutant],
    threads: usize,
    progress: &(dyn Fn(PoolProgress) + Sync),
) -> (Vec<PoolMutant>, u64) {
    let slots: Vec<Mutex<Option<(PoolMutant, u64)>>> = chosen.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, chosen.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(m) = chosen.get(i) else { break };
                    // A panic in a replay is a bug; it must not take the other mutants down.
                    let row =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| baseline.kill_row(m))).ok().flatten();
                    let (killed_by, ran_away, steps) = match &row {
                        Some(r) => (
                            (0..r.outcomes.len() as u32)
                                .filter(|&t| r.outcomes[t as usize] == TestOutcome::Kills)
                                .collect(),
                            r.outcomes.iter().filter(|o| **o == TestOutcome::RanAway).count() as u32,
                            r.steps,
                        ),
                        None => (Vec::new(), 0, 0),
                    };
                    let pm = PoolMutant {
                        id: m.id.clone(),
                        operator: m.operator,
                        killed_by,
                        ran_away,
                        judged: row.is_some(),
                    };
                    if let Ok(mut slot) = slots[i].lock() {
                        *slot = Some((pm, steps));
                    }
                    progress(PoolProgress::Mutants(done.fetch_add(1, Ordering::Relaxed) + 1, chosen.len()));
                }
            });
        }
    });
    let mut steps = 0;
    let mut out = Vec::with_capacity(chosen.len());
    for (slot, m) in slots.into_iter().zip(chosen) {
        // Every slot is filled (panics are caught); an empty one would count as not judged.
        match slot.into_inner().ok().flatten() {
            Some((pm, s)) => {
                steps += s;
                out.push(pm);
            }
            None => out.push(PoolMutant {
                id: m.id.clone(),
                operator: m.operator,
                killed_by: Vec::new(),
                ran_away: 0,
                judged: false,
            }),
        }
    }
    (out, steps)
}
