//! Instrumentation for test generation (issue 4), cheap enough to stay on.
//!
//! Enabled with [`VmOptions::instrument`](crate::VmOptions); when off, the
//! interpreter pays one `Option` check per hook. Everything is keyed by
//! project block index ([`BlockIdx`](crate::project::BlockIdx)) and
//! accumulates over the life of the VM (one test execution):
//!
//! * **Statement coverage** is always on: [`Vm::executed_bits`](crate::Vm::executed_bits)
//!   (commands and hats; a hat counts when its script starts).
//! * **Conditions** ([`Instrument::conditions`]): for every evaluation of the
//!   condition of `if`, `if else`, `repeat until`, `while`, `wait until`, and of
//!   the predicates of the edge-activated hats (`when timer/loudness >`, `when
//!   touching`, Makey Makey, video motion): how often it was true and false and
//!   the minimum over the execution of the *branch distance* to each outcome,
//!   computed from the condition's reporter tree with Korel's rules (Whisker's
//!   `branchDistanceValue`):
//!   - numbers compared (`<`, `>`, `=` when both operands are numeric for
//!     scratch-vm's `Cast.compare`): `a > b` → to_true `b - a + 1` (0 when true),
//!     to_false `a - b` (0 when false); `a < b` symmetric; `a = b` → to_true
//!     `|a - b|`, to_false 1 when equal (else 0); strings compared: 0/1;
//!   - `and`: to_true `t1 + t2`, to_false `min(f1, f2)`; `or`: to_true
//!     `min(t1, t2)`, to_false `f1 + f2`; `not`: swapped; a missing operand is false;
//!   - `touching sprite / mouse / edge`: 0 when touching, else the geometry's
//!     distance, or without geometry the distance between centres (nearest
//!     instance of the sprite; the mouse pointer) and for the edge the distance
//!     of the centre to the nearest stage edge;
//!   - `touching colour`: 0 when touching, else the geometry's colour distance, else 1;
//!   - any other reporter: 0/1 from its truth value.
//!
//!   `repeat N` is recorded there too: entering the body with `c` iterations
//!   left records (to_true 0, to_false `c + 1`), leaving it records (1, 0).
//! * **Loops**: the remaining iterations of `repeat N` when it last ran
//!   ([`Instrument::loop_remaining_of`]).
//! * **Hats**: how often each hat started a script ([`Instrument::hat_starts`])
//!   and which started during the last step ([`Instrument::started_last_step`]).
//!
//! State queries that need no hook are methods of [`Vm`](crate::Vm):
//! `waiting_blocks` (time-based blocks a thread waits in, with remaining and
//! total time), `active_scripts` (target and top block of live threads),
//! `question_pending`, `bounds`.

use crate::program::Program;

/// How exactly the instrumentation measures branch distances ([`VmOptions::distances`](crate::VmOptions)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Distances {
    /// Every recorded minimum is the exact distance: for searches that compare fitness
    /// values (MIO, MOSA, Neatest).
    #[default]
    Exact,
    /// A recorded minimum is exact where it is 0 and otherwise some positive value: for
    /// phases that only ask whether a fitness is 0 (Random search, minimisation, assertion
    /// generation). A positive distance is not searched for, so a `touching color` that
    /// is false costs no walk over the stage.
    ZeroOnly,
}

/// Truth counts and minimum branch distances of one condition block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CondStats {
    /// Evaluations that were true.
    pub true_count: u64,
    /// Evaluations that were false.
    pub false_count: u64,
    /// Minimum distance to the condition being true (`INFINITY`: never evaluated).
    pub min_to_true: f64,
    /// Minimum distance to the condition being false (`INFINITY`: never evaluated).
    pub min_to_false: f64,
}

impl Default for CondStats {
    fn default() -> Self {
        CondStats { true_count: 0, false_count: 0, min_to_true: f64::INFINITY, min_to_false: f64::INFINITY }
    }
}

/// Per-execution instrumentation data.
#[derive(Debug, Clone, Default)]
pub struct Instrument {
    conds: Vec<CondStats>,
    loops: Vec<f64>,
    hats: Vec<u64>,
    started: Vec<u32>,
    /// The largest bound [`Instrument::distance_bounds`] gives (`INFINITY`, or under
    /// [`Distances::ZeroOnly`] the smallest positive normal double).
    ceiling: f64,
}

impl Instrument {
    pub(crate) fn new(prog: &Program, distances: Distances) -> Self {
        let n = prog.blocks.len();
        Instrument {
            conds: vec![CondStats::default(); n],
            loops: vec![f64::NAN; n],
            hats: vec![0; n],
            started: Vec::new(),
            ceiling: match distances {
                Distances::Exact => f64::INFINITY,
                // Below it only 0 and subnormal distances, which are answered exactly, so a
                // distance is recorded as 0 exactly when it is 0 (`eval_distance`'s bounds).
                Distances::ZeroOnly => f64::MIN_POSITIVE,
            },
        }
    }

    /// Records one evaluation of the condition of `block`.
    #[inline]
    pub(crate) fn condition(&mut self, block: u32, value: bool, to_true: f64, to_false: f64) {
        if let Some(c) = self.conds.get_mut(block as usize) {
            if value {
                c.true_count += 1;
            } else {
                c.false_count += 1;
            }
            let clean = |d: f64| if d.is_nan() { 1.0 } else { d.max(0.0) };
            c.min_to_true = c.min_to_true.min(clean(to_true));
            c.min_to_false = c.min_to_false.min(clean(to_false));
        }
    }

    /// Bounds on the branch distances of `block`'s condition, (to true, to false): its minima
    /// so far (`INFINITY` before its first evaluation). A distance at or above its bound cannot
    /// lower the minimum, so the search for it may stop there and answer the bound (a colour
    /// distance is a walk over the stage: issue 33's colour games spent a third of their time
    /// in walks that could not change what is recorded). Under [`Distances::ZeroOnly`] no
    /// bound is above the smallest positive double: only whether a distance is 0 is measured.
    #[inline]
    pub(crate) fn distance_bounds(&self, block: u32) -> (f64, f64) {
        let c = self.ceiling;
        self.conds.get(block as usize).map_or((c, c), |s| (s.min_to_true.min(c), s.min_to_false.min(c)))
    }

    #[inline]
    pub(crate) fn loop_remaining(&mut self, block: u32, remaining: f64) {
        if let Some(l) = self.loops.get_mut(block as usize) {
            *l = remaining;
        }
        if remaining >= 0.0 {
            self.condition(block, true, 0.0, remaining + 1.0);
        } else {
            self.condition(block, false, 1.0, 0.0);
        }
    }

    #[inline]
    pub(crate) fn hat_started(&mut self, top: u32) {
        if let Some(h) = self.hats.get_mut(top as usize) {
            *h += 1;
        }
        self.started.push(top);
    }

    pub(crate) fn new_step(&mut self) {
        self.started.clear();
    }

    /// Writes everything but the condition counts (see [`crate::engine::fixpoint`]).
    pub(crate) fn write_fingerprint(&self, s: &mut String) {
        use std::fmt::Write as _;
        let Instrument { conds, loops, hats, started, ceiling: _ } = self;
        for c in conds {
            let _ = write!(s, "{:?}{:?}", c.min_to_true, c.min_to_false);
        }
        let _ = write!(s, "{loops:?}{hats:?}{started:?}");
    }

    /// Adds `times` × the condition counts gained from `before` to `after` (per block, true and
    /// false), the evaluations of `times` skipped periods of a fixed-point loop.
    pub(crate) fn add_condition_counts(&mut self, before: &[(u64, u64)], after: &[(u64, u64)], times: u64) {
        for ((c, b), a) in self.conds.iter_mut().zip(before).zip(after) {
            c.true_count += a.0.saturating_sub(b.0).saturating_mul(times);
            c.false_count += a.1.saturating_sub(b.1).saturating_mul(times);
        }
    }

    /// Condition statistics by block (index = project block index).
    pub fn conditions(&self) -> &[CondStats] {
        &self.conds
    }

    /// Remaining iterations of a `repeat` block when it last ran (`None` if it never ran;
    /// negative once the loop has finished).
    pub fn loop_remaining_of(&self, block: u32) -> Option<f64> {
        self.loops.get(block as usize).copied().filter(|x| !x.is_nan())
    }

    /// Script starts by hat block (index = project block index).
    pub fn hat_starts(&self) -> &[u64] {
        &self.hats
    }

    /// Hat blocks whose scripts started (or restarted) during the last step, inputs included.
    pub fn started_last_step(&self) -> &[u32] {
        &self.started
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::project::{LoadLimits, load};
    use crate::{Vm, VmOptions};

    /// `when flag clicked: if x > 50 … ; repeat 3 { change x by 5 }; wait until x = 25 and not (x < 0)`
    const PROJECT: &str = r#"{"targets":[
     {"isStage":true,"name":"Stage","variables":{"vx":["x",10]},"lists":{},"broadcasts":{},"blocks":{},
      "costumes":[{"name":"b","assetId":"cd21514d0531fdffb22204e0ec5ed84a","md5ext":"cd21514d0531fdffb22204e0ec5ed84a.svg","dataFormat":"svg"}],"sounds":[],"currentCostume":0,"layerOrder":0},
     {"isStage":false,"name":"S","variables":{},"lists":{},"broadcasts":{},"blocks":{
      "h":{"opcode":"event_whenflagclicked","next":"if","parent":null,"inputs":{},"fields":{},"shadow":false,"topLevel":true},
      "if":{"opcode":"control_if","next":"rep","parent":"h","inputs":{"CONDITION":[2,"gt"]},"fields":{},"shadow":false,"topLevel":false},
      "gt":{"opcode":"operator_gt","next":null,"parent":"if","inputs":{"OPERAND1":[3,[12,"x","vx"],[10,""]],"OPERAND2":[1,[10,"50"]]},"fields":{},"shadow":false,"topLevel":false},
      "rep":{"opcode":"control_repeat","next":"wu","parent":"if","inputs":{"TIMES":[1,[6,"3"]],"SUBSTACK":[2,"ch"]},"fields":{},"shadow":false,"topLevel":false},
      "ch":{"opcode":"data_changevariableby","next":null,"parent":"rep","inputs":{"VALUE":[1,[4,"5"]]},"fields":{"VARIABLE":["x","vx"]},"shadow":false,"topLevel":false},
      "wu":{"opcode":"control_wait_until","next":null,"parent":"rep","inputs":{"CONDITION":[2,"and"]},"fields":{},"shadow":false,"topLevel":false},
      "and":{"opcode":"operator_and","next":null,"parent":"wu","inputs":{"OPERAND1":[2,"eq"],"OPERAND2":[2,"not"]},"fields":{},"shadow":false,"topLevel":false},
      "eq":{"opcode":"operator_equals","next":null,"parent":"and","inputs":{"OPERAND1":[3,[12,"x","vx"],[10,""]],"OPERAND2":[1,[10,"25"]]},"fields":{},"shadow":false,"topLevel":false},
      "not":{"opcode":"operator_not","next":null,"parent":"and","inputs":{"OPERAND":[2,"lt"]},"fields":{},"shadow":false,"topLevel":false},
      "lt":{"opcode":"operator_lt","next":null,"parent":"not","inputs":{"OPERAND1":[3,[12,"x","vx"],[10,""]],"OPERAND2":[1,[10,"0"]]},"fields":{},"shadow":false,"topLevel":false}
     },"costumes":[{"name":"c","assetId":"b7853f557e4426412e64bb3da6531a99","md5ext":"b7853f557e4426412e64bb3da6531a99.svg","dataFormat":"svg"}],
     "sounds":[],"currentCostume":0,"layerOrder":1}
    ],"meta":{"semver":"3.0.0"}}"#;

    #[test]
    fn branch_distances_follow_korel() {
        let p = Arc::new(load(PROJECT.as_bytes(), "instrument.json", &LoadLimits::default()).expect("load"));
        let idx = |id: &str| p.blocks.iter().position(|b| b.id == id).expect("block") as u32;
        let mut vm = Vm::new(Arc::clone(&p), VmOptions { instrument: true, ..VmOptions::default() });
        vm.green_flag();
        for _ in 0..10 {
            vm.step();
        }
        let ins = vm.instrument().expect("instrumentation on");
        let c = ins.conditions()[idx("if") as usize];
        // x = 10 > 50 is false: 50 - 10 + 1 = 41 to true, 0 to false.
        assert_eq!((c.true_count, c.false_count, c.min_to_true, c.min_to_false), (0, 1, 41.0, 0.0));
        // repeat 3: entered with 2, 1, 0 left (to_false = c + 1 >= 1), then left (to_false 0).
        let r = ins.conditions()[idx("rep") as usize];
        assert_eq!((r.true_count, r.false_count, r.min_to_true, r.min_to_false), (3, 1, 0.0, 0.0));
        assert_eq!(ins.loop_remaining_of(idx("rep")), Some(-1.0));
        // wait until x = 25 and not x < 0: x reaches 25 after the loop; "and" sums to_true.
        let w = ins.conditions()[idx("wu") as usize];
        assert_eq!((w.true_count, w.min_to_true), (1, 0.0));
        assert_eq!(w.min_to_false, 1.0);
        assert_eq!(ins.hat_starts()[idx("h") as usize], 1);
    }
}
