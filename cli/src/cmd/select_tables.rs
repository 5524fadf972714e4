//! The tables and plots of `clowder select-study` (the paper's Tables III and IV, the paired
//! comparison with unranked selection, the residual risk over GA generations). They are built
//! by [`clowder_analysis::selection`]; this module only hands it the study's results.

use std::path::Path;

use clowder_analysis::selection::{self as report, Detection};
use clowder_analysis::table::Table;
use clowder_testgen::selection::{Cell, StudyOptions};

use super::select_study::ProjectOut;

pub use clowder_analysis::selection::RARE;

/// Per mutant: the share of pool tests that kill it (`None` when it could not be judged).
pub fn kill_rates(o: &ProjectOut) -> Vec<Option<f64>> {
    report::kill_rates(&mutants(o), o.tests)
}

/// The detection probabilities of cell `c` of project `o`.
pub fn detection(o: &ProjectOut, c: &Cell, repetitions: u32) -> Detection {
    report::detection(&kill_rates(o), &c.caught, repetitions)
}

/// Pooled and project-mean aggregates per (ranking, method, n) over all projects.
pub fn summary(outs: &[ProjectOut], opts: &StudyOptions) -> Table {
    report::summary(&projects(outs), &options(opts))
}

/// `tables.md`: the report (deterministic).
pub fn tables_md(outs: &[ProjectOut], opts: &StudyOptions, settings: &str, summary: &Table) -> String {
    report::tables_md(&projects(outs), &options(opts), settings, summary)
}

/// `times.md`: mean milliseconds to select one suite (not deterministic).
pub fn times_md(outs: &[ProjectOut], opts: &StudyOptions) -> String {
    report::times_md(&projects(outs), &options(opts))
}

/// `risk_mean` and `risk_variance` plots of the GA's best suite's residual risk.
pub fn risk_plots(outs: &[ProjectOut], opts: &StudyOptions, out: &Path) -> anyhow::Result<()> {
    Ok(report::risk_plots(&projects(outs), &options(opts), out)?)
}

fn options(o: &StudyOptions) -> report::StudyOptions {
    report::StudyOptions {
        sizes: o.sizes.clone(),
        repetitions: o.repetitions,
        best_of: o.best_of,
        rankings: o.rankings.clone(),
    }
}

fn mutants(o: &ProjectOut) -> Vec<report::Mutant> {
    o.mutants.iter().map(|m| report::Mutant { judged: m.2, killers: m.3 }).collect()
}

fn projects(outs: &[ProjectOut]) -> Vec<report::Project> {
    outs.iter()
        .map(|o| report::Project {
            name: o.name.clone(),
            tests: o.tests,
            alphabet: o.symbols.len(),
            targets: o.targets.0,
            mutants: mutants(o),
            universe: o.study.universe.clone(),
            cells: o.study.cells.clone(),
            cell_seconds: o.study.seconds.clone(),
            risk: o
                .study
                .risk
                .iter()
                .map(|p| report::RiskPoint { ranking: p.ranking, n: p.n, risk: p.risk, variance: p.variance })
                .collect(),
            seconds: o.seconds,
        })
        .collect()
}
