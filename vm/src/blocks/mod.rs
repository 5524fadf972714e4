//! The core blocks, one module per category as scratch-vm's `blocks/scratch3_*.js`. The
//! engine ([`crate::engine::execute`]) evaluates a block's inputs and dispatches here; the
//! extensions' blocks are in [`crate::extensions`].

pub(crate) mod control;
pub(crate) mod data;
pub(crate) mod events;
pub(crate) mod looks;
pub(crate) mod motion;
pub(crate) mod operators;
pub(crate) mod procedures;
pub(crate) mod sensing;
pub(crate) mod sound;
