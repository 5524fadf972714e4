//! The sources of project-visible randomness (DESIGN §3).
//!
//! * [`SplitMix64`]: the fidelity oracle's `Math.random` (profiles `headless`, `default`).
//! * [`SeedRandom`]: the npm package `seed-random` 2.2.0, which Whisker installs as
//!   `Math.random` before every test execution (`Randomness.seedScratch`), keyed by the test
//!   seed (profile `whisker`). Reimplemented from its algorithm: an ARC4 stream keyed by the
//!   seed's JavaScript string, 256 outputs dropped, then six or more bytes per double.

/// SplitMix64 generator, bit-exact with the fidelity oracle's `lib/splitmix64.js`.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose first output is the first output of the reference for `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// Next raw 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Next double in `[0, 1)`, exactly `(z >> 11) * 2^-53` like the oracle's `Math.random`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
impl SplitMix64 {
    /// A value in `0..n` (`n > 0`), for tests' random inputs (the modulo bias does not matter
    /// there): the one generator of the crate's randomised tests.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True about once in `one_in` draws.
    pub(crate) fn coin(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

/// `seed-random` (npm, 2.2.0): Whisker's `Math.random` during test execution.
#[derive(Clone)]
pub struct SeedRandom {
    s: [u8; 256],
    i: u8,
    j: u8,
}

impl std::fmt::Debug for SeedRandom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeedRandom").field("i", &self.i).field("j", &self.j).finish_non_exhaustive()
    }
}

impl SeedRandom {
    /// The stream of `seed(n, {global: true})` for the number `n = seed` — what Whisker's
    /// `Randomness.seedScratch()` installs for the test seed `seed` (the servant's `-se`,
    /// parsed with `parseInt`). The package flattens a number to `String(n) + "\0"`; a seed
    /// above 2^53 is the JavaScript number nearest to it, as `parseInt` reads it.
    pub fn for_whisker_seed(seed: u64) -> Self {
        Self::for_js_number(seed as f64)
    }

    /// The stream of `seed(n, {global: true})` for the JavaScript number `n` (any sign or
    /// fraction: what a test's `t.seedScratch(n)` hands over).
    pub fn for_js_number(n: f64) -> Self {
        let mut key = crate::value::number_to_js_string(n);
        key.push('\0');
        Self::from_string_seed(&key)
    }

    /// The stream keyed by the string `seed` exactly (the package's `mixkey` of it).
    pub fn from_string_seed(seed: &str) -> Self {
        // mixkey: key[j & 255] = 255 & ((smear ^= key[j & 255] * 19) + charCode(j)); entries not
        // yet written read as `undefined`, which the int32 `^` turns into 0.
        let mut key: Vec<u32> = Vec::new();
        let mut smear: u32 = 0;
        for (j, unit) in seed.encode_utf16().enumerate() {
            let k = j & 255;
            let old = key.get(k).copied().unwrap_or(0);
            smear ^= old * 19;
            let v = smear.wrapping_add(u32::from(unit)) & 255;
            if k < key.len() {
                key[k] = v;
            } else {
                key.push(v);
            }
        }
        if key.is_empty() {
            key.push(0);
        }
        let mut s = [0u8; 256];
        for (i, x) in s.iter_mut().enumerate() {
            *x = i as u8;
        }
        let mut j: u8 = 0;
        for i in 0..256 {
            let t = s[i];
            j = j.wrapping_add(key[i % key.len()] as u8).wrapping_add(t);
            s[i] = s[j as usize];
            s[j as usize] = t;
        }
        let mut r = Self { s, i: 0, j: 0 };
        // "For robust unpredictability discard an initial batch of values."
        for _ in 0..256 {
            r.byte();
        }
        r
    }

    /// The next ARC4 output byte.
    #[inline]
    fn byte(&mut self) -> u64 {
        self.i = self.i.wrapping_add(1);
        let t = self.s[self.i as usize];
        self.j = self.j.wrapping_add(t);
        self.s[self.i as usize] = self.s[self.j as usize];
        self.s[self.j as usize] = t;
        let k = self.s[self.i as usize].wrapping_add(t);
        u64::from(self.s[k as usize])
    }

    /// The next `count` ARC4 outputs as one base-256 number (`arc4.g(count)`); `count` ≤ 6,
    /// so the package's `r * 256 + byte` in doubles is exact and equals this integer.
    #[inline]
    fn g(&mut self, count: u32) -> u64 {
        let mut r = 0;
        for _ in 0..count {
            r = r << 8 | self.byte();
        }
        r
    }

    /// The next double in `[0, 1)`, with the package's arithmetic. Every step of it is exact
    /// in doubles (integers below 2^60 that stay multiples of 256 until halved at most seven
    /// times, a power-of-two divisor), so integers give the same bits without a chain of
    /// dependent float operations; `say`'s uid draws 20 of these per bubble.
    pub fn next_f64(&mut self) -> f64 {
        const SIGNIFICANCE: u64 = 1 << 52;
        const OVERFLOW: u64 = 1 << 53;
        let mut n = self.g(6);
        let mut d: i64 = 48; // log2(256^6)
        let mut x = 0;
        while n < SIGNIFICANCE {
            n = (n + x) << 8;
            d += 8;
            x = self.g(1);
        }
        while n >= OVERFLOW {
            n >>= 1;
            d -= 1;
            x >>= 1;
        }
        // 2^-d as bits (d stays far from the exponent's limits): scaling by it is exact.
        let scale = f64::from_bits(((1023 - d) as u64) << 52);
        (n + x) as f64 * scale
    }
}

/// The project's `Math.random`: what pick random, random positions and directions, random
/// list items and backdrops draw from, and (profile `whisker`) scratch-vm's internal ids.
#[derive(Debug, Clone)]
pub enum ProjectRng {
    /// The fidelity oracle's generator.
    SplitMix64(SplitMix64),
    /// Whisker's `seed-random`.
    SeedRandom(Box<SeedRandom>),
}

impl ProjectRng {
    /// The stream a VM of `profile` starts with for `seed` (also a test driver's re-seed,
    /// Whisker's `seedScratch`): `seed-random` under `whisker`, SplitMix64 otherwise.
    pub fn new(profile: crate::Profile, seed: u64) -> Self {
        match profile {
            crate::Profile::Whisker => ProjectRng::SeedRandom(Box::new(SeedRandom::for_whisker_seed(seed))),
            crate::Profile::Headless | crate::Profile::Default => ProjectRng::SplitMix64(SplitMix64::new(seed)),
        }
    }

    /// The stream a test driver's re-seed with the JavaScript number `n` starts (Whisker's
    /// `seedScratch`): `seed-random` keyed with `String(n)` under `whisker`; otherwise
    /// SplitMix64 from `n` truncated to an integer.
    pub fn for_js_seed(profile: crate::Profile, n: f64) -> Self {
        match profile {
            crate::Profile::Whisker => ProjectRng::SeedRandom(Box::new(SeedRandom::for_js_number(n))),
            crate::Profile::Headless | crate::Profile::Default => {
                ProjectRng::SplitMix64(SplitMix64::new(n as i64 as u64))
            }
        }
    }

    /// Next double in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        match self {
            ProjectRng::SplitMix64(r) => r.next_f64(),
            ProjectRng::SeedRandom(r) => r.next_f64(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_vectors() {
        // From the oracle README (`node lib/splitmix64.js SEED 3`).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xe220a8397b1dcdaf);
        assert_eq!(r.next_u64(), 0x6e789e6aa1b965f4);
        assert_eq!(r.next_u64(), 0x06c45d188009454f);
        let mut r = SplitMix64::new(1);
        assert_eq!(r.next_f64(), 0.5665615751722809);
        assert_eq!(r.next_f64(), 0.7457817572627011);
        assert_eq!(r.next_f64(), 0.9710027535867962);
    }

    /// Outputs of the npm package `seed-random@2.2.0`:
    /// `const r = require('seed-random')(SEED); r(); r(); ...` in Node 20.
    #[test]
    fn seed_random_reference_vectors() {
        let cases: [(u64, [f64; 5]); 5] = [
            (
                0,
                [0.038085370776470735, 0.08624634995353292, 0.5921039987135952, 0.5283513935579917, 0.9201975820617915],
            ),
            (1, [0.1776348083296759, 0.21606903041839373, 0.5251053930849383, 0.6111927269176093, 0.17465900859858835]),
            (
                2,
                [
                    0.37118430221502846,
                    0.6036876390682743,
                    0.22316315843635745,
                    0.31453950542351816,
                    0.31551814389226013,
                ],
            ),
            (
                42,
                [
                    0.0016341939679719736,
                    0.9364577392619949,
                    0.6594512913361081,
                    0.26366393983479847,
                    0.7841788012846541,
                ],
            ),
            // parseInt("12345678901234567890") is 12345678901234567000 in JavaScript.
            (
                12345678901234567890,
                [0.3784078143278548, 0.8742323576971806, 0.43973215494159423, 0.6197541700442972, 0.05505967702140322],
            ),
        ];
        for (seed, want) in cases {
            let mut r = SeedRandom::for_whisker_seed(seed);
            let got: Vec<f64> = (0..5).map(|_| r.next_f64()).collect();
            assert_eq!(got, want, "seed {seed}");
        }
        // A string key has no trailing NUL: `require('seed-random')("1")`.
        let mut r = SeedRandom::from_string_seed("1");
        assert_eq!(r.next_f64(), 0.2694488477791326);
        assert_eq!(r.next_f64(), 0.43440878183925163);
        // Far into the stream: the 100 000th output for seed 1.
        let mut r = SeedRandom::for_whisker_seed(1);
        let last = (0..100_000).map(|_| r.next_f64()).last();
        assert_eq!(last, Some(0.8395502212656016));
    }

    /// The package's `prng()` as it computes, in doubles: the reference for the integer form.
    fn next_f64_in_doubles(r: &mut SeedRandom) -> f64 {
        let mut g = |count: u32| (0..count).fold(0.0, |acc: f64, _| acc * 256.0 + r.byte() as f64);
        let mut n = g(6);
        let mut d = 281_474_976_710_656.0;
        let mut x = 0.0;
        while n < 4_503_599_627_370_496.0 {
            n = (n + x) * 256.0;
            d *= 256.0;
            x = g(1);
        }
        while n >= 9_007_199_254_740_992.0 {
            n /= 2.0;
            d /= 2.0;
            x = f64::from((x as u32) >> 1);
        }
        (n + x) / d
    }

    #[test]
    fn integer_form_equals_the_package_arithmetic() {
        // 1 in 16 draws takes the extra byte (`n < 2^52`), 1 in 4 096 two of them.
        for seed in [0, 1, 7, 123_456_789] {
            let (mut a, mut b) = (SeedRandom::for_whisker_seed(seed), SeedRandom::for_whisker_seed(seed));
            for k in 0..300_000 {
                let (x, y) = (a.next_f64(), next_f64_in_doubles(&mut b));
                assert_eq!(x.to_bits(), y.to_bits(), "seed {seed}, draw {k}");
            }
        }
    }

    #[test]
    fn long_string_keys_wrap_and_smear() {
        // Keys longer than 256 units fold onto the first entries with the smear (`mixkey`).
        // `require('seed-random')("ab".repeat(200))` -> first outputs:
        let mut r = SeedRandom::from_string_seed(&"ab".repeat(200));
        let got: Vec<f64> = (0..3).map(|_| r.next_f64()).collect();
        assert_eq!(got, [0.26861191918681826, 0.6981938432827175, 0.4668685787256614]);
    }
}
