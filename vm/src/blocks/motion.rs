//! Motion blocks (scratch-vm `blocks/scratch3_motion.js`, `RenderedTarget.setXY/setDirection`).

use crate::engine::value::{to_number, with_str};
use crate::engine::{Ctx, GlideCtx, State, TargetId, ThRef, V};
use crate::program::{Cmd, Program, Rep};
use crate::value::{js_max, js_round, wrap_clamp};

pub(crate) fn run(st: &mut State, prog: &Program, t: ThRef, cmd: &Cmd, base: usize) {
    let me = st.th(t).target;
    let Some(x) = st.target(me) else { return };
    let (tx, ty, dir) = (x.x, x.y, x.direction);
    match *cmd {
        Cmd::MoveSteps => {
            let steps = st.num_arg(prog, base, 0);
            let maths = st.maths;
            let (cos, sin) = match st.target_cache_mut(me) {
                Some(x) => x.move_trig.get(dir, maths),
                None => return,
            };
            let dx = steps * cos;
            let dy = steps * sin;
            st.set_xy(prog, me, tx + dx, ty + dy);
        }
        Cmd::GotoXY => {
            let x = st.num_arg(prog, base, 0);
            let y = st.num_arg(prog, base, 1);
            st.set_xy(prog, me, x, y);
        }
        Cmd::Goto => {
            let to = st.arg(base, 0).clone();
            if let Some((x, y)) = st.target_xy(prog, &to) {
                st.set_xy(prog, me, x, y);
            }
        }
        Cmd::TurnRight => {
            let d = st.num_arg(prog, base, 0);
            st.set_direction(me, dir + d);
        }
        Cmd::TurnLeft => {
            let d = st.num_arg(prog, base, 0);
            st.set_direction(me, dir - d);
        }
        Cmd::PointInDirection => {
            let d = st.num_arg(prog, base, 0);
            st.set_direction(me, d);
        }
        Cmd::PointTowards => {
            let to = st.arg(base, 0).clone();
            let (px, py) = match kind_of(prog, &to) {
                Special::Mouse => (st.io.mouse_x, st.io.mouse_y),
                Special::Random => {
                    let r = st.random();
                    st.set_direction(me, js_round(r * 360.0) - 180.0);
                    return;
                }
                Special::None => {
                    let name = crate::engine::value::to_rc_string(prog, &to);
                    let Some(o) = st.sprite_by_name(prog, &name) else { return };
                    let Some(o) = st.target(o) else { return };
                    (o.x, o.y)
                }
            };
            let dx = px - tx;
            let dy = py - ty;
            let d = 90.0 - rad_to_deg(st.maths.atan2(dy, dx));
            st.set_direction(me, d);
        }
        Cmd::Glide => {
            let secs = st.arg(base, 0).clone();
            let ex = st.arg(base, 1).clone();
            let ey = st.arg(base, 2).clone();
            glide(st, prog, t, me, &secs, &ex, &ey);
        }
        Cmd::GlideTo => {
            let secs = st.arg(base, 0).clone();
            let to = st.arg(base, 1).clone();
            if let Some((x, y)) = st.target_xy(prog, &to) {
                glide(st, prog, t, me, &secs, &V::num(x), &V::num(y));
            }
        }
        Cmd::Bounce => st.if_on_edge_bounce(prog, me),
        Cmd::SetRotationStyle(s) => {
            // (A live target only when something changes: the geometry re-checks what is logged.)
            let stale = st.target(me).is_some_and(|t| t.stale.is_some());
            if let Some(x) = if s.is_some() || stale { st.target_mut(me) } else { None } {
                if let Some(s) = s {
                    x.rotation_style = s;
                }
                // `setRotationStyle` hands direction and scale to the renderer, known style or not.
                x.pose_rendered();
            }
            st.visual_change(me, true);
        }
        Cmd::ChangeX => {
            let d = st.num_arg(prog, base, 0);
            st.set_xy(prog, me, tx + d, ty);
        }
        Cmd::SetX => {
            let v = st.num_arg(prog, base, 0);
            st.set_xy(prog, me, v, ty);
        }
        Cmd::ChangeY => {
            let d = st.num_arg(prog, base, 0);
            st.set_xy(prog, me, tx, ty + d);
        }
        Cmd::SetY => {
            let v = st.num_arg(prog, base, 0);
            st.set_xy(prog, me, tx, v);
        }
        _ => {}
    }
}

/// `glide`; under Whisker's fork the clock is the step count and the duration is in steps.
fn glide(st: &mut State, prog: &Program, t: ThRef, me: TargetId, secs: &V, ex: &V, ey: &V) {
    let whisker = st.whisker();
    // Time and the duration's unit: ms and s (`1000 *` below), or steps and steps.
    let (now, unit) = if whisker { (st.clock.steps as f64, 1.0) } else { (st.clock.now, 1000.0) };
    // Read, not cloned: cloning the frame's context allocated a box on every tick of a glide.
    let running = match st.th(t).stack.last().map(|f| &f.ctx) {
        Some(Ctx::Glide(g)) => Some(**g),
        _ => None,
    };
    if let Some(g) = running {
        let elapsed = now - g.start;
        if elapsed < g.duration * unit {
            let frac = elapsed / (g.duration * unit);
            let dx = frac * (g.ex - g.sx);
            let dy = frac * (g.ey - g.sy);
            st.set_xy(prog, me, g.sx + dx, g.sy + dy);
            st.yield_thread(t);
        } else {
            st.set_xy(prog, me, g.ex, g.ey);
        }
        return;
    }
    let Some(x) = st.target(me) else { return };
    let (sx, sy) = (x.x, x.y);
    // Whisker's fork keeps the last glide a sprite started (`glidingStackFrame`), for drags.
    let serial = if whisker {
        st.glides += 1;
        st.glides
    } else {
        0
    };
    if let Some(x) = st.target_mut(me) {
        x.glide = serial;
    }
    let g = GlideCtx {
        start: now,
        duration: if whisker {
            crate::whisker::instrumented_steps(to_number(prog, secs))
        } else {
            to_number(prog, secs)
        },
        sx,
        sy,
        ex: to_number(prog, ex),
        ey: to_number(prog, ey),
        serial,
    };
    let (dur, gx, gy) = (g.duration, g.ex, g.ey);
    if let Some(f) = st.thm(t).stack.last_mut() {
        f.ctx = Ctx::Glide(Box::new(g));
    }
    if dur <= 0.0 {
        st.set_xy(prog, me, gx, gy);
        return;
    }
    st.yield_thread(t);
}

pub(crate) fn eval(st: &mut State, t: ThRef, rep: &Rep) -> V {
    let me = st.th(t).target;
    let Some(x) = st.target(me) else { return V::Undef };
    match rep {
        Rep::XPos => V::num(limit_precision(x.x)),
        Rep::YPos => V::num(limit_precision(x.y)),
        Rep::Direction => V::num(x.direction),
        _ => V::Undef,
    }
}

/// scratch-vm `limitPrecision` (Scratch 2's snapToInteger).
fn limit_precision(c: f64) -> f64 {
    let r = js_round(c);
    if (c - r).abs() < 1e-9 { r } else { c }
}

/// `MathUtil.degToRad`.
pub(crate) fn deg_to_rad(d: f64) -> f64 {
    d * std::f64::consts::PI / 180.0
}

/// `MathUtil.radToDeg`.
pub(crate) fn rad_to_deg(r: f64) -> f64 {
    r * 180.0 / std::f64::consts::PI
}

enum Special {
    Mouse,
    Random,
    None,
}

fn kind_of(prog: &Program, v: &V) -> Special {
    match v {
        V::Lit(_) | V::Str(_) => with_str(prog, v, |s| match s {
            "_mouse_" => Special::Mouse,
            "_random_" => Special::Random,
            _ => Special::None,
        }),
        _ => Special::None,
    }
}

impl State {
    /// `getFencedPositionOfDrawable`: where the renderer lets `id` be put at (x, y).
    pub(crate) fn fenced(&mut self, prog: &Program, id: TargetId, x: f64, y: f64) -> (f64, f64) {
        if self.geometry.fences() {
            let scene = crate::geometry::render_scene!(prog, self);
            self.geometry.fenced_position(&scene, id, x, y)
        } else {
            (x, y)
        }
    }

    /// `RenderedTarget.setXY`: no fencing without renderer; pen lines follow the move.
    pub(crate) fn set_xy(&mut self, prog: &Program, id: TargetId, x: f64, y: f64) {
        let Some(t) = self.target(id) else { return };
        if t.is_stage {
            return;
        }
        let (ox, oy) = (t.x, t.y);
        let (nx, ny) = self.fenced(prog, id, x, y);
        if let Some(t) = self.target_mut(id) {
            t.x = nx;
            t.y = ny;
        }
        self.log_move(id, ox, oy);
        self.pen_moved(prog, id, ox, oy);
    }

    /// A drag in the player: `setXY(x, y, force)` (fenced, no pen line).
    pub(crate) fn drag_to(&mut self, prog: &Program, id: TargetId, x: f64, y: f64) {
        let Some(t) = self.target(id) else { return };
        if t.is_stage {
            return;
        }
        let (ox, oy) = (t.x, t.y);
        let (nx, ny) = if self.geometry.fences() {
            let scene = crate::geometry::render_scene!(prog, self);
            self.geometry.fenced_position(&scene, id, x, y)
        } else {
            (x, y)
        };
        if let Some(t) = self.target_mut(id) {
            t.x = nx;
            t.y = ny;
        }
        if self.whisker() {
            self.drag_glide(id, x, y);
        }
        self.log_move(id, ox, oy);
    }

    /// Whisker's fork: a drag by the test driver (`setXY(x, y, true, true)`) sets the start of
    /// the sprite's last glide to the requested (unfenced) position, so a glide still running
    /// goes on from where the sprite was dragged. The fork's `glidingStackFrame` is the glide's
    /// execution context, which scratch-vm drops once the block ends or its thread stops: a
    /// glide that is no longer on a listed thread's stack is not touched.
    fn drag_glide(&mut self, id: TargetId, x: f64, y: f64) {
        let Some(serial) = self.target(id).map(|t| t.glide).filter(|&s| s != 0) else { return };
        for i in 0..self.threads_of(id).len() {
            let Some(&th) = self.threads_of(id).get(i) else { break };
            if !self.in_list(th) {
                continue;
            }
            for f in &mut self.thm(th).stack {
                if let Ctx::Glide(g) = &mut f.ctx
                    && g.serial == serial
                {
                    g.sx = x;
                    g.sy = y;
                }
            }
        }
    }

    /// `EVENT_TARGET_MOVED` for a test driver (only when moves are recorded).
    fn log_move(&mut self, target: TargetId, old_x: f64, old_y: f64) {
        if self.observe.move_log.is_none() {
            return;
        }
        let Some(t) = self.target(target) else { return };
        let (x, y, visible) = (t.x, t.y, t.visible);
        let scene = if self.observe.move_scenes { self.poses() } else { Vec::new() };
        let seq = self.observe.event_seq;
        self.observe.event_seq += 1;
        if let Some(log) = &mut self.observe.move_log {
            log.push(crate::external::MoveEvent { target, old_x, old_y, x, y, visible, scene, seq });
        }
    }

    /// `RenderedTarget.setDirection`.
    pub(crate) fn set_direction(&mut self, id: TargetId, d: f64) {
        if let Some(t) = self.target_mut(id)
            && !t.is_stage
            && d.is_finite()
        {
            t.direction = wrap_clamp(d, -179.0, 180.0);
            t.pose_rendered();
        } else {
            return;
        }
        self.visual_change(id, true);
    }

    /// `getTargetXY`: mouse, a random position (two draws), or a sprite's position.
    pub(crate) fn target_xy(&mut self, prog: &Program, to: &V) -> Option<(f64, f64)> {
        match kind_of(prog, to) {
            Special::Mouse => Some((self.io.mouse_x, self.io.mouse_y)),
            Special::Random => {
                let x = js_round(480.0 * (self.random() - 0.5));
                let y = js_round(360.0 * (self.random() - 0.5));
                Some((x, y))
            }
            Special::None => {
                let name = crate::engine::value::to_rc_string(prog, to);
                let o = self.sprite_by_name(prog, &name)?;
                let o = self.target(o)?;
                Some((o.x, o.y))
            }
        }
    }

    /// `motion_ifonedgebounce` (needs the renderer's bounds; nothing without geometry).
    pub(crate) fn if_on_edge_bounce(&mut self, prog: &Program, me: TargetId) {
        let bounds = {
            let scene = crate::geometry::render_scene!(prog, self);
            self.geometry.bounds(&scene, me)
        };
        let Some(b) = bounds else { return };
        let dist_left = js_max(0.0, 240.0 + b.left);
        let dist_top = js_max(0.0, 180.0 - b.top);
        let dist_right = js_max(0.0, 240.0 - b.right);
        let dist_bottom = js_max(0.0, 180.0 + b.bottom);
        let mut nearest = 0u8;
        let mut min = f64::INFINITY;
        for (i, d) in [dist_left, dist_top, dist_right, dist_bottom].into_iter().enumerate() {
            if d < min {
                min = d;
                nearest = i as u8 + 1;
            }
        }
        if min > 0.0 {
            return;
        }
        let Some(t) = self.target(me) else { return };
        let radians = deg_to_rad(90.0 - t.direction);
        let mut dx = self.maths.cos(radians);
        let mut dy = -self.maths.sin(radians);
        match nearest {
            1 => dx = js_max(0.2, dx.abs()),
            2 => dy = js_max(0.2, dy.abs()),
            3 => dx = 0.0 - js_max(0.2, dx.abs()),
            4 => dy = 0.0 - js_max(0.2, dy.abs()),
            _ => {}
        }
        let nd = rad_to_deg(self.maths.atan2(dy, dx)) + 90.0;
        self.set_direction(me, nd);
        // keepInFence with the bounds taken after the turn
        let bounds = {
            let scene = crate::geometry::render_scene!(prog, self);
            self.geometry.bounds(&scene, me)
        };
        let Some(b) = bounds else { return };
        let Some(t) = self.target(me) else { return };
        let (x, y) = (t.x, t.y);
        let mut ddx = 0.0;
        let mut ddy = 0.0;
        if b.left < -240.0 {
            ddx += -240.0 - b.left;
        }
        if b.right > 240.0 {
            ddx += 240.0 - b.right;
        }
        if b.top > 180.0 {
            ddy += 180.0 - b.top;
        }
        if b.bottom < -180.0 {
            ddy += -180.0 - b.bottom;
        }
        self.set_xy(prog, me, x + ddx, y + ddy);
    }
}
