//! Driving one VM: a fresh VM per test, steps under the budget and the work cap, coverage as
//! it is reached, sending events, and what is measured on the VM (traces, fitness, available
//! events), each charged to the work meter.

use std::sync::Arc;

use clowder_vm::VmOptions;

use super::{Evaluated, Executor, Improved, Live, executed};
use crate::events::{Cand, Event};
use crate::result::TimelinePoint;
use crate::sut::Sut;
use crate::trace::Trace;
use crate::work::{Kind, cost};

impl Executor<'_> {
    pub(super) fn start(&mut self, budgeted: bool) -> Live {
        self.start_seeded(budgeted, self.ctx.vm_seed)
    }

    /// [`Executor::start`] with the project's randomness seeded with `vm_seed`.
    pub(super) fn start_seeded(&mut self, budgeted: bool, vm_seed: u64) -> Live {
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
                whisker_maths: self.ctx.params.whisker_maths,
                ..VmOptions::default()
            },
        );
        sut.green_flag();
        if self.ctx.params.profile == clowder_vm::Profile::Whisker {
            sut.whisker_prologue();
        }
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

    pub(super) fn end(&mut self, live: &Live) {
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
    pub(super) fn run_steps(&mut self, live: &mut Live, n: u64) -> bool {
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
    pub(super) fn apply(&mut self, live: &mut Live, ev: &Event) {
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
    pub(super) fn evaluate(&mut self, tr: &Trace, out: &mut Vec<f64>) {
        let ops = self.ctx.model.evaluate_all(tr, &mut self.scratch, out);
        self.add_work(Kind::Fitness, cost::FITNESS_OP.saturating_mul(ops));
    }

    /// The events available in the live VM's state into `out`, charged to the meter.
    pub(super) fn extract(&mut self, live: &mut Live, out: &mut Vec<Cand>) {
        let scripts = self.ctx.info.extract(&self.ctx.project, &mut live.sut, self.ctx.params.dynamic_extraction, out);
        self.add_work(Kind::Extraction, cost::EXTRACT + cost::EXTRACT_SCRIPT.saturating_mul(scripts));
    }

    pub(super) fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub(super) fn trace_of(&mut self, live: &Live) -> Trace {
        let slots = self.ctx.model.measured_blocks().len();
        self.add_work(Kind::Fitness, cost::TRACE_WORD * (self.covered_bits.len() + slots) as u64);
        let mut tr = Trace::new(self.ctx.project.blocks.len(), self.ctx.model.measured_blocks().len());
        live.sut.fill_trace(self.ctx.model.measured_blocks(), self.ctx.model.measured_slots(), &mut tr);
        tr
    }

    pub(super) fn finish(
        &mut self,
        live: &Live,
        codons: Vec<u32>,
        events: Vec<Event>,
        improved: Improved,
    ) -> Evaluated {
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

    /// Fitness of target `t` for a trace.
    pub fn fitness_of(&mut self, t: usize, tr: &Trace) -> f64 {
        let f = self.ctx.model.fitness(t, tr, &mut self.scratch);
        let ops = self.scratch.take_ops();
        self.add_work(Kind::Fitness, cost::FITNESS_OP.saturating_mul(ops));
        f
    }
}
