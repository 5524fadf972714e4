//! Table 6: one comparison "A vs B" over a dataset's projects (Â12, Mann-Whitney U, the
//! `--incomplete` rule, Holm adjustment), for coverage or any other per-run measure.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use super::cells::Cell;
use super::options::{Incomplete, MIN_RUNS_COMPARED, Options};
use super::types::{Comparison, ExcludedProject, ProjectComparison};
use crate::error::AnalysisError;
use crate::stats;

/// Table 6 row "A vs B" over the projects' cells (any measure: coverage, or a sequence
/// criterion).
#[allow(clippy::too_many_arguments)]
pub(crate) fn compare(
    options: &Options,
    cells: &BTreeMap<(u32, u32), Cell>,
    projects: &BTreeSet<u32>,
    ia: u32,
    ib: u32,
    a: &str,
    b: &str,
    names: &[String],
) -> Result<Comparison, AnalysisError> {
    let mut rows = Vec::new();
    let mut excluded = Vec::new();
    let enters = |c: &&Cell| match options.incomplete {
        Incomplete::Exclude => c.complete,
        Incomplete::Compare => c.values.len() >= MIN_RUNS_COMPARED,
    };
    for &p in projects {
        let (ca, cb) = (cells.get(&(p, ia)), cells.get(&(p, ib)));
        if ca.is_none() && cb.is_none() {
            continue; // the project is not part of this comparison at all
        }
        let (Some(ca), Some(cb)) = (ca.filter(enters), cb.filter(enters)) else {
            let n = |c: Option<&Cell>| c.map_or(0, |c| c.values.len());
            excluded.push(ExcludedProject { project: names[p as usize].clone(), n_a: n(ca), n_b: n(cb) });
            continue;
        };
        let mw = stats::mann_whitney(&ca.values, &cb.values, options.p_method)
            .map_err(|e| AnalysisError::Options(format!("{a} vs {b} on {}: {e}", names[p as usize])))?;
        rows.push(ProjectComparison {
            project: names[p as usize].clone(),
            mean_a: stats::mean(&ca.values).unwrap_or(f64::NAN),
            mean_b: stats::mean(&cb.values).unwrap_or(f64::NAN),
            counts: mw.counts,
            p: mw.p,
            p_used: mw.p,
            magnitude: options.thresholds.magnitude(&mw.counts),
        });
    }
    if options.holm {
        let adj = stats::holm(&rows.iter().map(|r| r.p).collect::<Vec<_>>());
        for (r, p) in rows.iter_mut().zip(adj) {
            r.p_used = p;
        }
    }
    let (mut sig_better, mut better, mut equal, mut worse, mut sig_worse) = (0, 0, 0, 0, 0);
    for r in &rows {
        let sig = r.p_used < options.alpha;
        match r.counts.a12_vs_half() {
            Ordering::Greater => {
                better += 1;
                sig_better += usize::from(sig);
            }
            Ordering::Equal => equal += 1,
            Ordering::Less => {
                worse += 1;
                sig_worse += usize::from(sig);
            }
        }
    }
    let a12s: Vec<f64> = rows.iter().map(|r| r.counts.a12()).collect();
    Ok(Comparison {
        a: a.to_string(),
        b: b.to_string(),
        mean_a12: stats::mean(&a12s),
        projects: rows,
        excluded,
        sig_better,
        better,
        equal,
        worse,
        sig_worse,
    })
}
