//! The extensions scratch-vm 5.0.300 loads (its `extensions/scratch3_*`), next to the core
//! blocks of [`crate::blocks`]: pen (state here, drawing through the geometry), music,
//! Makey Makey, and text to speech, translate and video sensing as the oracle runs them
//! (no network, no camera).

pub(crate) mod makeymakey;
pub(crate) mod music;
pub(crate) mod offline;
pub(crate) mod pen;
