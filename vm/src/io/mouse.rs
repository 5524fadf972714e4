//! The mouse (scratch-vm `io/mouse.js`): its position in stage coordinates, and clicks on
//! targets.

use crate::engine::{State, TargetId};
use crate::program::{HatKind, Program};
use crate::util::math::{clamp, js_round};

impl State {
    /// `Mouse.postData` with a position: client coordinates of a 480×360 stage, rounded and
    /// clamped as scratch-vm does.
    pub(crate) fn mouse_moved(&mut self, x: f64, y: f64) {
        let cx = x + 240.0;
        let cy = 180.0 - y;
        // scratch-vm ignores a falsy coordinate (0 or NaN after the offset).
        if cx != 0.0 && !cx.is_nan() {
            self.io.mouse_x = js_round(clamp(480.0 * ((cx / 480.0) - 0.5), -240.0, 240.0));
        }
        if cy != 0.0 && !cy.is_nan() {
            self.io.mouse_y = js_round(clamp(-360.0 * ((cy / 360.0) - 0.5), -180.0, 180.0));
        }
    }

    /// `Mouse.postData` with a position and a button state (a test driver's click at a stage
    /// point): the mouse moves there; if the button state changes inside the stage, the
    /// target drawn at the point (else the stage) gets its click hats, on the way down, or on
    /// the way up if it is draggable.
    pub(crate) fn mouse_post(&mut self, prog: &Program, x: f64, y: f64, down: bool) {
        self.mouse_moved(x, y);
        let before = self.io.mouse_down;
        self.io.mouse_down = down;
        let (cx, cy) = (x + 240.0, 180.0 - y);
        if before == down || !(cx > 0.0 && cx < 480.0 && cy > 0.0 && cy < 360.0) {
            return;
        }
        let scene = crate::geometry::render_scene!(prog, self);
        let target = self.geometry.pick(&scene, x, y).unwrap_or_else(|| self.stage());
        // Draggable sprites are clicked on mouse up, the others on mouse down.
        let draggable = self.target(target).is_some_and(|t| t.draggable && !t.is_stage);
        if draggable != down {
            self.start_hats(prog, HatKind::SpriteClicked, None, Some(target));
            self.start_hats(prog, HatKind::StageClicked, None, Some(target));
        }
    }

    /// A click on a live target: its "when this sprite clicked" / "when stage clicked" hats.
    pub(crate) fn clicked(&mut self, prog: &Program, id: TargetId) {
        if self.target(id).is_none() {
            return;
        }
        self.start_hats(prog, HatKind::SpriteClicked, None, Some(id));
        self.start_hats(prog, HatKind::StageClicked, None, Some(id));
    }
}
