//! Looks blocks (scratch-vm `blocks/scratch3_looks.js`, `RenderedTarget`).

use crate::engine::value::{js_number, to_number, with_str};
use crate::program::{Cmd, HatKind, Program, Rep};
use std::rc::Rc;

use crate::engine::{Bubble, Ctx, SayEvent, State, StepError, TargetId, ThRef, TimerKind, V};
use crate::value::{clamp, is_white_space_str, js_round, js_to_upper, wrap_clamp};

/// Where the exception of `switch backdrop to … and wait` is raised (P10 of the oracle).
const SWITCH_BACKDROP_WAIT_ERROR: &str = "TypeError: Cannot read properties of undefined (reading 'length') @ \
                                          Scratch3LooksBlocks.switchBackdropAndWait (blocks/scratch3_looks.js:488)";
/// Where `switch costume to` an `undefined` or `null` throws (`requested.toString()`).
const SET_COSTUME_SITE: &str = "Scratch3LooksBlocks._setCostume (blocks/scratch3_looks.js:395)";
/// Where `switch backdrop to` (and `… and wait`) an `undefined` or `null` throws.
const SET_BACKDROP_SITE: &str = "Scratch3LooksBlocks._setBackdrop (blocks/scratch3_looks.js:429)";

pub(crate) fn run(st: &mut State, prog: &Program, t: ThRef, cmd: &Cmd, base: usize) {
    let me = st.th(t).target;
    match *cmd {
        Cmd::Say { think } => {
            let msg = st.take_arg(base, 0);
            st.emit_say(prog, me, think, msg);
        }
        // Whisker's fork: a stack timer in steps; the bubble is cleared when it ends.
        Cmd::SayForSecs { think } if st.whisker() => match super::control::step_timer_phase(st, t) {
            super::control::StepTimer::NeedsInit => {
                let msg = st.take_arg(base, 0);
                st.emit_say(prog, me, think, msg);
                let steps = crate::whisker::instrumented_steps(to_number(prog, st.arg(base, 1)));
                super::control::start_step_timer(st, t, steps);
            }
            super::control::StepTimer::Running => {}
            super::control::StepTimer::Finished => st.update_bubble(prog, me, think, V::lit(prog.lit_empty)),
        },
        Cmd::SayForSecs { think } => {
            let msg = st.take_arg(base, 0);
            let secs = js_number(prog, st.arg(base, 1));
            st.emit_say(prog, me, think, msg);
            let usage = st.target(me).and_then(|x| x.bubble.as_ref()).map_or(0, |b| b.usage);
            let id = st.add_timer(1000.0 * secs, TimerKind::Bubble { target: me, usage, think, thread: t });
            st.timers.last_bubble = Some(id);
            st.promise_wait_external(t);
        }
        // The blocks (not other visibility changes) re-render the bubble.
        Cmd::Show => {
            st.set_visible(me, true);
            st.render_bubble(me);
        }
        Cmd::Hide => {
            st.set_visible(me, false);
            st.render_bubble(me);
        }
        Cmd::SwitchCostume => {
            let c = st.take_arg(base, 0);
            if st.throws_on_nullish(&c, "toString", SET_COSTUME_SITE) {
                return;
            }
            st.set_costume_by(prog, me, &c, false);
        }
        Cmd::NextCostume => {
            let cur = st.target(me).map_or(0, |x| x.costume);
            st.set_costume_index(prog, me, (cur + 1) as f64);
        }
        Cmd::SwitchBackdrop => {
            let c = st.take_arg(base, 0);
            if st.throws_on_nullish(&c, "toString", SET_BACKDROP_SITE) {
                return;
            }
            st.set_backdrop(prog, &c, false);
        }
        Cmd::NextBackdrop => {
            let stage = st.stage();
            let cur = st.target(stage).map_or(0, |x| x.costume);
            st.set_backdrop(prog, &V::num((cur + 1) as f64), true);
        }
        Cmd::SwitchBackdropAndWait => {
            let started_before = matches!(st.th(t).stack.last().map(|f| &f.ctx), Some(Ctx::Started(_)));
            if !started_before {
                let c = st.take_arg(base, 0);
                if st.throws_on_nullish(&c, "toString", SET_BACKDROP_SITE) {
                    return;
                }
                let started = st.set_backdrop(prog, &c, false);
                let n = started.len();
                if let Some(f) = st.thm(t).stack.last_mut() {
                    f.ctx = Ctx::Started(started);
                }
                // scratch-vm reads `util.stackFrame` after `runtime.startHats` re-pointed the
                // shared BlockUtility at a started thread, and throws. Whisker's fork guards that
                // read (`!startedThreads ||`), so there the block ends at once: it switches, starts
                // the hats and does not wait, and the rest of the step runs.
                if n > 0 && !st.whisker() {
                    st.budget.error = Some(StepError(SWITCH_BACKDROP_WAIT_ERROR.into()));
                }
                return;
            }
            crate::blocks::events::wait_for_started(st, t);
        }
        Cmd::ChangeEffect(e) => {
            let change = st.num_arg(prog, base, 0);
            let Some(e) = e else { return };
            let cur = st.target(me).map_or(0.0, |x| x.effects[e as usize]);
            let v = clamp_effect(e, change + cur);
            if let Some(x) = st.target_mut(me) {
                x.effects[e as usize] = v;
                if is_shape_effect(e) {
                    x.hull_dirty();
                }
            }
            st.visual_change(me, true);
        }
        Cmd::SetEffect(e) => {
            let v = st.num_arg(prog, base, 0);
            let Some(e) = e else { return };
            let v = clamp_effect(e, v);
            if let Some(x) = st.target_mut(me) {
                x.effects[e as usize] = v;
                if is_shape_effect(e) {
                    x.hull_dirty();
                }
            }
            st.visual_change(me, true);
        }
        Cmd::ClearEffects => {
            if let Some(x) = st.target_mut(me) {
                x.effects = [0.0; 7];
                x.hull_dirty();
            }
            st.visual_change(me, true);
        }
        Cmd::ChangeSize => {
            let change = st.num_arg(prog, base, 0);
            let size = st.target(me).map_or(0.0, |x| x.size) + change;
            st.set_size(prog, me, size);
        }
        Cmd::SetSize => {
            let size = st.num_arg(prog, base, 0);
            st.set_size(prog, me, size);
        }
        Cmd::GoFrontBack { front } => st.go_front_back(me, front),
        Cmd::GoLayers { forward } => {
            let n = st.num_arg(prog, base, 0);
            if st.target(me).is_some_and(|x| !x.is_stage) {
                let n = if forward { n } else { -n };
                st.move_executable(me, n);
                if let Some(d) = &mut st.targets.draw {
                    d.forward(me, n);
                }
            }
        }
        _ => {}
    }
}

/// scratch-vm `clampEffect`: ghost 0..100, brightness -100..100.
pub(crate) fn clamp_effect(e: u8, v: f64) -> f64 {
    match e {
        6 => clamp(v, 0.0, 100.0),
        5 => clamp(v, -100.0, 100.0),
        _ => v,
    }
}

pub(crate) fn eval(st: &mut State, prog: &Program, t: ThRef, rep: &Rep) -> V {
    let me = st.th(t).target;
    match *rep {
        Rep::Size => V::num(js_round(st.target(me).map_or(0.0, |x| x.size))),
        Rep::CostumeNumName { number } => {
            let Some(x) = st.target(me) else { return V::Undef };
            if number { V::num((x.costume + 1) as f64) } else { costume_name(prog, x.def, x.costume) }
        }
        Rep::BackdropNumName { number } => {
            let Some(x) = st.target(st.stage()) else { return V::Undef };
            if number { V::num((x.costume + 1) as f64) } else { costume_name(prog, x.def, x.costume) }
        }
        _ => V::Undef,
    }
}

/// The name of costume `i` of definition `def` (`undefined` when out of range).
pub(crate) fn costume_name(prog: &Program, def: u32, i: i64) -> V {
    usize::try_from(i).ok().and_then(|i| prog.def(def).costumes.get(i)).map_or(V::Undef, |c| V::lit(c.name))
}

impl State {
    /// `RenderedTarget.goToFront` / `goToBack` (a sprite only).
    pub(crate) fn go_front_back(&mut self, me: TargetId, front: bool) {
        if self.target(me).is_some_and(|x| !x.is_stage) {
            let p = if front { f64::INFINITY } else { f64::NEG_INFINITY };
            self.set_executable_position(me, p);
            if let Some(d) = &mut self.targets.draw {
                d.front_back(me, front);
            }
        }
    }

    pub(crate) fn set_visible(&mut self, id: TargetId, v: bool) {
        if let Some(x) = self.target_mut(id)
            && !x.is_stage
        {
            // `updateVisible` marks the hull dirty when the renderer's visibility changes.
            if x.render_visible() != v {
                x.hull_dirty();
            }
            x.visible = v;
            x.visibility_rendered();
        } else {
            return;
        }
        self.visual_change(id, false);
    }

    /// `RenderedTarget.setCostume`: rounded, wrapped into range.
    pub(crate) fn set_costume_index(&mut self, prog: &Program, id: TargetId, index: f64) {
        let Some(x) = self.target_mut(id) else { return };
        let n = prog.def(x.def).costumes.len();
        let mut i = js_round(index);
        if !i.is_finite() {
            i = 0.0;
        }
        if n == 0 {
            return;
        }
        let shown = x.render_costume();
        x.costume = wrap_clamp(i, 0.0, (n - 1) as f64) as i64;
        x.costume_rendered();
        // A new skin (`Drawable.skin`'s setter) marks the hull dirty; the same one does not.
        if x.costume != shown {
            x.hull_dirty();
        }
        self.visual_change(id, true);
    }

    pub(crate) fn costume_index_by_name(&self, prog: &Program, id: TargetId, name: &str) -> Option<usize> {
        let def = prog.def(self.target(id)?.def);
        match &def.costume_by_name {
            Some(index) => index.get(name).map(|&i| i as usize),
            None => def.costumes.iter().position(|c| prog.lit_str(c.name) == name),
        }
    }

    /// Looks `_setCostume`.
    pub(crate) fn set_costume_by(&mut self, prog: &Program, id: TargetId, req: &V, zero_index: bool) {
        if let V::Num(n) = req {
            let i = if zero_index { n.get() } else { n.get() - 1.0 };
            self.set_costume_index(prog, id, i);
            return;
        }
        if matches!(req, V::Undef | V::Null) {
            return;
        }
        let cur = self.target(id).map_or(0, |x| x.costume) as f64;
        let action = with_str(prog, req, |s| {
            if let Some(i) = self.costume_index_by_name(prog, id, s) {
                return Some(i as f64);
            }
            let is_str = matches!(req, V::Lit(_) | V::Str(_));
            if is_str && s == "next costume" {
                return Some(cur + 1.0);
            }
            if is_str && s == "previous costume" {
                return Some(cur - 1.0);
            }
            let n = js_number(prog, req);
            if !(n.is_nan() || (is_str && is_white_space_str(s))) {
                return Some(if zero_index { n } else { n - 1.0 });
            }
            None
        });
        if let Some(i) = action {
            self.set_costume_index(prog, id, i);
        }
    }

    /// Looks `_setBackdrop`: switches, then starts "when backdrop switches to" hats.
    pub(crate) fn set_backdrop(&mut self, prog: &Program, req: &V, zero_index: bool) -> Vec<ThRef> {
        let stage = self.stage();
        let Some(sx) = self.target(stage) else { return Vec::new() };
        let n_costumes = prog.def(sx.def).costumes.len();
        let cur = sx.costume;
        if let V::Num(n) = req {
            let i = if zero_index { n.get() } else { n.get() - 1.0 };
            self.set_costume_index(prog, stage, i);
        } else if !matches!(req, V::Undef | V::Null) {
            let is_str = matches!(req, V::Lit(_) | V::Str(_));
            let (by_name, text) = with_str(prog, req, |s| (self.costume_index_by_name(prog, stage, s), s.to_string()));
            if let Some(i) = by_name {
                self.set_costume_index(prog, stage, i as f64);
            } else if is_str && text == "next backdrop" {
                self.set_costume_index(prog, stage, (cur + 1) as f64);
            } else if is_str && text == "previous backdrop" {
                self.set_costume_index(prog, stage, (cur - 1) as f64);
            } else if is_str && text == "random backdrop" {
                if n_costumes > 1 {
                    let r = self.random();
                    let mut i = (r * (n_costumes - 1) as f64).floor();
                    if i >= cur as f64 {
                        i += 1.0;
                    }
                    self.set_costume_index(prog, stage, i);
                }
            } else {
                let n = js_number(prog, req);
                if !(n.is_nan() || (is_str && is_white_space_str(&text))) {
                    self.set_costume_index(prog, stage, if zero_index { n } else { n - 1.0 });
                }
            }
        }
        let Some(sx) = self.target(stage) else { return Vec::new() };
        let name = costume_name(prog, sx.def, sx.costume);
        let upper = match name {
            V::Lit(l) => js_to_upper(prog.lit_str(l.id())),
            _ => return Vec::new(),
        };
        self.start_hats(prog, HatKind::Backdrop, Some(&upper), None)
    }

    /// `RenderedTarget.setSize`: unclamped without renderer (P6), else scratch-vm's
    /// clamp to the costume size.
    pub(crate) fn set_size(&mut self, prog: &Program, id: TargetId, size: f64) {
        let Some(x) = self.target(id) else { return };
        if x.is_stage {
            return;
        }
        // `getCurrentSkinSize`: the skin the drawable shows.
        let (def, costume) = (x.def, x.render_costume());
        let new = match self.geometry.costume_size(prog_def(prog, def), costume) {
            Some((w, h)) if w > 0.0 && h > 0.0 => {
                let min_scale = f64::min(1.0, f64::max(5.0 / w, 5.0 / h));
                let max_scale = f64::min((1.5 * 480.0) / w, (1.5 * 360.0) / h);
                clamp(size / 100.0, min_scale, max_scale) * 100.0
            }
            _ => size,
        };
        if let Some(x) = self.target_mut(id) {
            x.size = new;
            x.pose_rendered();
        }
        self.visual_change(id, true);
    }
}

fn prog_def(_prog: &Program, def: u32) -> usize {
    def as usize
}

#[allow(dead_code)]
fn unused(prog: &Program, v: &V) -> f64 {
    to_number(prog, v)
}

impl State {
    /// `runtime.emit('SAY', target, type, message)`: recorded, then the bubble is updated.
    pub(crate) fn emit_say(&mut self, prog: &Program, id: TargetId, think: bool, msg: V) {
        if self.observe.say_log.is_some() {
            let text = self.to_string(prog, &msg).to_string();
            if let Some(log) = &mut self.observe.say_log {
                log.push(SayEvent { target: id, kind: if think { "think" } else { "say" }, text });
            }
        }
        self.update_bubble(prog, id, think, msg);
        // Whisker's `SAY` listener was added after the looks blocks' own, so it runs after the
        // bubble was updated (and after a `DELETE_SAY_OR_THINK` that update sent).
        if self.observe.listener_log.is_some() {
            self.log_bubble(id);
        }
    }

    /// A listener event with the target's bubble text as it is now.
    #[cold]
    fn log_bubble(&mut self, id: TargetId) {
        let text = self.target(id).and_then(|t| t.bubble.as_ref()).map_or_else(String::new, |b| b.text.to_string());
        let pose = self.pose_of(id);
        self.observe.listener(id, crate::vm::ListenerKind::Bubble(text), pose);
    }

    /// Looks `_updateBubble`: formats the text and takes a new usage id.
    pub(crate) fn update_bubble(&mut self, prog: &Program, id: TargetId, think: bool, msg: V) {
        // `if (text === '')`: the message itself, a string, not what it formats to.
        let clears = self.observe.listener_log.is_some()
            && match &msg {
                V::Lit(_) | V::Str(_) => self.to_string(prog, &msg).is_empty(),
                _ => false,
            };
        let text: Rc<str> = match &msg {
            V::Num(n) if n.get().abs() >= 0.01 && n.get() % 1.0 != 0.0 => {
                Rc::from(crate::value::to_fixed(n.get(), 2).as_str())
            }
            _ => {
                let s = self.to_string(prog, &msg);
                if crate::value::utf16_len(&s) > 330 {
                    Rc::from(crate::value::utf16_prefix(&s, 330).as_str())
                } else {
                    s
                }
            }
        };
        self.uid_draws();
        self.bubble_usage += 1;
        let usage = self.bubble_usage;
        if let Some(t) = self.target_mut(id) {
            t.bubble = Some(Bubble { think, text, usage });
        }
        if clears {
            self.log_bubble(id);
        }
        self.render_bubble(id);
    }

    /// Looks `_renderBubble`: the bubble's drawable exists while the target is visible and
    /// has text (only the `whisker` profile keeps the renderer's draw list).
    pub(crate) fn render_bubble(&mut self, id: TargetId) {
        if self.targets.draw.is_none() {
            return;
        }
        // With a renderer, `_renderBubble` reads the state through `_getBubbleState`, which
        // gives a target without one a fresh state: a clone that ran `show` or `hide` has
        // Whisker's `sayText` `""` from then on, not `null` (read in the real Whisker).
        // An empty state draws nothing: not a change the geometry sees (`target_cache_mut`).
        if let Some(t) = self.target_cache_mut(id) {
            t.bubble.get_or_insert_with(Bubble::fresh);
        }
        let shown = self.target(id).is_some_and(|t| t.visible && t.bubble.as_ref().is_some_and(|b| !b.text.is_empty()));
        if let Some(d) = &mut self.targets.draw {
            d.bubble(id, shown);
        }
    }
}

/// Whether effect `e` (in `EFFECT_NAMES` order) changes the drawable's shape:
/// fisheye, whirl, pixelate, mosaic (scratch-render's `shapeChanges`).
pub(crate) fn is_shape_effect(e: u8) -> bool {
    (1..=4).contains(&e)
}
