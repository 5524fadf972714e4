//! Whisker's `Randomness` helpers on top of [`crate::Random`].

use crate::Random;

/// `nextDoubleMinMax(min, max)`.
pub(crate) fn uniform(rng: &mut dyn Random, min: f64, max: f64) -> f64 {
    min + (max - min) * rng.next_double()
}

/// `randomBoolean()`: `nextDouble() >= 0.5`.
pub(crate) fn random_bool(rng: &mut dyn Random) -> bool {
    rng.next_double() >= 0.5
}

/// Index drawn by `pick(array)`: `nextInt(0, len)`; `None` for an empty array (Whisker would
/// continue with `undefined`).
pub(crate) fn pick_index(rng: &mut dyn Random, len: usize) -> Option<usize> {
    if len == 0 {
        return None;
    }
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let i = rng.next_int(0, len_i);
    // Clamp a misbehaving generator instead of indexing out of bounds.
    Some(usize::try_from(i).unwrap_or(0).min(len - 1))
}
