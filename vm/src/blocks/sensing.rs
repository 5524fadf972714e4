//! Sensing blocks (scratch-vm `blocks/scratch3_sensing.js`, io devices) with the
//! oracle's fixed environment (P5): date 2021-03-14 15:09:26, username "",
//! loudness -1 unless injected.

use std::collections::VecDeque;
use std::rc::Rc;

use crate::engine::value::{JsStr, to_number, to_rc_string, with_str};
use crate::engine::{Resume, State, TargetId, ThRef, V};
use crate::program::{Cmd, OfProp, Program, Rep};
use crate::value::{js_to_upper, to_int32, utf16_len};

/// `(Date.UTC(2021,2,14,15,9,26) - Date.UTC(2000,0,1)) / 86400000`.
pub(crate) const DAYS_SINCE_2000: f64 = 7743.631550925926;

/// What a `touching` menu value names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Touch {
    /// `_mouse_`
    Mouse,
    /// `_edge_`
    Edge,
    /// A sprite (any of its instances), by definition index.
    Sprite(usize),
    /// No such sprite: never touching.
    Nothing,
}

pub(crate) fn run(st: &mut State, prog: &Program, t: ThRef, cmd: &Cmd, base: usize) {
    let me = st.th(t).target;
    match *cmd {
        Cmd::Ask => {
            let q = to_rc_string(prog, st.arg(base, 0));
            let Some(x) = st.target(me) else { return };
            let (was_visible, was_stage) = (x.visible, x.is_stage);
            let first = st.ask.questions.is_empty();
            st.ask.questions.push_back(Question { text: q, thread: t, target: me, was_visible, was_stage });
            if first {
                st.ask_next(prog);
            }
            st.promise_wait_external(t);
        }
        // Whisker's fork resets its step timer only (the clock device keeps running).
        Cmd::ResetTimer if st.whisker() => st.clock.step_timer = 0.0,
        Cmd::ResetTimer => st.clock.timer_start = st.clock.current_msecs,
        Cmd::SetDragMode { draggable } => {
            if let Some(x) = st.target_mut(me)
                && !x.is_stage
            {
                x.draggable = draggable;
            }
        }
        _ => {}
    }
}

pub(crate) fn eval(st: &mut State, prog: &Program, t: ThRef, rep: &Rep, base: usize) -> V {
    let me = st.th(t).target;
    match *rep {
        Rep::TouchingObject => {
            let m = st.arg(base, 0).clone();
            V::bool(st.touching_object(prog, me, &m))
        }
        Rep::TouchingColor => {
            let c = color_arg(prog, st.arg(base, 0));
            let scene = crate::geometry::render_scene!(prog, st);
            V::bool(st.geometry.touching_color(&scene, me, c))
        }
        Rep::ColorTouchingColor => {
            let mask = color_arg(prog, st.arg(base, 0));
            let target = color_arg(prog, st.arg(base, 1));
            let scene = crate::geometry::render_scene!(prog, st);
            V::bool(st.geometry.color_touching_color(&scene, me, target, mask))
        }
        Rep::DistanceTo => {
            let Some(x) = st.target(me) else { return V::Undef };
            if x.is_stage {
                return V::num(10000.0);
            }
            let (mx, my) = (x.x, x.y);
            let m = st.arg(base, 0);
            let is_mouse = matches!(m, V::Lit(_) | V::Str(_)) && with_str(prog, m, |s| s == "_mouse_");
            let (tx, ty) = if is_mouse {
                (st.io.mouse_x, st.io.mouse_y)
            } else {
                let name = to_rc_string(prog, m);
                match st.sprite_by_name(prog, &name).and_then(|o| st.target(o)) {
                    Some(o) => (o.x, o.y),
                    None => return V::num(10000.0),
                }
            };
            let dx = mx - tx;
            let dy = my - ty;
            V::num(((dx * dx) + (dy * dy)).sqrt())
        }
        Rep::Timer => V::num(st.timer_value()),
        Rep::Of { prop, name } => st.attribute_of(prog, st.arg(base, 0).clone(), prop, name),
        Rep::MouseX => V::num(st.io.mouse_x),
        Rep::MouseY => V::num(st.io.mouse_y),
        Rep::MouseDown => V::bool(st.io.mouse_down),
        Rep::KeyPressed => V::bool(st.key_is_down(prog, st.arg(base, 0))),
        Rep::Current(m) => V::num(match prog.lit_str(m) {
            "year" => 2021.0,
            "month" => 3.0,
            "date" => 14.0,
            "dayofweek" => 1.0,
            "hour" => 15.0,
            "minute" => 9.0,
            "second" => 26.0,
            _ => 0.0,
        }),
        Rep::DaysSince2000 => V::num(DAYS_SINCE_2000),
        Rep::Loudness => V::num(st.io.loudness),
        Rep::Loud => V::bool(st.io.loudness > 10.0),
        Rep::Answer => V::Str(st.ask.answer.clone()),
        Rep::Username => V::Str(JsStr::from(&*st.io.username)),
        _ => V::Undef,
    }
}

/// `Cast.toRgbColorList`.
pub(crate) fn color_arg(prog: &Program, v: &V) -> [u8; 3] {
    let hex = match v {
        V::Lit(_) | V::Str(_) => {
            with_str(prog, v, |s| if s.starts_with('#') { Some(crate::util::color::hex_to_rgb(s)) } else { None })
        }
        _ => None,
    };
    if let Some(c) = hex {
        return c.unwrap_or([0, 0, 0]);
    }
    let d = to_int32(to_number(prog, v));
    [((d >> 16) & 0xff) as u8, ((d >> 8) & 0xff) as u8, (d & 0xff) as u8]
}

impl State {
    /// What a `touching` menu value names: the mouse pointer, the edge, a sprite or nothing.
    /// A literal's answer never changes (sprite names are fixed), so it is kept per literal.
    pub(crate) fn touch_what(&mut self, prog: &Program, what: &V) -> Touch {
        if let V::Lit(l) = what
            && let Some(Some(t)) = self.touch_cache.get(l.id() as usize)
        {
            return *t;
        }
        let is_str = matches!(what, V::Lit(_) | V::Str(_));
        let t = with_str(prog, what, |name| match name {
            "_mouse_" if is_str => Touch::Mouse,
            "_edge_" if is_str => Touch::Edge,
            _ => match self.sprite_by_name(prog, name).and_then(|id| self.target(id)) {
                Some(o) => Touch::Sprite(o.def as usize),
                None => Touch::Nothing,
            },
        });
        if let V::Lit(l) = what {
            let l = l.id() as usize;
            if l >= self.touch_cache.len() {
                self.touch_cache.resize(l + 1, None);
            }
            self.touch_cache[l] = Some(t);
        }
        t
    }

    /// `RenderedTarget.isTouchingObject`: mouse pointer, edge or a sprite (with its clones).
    pub(crate) fn touching_object(&mut self, prog: &Program, me: TargetId, what: &V) -> bool {
        let touch = self.touch_what(prog, what);
        let scene = crate::geometry::render_scene!(prog, self);
        match touch {
            Touch::Mouse => self.geometry.touching_point(&scene, me, self.io.mouse_x, self.io.mouse_y),
            Touch::Edge => self.geometry.touching_edge(&scene, me),
            Touch::Sprite(def) => self.geometry.touching_sprite(&scene, me, def),
            Touch::Nothing => false,
        }
    }

    /// Branch distance of `touching (what)` when it is false: the geometry's distance,
    /// else between centres (the nearest instance of a sprite, the mouse pointer) or,
    /// for the edge, from the centre to the nearest stage edge.
    pub(crate) fn touching_distance(&mut self, prog: &Program, me: TargetId, what: &V) -> f64 {
        let Some(t) = self.target(me) else { return 1.0 };
        let (x, y) = (t.x, t.y);
        let touch = self.touch_what(prog, what);
        let scene = crate::geometry::render_scene!(prog, self);
        match touch {
            Touch::Mouse => {
                let (mx, my) = (self.io.mouse_x, self.io.mouse_y);
                self.geometry.point_distance(&scene, me, mx, my).unwrap_or(((x - mx).powi(2) + (y - my).powi(2)).sqrt())
            }
            Touch::Edge => {
                let centre = (240.0 + x).min(180.0 + y).min(240.0 - x).min(180.0 - y).max(0.0);
                self.geometry.edge_distance(&scene, me).unwrap_or(centre)
            }
            Touch::Nothing => 10000.0,
            Touch::Sprite(def) => {
                if let Some(d) = self.geometry.sprite_distance(&scene, me, def) {
                    return d;
                }
                scene
                    .instances_of(def)
                    .filter(|&id| id != me)
                    .filter_map(|id| scene.target(id))
                    .map(|o| ((x - o.x).powi(2) + (y - o.y).powi(2)).sqrt())
                    .fold(10000.0, f64::min)
            }
        }
    }

    /// `Keyboard.getKeyIsDown`.
    pub(crate) fn key_is_down(&self, prog: &Program, arg: &V) -> bool {
        let is_str = matches!(arg, V::Lit(_) | V::Str(_));
        if is_str && with_str(prog, arg, |s| s == "any") {
            return !self.io.keys.is_empty();
        }
        let key = key_arg(prog, arg);
        self.io.keys.iter().any(|k| **k == *key)
    }

    /// `sensing_of`.
    pub(crate) fn attribute_of(&mut self, prog: &Program, object: V, prop: OfProp, name: u32) -> V {
        let is_str = matches!(object, V::Lit(_) | V::Str(_));
        let oname = to_rc_string(prog, &object);
        let target =
            if is_str && &*oname == "_stage_" { Some(self.stage()) } else { self.sprite_by_name(prog, &oname) };
        let Some(tid) = target else { return V::num(0.0) };
        let Some(x) = self.target(tid) else { return V::num(0.0) };
        if x.is_stage {
            match prop {
                OfProp::BackdropNum => return V::num((x.costume + 1) as f64),
                OfProp::BackdropName => return crate::blocks::looks::costume_name(prog, x.def, x.costume),
                OfProp::Volume => return V::num(x.volume),
                _ => {}
            }
        } else {
            match prop {
                OfProp::X => return V::num(x.x),
                OfProp::Y => return V::num(x.y),
                OfProp::Direction => return V::num(x.direction),
                OfProp::CostumeNum => return V::num((x.costume + 1) as f64),
                OfProp::CostumeName => return crate::blocks::looks::costume_name(prog, x.def, x.costume),
                OfProp::Size => return V::num(x.size),
                OfProp::Volume => return V::num(x.volume),
                _ => {}
            }
        }
        // A variable of that target by name (own variables only).
        let vname = prog.lit_str(name);
        let def = prog.def(x.def);
        if let Some(s) = def.vars.iter().position(|v| !v.is_list && &*v.name == vname) {
            return x.vars.get(s).cloned().unwrap_or(V::Undef);
        }
        if let Some(&(_, _, s)) = x.dyn_vars.iter().find(|(d, l, _)| !*l && &*prog.dyn_vars[*d as usize].name == vname)
        {
            return x.vars.get(s as usize).cloned().unwrap_or(V::Undef);
        }
        V::num(0.0)
    }
}

/// `Keyboard._keyArgToScratchKey`.
fn key_arg(prog: &Program, arg: &V) -> Rc<str> {
    if let V::Num(n) = arg {
        let n = n.get();
        if (48.0..=90.0).contains(&n) {
            // String.fromCharCode truncates
            return Rc::from(((n.trunc() as u8) as char).to_string());
        }
        match n as i64 {
            _ if n.fract() != 0.0 => {}
            32 => return Rc::from("space"),
            37 => return Rc::from("left arrow"),
            38 => return Rc::from("up arrow"),
            39 => return Rc::from("right arrow"),
            40 => return Rc::from("down arrow"),
            _ => {}
        }
    }
    let s = to_rc_string(prog, arg);
    if matches!(&*s, "space" | "left arrow" | "up arrow" | "right arrow" | "down arrow" | "enter") {
        return s;
    }
    let first: String = if utf16_len(&s) > 1 { crate::value::char_at_utf16(&s, 0) } else { s.to_string() };
    if first == " " {
        return Rc::from("space");
    }
    Rc::from(js_to_upper(&first))
}

/// A pending `ask`.
#[derive(Debug, Clone)]
pub(crate) struct Question {
    pub text: Rc<str>,
    pub thread: ThRef,
    pub target: TargetId,
    pub was_visible: bool,
    pub was_stage: bool,
}

impl State {
    /// The ANSWER event: set `answer`, release the oldest question, ask the next.
    pub(crate) fn on_answer(&mut self, prog: &Program, text: Rc<str>) {
        self.ask.answer = JsStr::from(&*text);
        if let Some(q) = self.ask.questions.pop_front() {
            if q.was_visible && !q.was_stage {
                self.emit_say(prog, q.target, false, V::lit(prog.lit_empty));
            }
            self.microtasks.push((q.thread, Resume::Advance));
            self.ask_next(prog);
        }
    }

    pub(crate) fn ask_next(&mut self, prog: &Program) {
        if let Some(q) = self.ask.questions.front()
            && q.was_visible
            && !q.was_stage
        {
            let (t, text) = (q.target, q.text.clone());
            self.emit_say(prog, t, false, V::Str(JsStr::from(&*text)));
        }
    }
}

/// `ask and wait`: the questions waiting to be answered, and the last answer.
#[derive(Debug, Clone)]
pub(crate) struct Ask {
    /// The `answer` reporter.
    pub answer: JsStr,
    /// Pending questions, oldest (the one shown) first.
    pub questions: VecDeque<Question>,
}
