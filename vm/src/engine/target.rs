//! Targets (scratch-vm's `RenderedTarget`): the live sprites, clones and the stage, and
//! their layer order (`runtime.executableTargets`).

use std::rc::Rc;

use super::{State, V};
use crate::extensions::pen::PenState;

/// Identifies a live target (sprite, clone or stage). Stale ids (deleted clones) are never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TargetId {
    pub(crate) slot: u32,
    pub(crate) gn: u32,
}

/// Say/think bubble state (scratch-vm's `Scratch.looks` custom state).
#[derive(Debug, Clone)]
pub(crate) struct Bubble {
    pub think: bool,
    /// Formatted bubble text; empty = no bubble.
    pub text: Rc<str>,
    pub usage: u64,
}

/// A live sprite, clone or the stage (read-only outside the VM).
#[derive(Debug, Clone)]
pub struct Target {
    /// Index of its sprite in `Project::targets`.
    pub def: u32,
    /// Whether this is the stage.
    pub is_stage: bool,
    /// Whether this is the original (not a clone).
    pub is_original: bool,
    /// 0 for the original; the n-th clone of a sprite gets n.
    pub clone_index: u32,
    /// Position x.
    pub x: f64,
    /// Position y.
    pub y: f64,
    /// Direction in degrees.
    pub direction: f64,
    /// Size in percent.
    pub size: f64,
    /// Visibility.
    pub visible: bool,
    /// Current costume index.
    pub costume: i64,
    pub(crate) rotation_style: u8,
    pub(crate) draggable: bool,
    pub(crate) volume: f64,
    pub(crate) effects: [f64; 7],
    pub(crate) bubble: Option<Bubble>,
    /// Variables and lists, parallel to the definition's declarations.
    pub(crate) vars: Vec<V>,
    pub(crate) lists: Vec<Vec<V>>,
    /// Variables created at run time (id, name, is_list, slot in vars/lists).
    pub(crate) dyn_vars: Vec<(u32, bool, u32)>,
    /// Edge-activated hat values by hat block.
    pub(crate) edge: Vec<(u32, bool)>,
    pub(crate) sound_effects: [f64; 2],
    pub(crate) pen: PenState,
    pub(crate) instrument: f64,
    pub(crate) voice: u8,
}

/// Entries of [`State::render_log`] kept before it is emptied (then the geometry re-checks
/// every target once).
const RENDER_LOG_CAP: usize = 4096;

impl State {
    #[inline]
    pub(crate) fn target(&self, id: TargetId) -> Option<&Target> {
        match self.targets.get(id.slot as usize) {
            Some((g, Some(t))) if *g == id.gn => Some(t),
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn target_mut(&mut self, id: TargetId) -> Option<&mut Target> {
        // Every change to a live target goes through here: log it for the geometry.
        if self.render_log.len() >= RENDER_LOG_CAP {
            self.render_log_base += self.render_log.len() as u64;
            self.render_log.clear();
        }
        self.render_log.push(id.slot);
        match self.targets.get_mut(id.slot as usize) {
            Some((g, Some(t))) if *g == id.gn => Some(t),
            _ => None,
        }
    }

    /// `runtime.getTargetForStage()` (the first stage in load order; never deleted).
    #[inline]
    pub(crate) fn stage(&self) -> TargetId {
        TargetId { slot: self.stage_slot, gn: 0 }
    }

    /// `runtime.moveExecutable`.
    pub(crate) fn move_executable(&mut self, id: TargetId, delta: f64) {
        let Some(old) = self.exec.iter().position(|&x| x == id) else { return };
        self.layer_epoch += 1;
        self.exec.remove(old);
        let len = self.exec.len();
        let mut ni = old as f64 + delta;
        if ni > len as f64 {
            ni = len as f64;
        }
        if ni <= 0.0 {
            let stage_first = self.exec.first().is_some_and(|&x| self.target(x).is_some_and(|t| t.is_stage));
            ni = if len > 0 && stage_first { 1.0 } else { 0.0 };
        }
        let idx = crate::value::splice_index(ni, len);
        self.exec.insert(idx, id);
    }

    /// `runtime.setExecutablePosition`.
    pub(crate) fn set_executable_position(&mut self, id: TargetId, new_index: f64) {
        let Some(old) = self.exec.iter().position(|&x| x == id) else { return };
        self.move_executable(id, new_index - old as f64);
    }
}
