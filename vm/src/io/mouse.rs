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

    /// A click on a live target: its "when this sprite clicked" / "when stage clicked" hats.
    pub(crate) fn clicked(&mut self, prog: &Program, id: TargetId) {
        if self.target(id).is_none() {
            return;
        }
        self.start_hats(prog, HatKind::SpriteClicked, None, Some(id));
        self.start_hats(prog, HatKind::StageClicked, None, Some(id));
    }
}
