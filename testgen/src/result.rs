//! What a run produces: coverage, timeline, suite, digest.

use serde::{Deserialize, Serialize};

use crate::events::Event;

/// A coverage change point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// VM steps used by the run so far.
    pub steps: u64,
    /// Test executions so far.
    pub executions: u64,
    /// Targets covered.
    pub covered: u32,
}

/// One generated test: the green flag then `events`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Test {
    /// Events after the initial green flag.
    pub events: Vec<Event>,
}

/// The outcome of one generation run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunOutcome {
    /// Covered / total targets (1.0 for a project without targets).
    pub coverage: f64,
    /// Targets covered.
    pub covered: u32,
    /// Targets in the project.
    pub total_targets: u32,
    /// VM steps used.
    pub steps: u64,
    /// Test executions.
    pub executions: u64,
    /// Coverage change points (starting at 0 covered).
    pub timeline: Vec<TimelinePoint>,
    /// The final test suite.
    pub suite: Vec<Test>,
    /// Steps until full coverage, if reached.
    pub steps_to_full_coverage: Option<u64>,
    /// `none`, `approximate` or `exact`.
    pub geometry: String,
    /// Opcodes the VM did not implement, with counts.
    pub unknown_opcodes: Vec<(String, u64)>,
    /// blake3 over timeline and suite: equal digests mean equal runs.
    pub digest: String,
}

/// The digest of a run: hash of its timeline and its suite (canonical JSON).
pub fn digest(timeline: &[TimelinePoint], suite: &[Test]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(b"clowder-digest-v1\0");
    h.update(serde_json::to_string(timeline).unwrap_or_default().as_bytes());
    h.update(b"\0");
    h.update(serde_json::to_string(suite).unwrap_or_default().as_bytes());
    h.finalize().to_hex().to_string()
}
