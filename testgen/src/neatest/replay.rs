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
//! `timeout × acceleration × 30` VM steps (acceleration 10, as Whisker's studies).

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

/// How a suite is replayed.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Whisker's acceleration factor: game seconds per wall-clock second of the timeout.
    pub acceleration: f64,
    /// The surprise oracle's thresholds.
    pub surprise: SurpriseConfig,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions { acceleration: 10.0, surprise: SurpriseConfig::default() }
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

/// Replays `suite` on `project` with `seed`.
pub fn replay_suite(
    project: Arc<Project>,
    suite: &DynamicSuite,
    seed: u64,
    opts: &ReplayOptions,
) -> Result<Vec<ReplayRow>, String> {
    let params = Params::from_config(&AlgorithmConfig::new(Algorithm::Random))?;
    let model = FitnessModel::new(&project);
    let info = EventInfo::new(&project, seed);
    let features = FeatureInfo::new(&project);
    let mut sink = |_: &TimelinePoint| {};
    let ctx = RunCtx { project: Arc::clone(&project), model: &model, info: &info, params: &params, vm_seed: seed };
    let mut exec = Executor::new(ctx, Budget::Executions(u64::MAX), &mut sink);
    let d = suite.durations();
    let durations = Durations {
        wait: d.wait_step_upper_bound.unwrap_or(100.0),
        press: d.press_duration_upper_bound.unwrap_or(10.0),
        click: d.click_duration.unwrap_or(30.0),
        sound: d.sound_duration.unwrap_or(10.0),
    };
    let timeout_ms = suite.timeout().unwrap_or(10_000.0);
    let max_steps = (timeout_ms / 1000.0 * opts.acceleration * 30.0).ceil().max(1.0) as u64;
    let play = PlayOptions { max_steps, durations, stop_at: None, vm_seed: None };
    let selection = match suite.event_selection() {
        Some("random") => EventSelection::Random,
        _ => EventSelection::Activation,
    };
    let mut innovations = Innovations::new();
    for n in &suite.networks {
        innovations.observe(n);
    }
    // Growth and random choices draw from a stream of the seed (Whisker: its seeded RNG).
    let mut rng = Rng::new(seed, 0x4E45_4154);
    let total = model.targets.blocks.len();
    let covered_of = |fitness: &[f64]| -> Vec<bool> { fitness.iter().map(|f| *f == 0.0).collect() };

    // Whisker minimises a suite of several networks first.
    let mut order: Vec<usize> = (0..suite.networks.len()).collect();
    if suite.networks.len() > 1 {
        let mut covers: Vec<Vec<bool>> = Vec::new();
        for n in &suite.networks {
            let mut net = n.clone();
            let mut policy = NetworkPolicy::new(&mut net, &mut innovations, &mut rng, selection, 1.0, false);
            let (t, _) = exec.play(&mut policy, &features, &play, false);
            covers.push(covered_of(&t.fitness));
        }
        order.sort_by_key(|&i| std::cmp::Reverse(covers[i].iter().filter(|c| **c).count()));
        let mut suite_cov = vec![false; total];
        let mut kept = Vec::new();
        for &i in &order {
            let before = suite_cov.iter().filter(|c| **c).count();
            for (s, c) in suite_cov.iter_mut().zip(&covers[i]) {
                *s |= *c;
            }
            if suite_cov.iter().filter(|c| **c).count() > before {
                kept.push(i);
            }
            if suite_cov.iter().all(|c| *c) {
                break;
            }
        }
        order = kept;
    }

    let mut rows = Vec::new();
    let mut suite_cov = vec![false; total];
    for (k, &i) in order.iter().enumerate() {
        let Some(original) = suite.networks.get(i) else { continue };
        let mut net = original.clone();
        let reference: Option<ActivationTrace> = original
            .activation_trace
            .as_ref()
            .and_then(|at| serde_json::to_value(at).ok())
            .and_then(|v| serde_json::from_value(v).ok());
        let mut policy = NetworkPolicy::new(&mut net, &mut innovations, &mut rng, selection, 1.0, true);
        let (t, stats) = exec.play(&mut policy, &features, &play, false);
        let covered = covered_of(&t.fitness);
        for (s, c) in suite_cov.iter_mut().zip(&covered) {
            *s |= *c;
        }
        let surprise_count = match (&reference, &policy.trace) {
            (Some(r), test) if !r.is_empty() => analyse(r, test.as_ref(), &opts.surprise).surprise_count,
            _ => 0,
        };
        let new_events = policy.new_events.clone();
        let verdict = if new_events.is_empty() && surprise_count == 0 { "pass" } else { "fail" };
        rows.push(ReplayRow {
            network: k,
            network_id: original.id,
            seed,
            total_statements: total,
            covered_statements: covered.iter().filter(|c| **c).count(),
            suite_covered: suite_cov.iter().filter(|c| **c).count(),
            events: stats.events,
            steps: stats.steps,
            surprise_count,
            new_events,
            verdict,
        });
    }
    Ok(rows)
}
