//! Inputs (scratch-vm's `io/`): what a player, the oracle's input file or the test generator
//! does to a running project. The [`crate::Vm`] methods queue them; they are applied in call
//! order at the start of the next step, after due timers fired (fidelity README §7).

pub mod keyboard;
pub(crate) mod mouse;

use std::rc::Rc;

use crate::engine::{State, TargetId};
use crate::program::{HatKind, Program};
use crate::util::string::{js_to_lower, js_to_upper};

/// An input applied at the start of the next step (fidelity README §7).
#[derive(Debug, Clone)]
pub(crate) enum PendingInput {
    GreenFlag,
    Stop,
    KeyDown(String),
    KeyUp(String),
    MouseMove(f64, f64),
    MouseButton(bool),
    MousePost(f64, f64, bool),
    Click(TargetId),
    ClickSprite(String, u32),
    Drag(TargetId, f64, f64),
    Answer(String),
    Loudness(f64),
    Broadcast(String),
}

impl State {
    /// Applies one queued input.
    pub(crate) fn apply_input(&mut self, prog: &Program, inp: PendingInput) {
        match inp {
            PendingInput::GreenFlag => self.green_flag(prog),
            PendingInput::Stop => self.stop_all(prog),
            PendingInput::KeyDown(k) => self.key_pressed(prog, &k),
            PendingInput::KeyUp(k) => self.key_released(&k),
            PendingInput::MouseMove(x, y) => self.mouse_moved(x, y),
            PendingInput::MouseButton(d) => self.io.mouse_down = d,
            PendingInput::MousePost(x, y, down) => self.mouse_post(prog, x, y, down),
            PendingInput::Click(id) => self.clicked(prog, id),
            PendingInput::ClickSprite(name, clone) => {
                let found = self.targets.exec.iter().copied().find(|&id| {
                    self.target(id).is_some_and(|t| {
                        !t.is_stage && t.clone_index == clone && prog.lit_str(prog.def(t.def).name) == name
                    })
                });
                if let Some(id) = found {
                    self.clicked(prog, id);
                }
            }
            PendingInput::Answer(text) => self.on_answer(prog, Rc::from(text.as_str())),
            PendingInput::Drag(id, x, y) => self.drag_to(prog, id, x, y),
            PendingInput::Loudness(v) => self.io.loudness = v,
            PendingInput::Broadcast(name) => {
                let stage = self.stage();
                let d = self.target(stage).map_or(prog.stage, |t| t.def);
                let lower = js_to_lower(&name);
                let found =
                    prog.def(d).broadcasts.iter().find(|(_, n)| js_to_lower(n) == lower).map(|(_, n)| n.to_string());
                let up = js_to_upper(found.as_deref().unwrap_or(&name));
                self.start_hats(prog, HatKind::Broadcast, Some(&up), None);
            }
        }
    }
}

/// Queued inputs and the state of the devices they drive.
#[derive(Debug, Clone)]
pub(crate) struct Io {
    /// Inputs queued since the last step, applied in order at the start of the next.
    pub pending: Vec<PendingInput>,
    /// Keys held down (Scratch key names).
    pub keys: Vec<Rc<str>>,
    /// Mouse x in stage coordinates.
    pub mouse_x: f64,
    /// Mouse y in stage coordinates.
    pub mouse_y: f64,
    /// Mouse button held.
    pub mouse_down: bool,
    /// The virtual loudness (−1 = no microphone).
    pub loudness: f64,
    /// The `username` reporter (fixed: "").
    pub username: Rc<str>,
}
