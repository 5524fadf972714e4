//! The cells of a Table-6 row, shared by the coverage and the sequence tables and the Â12
//! plots.

use crate::compute::Comparison;
use crate::stats::Thresholds;
use crate::table::Cell;

/// "A vs B".
pub(crate) fn comparison_label(c: &Comparison) -> String {
    format!("{} vs {}", c.a, c.b)
}

/// The columns of [`comparison_cells`] (header, CSV name), in the same order.
pub(crate) const COMPARISON_COLUMNS: [(&str, &str); 12] = [
    ("Comparison", "comparison"),
    ("", "a"),
    ("", "b"),
    ("Â12", "mean_a12"),
    ("Magnitude", "magnitude"),
    ("Sig better", "sig_better"),
    ("Better", "better"),
    ("Equal", "equal"),
    ("Worse", "worse"),
    ("Sig worse", "sig_worse"),
    ("Projects", "projects_compared"),
    ("Excluded", "projects_excluded"),
];

/// A Table-6 row after its dataset (and criterion) cells: label, A, B, mean Â12, magnitude,
/// counts, projects compared and excluded.
pub(crate) fn comparison_cells(c: &Comparison, th: Thresholds) -> Vec<Cell> {
    vec![
        Cell::text(comparison_label(c)),
        Cell::text(&c.a),
        Cell::text(&c.b),
        Cell::opt(c.mean_a12, 2),
        Cell::text(c.mean_a12.map(|a| th.magnitude_of(a).label()).unwrap_or("–")),
        Cell::int(c.sig_better as u64),
        Cell::int(c.better as u64),
        Cell::int(c.equal as u64),
        Cell::int(c.worse as u64),
        Cell::int(c.sig_worse as u64),
        Cell::int(c.projects.len() as u64),
        Cell::int(c.excluded.len() as u64),
    ]
}
