//! Instrumentation for test generation (issue 4), cheap enough to stay on.
//!
//! Enabled with [`VmOptions::instrument`](crate::VmOptions); when off, the
//! interpreter pays one `Option` check per hook. What is recorded, all keyed by
//! project block index ([`BlockIdx`](crate::project::BlockIdx)):
//!
//! * statement coverage is always on: [`Vm::executed_bits`](crate::Vm::executed_bits);
//! * conditions: for every evaluation of the condition of `if`, `if else`,
//!   `repeat until`, `while`, `wait until` and of the predicate of `when timer /
//!   loudness >` and `when touching` hats: how often it was true and false
//!   ([`Instrument::conditions`]);
//! * loops: the remaining iterations of `repeat N` when last executed
//!   ([`Instrument::loop_remaining_of`]);
//! * hats: how often each hat started a script (event occurrences,
//!   [`Instrument::hat_starts`]).
//!
//! The remaining time of time-based blocks that are waiting is read from the
//! threads on demand (no hook needed).

use crate::program::Program;

/// Truth counts of one condition block.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CondStats {
    /// Evaluations that were true.
    pub true_count: u64,
    /// Evaluations that were false.
    pub false_count: u64,
}

/// Per-execution instrumentation data.
#[derive(Debug, Clone, Default)]
pub struct Instrument {
    conds: Vec<CondStats>,
    loops: Vec<f64>,
    hats: Vec<u64>,
}

impl Instrument {
    pub(crate) fn new(prog: &Program) -> Self {
        let n = prog.blocks.len();
        Instrument { conds: vec![CondStats::default(); n], loops: vec![f64::NAN; n], hats: vec![0; n] }
    }

    #[inline]
    pub(crate) fn condition(&mut self, block: u32, value: bool) {
        if let Some(c) = self.conds.get_mut(block as usize) {
            if value {
                c.true_count += 1;
            } else {
                c.false_count += 1;
            }
        }
    }

    #[inline]
    pub(crate) fn loop_remaining(&mut self, block: u32, remaining: f64) {
        if let Some(l) = self.loops.get_mut(block as usize) {
            *l = remaining;
        }
    }

    #[inline]
    pub(crate) fn hat_started(&mut self, top: u32) {
        if let Some(h) = self.hats.get_mut(top as usize) {
            *h += 1;
        }
    }

    /// Truth counts by condition block (index = project block index).
    pub fn conditions(&self) -> &[CondStats] {
        &self.conds
    }

    /// Remaining iterations of a `repeat` block when it last ran (`None` if it never ran).
    pub fn loop_remaining_of(&self, block: u32) -> Option<f64> {
        self.loops.get(block as usize).copied().filter(|x| !x.is_nan())
    }

    /// Script starts by hat block (index = project block index).
    pub fn hat_starts(&self) -> &[u64] {
        &self.hats
    }
}
