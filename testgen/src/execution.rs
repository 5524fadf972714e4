//! Executing tests: decode-and-execute (Algorithm 4), extension local search
//! (Algorithm 10), replay of concrete events; budget counting and the
//! coverage timeline.
//!
//! Every test runs in a fresh VM seeded with the run's seed, starts with the
//! green flag, and follows every selected event with a one-step wait, as
//! Whisker does. Durations (steps):
//!
//! | event | inputs | steps |
//! |---|---|---|
//! | KeyPress(k, d) | key down, after `d` steps key up | d + 1 |
//! | Wait(d) | — | d + 1 |
//! | ClickSprite (a sprite) / ClickStage | hats start at once | 1 |
//! | ClickSprite (a clone at (x, y)) | mouse down at (x, y), up after the wait (Whisker's `clickCloneByCoords`) | 1 |
//! | MouseDown | the button at the mouse position (a change clicks what is there) | 1 |
//! | MouseMove / MouseMoveTo (truncated, as Whisker's driver) / DragSprite / TypeText / TypeNumber | immediate | 1 |
//! | Sound(v, d) | loudness `v` for `max(d, 1)` steps, then none | max(d, 1) |
//!
//! Decoding stops when the codons are used up, or when the program has stopped
//! (all threads finished after having run) and only waiting is possible.
//!
//! Budget: the step budget is checked before every VM step, so a run stops at
//! exactly the budget step and a run with a smaller budget is a prefix of one
//! with a larger budget. Execution and evaluation budgets are checked before a
//! test starts; full coverage stops the run at the step it is reached.
//!
//! Work cap: the run's work meter ([`crate::work`]) counts the VM's work (block
//! executions plus geometry work, `Vm::work`) of every execution and replay and what the
//! executor does around it (fresh VMs, per-step bookkeeping, event extraction, traces,
//! fitness evaluations); the algorithms, minimisation and assertions charge their own
//! bookkeeping ([`Executor::charge`]). A phase of the run may be given a cap on the total
//! ([`Executor::cap_work`]), checked before every VM step like the step budget. Reaching
//! it cuts the test short and marks the run as limited ([`Executor::limited`]): the same
//! point on every machine.
//!
//! [`Executor`]'s methods live by concern in child modules: `account` (settings, budget,
//! work meter, what the run reports), `vm` (driving one VM), `decode` (tests from codons),
//! `replay` (replays and snapshots) and `play` (playing with a policy).

mod account;
mod decode;
mod play;
mod replay;
mod vm;

pub use play::{Durations, PlayOptions, PlayStats, Policy};
pub use replay::{Replayed, SNAPSHOT_WORTH, Snapshot};

use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use clowder_vm::instrument::Distances;
use clowder_vm::project::Project;

use crate::config::{Budget, Params};
use crate::events::{Cand, Event, EventInfo};
use crate::fitness::{FitnessModel, Scratch};
use crate::result::TimelinePoint;
use crate::sequence::Alphabet;
use crate::sut::Sut;
use crate::trace::Trace;
use crate::work::Meter;

/// An executed test: its genotype, phenotype, trace and fitness values.
#[derive(Debug, Clone)]
pub struct Evaluated {
    /// Unique within a run (identity for "already extended").
    pub id: u64,
    /// Codons.
    pub codons: Vec<u32>,
    /// The events sent (after the initial green flag; the one-step waits are implicit).
    pub events: Vec<Event>,
    /// The trace of the execution.
    pub trace: Trace,
    /// Fitness per target (0 = covered).
    pub fitness: Vec<f64>,
    /// Targets covered.
    pub covered: usize,
    /// Σ 1/(1+f) over all targets (MIO's tie-breaker).
    pub heuristic_sum: f64,
    /// Codon position after the last event that improved some fitness value
    /// (the first event is the reference and never counts), for reduction.
    pub last_improved_codon: Option<usize>,
    /// Trace and event count at that point.
    pub last_improved: Option<Rc<(Trace, usize)>>,
}

impl Evaluated {
    /// Codon count (Whisker's chromosome length).
    pub fn len(&self) -> usize {
        self.codons.len()
    }

    /// True for an empty genotype.
    pub fn is_empty(&self) -> bool {
        self.codons.is_empty()
    }
}

/// Static data of a run shared by every execution.
pub struct RunCtx<'a> {
    /// The project.
    pub project: Arc<Project>,
    /// Fitness model.
    pub model: &'a FitnessModel,
    /// Event information.
    pub info: &'a EventInfo,
    /// Parameters.
    pub params: &'a Params,
    /// Seed of the project's randomness in every execution.
    pub vm_seed: u64,
}

#[derive(Clone)]
struct Live {
    sut: Sut,
    running: bool,
    prev_live: usize,
    budgeted: bool,
    /// Set when the step budget or full coverage cut the test short.
    cut: bool,
    /// A clone click's mouse release, due at the start of the next step that runs after the
    /// click's wait: after the next event's own inputs, as in Whisker (whose driver releases
    /// it in the step loop while the test body posts the next event at once).
    release: Option<(f64, f64)>,
    /// The VM's work parts and unknown-opcode counts when this execution took it over from a
    /// [`Snapshot`]: the execution that made the snapshot charged them already.
    base: [u64; 5],
    base_unknown: Vec<(String, u64)>,
}

impl Live {
    /// Work of this execution's VM not charged yet (the live part of the meter).
    fn work(&self) -> u64 {
        self.sut.work().saturating_sub(self.base.iter().sum())
    }
}

/// Whether `sut` executed block `b`.
fn executed(sut: &Sut, b: u32) -> bool {
    crate::trace::bit(sut.executed_bits(), b)
}

/// Runs tests, counts the budget and records coverage over time.
pub struct Executor<'a> {
    ctx: RunCtx<'a>,
    budget: Budget,
    started: Instant,
    /// VM steps of the search.
    pub steps: u64,
    /// Test executions of the search.
    pub executions: u64,
    /// Fitness evaluations of the search.
    pub evaluations: u64,
    /// Steps spent replaying tests after the search (minimisation).
    pub replay_steps: u64,
    target_mask: Vec<u64>,
    covered_bits: Vec<u64>,
    covered: u32,
    timeline: Vec<TimelinePoint>,
    first_covered: Vec<(u32, u64)>,
    scratch: Scratch,
    next_id: u64,
    /// Track the last improving codon (needed by reduction local search).
    pub track_improvement: bool,
    /// End the search, and cut its test, when every target is covered (true: the paper's
    /// algorithms). Neatest sets it false: it stops when every target is covered reliably.
    pub stop_on_full_coverage: bool,
    on_progress: &'a mut dyn FnMut(&TimelinePoint),
    cands: Vec<Cand>,
    geometry: &'static str,
    unknown: std::collections::BTreeMap<String, u64>,
    /// The project has measured time-based blocks: track remaining waits every step.
    track_waits: bool,
    /// Work of finished executions and replays (the live VM adds its own) and of
    /// everything around them.
    meter: Meter,
    /// The current phase's cap on the total work, and the phase's name.
    work_cap: Option<(u64, &'static str)>,
    /// The phase in which a work cap was reached, if one was.
    limited: Option<&'static str>,
    /// VMs run without instrumentation and nothing is traced (replays that only observe).
    observe_only: bool,
    /// How exactly the VMs measure branch distances: exactly for searches that compare
    /// fitness values, else only whether they are 0 ([`Executor::zero_distances_only`]).
    distances: Distances,
    /// VMs start with this `VmOptions::whisker_wall_ms` (assertion generation's variants).
    whisker_wall_ms: Option<f64>,
    /// Symbols of the events of every test executed by the search (sequence coverage).
    alphabet: Alphabet,
    /// [`Executor::replay_from`] keeps a snapshot after an event when the VM did this many
    /// times a copy's work since the last one ([`SNAPSHOT_WORTH`]; 0: after every event,
    /// `u64::MAX`: never, as before snapshots). Traces do not depend on it, only the work.
    pub snapshot_worth: u64,
    /// A replay stops at the end of the step that first executes this block
    /// ([`Executor::replay_from`]'s `until`).
    stop_at: Option<u32>,
}

impl<'a> Executor<'a> {
    /// An executor for one run.
    pub fn new(ctx: RunCtx<'a>, budget: Budget, on_progress: &'a mut dyn FnMut(&TimelinePoint)) -> Self {
        let nb = ctx.project.blocks.len();
        let mut target_mask = vec![0u64; nb.div_ceil(64)];
        for &b in &ctx.model.targets.blocks {
            target_mask[b as usize / 64] |= 1u64 << (b % 64);
        }
        let words = target_mask.len();
        let track_waits = ctx.model.timed_slots().iter().any(|s| *s != u32::MAX);
        Self {
            ctx,
            budget,
            started: Instant::now(),
            steps: 0,
            executions: 0,
            evaluations: 0,
            replay_steps: 0,
            target_mask,
            covered_bits: vec![0; words],
            covered: 0,
            timeline: vec![TimelinePoint { steps: 0, executions: 0, covered: 0 }],
            first_covered: Vec::new(),
            scratch: Scratch::default(),
            next_id: 0,
            track_improvement: false,
            stop_on_full_coverage: true,
            on_progress,
            cands: Vec::new(),
            geometry: "none",
            unknown: Default::default(),
            track_waits,
            meter: Meter::default(),
            work_cap: None,
            limited: None,
            observe_only: false,
            distances: Distances::Exact,
            whisker_wall_ms: None,
            alphabet: Alphabet::new(),
            snapshot_worth: SNAPSHOT_WORTH,
            stop_at: None,
        }
    }
}

#[derive(Default)]
struct Improved {
    codon: Option<usize>,
    snapshot: Option<Rc<(Trace, usize)>>,
}

/// Decodes and executes one codon list outside any search (tests, tools):
/// returns the events sent and the trace.
pub fn decode_once(
    project: Arc<Project>,
    model: &FitnessModel,
    params: &Params,
    seed: u64,
    codons: &[u32],
) -> (Vec<Event>, Trace) {
    let info = EventInfo::new(&project, seed);
    let mut sink = |_: &TimelinePoint| {};
    let ctx = RunCtx { project, model, info: &info, params, vm_seed: seed };
    let mut exec = Executor::new(ctx, Budget::Executions(1), &mut sink);
    let e = exec.execute(codons.to_vec());
    (e.events, e.trace)
}

/// Replays concrete events once (tests, tools): returns the trace.
pub fn replay_once(project: Arc<Project>, model: &FitnessModel, params: &Params, seed: u64, events: &[Event]) -> Trace {
    let info = EventInfo::new(&project, seed);
    let mut sink = |_: &TimelinePoint| {};
    let ctx = RunCtx { project, model, info: &info, params, vm_seed: seed };
    let mut exec = Executor::new(ctx, Budget::Executions(1), &mut sink);
    exec.replay(events)
}
