//! Surprise adequacy of node activations as a test oracle, as Whisker's Neatest (Feldmeier &
//! Fraser, ASE 2022) uses it.
//!
//! A network plays the original program on many seeds while its hidden-node activations are
//! recorded per Scratch step ([`ActivationTrace`], merged into a reference). It then plays a
//! mutant; each activation is judged by likelihood-based surprise adequacy ([`lsa`]: `-ln` of a
//! Gaussian kernel density estimate of the reference samples with Silverman's bandwidth), and is
//! surprising when it exceeds a threshold ([`analyse`]). A mutant is killed when a network shows
//! a new event or any surprising activation ([`mutant_verdict`]). Per step the network's
//! [`uncertainty`] about the next event is reported as well.
//!
//! Nothing here knows networks: nodes are `u32` ids, steps `u32` Scratch steps.
//!
//! # Whisker semantics mirrored
//!
//! Source: `whiskerNet/Misc/NetworkAnalysis.ts`, `Misc/ActivationTrace.ts`,
//! `utils/Statistics.ts`, `Misc/NetworkExecutor.ts`, `Algorithms/DynamicNetworkSuite.ts`; these
//! are identical in the paper's v0.7 and in master except for the softmax behind the
//! uncertainty (see [`uncertainty`]).
//!
//! - Bandwidth `h = 0.9 · min(σ, IQR / 1.34) · n^(-1/5)` with the *population* σ (divide by `n`)
//!   and Whisker's own IQR (medians of the values strictly below / above the median; `1` when a
//!   half is empty). Density `Σ K((x - sᵢ)/h) / (n·h)`, `K` the standard normal density.
//! - Constant reference samples (σ = 0): LSA `0` if the test value equals them, else the plain
//!   distance `|s₀ - x|`, judged against threshold `0` — any deviation is surprising. A density
//!   that underflows to `0` gives LSA `+∞` (surprising).
//! - A (step, node) is judged only with ≥ 30 reference samples; a surprising activation has
//!   LSA > 30 (strictly). Only the test run's first value per (step, node) is judged.
//! - The analysis walks test steps ascending and stops at the first step the reference lacks or
//!   has empty. `averageLSA` = Σ min(100, LSA) over judged activations ÷ compared steps.
//! - A missing test trace: `averageLSA` undefined, surprise count = number of traced nodes.
//! - Traces are recorded at step 1 and every fifth step ([`is_trace_step`]), values rounded to
//!   three decimals ([`round_activation`]); only activated hidden nodes are recorded.
//! - Uncertainty is the Gini impurity `1 - Σ p²`, not an entropy.
//!
//! # Deliberate differences
//!
//! - Node ids are `u32`; Whisker keys nodes by identifier strings (`H:<uID>`). The JSON form
//!   writes `H:<id>` and reads `H:<id>` or `<id>`.
//! - Nodes are visited by ascending id, not Whisker's insertion order, so the LSA sum may differ
//!   from Whisker's in the last bits.
//! - Whisker's `LSAMap` stores the running sum instead of each LSA (a bug);
//!   [`SurpriseReport::judgements`] holds each activation's own LSA.
//! - A missing test trace counts the traced node ids the reference knows of (created with or
//!   recorded since [`ActivationTrace::with_traced_nodes`]); Whisker counts the network's hidden
//!   nodes held by the trace object, which a loaded suite sets to all hidden nodes.
//! - Empty inputs give `NaN` or are skipped instead of throwing: the mean of no samples is
//!   `NaN`; a test node with no value is skipped; JSON `null` reads as `NaN`. Sorting uses
//!   `total_cmp`, so `NaN` samples have a defined order.

mod analysis;
mod stats;
mod trace;
mod uncertainty;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use analysis::{
    DEFAULT_LSA_CAP, DEFAULT_LSA_THRESHOLD, DEFAULT_MIN_SAMPLES, NodeJudgement, SurpriseConfig, SurpriseReport,
    analyse, lsa_threshold,
};
pub use stats::{
    gaussian_kernel, iqr, is_constant, kde_density, lsa, mean, median, silverman_bandwidth, std_dev, variance,
};
pub use trace::{ActivationTrace, HIDDEN_NODE_PREFIX, is_trace_step, round_activation};
pub use uncertainty::{average_uncertainty, softmax, uncertainty};

/// Why a mutant counts as killed (`DynamicNetworkSuite.isMutant`, checked in this order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum KillReason {
    /// The network playing the mutant has a classification output for an event the original
    /// network lacks: the mutant offers an event the original program did not.
    NewEvents,
    /// At least one node activation was surprising ([`SurpriseReport::surprise_count`] > 0).
    SurprisingActivations,
}

/// The paper's verdict for one test on a mutant: killed by new events first, else by any
/// surprising activation; `None` when the mutant survives this test.
pub fn mutant_verdict(new_events: bool, surprise_count: usize) -> Option<KillReason> {
    if new_events {
        Some(KillReason::NewEvents)
    } else if surprise_count > 0 {
        Some(KillReason::SurprisingActivations)
    } else {
        None
    }
}

/// Whether the verdict is "killed" ([`mutant_verdict`] is `Some`).
pub fn is_mutant(new_events: bool, surprise_count: usize) -> bool {
    mutant_verdict(new_events, surprise_count).is_some()
}

/// The events of the executed network missing from the original network, in the executed order
/// (Whisker compares the event identifiers of the classification nodes); non-empty means
/// [`KillReason::NewEvents`].
pub fn new_events<'a, T: PartialEq>(original: &[T], executed: &'a [T]) -> Vec<&'a T> {
    executed.iter().filter(|event| !original.contains(event)).collect()
}
