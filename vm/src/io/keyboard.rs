//! The keyboard (scratch-vm `io/keyboard.js`): key names as the oracle and DOM events give
//! them, mapped to Scratch's; a key going down starts its hats.

use std::rc::Rc;

use crate::engine::State;
use crate::program::{HatKind, Program};
use crate::util::string::{js_to_lower, js_to_upper, utf16_len};

impl State {
    /// A key goes down: "when KEY pressed" and "when any key pressed" start, Makey Makey
    /// sees it, and it counts as held.
    pub(crate) fn key_pressed(&mut self, prog: &Program, k: &str) {
        let key = scratch_key(&dom_key(k));
        if key.is_empty() {
            return;
        }
        let up = js_to_upper(&key);
        self.start_hats(prog, HatKind::Key, Some(&up), None);
        self.start_hats(prog, HatKind::Key, Some("ANY"), None);
        if prog.makey_loaded {
            self.makey_key_pressed(&key);
        }
        if !self.io.keys.iter().any(|x| **x == *key) {
            self.io.keys.push(Rc::from(key.as_str()));
        }
    }

    /// A key goes up.
    pub(crate) fn key_released(&mut self, k: &str) {
        let key = scratch_key(&dom_key(k));
        if key.is_empty() {
            return;
        }
        if let Some(i) = self.io.keys.iter().position(|x| **x == *key) {
            self.io.keys.remove(i);
        }
    }
}

/// The oracle's key-name mapping to DOM `KeyboardEvent.key` values.
fn dom_key(key: &str) -> String {
    match js_to_lower(key).as_str() {
        "space" => " ".into(),
        "left arrow" => "ArrowLeft".into(),
        "right arrow" => "ArrowRight".into(),
        "up arrow" => "ArrowUp".into(),
        "down arrow" => "ArrowDown".into(),
        "enter" => "Enter".into(),
        _ => key.to_string(),
    }
}

/// scratch-vm `Keyboard._keyStringToScratchKey`: "" for ignored keys.
fn scratch_key(k: &str) -> String {
    match k {
        " " => "space".into(),
        "ArrowLeft" | "Left" => "left arrow".into(),
        "ArrowUp" | "Up" => "up arrow".into(),
        "ArrowRight" | "Right" => "right arrow".into(),
        "ArrowDown" | "Down" => "down arrow".into(),
        "Enter" => "enter".into(),
        _ if utf16_len(k) > 1 => String::new(),
        _ => js_to_upper(k),
    }
}

/// Scratch key names: letters upper-cased, DOM names mapped (kept for callers of the old API).
pub fn normalize_key(key: &str) -> String {
    let k = scratch_key(&dom_key(key));
    if k.is_empty() { key.to_string() } else { k }
}
