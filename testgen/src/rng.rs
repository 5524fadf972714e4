//! The search's random stream: SplitMix64 (the VM's generator) seeded from the
//! run seed, with the draws Whisker's `Randomness` offers.

use clowder_vm::rng::SplitMix64;

/// Random numbers for the search algorithms.
#[derive(Debug, Clone)]
pub struct Rng(SplitMix64);

impl Rng {
    /// The stream for `seed` and `purpose` (distinct purposes give independent streams).
    pub fn new(seed: u64, purpose: u64) -> Self {
        // Mixing keeps nearby seeds and purposes apart.
        let mut m = SplitMix64::new(seed ^ purpose.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        Rng(SplitMix64::new(m.next_u64()))
    }

    /// A double in `[0, 1)`.
    pub fn next_double(&mut self) -> f64 {
        self.0.next_f64()
    }

    /// An integer in `[min, max)` (`min` when the range is empty), as Whisker's `nextInt`.
    pub fn next_int(&mut self, min: i64, max: i64) -> i64 {
        if max <= min {
            return min;
        }
        let span = (max - min) as f64;
        let v = min + (self.next_double() * span).floor() as i64;
        v.min(max - 1)
    }

    /// An index in `[0, n)` (0 for an empty range).
    pub fn below(&mut self, n: usize) -> usize {
        self.next_int(0, n as i64) as usize
    }

    /// A gaussian sample (Marsaglia's polar method, as Whisker).
    pub fn gaussian(&mut self, mean: f64, std: f64) -> f64 {
        loop {
            let x = self.next_double() * 2.0 - 1.0;
            let y = self.next_double() * 2.0 - 1.0;
            let s = x * x + y * y;
            if s < 1.0 && s != 0.0 {
                let f = (-2.0 * s.ln() / s).sqrt();
                return mean + std * x * f;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_independence() {
        let mut r = Rng::new(1, 0);
        for _ in 0..1000 {
            let v = r.next_int(2, 20);
            assert!((2..20).contains(&v));
        }
        assert_eq!(r.next_int(5, 5), 5);
        let a: Vec<i64> = (0..5).map(|_| Rng::new(7, 1).next_int(0, 1000)).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]), "same seed, same draws");
        assert_ne!(Rng::new(7, 1).next_int(0, 1 << 40), Rng::new(7, 2).next_int(0, 1 << 40));
        let mean: f64 = (0..4000).map(|_| r.gaussian(10.0, 5.0)).sum::<f64>() / 4000.0;
        assert!((mean - 10.0).abs() < 0.5, "gaussian mean {mean}");
    }
}
