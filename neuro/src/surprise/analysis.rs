//! Judging a test trace against a reference trace, as Whisker's `NetworkAnalysis.LSA` and
//! `analyseNetwork`.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::stats::{is_constant, lsa};
use super::trace::ActivationTrace;

/// LSA above which a node activation is surprising (Whisker and the paper: 30).
pub const DEFAULT_LSA_THRESHOLD: f64 = 30.0;
/// Reference samples a (step, node) needs before it is judged (Whisker: 30).
pub const DEFAULT_MIN_SAMPLES: usize = 30;
/// Cap on one activation's LSA in the average (Whisker: 100), so one `+∞` does not swamp it.
pub const DEFAULT_LSA_CAP: f64 = 100.0;

/// Parameters of the surprise analysis; [`Default`] is Whisker's fixed values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SurpriseConfig {
    /// LSA above which a non-constant reference finds an activation surprising.
    pub threshold: f64,
    /// Nodes with fewer reference samples at a step are skipped.
    pub min_samples: usize,
    /// Each activation adds `min(cap, LSA)` to the sum behind [`SurpriseReport::average_lsa`].
    pub lsa_cap: f64,
}

impl Default for SurpriseConfig {
    fn default() -> Self {
        Self { threshold: DEFAULT_LSA_THRESHOLD, min_samples: DEFAULT_MIN_SAMPLES, lsa_cap: DEFAULT_LSA_CAP }
    }
}

/// The threshold for one reference sample set (`NetworkAnalysis.getLSAThreshold`): `0` for a
/// constant reference — any deviation, whose LSA is then the plain distance, is surprising — and
/// `config.threshold` otherwise.
pub fn lsa_threshold(reference: &[f64], config: &SurpriseConfig) -> f64 {
    if is_constant(reference) { 0.0 } else { config.threshold }
}

/// The judgement of one node's activation at one step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NodeJudgement {
    /// Scratch step.
    pub step: u32,
    /// Node id.
    pub node: u32,
    /// The activation of the test run (its first value at this step).
    pub value: f64,
    /// Its LSA against the reference samples (uncapped; may be `+∞`).
    pub lsa: f64,
    /// The threshold it was compared with ([`lsa_threshold`]).
    pub threshold: f64,
    /// `lsa > threshold`.
    pub surprising: bool,
}

/// Outcome of comparing a test trace with a reference trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurpriseReport {
    /// Whisker's `averageLSA`, reported as `surpriseNodeAdequacy` in its CSV: the sum over all
    /// judged activations of `min(cap, LSA)`, divided by the number of compared steps (steps, not
    /// activations — so it grows with the number of traced nodes). `None` when the test trace is
    /// missing (Whisker: `undefined`); `NaN` when no step was compared (Whisker's `0 / 0`).
    pub average_lsa: Option<f64>,
    /// Whisker's `surpriseCount`: the number of surprising (step, node) activations, or — when
    /// the test trace is missing — the number of traced nodes of the reference.
    pub surprise_count: usize,
    /// Every judged activation, by ascending step, then node.
    pub judgements: Vec<NodeJudgement>,
    /// Nodes surprising at some step.
    pub suspicious_nodes: BTreeSet<u32>,
    /// Test steps compared (those with reference data, up to the first without).
    pub compared_steps: usize,
    /// The first test step without reference data (absent or empty there), where the analysis
    /// stopped — Whisker ignores everything from there on, e.g. a longer test run.
    pub stopped_at: Option<u32>,
    /// Whether there was no test trace (the program could not be executed).
    pub test_missing: bool,
}

impl SurpriseReport {
    /// Whether any activation was surprising (or the test trace was missing and nodes are traced).
    pub fn is_surprising(&self) -> bool {
        self.surprise_count > 0
    }
}

/// `Math.min(cap, lsa)`: a `NaN` LSA stays `NaN`, as in JavaScript (and unlike [`f64::min`]).
fn capped(lsa: f64, cap: f64) -> f64 {
    super::stats::js_min(cap, lsa)
}

/// Compares `test` (one run, e.g. on a mutant) with the `reference` trace (many runs on the
/// original program), as Whisker's `NetworkAnalysis.analyseNetwork`.
///
/// For each test step in ascending order: if the reference lacks the step or has no node there,
/// the analysis stops. Otherwise each test node whose reference has at least
/// `config.min_samples` values is judged: its first value's [`lsa`] against the reference is
/// compared with [`lsa_threshold`]; nodes unknown to the reference or with too few samples are
/// skipped (the step still counts as compared). A missing test trace makes every traced node of
/// the reference count as surprising.
///
/// Callers without a reference trace should not call this: Whisker then leaves `averageLSA` and
/// `surpriseCount` at `0`.
pub fn analyse(reference: &ActivationTrace, test: Option<&ActivationTrace>, config: &SurpriseConfig) -> SurpriseReport {
    let Some(test) = test else {
        return SurpriseReport {
            average_lsa: None,
            surprise_count: reference.traced_nodes().len(),
            judgements: Vec::new(),
            suspicious_nodes: BTreeSet::new(),
            compared_steps: 0,
            stopped_at: None,
            test_missing: true,
        };
    };

    let mut lsa_sum = 0.0;
    let mut report = SurpriseReport {
        average_lsa: None,
        surprise_count: 0,
        judgements: Vec::new(),
        suspicious_nodes: BTreeSet::new(),
        compared_steps: 0,
        stopped_at: None,
        test_missing: false,
    };
    for (step, test_nodes) in test.iter() {
        let reference_nodes = match reference.step(step) {
            Some(nodes) if !nodes.is_empty() => nodes,
            _ => {
                report.stopped_at = Some(step);
                break;
            }
        };
        for (&node, test_values) in test_nodes {
            // Whisker reads `nodeTrace[0]`; an empty list never arises there, so skip it rather
            // than compute with `undefined`.
            let Some(&value) = test_values.first() else { continue };
            let samples = match reference_nodes.get(&node) {
                Some(samples) if samples.len() >= config.min_samples => samples,
                _ => continue,
            };
            let node_lsa = lsa(samples, value);
            let threshold = lsa_threshold(samples, config);
            lsa_sum += capped(node_lsa, config.lsa_cap);
            let surprising = node_lsa > threshold;
            if surprising {
                report.surprise_count += 1;
                report.suspicious_nodes.insert(node);
            }
            report.judgements.push(NodeJudgement { step, node, value, lsa: node_lsa, threshold, surprising });
        }
        report.compared_steps += 1;
    }
    report.average_lsa = Some(lsa_sum / report.compared_steps as f64);
    report
}
