//! The runtime (scratch-vm's `Runtime`): the whole mutable state of a VM ([`State`]) and the
//! operations on all of it: start, green flag, stop all, starting hats, stopping a target's
//! threads.

use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use super::target::{Bubble, Targets};
use super::thread::{NOT_LISTED, Threads};
use super::timers::{Clock, Timers};
use super::{Resume, SayEvent, Status, Target, TargetId, ThRef, V};
use crate::blocks::sensing::Ask;
use crate::extensions::Extensions;
use crate::extensions::pen::PenState;
use crate::geometry::Geometry;
use crate::instrument::Instrument;
use crate::io::Io;
use crate::program::{HatKind, NONE, Program};
use crate::rng::ProjectRng;
use crate::vm::{Profile, VmOptions};

/// A JS exception scratch-vm would throw inside a step (P10).
#[derive(Debug, Clone)]
pub(crate) struct StepError(pub String);

/// The mutable state of a VM (everything except the shared program): scratch-vm's
/// `Runtime` with its targets, threads, clock and devices, grouped by concern.
#[derive(Clone)]
pub(crate) struct State {
    /// The options the VM was made with.
    pub opts: VmOptions,
    /// Live targets, their orders and the change log the geometry reads.
    pub targets: Targets,
    /// Thread objects and `runtime.threads`.
    pub threads: Threads,
    /// Step counter and the virtual clock.
    pub clock: Clock,
    /// Virtual `setTimeout`s.
    pub timers: Timers,
    /// Promise continuations waiting for the next microtask checkpoint.
    pub microtasks: Vec<(ThRef, Resume)>,
    /// Queued inputs and the state of the keyboard, mouse and microphone.
    pub io: Io,
    /// Pending `ask` questions and the last answer.
    pub ask: Ask,
    /// The operation budget of this step, the work done, and this step's hang or exception.
    pub budget: Budget,
    /// What test generation observes: executed blocks, unknown opcodes, instrumentation.
    pub observe: Observe,
    /// The extensions' global state (music, text to speech, video, Makey Makey).
    pub ext: Extensions,
    /// The one seeded generator every project-visible random draw uses (the profile's:
    /// SplitMix64, or `seed-random` under `whisker`).
    pub rng: ProjectRng,
    /// `budget.draws` when the stream was last seeded by a Whisker test start
    /// ([`State::whisker_restore`]; 0 for a new VM): a clone's `uid()` position is counted
    /// from here.
    pub uid_base: u64,
    /// `control_incr_counter`'s counter.
    pub counter: f64,
    /// Usage ids of say/think bubbles (a timer only clears the bubble it made).
    pub bubble_usage: u64,
    /// Reporter values: the argument slots of the blocks being evaluated.
    pub stack: Vec<V>,
    /// Touching, fencing, bounds, pen drawing (nothing in the headless profile).
    pub geometry: Box<dyn Geometry>,
    /// Whether `play sound until done` waits for the sound (the profiles with sound).
    pub sound_durations: bool,
    /// What each literal used as a `touching` menu value names, once resolved.
    pub touch_cache: Vec<Option<crate::blocks::sensing::Touch>>,
    /// This step's search for a warp loop that changes nothing ([`super::fixpoint`]).
    pub fixpoint: super::fixpoint::FixPoint,
    /// Pen drawings so far (clear, dots, lines, stamps): the pen layer's generation, which
    /// [`State::fingerprint`] compares instead of the pixels.
    pub pen_ops: u64,
    /// Under a Whisker test driver, the wrapper Whisker's `Sprites` holds for each target id
    /// (uid draw) in this test, as (sprite, the target it wraps): `wrapTarget` caches wrappers
    /// by id and keeps those of deleted clones. `None` elsewhere, where nothing wraps targets
    /// ([`State::whisker_wrap`]).
    pub whisker_wrapped: Option<BTreeMap<u64, (u32, super::TargetId)>>,
    /// Reporters held in more than one input slot ([`super::shared`]), when there are any.
    pub shared: Option<Box<super::shared::SharedState>>,
    /// The `Math` library the blocks compute with (the profile's engine: Node or Chromium).
    pub maths: crate::util::mathlib::MathLib,
    /// Glides started so far under the `whisker` profile: each glide's serial, which
    /// [`Target::glide`](super::target::Target) names (Whisker's `glidingStackFrame`).
    pub glides: u64,
}

/// The step's operation budget and the VM's work counters.
#[derive(Clone)]
pub(crate) struct Budget {
    /// Block executions in this step (the hang guard counts these).
    pub ops: u64,
    /// Block executions of the steps before the current one (with `ops`, the interpreter's
    /// part of [`crate::Vm::work`]).
    pub ops_total: u64,
    /// Reporter evaluations so far (work only: the operation budget counts blocks, as
    /// scratch-vm does).
    pub evals: u64,
    /// Of these, evaluations of constants (literals and menus): charged less, they only
    /// copy a value.
    pub consts: u64,
    /// Of these, evaluations of reporters neither constant nor light ([`crate::program::Rep::is_light`]:
    /// variables, parameters, list items and lengths, arithmetic, comparisons, logic). The
    /// light ones are what is left, so the interpreter's fast paths, which evaluate only
    /// light reporters, count nothing more.
    pub rich: u64,
    /// Draws from the project's random stream so far (work only).
    pub draws: u64,
    /// Threads resumed by the scheduler so far (work only).
    pub resumes: u64,
    /// Block executions the hang guard counted but the VM did not do (warp spins it skips,
    /// `State::skip_warp_wait`): subtracted from the work.
    pub skipped: u64,
    /// Of the geometry's work, what measuring branch distances did (instrumentation, not the
    /// program): reported apart ([`crate::Vm::work_parts`]).
    pub distance: u64,
    /// This step exceeded the operation budget (or a thread's stack limit).
    pub hung: bool,
    /// The JS exception scratch-vm would have thrown in this step (P10).
    pub error: Option<StepError>,
}

/// What test generation and traces observe.
#[derive(Clone)]
pub(crate) struct Observe {
    /// Bitset of the blocks executed since the VM was created.
    pub executed: Vec<u64>,
    /// Executed opcodes without an implementation, with counts.
    pub unknown: BTreeMap<String, u64>,
    /// Instrumentation for test generation, when enabled.
    pub instrument: Option<Box<Instrument>>,
    /// Branch distances (to true, to false) of the condition just evaluated.
    pub cond_dist: Option<(f64, f64)>,
    /// SAY events since the last take, when recorded.
    pub say_log: Option<Vec<SayEvent>>,
    /// Moves since the last `Vm::take_moves` (`VmOptions::record_moves`).
    pub move_log: Option<Vec<crate::external::MoveEvent>>,
    /// Move events carry every sprite's pose (`Vm::record_move_scenes`).
    pub move_scenes: bool,
    /// Listener events since the last `Vm::take_listener_events` (`VmOptions::record_listeners`).
    pub listener_log: Option<Vec<crate::vm::ListenerEvent>>,
    /// Sequence number of the next move or listener event.
    pub event_seq: u64,
    /// How often `stopAll` ran (scratch-vm's PROJECT_STOP_ALL events: green flag, stop sign,
    /// `stop all` blocks).
    pub stop_alls: u64,
}

impl Observe {
    /// Records a listener event (only when they are recorded).
    pub(crate) fn listener(&mut self, target: TargetId, kind: crate::vm::ListenerKind, pose: Option<crate::Pose>) {
        let seq = self.event_seq;
        if let Some(log) = &mut self.listener_log {
            self.event_seq += 1;
            log.push(crate::vm::ListenerEvent { seq, target, kind, pose });
        }
    }
}

impl State {
    /// Whether `value` is `undefined` or `null`, on which the block's JS reads a method and
    /// throws (`requested.toString()`), aborting the rest of the step (P10) with the thread
    /// still on the block. `site` is where scratch-vm throws, as the oracle reports it.
    pub(crate) fn throws_on_nullish(&mut self, value: &V, method: &str, site: &str) -> bool {
        let what = match value {
            V::Undef => "undefined",
            V::Null => "null",
            _ => return false,
        };
        self.budget.error =
            Some(StepError(format!("TypeError: Cannot read properties of {what} (reading '{method}') @ {site}")));
        true
    }

    /// A target's `EVENT_TARGET_VISUAL_CHANGE`, for Whisker's listeners; scratch-vm sends most
    /// of them only while the target is visible (`only_visible`).
    #[inline]
    pub(crate) fn visual_change(&mut self, id: TargetId, only_visible: bool) {
        if self.observe.listener_log.is_some() {
            self.log_visual_change(id, only_visible);
        }
    }

    #[cold]
    fn log_visual_change(&mut self, id: TargetId, only_visible: bool) {
        if only_visible && !self.target(id).is_some_and(|t| t.visible) {
            return;
        }
        let pose = self.pose_of(id);
        self.observe.listener(id, crate::vm::ListenerKind::Visual, pose);
    }

    pub(crate) fn new(prog: &Program, opts: VmOptions, geometry: Box<dyn Geometry>) -> State {
        let n_defs = prog.defs.len();
        let maths = match opts.whisker_maths {
            Some(m) if opts.profile == crate::Profile::Whisker => m,
            _ => crate::util::mathlib::MathLib::for_profile(opts.profile),
        };
        let mut st = State {
            rng: ProjectRng::new(opts.profile, opts.seed),
            uid_base: 0,
            observe: Observe {
                executed: vec![0u64; prog.blocks.len().div_ceil(64)],
                unknown: BTreeMap::new(),
                instrument: if opts.instrument { Some(Box::new(Instrument::new(prog, opts.distances))) } else { None },
                cond_dist: None,
                say_log: if opts.record_say { Some(Vec::new()) } else { None },
                move_log: if opts.record_moves { Some(Vec::new()) } else { None },
                move_scenes: false,
                listener_log: if opts.record_listeners { Some(Vec::new()) } else { None },
                event_seq: 0,
                stop_alls: 0,
            },
            sound_durations: opts.profile != Profile::Headless,
            clock: Clock { steps: 0, now: 0.0, current_msecs: 0.0, timer_start: 0.0, step_timer: 0.0 },
            opts,
            targets: Targets {
                slots: Vec::with_capacity(n_defs),
                free: Vec::new(),
                runtime_order: Vec::with_capacity(n_defs),
                exec: Vec::with_capacity(n_defs),
                render_log: Vec::new(),
                render_log_base: 0,
                layer_epoch: 0,
                target_epoch: 0,
                clone_count: 0,
                clone_serial: vec![1; n_defs],
                stage_slot: prog.stage,
                draw: None,
            },
            threads: Threads {
                slab: Vec::new(),
                free_slots: Vec::new(),
                list: Vec::new(),
                by_target: Vec::new(),
                orphans: None,
                in_tick: false,
                active: None,
                tick_threads: 0,
            },
            io: Io {
                pending: Vec::new(),
                keys: Vec::new(),
                mouse_x: 0.0,
                // The oracle posts the mouse at the stage centre: y = round(-360 * (0.5 - 0.5)) = -0.
                mouse_y: -0.0,
                mouse_down: false,
                loudness: -1.0,
                username: Rc::from(""),
            },
            ask: Ask { answer: super::value::JsStr::from(""), questions: VecDeque::new() },
            counter: 0.0,
            timers: Timers { list: Vec::new(), ids: 0, seq: 0, last_bubble: None },
            microtasks: Vec::new(),
            bubble_usage: 0,
            budget: Budget {
                ops: 0,
                ops_total: 0,
                evals: 0,
                draws: 0,
                resumes: 0,
                skipped: 0,
                distance: 0,
                consts: 0,
                rich: 0,
                hung: false,
                error: None,
            },
            stack: Vec::with_capacity(64),
            geometry,
            ext: Extensions {
                tempo: 60.0,
                video_state: 0,
                video_transparency: 50.0,
                tts_language: None,
                makey_sequences: Vec::new(),
                makey_buffer: VecDeque::new(),
            },
            touch_cache: Vec::new(),
            fixpoint: super::fixpoint::FixPoint::new_step(0, false),
            pen_ops: 0,
            whisker_wrapped: None,
            glides: 0,
            shared: prog.shared.as_deref().map(|i| Box::new(super::shared::SharedState::new(i))),
            maths,
        };
        for (d, def) in prog.defs.iter().enumerate() {
            // scratch-vm wraps a saved direction into range at load (scratch-gui#5806 saved
            // some outside it); Whisker's fork keeps it, and so do its reporters, its
            // left-right flip (`direction < 0`) and its `loadSaveState`.
            let direction = match st.whisker() {
                true => def.direction,
                false => crate::value::wrap_clamp(def.direction, -179.0, 180.0),
            };
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
                clone_id: 0,
                uid_draw: def.uid_draw,
                x: def.x,
                y: def.y,
                direction,
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
                dyn_vars: Default::default(),
                edge: Vec::new(),
                sound_effects: [0.0; 2],
                pen: PenState::default(),
                instrument: 0.0,
                voice: 0,
                stale: None,
                move_trig: super::target::MoveTrig::of(direction, st.maths),
                hull_epoch: 0,
                glide: 0,
            };
            if def.is_stage {
                st.ext.tempo = def.tempo;
                st.ext.video_transparency = def.video_transparency;
                st.ext.video_state = def.video_state;
            }
            st.targets.slots.push((0, Some(t)));
            st.targets.runtime_order.push(TargetId { slot: d as u32, gn: 0 });
        }
        st.targets.exec = prog.layer_order.iter().map(|&d| TargetId { slot: d, gn: 0 }).collect();
        if st.whisker() {
            let stage = st.stage();
            let sprites = st.targets.exec.iter().copied().filter(|&id| id != stage);
            st.targets.draw = Some(crate::whisker::DrawList::new(sprites, prog.pen_loaded));
            // Whisker's renderer lives as long as the project: the MIPs it creates stay.
            st.geometry.keep_mips(true);
            // Every Whisker test, the first included, begins with `loadSaveState`, whose
            // `setXY(x, y, true)` fences each sprite: one saved beyond the stage's edge starts
            // inside it (see `restore.rs`, which fences the saved position again).
            for id in st.targets.runtime_order.clone() {
                let Some(t) = st.target(id).filter(|t| !t.is_stage) else { continue };
                let (x, y) = st.fenced(prog, id, t.x, t.y);
                if let Some(t) = st.target_mut(id) {
                    t.x = x;
                    t.y = y;
                }
            }
        }
        st
    }

    /// Whether the `whisker` profile's rules apply ([`crate::whisker`]).
    #[inline]
    pub(crate) fn whisker(&self) -> bool {
        self.opts.profile == Profile::Whisker
    }

    /// The next draw of the project's random stream (`Math.random`), counted as work.
    #[inline]
    pub(crate) fn random(&mut self) -> f64 {
        self.budget.draws += 1;
        self.rng.next_f64()
    }

    /// A `uid()` of scratch-vm: under Whisker it consumes the project's stream.
    pub(crate) fn uid_draws(&mut self) {
        if self.whisker() {
            for _ in 0..crate::whisker::UID_DRAWS {
                self.random();
            }
        }
    }

    /// scratch-vm `Runtime.greenFlag`.
    pub(crate) fn green_flag(&mut self, prog: &Program) {
        self.stop_all(prog);
        // PROJECT_START: answer reset, sound effects cleared.
        self.ask.answer = super::value::JsStr::from("");
        for id in self.targets.runtime_order.clone() {
            if let Some(t) = self.target_mut(id) {
                t.sound_effects = [0.0; 2];
            }
        }
        self.clock.timer_start = self.clock.current_msecs;
        for id in self.targets.runtime_order.clone() {
            if let Some(t) = self.target_mut(id) {
                t.edge.clear();
                t.effects = [0.0; 7];
                // `clearEffects` sets every effect in the renderer: the shape ones dirty the hull.
                t.hull_dirty();
            }
            // `onGreenFlag` clears the effects: a visual change.
            self.visual_change(id, true);
        }
        self.start_hats(prog, HatKind::Flag, None, None);
    }

    /// scratch-vm `Runtime.stopAll`.
    pub(crate) fn stop_all(&mut self, prog: &Program) {
        self.observe.stop_alls += 1;
        // PROJECT_STOP_ALL: bubbles reset (and the last say-for-secs timer cleared),
        // questions dropped, sound effects cleared. Looks' `_onResetBubbles` goes through
        // `_getBubbleState`, which gives every target without one a fresh state (type say, no
        // usage): Whisker's `sayText` reads `""`, not `null`, from then on.
        for id in self.targets.runtime_order.clone() {
            if let Some(t) = self.target_mut(id) {
                let b = t.bubble.get_or_insert_with(Bubble::fresh);
                b.text = Rc::from("");
                t.sound_effects = [0.0; 2];
            }
        }
        if let Some(id) = self.timers.last_bubble.take() {
            self.timers.list.retain(|t| t.id != id);
        }
        if let Some(d) = &mut self.targets.draw {
            d.clear_bubbles();
        }
        self.ask.questions.clear();
        self.ext.makey_buffer.clear();
        // Dispose clones; every target clears its graphic effects.
        let all = self.targets.runtime_order.clone();
        for id in all {
            let is_clone = match self.target_mut(id) {
                Some(t) => {
                    t.effects = [0.0; 7];
                    t.hull_dirty();
                    !t.is_original
                }
                None => false,
            };
            self.visual_change(id, true);
            if is_clone {
                self.dispose_clone(prog, id);
            }
        }
        if let Some(a) = self.threads.active {
            let th = self.thm(a);
            th.killed = true;
            th.retire();
        }
        // In a tick, the first `stop all` leaves the tick iterating the old list.
        let to_orphans = self.threads.in_tick && self.threads.orphans.is_none();
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
            None => self.targets.exec.len(),
        };
        for k in 0..n {
            let tid = match only {
                Some(t) => t,
                None => match self.targets.exec.get(n - 1 - k) {
                    Some(t) => *t,
                    None => continue,
                },
            };
            let Some(def) = self.target(tid).map(|t| t.def) else { continue };
            let scripts = &prog.def(def).hats[kind.index()];
            if scripts.is_empty() {
                continue;
            }
            self.prune_threads_of(tid);
            // Threads started below are appended to the target's threads and never concern a
            // later script (each script is listed once per kind): only those there before are
            // looked at. Many scripts meeting many threads: those are indexed by script once
            // (sorted by top) instead of scanned per script, so that the cost stays linear.
            // Both ways give the same answer.
            let existing = self.threads_of(tid).len();
            let mut index: Option<Vec<(u32, u32, bool)>> = None;
            if scripts.len().saturating_mul(existing) > 4096 {
                let mut v = Vec::new();
                for &t in self.threads_of(tid) {
                    let th = &self.threads.slab[t.slot as usize];
                    if th.list_pos != NOT_LISTED {
                        v.push((th.top, th.list_pos, th.status != Status::Done));
                    }
                }
                v.sort_unstable();
                index = Some(v);
            }
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
                let mut note = |pos: u32, live: bool| {
                    running |= live;
                    if first.is_none_or(|p| pos < p) {
                        first = Some(pos);
                    }
                };
                match &index {
                    Some(v) => {
                        let from = v.partition_point(|e| e.0 < top);
                        for &(_, pos, live) in v.iter().skip(from).take_while(|e| e.0 == top) {
                            note(pos, live);
                        }
                    }
                    None => {
                        for &t in self.threads_of(tid).iter().take(existing) {
                            let th = &self.threads.slab[t.slot as usize];
                            if th.top == top && th.list_pos != NOT_LISTED {
                                note(th.list_pos, th.status != Status::Done);
                            }
                        }
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
        if let Some(ins) = &mut self.observe.instrument {
            for &t in &started {
                ins.hat_started(self.threads.slab[t.slot as usize].top);
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
        let asking = self.ask.questions.front().is_some_and(|q| q.target == id);
        self.ask.questions.retain(|q| q.target != id);
        if asking {
            self.emit_say(prog, id, false, V::lit(prog.lit_empty));
            self.ask_next(prog);
        }
        // Threads the current tick iterates after a `stop all` are stopped too.
        self.prune_threads_of(id);
        let Some((_, ts)) = self.threads.by_target.get(id.slot as usize).filter(|(owner, _)| *owner == id) else {
            return;
        };
        for &t in ts {
            let th = &mut self.threads.slab[t.slot as usize];
            if Some(t) != except {
                th.killed = true;
                th.retire();
            }
        }
    }

    /// Marks block `b` executed.
    #[inline]
    pub(crate) fn mark(&mut self, b: u32) {
        if let Some(w) = self.observe.executed.get_mut(b as usize / 64) {
            *w |= 1u64 << (b % 64);
        }
    }
}
