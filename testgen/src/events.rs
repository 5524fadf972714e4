//! Events a test can send, and which ones a project can react to.

use std::collections::BTreeSet;

use clowder_vm::project::{Input, Project};
use serde::{Deserialize, Serialize};

/// One input event of a test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// Click the green flag.
    GreenFlag,
    /// Press `key` for `steps` steps.
    KeyPress {
        /// Scratch key name.
        key: String,
        /// How long the key stays down.
        steps: u64,
    },
    /// Click the sprite named `sprite` (the original).
    ClickSprite {
        /// Sprite name.
        sprite: String,
    },
    /// Click the stage.
    ClickStage,
    /// Do nothing for `steps` steps.
    Wait {
        /// Steps to wait.
        steps: u64,
    },
}

/// The kinds of events the project's scripts can react to (static extraction).
#[derive(Debug, Clone, Default)]
pub struct EventSpace {
    /// Keys named in key hats or `key pressed?` blocks (sorted).
    pub keys: Vec<String>,
    /// Sprites with a "when this sprite clicked" script (sorted).
    pub clickable_sprites: Vec<String>,
    /// Whether the stage has a "when stage clicked" script.
    pub stage_clickable: bool,
}

impl EventSpace {
    /// Extracts the event space from the project's blocks.
    pub fn extract(project: &Project) -> Self {
        let mut keys = BTreeSet::new();
        let mut sprites = BTreeSet::new();
        let mut stage_clickable = false;
        for target in &project.targets {
            for &top in &target.scripts {
                match project.block(top).opcode.as_str() {
                    "event_whenthisspriteclicked" if !target.is_stage => {
                        sprites.insert(target.name.clone());
                    }
                    "event_whenstageclicked" if target.is_stage => stage_clickable = true,
                    _ => {}
                }
            }
        }
        for b in &project.blocks {
            match b.opcode.as_str() {
                "event_whenkeypressed" => {
                    if let Some(f) = b.field("KEY_OPTION") {
                        keys.insert(f.value.clone());
                    }
                }
                "sensing_keypressed" => {
                    if let Some(Input::Block(menu)) = b.input("KEY_OPTION")
                        && let Some(f) = project.block(*menu).field("KEY_OPTION")
                    {
                        keys.insert(f.value.clone());
                    }
                }
                _ => {}
            }
        }
        // "any" is not a key one can press; a concrete key triggers it.
        if keys.remove("any") && keys.is_empty() {
            keys.insert("space".into());
        }
        Self { keys: keys.into_iter().collect(), clickable_sprites: sprites.into_iter().collect(), stage_clickable }
    }

    /// Number of event kinds other than waiting.
    pub fn len(&self) -> usize {
        self.keys.len() + self.clickable_sprites.len() + usize::from(self.stage_clickable)
    }

    /// True when the project reacts to no input besides the green flag.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
