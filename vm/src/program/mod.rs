//! The compiled, per-project representation the interpreter runs.
//!
//! [`compile`] turns a loaded [`Project`] into a [`Program`] once; every VM of
//! that project shares it (it lives in the project behind a `OnceLock`). It
//! reproduces what scratch-vm does while loading (JS object key order,
//! unique sprite and costume names, layer sorting, unsafe characters in
//! variable ids) and resolves everything that can be resolved statically:
//! opcodes become enum variants, fields become immediates, variables become
//! slots, procedure calls find their definition, inputs become expression
//! trees evaluated in project.json input order (scratch-vm's `_ops` order).
//! Blocks keep the project's indices ([`BlockIdx`]), so coverage bits and
//! block ids mean the same in both.

mod compile;
mod lower;
mod model;
pub(crate) mod opcodes;
mod shared;

pub(crate) use compile::compile;
pub(crate) use model::*;
