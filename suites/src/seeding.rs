//! Every random stream of a suite run, seeded in one place.
//!
//! A run has one seed (`--seed`, the coordinator's seed of the run). From it come:
//!
//! * the VM's project-visible stream ([`vm_seed`]): the same for every test, as Whisker seeds
//!   Scratch with the same seed before each test; `t.seedScratch(n)` restarts it from
//!   [`scratch_seed`]`(n)`;
//! * `Math.random` inside the suite: as in Whisker, which replaces the page's one global
//!   `Math.random` with the seeded stream, the test code draws from the VM's project stream
//!   (`Vm::math_random`), shared with the project's own draws and restarted with the VM
//!   before each test; only when a test has no VM (no project) it draws from
//!   [`math_random_seed`], restarted before each test;
//! * the driver's own stream for random inputs ([`WhiskerRandomness`]): Whisker's
//!   `Randomness`, a linear congruential generator seeded with the run seed before each test
//!   and with the converted seed by `t.seedScratch(seed)`, as in Whisker.
//!
//! Suites run in the `whisker` profile, whose project stream is Whisker's `seed-random`
//! keyed with [`vm_seed`]; `Math.random` without a project is SplitMix64.

use clowder_vm::rng::SplitMix64;

/// Seed of the VM's project-visible random stream for a run.
pub fn vm_seed(run_seed: u64) -> u64 {
    run_seed
}

/// The number Whisker seeds Scratch with for `t.seedScratch(seed)`, from `String(seed)`
/// (its `Randomness.convertSeed`): `parseInt(seed, 10)` (leading blanks, a sign and the
/// longest run of digits; `'12abc'` is 12), else, for text without a leading number such as
/// `'seed'`, the sum of its UTF-16 code units (417).
pub fn scratch_seed(seed: &str) -> f64 {
    let t = seed.trim_start();
    let (sign, rest) = match t.strip_prefix('-') {
        Some(r) => (-1.0, r),
        None => (1.0, t.strip_prefix('+').unwrap_or(t)),
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    match digits.parse::<f64>() {
        Ok(n) => sign * n,
        Err(_) => seed.encode_utf16().map(f64::from).sum(),
    }
}

/// Seed of `Math.random` for test `index` (0-based) of a run.
pub fn math_random_seed(run_seed: u64, index: usize) -> u64 {
    derive(run_seed, 0x4d61_7468, index)
}

/// Whisker's `Randomness` (`whisker-main/src/whisker/utils/Randomness.ts`), the stream its
/// random inputs draw from (`detectRandomInputs`, `registerRandomInputs`): the LCG
/// `s = (s × 9301 + 49297) mod 233280`, each draw `s / 233280`, in JavaScript doubles. Whisker
/// seeds it with the run seed before each test and with the converted seed on
/// `t.seedScratch(seed)` (checked against the real Whisker with `WhiskerProbe.js`).
#[derive(Debug, Clone)]
pub struct WhiskerRandomness {
    state: f64,
}

impl WhiskerRandomness {
    /// The generator after `Randomness.setInitialRNGSeed(seed)` (a converted seed).
    pub fn new(seed: f64) -> Self {
        WhiskerRandomness { state: seed }
    }

    /// `nextDouble()`: the next draw in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        // JavaScript's `%` is the truncating remainder, as Rust's on f64.
        self.state = (self.state * 9301.0 + 49297.0) % 233280.0;
        self.state / 233280.0
    }
}

/// A generator for one of the streams above.
pub fn stream(seed: u64) -> SplitMix64 {
    SplitMix64::new(seed)
}

/// One SplitMix64 output of (seed, stream tag, test index): distinct, well-mixed seeds.
fn derive(run_seed: u64, tag: u64, index: usize) -> u64 {
    let mut g = SplitMix64::new(run_seed ^ tag.rotate_left(32) ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    g.next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_by_test_and_purpose() {
        assert_ne!(math_random_seed(1, 0), math_random_seed(1, 1));
        assert_ne!(math_random_seed(1, 0), math_random_seed(2, 0));
        assert_eq!(math_random_seed(7, 3), math_random_seed(7, 3));
    }

    #[test]
    fn whiskers_randomness_is_its_lcg() {
        // Seed 1: (1 × 9301 + 49297) mod 233280 = 58598, then 58598 × 9301 + 49297 mod 233280.
        let mut r = WhiskerRandomness::new(1.0);
        assert_eq!(r.next_f64(), 58598.0 / 233280.0);
        let s2 = (58598.0f64 * 9301.0 + 49297.0) % 233280.0;
        assert_eq!(r.next_f64(), s2 / 233280.0);
        let mut a = WhiskerRandomness::new(417.0);
        let mut b = WhiskerRandomness::new(417.0);
        assert_eq!((a.next_f64(), a.next_f64()), (b.next_f64(), b.next_f64()));
    }

    #[test]
    fn scratch_seeds_are_whiskers_converted_seeds() {
        assert_eq!(scratch_seed("42"), 42.0);
        assert_eq!(scratch_seed("-1"), -1.0);
        assert_eq!(scratch_seed(" 12abc"), 12.0);
        assert_eq!(scratch_seed("0.5"), 0.0);
        // 's' 115 + 'e' 101 + 'e' 101 + 'd' 100: FruitCatchingTest.js's t.seedScratch('seed').
        assert_eq!(scratch_seed("seed"), 417.0);
        assert_eq!(scratch_seed("ab"), 97.0 + 98.0);
    }
}
