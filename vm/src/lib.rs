//! clowder's deterministic Scratch 3 VM.
//!
//! One [`Vm`] runs one loaded [`Project`] step by step: one tick per step, a
//! virtual clock, seeded randomness, no I/O beyond reading the project and no
//! global state, so the same inputs always give the same states (DESIGN §3).

#![warn(missing_docs)]

mod blocks;
pub mod geometry;
pub mod project;
pub mod rng;
pub mod runtime;
pub mod value;

pub use project::{LoadError, LoadLimits, Project};
pub use runtime::{Profile, StepOutcome, TargetId, Vm, VmOptions};
pub use value::Value;

/// Engine version: part of every run's identity, so results from a changed
/// VM are never mixed with old ones. Bump on any semantic change.
pub const ENGINE_VERSION: &str = concat!("clowder-vm/", env!("CARGO_PKG_VERSION"), "+sem1");
