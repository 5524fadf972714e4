//! The Beta–Bernoulli risk model of Elyasaf et al. (§2.3 "A Bayesian Risk-Reduction
//! Approach", evaluated in §4.2.3).
//!
//! Each coverage class `C(i)` (here: a Kuhn–Higdon tuple or a window) has an unknown
//! probability `r_i` that a test in the class exposes a bug. Its prior is `Beta(α₀, β₀)`,
//! uniform `Beta(1, 1)` in the paper. Every test that hits the class is a Bernoulli trial:
//! a failure (bug found) adds one to `α`, a pass adds one to `β` (the conjugate update), so
//! after `f` failures and `p` passes
//!
//! ```text
//! r_i | data ~ Beta(α₀ + f, β₀ + p)
//! E_i = α / (α + β)                       (§4.2.3: the estimated chance of a defect)
//! V_i = α·β / ((α + β)²·(α + β + 1))      (§4.2.3: the variance of that estimate)
//! ```
//!
//! A class never tried keeps its prior: `E = 1/2`, `V = 1/12` under the uniform prior,
//! more than any class tried and passed `n ≥ 1` times (`E = 1/(n + 2)`), which is why the
//! paper prefers untried classes. The paper's overall risk is `Σ_i P(bug | C(i))·P(C(i))`
//! with `P(C(i))` from a usage profile ([`residual_risk`]; uniform when none is given). The
//! classes' posteriors are independent, so the variance of that sum is `Σ_i P(C(i))²·V_i`.
//! As the paper notes, this is a probability only when the classes partition the tests;
//! otherwise evidence counts once per class it falls in.
//!
//! Orientation: §4.2.3 counts bugs in `α` (as here); §2.3 counts passes in `α` and models
//! the chance of *no* bug, whose Beta is this one mirrored (`1 − E`, same variance).

/// A Beta distribution over a class's chance of exposing a bug: `α` counts failures, `β`
/// passes (each plus its prior).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BetaRisk {
    alpha: f64,
    beta: f64,
}

/// The posterior mean and variance of a risk.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RiskEstimate {
    /// Expected risk.
    pub mean: f64,
    /// Variance of the risk.
    pub variance: f64,
}

/// What the tests that hit one class showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClassEvidence {
    /// Hits that exposed a bug.
    pub failures: u64,
    /// Hits that passed.
    pub passes: u64,
}

/// Why [`residual_risk`] cannot answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RiskError {
    /// The usage profile and the classes differ in length.
    #[error("{weights} weights for {classes} classes")]
    Length {
        /// Weights given.
        weights: usize,
        /// Classes given.
        classes: usize,
    },
    /// A weight is negative or not finite.
    #[error("weight {index} is {value}, not a finite number ≥ 0")]
    Weight {
        /// Its position.
        index: usize,
        /// Its value.
        value: f64,
    },
}

impl BetaRisk {
    /// The paper's prior, `Beta(1, 1)` (uniform).
    pub const UNIFORM: BetaRisk = BetaRisk { alpha: 1.0, beta: 1.0 };

    /// `Beta(alpha, beta)`; `None` unless both are finite and positive.
    pub fn new(alpha: f64, beta: f64) -> Option<Self> {
        let ok = |x: f64| x.is_finite() && x > 0.0;
        (ok(alpha) && ok(beta)).then_some(BetaRisk { alpha, beta })
    }

    /// `α`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// `β`.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// The posterior after the evidence (the conjugate update).
    pub fn update(self, e: ClassEvidence) -> Self {
        BetaRisk { alpha: self.alpha + e.failures as f64, beta: self.beta + e.passes as f64 }
    }

    /// `E = α / (α + β)`.
    pub fn mean(&self) -> f64 {
        self.alpha / (self.alpha + self.beta)
    }

    /// `V = α·β / ((α + β)²·(α + β + 1))`.
    pub fn variance(&self) -> f64 {
        let s = self.alpha + self.beta;
        self.alpha * self.beta / (s * s * (s + 1.0))
    }

    /// Mean and variance.
    pub fn estimate(&self) -> RiskEstimate {
        RiskEstimate { mean: self.mean(), variance: self.variance() }
    }
}

/// The posterior risk of one class under `prior` after `e`.
pub fn class_risk(prior: BetaRisk, e: ClassEvidence) -> RiskEstimate {
    prior.update(e).estimate()
}

/// The risk of a class no test has hit: the prior's (1/2 and 1/12 for the uniform prior).
pub fn never_tried(prior: BetaRisk) -> RiskEstimate {
    prior.estimate()
}

/// The overall residual risk `Σ_i w_i·E_i` and its variance `Σ_i w_i²·V_i` over classes
/// with evidence `classes`, each class under `prior`.
///
/// `weights` is the usage profile `P(C(i))` (one per class, any non-negative scale); `None`
/// weighs every class `1/n`, which makes the result the mean posterior risk of a class. No
/// classes: no risk (0, 0).
pub fn residual_risk(
    prior: BetaRisk,
    classes: &[ClassEvidence],
    weights: Option<&[f64]>,
) -> Result<RiskEstimate, RiskError> {
    if let Some(w) = weights {
        if w.len() != classes.len() {
            return Err(RiskError::Length { weights: w.len(), classes: classes.len() });
        }
        if let Some((index, &value)) = w.iter().enumerate().find(|(_, x)| !(x.is_finite() && **x >= 0.0)) {
            return Err(RiskError::Weight { index, value });
        }
    }
    let uniform = 1.0 / classes.len().max(1) as f64;
    let (mut mean, mut variance) = (0.0, 0.0);
    for (i, e) in classes.iter().enumerate() {
        let w = weights.and_then(|w| w.get(i).copied()).unwrap_or(uniform);
        let r = class_risk(prior, *e);
        mean += w * r.mean;
        variance += w * w * r.variance;
    }
    Ok(RiskEstimate { mean, variance })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn untried_class_has_the_prior_risk() {
        let r = never_tried(BetaRisk::UNIFORM);
        assert!(close(r.mean, 0.5) && close(r.variance, 1.0 / 12.0), "{r:?}");
        assert_eq!(class_risk(BetaRisk::UNIFORM, ClassEvidence::default()), r);
        let p = BetaRisk::new(2.0, 6.0).unwrap();
        assert!(close(never_tried(p).mean, 0.25));
        assert!(close(never_tried(p).variance, 12.0 / (64.0 * 9.0)));
    }

    #[test]
    fn passes_lower_the_risk_by_the_rule_of_succession() {
        for n in [1u64, 2, 10, 1000] {
            let r = class_risk(BetaRisk::UNIFORM, ClassEvidence { failures: 0, passes: n });
            let s = n as f64 + 2.0;
            assert!(close(r.mean, 1.0 / s), "n = {n}: {r:?}");
            assert!(close(r.variance, (n as f64 + 1.0) / (s * s * (s + 1.0))));
            assert!(r.mean < 0.5 && r.variance < 1.0 / 12.0);
        }
        // Failures raise it: Beta(1 + 3, 1 + 1) has mean 4/6.
        let r = class_risk(BetaRisk::UNIFORM, ClassEvidence { failures: 3, passes: 1 });
        assert!(close(r.mean, 4.0 / 6.0) && close(r.variance, 8.0 / (36.0 * 7.0)));
    }

    #[test]
    fn variance_vanishes_with_evidence() {
        // §4.2.3, Figure 4: the estimator stabilises as hits accumulate.
        let mut last = f64::INFINITY;
        for n in [0u64, 10, 100, 1000, 10_000] {
            let v = class_risk(BetaRisk::UNIFORM, ClassEvidence { failures: n / 10, passes: n - n / 10 }).variance;
            assert!(v < last);
            last = v;
        }
        assert!(last < 1e-5);
    }

    #[test]
    fn overall_risk_weighs_classes() {
        let classes = [
            ClassEvidence::default(),
            ClassEvidence { failures: 0, passes: 2 },
            ClassEvidence { failures: 1, passes: 0 },
        ];
        // Uniform: the mean of 1/2, 1/4 and 2/3.
        let r = residual_risk(BetaRisk::UNIFORM, &classes, None).unwrap();
        assert!(close(r.mean, (0.5 + 0.25 + 2.0 / 3.0) / 3.0));
        let v: f64 = [1.0 / 12.0, 3.0 / 80.0, 2.0 / 36.0].iter().sum::<f64>() / 9.0;
        assert!(close(r.variance, v), "{} vs {v}", r.variance);
        let r = residual_risk(BetaRisk::UNIFORM, &classes, Some(&[0.0, 1.0, 0.0])).unwrap();
        assert!(close(r.mean, 0.25) && close(r.variance, 3.0 / 80.0));
        assert_eq!(residual_risk(BetaRisk::UNIFORM, &[], None), Ok(RiskEstimate { mean: 0.0, variance: 0.0 }));
        assert_eq!(
            residual_risk(BetaRisk::UNIFORM, &classes, Some(&[1.0])),
            Err(RiskError::Length { weights: 1, classes: 3 })
        );
        assert!(matches!(
            residual_risk(BetaRisk::UNIFORM, &classes, Some(&[1.0, f64::NAN, 1.0])),
            Err(RiskError::Weight { index: 1, .. })
        ));
        assert!(BetaRisk::new(0.0, 1.0).is_none() && BetaRisk::new(1.0, f64::INFINITY).is_none());
    }
}
