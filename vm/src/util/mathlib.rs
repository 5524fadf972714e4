//! Which JavaScript engine's `Math` the interpreter computes with.
//!
//! `Math.sin`, `cos`, `tan`, `asin`, `acos`, `atan`, `atan2`, `exp`, `log` and `pow` are not
//! correctly rounded in JavaScript, and engines differ in the last bit:
//!
//! * **Node 20's V8**, where the fidelity oracle runs scratch-vm, uses fdlibm's algorithms
//!   ([`super::jsmath`], bit for bit).
//! * **Chromium 156 on Linux**, where Whisker runs, calls glibc's functions. On 100 000
//!   random arguments they equal Python's (the same glibc) every time, and differ from
//!   Node's on 2 % (`asin`) to 16 % (`atan2`) of them (`scripts/maths-vs-chromium.py`).
//!
//! glibc's results are nearly always the correctly rounded ones, so [`MathLib::Chromium`]
//! computes those (CORE-MATH, through the `core-math` crate): the same bits on every machine,
//! and Chromium's on all but 0.02–0.25 % of arguments, where glibc's own result is not the
//! correctly rounded one. That remainder is an approximation, and says so.

/// The `Math` library a VM follows (the profile decides: [`MathLib::for_profile`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MathLib {
    /// Node 20's V8 (fdlibm): scratch-vm as the fidelity oracle runs it.
    #[default]
    Node,
    /// Chromium's on Linux (glibc), approximated by correct rounding: Whisker's browser.
    Chromium,
}

impl MathLib {
    /// The library of a profile: `whisker` runs in Chromium, the others as Node runs
    /// scratch-vm.
    pub fn for_profile(profile: crate::Profile) -> MathLib {
        match profile {
            crate::Profile::Whisker => MathLib::Chromium,
            crate::Profile::Headless | crate::Profile::Default => MathLib::Node,
        }
    }

    /// `Math.sin`.
    #[inline]
    pub fn sin(self, x: f64) -> f64 {
        match self {
            MathLib::Node => super::jsmath::sin(x),
            MathLib::Chromium => core_math::sin(x),
        }
    }

    /// `Math.cos`.
    #[inline]
    pub fn cos(self, x: f64) -> f64 {
        match self {
            MathLib::Node => super::jsmath::cos(x),
            MathLib::Chromium => core_math::cos(x),
        }
    }

    /// `(Math.sin(x), Math.cos(x))`.
    #[inline]
    pub fn sin_cos(self, x: f64) -> (f64, f64) {
        match self {
            MathLib::Node => super::jsmath::sin_cos(x),
            MathLib::Chromium => (core_math::sin(x), core_math::cos(x)),
        }
    }

    /// `Math.tan`.
    #[inline]
    pub fn tan(self, x: f64) -> f64 {
        match self {
            MathLib::Node => super::jsmath::tan(x),
            MathLib::Chromium => core_math::tan(x),
        }
    }

    /// `Math.asin`.
    #[inline]
    pub fn asin(self, x: f64) -> f64 {
        match self {
            MathLib::Node => super::jsmath::asin(x),
            MathLib::Chromium => core_math::asin(x),
        }
    }

    /// `Math.acos`.
    #[inline]
    pub fn acos(self, x: f64) -> f64 {
        match self {
            MathLib::Node => super::jsmath::acos(x),
            MathLib::Chromium => core_math::acos(x),
        }
    }

    /// `Math.atan`.
    #[inline]
    pub fn atan(self, x: f64) -> f64 {
        match self {
            MathLib::Node => super::jsmath::atan(x),
            MathLib::Chromium => core_math::atan(x),
        }
    }

    /// `Math.atan2`.
    #[inline]
    pub fn atan2(self, y: f64, x: f64) -> f64 {
        match self {
            MathLib::Node => super::jsmath::atan2(y, x),
            MathLib::Chromium => core_math::atan2(y, x),
        }
    }

    /// `Math.exp`.
    #[inline]
    pub fn exp(self, x: f64) -> f64 {
        match self {
            MathLib::Node => super::jsmath::exp(x),
            MathLib::Chromium => core_math::exp(x),
        }
    }

    /// `Math.log`.
    #[inline]
    pub fn log(self, x: f64) -> f64 {
        match self {
            MathLib::Node => super::jsmath::log(x),
            MathLib::Chromium => core_math::log(x),
        }
    }

    /// `Math.pow`. JavaScript's special cases come first: an exponent that is NaN, or ±∞ with
    /// a base of ±1, gives NaN, where C's `pow` gives 1.
    #[inline]
    pub fn pow(self, x: f64, y: f64) -> f64 {
        match self {
            MathLib::Node => super::jsmath::pow(x, y),
            MathLib::Chromium if y.is_nan() || (y.is_infinite() && x.abs() == 1.0) => f64::NAN,
            MathLib::Chromium => core_math::pow(x, y),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments where Chromium (glibc) and Node (fdlibm) differ in the last bit, each
    /// checked in both browsers' engines: `MathLib` gives each engine's result.
    #[test]
    fn each_library_gives_its_engines_last_bit() {
        // 7 · cos((90 − 104.6382785383737)° in radians): `move (7) steps` in a game whose
        // shell then landed one unit in the last place apart in Whisker.
        let r = (90.0 - 104.638_278_538_373_7) * std::f64::consts::PI / 180.0;
        assert_eq!(7.0 * MathLib::Node.cos(r), 6.772_783_852_721_671_5);
        assert_eq!(7.0 * MathLib::Chromium.cos(r), 6.772_783_852_721_671);
        assert_eq!(MathLib::Node.sin_cos(r), (MathLib::Node.sin(r), MathLib::Node.cos(r)));
        assert_eq!(MathLib::Chromium.sin_cos(r), (MathLib::Chromium.sin(r), MathLib::Chromium.cos(r)));
    }

    #[test]
    fn javascript_special_cases_of_pow() {
        for m in [MathLib::Node, MathLib::Chromium] {
            assert!(m.pow(1.0, f64::INFINITY).is_nan());
            assert!(m.pow(-1.0, f64::NEG_INFINITY).is_nan());
            assert!(m.pow(1.0, f64::NAN).is_nan());
            assert_eq!(m.pow(f64::NAN, 0.0), 1.0);
            assert_eq!(m.pow(10.0, 2.0), 100.0);
            assert_eq!(m.pow(10.0, f64::NEG_INFINITY), 0.0);
            assert_eq!(m.exp(1.0), std::f64::consts::E);
            assert!(m.sin(f64::INFINITY).is_nan());
            assert!(m.log(-1.0).is_nan());
            assert_eq!(m.log(0.0), f64::NEG_INFINITY);
        }
    }

    #[test]
    fn the_whisker_profile_computes_as_chromium() {
        assert_eq!(MathLib::for_profile(crate::Profile::Whisker), MathLib::Chromium);
        assert_eq!(MathLib::for_profile(crate::Profile::Default), MathLib::Node);
        assert_eq!(MathLib::for_profile(crate::Profile::Headless), MathLib::Node);
    }
}
