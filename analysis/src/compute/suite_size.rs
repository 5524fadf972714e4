//! Final test-suite sizes on the projects where every algorithm reaches the same coverage,
//! and the Â12 of those sizes per comparison.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use super::cells::Cell;
use super::types::{SizeComparison, SuiteSize, SuiteSizeRow};
use crate::load::{Results, Run};
use crate::stats::{self, PairCounts};

/// Suite sizes of the dataset whose cells are `cells`, compared for `pairs` (A, B).
pub(crate) fn suite_sizes(
    res: &Results,
    cells: &BTreeMap<(u32, u32), Cell>,
    projects: &BTreeSet<u32>,
    algs: &BTreeSet<u32>,
    pairs: &[(String, String)],
) -> SuiteSize {
    let runs = &res.runs;
    // Projects where all algorithms are complete and every successful run has the same coverage.
    let equal: Vec<u32> = projects
        .iter()
        .copied()
        .filter(|&p| {
            let cs: Vec<&Cell> = algs.iter().filter_map(|&a| cells.get(&(p, a))).collect();
            if cs.len() != algs.len() || cs.iter().any(|c| !c.complete || c.values.is_empty()) {
                return false;
            }
            let first = cs[0].values[0];
            cs.iter().all(|c| c.values.iter().all(|&v| v == first))
        })
        .collect();
    let per_project = |p: u32, a: u32, f: fn(&Run) -> Option<u64>| -> Option<f64> {
        let c = cells.get(&(p, a))?;
        let v: Option<Vec<f64>> =
            runs[c.range.clone()].iter().filter(|r| r.has_result()).map(|r| f(r).map(|x| x as f64)).collect();
        stats::mean(&v?)
    };
    let tests = |r: &Run| r.tests_after_min;
    let events = |r: &Run| r.events_after_min;
    let mut rows = Vec::new();
    for &a in algs {
        let t: Vec<f64> = equal.iter().filter_map(|&p| per_project(p, a, tests)).collect();
        let e: Vec<f64> = equal.iter().filter_map(|&p| per_project(p, a, events)).collect();
        rows.push(SuiteSizeRow {
            algorithm: res.algorithms[a as usize].clone(),
            mean_tests: stats::mean(&t),
            median_tests: stats::median(&t),
            mean_events: stats::mean(&e),
            median_events: stats::median(&e),
        });
    }
    let mut comparisons = Vec::new();
    let has_events = runs.iter().any(|r| r.events_after_min.is_some());
    let (measure, f): (&'static str, fn(&Run) -> Option<u64>) =
        if has_events { ("events", events) } else { ("tests", tests) };
    for (a, b) in pairs {
        let (Some(ia), Some(ib)) = (
            res.algorithms.iter().position(|x| x == a).map(|i| i as u32),
            res.algorithms.iter().position(|x| x == b).map(|i| i as u32),
        ) else {
            continue;
        };
        if !algs.contains(&ia) || !algs.contains(&ib) {
            continue;
        }
        let values = |p: u32, al: u32| -> Option<Vec<f64>> {
            let c = cells.get(&(p, al))?;
            runs[c.range.clone()].iter().filter(|r| r.has_result()).map(|r| f(r).map(|x| x as f64)).collect()
        };
        let mut a12s = Vec::new();
        let (mut larger, mut eq, mut smaller) = (0, 0, 0);
        for &p in &equal {
            let (Some(va), Some(vb)) = (values(p, ia), values(p, ib)) else { continue };
            let Ok(c) = PairCounts::new(&va, &vb) else { continue };
            a12s.push(c.a12());
            match c.a12_vs_half() {
                Ordering::Greater => larger += 1,
                Ordering::Equal => eq += 1,
                Ordering::Less => smaller += 1,
            }
        }
        comparisons.push(SizeComparison {
            a: a.clone(),
            b: b.clone(),
            measure,
            projects: a12s.len(),
            mean_a12: stats::mean(&a12s),
            larger,
            equal: eq,
            smaller,
        });
    }
    SuiteSize { projects: equal.len(), rows, comparisons }
}
