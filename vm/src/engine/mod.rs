//! The engine (scratch-vm's `src/engine/`): the runtime state, the sequencer that steps
//! threads, block execution, targets, clones and the virtual clock.
//!
//! | scratch-vm | here |
//! |---|---|
//! | `Runtime` (state, `greenFlag`, `stopAll`, `startHats`, `stopForTarget`) | [`runtime`] |
//! | `Sequencer` (`stepThreads`, `stepThread`), `Runtime._step` | [`sequencer`] |
//! | `Thread` (stack frames, status), `runtime.threads` | [`thread`] |
//! | `execute` (inputs, then the block) | [`execute`]; promise reporters in [`resume`] |
//! | `RenderedTarget` (live sprite state, layers) | [`target`]; clones in [`clone`] |
//! | `util/cast.js` on the interpreter's values | [`value`] |
//! | timers (`setTimeout`, the frame clock) | [`timers`] |
//! | test generation's branch distances (no counterpart) | [`branch`] |
//! | warp spins that change nothing, skipped exactly (no counterpart) | [`fixpoint`] |
//! | `BlocksExecuteCache` for reporters held in two slots | [`shared`] |

pub(crate) mod branch;
pub(crate) mod clone;
pub(crate) mod execute;
pub(crate) mod fixpoint;
#[cfg(feature = "op-profile")]
pub(crate) mod profile;
pub(crate) mod restore;
pub(crate) mod resume;
pub(crate) mod runtime;
pub(crate) mod sequencer;
pub(crate) mod shared;
pub(crate) mod target;
pub(crate) mod thread;
pub(crate) mod timers;
pub(crate) mod value;

pub use clone::MAX_CLONES;
pub(crate) use runtime::{State, StepError};
pub(crate) use target::Bubble;
pub use target::{Target, TargetId};
pub use thread::MAX_STACK_DEPTH;
pub(crate) use thread::{Ctx, Frame, GlideCtx, Replay, Resume, Status, ThRef, Thread};
pub use timers::STEP_MS;
pub(crate) use timers::TimerKind;
pub(crate) use value::V;

pub(crate) use crate::io::PendingInput;
pub(crate) use crate::vm::SayEvent;
