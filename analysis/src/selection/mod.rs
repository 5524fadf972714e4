//! The report of `clowder select-study` (the suite-selection study, `docs/selection.md`): the
//! paper's Tables III and IV, the paired comparison with unranked selection, per-project
//! facts, selection times and the GA's residual risk over generations.
//!
//! The caller (the CLI, which runs the study with `clowder_testgen::selection`) hands over
//! each project's results as [`Project`]s; `study` holds those types and the detection
//! probabilities, `tables` the tables and Markdown, `risk` the plots.

mod risk;
mod study;
mod tables;

pub use risk::risk_plots;
pub use study::{
    Cell, Detection, Method, Mutant, Project, RARE, Ranking, RiskPoint, StudyOptions, detection, kill_rates,
};
pub use tables::{summary, tables_md, times_md};
