//! Errors of this crate's network and JSON code.

use thiserror::Error;

/// Why a network or suite could not be built or loaded.
#[derive(Debug, Error, PartialEq)]
pub enum NeuroError {
    /// The text is not JSON.
    #[error("invalid JSON: {0}")]
    Json(String),
    /// A value has the wrong shape; `at` says where (e.g. `Networks/Network 0/Nodes/Node 3/id`).
    #[error("{at}: {message}")]
    Format {
        /// Path of the offending value.
        at: String,
        /// What is wrong.
        message: String,
    },
    /// Two nodes of one network share an id.
    #[error("network {network}: duplicate node id {id}")]
    DuplicateNode {
        /// Network id.
        network: u64,
        /// The repeated node id.
        id: u32,
    },
    /// A connection names a node the network does not have.
    #[error("network {network}: connection {source_id} -> {target} names a missing node")]
    MissingNode {
        /// Network id.
        network: u64,
        /// Source id of the connection.
        source_id: u32,
        /// Target id of the connection.
        target: u32,
    },
    /// More nodes, connections or networks than [`crate::json::MAX_ITEMS`].
    #[error("{what}: {count} exceeds the limit of {limit}")]
    TooLarge {
        /// What was counted.
        what: &'static str,
        /// How many there were.
        count: usize,
        /// The limit.
        limit: usize,
    },
}

impl NeuroError {
    pub(crate) fn format(at: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Format { at: at.into(), message: message.into() }
    }
}
