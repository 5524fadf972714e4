//! Whisker-style test generation on clowder's VM (Deiner et al., "Automated
//! Test Generation for Scratch Programs"): dynamic event extraction,
//! grammatical-evolution codon encoding, statement fitness over an
//! interprocedural CFG/CDG, Random search, MOSA and MIO with extension and
//! reduction local search, 1-minimisation of the final suite.
//!
//! [`generate`] is the one entry point the worker and `clowder gen` call: it
//! runs an algorithm on a project with a seed and a budget and returns the
//! coverage timeline, the suite and a digest. Everything is deterministic in
//! (project bytes, configuration, seed, budget), except for wall-clock budgets.

#![warn(missing_docs)]

pub mod assertions;
pub mod config;
pub mod encoding;
pub mod events;
pub mod execution;
pub mod export;
pub mod fitness;
pub mod graph;
pub mod minimize;
pub mod mutation;
pub mod neatest;
pub mod result;
pub mod rng;
mod search;
pub mod selection;
pub mod sequence;
pub mod sut;
pub mod targets;
#[doc(hidden)]
pub mod testkit;
pub mod trace;
pub mod whisker_config;
pub mod work;

use std::rc::Rc;
use std::sync::Arc;

use clowder_vm::Project;

pub use config::{Algorithm, AlgorithmConfig, Budget, Params};
pub use mutation::MutationMode;
pub use result::{RunOutcome, Test, TimelinePoint};

/// Why a run could not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// The configuration is invalid (deterministic: retrying will not help).
    #[error("invalid configuration: {0}")]
    Config(String),
}

/// Per-project analyses a run needs; build once and share between runs of the
/// same project (they depend on the project only).
pub struct Prepared {
    /// The fitness model (CFG, CDG, targets).
    pub model: fitness::FitnessModel,
}

impl Prepared {
    /// Analyses `project`.
    pub fn new(project: &Project) -> Self {
        Self { model: fitness::FitnessModel::new(project) }
    }
}

/// The default work a run's search may do per step of its step budget, in work-meter units
/// ([`work`], about nanoseconds): 1.5 ms of CPU per step. A paper-budget run (180 000 steps) of
/// the heaviest legitimate project of the corpora needs about two thirds of it (Paper
/// Minecraft's MIO, whose world generation runs in warp procedures: 0.96 · 10⁶ per step in
/// all) and ends by its step budget; programs that ask thousands of touching questions every
/// frame (2–3 · 10⁶ per step) or loop into the operation budget every step (about 10⁸) reach the
/// cap. Part of the engine: changing it bumps `ENGINE_VERSION`.
pub const DEFAULT_WORK_PER_STEP: u64 = 1_500_000;

/// The default work cap of budgets not counted in steps (executions, evaluations, seconds),
/// and of the paper's step budget: 180 000 steps' worth of [`DEFAULT_WORK_PER_STEP`].
pub const DEFAULT_WORK_CAP: u64 = 180_000 * DEFAULT_WORK_PER_STEP;

/// The smallest default cap: short step budgets still start VMs, minimise and assert.
pub const MIN_DEFAULT_WORK_CAP: u64 = 2_000_000_000;

/// The engine's default work cap of a run's search for `budget` ([`RunOptions::work_cap`]):
/// [`DEFAULT_WORK_PER_STEP`] per budget step (at least [`MIN_DEFAULT_WORK_CAP`]), or
/// [`DEFAULT_WORK_CAP`] for budgets in executions, evaluations or seconds.
pub fn default_work_cap(budget: Budget) -> u64 {
    match budget {
        Budget::Steps(n) => n.saturating_mul(DEFAULT_WORK_PER_STEP).max(MIN_DEFAULT_WORK_CAP),
        Budget::Executions(_) | Budget::Evaluations(_) | Budget::Seconds(_) => DEFAULT_WORK_CAP,
    }
}

/// What a run does besides generating the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOptions {
    /// Mutation analysis of the final suite (forces assertions on).
    pub mutation: MutationMode,
    /// Cap on the work of the search ([`work`]), 0 for none; minimisation may then use what the
    /// search left of it plus a quarter, assertion generation what is left plus another
    /// quarter (a run does at most 1.5 caps before mutation analysis; each of the two at least
    /// a quarter), and mutation analysis as much again. A run that reaches a cap ends with its
    /// partial result and [`RunOutcome::limit`] set: a deterministic end for runaway runs.
    /// The engine's default for a budget is [`default_work_cap`] (`Default` gives the
    /// paper budget's, [`DEFAULT_WORK_CAP`]).
    pub work_cap: u64,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions { mutation: MutationMode::Off, work_cap: DEFAULT_WORK_CAP }
    }
}

/// Mutation analysis of a suite generated earlier by a run with this configuration and seed
/// (a follow-up job on a stored suite): exactly what [`generate_with`] does after generating
/// the suite when mutation analysis is on, so a stored suite gets the verdicts the run would
/// have had. The suite must carry its regression assertions (the default; with
/// `assertions = false` it has none, and this is an error).
pub fn analyse_suite(
    project: Arc<Project>,
    prepared: &Prepared,
    cfg: &AlgorithmConfig,
    seed: u64,
    suite: &[Test],
    mode: MutationMode,
) -> Result<Option<mutation::MutationReport>, GenError> {
    Ok(analyse_suite_parallel(project, prepared, cfg, seed, suite, mode, None, 1, &mut |_| {})?.map(|(r, _)| r))
}

/// [`analyse_suite`] on `workers` threads, with the plan and every verdict told to `progress`
/// as it comes, and the analysis' work ([`mutation::analysis::analyse_parallel`]; `cap`: the
/// analysis' work cap, `None` for none). The report does not depend on `workers`.
#[allow(clippy::too_many_arguments)]
pub fn analyse_suite_parallel(
    project: Arc<Project>,
    prepared: &Prepared,
    cfg: &AlgorithmConfig,
    seed: u64,
    suite: &[Test],
    mode: MutationMode,
    cap: Option<u64>,
    workers: usize,
    progress: &mut dyn FnMut(&mutation::analysis::Progress),
) -> Result<Option<(mutation::MutationReport, work::Meter)>, GenError> {
    cfg.validate().map_err(GenError::Config)?;
    if !cfg.flag("assertions", true).map_err(GenError::Config)? {
        return Err(GenError::Config(
            "the configuration turns assertions off, so the stored suite has none to judge mutants with".into(),
        ));
    }
    let params = Params::from_config(cfg).map_err(GenError::Config)?;
    let info = events::EventInfo::new(&project, seed);
    let subject = mutation::analysis::Subject { project, model: &prepared.model, info: &info, params: &params, seed };
    Ok(mutation::analysis::analyse_parallel(&subject, suite, mode, cap, workers, progress))
}

/// [`generate`] with run options (mutation analysis).
pub fn generate_with(
    project: Arc<Project>,
    cfg: &AlgorithmConfig,
    seed: u64,
    budget: Budget,
    opts: &RunOptions,
    on_progress: &mut dyn FnMut(&TimelinePoint),
) -> Result<RunOutcome, GenError> {
    let prepared = Prepared::new(&project);
    generate_prepared_with(project, &prepared, cfg, seed, budget, opts, on_progress)
}

/// Runs test generation on `project` and returns its outcome.
///
/// `on_progress` sees every coverage change point as it happens (the worker
/// streams them to the coordinator).
pub fn generate(
    project: Arc<Project>,
    cfg: &AlgorithmConfig,
    seed: u64,
    budget: Budget,
    on_progress: &mut dyn FnMut(&TimelinePoint),
) -> Result<RunOutcome, GenError> {
    let prepared = Prepared::new(&project);
    generate_prepared(project, &prepared, cfg, seed, budget, on_progress)
}

/// [`generate`] with analyses built beforehand by [`Prepared::new`].
pub fn generate_prepared(
    project: Arc<Project>,
    prepared: &Prepared,
    cfg: &AlgorithmConfig,
    seed: u64,
    budget: Budget,
    on_progress: &mut dyn FnMut(&TimelinePoint),
) -> Result<RunOutcome, GenError> {
    generate_prepared_with(project, prepared, cfg, seed, budget, &RunOptions::default(), on_progress)
}

/// [`generate_prepared`] with run options.
pub fn generate_prepared_with(
    project: Arc<Project>,
    prepared: &Prepared,
    cfg: &AlgorithmConfig,
    seed: u64,
    budget: Budget,
    opts: &RunOptions,
    on_progress: &mut dyn FnMut(&TimelinePoint),
) -> Result<RunOutcome, GenError> {
    cfg.validate().map_err(GenError::Config)?;
    // Assertions are on by default, as in the Whisker study's configurations.
    let with_assertions = cfg.flag("assertions", true).map_err(GenError::Config)? || opts.mutation != MutationMode::Off;
    let params = Params::from_config(cfg).map_err(GenError::Config)?;
    let model = &prepared.model;
    let info = events::EventInfo::new(&project, seed);
    let ctx = execution::RunCtx { project: Arc::clone(&project), model, info: &info, params: &params, vm_seed: seed };
    let mut exec = execution::Executor::new(ctx, budget, on_progress);
    exec.charge(work::Kind::Search, work::cost::RUN);
    exec.track_improvement = params.reduction_probability > 0.0 && cfg.algorithm != Algorithm::Random;
    exec.stop_on_full_coverage = cfg.algorithm != Algorithm::Neatest;
    // The search may do up to the cap; minimisation what the search left plus a quarter,
    // assertions what is left plus another quarter: a heavy program whose search did not need
    // its whole cap gets its suite minimised, a runaway one still ends within 1.5 caps.
    let cap = (opts.work_cap > 0).then_some(opts.work_cap);
    let after = cap.map(|c| (c / 4).max(1));
    let phase_cap = |exec: &execution::Executor<'_>, quarters: u64| {
        cap.zip(after).map(|(c, q)| {
            let total = c.saturating_add(q.saturating_mul(quarters));
            total.max(exec.work().saturating_add(q))
        })
    };
    exec.cap_work("search", cap);
    if cfg.algorithm == Algorithm::Random {
        // Random search keeps a test exactly when it executes a target (fitness 0).
        exec.zero_distances_only();
    }
    let rng = rng::Rng::new(seed, 0x5EA7C4);
    let mut neat: Option<(u32, String)> = None;
    let archive: Vec<Rc<execution::Evaluated>> = {
        let mut s = search::Search::new(&mut exec, rng.clone(), params.clone(), info.reserved);
        let out = match cfg.algorithm {
            Algorithm::Random => s.random(),
            Algorithm::Mosa => s.mosa(),
            Algorithm::Mio => s.mio(),
            Algorithm::Neatest => {
                let o = s.neatest();
                neat = Some((o.reliable, neatest::dynamic_suite_json(o.networks, &params)));
                o.tests
            }
        };
        // Minimisation continues the search's random stream.
        let _ = &s.rng;
        out
    };
    let tests_before_min = archive.len() as u32;
    let events_before_min: u32 = archive.iter().map(|e| e.events.len() as u32).sum();
    let mut min_rng = rng::Rng::new(seed, 0x3141);
    // Minimisation asks of a replay only whether it still covers its target, and assertion
    // generation reads states, not distances.
    exec.zero_distances_only();
    exec.cap_work("minimisation", phase_cap(&exec, 1));
    let mut suite: Vec<Test> = if params.minimize {
        minimize::minimize_suite(&mut exec, &mut min_rng, &archive)
            .into_iter()
            .map(|events| Test { events, ..Test::default() })
            .collect()
    } else {
        archive.iter().map(|e| Test { events: e.events.clone(), ..Test::default() }).collect()
    };
    let minimization_steps = exec.replay_steps;
    if with_assertions {
        exec.cap_work("assertions", phase_cap(&exec, 2));
        assertions::add_to_suite(&mut exec, &mut suite);
    }
    // Sequence coverage reads the events only: nothing above depends on it and the digest
    // does not cover it.
    let seq_min = sequence::suite_coverage(exec.alphabet(), suite.iter().map(|t| t.events.as_slice()));
    let seq_unmin = sequence::suite_coverage(exec.alphabet(), archive.iter().map(|e| e.events.as_slice()));
    let timeline = exec.timeline().to_vec();
    let total = exec.total();
    let covered = exec.covered();
    let mut outcome = RunOutcome {
        coverage: if total == 0 { 1.0 } else { f64::from(covered) / f64::from(total) },
        covered,
        total_targets: total,
        steps: exec.steps,
        executions: exec.executions,
        evaluations: exec.evaluations,
        tests_before_min,
        tests_after_min: suite.len() as u32,
        events_before_min,
        events_after_min: suite.iter().map(|t| t.events.len() as u32).sum(),
        digest: result::digest(&timeline, &suite),
        timeline,
        suite,
        steps_to_full_coverage: exec.steps_to_full_coverage(),
        first_covered: exec.first_covered().to_vec(),
        minimization_steps,
        geometry: exec.geometry().to_string(),
        reproducible: budget.reproducible(),
        unknown_opcodes: exec.unknown_opcodes(),
        mutation: None,
        work: exec.work(),
        work_by_kind: exec.meter().by_kind(),
        mutation_work: 0,
        limit: exec.limited().map(str::to_string),
        seq_alphabet: Some(seq_min.alphabet),
        seq_kh2: seq_min.kh2.ratio(),
        seq_kh3: seq_min.kh3.ratio(),
        seq_win2: seq_min.win2.ratio(),
        seq_win3: seq_min.win3.ratio(),
        seq_kh2_unmin: seq_unmin.kh2.ratio(),
        seq_kh3_unmin: seq_unmin.kh3.ratio(),
        seq_win2_unmin: seq_unmin.win2.ratio(),
        seq_win3_unmin: seq_unmin.win3.ratio(),
        reliable_covered: neat.as_ref().map(|(r, _)| *r),
        dynamic_suite: neat.map(|(_, json)| json),
    };
    let work_meter = *exec.meter();
    drop(exec);
    if opts.mutation != MutationMode::Off {
        let subject = mutation::analysis::Subject { project, model, info: &info, params: &params, seed };
        // The analysis may do as much work as the search may (a Top1000 project's suite can
        // reach thousands of mutants whose replays run its heaviest code: hours of CPU).
        if let Some((r, meter)) = mutation::analysis::analyse_metered(&subject, &outcome.suite, opts.mutation, cap) {
            if r.unjudged > 0 && outcome.limit.is_none() {
                outcome.limit = Some("mutation analysis".into());
            }
            outcome.digest = r.extend_digest(&outcome.digest);
            let mut all = work_meter;
            all.absorb(&meter);
            outcome.mutation_work = meter.total();
            outcome.work = all.total();
            outcome.work_by_kind = all.by_kind();
            outcome.mutation = Some(r);
        }
    }
    Ok(outcome)
}
