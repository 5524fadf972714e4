//! The search algorithms (paper §5.3): random search (Algorithm 7), MOSA
//! (Algorithm 8) and MIO (Algorithm 9), the latter two with extension and
//! reduction local search, following Whisker's emse22 implementation
//! (`MOSA.ts`, `MIO.ts`, `LocalSearch/*.ts`).
//!
//! Known, deliberate differences to Whisker:
//! * MIO's parameter schedule runs over a fixed horizon of `schedule_steps`
//!   VM steps instead of the fraction of the run's budget, so no decision
//!   depends on the budget (a shorter run is a prefix of a longer one).
//! * MOSA mutates the crossover offspring (the paper); Whisker's code mutates
//!   the parents and so discards crossover results when the mutation
//!   probability is 1 (`mutate_parents_after_crossover = true` restores that).
//! * Stopping conditions are also checked inside MIO's mutation loop and
//!   before local search, so no test starts after the budget is used up.
//!
//! One file per algorithm (`random.rs`, `mosa.rs`, `mio.rs`); this module holds what they
//! share: the run's [`Search`] state, the covering-test archive and local-search helpers.

mod mio;
mod mosa;
mod neatest;
mod random;

use std::collections::BTreeSet;
use std::rc::Rc;

use crate::config::Params;
use crate::encoding::random_codons;
use crate::execution::{Evaluated, Executor};
use crate::rng::Rng;
use crate::work::{Kind, cost};

type Test = Rc<Evaluated>;

/// State shared by all algorithms of one run.
pub(crate) struct Search<'e, 'a> {
    pub exec: &'e mut Executor<'a>,
    pub rng: Rng,
    pub p: Params,
    pub reserved: usize,
    extended: BTreeSet<u64>,
    targets: usize,
}

/// Tests per target covering it, shortest first-come (Whisker's archive).
struct Archive {
    best: Vec<Option<Test>>,
}

impl Archive {
    fn new(n: usize) -> Self {
        Self { best: vec![None; n] }
    }

    /// Returns the target values looked at (the work meter's measure).
    fn update(&mut self, e: &Test) -> u64 {
        for (t, slot) in self.best.iter_mut().enumerate() {
            if e.fitness[t] == 0.0 && slot.as_ref().is_none_or(|b| e.len() < b.len()) {
                *slot = Some(Rc::clone(e));
            }
        }
        self.best.len() as u64
    }

    fn has(&self, t: usize) -> bool {
        self.best[t].is_some()
    }
}

/// The distinct tests of an archive, in target order.
fn distinct(slots: &[Option<Test>]) -> Vec<Test> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for e in slots.iter().flatten() {
        if seen.insert(e.id) {
            out.push(Rc::clone(e));
        }
    }
    out
}

impl<'e, 'a> Search<'e, 'a> {
    pub fn new(exec: &'e mut Executor<'a>, rng: Rng, p: Params, reserved: usize) -> Self {
        let targets = exec.ctx().model.len();
        Self { exec, rng, p, reserved, extended: BTreeSet::new(), targets }
    }

    /// Charges `values` target values looked at by the algorithm's bookkeeping.
    fn charge(&mut self, values: u64) {
        self.exec.charge(Kind::Search, cost::TARGET.saturating_mul(values));
    }

    /// Charges `values` target values compared by a sorting scan ([`cost::TARGET_SCAN`]).
    fn charge_scan(&mut self, values: u64) {
        self.exec.charge(Kind::Search, cost::TARGET_SCAN.saturating_mul(values));
    }

    fn random_test(&mut self) -> Test {
        let c = random_codons(&mut self.rng, &self.p, self.reserved);
        Rc::new(self.exec.execute(c))
    }

    fn run(&mut self, codons: Vec<u32>) -> Test {
        Rc::new(self.exec.execute(codons))
    }

    fn extension_applicable(&self, e: &Evaluated) -> bool {
        e.len() < self.p.max_length as usize * self.reserved
            && !self.extended.contains(&e.id)
            && e.covered < self.targets
    }

    fn reduction_applicable(e: &Evaluated) -> bool {
        e.len() > 1 && e.last_improved_codon.is_some_and(|c| e.len() > c) && e.last_improved.is_some()
    }

    fn extend(&mut self, e: &Test) -> Test {
        self.extended.insert(e.id);
        let out = self.exec.extend(e, &mut self.rng);
        Rc::new(out)
    }
}
