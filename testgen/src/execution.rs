//! Executing tests in the VM while counting the run's budget and coverage.

use std::sync::Arc;

use clowder_vm::project::{BlockIdx, Project};
use clowder_vm::{Vm, VmOptions};

use crate::config::Budget;
use crate::events::Event;
use crate::result::TimelinePoint;

/// Tracks covered targets and budget use across all executions of a run.
pub struct Executor {
    project: Arc<Project>,
    seed: u64,
    budget: Budget,
    /// Bit mask of target blocks.
    target_mask: Vec<u64>,
    covered: Vec<u64>,
    covered_count: u32,
    total_targets: u32,
    steps: u64,
    executions: u64,
    timeline: Vec<TimelinePoint>,
    unknown: std::collections::BTreeMap<String, u64>,
}

impl Executor {
    /// An executor for `project` with the given coverage targets.
    pub fn new(project: Arc<Project>, targets: &[BlockIdx], seed: u64, budget: Budget) -> Self {
        let words = project.blocks.len().div_ceil(64);
        let mut target_mask = vec![0u64; words];
        for &t in targets {
            target_mask[t as usize / 64] |= 1u64 << (t % 64);
        }
        Self {
            project,
            seed,
            budget,
            target_mask,
            covered: vec![0u64; words],
            covered_count: 0,
            total_targets: targets.len() as u32,
            steps: 0,
            executions: 0,
            timeline: vec![TimelinePoint { steps: 0, executions: 0, covered: 0 }],
            unknown: std::collections::BTreeMap::new(),
        }
    }

    /// True once the budget is used up or every target is covered.
    pub fn finished(&self) -> bool {
        self.covered_count == self.total_targets
            || match self.budget {
                Budget::Steps(n) => self.steps >= n,
                Budget::Executions(n) => self.executions >= n,
            }
    }

    /// Runs one test (the green flag, then its events) in a fresh VM.
    /// Returns the number of targets it covered for the first time.
    pub fn execute(&mut self, events: &[Event], on_progress: &mut dyn FnMut(&TimelinePoint)) -> u32 {
        self.executions += 1;
        let before = self.covered_count;
        // Every execution uses the run's seed, so re-running a test reproduces it.
        let mut vm = Vm::new(Arc::clone(&self.project), VmOptions { seed: self.seed, ..VmOptions::default() });
        vm.green_flag();
        for ev in events {
            if self.steps_exhausted() {
                break;
            }
            match ev {
                Event::GreenFlag => {
                    vm.green_flag();
                    self.run(&mut vm, 1, on_progress);
                }
                Event::KeyPress { key, steps } => {
                    vm.key_down(key);
                    self.run(&mut vm, (*steps).max(1), on_progress);
                    vm.key_up(key);
                }
                Event::ClickSprite { sprite } => {
                    if let Some(id) = vm.find_target(sprite, 0) {
                        vm.click_target(id);
                    }
                    self.run(&mut vm, 1, on_progress);
                }
                Event::ClickStage => {
                    vm.click_stage();
                    self.run(&mut vm, 1, on_progress);
                }
                Event::Wait { steps } => self.run(&mut vm, *steps, on_progress),
            }
            // Whisker follows every event with a one-step wait.
            self.run(&mut vm, 1, on_progress);
        }
        for (op, n) in vm.unknown_opcodes() {
            *self.unknown.entry(op.clone()).or_insert(0) += n;
        }
        self.covered_count - before
    }

    fn steps_exhausted(&self) -> bool {
        matches!(self.budget, Budget::Steps(n) if self.steps >= n)
    }

    /// Steps the VM `n` times (or until the step budget ends), recording coverage changes.
    fn run(&mut self, vm: &mut Vm, n: u64, on_progress: &mut dyn FnMut(&TimelinePoint)) {
        for _ in 0..n {
            if self.steps_exhausted() {
                return;
            }
            vm.step();
            self.steps += 1;
            let mut gained = 0;
            for ((c, &m), &e) in self.covered.iter_mut().zip(&self.target_mask).zip(vm.executed_bits()) {
                let new = e & m & !*c;
                if new != 0 {
                    gained += new.count_ones();
                    *c |= new;
                }
            }
            if gained > 0 {
                self.covered_count += gained;
                let p = TimelinePoint { steps: self.steps, executions: self.executions, covered: self.covered_count };
                on_progress(&p);
                self.timeline.push(p);
            }
        }
    }

    /// Opcodes executed that the VM does not implement, with counts over all executions.
    pub fn unknown_opcodes(&self) -> Vec<(String, u64)> {
        self.unknown.iter().map(|(k, v)| (k.clone(), *v)).collect()
    }

    /// Steps used so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Test executions so far.
    pub fn executions(&self) -> u64 {
        self.executions
    }

    /// Covered target count.
    pub fn covered(&self) -> u32 {
        self.covered_count
    }

    /// Number of targets.
    pub fn total_targets(&self) -> u32 {
        self.total_targets
    }

    /// Coverage change points so far.
    pub fn timeline(&self) -> &[TimelinePoint] {
        &self.timeline
    }

    /// Steps at which the last target was covered, if all are.
    pub fn steps_to_full_coverage(&self) -> Option<u64> {
        (self.covered_count == self.total_targets).then(|| self.timeline.last().map_or(0, |p| p.steps))
    }
}
