//! Replaying a dynamic test suite (Whisker's `DynamicNetworkSuite`): every network plays the
//! game on a seed; its statement coverage, the events it chose and the surprise oracle's
//! verdict are reported per network.
//!
//! As Whisker: a suite of several networks is first minimised (networks sorted by the
//! statements they cover, kept while they add coverage); each network plays with the suite's
//! configuration (`timeout`, `eventSelection`, `durations`) and grows nodes for new features
//! and events; a network whose playthrough offered events it has no output for, or whose
//! activations are surprising against its saved reference trace (`AT`), judges the program as
//! faulty (`fail`). The timeout is wall-clock time in Whisker; here it is
//! `timeout × acceleration × 30` VM steps (acceleration 10, as Whisker's studies: a machine
//! that keeps up), or `timeout / ms` steps on a modelled machine whose steps take `ms` real
//! milliseconds ([`ReplayOptions::whisker_wall_ms`]).

use std::sync::Arc;

use clowder_neuro::surprise::{ActivationTrace, SurpriseConfig, analyse};
use clowder_neuro::{DynamicSuite, Innovations};
use clowder_vm::Project;

use super::features::FeatureInfo;
use super::{EventSelection, NetworkPolicy};
use crate::config::{Algorithm, AlgorithmConfig, Budget, Params};
use crate::events::EventInfo;
use crate::execution::{Durations, Executor, PlayOptions, RunCtx};
use crate::fitness::FitnessModel;
use crate::result::TimelinePoint;
use crate::rng::Rng;
use clowder_neuro::Network;

/// How a suite is replayed.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Whisker's acceleration factor: game seconds per wall-clock second of the timeout.
    pub acceleration: f64,
    /// The surprise oracle's thresholds.
    pub surprise: SurpriseConfig,
    /// Judge the project against this original (Whisker's mutation analysis of a dynamic
    /// suite): minimise the suite and record every network's reference activation trace on
    /// the original, then play the project.
    pub reference: Option<Reference>,
    /// Model a Whisker machine on which every step takes exactly this many real milliseconds:
    /// the suite's wall-clock timeout is `timeout / ms` steps, and the blocks Whisker times on
    /// its wall clock follow it (`clowder_vm::VmOptions::whisker_wall_ms`). `None`: a machine
    /// that keeps up with `acceleration`.
    pub whisker_wall_ms: Option<f64>,
    /// `speak` as in a Whisker without Scratch's synthesis service (never ends).
    pub whisker_offline_speech: bool,
    /// The browser's maths library (`clowder_vm::VmOptions::whisker_maths`); `None`: the
    /// profile's default.
    pub whisker_maths: Option<clowder_vm::util::mathlib::MathLib>,
}

/// The original program a project under test (e.g. a mutant) is judged against.
#[derive(Debug, Clone)]
pub struct Reference {
    /// The original program.
    pub project: Arc<Project>,
    /// Seeds each network plays on the original to record its reference trace (Whisker's
    /// `activationTraceRepetitions`; the surprise oracle needs 30 samples per node and step).
    pub seeds: u32,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            acceleration: 10.0,
            surprise: SurpriseConfig::default(),
            reference: None,
            whisker_wall_ms: None,
            whisker_offline_speech: false,
            whisker_maths: None,
        }
    }
}

/// One network's replay on one seed.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayRow {
    /// Position of the network in the (minimised) suite.
    pub network: usize,
    /// The network's id in the file.
    pub network_id: u64,
    /// The seed.
    pub seed: u64,
    /// Statements of the program.
    pub total_statements: usize,
    /// Statements this network covered.
    pub covered_statements: usize,
    /// Statements the suite covered up to and including this network.
    pub suite_covered: usize,
    /// Events chosen (waits included).
    pub events: u32,
    /// VM steps played.
    pub steps: u64,
    /// Surprising node activations (0 without a reference trace).
    pub surprise_count: usize,
    /// Event ids offered that the network had no output for.
    pub new_events: Vec<String>,
    /// `pass`, or `fail` when the network judges the program faulty.
    pub verdict: &'static str,
}

/// A program to play networks on: its analyses, made once.
struct Stage {
    project: Arc<Project>,
    model: FitnessModel,
    info: EventInfo,
    features: FeatureInfo,
    params: Params,
    wall_ms: Option<f64>,
}

/// One playthrough's results.
struct Played {
    covered: Vec<bool>,
    events: u32,
    steps: u64,
    trace: Option<ActivationTrace>,
    new_events: Vec<String>,
}

/// What every playthrough of a replay shares.
#[derive(Clone)]
struct Session {
    play: PlayOptions,
    selection: EventSelection,
    innovations: Innovations,
    rng: Rng,
}

impl Stage {
    fn new(project: Arc<Project>, seed: u64, opts: &ReplayOptions) -> Result<Self, String> {
        let mut params = Params::from_config(&AlgorithmConfig::new(Algorithm::Random))?;
        params.whisker_offline_speech = opts.whisker_offline_speech;
        params.whisker_maths = opts.whisker_maths;
        Ok(Stage {
            model: FitnessModel::new(&project),
            info: EventInfo::new(&project, seed),
            features: FeatureInfo::new(&project),
            params,
            wall_ms: opts.whisker_wall_ms,
            project,
        })
    }

    /// `network` plays once with the project's randomness seeded with `vm_seed` (it grows).
    fn play(&self, network: &mut Network, s: &mut Session, vm_seed: u64, record: bool) -> Played {
        let mut sink = |_: &TimelinePoint| {};
        let ctx = RunCtx {
            project: Arc::clone(&self.project),
            model: &self.model,
            info: &self.info,
            params: &self.params,
            vm_seed,
        };
        let mut exec = Executor::new(ctx, Budget::Executions(u64::MAX), &mut sink);
        exec.set_whisker_wall_ms(self.wall_ms);
        let mut policy = NetworkPolicy::new(network, &mut s.innovations, &mut s.rng, s.selection, 1.0, record);
        let (t, stats) = exec.play(&mut policy, &self.features, &s.play, false);
        Played {
            covered: t.fitness.iter().map(|f| *f == 0.0).collect(),
            events: stats.events,
            steps: stats.steps,
            trace: policy.trace.take(),
            new_events: std::mem::take(&mut policy.new_events),
        }
    }

    fn total(&self) -> usize {
        self.model.targets.blocks.len()
    }
}

fn count(covered: &[bool]) -> usize {
    covered.iter().filter(|c| **c).count()
}

/// Whisker's `minimiseSuite`: networks sorted by the statements they cover (ties in file
/// order), kept while they add coverage; the kept networks have grown during their play.
fn minimise(stage: &Stage, networks: &[Network], s: &mut Session, seed: u64) -> Vec<Network> {
    if networks.len() <= 1 {
        return networks.to_vec();
    }
    let mut played: Vec<(Network, Vec<bool>)> = Vec::new();
    for n in networks {
        let mut net = n.clone();
        let p = stage.play(&mut net, s, seed, false);
        played.push((n.clone(), p.covered));
    }
    played.sort_by_key(|(_, c)| std::cmp::Reverse(count(c)));
    let mut suite_cov = vec![false; stage.total()];
    let mut kept = Vec::new();
    for (net, cov) in played {
        let before = count(&suite_cov);
        for (a, b) in suite_cov.iter_mut().zip(&cov) {
            *a |= *b;
        }
        if count(&suite_cov) > before {
            kept.push(net);
        }
        if suite_cov.iter().all(|c| *c) {
            break;
        }
    }
    kept
}

/// A suite made ready for judging programs: minimised on the original (the project itself
/// without a reference), each network with the reference trace it judges with (recorded on the
/// original, or saved in the suite) and grown as it was after playing the original.
#[derive(Clone)]
pub struct PreparedSuite {
    /// `(network as it plays next, id in the file, reference trace)`, in suite order.
    networks: Vec<(Network, u64, Option<ActivationTrace>)>,
    session: Session,
    seed: u64,
}

/// Most steps one playthrough may take (a suite's file is untrusted): 10 hours of game time.
pub const MAX_PLAYTHROUGH_STEPS: u64 = 30 * 3600 * 10;

/// Steps a playthrough may take: the suite's wall-clock timeout on the modelled machine.
fn timeout_steps(timeout_ms: f64, opts: &ReplayOptions) -> Result<u64, String> {
    let steps = match opts.whisker_wall_ms {
        Some(ms) if ms > 0.0 => timeout_ms / ms,
        _ => timeout_ms / 1000.0 * opts.acceleration * 30.0,
    };
    // NaN fails every comparison, so "positive" is asked as `is_nan() || <= 0`.
    if timeout_ms.is_nan() || timeout_ms <= 0.0 || !steps.is_finite() || steps.ceil() > MAX_PLAYTHROUGH_STEPS as f64 {
        return Err(format!(
            "the suite's timeout ({timeout_ms} ms) gives {steps:.0} steps per playthrough; \
             expected a positive timeout of at most {MAX_PLAYTHROUGH_STEPS} steps"
        ));
    }
    Ok(steps.ceil().max(1.0) as u64)
}

/// Prepares `suite` for judging programs with `seed`: `base` is the original
/// (`opts.reference`'s project), or the project itself without a reference.
pub fn prepare_suite(
    base: Arc<Project>,
    suite: &DynamicSuite,
    seed: u64,
    opts: &ReplayOptions,
) -> Result<PreparedSuite, String> {
    let d = suite.durations();
    let durations = Durations {
        wait: d.wait_step_upper_bound.unwrap_or(100.0),
        press: d.press_duration_upper_bound.unwrap_or(10.0),
        click: d.click_duration.unwrap_or(30.0),
        sound: d.sound_duration.unwrap_or(10.0),
    };
    let timeout_ms = suite.timeout().unwrap_or(10_000.0);
    let max_steps = timeout_steps(timeout_ms, opts)?;
    let selection = match suite.event_selection() {
        Some("random") => EventSelection::Random,
        _ => EventSelection::Activation,
    };
    let mut innovations = Innovations::new();
    for n in &suite.networks {
        innovations.observe(n);
    }
    let mut s = Session {
        // Drags are offered to suites whose networks have learnt them (`drag_events`).
        play: PlayOptions { max_steps, durations, stop_at: None, vm_seed: None, drags: super::suite_drags(suite) },
        selection,
        innovations,
        // Growth and random choices draw from a stream of the seed (Whisker: its seeded RNG).
        rng: Rng::new(seed, 0x4E45_4154),
    };
    let stage = Stage::new(base, seed, opts)?;
    let kept = minimise(&stage, &suite.networks, &mut s, seed);
    let mut networks = Vec::new();
    for loaded in kept {
        let mut net = loaded.clone();
        let reference: Option<ActivationTrace> = match &opts.reference {
            Some(r) => {
                let mut merged = ActivationTrace::new();
                for _ in 0..r.seeds {
                    let trace_seed = s.rng.next_int(0, i64::MAX) as u64;
                    if let Some(t) = stage.play(&mut net, &mut s, trace_seed, true).trace {
                        merged.merge(&t);
                    }
                }
                // The network also plays the original on the run's seed, as Whisker's
                // `testSingleProject` does before the mutants.
                stage.play(&mut net, &mut s, seed, false);
                Some(merged)
            }
            None => loaded
                .activation_trace
                .as_ref()
                .and_then(|at| serde_json::to_value(at).ok())
                .and_then(|v| serde_json::from_value(v).ok()),
        };
        networks.push((net, loaded.id, reference));
    }
    Ok(PreparedSuite { networks, session: s, seed })
}

/// Plays a prepared suite on `project` and judges it; the prepared suite is not changed, so
/// every project is judged from the same state whatever was judged before.
pub fn judge(project: Arc<Project>, prepared: &PreparedSuite, opts: &ReplayOptions) -> Result<Vec<ReplayRow>, String> {
    let seed = prepared.seed;
    let stage = Stage::new(project, seed, opts)?;
    let mut s = prepared.session.clone();
    let mut rows = Vec::new();
    let mut suite_cov = vec![false; stage.total()];
    for (k, (network, id, reference)) in prepared.networks.iter().enumerate() {
        let mut net = network.clone();
        let p = stage.play(&mut net, &mut s, seed, true);
        for (a, b) in suite_cov.iter_mut().zip(&p.covered) {
            *a |= *b;
        }
        let surprise_count = match reference {
            Some(r) if !r.is_empty() => analyse(r, p.trace.as_ref(), &opts.surprise).surprise_count,
            _ => 0,
        };
        let verdict = if p.new_events.is_empty() && surprise_count == 0 { "pass" } else { "fail" };
        rows.push(ReplayRow {
            network: k,
            network_id: *id,
            seed,
            total_statements: stage.total(),
            covered_statements: count(&p.covered),
            suite_covered: count(&suite_cov),
            events: p.events,
            steps: p.steps,
            surprise_count,
            new_events: p.new_events,
            verdict,
        });
    }
    Ok(rows)
}

/// Replays `suite` on `project` with `seed` (against `opts.reference` when given).
pub fn replay_suite(
    project: Arc<Project>,
    suite: &DynamicSuite,
    seed: u64,
    opts: &ReplayOptions,
) -> Result<Vec<ReplayRow>, String> {
    let base = opts.reference.as_ref().map_or_else(|| Arc::clone(&project), |r| Arc::clone(&r.project));
    let prepared = prepare_suite(base, suite, seed, opts)?;
    judge(project, &prepared, opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_becomes_steps_on_the_modelled_machine_and_untrusted_ones_are_refused() {
        let ideal = ReplayOptions::default();
        // Acceleration 10: 2 s of wall-clock time are 20 game seconds, 600 steps.
        assert_eq!(timeout_steps(2000.0, &ideal), Ok(600));
        let slow = ReplayOptions { whisker_wall_ms: Some(10.0), ..ReplayOptions::default() };
        assert_eq!(timeout_steps(2000.0, &slow), Ok(200));
        for bad in [0.0, -5.0, f64::NAN, f64::INFINITY, 1e12] {
            assert!(timeout_steps(bad, &ideal).is_err(), "{bad}");
        }
    }
}
