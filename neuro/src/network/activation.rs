//! Activation functions with Whisker's names and formulas.
//!
//! Whisker's sigmoid takes a gain and every call site passes `1` (the "-4.9 from the NEAT paper"
//! comment in v0.7's `ClassificationNode` is not what the code does), so `SIGMOID` is the plain
//! logistic function `1 / (1 + e^-x)`.

use std::fmt;

/// The activation functions of Whisker's `ActivationFunction` enum (same names in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ActivationFunction {
    /// Identity.
    None,
    /// Logistic function with gain 1.
    Sigmoid,
    /// Softmax over the classification nodes (only meaningful there; identity elsewhere).
    Softmax,
    /// `max(0, x)`.
    Relu,
    /// Hyperbolic tangent.
    Tanh,
}

impl ActivationFunction {
    /// The name Whisker writes into JSON (`ActivationFunction[aF]`).
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "NONE",
            Self::Sigmoid => "SIGMOID",
            Self::Softmax => "SOFTMAX",
            Self::Relu => "RELU",
            Self::Tanh => "TANH",
        }
    }

    /// Parses a JSON name; `None` for names Whisker does not know.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "NONE" => Self::None,
            "SIGMOID" => Self::Sigmoid,
            "SOFTMAX" => Self::Softmax,
            "RELU" => Self::Relu,
            "TANH" => Self::Tanh,
            _ => return None,
        })
    }
}

impl fmt::Display for ActivationFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whisker's `NeuroevolutionUtil.sigmoid(x, gain)`.
pub fn sigmoid(x: f64, gain: f64) -> f64 {
    1.0 / (1.0 + (gain * -x).exp())
}

/// Whisker's `NeuroevolutionUtil.relu`.
pub fn relu(x: f64) -> f64 {
    // `Math.max(0, NaN)` is NaN in JS; f64::max would return 0.
    if x.is_nan() { x } else { x.max(0.0) }
}

/// JS `Math.round(x * 1000) / 1000` (half-way cases round towards +infinity), as
/// `ActivationTrace.update` rounds recorded activations.
pub fn round_trace(x: f64) -> f64 {
    (x * 1000.0 + 0.5).floor() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in [
            ActivationFunction::None,
            ActivationFunction::Sigmoid,
            ActivationFunction::Softmax,
            ActivationFunction::Relu,
            ActivationFunction::Tanh,
        ] {
            assert_eq!(ActivationFunction::from_name(f.name()), Some(f));
        }
        assert_eq!(ActivationFunction::from_name("relu"), None);
    }

    #[test]
    fn formulas() {
        assert_eq!(sigmoid(0.0, 1.0), 0.5);
        assert!((sigmoid(3.5, 1.0) - 0.970_687_769).abs() < 1e-9);
        assert_eq!(relu(-2.0), 0.0);
        assert_eq!(round_trace(0.1235), 0.124);
        assert_eq!(round_trace(-0.0005), 0.0);
    }
}
