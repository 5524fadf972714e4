//! Exact, incremental counting of covered Kuhn–Higdon tuples and windows
//! ([`SequenceCounter`] describes the algorithms).

use std::collections::BTreeSet;

/// The most 64-bit words a dense set of covered items may take (4 MiB); larger ones are
/// kept sparse.
pub const DENSE_WORDS: usize = 1 << 19;

/// Which sequence-coverage criterion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Criterion {
    /// Kuhn–Higdon: ordered tuples of distinct symbols as subsequences.
    KuhnHigdon,
    /// Σ\*wΣ\*: words of length t (repetitions allowed) as contiguous windows.
    Window,
}

/// The tuple or window length `t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Strength {
    /// t = 2.
    Two,
    /// t = 3.
    Three,
}

impl Strength {
    /// `t` as a number.
    pub fn t(self) -> usize {
        match self {
            Strength::Two => 2,
            Strength::Three => 3,
        }
    }
}

/// Covered items of one criterion and strength over an alphabet of `k` symbols, growing
/// one test at a time ([`SequenceCounter::add`] says what each test adds).
///
/// Tests arrive as symbol indices `0..k` (anything `≥ k`, such as
/// [`SequenceCounter::OUTSIDE`], is outside the alphabet).
///
/// **Kuhn–Higdon, dense** (the covered tuples fit in [`DENSE_WORDS`] words): one pass per
/// test, left to right, keeping `seen` (the symbols so far, a `k`-bit set) and, for t = 3,
/// `pre[b]` (the symbols `a ≠ b` seen before some `b`: the pairs `(a, b)` of the prefix).
/// The suite's covered tuples are bitsets indexed by the last symbols: for t = 2 row `c`
/// holds the `a` of covered pairs `(a, c)`; for t = 3 row `(b, c)` holds the `a` of covered
/// triples `(a, b, c)`. At event `c`, t = 2 ORs `seen` into row `c`; t = 3 ORs `pre[b]` into
/// row `(b, c)` for every distinct `b` seen so far, then ORs `seen` into `pre[c]`. Each OR
/// handles 64 tuples; the bits `a = c` (and `a = b`, never in `pre[b]`) are masked, so only
/// tuples of distinct symbols are stored. Newly set bits are counted as they are set.
///
/// **Kuhn–Higdon, sparse** (larger alphabets): the same pass with symbols renumbered per
/// test (so `seen` and `pre` take `O(d²)` bits for `d` distinct symbols in the test),
/// emitting each tuple into an ordered set of tuple codes; time and memory follow what is
/// covered instead of `k^t`.
///
/// **Windows**: the code of the last `t` symbols is kept rolling (`code = (code mod
/// k^(t−1))·k + s`, reset by a symbol outside the alphabet) and inserted into a bitset over
/// `k^t` codes, or an ordered set when that would exceed [`DENSE_WORDS`] words.
#[derive(Debug, Clone)]
pub struct SequenceCounter {
    criterion: Criterion,
    strength: Strength,
    k: usize,
    covered: u64,
    imp: Imp,
}

#[derive(Debug, Clone)]
enum Imp {
    KhDense(DenseKh),
    KhSparse(SparseKh),
    Window(Windows),
}

impl SequenceCounter {
    /// Marks an event outside the alphabet in an encoded test.
    pub const OUTSIDE: u32 = u32::MAX;

    /// An empty suite's counter over `k` symbols (at most `u32::MAX`: symbols are `u32`
    /// indices below [`SequenceCounter::OUTSIDE`]; a larger `k` counts as `u32::MAX`).
    pub fn new(criterion: Criterion, k: usize, strength: Strength) -> Self {
        Self::build(criterion, k, strength, false)
    }

    /// [`SequenceCounter::new`] with the sparse representation whatever the alphabet's
    /// size (tests and benchmarks compare the two).
    #[doc(hidden)]
    pub fn new_sparse(criterion: Criterion, k: usize, strength: Strength) -> Self {
        Self::build(criterion, k, strength, true)
    }

    fn build(criterion: Criterion, k: usize, strength: Strength, sparse: bool) -> Self {
        // No index reaches u32::MAX, and with k below it every code (< k^3 < 2^96) fits u128.
        let k = k.min(Self::OUTSIDE as usize);
        let three = strength == Strength::Three;
        let imp = match criterion {
            Criterion::KuhnHigdon => match DenseKh::words(k, three) {
                Some(words) if !sparse && words <= DENSE_WORDS => Imp::KhDense(DenseKh::new(k, three)),
                _ => Imp::KhSparse(SparseKh::new(k, three)),
            },
            Criterion::Window => Imp::Window(Windows::new(k, strength.t(), sparse)),
        };
        SequenceCounter { criterion, strength, k, covered: 0, imp }
    }

    /// The criterion.
    pub fn criterion(&self) -> Criterion {
        self.criterion
    }

    /// The strength.
    pub fn strength(&self) -> Strength {
        self.strength
    }

    /// Whether the covered items are kept in an ordered set rather than a bitset.
    #[cfg(test)]
    pub(super) fn is_sparse(&self) -> bool {
        match &self.imp {
            Imp::KhDense(_) => false,
            Imp::KhSparse(_) => true,
            Imp::Window(w) => w.dense.is_none(),
        }
    }

    /// `|Σ|`.
    pub fn alphabet_len(&self) -> usize {
        self.k
    }

    /// Adds one test (symbol indices, see [`crate::sequence::Alphabet::encode`]); returns
    /// how many items it covers that the tests before it did not.
    pub fn add(&mut self, test: &[u32]) -> u64 {
        let gained = match &mut self.imp {
            Imp::KhDense(d) => d.add(test),
            Imp::KhSparse(s) => s.add(test),
            Imp::Window(w) => w.add(test),
        };
        self.covered += gained;
        gained
    }

    /// The covered items as codes, in increasing order: a Kuhn–Higdon tuple `(a, b)` is
    /// `a·k + b` and `(a, b, c)` is `(a·k + b)·k + c`; a window is the same code of its
    /// symbols. Equal codes are equal items, so suites can be compared item by item (the
    /// suite selection of [`crate::selection`] unions the items of single tests).
    pub fn items(&self) -> Vec<u128> {
        let k = self.k as u128;
        let mut out = Vec::with_capacity(usize::try_from(self.covered).unwrap_or(0));
        match &self.imp {
            Imp::KhDense(d) => {
                // Row `c` (t = 2) or `b·k + c` (t = 3) holds the `a` of the covered tuples.
                for (row, words) in d.cov.chunks(d.w.max(1)).enumerate() {
                    let row = row as u128;
                    for_each_bit(words, |a| {
                        let a = a as u128;
                        out.push(if d.three { a * k * k + row } else { a * k + row });
                    });
                }
                out.sort_unstable();
            }
            Imp::KhSparse(s) => out.extend(s.set.iter().copied()),
            Imp::Window(w) => match &w.dense {
                Some(bits) => for_each_bit(bits, |code| out.push(code as u128)),
                None => out.extend(w.sparse.iter().copied()),
            },
        }
        out
    }

    /// Items covered by the tests added so far.
    pub fn covered(&self) -> u64 {
        self.covered
    }

    /// Items over the alphabet: `k·(k−1)·…·(k−t+1)` for Kuhn–Higdon, `k^t` for windows
    /// (saturating at `u128::MAX`, far beyond any real alphabet).
    pub fn total(&self) -> u128 {
        let k = self.k as u128;
        let t = self.strength.t() as u32;
        match self.criterion {
            Criterion::KuhnHigdon => {
                (0..u128::from(t)).try_fold(1u128, |acc, i| acc.checked_mul(k.saturating_sub(i))).unwrap_or(u128::MAX)
            }
            Criterion::Window => k.checked_pow(t).unwrap_or(u128::MAX),
        }
    }

    /// Covered and total items.
    pub fn count(&self) -> super::Covered {
        super::Covered { covered: self.covered, total: self.total() }
    }

    /// `covered / total`; 1.0 when there is nothing to cover.
    pub fn ratio(&self) -> f64 {
        self.count().ratio()
    }
}

/// Kuhn–Higdon with bitsets over the whole alphabet (see the module docs).
#[derive(Debug, Clone)]
struct DenseKh {
    k: usize,
    /// Words per row (`⌈k/64⌉`).
    w: usize,
    three: bool,
    /// Covered tuples: t = 2 row `c`, t = 3 row `b·k + c`; bit `a`.
    cov: Vec<u64>,
    /// Per test: symbols seen so far.
    seen: Vec<u64>,
    /// Per test: the distinct symbols seen so far, in order of first occurrence.
    seen_list: Vec<u32>,
    /// Per test, t = 3: row `b` holds the `a ≠ b` seen before some `b`.
    pre: Vec<u64>,
}

impl DenseKh {
    /// Words of the covered-tuple bitset, if that fits in `usize`.
    fn words(k: usize, three: bool) -> Option<usize> {
        let rows = if three { k.checked_mul(k)? } else { k };
        rows.checked_mul(k.div_ceil(64))
    }

    fn new(k: usize, three: bool) -> Self {
        let w = k.div_ceil(64);
        let words = Self::words(k, three).unwrap_or(0);
        DenseKh {
            k,
            w,
            three,
            cov: vec![0; words],
            seen: vec![0; w],
            seen_list: Vec::new(),
            pre: if three { vec![0; k * w] } else { Vec::new() },
        }
    }

    fn add(&mut self, test: &[u32]) -> u64 {
        let DenseKh { k, w, three, cov, seen, seen_list, pre } = self;
        let (k, w) = (*k, *w);
        // Only the rows of symbols this test saw need clearing.
        seen.fill(0);
        if *three {
            for &s in seen_list.iter() {
                let s = s as usize;
                pre[s * w..(s + 1) * w].fill(0);
            }
        }
        seen_list.clear();
        let mut gained = 0u64;
        for &c in test {
            let c = c as usize;
            if c >= k {
                continue;
            }
            let (cw, cbit) = (c >> 6, 1u64 << (c & 63));
            if *three {
                for &b in seen_list.iter() {
                    let b = b as usize;
                    if b == c {
                        continue;
                    }
                    let p = &pre[b * w..(b + 1) * w];
                    let r = (b * k + c) * w;
                    let row = &mut cov[r..r + w];
                    for i in 0..w {
                        let mut add = p[i] & !row[i];
                        if i == cw {
                            add &= !cbit; // (c, b, c) repeats c
                        }
                        if add != 0 {
                            row[i] |= add;
                            gained += u64::from(add.count_ones());
                        }
                    }
                }
                let pc = &mut pre[c * w..(c + 1) * w];
                for (p, s) in pc.iter_mut().zip(seen.iter()) {
                    *p |= *s;
                }
                pc[cw] &= !cbit; // (c, c) is no pair of distinct symbols
            } else {
                let row = &mut cov[c * w..(c + 1) * w];
                for i in 0..w {
                    let mut add = seen[i] & !row[i];
                    if i == cw {
                        add &= !cbit;
                    }
                    if add != 0 {
                        row[i] |= add;
                        gained += u64::from(add.count_ones());
                    }
                }
            }
            if seen[cw] & cbit == 0 {
                seen[cw] |= cbit;
                seen_list.push(c as u32);
            }
        }
        gained
    }
}

/// Kuhn–Higdon with per-test renumbering and an ordered set of covered tuple codes.
#[derive(Debug, Clone)]
struct SparseKh {
    k: usize,
    three: bool,
    /// Global symbol → its number in the current test (`OUTSIDE` when absent).
    local_of: Vec<u32>,
    /// Number in the current test → global symbol.
    global: Vec<u32>,
    /// The current test, renumbered.
    buf: Vec<u32>,
    seen: Vec<u64>,
    seen_list: Vec<u32>,
    pre: Vec<u64>,
    /// Covered tuples `(a, b[, c])` as `(a·k + b)[·k + c]`.
    set: BTreeSet<u128>,
}

impl SparseKh {
    fn new(k: usize, three: bool) -> Self {
        SparseKh {
            k,
            three,
            local_of: vec![SequenceCounter::OUTSIDE; k],
            global: Vec::new(),
            buf: Vec::new(),
            seen: Vec::new(),
            seen_list: Vec::new(),
            pre: Vec::new(),
            set: BTreeSet::new(),
        }
    }

    fn add(&mut self, test: &[u32]) -> u64 {
        let SparseKh { k, three, local_of, global, buf, seen, seen_list, pre, set } = self;
        let k128 = *k as u128;
        global.clear();
        buf.clear();
        for &g in test {
            let Some(slot) = local_of.get_mut(g as usize) else { continue };
            if *slot == SequenceCounter::OUTSIDE {
                *slot = global.len() as u32;
                global.push(g);
            }
            buf.push(*slot);
        }
        for &g in global.iter() {
            local_of[g as usize] = SequenceCounter::OUTSIDE;
        }
        let d = global.len();
        let w = d.div_ceil(64);
        seen.clear();
        seen.resize(w, 0);
        seen_list.clear();
        pre.clear();
        if *three {
            pre.resize(d * w, 0);
        }
        let mut gained = 0u64;
        for &c in buf.iter() {
            let c = c as usize;
            let (cw, cbit) = (c >> 6, 1u64 << (c & 63));
            let gc = u128::from(global[c]);
            if *three {
                for &b in seen_list.iter() {
                    let b = b as usize;
                    if b == c {
                        continue;
                    }
                    let gbc = u128::from(global[b]) * k128 + gc;
                    for_each_bit(&pre[b * w..(b + 1) * w], |a| {
                        if a != c && set.insert((u128::from(global[a]) * k128 * k128) + gbc) {
                            gained += 1;
                        }
                    });
                }
                let pc = &mut pre[c * w..(c + 1) * w];
                for (p, s) in pc.iter_mut().zip(seen.iter()) {
                    *p |= *s;
                }
                pc[cw] &= !cbit;
            } else {
                for_each_bit(seen, |a| {
                    if a != c && set.insert(u128::from(global[a]) * k128 + gc) {
                        gained += 1;
                    }
                });
            }
            if seen[cw] & cbit == 0 {
                seen[cw] |= cbit;
                seen_list.push(c as u32);
            }
        }
        gained
    }
}

/// Calls `f` with the index of every set bit of `words`, in increasing order.
fn for_each_bit(words: &[u64], mut f: impl FnMut(usize)) {
    for (i, &word) in words.iter().enumerate() {
        let mut x = word;
        while x != 0 {
            f(i * 64 + x.trailing_zeros() as usize);
            x &= x - 1;
        }
    }
}

/// Window codes covered: a bitset over `k^t` codes or an ordered set.
#[derive(Debug, Clone)]
struct Windows {
    k: usize,
    t: usize,
    dense: Option<Vec<u64>>,
    sparse: BTreeSet<u128>,
}

impl Windows {
    fn new(k: usize, t: usize, force_sparse: bool) -> Self {
        let words = (k as u128).checked_pow(t as u32).map(|n| n.div_ceil(64));
        let dense = match words {
            Some(n) if !force_sparse && n <= DENSE_WORDS as u128 => Some(vec![0u64; n as usize]),
            _ => None,
        };
        Windows { k, t, dense, sparse: BTreeSet::new() }
    }

    fn add(&mut self, test: &[u32]) -> u64 {
        let k = self.k as u128;
        // k^(t−1): the code of the last t−1 symbols is below it.
        let keep = k.pow(self.t as u32 - 1);
        let mut gained = 0u64;
        let (mut code, mut run) = (0u128, 0usize);
        for &s in test {
            if s as usize >= self.k {
                // An event outside the alphabet separates its neighbours.
                run = 0;
                code = 0;
                continue;
            }
            code = (code % keep) * k + u128::from(s);
            run += 1;
            if run < self.t {
                continue;
            }
            let new = match &mut self.dense {
                Some(bits) => {
                    // code < k^t, which fits the bitset.
                    let (i, bit) = ((code >> 6) as usize, 1u64 << (code & 63));
                    let new = bits[i] & bit == 0;
                    bits[i] |= bit;
                    new
                }
                None => self.sparse.insert(code),
            };
            gained += u64::from(new);
        }
        gained
    }
}
