//! A small deterministic generator for the tests (splitmix64).

use clowder_neuro::Random;

pub struct TestRng(pub u64);

impl Random for TestRng {
    fn next_double(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    fn next_int(&mut self, min: i64, max: i64) -> i64 {
        if max <= min {
            return min;
        }
        min + (self.next_double() * (max - min) as f64).floor() as i64
    }

    /// Marsaglia's polar method, as Whisker's `nextGaussian`.
    fn gaussian(&mut self, mean: f64, std: f64) -> f64 {
        loop {
            let x = self.next_double() * 2.0 - 1.0;
            let y = self.next_double() * 2.0 - 1.0;
            let s = x * x + y * y;
            if s < 1.0 && s != 0.0 {
                return mean + std * x * (-2.0 * s.ln() / s).sqrt();
            }
        }
    }
}
