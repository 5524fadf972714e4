//! The statistics behind likelihood-based surprise adequacy, computed as Whisker's
//! `utils/Statistics.ts` computes them: population variance, Whisker's own inter-quartile range,
//! Silverman's rule of thumb and a Gaussian kernel density estimate.
//!
//! Empty input never panics: where Whisker would throw (`reduce` without a start value) or read
//! `undefined`, these functions return `NaN`, the value such a computation has in JavaScript.

use std::f64::consts::PI;

/// `Math.min` of two numbers: unlike [`f64::min`], `NaN` wins, so a `NaN` bandwidth stays `NaN`.
pub(crate) fn js_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() { f64::NAN } else { a.min(b) }
}

/// Sum from the first element on, the order of Whisker's `reduce` without a start value, so the
/// rounding matches; `None` for an empty slice.
fn left_sum(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut iter = values.into_iter();
    let first = iter.next()?;
    Some(iter.fold(first, |acc, x| acc + x))
}

/// Arithmetic mean (`Statistics.mean`); `NaN` for no samples.
pub fn mean(samples: &[f64]) -> f64 {
    match left_sum(samples.iter().copied()) {
        Some(sum) => sum / samples.len() as f64,
        None => f64::NAN,
    }
}

/// Population variance, dividing by `n` (not `n - 1`), as `Statistics.variance`; `NaN` for no
/// samples.
pub fn variance(samples: &[f64]) -> f64 {
    let m = mean(samples);
    match left_sum(samples.iter().map(|x| (x - m) * (x - m))) {
        Some(sum) => sum / samples.len() as f64,
        None => f64::NAN,
    }
}

/// Population standard deviation (`Statistics.std`); `NaN` for no samples.
pub fn std_dev(samples: &[f64]) -> f64 {
    variance(samples).sqrt()
}

/// Ascending copy; `total_cmp` keeps the order total even with `NaN` (JavaScript's comparator
/// would leave it unspecified).
fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// Median of already sorted values: the mean of the two middle ones for an even count.
fn median_of_sorted(sorted: &[f64]) -> f64 {
    let middle = sorted.len() / 2;
    if sorted.is_empty() {
        f64::NAN
    } else if sorted.len() % 2 == 0 {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    } else {
        sorted[middle]
    }
}

/// Median (`Statistics.median`); `NaN` for no samples.
pub fn median(samples: &[f64]) -> f64 {
    median_of_sorted(&sorted(samples))
}

/// Whether every sample equals the first (JavaScript `every(v => v == a[0])`): true for none.
pub fn is_constant(samples: &[f64]) -> bool {
    samples.first().is_none_or(|&first| samples.iter().all(|&v| v == first))
}

/// Inter-quartile range as `Statistics.iqr` defines it: the medians of the values strictly below
/// and strictly above the median are the quartiles; `0` when all samples are equal (also for
/// none), and `1` when either half is empty (e.g. `[1, 1, 1, 1, 10]`).
pub fn iqr(samples: &[f64]) -> f64 {
    let sorted = sorted(samples);
    if is_constant(&sorted) {
        return 0.0;
    }
    let q2 = median_of_sorted(&sorted);
    let lower: Vec<f64> = sorted.iter().copied().filter(|&v| v < q2).collect();
    let upper: Vec<f64> = sorted.iter().copied().filter(|&v| v > q2).collect();
    if lower.is_empty() || upper.is_empty() {
        return 1.0;
    }
    median_of_sorted(&upper) - median_of_sorted(&lower)
}

/// Standard normal density, `(1 / sqrt(2π)) · exp(-x² / 2)` (`Statistics.gaussianKernel`).
pub fn gaussian_kernel(x: f64) -> f64 {
    (1.0 / (2.0 * PI).sqrt()) * (-0.5 * (x * x)).exp()
}

/// Silverman's rule of thumb as `Statistics.silvermanRuleOfThumb`:
/// `0.9 · min(σ, IQR / 1.34) · n^(-1/5)` with the population σ and Whisker's [`iqr`].
///
/// It is `0` for constant samples (σ = IQR = 0); for non-constant ones both σ and the IQR are
/// positive (the quartiles lie strictly on either side of the median, or the IQR is `1`), so the
/// bandwidth is positive. `NaN` for no samples.
pub fn silverman_bandwidth(samples: &[f64]) -> f64 {
    0.9 * js_min(std_dev(samples), iqr(samples) / 1.34) * (samples.len() as f64).powf(-0.2)
}

/// Gaussian kernel density estimate of `samples` at `x` with [`silverman_bandwidth`]:
/// `Σ K((x - sᵢ) / h) / (n · h)`.
///
/// Degenerate input is not special-cased (that is [`lsa`]'s job): constant samples give `h = 0`
/// and so `NaN` or `0`; no samples give `NaN`.
pub fn kde_density(samples: &[f64], x: f64) -> f64 {
    let bandwidth = silverman_bandwidth(samples);
    let kernel_sum: f64 = samples.iter().map(|&s| gaussian_kernel((x - s) / bandwidth)).fold(0.0, |acc, k| acc + k);
    kernel_sum / (samples.len() as f64 * bandwidth)
}

/// Likelihood-based surprise adequacy of `x` against reference `samples`, as Whisker's
/// `NetworkAnalysis.calculateLSA`:
///
/// - `0` when every sample equals `x` (also when there are no samples);
/// - `|s₀ - x|` when the samples are constant but differ from `x` — the KDE bandwidth would be
///   `0`, so Whisker uses the distance instead (judged against threshold `0`, see
///   [`lsa_threshold`](super::lsa_threshold));
/// - otherwise `-ln(density)` of the [`kde_density`]. A density that underflows to `0` (a value
///   far from all samples) gives `+∞`, as in Whisker; callers cap it where Whisker does.
pub fn lsa(samples: &[f64], x: f64) -> f64 {
    if samples.iter().all(|&s| s == x) {
        return 0.0;
    }
    match samples.first() {
        Some(&first) if is_constant(samples) => (first - x).abs(),
        _ => -kde_density(samples, x).ln(),
    }
}
