//! The executor's settings and accounts: how VMs are set up (instrumentation, branch
//! distances, Whisker's wall clock), the work meter and its caps, the budget, and what the
//! run reports (coverage, timeline, geometry, unknown opcodes).

use clowder_vm::instrument::Distances;

use super::{Executor, RunCtx};
use crate::config::Budget;
use crate::result::TimelinePoint;
use crate::sequence::Alphabet;
use crate::work::{Kind, Meter, cost};

impl<'a> Executor<'a> {
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
    pub(super) fn add_work(&mut self, kind: Kind, units: u64) {
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

    pub(super) fn step_budget_left(&self) -> bool {
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
}
