//! The crate's error type (its own file so that every module can use it without importing
//! the crate root, which imports every module).

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
