//! Statistics and reports from a study's exported results (`runs`, `timeline`, `mutants`;
//! CSV or Parquet, see `docs/exports.md`).
//!
//! Reads files only; knows nothing about runs in flight. [`load`] reads a results folder with
//! polars, [`analyze`] computes the tables and curves, [`report::write`] writes the report
//! folder (Markdown, CSV, LaTeX, PNG/SVG). Conventions are those of DESIGN §6 and are stated
//! in every report. [`selection`] builds the tables of `clowder select-study`, [`neatest`]
//! those of the Neatest paper (`clowder neatest-tables`).
//!
//! Dependencies point one way: [`report`] (presentation) reads [`compute`] (computation), which
//! never imports it; both build on [`load`](mod@load), [`stats`], [`estimate`] and [`curves`],
//! and the report also on [`table`] and [`plots`]. [`sequence`] only re-exports the sequence
//! parts of both at their old path.

#![warn(missing_docs)]

pub mod compute;
pub mod curves;
mod error;
pub mod estimate;
pub mod load;
pub mod neatest;
pub mod plots;
pub mod report;
pub mod selection;
pub mod sequence;
pub mod stats;
pub mod synth;
pub mod table;
pub mod tests_report;

pub use compute::{Analysis, Incomplete, Options, analyze};
pub use curves::{Grid, GridUnit};
pub use error::AnalysisError;
pub use load::{Results, load};
pub use report::WriteOptions;
pub use stats::{PMethod, Thresholds};
