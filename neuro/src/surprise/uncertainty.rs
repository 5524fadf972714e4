//! A network's uncertainty about which event to pick, as Whisker records it per traced step
//! (`NetworkExecutor.recordActivationTrace`) and averages into the `avgUncertainty` CSV column.
//!
//! Whisker's "uncertainty" is not an entropy but the Gini impurity `1 - Σ pᵢ²` of the event
//! probabilities: `0` when one event is certain, `1 - 1/k` for a uniform choice among `k`.

/// Softmax as Whisker computes it for classification nodes: `exp(vᵢ) / Σ exp(vⱼ)`, without
/// subtracting the maximum first (so the rounding matches; values above ~709 overflow to `NaN`,
/// as in Whisker). Empty input gives an empty vector.
pub fn softmax(values: &[f64]) -> Vec<f64> {
    let denominator = values.iter().fold(0.0, |acc, v| acc + v.exp());
    values.iter().map(|v| v.exp() / denominator).collect()
}

/// Gini impurity `1 - Σ pᵢ²` of the given event probabilities (summed from `0` in order, as
/// Whisker's `reduce`). `None` for no probabilities: Whisker records no uncertainty for a step
/// without activated classification nodes.
///
/// Since v0.8 Whisker passes the softmax over *all* activated classification nodes restricted to
/// the events available at that step, so the probabilities need not sum to `1`; v0.7 normalised
/// over the available events only. Pass whichever the caller computed.
pub fn uncertainty(probabilities: &[f64]) -> Option<f64> {
    if probabilities.is_empty() {
        return None;
    }
    Some(1.0 - probabilities.iter().fold(0.0, |acc, p| acc + p * p))
}

/// Mean of the per-step uncertainties (`avgUncertainty`): sum from `0` in order divided by the
/// count; `NaN` when there are none, as Whisker's `0 / 0`.
pub fn average_uncertainty(values: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, count) = values.into_iter().fold((0.0, 0usize), |(sum, count), v| (sum + v, count + 1));
    sum / count as f64
}
