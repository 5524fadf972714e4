//! Mutation scores: per run (pooled over its strata, exact or the stratified estimate), per
//! algorithm and per operator.

use std::collections::{BTreeMap, BTreeSet};

use super::cells::Cell;
use super::types::{MutationRow, OperatorRow};
use crate::estimate::{self, Stratum};
use crate::load::{Results, Verdicts};
use crate::stats;

/// Verdicts of one run from the runs columns (the contract's summary), or from `mutants`.
fn run_verdicts(res: &Results, i: usize) -> Option<Verdicts> {
    let r = &res.runs[i];
    if let (Some(g), Some(k)) = (r.mutants, r.mutants_killed) {
        if g == 0 {
            return None; // mutation analysis off
        }
        let excluded = r.mutants_excluded.unwrap_or(0);
        let timeout = r.mutants_timeout.unwrap_or(0);
        let survived = g.saturating_sub(k + excluded + timeout);
        return Some(Verdicts { killed: k, survived, timeout, excluded });
    }
    let m = res.mutants.as_ref()?;
    let mut v = Verdicts::default();
    let mut any = false;
    for (_, c) in m.counts.range((i as u32, 0)..(i as u32 + 1, 0)) {
        v.add(c);
        any = true;
    }
    any.then_some(v)
}

/// The strata of run `i` (one per operator it has verdicts for), or one stratum from the
/// runs columns when there is no `mutants` table.
fn run_strata(res: &Results, i: usize) -> Vec<(Option<usize>, Stratum)> {
    let stratum = |v: &Verdicts, population: u64| Stratum {
        population: population.max(v.total()),
        sampled: v.total(),
        killed: v.killed,
        excluded: v.excluded,
    };
    match &res.mutants {
        Some(m) => m
            .counts
            .range((i as u32, 0)..(i as u32 + 1, 0))
            .map(|(&(r, op), v)| (Some(op), stratum(v, m.strata.get(&(r, op)).copied().unwrap_or(0))))
            .collect(),
        None => run_verdicts(res, i).map(|v| vec![(None, stratum(&v, 0))]).unwrap_or_default(),
    }
}

/// Mutation score of run `i` (the pooled estimate over its strata, exact when every mutant
/// was analysed), as the per-project means of [`MutationRow`] use it.
pub(crate) fn run_score(res: &Results, i: usize) -> Option<f64> {
    let strata: Vec<Stratum> = run_strata(res, i).into_iter().map(|(_, s)| s).collect();
    estimate::pooled(&strata).map(|e| e.score)
}

/// Mutation rows per algorithm and per (algorithm, operator) of the dataset whose cells are `cells`.
pub(crate) fn mutation(
    res: &Results,
    cells: &BTreeMap<(u32, u32), Cell>,
    projects: &BTreeSet<u32>,
    algs: &BTreeSet<u32>,
) -> (Vec<MutationRow>, Vec<OperatorRow>) {
    let runs = &res.runs;
    let n_ops = res.mutants.as_ref().map_or(0, |m| m.operators.len());
    let mut rows = Vec::new();
    let mut ops = Vec::new();
    for &a in algs {
        let mut total = Verdicts::default();
        let mut n = 0;
        let mut all = Vec::new();
        let mut project_scores = Vec::new();
        let mut per_op: Vec<(Verdicts, Vec<Stratum>, Vec<f64>)> = vec![Default::default(); n_ops];
        for &p in projects {
            let Some(c) = cells.get(&(p, a)) else { continue };
            let mut scores = Vec::new();
            let mut op_scores: Vec<Vec<f64>> = vec![Vec::new(); n_ops];
            for i in c.range.clone().filter(|&i| runs[i].has_result()) {
                let strata = run_strata(res, i);
                if strata.is_empty() {
                    continue;
                }
                if let Some(v) = run_verdicts(res, i) {
                    total.add(&v);
                }
                n += 1;
                let plain: Vec<Stratum> = strata.iter().map(|(_, s)| *s).collect();
                if let Some(e) = estimate::pooled(&plain) {
                    scores.push(e.score);
                }
                all.extend(plain);
                if let Some(m) = &res.mutants {
                    for ((_, op), v) in m.counts.range((i as u32, 0)..(i as u32 + 1, 0)) {
                        per_op[*op].0.add(v);
                    }
                }
                for (op, s) in strata {
                    if let Some(op) = op {
                        per_op[op].1.push(s);
                        if let Some(e) = estimate::pooled(&[s]) {
                            op_scores[op].push(e.score);
                        }
                    }
                }
            }
            if let Some(s) = stats::mean(&scores) {
                project_scores.push(s);
            }
            for (op, sc) in op_scores.iter().enumerate() {
                if let Some(s) = stats::mean(sc) {
                    per_op[op].2.push(s);
                }
            }
        }
        if n > 0 {
            rows.push(MutationRow {
                algorithm: res.algorithms[a as usize].clone(),
                runs: n,
                verdicts: total,
                pooled: estimate::pooled(&all),
                mean_project_score: stats::mean(&project_scores),
            });
        }
        if let Some(m) = &res.mutants {
            for (op, (v, strata, project)) in per_op.into_iter().enumerate() {
                if v.total() == 0 {
                    continue;
                }
                ops.push(OperatorRow {
                    algorithm: res.algorithms[a as usize].clone(),
                    operator: m.operators[op].clone(),
                    verdicts: v,
                    pooled: estimate::pooled(&strata),
                    mean_project_score: stats::mean(&project),
                });
            }
        }
    }
    (rows, ops)
}
