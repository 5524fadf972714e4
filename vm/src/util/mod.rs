//! The one home of JavaScript's numerics, strings and colours, as scratch-vm and
//! scratch-render compute them (scratch-vm's `util/cast.js`, `math-util.js`, `color.js`, and
//! the parts of V8's `Math` and typed arrays they rest on). The interpreter and the geometry
//! both use these functions, so a rule such as `Math.round(-0.4) = -0` is written once.

pub mod cast;
pub mod color;
pub mod jsmath;
pub mod math;
pub mod mathlib;
pub mod object;
pub mod string;
