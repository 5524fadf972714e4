//! The events a network can choose, as Whisker's `NeuroevolutionScratchEventExtractor`
//! offers them and its events identify themselves (`stringIdentifier`): the names of a saved
//! network's output nodes.
//!
//! The available events come from the search's dynamic extraction ([`EventInfo::extract_with`]),
//! mapped to Whisker's neuroevolution events: drags are not offered (Whisker's neuroevolution
//! extractor has none; clowder's `drag_events` parameter offers them), a mouse button becomes
//! `MouseDownForStepsEvent` (only while the button is up), clone clicks are `ClickClone-<n>`
//! for the first three clickable clones of a sprite, and the wait comes last. Parameters are
//! the regression outputs (`Steps`, `Duration`, `X`, `Y`, `Number`), scaled as Whisker's
//! `setParameter(…, "activation")`.

use clowder_vm::project::Project;

use crate::events::{Cand, EventInfo};
use crate::sut::Sut;

/// Clones per sprite whose clicks are offered (Whisker's neuroevolution `CLONE_THRESHOLD`).
const CLICK_CLONES: u32 = 3;

/// An event a network can choose.
#[derive(Debug, Clone, PartialEq)]
pub struct NeuroEvent {
    /// Whisker's `stringIdentifier()`, e.g. `KeyPressEvent-space`.
    pub id: String,
    /// What it does.
    pub action: Action,
}

/// What an event does; parameters come from the network's regression outputs.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Press a key for `Steps` × the press duration bound (at least one step).
    Key(String),
    /// Click a sprite's original.
    ClickSprite(String),
    /// Click where a clone stands.
    ClickClone(f64, f64),
    /// Click the stage.
    ClickStage,
    /// Answer with a text.
    TypeText(String),
    /// Answer with round(`Number`).
    TypeNumber,
    /// Press the mouse button for `Steps` × the click duration (rounded, at least one step).
    MouseDownForSteps,
    /// Move the mouse to (`X` × 240, `Y` × 180).
    MouseMove,
    /// Move the mouse onto a sprite.
    MouseMoveTo(f64, f64),
    /// A sound of this volume.
    Sound(f64),
    /// Drag a sprite's original to a point (clowder's extension, `drag_events`: Whisker's
    /// neuroevolution offers no drags).
    DragSprite(String, f64, f64),
    /// Wait `Duration` × the wait bound steps.
    Wait,
}

impl NeuroEvent {
    /// Names of its parameters (its regression nodes), in Whisker's order.
    pub fn params(&self) -> &'static [&'static str] {
        match self.action {
            Action::Key(_) | Action::MouseDownForSteps => &["Steps"],
            Action::Wait => &["Duration"],
            Action::MouseMove => &["X", "Y"],
            Action::TypeNumber => &["Number"],
            _ => &[],
        }
    }

    /// The wait event.
    pub fn wait() -> Self {
        NeuroEvent { id: "WaitEvent".into(), action: Action::Wait }
    }
}

/// The events available in `sut`'s state (`dynamic`; else every event the program handles, as
/// Whisker's `extractStaticEvents`), in Whisker's order (the wait last), distinct by id.
/// With `drags`, also the drags of sprites' originals that the static algorithms' extraction
/// offers, as `DragSpriteEvent-<sprite>-<n>` (the sprite's n-th drag in this state).
/// `cands` is scratch space. Returns the extraction's work measure.
pub fn extract(
    info: &EventInfo,
    project: &Project,
    sut: &mut Sut,
    dynamic: bool,
    drags: bool,
    cands: &mut Vec<Cand>,
    out: &mut Vec<NeuroEvent>,
) -> u64 {
    let work = info.extract_with(project, sut, dynamic, drags, cands);
    out.clear();
    let mut clones: Vec<(usize, u32)> = Vec::new();
    let mut dragged: Vec<(usize, u32)> = Vec::new();
    let name = |def: usize| project.targets.get(def).map(|t| t.name.clone()).unwrap_or_default();
    let mut has_wait = false;
    for c in cands.iter() {
        let ev = match c {
            Cand::Wait => {
                has_wait = true;
                continue;
            }
            Cand::KeyPress(k) => NeuroEvent { id: format!("KeyPressEvent-{k}"), action: Action::Key(k.clone()) },
            Cand::ClickSprite { def, clone: 0, .. } => {
                NeuroEvent { id: format!("ClickSpriteEvent-{}", name(*def)), action: Action::ClickSprite(name(*def)) }
            }
            Cand::ClickSprite { def, x, y, .. } => {
                let n = next_of(&mut clones, *def);
                if n > CLICK_CLONES {
                    continue;
                }
                NeuroEvent { id: format!("ClickClone-{n}"), action: Action::ClickClone(*x, *y) }
            }
            Cand::ClickStage => NeuroEvent { id: "ClickStageEvent".into(), action: Action::ClickStage },
            Cand::TypeText(t) => NeuroEvent { id: format!("TypeTextEvent-{t}"), action: Action::TypeText(t.clone()) },
            Cand::TypeNumber => NeuroEvent { id: "TypeNumberEvent".into(), action: Action::TypeNumber },
            Cand::MouseDown(_) => {
                if sut.mouse().2 {
                    continue;
                }
                NeuroEvent { id: "MouseDownForStepsEvent".into(), action: Action::MouseDownForSteps }
            }
            Cand::MouseMove => NeuroEvent { id: "MouseMoveEvent".into(), action: Action::MouseMove },
            Cand::MouseMoveTo(x, y) => {
                let sprite = sut
                    .targets()
                    .into_iter()
                    .find(|t| !t.is_stage && t.x == *x && t.y == *y)
                    .map(|t| name(t.def))
                    .unwrap_or_default();
                NeuroEvent { id: format!("MouseMoveToEvent-{sprite}"), action: Action::MouseMoveTo(*x, *y) }
            }
            Cand::Sound(v) => NeuroEvent {
                id: format!("SoundEvent-{}", clowder_vm::util::cast::number_to_js_string(*v)),
                action: Action::Sound(*v),
            },
            // Whisker's neuroevolution extractor offers no drags; clowder's only when asked.
            Cand::DragSprite { def, clone: 0, x, y, .. } if drags => {
                let n = next_of(&mut dragged, *def);
                NeuroEvent {
                    id: format!("DragSpriteEvent-{}-{n}", name(*def)),
                    action: Action::DragSprite(name(*def), *x, *y),
                }
            }
            Cand::DragSprite { .. } => continue,
        };
        if !out.iter().any(|e| e.id == ev.id) {
            out.push(ev);
        }
    }
    if has_wait {
        out.push(NeuroEvent::wait());
    }
    work
}

/// Counts one more event of sprite `def` in `counts` and returns its number (from 1).
fn next_of(counts: &mut Vec<(usize, u32)>, def: usize) -> u32 {
    match counts.iter_mut().find(|(d, _)| *d == def) {
        Some((_, n)) => {
            *n += 1;
            *n
        }
        None => {
            counts.push((def, 1));
            1
        }
    }
}
