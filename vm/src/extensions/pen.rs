//! Pen extension (scratch-vm `extensions/scratch3_pen`). The pen state lives in the
//! VM; drawing goes through the geometry (a no-op without renderer), so colour
//! sensing in the profiles with geometry can see the pen layer.

use crate::engine::value::{to_number, with_str};
use crate::engine::{State, TargetId, ThRef, V};
use crate::program::{Cmd, Program};
use crate::util::color::{hsv_to_rgb, rgb_to_hsv};
use crate::value::{clamp, wrap_clamp};

/// Pen state of a target (scratch3_pen's custom state).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PenState {
    pub down: bool,
    /// scratch3_pen's `_onTargetMoved` listener is on the target: `pen down` attaches it when
    /// the pen was up, `pen up` removes it, a clone gets it when its original's pen is down.
    /// Only Whisker's `wrapTarget` separates it from `down` ([`State::whisker_wrap`]): it
    /// removes every listener of the target and leaves the pen down, drawing nothing.
    pub listening: bool,
    pub color: f64,
    pub saturation: f64,
    pub brightness: f64,
    pub transparency: f64,
    pub shade: f64,
    pub size: f64,
    /// RGBA in 0..1 (`penAttributes.color4f`).
    pub rgba: [f64; 4],
}

impl Default for PenState {
    fn default() -> Self {
        PenState {
            down: false,
            listening: false,
            color: 66.66,
            saturation: 100.0,
            brightness: 100.0,
            transparency: 0.0,
            shade: 50.0,
            size: 1.0,
            rgba: [0.0, 0.0, 1.0, 1.0],
        }
    }
}

pub(crate) fn run(st: &mut State, prog: &Program, t: ThRef, cmd: &Cmd, base: usize) {
    let me = st.th(t).target;
    match *cmd {
        Cmd::PenClear => {
            st.pen_ops += 1;
            st.geometry.pen_clear();
        }
        Cmd::PenStamp => {
            let scene = crate::geometry::render_scene!(prog, st);
            st.pen_ops += 1;
            st.geometry.pen_stamp(&scene, me);
        }
        Cmd::PenDown => {
            let Some(x) = st.target_mut(me) else { return };
            if !x.pen.down {
                x.pen.down = true;
                x.pen.listening = true;
            }
            let (pen, px, py) = (x.pen, x.x, x.y);
            st.pen_ops += 1;
            st.geometry.pen_point(pen.rgba, pen.size, px, py);
        }
        Cmd::PenUp => {
            if let Some(x) = st.target_mut(me) {
                x.pen.down = false;
                x.pen.listening = false;
            }
        }
        Cmd::PenSetColor => {
            let c = st.arg(base, 0).clone();
            let (rgb, alpha) = color_object(prog, &c);
            if let Some(x) = st.target_mut(me) {
                let [h, s, v] = rgb_to_hsv(rgb);
                x.pen.color = (h / 360.0) * 100.0;
                x.pen.saturation = s * 100.0;
                x.pen.brightness = v * 100.0;
                x.pen.transparency = match alpha {
                    Some(a) => 100.0 * (1.0 - (a / 255.0)),
                    None => 0.0,
                };
                x.pen.shade = x.pen.brightness / 2.0;
                update_color(&mut x.pen);
            }
        }
        Cmd::PenParam { change } => {
            let param = st.arg(base, 0).clone();
            let v = st.num_arg(prog, base, 1);
            let p = with_str(prog, &param, |s| s.to_string());
            if let Some(x) = st.target_mut(me) {
                set_or_change(&mut x.pen, &p, v, change);
            }
        }
        Cmd::PenSize { change } => {
            let v = st.num_arg(prog, base, 0);
            if let Some(x) = st.target_mut(me) {
                let s = if change { x.pen.size + v } else { v };
                x.pen.size = clamp(s, 1.0, 1200.0);
            }
        }
        Cmd::PenHue { change } => {
            let v = st.num_arg(prog, base, 0) / 2.0;
            if let Some(x) = st.target_mut(me) {
                set_or_change(&mut x.pen, "color", v, change);
                if !change {
                    set_or_change(&mut x.pen, "transparency", 0.0, false);
                }
                legacy_update(&mut x.pen);
            }
        }
        Cmd::PenShade { change } => {
            let v = st.num_arg(prog, base, 0);
            if let Some(x) = st.target_mut(me) {
                let mut shade = if change { x.pen.shade + v } else { v };
                shade %= 200.0;
                if shade < 0.0 {
                    shade += 200.0;
                }
                x.pen.shade = shade;
                legacy_update(&mut x.pen);
            }
        }
        _ => {}
    }
}

fn set_or_change(p: &mut PenState, param: &str, v: f64, change: bool) {
    match param {
        "color" => p.color = wrap_clamp(v + if change { p.color } else { 0.0 }, 0.0, 100.0),
        "saturation" => p.saturation = clamp(v + if change { p.saturation } else { 0.0 }, 0.0, 100.0),
        "brightness" => p.brightness = clamp(v + if change { p.brightness } else { 0.0 }, 0.0, 100.0),
        "transparency" => p.transparency = clamp(v + if change { p.transparency } else { 0.0 }, 0.0, 100.0),
        _ => {}
    }
    update_color(p);
}

fn update_color(p: &mut PenState) {
    let [r, g, b] = hsv_to_rgb(p.color * 360.0 / 100.0, p.saturation / 100.0, p.brightness / 100.0);
    p.rgba = [r / 255.0, g / 255.0, b / 255.0, 1.0 - p.transparency / 100.0];
}

fn legacy_update(p: &mut PenState) {
    let [r, g, b] = hsv_to_rgb(p.color * 360.0 / 100.0, 1.0, 1.0);
    let shade = if p.shade > 100.0 { 200.0 - p.shade } else { p.shade };
    let mix = |a: [f64; 3], b: [f64; 3], f: f64| {
        if f <= 0.0 {
            a
        } else if f >= 1.0 {
            b
        } else {
            let f0 = 1.0 - f;
            [f0 * a[0] + f * b[0], f0 * a[1] + f * b[1], f0 * a[2] + f * b[2]]
        }
    };
    let rgb = if shade < 50.0 {
        mix([0.0; 3], [r, g, b], (10.0 + shade) / 60.0)
    } else {
        mix([r, g, b], [255.0; 3], (shade - 50.0) / 60.0)
    };
    let [h, s, v] = rgb_to_hsv(rgb);
    p.color = 100.0 * h / 360.0;
    p.saturation = 100.0 * s;
    p.brightness = 100.0 * v;
    update_color(p);
}

/// `Cast.toRgbColorObject`: (r, g, b) and the alpha when the value carries one.
fn color_object(prog: &Program, v: &V) -> ([f64; 3], Option<f64>) {
    let c = crate::blocks::sensing::color_arg(prog, v);
    let is_hex = matches!(v, V::Lit(_) | V::Str(_)) && with_str(prog, v, |s| s.starts_with('#'));
    let rgb = [f64::from(c[0]), f64::from(c[1]), f64::from(c[2])];
    if is_hex {
        return (rgb, None);
    }
    let d = crate::value::to_int32(to_number(prog, v));
    let a = (d >> 24) & 0xff;
    (rgb, Some(if a > 0 { f64::from(a) } else { 255.0 }))
}

impl State {
    /// The pen extension's `_onTargetMoved`: a line from the old position, heard while the
    /// listener is on the target (the pen is down, unless Whisker took the listener away).
    pub(crate) fn pen_moved(&mut self, _prog: &Program, id: TargetId, ox: f64, oy: f64) {
        let Some(x) = self.target(id) else { return };
        if x.pen.listening {
            let (pen, nx, ny) = (x.pen, x.x, x.y);
            self.pen_ops += 1;
            self.geometry.pen_line(pen.rgba, pen.size, ox, oy, nx, ny);
        }
    }
}

impl State {
    /// Whisker's `Sprites.wrapTarget` for target `id`, mirrored from the test driver's cache of
    /// wrappers ([`State::whisker_wrapped`]): a target whose (id, sprite) has no wrapper yet
    /// gets one, and `target.removeAllListeners()` takes the pen's listener away (the pen stays
    /// down and draws nothing until a `pen up` and `pen down`). Nothing while no driver keeps
    /// wrappers.
    pub(crate) fn whisker_wrap(&mut self, id: TargetId) {
        let Some(t) = self.target(id) else { return };
        let (uid, def) = (t.uid_draw, t.def);
        let Some(wrapped) = self.whisker_wrapped.as_mut() else { return };
        // The cached wrapper of a sprite of the same name is handed out again, even when it
        // wraps another target; else a new wrapper takes the id's place in Whisker's cache.
        if wrapped.get(&uid).is_some_and(|&(d, _)| d == def) {
            return;
        }
        wrapped.insert(uid, (def, id));
        // Not a change the geometry sees: not logged for it (`target_cache_mut`).
        if let Some(t) = self.target_cache_mut(id) {
            t.pen.listening = false;
        }
    }
}
