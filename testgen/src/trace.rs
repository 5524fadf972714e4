//! What one test execution leaves behind for the fitness function.

/// Whether bit `b` of an executed-blocks bitset (a trace's, or the VM's) is set.
#[inline]
pub fn bit(words: &[u64], b: u32) -> bool {
    words.get(b as usize / 64).is_some_and(|w| w & (1u64 << (b % 64)) != 0)
}

/// The execution trace of one test: which blocks ran and how close the
/// branching blocks came to each outcome.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// Executed blocks: bit `i % 64` of word `i / 64` for block index `i`.
    pub executed: Vec<u64>,
    /// Per measured block (see [`crate::fitness::FitnessModel::measured_blocks`]):
    /// minimum distance over the execution to the `[true, false]` outcome;
    /// `f64::INFINITY` when the VM did not measure it.
    pub dist: Vec<[f64; 2]>,
}

impl Trace {
    /// An empty trace for `blocks` blocks and `slots` measured blocks.
    pub fn new(blocks: usize, slots: usize) -> Self {
        Self { executed: vec![0; blocks.div_ceil(64)], dist: vec![[f64::INFINITY; 2]; slots] }
    }

    /// Whether block `b` executed.
    #[inline]
    pub fn executed(&self, b: u32) -> bool {
        bit(&self.executed, b)
    }

    /// Marks block `b` executed.
    pub fn mark(&mut self, b: u32) {
        if let Some(w) = self.executed.get_mut(b as usize / 64) {
            *w |= 1u64 << (b % 64);
        }
    }

    /// Lowers the recorded distances of slot `s` to `d` where `d` is smaller.
    pub fn record(&mut self, s: usize, d: [f64; 2]) {
        if let Some(x) = self.dist.get_mut(s) {
            x[0] = x[0].min(d[0]);
            x[1] = x[1].min(d[1]);
        }
    }
}
