//! Statistics for comparing algorithms: Vargha-Delaney Â12, Mann-Whitney U, Holm, Pearson, the
//! sign test.
//!
//! Conventions (DESIGN §6): for "A vs B", A is the first sample. Â12 = P(A>B) + ½·P(A=B),
//! computed exactly by counting pairs (ties detected with `==`, counted as one half). The
//! Mann-Whitney U is the U of A; the p-value is two-sided. The default p is scipy's
//! `mannwhitneyu(method="asymptotic", use_continuity=True)`; when every value is tied the test
//! is not significant (p = 1).

use std::cmp::Ordering;

/// Why a statistic cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// A sample is empty.
    #[error("empty sample")]
    Empty,
    /// A value is NaN (ties and order are undefined).
    #[error("sample contains NaN")]
    NaN,
    /// The exact test would need too much work.
    #[error("exact p-value limited to {limit} values in total (got {n}); use the asymptotic p-value")]
    TooLarge {
        /// Pooled sample size.
        n: usize,
        /// The limit.
        limit: usize,
    },
}

fn check(a: &[f64], b: &[f64]) -> Result<(), StatsError> {
    if a.is_empty() || b.is_empty() {
        return Err(StatsError::Empty);
    }
    if a.iter().chain(b).any(|x| x.is_nan()) {
        return Err(StatsError::NaN);
    }
    Ok(())
}

/// Sorts a NaN-free sample; `total_cmp` orders −0.0 before 0.0, which the `<`/`==` searches
/// below treat as equal, so the order is still consistent with them.
fn sorted(v: &[f64]) -> Vec<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

/// Pair counts behind Â12 and U: how often a value of A beats, ties or loses to one of B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairCounts {
    /// Pairs (a, b) with a > b.
    pub wins: u64,
    /// Pairs with a == b.
    pub ties: u64,
    /// Size of A.
    pub n1: u64,
    /// Size of B.
    pub n2: u64,
}

impl PairCounts {
    /// Counts all n1·n2 pairs (O((n1+n2) log n2), no ranks, no rounding).
    pub fn new(a: &[f64], b: &[f64]) -> Result<Self, StatsError> {
        check(a, b)?;
        let sb = sorted(b);
        let (mut wins, mut ties) = (0u64, 0u64);
        for &x in a {
            let below = sb.partition_point(|&y| y < x);
            let not_above = sb.partition_point(|&y| y <= x);
            wins += below as u64;
            ties += (not_above - below) as u64;
        }
        Ok(Self { wins, ties, n1: a.len() as u64, n2: b.len() as u64 })
    }

    /// 2·U of A (an integer: wins count 2, ties 1).
    pub fn doubled_u(&self) -> u64 {
        2 * self.wins + self.ties
    }

    /// U of A (exact: a multiple of ½).
    pub fn u(&self) -> f64 {
        self.doubled_u() as f64 / 2.0
    }

    /// Â12 as a float, divided once from the integer counts.
    pub fn a12(&self) -> f64 {
        self.doubled_u() as f64 / (2 * self.n1 * self.n2) as f64
    }

    /// How Â12 compares with ½, decided on the integer counts (so "equal" is exact).
    pub fn a12_vs_half(&self) -> Ordering {
        self.doubled_u().cmp(&(self.n1 * self.n2))
    }
}

/// Vargha-Delaney Â12 of A over B, exact (ties count one half).
pub fn a12(a: &[f64], b: &[f64]) -> Result<f64, StatsError> {
    Ok(PairCounts::new(a, b)?.a12())
}

/// How the p-value of a Mann-Whitney test is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PMethod {
    /// Normal approximation with tie and continuity correction (scipy `asymptotic`,
    /// `use_continuity=True`; R `wilcox.test(exact=FALSE, correct=TRUE)`).
    #[default]
    Asymptotic,
    /// Exact permutation distribution of U given the observed ties (small samples).
    Exact,
}

impl PMethod {
    /// Name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            PMethod::Asymptotic => "asymptotic (normal approximation, tie and continuity correction)",
            PMethod::Exact => "exact (tie-aware permutation distribution)",
        }
    }
}

/// Result of a two-sided Mann-Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// Pair counts (U of A and Â12 follow from them).
    pub counts: PairCounts,
    /// Two-sided p-value.
    pub p: f64,
}

impl MannWhitney {
    /// U of the first sample.
    pub fn u(&self) -> f64 {
        self.counts.u()
    }
    /// Â12 of the first sample.
    pub fn a12(&self) -> f64 {
        self.counts.a12()
    }
}

/// Largest pooled sample for the exact test (counts fit in u128; the work is
/// O(n · n1 · n²) additions, about 10⁸ at this limit).
pub const EXACT_LIMIT: usize = 100;

/// Mann-Whitney U test of A against B with the chosen p-value method.
pub fn mann_whitney(a: &[f64], b: &[f64], method: PMethod) -> Result<MannWhitney, StatsError> {
    let counts = PairCounts::new(a, b)?;
    let p = match method {
        PMethod::Asymptotic => asymptotic_p(a, b, &counts),
        PMethod::Exact => {
            let (extreme, total) = exact_p_counts(a, b)?;
            extreme as f64 / total as f64
        }
    };
    Ok(MannWhitney { counts, p })
}

/// Sizes of the groups of tied values in the pooled sample (sorted order).
fn tie_groups(a: &[f64], b: &[f64]) -> Vec<u64> {
    let mut pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    pooled.sort_by(f64::total_cmp);
    let mut groups = Vec::new();
    let mut i = 0;
    while i < pooled.len() {
        let mut j = i + 1;
        while j < pooled.len() && pooled[j] == pooled[i] {
            j += 1;
        }
        groups.push((j - i) as u64);
        i = j;
    }
    groups
}

/// scipy's asymptotic two-sided p, operation for operation (`_get_mwu_z` with continuity
/// correction, then `2·norm.sf(z)`, clipped to 1). The tail is `½·erfc(z/√2)`, which keeps
/// its relative precision for tiny p where `1 − Φ(z)` would round to 0.
fn asymptotic_p(a: &[f64], b: &[f64], counts: &PairCounts) -> f64 {
    let groups = tie_groups(a, b);
    if groups.len() == 1 {
        return 1.0; // all values tied: not significant by convention
    }
    let (n1, n2) = (counts.n1, counts.n2);
    let n = n1 + n2;
    let tie_term: u128 = groups.iter().map(|&t| (t as u128).pow(3) - t as u128).sum();
    let u1 = counts.u();
    let u2 = (n1 * n2) as f64 - u1;
    let u = u1.max(u2);
    let mu = (n1 * n2) as f64 / 2.0;
    let s = ((n1 * n2) as f64 / 12.0 * ((n + 1) as f64 - tie_term as f64 / (n * (n - 1)) as f64)).sqrt();
    let z = (u - mu - 0.5) / s;
    let p = 2.0 * (0.5 * libm::erfc(z / std::f64::consts::SQRT_2));
    p.clamp(0.0, 1.0)
}

/// Exact two-sided permutation p of the Mann-Whitney test, tie-aware, as a fraction
/// (extreme splits, all splits): over all C(n, n1) ways to split the pooled sample (ties kept),
/// the share with |U − n1·n2/2| ≥ |U_obs − n1·n2/2|. Computed by dynamic programming over
/// the doubled mid-ranks (integers), so no split is enumerated and nothing is rounded.
pub fn exact_p_counts(a: &[f64], b: &[f64]) -> Result<(u128, u128), StatsError> {
    check(a, b)?;
    let (n1, n2) = (a.len(), b.len());
    let n = n1 + n2;
    if n > EXACT_LIMIT {
        return Err(StatsError::TooLarge { n, limit: EXACT_LIMIT });
    }
    // Doubled mid-ranks: a tie group occupying ranks r+1..=r+t has mid-rank r + (t+1)/2.
    let groups = tie_groups(a, b);
    let mut weights = Vec::with_capacity(n); // (doubled mid-rank, group size)
    let mut r = 0u64;
    for &t in &groups {
        weights.push((2 * r + t + 1, t));
        r += t;
    }
    let max_sum = (n * (n + 1)) as u64; // sum of all doubled ranks
    let width = max_sum as usize + 1;
    // dp[k][s]: ways to choose k values (by tie group) whose doubled ranks sum to s.
    let mut dp = vec![0u128; (n1 + 1) * width];
    dp[0] = 1;
    let binom = binomials(n);
    for &(w, t) in &weights {
        // Take j of the t tied values of this group: C(t, j) ways, adds j·w.
        let mut next = vec![0u128; (n1 + 1) * width];
        for k in 0..=n1 {
            for s in 0..width {
                let ways = dp[k * width + s];
                if ways == 0 {
                    continue;
                }
                for j in 0..=(t as usize).min(n1 - k) {
                    let s2 = s + j * w as usize;
                    if s2 >= width {
                        break;
                    }
                    next[(k + j) * width + s2] += ways * binom[t as usize][j];
                }
            }
        }
        dp = next;
    }
    // 2U1 = 2R1 − n1(n1+1); compare |2U − n1·n2| with the observed one, in integers.
    let obs = PairCounts::new(a, b)?.doubled_u() as i128;
    let center = (n1 * n2) as i128;
    let obs_dev = (obs - center).abs();
    let offset = (n1 * (n1 + 1)) as i128;
    let (mut extreme, mut total) = (0u128, 0u128);
    for s in 0..width {
        let ways = dp[n1 * width + s];
        if ways == 0 {
            continue;
        }
        total += ways;
        if ((s as i128 - offset) - center).abs() >= obs_dev {
            extreme += ways;
        }
    }
    Ok((extreme, total))
}

/// Pascal's triangle up to n (C(100, 50) < 2^97 fits in u128).
fn binomials(n: usize) -> Vec<Vec<u128>> {
    let mut c = vec![vec![0u128; n + 1]; n + 1];
    for i in 0..=n {
        c[i][0] = 1;
        for j in 1..=i {
            c[i][j] = c[i - 1][j - 1] + if j < i { c[i - 1][j] } else { 0 };
        }
    }
    c
}

/// Holm's step-down adjustment: adjusted p_(i) = max_{j≤i} min(1, (m−j+1)·p_(j)) over the
/// p-values sorted ascending (ties broken by position, so the result is deterministic).
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]).then(i.cmp(&j)));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// Pearson correlation with its two-sided p-value (as scipy `pearsonr`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pearson {
    /// Correlation coefficient r.
    pub r: f64,
    /// Two-sided p-value of r = 0 (exact under bivariate normality).
    pub p: f64,
    /// Number of pairs.
    pub n: usize,
}

/// Pearson's r and p. `None` with fewer than 3 pairs, NaNs, different lengths or a constant
/// variable (r undefined).
pub fn pearson(x: &[f64], y: &[f64]) -> Option<Pearson> {
    let n = x.len();
    if n < 3 || y.len() != n || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / n as f64;
    let (mx, my) = (mean(x), mean(y));
    let xm: Vec<f64> = x.iter().map(|v| v - mx).collect();
    let ym: Vec<f64> = y.iter().map(|v| v - my).collect();
    let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
    let (nx, ny) = (norm(&xm), norm(&ym));
    if nx == 0.0 || ny == 0.0 {
        return None;
    }
    let r = xm.iter().zip(&ym).map(|(a, b)| (a / nx) * (b / ny)).sum::<f64>().clamp(-1.0, 1.0);
    // Under H0, (r+1)/2 ~ Beta(n/2−1, n/2−1): p = 2·P(R ≥ |r|) = I_{1−r²}((n−2)/2, ½).
    let p = if r.abs() == 1.0 {
        0.0
    } else {
        let df = (n - 2) as f64;
        statrs::function::beta::beta_reg(df / 2.0, 0.5, 1.0 - r * r).clamp(0.0, 1.0)
    };
    Some(Pearson { r, p, n })
}

/// The exact two-sided sign test of paired comparisons: `wins` pairs where A is larger,
/// `losses` where B is (ties dropped, as the test prescribes). p = min(1, 2·P(X ≤ min)) with
/// X ~ Binomial(wins + losses, ½); 1 without untied pairs.
pub fn sign_test(wins: u64, losses: u64) -> f64 {
    use statrs::distribution::{Binomial, DiscreteCDF};
    let n = wins + losses;
    match Binomial::new(0.5, n) {
        Ok(b) if n > 0 => (2.0 * b.cdf(wins.min(losses))).min(1.0),
        _ => 1.0,
    }
}

/// Magnitude of an effect size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Magnitude {
    /// Below the "small" threshold.
    Negligible,
    /// Small effect.
    Small,
    /// Medium effect.
    Medium,
    /// Large effect.
    Large,
}

impl Magnitude {
    /// Lower-case label.
    pub fn label(self) -> &'static str {
        match self {
            Magnitude::Negligible => "negligible",
            Magnitude::Small => "small",
            Magnitude::Medium => "medium",
            Magnitude::Large => "large",
        }
    }
}

/// A named set of Â12 magnitude thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Thresholds {
    /// Vargha & Delaney (2000): small 0.56, medium 0.64, large 0.71 (on max(Â12, 1−Â12)).
    #[default]
    VarghaDelaney,
    /// Romano et al. (2006) for Cliff's δ = 2·Â12 − 1: |δ| small 0.147, medium 0.33, large 0.474.
    Romano,
}

impl Thresholds {
    /// Name and values, as stated in reports.
    pub fn describe(self) -> &'static str {
        match self {
            Thresholds::VarghaDelaney => {
                "Vargha-Delaney (2000): negligible < 0.56 ≤ small < 0.64 ≤ medium < 0.71 ≤ large, on max(Â12, 1−Â12)"
            }
            Thresholds::Romano => {
                "Romano et al. (2006): negligible < 0.147 ≤ small < 0.33 ≤ medium < 0.474 ≤ large, on |2·Â12 − 1|"
            }
        }
    }

    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Thresholds::VarghaDelaney => "vargha-delaney",
            Thresholds::Romano => "romano",
        }
    }

    /// Magnitude of an exact Â12 given as counts, decided in integers (no rounding at the
    /// thresholds): with d = |2U − n1·n2| / (n1·n2) = |2·Â12 − 1|, VD's t on max(Â, 1−Â)
    /// is d ≥ 2t − 1.
    pub fn magnitude(self, c: &PairCounts) -> Magnitude {
        let nn = (c.n1 * c.n2) as u128;
        let dev = (c.doubled_u() as i128 - nn as i128).unsigned_abs();
        // Thresholds on d as fractions over 1000.
        let cuts: [u128; 3] = match self {
            Thresholds::VarghaDelaney => [120, 280, 420], // 2·0.56−1, 2·0.64−1, 2·0.71−1
            Thresholds::Romano => [147, 330, 474],
        };
        let d1000 = |cut: u128| dev * 1000 >= cut * nn;
        if d1000(cuts[2]) {
            Magnitude::Large
        } else if d1000(cuts[1]) {
            Magnitude::Medium
        } else if d1000(cuts[0]) {
            Magnitude::Small
        } else {
            Magnitude::Negligible
        }
    }

    /// Magnitude of a (mean) Â12 given as a float.
    pub fn magnitude_of(self, a12: f64) -> Magnitude {
        let d = (2.0 * a12 - 1.0).abs();
        let cuts = match self {
            Thresholds::VarghaDelaney => [0.12, 0.28, 0.42],
            Thresholds::Romano => [0.147, 0.33, 0.474],
        };
        if d >= cuts[2] - 1e-12 {
            Magnitude::Large
        } else if d >= cuts[1] - 1e-12 {
            Magnitude::Medium
        } else if d >= cuts[0] - 1e-12 {
            Magnitude::Small
        } else {
            Magnitude::Negligible
        }
    }
}

/// Median of a sample (mean of the two middle values for even sizes); `None` when empty.
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let s = sorted(v);
    let m = s.len() / 2;
    Some(if s.len() % 2 == 1 { s[m] } else { (s[m - 1] + s[m]) / 2.0 })
}

/// Arithmetic mean; `None` when empty.
pub fn mean(v: &[f64]) -> Option<f64> {
    if v.is_empty() { None } else { Some(v.iter().sum::<f64>() / v.len() as f64) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_test_is_the_exact_binomial() {
        // 9 of 10 pairs favour A: p = 2·(1 + 10)/1024.
        assert!((sign_test(9, 1) - 22.0 / 1024.0).abs() < 1e-12);
        assert!((sign_test(1, 9) - 22.0 / 1024.0).abs() < 1e-12);
        assert_eq!(sign_test(5, 5), 1.0);
        assert_eq!(sign_test(0, 0), 1.0);
        // 6 of 6: 2/64.
        assert!((sign_test(6, 0) - 2.0 / 64.0).abs() < 1e-12);
    }

    #[test]
    fn a12_counts_ties_as_half() {
        let c = PairCounts::new(&[1.0, 2.0], &[1.0, 0.0]).unwrap();
        // pairs: 1>0 win, 1==1 tie, 2>1 win, 2>0 win → U = 3.5, Â12 = 3.5/4
        assert_eq!((c.wins, c.ties), (3, 1));
        assert_eq!(c.u(), 3.5);
        assert_eq!(c.a12(), 0.875);
        assert_eq!(c.a12_vs_half(), Ordering::Greater);
        assert_eq!(PairCounts::new(&[0.5; 3], &[0.5; 4]).unwrap().a12_vs_half(), Ordering::Equal);
        assert_eq!(PairCounts::new(&[0.0], &[-0.0]).unwrap().ties, 1);
    }

    #[test]
    fn bad_samples_are_errors() {
        assert_eq!(PairCounts::new(&[], &[1.0]), Err(StatsError::Empty));
        assert_eq!(PairCounts::new(&[f64::NAN], &[1.0]), Err(StatsError::NaN));
        assert!(matches!(exact_p_counts(&[0.0; 60], &[1.0; 60]), Err(StatsError::TooLarge { .. })));
    }

    #[test]
    fn all_tied_is_not_significant() {
        let m = mann_whitney(&[1.0; 20], &[1.0; 20], PMethod::Asymptotic).unwrap();
        assert_eq!(m.p, 1.0);
        assert_eq!(m.a12(), 0.5);
        let e = mann_whitney(&[1.0; 5], &[1.0; 3], PMethod::Exact).unwrap();
        assert_eq!(e.p, 1.0);
    }

    #[test]
    fn holm_adjusts_step_down() {
        let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
        // sorted: 0.005×4=0.02, 0.01×3=0.03, 0.03×2=0.06, 0.04×1=0.04→max 0.06
        assert_eq!(adj, vec![0.03, 0.06, 0.06, 0.02]);
        assert_eq!(holm(&[0.9, 0.8]), vec![1.0, 1.0]); // 0.8·2 capped at 1 carries over
    }

    #[test]
    fn magnitudes_are_decided_exactly_at_thresholds() {
        // Â12 = 0.56 exactly (56 of 100 pairs as wins): small under VD.
        let c = PairCounts { wins: 56, ties: 0, n1: 10, n2: 10 };
        assert_eq!(Thresholds::VarghaDelaney.magnitude(&c), Magnitude::Small);
        let c = PairCounts { wins: 55, ties: 1, n1: 10, n2: 10 }; // 0.555
        assert_eq!(Thresholds::VarghaDelaney.magnitude(&c), Magnitude::Negligible);
        let c = PairCounts { wins: 29, ties: 0, n1: 10, n2: 10 }; // 0.29 → 1−Â = 0.71
        assert_eq!(Thresholds::VarghaDelaney.magnitude(&c), Magnitude::Large);
        let c = PairCounts { wins: 36, ties: 0, n1: 10, n2: 10 }; // 0.36 → 0.64
        assert_eq!(Thresholds::VarghaDelaney.magnitude(&c), Magnitude::Medium);
        assert_eq!(Thresholds::Romano.magnitude(&c), Magnitude::Small); // |δ| = 0.28
        assert_eq!(Thresholds::VarghaDelaney.magnitude_of(0.71), Magnitude::Large);
        assert_eq!(Thresholds::VarghaDelaney.magnitude_of(0.5), Magnitude::Negligible);
    }

    #[test]
    fn pearson_rejects_degenerate_input() {
        assert!(pearson(&[1.0, 2.0], &[1.0, 2.0]).is_none());
        assert!(pearson(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]).is_none());
        let p = pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.5]).unwrap();
        assert!(p.r > 0.99 && p.p < 0.1);
    }

    #[test]
    fn median_and_mean() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(mean(&[]), None);
    }
}
