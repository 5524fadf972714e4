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

mod play;

pub use play::{Durations, PlayOptions, PlayStats, Policy};

use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use clowder_vm::VmOptions;
use clowder_vm::instrument::Distances;
use clowder_vm::project::Project;

use crate::config::{Budget, Params};
use crate::events::{Cand, Event, EventInfo, decode_wait};
use crate::fitness::{FitnessModel, Scratch};
use crate::result::TimelinePoint;
use crate::rng::Rng;
use crate::sequence::Alphabet;
use crate::sut::Sut;
use crate::trace::Trace;
use crate::work::{Kind, Meter, cost};

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

/// A replay's VM after some of its events ([`Executor::replay_from`]): a replay of more
/// events with the same beginning continues from a copy instead of starting over, with the
/// same trace (the VM is deterministic and a copy is the whole state).
#[derive(Clone)]
pub struct Snapshot(Live);

/// What [`Executor::replay_from`] returns.
pub struct Replayed {
    /// The trace (of the replay so far when it stopped at its target).
    pub trace: Trace,
    /// It stopped because its target was covered.
    pub stopped: bool,
    /// The snapshots it kept, by the number of its events before them.
    pub kept: Vec<(usize, Snapshot)>,
}

/// Whether `sut` executed block `b`.
fn executed(sut: &Sut, b: u32) -> bool {
    crate::trace::bit(sut.executed_bits(), b)
}

/// A snapshot is taken after an event when the VM did at least this many times a copy's work
/// since the last one (or its start): copies never cost much more than the replays they save.
pub const SNAPSHOT_WORTH: u64 = 2;

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

    /// From now on, tests run without the VM's instrumentation and are not traced: for
    /// replays that only observe states (the same states: instrumentation never changes
    /// execution), such as mutation analysis. Their traces are empty.
    pub fn observe_only(&mut self) {
        self.observe_only = true;
    }

    /// From now on, VMs measure a branch distance only as zero or not
    /// ([`Distances::ZeroOnly`]): for phases that ask of a fitness only whether it is 0
    /// (Random search, minimisation, assertion generation, selection pools). Execution,
    /// coverage and every fitness that is 0 stay the same; positive fitness values become
    /// meaningless, and a false `touching color` no longer walks the stage for its distance.
    pub fn zero_distances_only(&mut self) {
        self.distances = Distances::ZeroOnly;
    }

    /// The real milliseconds per step at which a test's checks must also hold for Whisker
    /// (`clowder_vm::whisker::WALL_MS_PER_STEP`): only under the `whisker` profile, on
    /// programs with blocks Whisker times on the wall clock; empty otherwise.
    pub fn whisker_wall_variants(&self) -> &'static [f64] {
        if self.ctx.params.profile == clowder_vm::Profile::Whisker
            && clowder_vm::whisker::uses_wall_clock(&self.ctx.project)
        {
            &clowder_vm::whisker::WALL_MS_PER_STEP
        } else {
            &[]
        }
    }

    /// From now on, VMs start with Whisker's wall clock at `ms` real milliseconds per step
    /// (`None`: the profile's virtual clock; see `clowder_vm::VmOptions::whisker_wall_ms`).
    pub fn set_whisker_wall_ms(&mut self, ms: Option<f64>) {
        self.whisker_wall_ms = ms;
    }

    /// Work done so far by every execution and replay of this executor and around them.
    pub fn work(&self) -> u64 {
        self.meter.total()
    }

    /// The work done so far, by kind.
    pub fn meter(&self) -> &Meter {
        &self.meter
    }

    /// Charges work done outside the executor (an algorithm's bookkeeping, observations).
    pub fn charge(&mut self, kind: Kind, units: u64) {
        self.add_work(kind, units);
    }

    /// Adds work to the meter; reaching the phase's cap marks the run limited, whatever
    /// work reached it (a step, a fitness evaluation, the algorithm's bookkeeping).
    fn add_work(&mut self, kind: Kind, units: u64) {
        self.meter.add(kind, units);
        if let Some((cap, phase)) = self.work_cap
            && self.meter.total() >= cap
        {
            self.limited.get_or_insert(phase);
        }
    }

    /// Charges the bookkeeping of looking at every target's value once.
    pub fn charge_targets(&mut self, times: u64) {
        let n = self.ctx.model.len() as u64;
        self.add_work(Kind::Search, cost::TARGET.saturating_mul(n).saturating_mul(times));
    }

    /// From now on, the phase `phase` may bring the total work up to `cap` (`None`: no cap).
    pub fn cap_work(&mut self, phase: &'static str, cap: Option<u64>) {
        self.work_cap = cap.map(|c| (c, phase));
    }

    /// The alphabet of the run for sequence coverage: the symbols of the events of every test
    /// executed by [`Executor::execute`] and [`Executor::extend`] so far.
    pub fn alphabet(&self) -> &Alphabet {
        &self.alphabet
    }

    /// The phase in which a work cap was reached, if one was.
    pub fn limited(&self) -> Option<&'static str> {
        self.limited
    }

    /// Whether the current phase's work cap has been reached.
    pub fn work_capped(&self) -> bool {
        self.work_cap.is_some_and(|(c, _)| self.meter.total() >= c)
    }

    /// The run's static data.
    pub fn ctx(&self) -> &RunCtx<'a> {
        &self.ctx
    }

    /// Targets covered so far.
    pub fn covered(&self) -> u32 {
        self.covered
    }

    /// Total targets.
    pub fn total(&self) -> u32 {
        self.ctx.model.len() as u32
    }

    /// All targets covered.
    pub fn full(&self) -> bool {
        self.covered as usize == self.ctx.model.len()
    }

    fn step_budget_left(&self) -> bool {
        match self.budget {
            Budget::Steps(n) => self.steps < n,
            Budget::Seconds(s) => {
                // Checking the clock every 1024 steps keeps it cheap.
                self.steps % 1024 != 0 || self.started.elapsed().as_secs_f64() < s as f64
            }
            _ => true,
        }
    }

    /// Whether the search must stop: budget used up, work cap reached or every target covered.
    pub fn finished(&self) -> bool {
        (self.full() && self.stop_on_full_coverage)
            || self.work_capped()
            || match self.budget {
                Budget::Steps(n) => self.steps >= n,
                Budget::Executions(n) => self.executions >= n,
                Budget::Evaluations(n) => self.evaluations >= n,
                Budget::Seconds(s) => self.started.elapsed().as_secs_f64() >= s as f64,
            }
    }

    /// Search progress for MIO's parameter schedule: steps over `schedule_steps`.
    pub fn progress(&self) -> f64 {
        self.steps as f64 / self.ctx.params.schedule_steps as f64
    }

    /// The coverage change points so far.
    pub fn timeline(&self) -> &[TimelinePoint] {
        &self.timeline
    }

    /// Every covered target block with the step it was first covered at, in
    /// order of coverage.
    pub fn first_covered(&self) -> &[(u32, u64)] {
        &self.first_covered
    }

    /// Steps at which the last target was covered, if all are.
    pub fn steps_to_full_coverage(&self) -> Option<u64> {
        self.full().then(|| self.timeline.last().map_or(0, |p| p.steps))
    }

    /// `none`, `approximate` or `exact`, as reported by the VM.
    pub fn geometry(&self) -> &'static str {
        self.geometry
    }

    /// Opcodes the VM did not implement, summed over executions.
    pub fn unknown_opcodes(&self) -> Vec<(String, u64)> {
        self.unknown.iter().map(|(k, v)| (k.clone(), *v)).collect()
    }

    fn start(&mut self, budgeted: bool) -> Live {
        self.start_seeded(budgeted, self.ctx.vm_seed)
    }

    /// [`Executor::start`] with the project's randomness seeded with `vm_seed`.
    fn start_seeded(&mut self, budgeted: bool, vm_seed: u64) -> Live {
        let p = &self.ctx.project;
        self.add_work(Kind::Start, crate::work::vm_start(p.blocks.len(), p.targets.len()));
        let mut sut = Sut::with_options(
            Arc::clone(&self.ctx.project),
            VmOptions {
                seed: vm_seed,
                profile: self.ctx.params.profile,
                instrument: !self.observe_only,
                distances: self.distances,
                whisker_wall_ms: self.whisker_wall_ms,
                whisker_offline_speech: self.ctx.params.whisker_offline_speech,
                ..VmOptions::default()
            },
        );
        sut.green_flag();
        Live {
            sut,
            running: true,
            prev_live: 0,
            budgeted,
            cut: false,
            release: None,
            base: [0; 5],
            base_unknown: Vec::new(),
        }
    }

    fn end(&mut self, live: &Live) {
        // Costumes are decoded as VMs use them: the run's geometry is approximate once any
        // of its VMs used a costume without usable pixels (or an asset is missing).
        let g = live.sut.geometry();
        if g == "approximate" || self.geometry == "none" {
            self.geometry = g;
        }
        let [blocks, evals, geometry, scheduler, distances] = live.sut.work_parts();
        let [b0, e0, g0, s0, d0] = live.base;
        self.add_work(Kind::Vm, blocks.saturating_sub(b0));
        self.add_work(Kind::Eval, evals.saturating_sub(e0));
        self.add_work(Kind::Geometry, geometry.saturating_sub(g0));
        self.add_work(Kind::Scheduler, scheduler.saturating_sub(s0));
        // Branch distances are measured for the fitness function, not by the program.
        self.add_work(Kind::Fitness, distances.saturating_sub(d0));
        for (k, v) in live.sut.unknown_opcodes() {
            let before = live.base_unknown.iter().find(|(b, _)| *b == k).map_or(0, |(_, n)| *n);
            if v > before {
                *self.unknown.entry(k).or_insert(0) += v - before;
            }
        }
    }

    /// Runs `n` steps; false when the budget (or full coverage, or the work cap) cut it short.
    fn run_steps(&mut self, live: &mut Live, n: u64) -> bool {
        for _ in 0..n {
            if live.budgeted && (!self.step_budget_left() || (self.stop_on_full_coverage && self.full())) {
                live.cut = true;
                return false;
            }
            if let Some((cap, phase)) = self.work_cap
                && self.meter.total().saturating_add(live.work()) >= cap
            {
                live.cut = true;
                self.limited.get_or_insert(phase);
                return false;
            }
            if let Some((x, y)) = live.release.take() {
                live.sut.mouse_post(x, y, false);
            }
            live.sut.step();
            self.add_work(Kind::Step, cost::STEP + cost::STEP_WORD * self.covered_bits.len() as u64);
            if self.track_waits && !self.observe_only {
                live.sut.track_waits(self.ctx.model.timed_slots());
            }
            if live.budgeted {
                self.steps += 1;
                self.note_coverage(&live.sut);
            } else {
                self.replay_steps += 1;
                if self.stop_at.is_some_and(|b| executed(&live.sut, b)) {
                    live.cut = true;
                    return false;
                }
            }
            let now = live.sut.live_threads();
            if live.prev_live > 0 && now == 0 {
                live.running = false; // scratch-vm's PROJECT_RUN_STOP
            }
            live.prev_live = now;
        }
        true
    }

    fn note_coverage(&mut self, sut: &Sut) {
        let mut gained = 0;
        for (w, ((c, &m), &e)) in
            self.covered_bits.iter_mut().zip(&self.target_mask).zip(sut.executed_bits()).enumerate()
        {
            let mut new = e & m & !*c;
            if new != 0 {
                gained += new.count_ones();
                *c |= new;
                while new != 0 {
                    let bit = new.trailing_zeros();
                    self.first_covered.push(((w * 64) as u32 + bit, self.steps));
                    new &= new - 1;
                }
            }
        }
        if gained > 0 {
            self.covered += gained;
            let p = TimelinePoint { steps: self.steps, executions: self.executions + 1, covered: self.covered };
            (self.on_progress)(&p);
            self.timeline.push(p);
        }
    }

    /// Sends `ev` and the one-step wait after it.
    fn apply(&mut self, live: &mut Live, ev: &Event) {
        let project = Arc::clone(&self.ctx.project);
        let find = |sut: &Sut, sprite: &str, clone: u32| {
            project.targets.iter().position(|t| t.name == sprite && !t.is_stage).and_then(|d| sut.find(d, clone))
        };
        match ev {
            Event::GreenFlag => live.sut.green_flag(),
            Event::KeyPress { key, steps } => {
                live.sut.key_down(key);
                self.run_steps(live, *steps as u64);
                live.sut.key_up(key);
            }
            Event::ClickSprite { sprite, clone: 0, .. } => {
                if let Some(id) = find(&live.sut, sprite, 0) {
                    live.sut.click(id);
                }
            }
            // Whisker's `clickCloneByCoords`: if some target stands exactly at (x, y), a mouse
            // click there (whatever is drawn at the point gets it), released after the wait.
            Event::ClickSprite { x, y, .. } => {
                let (x, y) = (*x, *y);
                if live.sut.targets().iter().any(|t| t.x == x && t.y == y) {
                    live.sut.mouse_post(x, y, true);
                    self.run_steps(live, 1);
                    live.release = Some((x, y));
                    return;
                }
            }
            Event::ClickStage => live.sut.click_stage(),
            Event::TypeText { text } => live.sut.answer(text),
            Event::TypeNumber { number } => live.sut.answer(&number.to_string()),
            // Whisker posts the button at the mouse position: a change clicks what is there.
            Event::MouseDown { down } => {
                let (x, y, _) = live.sut.vm_mouse();
                live.sut.mouse_post(x, y, *down);
            }
            // Whisker's driver truncates mouse coordinates.
            Event::MouseMove { x, y } | Event::MouseMoveTo { x, y } => live.sut.mouse_move(x.trunc(), y.trunc()),
            Event::DragSprite { sprite, clone, x, y } => {
                let def = project.targets.iter().position(|t| t.name == *sprite && !t.is_stage);
                if let Some(id) = def.and_then(|d| live.sut.find_by_clone_id(d, *clone)) {
                    live.sut.drag(id, *x, *y);
                }
            }
            Event::Sound { volume, steps } => {
                live.sut.set_loudness(*volume);
                self.run_steps(live, (*steps as u64).max(1));
                live.sut.set_loudness(-1.0);
                return;
            }
            Event::Wait { steps } => {
                self.run_steps(live, *steps as u64);
            }
        }
        self.run_steps(live, 1);
    }

    /// Every target's fitness for `tr` into `out`, charged to the meter.
    fn evaluate(&mut self, tr: &Trace, out: &mut Vec<f64>) {
        let ops = self.ctx.model.evaluate_all(tr, &mut self.scratch, out);
        self.add_work(Kind::Fitness, cost::FITNESS_OP.saturating_mul(ops));
    }

    /// The events available in the live VM's state into `out`, charged to the meter.
    fn extract(&mut self, live: &mut Live, out: &mut Vec<Cand>) {
        let scripts = self.ctx.info.extract(&self.ctx.project, &mut live.sut, self.ctx.params.dynamic_extraction, out);
        self.add_work(Kind::Extraction, cost::EXTRACT + cost::EXTRACT_SCRIPT.saturating_mul(scripts));
    }

    fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn trace_of(&mut self, live: &Live) -> Trace {
        let slots = self.ctx.model.measured_blocks().len();
        self.add_work(Kind::Fitness, cost::TRACE_WORD * (self.covered_bits.len() + slots) as u64);
        let mut tr = Trace::new(self.ctx.project.blocks.len(), self.ctx.model.measured_blocks().len());
        live.sut.fill_trace(self.ctx.model.measured_blocks(), &mut tr);
        tr
    }

    fn finish(&mut self, live: &Live, codons: Vec<u32>, events: Vec<Event>, improved: Improved) -> Evaluated {
        self.alphabet.extend(&events);
        let trace = self.trace_of(live);
        let mut fitness = Vec::new();
        self.evaluate(&trace, &mut fitness);
        self.charge_targets(1);
        let covered = fitness.iter().filter(|f| **f == 0.0).count();
        let heuristic_sum = fitness.iter().map(|f| 1.0 / (1.0 + f)).sum();
        Evaluated {
            id: self.next_id(),
            codons,
            events,
            trace,
            fitness,
            covered,
            heuristic_sum,
            last_improved_codon: improved.codon,
            last_improved: improved.snapshot,
        }
    }

    /// Decodes `codons` against the events available in each state and sends
    /// them (one decision per codon group), tracking improvements if enabled.
    fn decode(&mut self, live: &mut Live, codons: &[u32], events: &mut Vec<Event>, track: bool) -> Improved {
        let r = self.ctx.info.reserved;
        let mut improved = Improved::default();
        let mut reference: Option<(Trace, Option<Vec<f64>>)> = None;
        let mut i = 0;
        let mut cands = std::mem::take(&mut self.cands);
        while i < codons.len() && !live.cut {
            self.extract(live, &mut cands);
            if cands.is_empty() || !(live.running || cands.iter().any(|c| *c != Cand::Wait)) {
                break;
            }
            let cand = &cands[codons[i] as usize % cands.len()];
            let pc: Vec<u32> = (0..cand.params()).map(|k| codons[(i + 1 + k) % codons.len()]).collect();
            let ev = cand.realize(&pc, self.ctx.params, &self.ctx.project, &mut live.sut);
            self.apply(live, &ev);
            events.push(ev);
            i += r;
            if track {
                self.track(live, &mut reference, &mut improved, i, events.len());
            }
        }
        self.cands = cands;
        improved
    }

    /// Whisker's last-improved-codon bookkeeping: after each event, whether any target's
    /// fitness fell below its value after the previous event. A newly executed target
    /// decides it without evaluating ([`FitnessModel::covers_new_target`]); the reference
    /// values are computed only when a comparison needs them, so an event that covers
    /// something new costs a bit-set comparison, not an evaluation of every target.
    fn track(
        &mut self,
        live: &Live,
        reference: &mut Option<(Trace, Option<Vec<f64>>)>,
        improved: &mut Improved,
        codon: usize,
        n_events: usize,
    ) {
        let tr = self.trace_of(live);
        let Some((old_tr, old_f)) = reference.take() else {
            *reference = Some((tr, None));
            return;
        };
        if old_tr == tr {
            *reference = Some((old_tr, old_f));
            return; // nothing changed, nothing improved
        }
        self.add_work(Kind::Fitness, cost::TRACE_WORD.saturating_mul(tr.executed.len() as u64));
        if self.ctx.model.covers_new_target(&old_tr, &tr) {
            improved.codon = Some(codon);
            improved.snapshot = Some(Rc::new((tr.clone(), n_events)));
            *reference = Some((tr, None));
            return;
        }
        let old_f = match old_f {
            Some(f) => f,
            None => {
                let mut f = Vec::new();
                self.evaluate(&old_tr, &mut f);
                f
            }
        };
        let mut f = Vec::new();
        self.evaluate(&tr, &mut f);
        self.charge_targets(1);
        if f.iter().zip(old_f.iter()).any(|(n, o)| n < o) {
            improved.codon = Some(codon);
            improved.snapshot = Some(Rc::new((tr.clone(), n_events)));
        }
        *reference = Some((tr, Some(f)));
    }

    /// Decode-and-execute `codons` as one test of the search.
    pub fn execute(&mut self, codons: Vec<u32>) -> Evaluated {
        let mut live = self.start(true);
        let mut events = Vec::new();
        let track = self.track_improvement;
        let improved = self.decode(&mut live, &codons, &mut events, track);
        self.executions += 1;
        self.evaluations += 1;
        self.end(&live);
        self.finish(&live, codons, events, improved)
    }

    /// Decode-and-execute `codons` outside the search's budget, as [`Executor::execute`]
    /// otherwise: the test is never cut short by the step budget or by full coverage (only
    /// a work cap ends it), counts no execution and adds no timeline point. For pools of
    /// independent random tests ([`crate::selection`]), where every test must run to its end
    /// whatever the tests before it covered.
    pub fn execute_outside_budget(&mut self, codons: Vec<u32>) -> Evaluated {
        let mut live = self.start(false);
        let mut events = Vec::new();
        let improved = self.decode(&mut live, &codons, &mut events, false);
        self.end(&live);
        self.finish(&live, codons, events, improved)
    }

    /// Extension local search (Algorithm 10): re-executes `orig`, then keeps
    /// appending — an answer if a question waits, a newly available event with
    /// probability `extension_new_event_probability`, otherwise a long wait
    /// (extended while it helps) — while fitness improves, the program runs and
    /// the test is shorter than `max_length` events.
    pub fn extend(&mut self, orig: &Evaluated, rng: &mut Rng) -> Evaluated {
        let p = self.ctx.params;
        let r = self.ctx.info.reserved;
        let max_codons = p.max_length as usize * r;
        let mut live = self.start(true);
        let mut events = Vec::new();
        self.decode(&mut live, &orig.codons, &mut events, false);
        let mut codons = orig.codons.clone();
        let mut values = orig.fitness.clone();
        let mut improved = Improved { codon: orig.last_improved_codon, snapshot: orig.last_improved.clone() };
        let mut extend_wait = false;
        let mut previous: Vec<Cand> = Vec::new();
        let mut avail: Vec<Cand> = Vec::new();
        while codons.len() < max_codons && live.running && !live.cut {
            self.evaluations += 1;
            self.extract(&mut live, &mut avail);
            if avail.is_empty() {
                break;
            }
            let index_of = |c: &Cand| avail.iter().position(|a| a.same(c)).unwrap_or(0) as u32;
            let typing: Vec<&Cand> = avail.iter().filter(|c| c.is_typing()).collect();
            let fresh: Vec<&Cand> = avail.iter().filter(|c| !previous.iter().any(|q| q.same(c))).collect();
            if !typing.is_empty() {
                let c = typing[rng.below(typing.len())].clone();
                let params: Vec<u32> =
                    (1..r).map(|_| rng.next_int(p.codon_min as i64, p.codon_max as i64) as u32).collect();
                codons.push(index_of(&c));
                codons.extend(&params);
                let ev = c.realize(&params, p, &self.ctx.project, &mut live.sut);
                self.apply(&mut live, &ev);
                events.push(ev);
                extend_wait = false;
            } else if !previous.is_empty() && !fresh.is_empty() && rng.next_double() < p.extension_new_event_probability
            {
                let c = fresh[rng.below(fresh.len())].clone();
                let params: Vec<u32> =
                    (1..r).map(|_| rng.next_int(p.codon_min as i64, p.codon_max as i64 + 1) as u32).collect();
                codons.push(index_of(&c));
                codons.extend(&params);
                let ev = c.realize(&params, p, &self.ctx.project, &mut live.sut);
                self.apply(&mut live, &ev);
                events.push(ev);
                extend_wait = false;
            } else if extend_wait {
                // Lengthen the wait just added: its duration codon grows by the bound.
                let pos = codons.len() - (r - 1);
                let mut extra = p.wait_upper_bound;
                let mut dur = codons[pos] + p.wait_upper_bound;
                if dur > p.codon_max {
                    extra -= dur - p.codon_max;
                    dur = p.codon_max;
                    extend_wait = false;
                }
                codons[pos] = dur;
                if let Some(Event::Wait { steps }) = events.last_mut() {
                    *steps = decode_wait(dur, p);
                }
                self.run_steps(&mut live, extra as u64);
            } else {
                codons.push(index_of(&Cand::Wait));
                codons.push(p.wait_upper_bound);
                for _ in 2..r {
                    codons.push(rng.next_int(p.codon_min as i64, p.codon_max as i64 + 1) as u32);
                }
                let ev = Event::Wait { steps: p.wait_upper_bound };
                self.apply(&mut live, &ev);
                events.push(ev);
                extend_wait = true;
            }
            previous = avail.clone();
            let tr = self.trace_of(&live);
            let mut f = Vec::new();
            self.evaluate(&tr, &mut f);
            self.charge_targets(2);
            if f.iter().zip(values.iter()).any(|(n, o)| n < o) {
                improved.codon = Some(codons.len());
                improved.snapshot = Some(Rc::new((tr, events.len())));
            } else {
                break;
            }
            if f.iter().all(|x| *x == 0.0) {
                break;
            }
            values = f;
        }
        self.executions += 1;
        self.end(&live);
        self.finish(&live, codons, events, improved)
    }

    /// The test of reduction local search: `orig` cut after its last improving
    /// codon, with the trace recorded at that point (no execution).
    pub fn reduce(&mut self, orig: &Evaluated) -> Option<Evaluated> {
        let codon = orig.last_improved_codon?;
        let snap = orig.last_improved.as_ref()?;
        let (trace, n_events) = (&snap.0, snap.1);
        let mut fitness = Vec::new();
        self.evaluate(trace, &mut fitness);
        self.charge_targets(1);
        let covered = fitness.iter().filter(|f| **f == 0.0).count();
        let heuristic_sum = fitness.iter().map(|f| 1.0 / (1.0 + f)).sum();
        Some(Evaluated {
            id: self.next_id(),
            codons: orig.codons[..codon.min(orig.codons.len())].to_vec(),
            events: orig.events[..n_events.min(orig.events.len())].to_vec(),
            trace: trace.clone(),
            fitness,
            covered,
            heuristic_sum,
            last_improved_codon: Some(codon),
            last_improved: None,
        })
    }

    /// Replays concrete events in a fresh VM outside the budget (minimisation);
    /// returns the trace.
    pub fn replay(&mut self, events: &[Event]) -> Trace {
        let mut live = self.start(false);
        for ev in events {
            self.apply(&mut live, ev);
        }
        self.end(&live);
        self.trace_of(&live)
    }

    /// A copy of `live` to continue from later; its copy's work is charged.
    fn snapshot(&mut self, live: &Live) -> Snapshot {
        self.add_work(Kind::Start, live.sut.vm().clone_work());
        let mut copy = live.clone();
        copy.base = live.sut.work_parts();
        copy.base_unknown = live.sut.unknown_opcodes();
        Snapshot(copy)
    }

    /// Replays `events` outside the budget like [`Executor::replay`], continuing from `from`
    /// (the VM after the events before these) or in a fresh VM; with `until`, it stops once
    /// target `until` is covered (then the trace is of the replay so far). Returns the trace,
    /// whether it stopped so, and the snapshots it kept: `(j, s)` is the VM after `j` of
    /// `events` (before the last; with `from`, `j ≥ 1`), kept where the VM worked
    /// [`Executor::snapshot_worth`] copies since the previous one.
    pub fn replay_from(&mut self, from: Option<&Snapshot>, events: &[Event], until: Option<usize>) -> Replayed {
        let mut live = match from {
            Some(s) => {
                self.add_work(Kind::Start, s.0.sut.vm().clone_work());
                s.0.clone()
            }
            None => self.start(false),
        };
        let mut kept = Vec::new();
        // Work since the last snapshot: a fresh VM's start counts.
        let p = &self.ctx.project;
        let mut credit = if from.is_none() { crate::work::vm_start(p.blocks.len(), p.targets.len()) } else { 0 };
        let mut mark = live.sut.work();
        self.stop_at = until.and_then(|t| self.ctx.model.targets.blocks.get(t).copied());
        let mut stopped = self.stop_at.is_some_and(|b| executed(&live.sut, b));
        for (j, ev) in events.iter().enumerate() {
            if stopped {
                break;
            }
            if j > 0 || from.is_none() {
                let since = live.sut.work().saturating_sub(mark).saturating_add(credit);
                // A copy costs at least `CLONE`: below that the (slower) size estimate cannot
                // say yes, so it is not computed.
                let floor = self.snapshot_worth.saturating_mul(clowder_vm::geometry::cost::CLONE);
                if since >= floor
                    && since >= self.snapshot_worth.saturating_mul(live.sut.vm().clone_work())
                    && !self.work_capped()
                {
                    kept.push((j, self.snapshot(&live)));
                    mark = live.sut.work();
                    credit = 0;
                }
            }
            self.apply(&mut live, ev);
            stopped = live.cut && self.stop_at.is_some_and(|b| executed(&live.sut, b));
        }
        self.stop_at = None;
        self.end(&live);
        Replayed { trace: self.trace_of(&live), stopped, kept }
    }

    /// Replays concrete events in a fresh VM outside the budget, like
    /// [`Executor::replay`], calling `observe` with the VM before the first
    /// event (with 0) and after each event and its one-step wait (with the
    /// number of events sent so far); stops early when `observe` returns false.
    /// Returns the steps run.
    pub fn replay_observed(&mut self, events: &[Event], observe: &mut dyn FnMut(usize, &mut Sut) -> bool) -> u64 {
        let before = self.replay_steps;
        let mut live = self.start(false);
        if observe(0, &mut live.sut) {
            for (i, ev) in events.iter().enumerate() {
                self.apply(&mut live, ev);
                if !observe(i + 1, &mut live.sut) {
                    break;
                }
            }
        }
        self.end(&live);
        self.replay_steps - before
    }

    /// Fitness of target `t` for a trace.
    pub fn fitness_of(&mut self, t: usize, tr: &Trace) -> f64 {
        let f = self.ctx.model.fitness(t, tr, &mut self.scratch);
        let ops = self.scratch.take_ops();
        self.add_work(Kind::Fitness, cost::FITNESS_OP.saturating_mul(ops));
        f
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
