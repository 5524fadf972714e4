//! What the report writes besides the tables (its own file: both the folder writer and
//! `report.md` read it).

/// What to write besides the tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOptions {
    /// Title of the report (e.g. the experiment name).
    pub title: String,
    /// Draw plots (PNG + SVG).
    pub plots: bool,
    /// Write per-run wide timelines (Whisker per-second columns, Pynguin `CoverageTimeline_T*`).
    pub per_run_timelines: bool,
}
