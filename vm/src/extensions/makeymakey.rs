//! Makey Makey (scratch-vm `extensions/scratch3_makeymakey`): key sequences completed in
//! order, and the frame toggle its edge-activated hats read.

use super::super::engine::{State, TimerKind};

impl State {
    /// Makey Makey `keyPressed`: buffer the key and complete matching sequences.
    pub(crate) fn makey_key_pressed(&mut self, key: &str) {
        let first = key.split(' ').next().unwrap_or("");
        self.ext.makey_buffer.push_back(crate::value::js_to_upper(first));
        if self.ext.makey_buffer.len() > 100 {
            self.ext.makey_buffer.pop_front();
        }
        let mut done = Vec::new();
        for (i, (_, arr, _)) in self.ext.makey_sequences.iter().enumerate() {
            if self.ext.makey_buffer.len() < arr.len() {
                continue;
            }
            let start = self.ext.makey_buffer.len() - arr.len();
            if arr.iter().zip(self.ext.makey_buffer.iter().skip(start)).all(|(a, b)| a == b) {
                done.push(i);
            }
        }
        for i in done {
            if let Some(s) = self.ext.makey_sequences.get_mut(i) {
                s.2 = true;
            }
            self.add_timer(100.0, TimerKind::MakeySequence { index: i });
        }
    }

    /// Makey Makey's frame toggle (an interval flipping it at the start of every step from step 1).
    pub(crate) fn makey_frame_toggle(&self) -> bool {
        self.clock.steps % 2 == 1
    }
}
