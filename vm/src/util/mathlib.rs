//! Which JavaScript engine's `Math` the interpreter computes with.
//!
//! `Math.sin`, `cos`, `tan`, `asin`, `acos`, `atan`, `atan2`, `exp`, `log` and `pow` are not
//! correctly rounded in JavaScript, and engines differ in the last bit:
//!
//! * **Node 20's V8**, where the fidelity oracle runs scratch-vm, uses fdlibm's algorithms
//!   ([`super::jsmath`], bit for bit).
//! * **Chromium 148 on Linux** (Debian's, the browser the whisker-oracle runs Whisker in
//!   here since 2026-11-28) keeps V8's fdlibm ports for `tan`, `asin`, `acos`, `atan`,
//!   `atan2`, `exp` and `log` (Node's bits on 20 000 of 20 000 arguments each), computes
//!   `sin` and `cos` with V8's copy of glibc's, and `pow` with the C library's.
//! * **Chromium 156 on Linux** (the oracle's browser until then) calls glibc for all ten: on
//!   100 000 random arguments they equalled Python's (the same glibc) every time.
//!
//! glibc's results are nearly always the correctly rounded ones, so where a browser uses
//! glibc clowder computes those (CORE-MATH, through the `core-math` crate): the same bits on
//! every machine, and the browser's on all but 0.02–0.25 % of arguments, where glibc's own
//! result is not the correctly rounded one. That remainder is an approximation, and says so
//! (`scripts/maths-vs-chromium.py` measures it against the machine's Chromium).

/// The `Math` library a VM follows (the profile decides: [`MathLib::for_profile`]; the
/// `whisker` profile can be given another: [`crate::VmOptions::whisker_maths`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MathLib {
    /// Node 20's V8 (fdlibm): scratch-vm as the fidelity oracle runs it.
    #[default]
    Node,
    /// Chromium 148 on Linux: fdlibm (as [`MathLib::Node`]) but for `sin`, `cos` and `pow`,
    /// which are glibc's, approximated by correct rounding. The `whisker` profile's default.
    Chromium,
    /// Chromium 156 on Linux: every function glibc's, approximated by correct rounding.
    Glibc,
}

impl MathLib {
    /// The names `--whisker-maths` takes, with the library each one means.
    pub const NAMES: [(&'static str, MathLib); 3] =
        [("chromium", MathLib::Chromium), ("glibc", MathLib::Glibc), ("node", MathLib::Node)];

    /// The library a name of [`MathLib::NAMES`] means.
    pub fn from_name(name: &str) -> Option<MathLib> {
        MathLib::NAMES.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
    }

    /// The library a name given from outside means, or an error listing the known names.
    pub fn parse_name(name: &str) -> Result<MathLib, String> {
        MathLib::from_name(name).ok_or_else(|| {
            let known: Vec<&str> = MathLib::NAMES.iter().map(|(n, _)| *n).collect();
            format!("unknown maths library {name:?} (known: {})", known.join(", "))
        })
    }

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
            MathLib::Chromium | MathLib::Glibc => core_math::sin(x),
        }
    }

    /// `Math.cos`.
    #[inline]
    pub fn cos(self, x: f64) -> f64 {
        match self {
            MathLib::Node => super::jsmath::cos(x),
            MathLib::Chromium | MathLib::Glibc => core_math::cos(x),
        }
    }

    /// `(Math.sin(x), Math.cos(x))`.
    #[inline]
    pub fn sin_cos(self, x: f64) -> (f64, f64) {
        match self {
            MathLib::Node => super::jsmath::sin_cos(x),
            MathLib::Chromium | MathLib::Glibc => (core_math::sin(x), core_math::cos(x)),
        }
    }

    /// `Math.tan`.
    #[inline]
    pub fn tan(self, x: f64) -> f64 {
        match self {
            MathLib::Node | MathLib::Chromium => super::jsmath::tan(x),
            MathLib::Glibc => core_math::tan(x),
        }
    }

    /// `Math.asin`.
    #[inline]
    pub fn asin(self, x: f64) -> f64 {
        match self {
            MathLib::Node | MathLib::Chromium => super::jsmath::asin(x),
            MathLib::Glibc => core_math::asin(x),
        }
    }

    /// `Math.acos`.
    #[inline]
    pub fn acos(self, x: f64) -> f64 {
        match self {
            MathLib::Node | MathLib::Chromium => super::jsmath::acos(x),
            MathLib::Glibc => core_math::acos(x),
        }
    }

    /// `Math.atan`.
    #[inline]
    pub fn atan(self, x: f64) -> f64 {
        match self {
            MathLib::Node | MathLib::Chromium => super::jsmath::atan(x),
            MathLib::Glibc => core_math::atan(x),
        }
    }

    /// `Math.atan2`.
    #[inline]
    pub fn atan2(self, y: f64, x: f64) -> f64 {
        match self {
            MathLib::Node | MathLib::Chromium => super::jsmath::atan2(y, x),
            MathLib::Glibc => core_math::atan2(y, x),
        }
    }

    /// `Math.exp`.
    #[inline]
    pub fn exp(self, x: f64) -> f64 {
        match self {
            MathLib::Node | MathLib::Chromium => super::jsmath::exp(x),
            MathLib::Glibc => core_math::exp(x),
        }
    }

    /// `Math.log`.
    #[inline]
    pub fn log(self, x: f64) -> f64 {
        match self {
            MathLib::Node | MathLib::Chromium => super::jsmath::log(x),
            MathLib::Glibc => core_math::log(x),
        }
    }

    /// `Math.pow`. JavaScript's special cases come first: an exponent that is NaN, or ±∞ with
    /// a base of ±1, gives NaN, where C's `pow` gives 1.
    #[inline]
    pub fn pow(self, x: f64, y: f64) -> f64 {
        match self {
            MathLib::Node => super::jsmath::pow(x, y),
            MathLib::Chromium | MathLib::Glibc if y.is_nan() || (y.is_infinite() && x.abs() == 1.0) => f64::NAN,
            MathLib::Chromium | MathLib::Glibc => core_math::pow(x, y),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments where glibc and Node (fdlibm) differ in the last bit, each checked in the
    /// browsers' engines: `MathLib` gives each engine's result.
    #[test]
    fn each_library_gives_its_engines_last_bit() {
        // 7 · cos((90 − 104.6382785383737)° in radians): `move (7) steps` in a game whose
        // shell then landed one unit in the last place apart in Whisker.
        let r = (90.0 - 104.638_278_538_373_7) * std::f64::consts::PI / 180.0;
        assert_eq!(7.0 * MathLib::Node.cos(r), 6.772_783_852_721_671_5);
        assert_eq!(7.0 * MathLib::Chromium.cos(r), 6.772_783_852_721_671);
        assert_eq!(MathLib::Node.sin_cos(r), (MathLib::Node.sin(r), MathLib::Node.cos(r)));
        assert_eq!(MathLib::Chromium.sin_cos(r), (MathLib::Chromium.sin(r), MathLib::Chromium.cos(r)));
        assert_eq!(MathLib::Glibc.cos(r), MathLib::Chromium.cos(r));
        // `point towards` from (-9.141998366369087, 30.93634174562138) to (-179, -87): a
        // jellyfish of a repaired Sternenjagd whose direction Whisker's generated test checks
        // exactly. Chromium 148 and Node 20 give fdlibm's -2.534686829300957, glibc (Python,
        // Chromium 156) -2.5346868293009575.
        let (dy, dx) = (-117.936_341_745_621_38, -169.858_001_633_630_92);
        assert_eq!(MathLib::Node.atan2(dy, dx), -2.534_686_829_300_957);
        assert_eq!(MathLib::Chromium.atan2(dy, dx), -2.534_686_829_300_957);
        assert_eq!(MathLib::Glibc.atan2(dy, dx), -2.534_686_829_300_957_5);
    }

    #[test]
    fn every_name_means_its_library() {
        for (name, m) in MathLib::NAMES {
            assert_eq!(MathLib::from_name(name), Some(m));
        }
        assert_eq!(MathLib::from_name("v8"), None);
    }

    #[test]
    fn javascript_special_cases_of_pow() {
        for m in [MathLib::Node, MathLib::Chromium, MathLib::Glibc] {
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
