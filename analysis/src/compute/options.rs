//! What to compute and how: the options of an analysis, and the rule for incomplete
//! repetitions (`--incomplete`).

use crate::curves::Grid;
use crate::stats::{PMethod, Thresholds};

/// What to compute and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Significance level (p < alpha is significant).
    pub alpha: f64,
    /// Comparisons "A vs B" to make; empty = every pair, alphabetical (A < B).
    pub compare: Vec<(String, String)>,
    /// How p-values are computed.
    pub p_method: PMethod,
    /// Holm-adjust the p-values of each comparison across its projects.
    pub holm: bool,
    /// Magnitude thresholds for Â12.
    pub thresholds: Thresholds,
    /// Grid for coverage over time.
    pub grid: Grid,
    /// Which projects enter a comparison when some runs failed or are missing.
    pub incomplete: Incomplete,
}

/// Rule for projects whose repetitions are incomplete (failed or missing runs), `--incomplete`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Incomplete {
    /// A project enters "A vs B" only when every expected seed of A and of B has a result.
    #[default]
    Exclude,
    /// Test the runs that exist (unequal sample sizes); projects with fewer than
    /// [`MIN_RUNS_COMPARED`] results on a side are excluded.
    Compare,
}

/// Fewest results per side for a project to be compared under [`Incomplete::Compare`]: a single
/// run says nothing about an algorithm's spread over seeds.
pub const MIN_RUNS_COMPARED: usize = 2;

impl Incomplete {
    /// Option value (`exclude`, `compare`).
    pub fn name(self) -> &'static str {
        match self {
            Incomplete::Exclude => "exclude",
            Incomplete::Compare => "compare",
        }
    }

    /// The rule in words, as stated in reports.
    pub fn describe(self) -> String {
        match self {
            Incomplete::Exclude => "`--incomplete exclude`: a project enters a comparison only if both \
                configurations have a result for every seed that configuration has in the dataset; other \
                projects are excluded and counted (Excluded)"
                .into(),
            Incomplete::Compare => format!(
                "`--incomplete compare`: a project enters a comparison with whatever results exist for A and \
                 for B (unequal sample sizes, as scipy and R allow; n A and n B per project in `pairs.csv`); \
                 projects with fewer than {MIN_RUNS_COMPARED} results on a side are excluded and counted \
                 (Excluded)"
            ),
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            alpha: 0.05,
            compare: Vec::new(),
            p_method: PMethod::Asymptotic,
            holm: false,
            thresholds: Thresholds::VarghaDelaney,
            grid: Grid::default(),
            incomplete: Incomplete::Exclude,
        }
    }
}
