//! The runtime (scratch-vm's `Runtime`): the whole mutable state of a VM ([`State`]) and the
//! operations on all of it: start, green flag, stop all, starting hats, stopping a target's
//! threads.

use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use super::thread::NOT_LISTED;
use super::{PendingInput, Question, Resume, STEP_MS, SayEvent, Status, Target, TargetId, ThRef, Thread, V, VTimer};
use crate::extensions::pen::PenState;
use crate::geometry::Geometry;
use crate::instrument::Instrument;
use crate::program::{HatKind, NONE, Program};
use crate::rng::SplitMix64;
use crate::vm::{Profile, VmOptions};

/// A JS exception scratch-vm would throw inside a step (P10).
#[derive(Debug, Clone)]
pub(crate) struct StepError(pub String);

/// The mutable state of a VM (everything except the shared program).
pub(crate) struct State {
    pub opts: VmOptions,
    pub targets: Vec<(u32, Option<Target>)>,
    pub free_targets: Vec<u32>,
    /// `runtime.targets`: originals in load order, then clones by creation.
    pub rt_targets: Vec<TargetId>,
    /// `runtime.executableTargets`: back (stage) to front.
    pub exec: Vec<TargetId>,
    /// Slots of the targets handed out mutably ([`State::target_mut`]) since `render_log_base`
    /// entries were dropped: the geometry re-checks only these between queries (see
    /// [`crate::geometry::Changes`]). Bounded; a reader left behind checks everything.
    pub render_log: Vec<u32>,
    /// How many log entries were dropped before `render_log[0]`.
    pub render_log_base: u64,
    /// Bumped whenever targets are created or disposed or the layer order (`exec`) changes.
    pub layer_epoch: u64,
    pub clone_count: u32,
    pub clone_serial: Vec<u32>,
    pub slab: Vec<Thread>,
    pub free_slots: Vec<u32>,
    /// `runtime.threads`. Changed only through the `list_*` methods, which keep
    /// `Thread::list_pos` in step.
    pub threads: Vec<ThRef>,
    /// Per target slot: the target occupying it and the threads made for it that may still be
    /// listed. The scans of `startHats` and `stopForTarget` walk these instead of every thread,
    /// which a clone churning inside one warp step makes quadratic.
    pub by_target: Vec<(TargetId, Vec<ThRef>)>,
    /// The list the current tick iterates after a `stop all` replaced `runtime.threads`.
    pub orphans: Option<Vec<ThRef>>,
    pub in_tick: bool,
    pub active: Option<ThRef>,
    pub rng: SplitMix64,
    pub steps: u64,
    pub clock_now: f64,
    pub current_msecs: f64,
    pub timer_start: f64,
    pub timer_scale: f64,
    pub keys: Vec<Rc<str>>,
    pub mouse_x: f64,
    pub mouse_y: f64,
    pub mouse_down: bool,
    pub answer: Rc<str>,
    pub loudness: f64,
    pub username: Rc<str>,
    pub counter: f64,
    pub questions: VecDeque<Question>,
    pub timers: Vec<VTimer>,
    pub timer_ids: u64,
    pub timer_seq: u64,
    pub last_bubble_timer: Option<u64>,
    pub microtasks: Vec<(ThRef, Resume)>,
    pub usage: u64,
    pub pending: Vec<PendingInput>,
    pub ops: u64,
    /// Block executions of the steps before the current one (with `ops`, the interpreter's
    /// part of [`Vm::work`]).
    pub ops_total: u64,
    /// Reporter evaluations so far (work only: the operation budget counts blocks, as
    /// scratch-vm does).
    pub evals: u64,
    pub hung: bool,
    pub error: Option<StepError>,
    pub executed: Vec<u64>,
    pub unknown: BTreeMap<String, u64>,
    pub stack: Vec<V>,
    pub geometry: Box<dyn Geometry>,
    pub say_log: Option<Vec<SayEvent>>,
    pub instrument: Option<Box<Instrument>>,
    pub sound_durations: bool,
    pub tempo: f64,
    pub video_state: u32,
    pub video_transparency: f64,
    pub tts_language: Option<Rc<str>>,
    pub stage_slot: u32,
    /// Branch distances of the condition just evaluated (instrumentation).
    pub cond_dist: Option<(f64, f64)>,
    /// Makey Makey: key sequences in use (upper-cased string, keys, completed).
    pub makey_sequences: Vec<(String, Vec<String>, bool)>,
    /// Makey Makey: recently pressed keys (first word, upper-cased).
    pub makey_buffer: VecDeque<String>,
    /// What each literal used as a `touching` menu value names, once resolved.
    pub touch_cache: Vec<Option<crate::blocks::sensing::Touch>>,
}

impl State {
    pub(crate) fn new(prog: &Program, opts: VmOptions, geometry: Box<dyn Geometry>) -> State {
        let n_defs = prog.defs.len();
        let mut st = State {
            rng: SplitMix64::new(opts.seed),
            say_log: if opts.record_say { Some(Vec::new()) } else { None },
            instrument: if opts.instrument { Some(Box::new(Instrument::new(prog))) } else { None },
            sound_durations: opts.profile != Profile::Headless,
            timer_scale: if opts.profile == Profile::Whisker { 75.0 / STEP_MS } else { 1.0 },
            opts,
            targets: Vec::with_capacity(n_defs),
            free_targets: Vec::new(),
            rt_targets: Vec::with_capacity(n_defs),
            exec: Vec::with_capacity(n_defs),
            render_log: Vec::new(),
            render_log_base: 0,
            layer_epoch: 0,
            clone_count: 0,
            clone_serial: vec![1; n_defs],
            slab: Vec::new(),
            free_slots: Vec::new(),
            threads: Vec::new(),
            by_target: Vec::new(),
            orphans: None,
            in_tick: false,
            active: None,
            steps: 0,
            clock_now: 0.0,
            current_msecs: 0.0,
            timer_start: 0.0,
            keys: Vec::new(),
            mouse_x: 0.0,
            // The oracle posts the mouse at the stage centre: y = round(-360 * (0.5 - 0.5)) = -0.
            mouse_y: -0.0,
            mouse_down: false,
            answer: Rc::from(""),
            loudness: -1.0,
            username: Rc::from(""),
            counter: 0.0,
            questions: VecDeque::new(),
            timers: Vec::new(),
            timer_ids: 0,
            timer_seq: 0,
            last_bubble_timer: None,
            microtasks: Vec::new(),
            usage: 0,
            pending: Vec::new(),
            ops: 0,
            ops_total: 0,
            evals: 0,
            hung: false,
            error: None,
            executed: vec![0u64; prog.blocks.len().div_ceil(64)],
            unknown: BTreeMap::new(),
            stack: Vec::with_capacity(64),
            geometry,
            tempo: 60.0,
            video_state: 0,
            video_transparency: 50.0,
            tts_language: None,
            stage_slot: prog.stage,
            cond_dist: None,
            makey_sequences: Vec::new(),
            makey_buffer: VecDeque::new(),
            touch_cache: Vec::new(),
        };
        for (d, def) in prog.defs.iter().enumerate() {
            let mut vars = Vec::new();
            let mut lists = Vec::new();
            for v in &def.vars {
                if v.is_list {
                    vars.push(V::Undef);
                    lists.push(v.items.iter().map(|c| V::from_const(*c)).collect());
                } else {
                    vars.push(V::from_const(v.value));
                    lists.push(Vec::new());
                }
            }
            let t = Target {
                def: d as u32,
                is_stage: def.is_stage,
                is_original: true,
                clone_index: 0,
                x: def.x,
                y: def.y,
                direction: def.direction,
                size: def.size,
                visible: def.visible,
                costume: def.costume,
                rotation_style: def.rotation_style,
                draggable: def.draggable,
                volume: def.volume,
                effects: [0.0; 7],
                bubble: None,
                vars,
                lists,
                dyn_vars: Vec::new(),
                edge: Vec::new(),
                sound_effects: [0.0; 2],
                pen: PenState::default(),
                instrument: 0.0,
                voice: 0,
            };
            if def.is_stage {
                st.tempo = def.tempo;
                st.video_transparency = def.video_transparency;
                st.video_state = def.video_state;
            }
            st.targets.push((0, Some(t)));
            st.rt_targets.push(TargetId { slot: d as u32, gn: 0 });
        }
        st.exec = prog.layer_order.iter().map(|&d| TargetId { slot: d, gn: 0 }).collect();
        st
    }

    /// scratch-vm `Runtime.greenFlag`.
    pub(crate) fn green_flag(&mut self, prog: &Program) {
        self.stop_all(prog);
        // PROJECT_START: answer reset, sound effects cleared.
        self.answer = Rc::from("");
        for id in self.rt_targets.clone() {
            if let Some(t) = self.target_mut(id) {
                t.sound_effects = [0.0; 2];
            }
        }
        self.timer_start = self.current_msecs;
        for id in self.rt_targets.clone() {
            if let Some(t) = self.target_mut(id) {
                t.edge.clear();
                t.effects = [0.0; 7];
            }
        }
        self.start_hats(prog, HatKind::Flag, None, None);
    }

    /// scratch-vm `Runtime.stopAll`.
    pub(crate) fn stop_all(&mut self, prog: &Program) {
        // PROJECT_STOP_ALL: bubbles reset (and the last say-for-secs timer cleared),
        // questions dropped, sound effects cleared.
        for id in self.rt_targets.clone() {
            if let Some(t) = self.target_mut(id) {
                if let Some(b) = &mut t.bubble {
                    b.text = Rc::from("");
                }
                t.sound_effects = [0.0; 2];
            }
        }
        if let Some(id) = self.last_bubble_timer.take() {
            self.timers.retain(|t| t.id != id);
        }
        self.questions.clear();
        self.makey_buffer.clear();
        // Dispose clones; every target clears its graphic effects.
        let all = self.rt_targets.clone();
        for id in all {
            let is_clone = match self.target_mut(id) {
                Some(t) => {
                    t.effects = [0.0; 7];
                    !t.is_original
                }
                None => false,
            };
            if is_clone {
                self.dispose_clone(prog, id);
            }
        }
        if let Some(a) = self.active {
            let th = self.thm(a);
            th.killed = true;
            th.retire();
        }
        // In a tick, the first `stop all` leaves the tick iterating the old list.
        let to_orphans = self.in_tick && self.orphans.is_none();
        self.list_clear(to_orphans);
    }

    // ------------------------------------------------------------------ hats

    /// scratch-vm `Runtime.startHats`. `field` is already upper-cased.
    pub(crate) fn start_hats(
        &mut self,
        prog: &Program,
        kind: HatKind,
        field: Option<&str>,
        only: Option<TargetId>,
    ) -> Vec<ThRef> {
        let mut started: Vec<ThRef> = Vec::new();
        let restart = kind.restarts();
        let n = match only {
            Some(_) => 1,
            None => self.exec.len(),
        };
        for k in 0..n {
            let tid = match only {
                Some(t) => t,
                None => match self.exec.get(n - 1 - k) {
                    Some(t) => *t,
                    None => continue,
                },
            };
            let Some(def) = self.target(tid).map(|t| t.def) else { continue };
            let scripts = &prog.def(def).hats[kind.index()];
            for s in scripts {
                if let Some(f) = field
                    && s.field.as_deref() != Some(f)
                {
                    continue;
                }
                let top = s.top;
                // The first listed thread of this script (the list position orders them).
                let mut first: Option<u32> = None;
                let mut running = false;
                self.prune_threads_of(tid);
                for &t in self.threads_of(tid) {
                    let th = &self.slab[t.slot as usize];
                    if th.top != top || th.list_pos == NOT_LISTED {
                        continue;
                    }
                    running |= th.status != Status::Done;
                    if first.is_none_or(|p| th.list_pos < p) {
                        first = Some(th.list_pos);
                    }
                }
                if restart {
                    if let Some(pos) = first {
                        let nt = self.new_thread(tid, top);
                        self.list_replace(pos as usize, nt);
                        started.push(nt);
                        continue;
                    }
                } else if running {
                    continue;
                }
                let nt = self.new_thread(tid, top);
                self.list_push(nt);
                started.push(nt);
            }
        }
        if let Some(ins) = &mut self.instrument {
            for &t in &started {
                ins.hat_started(self.slab[t.slot as usize].top);
            }
        }
        // Hats are executed right away (predicates of edge-activated hats), then the
        // threads move on to the block after the hat.
        for &t in &started {
            super::execute::execute(self, prog, t);
            let th = self.thm(t);
            let top = th.peek();
            if let Some(b) = top
                && b != NONE
            {
                let next = prog.blocks.get(b as usize).map_or(NONE, |x| x.next);
                th.reuse_top(next);
            }
        }
        started
    }

    /// scratch-vm `Runtime.stopForTarget`.
    pub(crate) fn stop_for_target(&mut self, prog: &Program, id: TargetId, except: Option<ThRef>) {
        // STOP_FOR_TARGET: questions of the target are dropped.
        let asking = self.questions.front().is_some_and(|q| q.target == id);
        self.questions.retain(|q| q.target != id);
        if asking {
            self.emit_say(prog, id, false, V::Lit(prog.lit_empty));
            self.ask_next(prog);
        }
        // Threads the current tick iterates after a `stop all` are stopped too.
        self.prune_threads_of(id);
        let Some((_, ts)) = self.by_target.get(id.slot as usize).filter(|(owner, _)| *owner == id) else { return };
        for &t in ts {
            let th = &mut self.slab[t.slot as usize];
            if Some(t) != except {
                th.killed = true;
                th.retire();
            }
        }
    }

    /// Marks block `b` executed.
    #[inline]
    pub(crate) fn mark(&mut self, b: u32) {
        if let Some(w) = self.executed.get_mut(b as usize / 64) {
            *w |= 1u64 << (b % 64);
        }
    }
}
