//! Statistics and reports from a study's exported results (`runs`, `timeline`, `mutants`;
//! CSV or Parquet, see `docs/exports.md`).
//!
//! Reads files only; knows nothing about runs in flight. [`load`] reads a results folder with
//! polars, [`analyze`] computes the tables and curves, [`report::write`] writes the report
//! folder (Markdown, CSV, LaTeX, PNG/SVG). Conventions are those of DESIGN §6 and are stated
//! in every report.

#![warn(missing_docs)]

pub mod compute;
pub mod curves;
pub mod estimate;
pub mod load;
pub mod plots;
pub mod report;
pub mod sequence;
pub mod stats;
pub mod synth;
pub mod table;
pub mod tests_report;

pub use compute::{Analysis, Incomplete, Options, analyze};
pub use curves::{Grid, GridUnit};
pub use load::{Results, load};
pub use report::WriteOptions;
pub use stats::{PMethod, Thresholds};

/// Errors while analysing results.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// The results cannot be read or have the wrong shape.
    #[error("{path}: {msg}")]
    Input {
        /// File concerned.
        path: String,
        /// What is wrong.
        msg: String,
    },
    /// Invalid options (unknown algorithm in `--compare`, bad alpha, …).
    #[error("{0}")]
    Options(String),
    /// The report cannot be written.
    #[error("{path}: {msg}")]
    Output {
        /// File concerned.
        path: String,
        /// What went wrong.
        msg: String,
    },
}
