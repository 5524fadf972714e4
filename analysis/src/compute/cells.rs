//! The runs of a results table grouped by (dataset, project, algorithm), and the per
//! (project, algorithm) cell every measure of a dataset is computed from.

use std::ops::Range;

use crate::load::Results;

/// Runs of one (dataset, project, algorithm) as a range into `Results::runs`.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub(crate) dataset: u32,
    pub(crate) project: u32,
    pub(crate) algorithm: u32,
    pub(crate) range: Range<usize>,
}

/// The runs of `res` grouped by (dataset, project, algorithm), in the runs' (sorted) order.
pub(crate) fn groups(res: &Results) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for (i, r) in res.runs.iter().enumerate() {
        match out.last_mut() {
            Some(g) if (g.dataset, g.project, g.algorithm) == (r.dataset, r.project, r.algorithm) => {
                g.range.end = i + 1
            }
            _ => out.push(Group { dataset: r.dataset, project: r.project, algorithm: r.algorithm, range: i..i + 1 }),
        }
    }
    out
}

/// Per (project, algorithm) state within a dataset.
#[derive(Debug, Clone)]
pub(crate) struct Cell {
    /// The runs of the cell in `Results::runs`.
    pub(crate) range: Range<usize>,
    /// Coverage (or the compared measure) of the runs with a result (`ok` or `limit`), in
    /// seed order.
    pub(crate) values: Vec<f64>,
    /// Every expected seed has a result.
    pub(crate) complete: bool,
}
