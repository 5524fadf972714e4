//! The analysis proper: per dataset, coverage summaries, Table-6 comparisons, time to full
//! coverage, suite sizes, mutation scores, project sizes and coverage over time.
//!
//! Everything iterates in sorted order (datasets, projects, algorithms, seeds), so the same
//! input gives the same numbers in the same order.
//!
//! Computation only: nothing here formats or writes (the report module does, reading these
//! results; nothing here imports it). The result types are in `types`, the options in
//! `options`; [`analyze`] (this file) walks the datasets and calls the measures of the
//! sibling modules.

mod cells;
mod compare;
mod mutation;
mod options;
pub(crate) mod sequence;
mod suite_size;
mod types;

use std::collections::{BTreeMap, BTreeSet};

use crate::curves;
use crate::error::AnalysisError;
use crate::load::{Results, Run};
use crate::stats;
use cells::{Cell, Group, groups};
use compare::compare;
use mutation::mutation;
use suite_size::suite_sizes;

pub use options::{Incomplete, MIN_RUNS_COMPARED, Options};
pub use types::{
    Analysis, Comparison, CorrelationRow, CoverageRow, DatasetAnalysis, ExcludedProject, Exclusion, FullCoverageRow,
    FullCoverageSource, MutationRow, OperatorRow, ProjectComparison, SizeComparison, SuiteSize, SuiteSizeRow,
};

/// Runs the analysis.
pub fn analyze(res: &Results, options: &Options) -> Result<Analysis, AnalysisError> {
    if !(options.alpha > 0.0 && options.alpha < 1.0) {
        return Err(AnalysisError::Options(format!("alpha must be in (0, 1), got {}", options.alpha)));
    }
    for (a, b) in &options.compare {
        for name in [a, b] {
            if !res.algorithms.contains(name) {
                return Err(AnalysisError::Options(format!(
                    "--compare: unknown algorithm {name:?} (known: {})",
                    res.algorithms.join(", ")
                )));
            }
        }
        if a == b {
            return Err(AnalysisError::Options(format!("--compare: {a} vs itself")));
        }
    }
    let file_missing = |c: &str| res.files.first().is_some_and(|f| f.missing.iter().any(|m| m == c));
    let has_tests = !file_missing("tests_after_min");
    let has_events = !file_missing("events_after_min");
    let has_to_full = !file_missing("steps_to_full_coverage");
    let grid_end = curves::grid_end(res);
    let all = groups(res);
    let mut datasets = Vec::new();
    for (di, name) in res.datasets.iter().enumerate() {
        let gs: Vec<&Group> = all.iter().filter(|g| g.dataset == di as u32).collect();
        if gs.is_empty() {
            continue;
        }
        datasets.push(analyze_dataset(res, options, name, &gs, has_to_full, grid_end)?);
    }
    Ok(Analysis { options: options.clone(), datasets, grid_end, has_tests, has_events })
}

fn analyze_dataset(
    res: &Results,
    options: &Options,
    name: &str,
    gs: &[&Group],
    has_to_full: bool,
    grid_end: u64,
) -> Result<DatasetAnalysis, AnalysisError> {
    let runs = &res.runs;
    let alg_ids: BTreeSet<u32> = gs.iter().map(|g| g.algorithm).collect();
    let project_ids: BTreeSet<u32> = gs.iter().map(|g| g.project).collect();
    let alg_name = |a: u32| res.algorithms[a as usize].clone();
    let proj_name = |p: u32| res.projects[p as usize].clone();
    let mut statuses = BTreeMap::new();
    for g in gs {
        for r in &runs[g.range.clone()] {
            *statuses.entry(r.status.clone()).or_insert(0) += 1;
        }
    }
    // Seeds expected for an algorithm: every seed it has in this dataset.
    let mut expected: BTreeMap<u32, BTreeSet<u64>> = BTreeMap::new();
    for g in gs {
        expected.entry(g.algorithm).or_default().extend(runs[g.range.clone()].iter().map(|r| r.seed));
    }
    let mut cells: BTreeMap<(u32, u32), Cell> = BTreeMap::new();
    let mut exclusions = Vec::new();
    for g in gs {
        let rs = &runs[g.range.clone()];
        let with_result: Vec<&Run> = rs.iter().filter(|r| r.has_result()).collect();
        let exp = &expected[&g.algorithm];
        let result_seeds: BTreeSet<u64> = with_result.iter().map(|r| r.seed).collect();
        let complete = result_seeds == *exp;
        // The loader marks result runs without coverage as failed, so none is dropped here.
        let values: Vec<f64> = with_result.iter().filter_map(|r| r.coverage).collect();
        if !complete {
            exclusions.push(Exclusion {
                project: proj_name(g.project),
                algorithm: alg_name(g.algorithm),
                results: values.len(),
                reason: incomplete_reason(rs, exp),
            });
        }
        cells.insert((g.project, g.algorithm), Cell { range: g.range.clone(), values, complete });
    }
    for &p in &project_ids {
        for &a in &alg_ids {
            if !cells.contains_key(&(p, a)) {
                exclusions.push(Exclusion {
                    project: proj_name(p),
                    algorithm: alg_name(a),
                    results: 0,
                    reason: "no runs".into(),
                });
            }
        }
    }
    exclusions.sort_by(|x, y| (&x.project, &x.algorithm).cmp(&(&y.project, &y.algorithm)));

    // Coverage per algorithm (projects are the unit: per-project means).
    let mut coverage = Vec::new();
    for &a in &alg_ids {
        let (mut per_project, mut reliable_per_project) = (Vec::new(), Vec::new());
        let (mut runs_ok, mut runs_limit, mut runs_not_ok, mut full_projects) = (0, 0, 0, 0);
        for &p in &project_ids {
            let Some(c) = cells.get(&(p, a)) else { continue };
            runs_ok += c.values.len();
            runs_limit += runs[c.range.clone()].iter().filter(|r| r.is_limit()).count();
            runs_not_ok += c.range.len() - c.values.len();
            let reliable: Vec<f64> =
                runs[c.range.clone()].iter().filter(|r| r.has_result()).filter_map(|r| r.reliable_coverage()).collect();
            if let Some(m) = stats::mean(&reliable) {
                reliable_per_project.push(m);
            }
            if let Some(m) = stats::mean(&c.values) {
                per_project.push(m);
                if c.values.iter().all(|&v| v == 1.0) {
                    full_projects += 1;
                }
            }
        }
        coverage.push(CoverageRow {
            algorithm: alg_name(a),
            projects: per_project.len(),
            runs_ok,
            runs_limit,
            runs_not_ok,
            mean: stats::mean(&per_project),
            median: stats::median(&per_project),
            full_projects,
            per_project,
            reliable_mean: stats::mean(&reliable_per_project),
        });
    }

    // Comparisons.
    let pairs: Vec<(String, String)> = if options.compare.is_empty() {
        let names: Vec<String> = alg_ids.iter().map(|&a| alg_name(a)).collect();
        let mut v = Vec::new();
        for i in 0..names.len() {
            for j in i + 1..names.len() {
                v.push((names[i].clone(), names[j].clone()));
            }
        }
        v
    } else {
        options.compare.clone()
    };
    let alg_id = |n: &str| res.algorithms.iter().position(|x| x == n).map(|i| i as u32);
    let mut comparisons = Vec::new();
    let mut skipped_comparisons = Vec::new();
    let mut compared = Vec::new();
    for (a, b) in &pairs {
        let (Some(ia), Some(ib)) = (alg_id(a), alg_id(b)) else { continue };
        if !alg_ids.contains(&ia) || !alg_ids.contains(&ib) {
            skipped_comparisons.push(format!("{a} vs {b}"));
            continue;
        }
        comparisons.push(compare(options, &cells, &project_ids, ia, ib, a, b, &res.projects)?);
        compared.push((ia, ib));
    }

    // Time to full coverage.
    let source = if has_to_full {
        FullCoverageSource::Column
    } else if res.timeline.is_some() {
        FullCoverageSource::Timeline
    } else {
        FullCoverageSource::CoverageOnly
    };
    let mut full_coverage = Vec::new();
    for &a in &alg_ids {
        let mut times = Vec::new();
        let (mut runs_ok, mut reached) = (0, 0);
        for &p in &project_ids {
            let Some(c) = cells.get(&(p, a)) else { continue };
            for (i, r) in runs[c.range.clone()].iter().enumerate().filter(|(_, r)| r.has_result()) {
                runs_ok += 1;
                let t = match source {
                    FullCoverageSource::Column => r.steps_to_full_coverage,
                    FullCoverageSource::Timeline => timeline_full_at(res, c.range.start + i, r),
                    FullCoverageSource::CoverageOnly => None,
                };
                let hit = match source {
                    FullCoverageSource::CoverageOnly => r.coverage == Some(1.0),
                    _ => t.is_some(),
                };
                if hit {
                    reached += 1;
                }
                if let Some(t) = t {
                    times.push(t as f64);
                }
            }
        }
        full_coverage.push(FullCoverageRow {
            algorithm: alg_name(a),
            runs_ok,
            reached,
            mean_steps: stats::mean(&times),
            median_steps: stats::median(&times),
        });
    }

    let suite_size = suite_sizes(res, &cells, &project_ids, &alg_ids, &pairs);
    let (mutation, operators) = mutation(res, &cells, &project_ids, &alg_ids);

    // Project sizes: the largest total_targets among successful runs.
    let mut sizes = Vec::new();
    let mut size_of: BTreeMap<u32, u64> = BTreeMap::new();
    for &p in &project_ids {
        let t = alg_ids
            .iter()
            .filter_map(|&a| cells.get(&(p, a)))
            .flat_map(|c| runs[c.range.clone()].iter().filter(|r| r.has_result()).filter_map(|r| r.total_targets))
            .max();
        if let Some(t) = t {
            sizes.push((proj_name(p), t));
            size_of.insert(p, t);
        }
    }
    let mut correlations = Vec::new();
    if !size_of.is_empty() {
        for &a in &alg_ids {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            for (&p, &t) in &size_of {
                if let Some(m) = cells.get(&(p, a)).and_then(|c| stats::mean(&c.values)) {
                    x.push(t as f64);
                    y.push(m);
                }
            }
            correlations.push(CorrelationRow { algorithm: alg_name(a), pearson: stats::pearson(&x, &y) });
        }
    }

    // Coverage over time.
    let mut curve_list = Vec::new();
    if let Some(tl) = &res.timeline {
        for &a in &alg_ids {
            let project_runs: Vec<Vec<usize>> = project_ids
                .iter()
                .filter_map(|&p| cells.get(&(p, a)))
                .map(|c| c.range.clone().filter(|&i| runs[i].has_result() && tl.has(i)).collect::<Vec<_>>())
                .filter(|v: &Vec<usize>| !v.is_empty())
                .collect();
            if let Some(c) = curves::curve(res, tl, &alg_name(a), &project_runs, options.grid, grid_end) {
                curve_list.push(c);
            }
        }
    }

    let sequence = sequence::analyze(res, options, &cells, &project_ids, &alg_ids, &compared)?;

    Ok(DatasetAnalysis {
        name: name.to_string(),
        algorithms: alg_ids.iter().map(|&a| alg_name(a)).collect(),
        projects: project_ids.len(),
        statuses,
        coverage,
        comparisons,
        skipped_comparisons,
        exclusions,
        full_coverage,
        full_coverage_source: source,
        suite_size,
        mutation,
        operators,
        sizes,
        correlations,
        curves: curve_list,
        sequence,
    })
}

/// Human-readable reason why a cell is incomplete: failed and missing seeds (at most 5 shown).
fn incomplete_reason(rs: &[Run], expected: &BTreeSet<u64>) -> String {
    let mut parts = Vec::new();
    let failed: Vec<&Run> = rs.iter().filter(|r| !r.has_result()).collect();
    for r in failed.iter().take(5) {
        let err: String = r.error.chars().take(80).collect();
        parts.push(if err.is_empty() {
            format!("seed {}: {}", r.seed, r.status)
        } else {
            format!("seed {}: {} ({err})", r.seed, r.status)
        });
    }
    if failed.len() > 5 {
        parts.push(format!("{} more failed", failed.len() - 5));
    }
    let present: BTreeSet<u64> = rs.iter().map(|r| r.seed).collect();
    let missing: Vec<String> = expected.difference(&present).map(|s| s.to_string()).collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(5).map(String::as_str).collect();
        let more = if missing.len() > 5 { format!(" and {} more", missing.len() - 5) } else { String::new() };
        parts.push(format!("missing seed(s) {}{more}", shown.join(", ")));
    }
    parts.join("; ")
}

/// First timeline step where every target is covered.
fn timeline_full_at(res: &Results, i: usize, r: &Run) -> Option<u64> {
    let tl = res.timeline.as_ref()?;
    let total = r.total_targets.or_else(|| tl.total.get(tl.offsets[i]).map(|&t| t as u64)).filter(|&t| t > 0)?;
    tl.points(i).find(|&(_, c)| c as u64 >= total).map(|(s, _)| s)
}
