//! The extensions scratch-vm 5.0.300 loads (its `extensions/scratch3_*`), next to the core
//! blocks of [`crate::blocks`]: pen (state here, drawing through the geometry), music,
//! Makey Makey, and text to speech, translate and video sensing as the oracle runs them
//! (no network, no camera).

pub(crate) mod makeymakey;
pub(crate) mod music;
pub(crate) mod offline;
pub(crate) mod pen;

use std::collections::VecDeque;
use std::rc::Rc;

/// The extensions' global state.
#[derive(Debug, Clone)]
pub(crate) struct Extensions {
    /// Music tempo (beats per minute).
    pub tempo: f64,
    /// Video sensing state: 0 off, 1 on, 2 on flipped.
    pub video_state: u32,
    /// Video transparency, 0–100.
    pub video_transparency: f64,
    /// Text to speech language, once set.
    pub tts_language: Option<Rc<str>>,
    /// Makey Makey: key sequences in use (upper-cased string, keys, completed).
    pub makey_sequences: Vec<(String, Vec<String>, bool)>,
    /// Makey Makey: recently pressed keys (first word, upper-cased).
    pub makey_buffer: VecDeque<String>,
}
