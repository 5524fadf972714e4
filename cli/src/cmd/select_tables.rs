//! The tables and plots of `clowder select-study` (the paper's Tables III and IV, the paired
//! comparison with unranked selection, the residual risk over GA generations).

use std::fmt::Write as _;
use std::path::Path;

use clowder_analysis::plots::{LinePlot, Series, render};
use clowder_analysis::stats::sign_test;
use clowder_analysis::table::{Cell as C, Table};
use clowder_testgen::selection::{Cell, Method, Ranking, StudyOptions};

use super::select_study::ProjectOut;

/// A mutant is *rare* when fewer than this share of the pool's tests kill it (the paper's rare
/// bugs were caught by 7–22 % of its unranked 10-test suites, i.e. by under 2.5 % of its tests).
pub const RARE: f64 = 0.05;

/// Per mutant: the share of pool tests that kill it (`None` when it could not be judged).
pub fn kill_rates(o: &ProjectOut) -> Vec<Option<f64>> {
    o.mutants.iter().map(|m| m.2.then(|| f64::from(m.3) / o.tests.max(1) as f64)).collect()
}

/// Detection probabilities of one cell: the mean over the project's detectable mutants (killed
/// by some pool test) of the share of repetitions whose suite kills the mutant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detection {
    /// Detectable mutants.
    pub mutants: usize,
    /// Over all detectable mutants.
    pub all: Option<f64>,
    /// Over the rare ones.
    pub rare: Option<f64>,
    /// Over the others.
    pub common: Option<f64>,
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Per detectable mutant of `o`: (its detection probability in `c`, whether it is rare).
fn probabilities(o: &ProjectOut, c: &Cell, repetitions: u32) -> Vec<(f64, bool)> {
    kill_rates(o)
        .iter()
        .zip(&c.caught)
        .filter_map(|(q, &k)| q.filter(|&q| q > 0.0).map(|q| (f64::from(k) / f64::from(repetitions), q < RARE)))
        .collect()
}

/// The detection probabilities of cell `c` of project `o`.
pub fn detection(o: &ProjectOut, c: &Cell, repetitions: u32) -> Detection {
    let p = probabilities(o, c, repetitions);
    let pick = |rare: Option<bool>| -> Vec<f64> {
        p.iter().filter(|(_, r)| rare.is_none_or(|x| x == *r)).map(|(v, _)| *v).collect()
    };
    Detection {
        mutants: p.len(),
        all: mean(&pick(None)),
        rare: mean(&pick(Some(true))),
        common: mean(&pick(Some(false))),
    }
}

fn cell(o: &ProjectOut, r: Ranking, m: Method, n: usize) -> Option<&Cell> {
    o.study.cells.iter().find(|c| c.ranking == r && c.method == m && c.n == n)
}

/// The (ranking, method) rows of the report: unranked once (its suites do not depend on the
/// ranking), then GA and best-of per ranking.
fn rows(opts: &StudyOptions) -> Vec<(Ranking, Method)> {
    let mut out: Vec<(Ranking, Method)> = opts.rankings.first().map(|&r| (r, Method::Unranked)).into_iter().collect();
    for &r in &opts.rankings {
        out.push((r, Method::Ga));
        out.push((r, Method::BestOf));
    }
    out
}

fn label(r: Ranking, m: Method, best_of: u32) -> (String, String) {
    let ranking = if m == Method::Unranked { "–".to_string() } else { r.name().to_string() };
    let method = match m {
        Method::Ga => "GA".to_string(),
        Method::BestOf => format!("best of {best_of}"),
        Method::Unranked => "unranked".to_string(),
    };
    (ranking, method)
}

/// Pooled and project-mean aggregates per (ranking, method, n) over all projects.
pub fn summary(outs: &[ProjectOut], opts: &StudyOptions) -> Table {
    let mut t = Table::new(
        "summary",
        "Selection study: detection probability and ranks per (ranking, method, n)",
        &[
            ("ranking", "ranking"),
            ("method", "method"),
            ("n", "n"),
            ("mutants", "mutants"),
            ("P(all)", "detection_pooled"),
            ("P(rare)", "detection_rare_pooled"),
            ("P(all), project mean", "detection_project_mean"),
            ("rank max / pool", "rank_max_share"),
            ("rank mean / pool", "rank_mean_share"),
            ("coverage", "coverage_mean"),
            ("generations", "generations_mean"),
        ],
    );
    let r = f64::from(opts.repetitions);
    for &n in &opts.sizes {
        for &ranking in &opts.rankings {
            for m in Method::ALL {
                let (mut all, mut rare, mut per_project) = (Vec::new(), Vec::new(), Vec::new());
                let (mut max_share, mut mean_share, mut coverage, mut gens) =
                    (Vec::new(), Vec::new(), Vec::new(), Vec::new());
                for o in outs {
                    let Some(c) = cell(o, ranking, m, n) else { continue };
                    let p = probabilities(o, c, opts.repetitions);
                    all.extend(p.iter().map(|x| x.0));
                    rare.extend(p.iter().filter(|x| x.1).map(|x| x.0));
                    per_project.extend(detection(o, c, opts.repetitions).all);
                    if let Some(&(_, universe, total)) = o.study.universe.iter().find(|u| u.0 == ranking) {
                        if universe > 0 {
                            max_share.push(f64::from(c.rank_max) / universe as f64);
                            mean_share.push(c.rank_sum as f64 / r / universe as f64);
                        }
                        if total > 0 {
                            coverage.push(c.rank_sum as f64 / r / total as f64);
                        }
                    }
                    gens.push(c.generations as f64 / r);
                }
                t.push(vec![
                    C::text(ranking.name()),
                    C::text(m.name()),
                    C::int(n as u64),
                    C::int(all.len() as u64),
                    C::opt(mean(&all), 3),
                    C::opt(mean(&rare), 3),
                    C::opt(mean(&per_project), 3),
                    C::opt_pct(mean(&max_share)),
                    C::opt_pct(mean(&mean_share)),
                    C::opt_pct(mean(&coverage)),
                    C::opt(mean(&gens), 1),
                ]);
            }
        }
    }
    t
}

/// The value of `column` in the summary row of (ranking, method, n).
fn summary_value(s: &Table, r: Ranking, m: Method, n: usize, column: &str) -> C {
    let col = s.csv_header.iter().position(|h| h == column);
    s.rows
        .iter()
        .find(|row| row[0].csv == r.name() && row[1].csv == m.name() && row[2].csv == n.to_string())
        .and_then(|row| col.and_then(|i| row.get(i)).cloned())
        .unwrap_or_else(C::na)
}

fn per_n_table(name: &str, caption: &str, opts: &StudyOptions, value: impl Fn(Ranking, Method, usize) -> C) -> Table {
    let heads: Vec<String> = opts.sizes.iter().map(|n| format!("n = {n}")).collect();
    let csv: Vec<String> = opts.sizes.iter().map(|n| format!("n{n}")).collect();
    let mut cols: Vec<(&str, &str)> = vec![("ranking", "ranking"), ("method", "method")];
    cols.extend(heads.iter().zip(&csv).map(|(h, c)| (h.as_str(), c.as_str())));
    let mut t = Table::new(name, caption, &cols);
    for (r, m) in rows(opts) {
        let (a, b) = label(r, m, opts.best_of);
        let mut row = vec![C::text(a), C::text(b)];
        row.extend(opts.sizes.iter().map(|&n| value(r, m, n)));
        t.push(row);
    }
    t
}

/// GA (or best-of) against unranked selection, project by project.
fn paired(outs: &[ProjectOut], opts: &StudyOptions, method: Method, rare: bool) -> Table {
    let mut t = Table::new(
        "paired",
        "Per project: method minus unranked detection probability",
        &[
            ("ranking", "ranking"),
            ("n", "n"),
            ("projects", "projects"),
            ("mean difference", "mean_difference"),
            ("better", "better"),
            ("equal", "equal"),
            ("worse", "worse"),
            ("sign test p", "p"),
        ],
    );
    for &r in &opts.rankings {
        for &n in &opts.sizes {
            let mut diffs = Vec::new();
            for o in outs {
                let (Some(a), Some(u)) = (cell(o, r, method, n), cell(o, r, Method::Unranked, n)) else { continue };
                let (da, du) = (detection(o, a, opts.repetitions), detection(o, u, opts.repetitions));
                let (x, y) = if rare { (da.rare, du.rare) } else { (da.all, du.all) };
                if let (Some(x), Some(y)) = (x, y) {
                    diffs.push(x - y);
                }
            }
            let better = diffs.iter().filter(|d| **d > 0.0).count() as u64;
            let worse = diffs.iter().filter(|d| **d < 0.0).count() as u64;
            t.push(vec![
                C::text(r.name()),
                C::int(n as u64),
                C::int(diffs.len() as u64),
                C::opt(mean(&diffs), 3),
                C::int(better),
                C::int(diffs.len() as u64 - better - worse),
                C::int(worse),
                C::p(sign_test(better, worse)),
            ]);
        }
    }
    t
}

/// `tables.md`: the report (deterministic).
pub fn tables_md(outs: &[ProjectOut], opts: &StudyOptions, settings: &str, summary: &Table) -> String {
    let mut s = String::from("# Suite-selection study\n\n");
    let mutants: usize = outs.iter().map(|o| o.mutants.len()).sum();
    let rates: Vec<Option<f64>> = outs.iter().flat_map(kill_rates).collect();
    let detectable = rates.iter().filter(|q| q.is_some_and(|q| q > 0.0)).count();
    let rare = rates.iter().filter(|q| q.is_some_and(|q| q > 0.0 && q < RARE)).count();
    let _ = writeln!(s, "{} projects; {settings}.\n", outs.len());
    let _ = writeln!(
        s,
        "{mutants} mutants, {detectable} killed by some pool test (detectable), {rare} of them rare (killed by \
         fewer than {:.0} % of the pool's tests). A mutant's detection probability is the share of the {} \
         repetitions whose selected suite kills it; the tables average it over mutants.\n",
        RARE * 100.0,
        opts.repetitions
    );
    let value = |col: &'static str| move |r, m, n| summary_value(summary, r, m, n, col);
    let t3 = per_n_table("table3", "", opts, value("detection_pooled"));
    let _ = writeln!(s, "## Detection probability, all detectable mutants (Table III analogue)\n\n{}", t3.markdown());
    let t3r = per_n_table("table3_rare", "", opts, value("detection_rare_pooled"));
    let _ = writeln!(s, "## Detection probability, rare mutants\n\n{}", t3r.markdown());
    let t3p = per_n_table("table3_projects", "", opts, value("detection_project_mean"));
    let _ = writeln!(s, "## Detection probability, mean over projects\n\n{}", t3p.markdown());
    for (m, what) in [(Method::Ga, "GA"), (Method::BestOf, "best of")] {
        for (rare, which) in [(false, "all detectable mutants"), (true, "rare mutants")] {
            let _ = writeln!(
                s,
                "## {what} against unranked, per project ({which})\n\nDifference of the project's mean detection \
                 probability; projects without such mutants are left out. Sign test over projects, two-sided.\n\n{}",
                paired(outs, opts, m, rare).markdown()
            );
        }
    }
    let t4 = per_n_table("table4_max", "", opts, value("rank_max_share"));
    let _ = writeln!(s, "## Rank (max) as % of the items the pool covers (Table IV analogue)\n\n{}", t4.markdown());
    let t4m = per_n_table("table4_mean", "", opts, value("rank_mean_share"));
    let _ = writeln!(s, "## Rank (mean) as % of the items the pool covers\n\n{}", t4m.markdown());
    let mut gens = per_n_table("generations", "", opts, value("generations_mean"));
    gens.rows.retain(|row| row.get(1).is_some_and(|c| c.csv == "GA"));
    let _ = writeln!(s, "## GA generations (mean)\n\n{}", gens.markdown());
    let _ = writeln!(s, "## Per project\n\n{}", per_project(outs, opts).markdown());
    s
}

/// Per project: pool facts and, for Σ*wΣ* t = 2 at the middle size, each method's detection.
fn per_project(outs: &[ProjectOut], opts: &StudyOptions) -> Table {
    let n = opts.sizes.get(opts.sizes.len() / 2).copied().unwrap_or(0);
    let r = if opts.rankings.contains(&Ranking::Win2) { Ranking::Win2 } else { opts.rankings[0] };
    let heads = [format!("GA {} n={n}", r.name()), format!("best of {} n={n}", r.name()), format!("unranked n={n}")];
    let mut t = Table::new(
        "projects",
        "",
        &[
            ("project", "project"),
            ("|Σ|", "alphabet"),
            ("statements", "targets"),
            ("mutants", "mutants"),
            ("detectable", "detectable"),
            ("rare", "rare"),
            (&heads[0], "ga"),
            (&heads[1], "best_of"),
            (&heads[2], "unranked"),
        ],
    );
    for o in outs {
        let q = kill_rates(o);
        let d = |m| cell(o, r, m, n).and_then(|c| detection(o, c, opts.repetitions).all);
        t.push(vec![
            C::text(o.name.as_str()),
            C::int(o.symbols.len() as u64),
            C::int(u64::from(o.targets.0)),
            C::int(o.mutants.len() as u64),
            C::int(q.iter().filter(|x| x.is_some_and(|x| x > 0.0)).count() as u64),
            C::int(q.iter().filter(|x| x.is_some_and(|x| x > 0.0 && x < RARE)).count() as u64),
            C::opt(d(Method::Ga), 3),
            C::opt(d(Method::BestOf), 3),
            C::opt(d(Method::Unranked), 3),
        ]);
    }
    t
}

/// `times.md`: mean milliseconds to select one suite (not deterministic).
pub fn times_md(outs: &[ProjectOut], opts: &StudyOptions) -> String {
    let t = per_n_table("times", "", opts, |r, m, n| {
        let ms: Vec<f64> = outs
            .iter()
            .filter_map(|o| {
                let i = o.study.cells.iter().position(|c| c.ranking == r && c.method == m && c.n == n)?;
                Some(o.study.seconds.get(i)? * 1000.0 / f64::from(opts.repetitions))
            })
            .collect();
        C::opt(mean(&ms), 2)
    });
    let pool: Vec<f64> = outs.iter().map(|o| o.seconds.0).collect();
    let sel: Vec<f64> = outs.iter().map(|o| o.seconds.1).collect();
    format!(
        "# Selection times\n\nMean milliseconds to select one suite, over projects (wall clock; not \
         deterministic).\n\n{}\nPools: {:.0} s in all ({:.0} s mean per project); selection: {:.0} s in all.\n",
        t.markdown(),
        pool.iter().sum::<f64>(),
        mean(&pool).unwrap_or(0.0),
        sel.iter().sum::<f64>()
    )
}

/// `risk_mean` and `risk_variance` plots: the GA's best suite's residual risk per generation,
/// mean over projects, one line per sequence ranking, at the middle suite size.
pub fn risk_plots(outs: &[ProjectOut], opts: &StudyOptions, out: &Path) -> anyhow::Result<()> {
    let n = opts.sizes.get(opts.sizes.len() / 2).copied().unwrap_or(0);
    let mut mean_series = Vec::new();
    let mut var_series = Vec::new();
    let mut last_gen = 1.0f64;
    for &r in opts.rankings.iter().filter(|r| r.sequence().is_some()) {
        // Per project: (risk, variance / variance at generation 0) per generation.
        let per: Vec<Vec<(f64, f64)>> = outs
            .iter()
            .map(|o| {
                let pts: Vec<_> = o.study.risk.iter().filter(|p| p.ranking == r && p.n == n).collect();
                let v0 = pts.first().map_or(0.0, |p| p.variance);
                pts.iter().map(|p| (p.risk, if v0 > 0.0 { p.variance / v0 } else { 1.0 })).collect()
            })
            .filter(|v: &Vec<(f64, f64)>| !v.is_empty())
            .collect();
        let gens = per.iter().map(Vec::len).max().unwrap_or(0);
        if gens == 0 {
            continue;
        }
        last_gen = last_gen.max((gens - 1) as f64);
        let at = |g: usize, k: usize| -> f64 {
            let v: Vec<f64> = per.iter().filter_map(|p| p.get(g).or(p.last())).map(|x| [x.0, x.1][k]).collect();
            mean(&v).unwrap_or(0.0)
        };
        let name = r.name().to_string();
        mean_series.push(Series {
            name: name.clone(),
            points: (0..gens).map(|g| (g as f64, at(g, 0))).collect(),
            band: Vec::new(),
        });
        var_series.push(Series { name, points: (0..gens).map(|g| (g as f64, at(g, 1))).collect(), band: Vec::new() });
    }
    if mean_series.is_empty() {
        return Ok(());
    }
    let plot = |title: &str, y: &str, series: Vec<Series>, y_max: f64| LinePlot {
        title: title.into(),
        x_label: "GA generation".into(),
        y_label: y.into(),
        x_range: (0.0, last_gen),
        y_range: (0.0, y_max),
        series,
    };
    let top = mean_series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0f64, f64::max);
    render(
        &plot(&format!("Residual risk of the GA's best suite (n = {n})"), "mean residual risk", mean_series, top * 1.1),
        &out.join("risk_mean"),
    )?;
    render(
        &plot(
            &format!("Variance of the risk estimate (n = {n})"),
            "variance / variance at generation 0",
            var_series,
            1.05,
        ),
        &out.join("risk_variance"),
    )?;
    Ok(())
}
