//! Playing a game with a policy instead of a codon list: Whisker's `NetworkExecutor`
//! (Neatest). Every iteration the policy sees the state's features and the available events;
//! unless a wait it chose is still running, it picks an event and its parameters.
//!
//! Whisker's loop, kept: a chosen event other than a wait is followed by a one-step wait; key
//! presses, mouse presses and sounds are released in the background after their duration
//! (the next events do not wait for them; pressing a key that is still down only waits); a
//! chosen wait of `d` steps runs `⌈d⌉` steps and then skips the policy's choice for the next
//! `d` iterations (which see the same state). The playthrough ends when the project stops
//! (`stop all`: scratch-vm's PROJECT_STOP_ALL), when no event is available, when the policy
//! fails (a defect network), at a target statement (`stop_at`), or after `max_steps` steps —
//! Whisker's wall-clock timeout, as steps (timeout × acceleration × 30 steps per second).

use super::{Executor, Live};
use crate::events::{Cand, Event};
use crate::neatest::events::{Action, NeuroEvent, extract};
use crate::neatest::features::FeatureInfo;
use crate::work::Kind;
use clowder_neuro::network::Features;
use clowder_vm::project::BlockIdx;

/// A player: a network, or anything that chooses events from features.
pub trait Policy {
    /// Sees the state; `false` ends the playthrough (Whisker's defect network).
    fn observe(&mut self, features: &Features, events: &[NeuroEvent]) -> bool;
    /// The event to send (index into `events`) and its parameters' activations, in the order of
    /// [`NeuroEvent::params`]; `None` sends the wait.
    fn choose(&mut self, events: &[NeuroEvent]) -> Option<(usize, Vec<f64>)>;
    /// After every iteration (Whisker records activation traces here).
    fn after_iteration(&mut self, _iteration: u32, _features: &Features, _events: &[NeuroEvent]) {}
}

/// Event parameter scales (Whisker's `durations` of a suite's configuration), in steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Durations {
    /// `waitStepUpperBound`.
    pub wait: f64,
    /// `pressDurationUpperBound`.
    pub press: f64,
    /// `clickDuration`.
    pub click: f64,
    /// `soundDuration`.
    pub sound: f64,
}

impl Default for Durations {
    /// The values of Whisker's Neatest configurations.
    fn default() -> Self {
        Durations { wait: 100.0, press: 10.0, click: 30.0, sound: 10.0 }
    }
}

/// How a playthrough runs.
#[derive(Debug, Clone)]
pub struct PlayOptions {
    /// Steps before the playthrough ends (iterations without a step count a quarter each).
    pub max_steps: u64,
    /// Parameter scales.
    pub durations: Durations,
    /// End as soon as this block is covered (Neatest's early stop for its current target).
    pub stop_at: Option<BlockIdx>,
    /// Seed of the project's randomness (default: the run's).
    pub vm_seed: Option<u64>,
    /// Offer drag events (clowder's `drag_events`; Whisker's neuroevolution offers none).
    pub drags: bool,
}

/// What a playthrough did besides its test.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlayStats {
    /// Loop iterations (the activation trace's step numbers).
    pub iterations: u32,
    /// VM steps played.
    pub steps: u64,
    /// Events chosen (waits included, as Whisker's event count).
    pub events: u32,
    /// The policy failed (defect network).
    pub defect: bool,
}

/// Iterations without a VM step that cost as much of Whisker's wall-clock timeout as one step.
/// Such an iteration still extracts features and activates the network, but does not wait for
/// the step interval. Approximate, fitted on replays in the real Whisker (docs/neatest.md):
/// with 1 (each counts as a step) 46 of 50 replays covered what Whisker covers, with 4 all 50.
const IDLE_PER_STEP: u64 = 4;

/// Inputs released in the background after their duration.
enum Release {
    Key(String),
    Mouse,
    Loudness,
}

impl Executor<'_> {
    /// Plays one game with `policy` (a test of the search when `budgeted`, else outside the
    /// budget as a replay); returns the executed test and the playthrough's statistics.
    pub fn play(
        &mut self,
        policy: &mut dyn Policy,
        info: &FeatureInfo,
        opts: &PlayOptions,
        budgeted: bool,
    ) -> (super::Evaluated, PlayStats) {
        let mut live = self.start_seeded(budgeted, opts.vm_seed.unwrap_or(self.ctx.vm_seed));
        // The green flag's own stopAll already happened (`Sut::green_flag` applies it at once).
        let stop_base = live.sut.vm().stop_all_count();
        let mut stats = PlayStats::default();
        let mut events: Vec<Event> = Vec::new();
        let mut codons: Vec<u32> = Vec::new();
        let mut pending: Vec<(Release, f64)> = Vec::new();
        let mut cands: Vec<Cand> = std::mem::take(&mut self.cands);
        let mut available: Vec<NeuroEvent> = Vec::new();
        let mut features = Features::new();
        let mut extraction = crate::neatest::features::Extraction::default();
        let mut wait_left = 0.0f64;
        let mut fresh = true; // the state changed since the last extraction
        // Whisker's timeout is wall-clock time, which passes in iterations that run no step too
        // (the iterations a chosen wait skips, a wait of ≤ 0 steps): they count as a quarter
        // step each (see `IDLE_PER_STEP`).
        let mut idle = 0u64;
        while !live.cut
            && live.sut.vm().stop_all_count() <= stop_base
            && stats.steps + idle / IDLE_PER_STEP < opts.max_steps
        {
            if fresh {
                let project = std::sync::Arc::clone(&self.ctx.project);
                let w = extract(self.ctx.info, &project, &mut live.sut, true, opts.drags, &mut cands, &mut available);
                self.add_work(
                    Kind::Extraction,
                    crate::work::cost::EXTRACT + crate::work::cost::EXTRACT_SCRIPT.saturating_mul(w),
                );
                info.extract_into(&project, &mut live.sut, &mut extraction, &mut features);
                fresh = false;
            }
            if available.is_empty() {
                break;
            }
            if !policy.observe(&features, &available) {
                stats.defect = true;
                break;
            }
            if wait_left <= 0.0 {
                let (i, args) = policy.choose(&available).unwrap_or_else(|| {
                    let w = available.iter().position(|e| e.action == Action::Wait).unwrap_or(available.len());
                    (w, Vec::new())
                });
                let ev = available.get(i).cloned().unwrap_or_else(NeuroEvent::wait);
                codons.push(i as u32);
                stats.events += 1;
                let before = self.steps_of(&live);
                wait_left = self.send(&mut live, &mut pending, &ev, &args, &opts.durations, &mut events);
                let ran = self.steps_of(&live) - before;
                stats.steps += ran;
                if ran == 0 {
                    idle += 1;
                } else {
                    fresh = true;
                }
            } else {
                wait_left -= 1.0;
                idle += 1;
            }
            policy.after_iteration(stats.iterations, &features, &available);
            stats.iterations += 1;
            if let Some(b) = opts.stop_at
                && live.sut.executed_bits().get(b as usize / 64).is_some_and(|w| w & (1 << (b % 64)) != 0)
            {
                break;
            }
        }
        self.cands = cands;
        if budgeted {
            self.executions += 1;
            self.evaluations += 1;
        }
        self.end(&live);
        let test = self.finish(&live, codons, events, super::Improved::default());
        (test, stats)
    }

    /// What a network generator starts from: the features after the green flag and every event
    /// the program handles (Whisker's `extractStaticEvents`; with `drags`, also the drags the
    /// state after the green flag offers). Runs no step.
    pub fn initial_view(&mut self, info: &FeatureInfo, drags: bool) -> (Features, Vec<NeuroEvent>) {
        let mut live = self.start(false);
        let project = std::sync::Arc::clone(&self.ctx.project);
        let mut cands = Vec::new();
        let mut events = Vec::new();
        extract(self.ctx.info, &project, &mut live.sut, false, drags, &mut cands, &mut events);
        let features = info.extract(&project, &mut live.sut);
        self.end(&live);
        (features, events)
    }

    fn steps_of(&self, live: &Live) -> u64 {
        if live.budgeted { self.steps } else { self.replay_steps }
    }

    /// Sends `ev` with parameters from `args`; returns the wait to skip iterations for.
    fn send(
        &mut self,
        live: &mut Live,
        pending: &mut Vec<(Release, f64)>,
        ev: &NeuroEvent,
        args: &[f64],
        d: &Durations,
        events: &mut Vec<Event>,
    ) -> f64 {
        let arg = |k: usize| args.get(k).copied().unwrap_or(0.0);
        let at_least_one = |v: f64| if v < 1.0 || v.is_nan() { 1.0 } else { v };
        let one_step = |ex: &mut Self, live: &mut Live, pending: &mut Vec<(Release, f64)>| {
            ex.background_steps(live, pending, 1);
        };
        match &ev.action {
            Action::Key(k) => {
                let steps = at_least_one(arg(0) * d.press);
                if !live.sut.vm().is_key_down(k) {
                    live.sut.key_down(k);
                    pending.push((Release::Key(k.clone()), steps));
                    events.push(Event::KeyPress { key: k.clone(), steps: steps.ceil() as u32 });
                }
                one_step(self, live, pending);
                0.0
            }
            Action::MouseDownForSteps => {
                let steps = at_least_one((arg(0) * d.click).round());
                let (x, y, _) = live.sut.vm_mouse();
                live.sut.mouse_post(x, y, true);
                pending.push((Release::Mouse, steps));
                events.push(Event::MouseDown { down: true });
                one_step(self, live, pending);
                0.0
            }
            Action::Sound(v) => {
                live.sut.set_loudness(*v);
                pending.push((Release::Loudness, d.sound.max(1.0)));
                events.push(Event::Sound { volume: *v, steps: d.sound.max(1.0) as u32 });
                one_step(self, live, pending);
                0.0
            }
            Action::Wait => {
                let steps = arg(0) * d.wait;
                let n = if steps > 0.0 { steps.ceil() as u64 } else { 0 };
                events.push(Event::Wait { steps: n as u32 });
                self.background_steps(live, pending, n);
                steps
            }
            other => {
                let e = match other {
                    Action::ClickSprite(name) => {
                        Event::ClickSprite { sprite: name.clone(), clone: 0, x: 0.0, y: 0.0, steps: d.click as u32 }
                    }
                    Action::ClickClone(x, y) => {
                        Event::ClickSprite { sprite: String::new(), clone: 1, x: *x, y: *y, steps: d.click as u32 }
                    }
                    Action::ClickStage => Event::ClickStage,
                    Action::TypeText(t) => Event::TypeText { text: t.clone() },
                    Action::TypeNumber => Event::TypeNumber { number: arg(0).round() as i64 },
                    Action::MouseMove => Event::MouseMove { x: arg(0) * 240.0, y: arg(1) * 180.0 },
                    Action::MouseMoveTo(x, y) => Event::MouseMoveTo { x: *x, y: *y },
                    Action::DragSprite(sprite, x, y) => {
                        Event::DragSprite { sprite: sprite.clone(), clone: 0, x: *x, y: *y }
                    }
                    _ => Event::Wait { steps: 0 },
                };
                // `apply` sends it and runs the one-step wait after it.
                self.release_due(live, pending);
                self.apply(live, &e);
                for p in pending.iter_mut() {
                    p.1 -= 1.0;
                }
                events.push(e);
                0.0
            }
        }
    }

    /// Runs `n` steps, releasing background inputs whose time is up before each.
    fn background_steps(&mut self, live: &mut Live, pending: &mut Vec<(Release, f64)>, n: u64) {
        for _ in 0..n {
            self.release_due(live, pending);
            if !self.run_steps(live, 1) {
                return;
            }
            for p in pending.iter_mut() {
                p.1 -= 1.0;
            }
        }
    }

    fn release_due(&mut self, live: &mut Live, pending: &mut Vec<(Release, f64)>) {
        pending.retain(|(what, left)| {
            if *left > 0.0 {
                return true;
            }
            match what {
                Release::Key(k) => live.sut.key_up(k),
                Release::Mouse => {
                    let (x, y, _) = live.sut.vm_mouse();
                    live.sut.mouse_post(x, y, false);
                }
                Release::Loudness => live.sut.set_loudness(-1.0),
            }
            false
        });
    }
}
