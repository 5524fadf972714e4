//! The geometry seam: everything that needs costume pixels goes through
//! [`Geometry`], so the headless profile (no renderer) and the pixel-accurate
//! geometry layer are interchangeable.

// The CPU renderer (helper `geometry`, issue 7): costume decoding, silhouettes,
// transforms and scratch-render's queries, independent of the trait below.
pub mod distance;
pub mod drawable;
pub mod effects;
pub mod hull;
pub mod math;
pub mod motion;
pub mod pen;
pub mod query;
pub mod render;
pub mod silhouette;
pub mod skin;
pub mod svg;

/// Answers the renderer's questions for the interpreter.
pub trait Geometry {
    /// Short label for results: `none`, `approximate` or `exact`.
    fn mode(&self) -> &'static str;
}

/// No renderer: touching is always false, nothing is fenced (the `headless` profile).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoGeometry;

impl Geometry for NoGeometry {
    fn mode(&self) -> &'static str {
        "none"
    }
}
