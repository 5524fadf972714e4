//! The report's event-sequence coverage part: its three tables and its section of
//! `report.md` (the numbers are computed in `compute::sequence`).

use std::fmt::Write as _;

use super::comparison::{COMPARISON_COLUMNS, comparison_cells};
use crate::compute::Analysis;
use crate::load::SEQ_METRICS;
use crate::table::{self, Table};

/// Display names of [`SEQ_METRICS`], in the same order.
pub const SEQ_LABELS: [&str; 8] = [
    "K-H t=2",
    "K-H t=3",
    "Window t=2",
    "Window t=3",
    "K-H t=2 unmin",
    "K-H t=3 unmin",
    "Window t=2 unmin",
    "Window t=3 unmin",
];

/// The report's sequence tables: mean coverage per criterion, Table 6 per criterion, and
/// the correlations with the mutation score.
pub struct SequenceTables {
    /// Mean sequence coverage per dataset and algorithm.
    pub coverage: Table,
    /// Table 6 on each criterion.
    pub table6: Table,
    /// Criterion vs mutation score.
    pub correlation: Table,
}

/// Builds the sequence tables of an analysis (rows only for datasets with sequence values).
pub fn tables(an: &Analysis) -> SequenceTables {
    let mut columns =
        vec![("Dataset", "dataset"), ("Algorithm", "algorithm"), ("Projects", "projects"), ("Runs", "runs")];
    columns.extend(SEQ_LABELS.iter().zip(SEQ_METRICS).map(|(&l, m)| (l, m)));
    let mut coverage = Table::new(
        "sequence_coverage",
        "Event-sequence coverage per algorithm (%): Kuhn-Higdon t-way (ordered t-tuples of distinct events as a \
         subsequence) and window (length-t words contiguously) coverage of the final suite, then of the suite \
         before minimisation; mean over projects of each project's mean.",
        &columns,
    );
    let mut table6 = Table::new(
        "sequence_table6",
        "Pairwise comparison of each sequence-coverage criterion (Table 6 on the criterion instead of coverage).",
        &[[("Dataset", "dataset"), ("Criterion", "criterion")].as_slice(), &COMPARISON_COLUMNS].concat(),
    );
    let mut correlation = Table::new(
        "mutation_correlation",
        "Pearson correlation of each criterion of the final suite with the mutation score, over projects (per-project \
         means of the runs that have both).",
        &[
            ("Dataset", "dataset"),
            ("Algorithm", "algorithm"),
            ("Criterion", "criterion"),
            ("Projects", "projects"),
            ("r", "r"),
            ("p", "p"),
        ],
    );
    let label = |m: &str| {
        SEQ_METRICS
            .iter()
            .position(|x| *x == m)
            .map_or_else(|| "Statement coverage".to_string(), |k| SEQ_LABELS[k].into())
    };
    for d in &an.datasets {
        let Some(s) = &d.sequence else { continue };
        let ds = || table::Cell::text(&d.name);
        for r in &s.rows {
            let mut row = vec![
                ds(),
                table::Cell::text(&r.algorithm),
                table::Cell::int(r.projects as u64),
                table::Cell::int(r.runs as u64),
            ];
            row.extend(r.means.iter().map(|&m| table::Cell::opt_pct(m)));
            coverage.push(row);
        }
        for t in &s.table6 {
            for c in &t.comparisons {
                let mut row = vec![ds(), table::Cell::text(label(t.metric))];
                row.extend(comparison_cells(c, an.options.thresholds));
                table6.push(row);
            }
        }
        for c in &s.correlations {
            let mut row = vec![ds(), table::Cell::text(&c.algorithm), table::Cell::text(label(c.criterion))];
            row.extend(match &c.pearson {
                Some(p) => [table::Cell::int(p.n as u64), table::Cell::num(p.r, 3), table::Cell::p(p.p)],
                None => [table::Cell::na(), table::Cell::na(), table::Cell::na()],
            });
            correlation.push(row);
        }
    }
    SequenceTables { coverage, table6, correlation }
}

/// The "Event-sequence coverage" section of `report.md`.
pub(crate) fn markdown_section(s: &mut String, an: &Analysis, t: &SequenceTables) {
    let _ = writeln!(s, "## Event-sequence coverage\n");
    if t.coverage.rows.is_empty() {
        let _ = writeln!(s, "Not available (no `seq_*` values in `runs`: results made before sequence coverage).\n");
        return;
    }
    s.push_str(&t.coverage.markdown());
    let _ = writeln!(
        s,
        "\nΣ is each run's event alphabet (the events its search tried, with their parameters; docs/testgen.md): a \
         run's values are relative to its own Σ.\n"
    );
    if !t.table6.rows.is_empty() {
        let _ = writeln!(s, "### Pairwise comparison per criterion (Table 6)\n");
        s.push_str(&t.table6.markdown());
        let _ = writeln!(s, "\nSame conventions as Table 6 (`--incomplete {}`).\n", an.options.incomplete.name());
    }
    let _ = writeln!(s, "### Correlation with the mutation score\n");
    if t.correlation.rows.is_empty() {
        let _ = writeln!(s, "No mutation data.\n");
    } else {
        s.push_str(&t.correlation.markdown());
        s.push('\n');
    }
}
