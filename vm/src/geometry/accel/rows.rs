//! Rows of stage pixels as bit sets: one bit per integer x in −240..=240 (481 bits in eight
//! words), the shape every per-row answer of the accelerated queries takes, so that
//! collision between drawables is a word-wise AND.

/// Leftmost stage column.
pub(crate) const X0: i32 = -240;
/// Rightmost stage column.
pub(crate) const X1: i32 = 240;
/// Bottom stage row.
pub(crate) const Y0: i32 = -180;
/// Top stage row.
pub(crate) const Y1: i32 = 180;
/// Stage rows (−180..=180).
pub(crate) const ROWS: usize = (Y1 - Y0 + 1) as usize;
/// Stage columns (−240..=240).
pub(crate) const COLS: usize = (X1 - X0 + 1) as usize;
/// Words per row.
pub(crate) const WORDS: usize = COLS.div_ceil(64);

/// One row of stage pixels.
pub(crate) type Row = [u64; WORDS];

/// The empty row.
pub(crate) const EMPTY: Row = [0; WORDS];

/// Row index of stage row `y` (which must be on the stage).
#[inline]
pub(crate) fn row_index(y: i32) -> usize {
    (y - Y0) as usize
}

/// Whether (x, y) is a stage pixel.
#[inline]
pub(crate) fn on_stage(x: i32, y: i32) -> bool {
    (X0..=X1).contains(&x) && (Y0..=Y1).contains(&y)
}

/// Sets the bit of column x.
#[inline]
pub(crate) fn set(r: &mut Row, x: i32) {
    let b = (x - X0) as usize;
    r[b / 64] |= 1 << (b % 64);
}

/// Sets the bits of columns `a..=b` (on the stage) where `bits(k)` has bit `i` set for column
/// `a + k + i` (`k` a multiple of 64 from 0).
#[inline]
pub(crate) fn or_bits(r: &mut Row, a: i32, b: i32, bits: impl Fn(i64) -> u64) {
    let (p, len) = ((a - X0) as usize, (b - a + 1) as usize);
    let mut k = 0;
    while k < len {
        let mut v = bits(k as i64);
        if len - k < 64 {
            v &= (1u64 << (len - k)) - 1;
        }
        let (w, o) = ((p + k) / 64, (p + k) % 64);
        r[w] |= v << o;
        if o > 0 && w + 1 < WORDS {
            r[w + 1] |= v >> (64 - o);
        }
        k += 64;
    }
}

/// Clears the bit of column x.
#[inline]
pub(crate) fn clear(r: &mut Row, x: i32) {
    let b = (x - X0) as usize;
    r[b / 64] &= !(1 << (b % 64));
}

/// Whether the bit of column x is set.
#[inline]
pub(crate) fn get(r: &Row, x: i32) -> bool {
    let b = (x - X0) as usize;
    r[b / 64] >> (b % 64) & 1 != 0
}

/// The columns `a..=b` (clamped to the stage; empty when `a > b`).
pub(crate) fn range(a: i32, b: i32) -> Row {
    let mut r = EMPTY;
    let (a, b) = (a.max(X0), b.min(X1));
    if a > b {
        return r;
    }
    let (a, b) = ((a - X0) as usize, (b - X0) as usize);
    for (w, word) in r.iter_mut().enumerate() {
        let (lo, hi) = (w * 64, w * 64 + 63);
        if hi < a || lo > b {
            continue;
        }
        let from = a.max(lo) - lo;
        let to = b.min(hi) - lo;
        *word = (u64::MAX >> (63 - to)) & (u64::MAX << from);
    }
    r
}

/// `a & b`.
#[inline]
pub(crate) fn and(a: &Row, b: &Row) -> Row {
    std::array::from_fn(|i| a[i] & b[i])
}

/// Whether `a & b` has a bit set.
#[inline]
pub(crate) fn meet(a: &Row, b: &Row) -> bool {
    a.iter().zip(b).any(|(x, y)| x & y != 0)
}

/// Whether no bit is set.
#[inline]
pub(crate) fn is_empty(r: &Row) -> bool {
    r.iter().all(|w| *w == 0)
}

/// The columns whose bits are set, left to right.
pub(crate) fn columns(r: &Row) -> impl Iterator<Item = i32> + '_ {
    r.iter().enumerate().flat_map(|(w, &word)| {
        let mut bits = word;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let b = bits.trailing_zeros();
            bits &= bits - 1;
            Some((w * 64) as i32 + b as i32 + X0)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_columns() {
        for (a, b) in [(-240, 240), (-300, -239), (0, 0), (63 - 240, 64 - 240), (5, 4), (239, 400), (-10, 130)] {
            let r = range(a, b);
            let want: Vec<i32> = (a.max(X0)..=b.min(X1)).collect();
            assert_eq!(columns(&r).collect::<Vec<_>>(), want, "{a}..={b}");
        }
        let mut r = EMPTY;
        set(&mut r, 17);
        set(&mut r, -240);
        assert!(get(&r, 17) && get(&r, -240) && !get(&r, 16));
        clear(&mut r, 17);
        assert_eq!(columns(&r).collect::<Vec<_>>(), vec![-240]);
        assert!(meet(&r, &range(-240, -240)) && !meet(&r, &range(-239, 240)));
        assert!(is_empty(&and(&r, &range(0, 10))));
    }
}
