//! The tables of the selection study (the paper's Tables III and IV, the paired comparison
//! with unranked selection, per-project facts): `summary.csv`, `tables.md` and `times.md`.

use std::fmt::Write as _;

use super::study::{Method, Project, RARE, Ranking, StudyOptions, mean, probabilities};
use crate::stats::sign_test;
use crate::table::{Cell as C, Table};

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
pub fn summary(outs: &[Project], opts: &StudyOptions) -> Table {
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
                    let Some(c) = o.cell(ranking, m, n) else { continue };
                    let p = probabilities(&o.kill_rates(), &c.caught, opts.repetitions);
                    all.extend(p.iter().map(|x| x.0));
                    rare.extend(p.iter().filter(|x| x.1).map(|x| x.0));
                    per_project.extend(o.detection(c, opts.repetitions).all);
                    if let Some(&(_, universe, total)) = o.universe.iter().find(|u| u.0 == ranking) {
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
        .find(|row| {
            // `get`, not indexing: `s` comes from the caller and may have fewer columns.
            let key = |i: usize, v: &str| row.get(i).is_some_and(|c| c.csv == v);
            key(0, r.name()) && key(1, m.name()) && key(2, &n.to_string())
        })
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
fn paired(outs: &[Project], opts: &StudyOptions, method: Method, rare: bool) -> Table {
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
                let (Some(a), Some(u)) = (o.cell(r, method, n), o.cell(r, Method::Unranked, n)) else { continue };
                let (da, du) = (o.detection(a, opts.repetitions), o.detection(u, opts.repetitions));
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
pub fn tables_md(outs: &[Project], opts: &StudyOptions, settings: &str, summary: &Table) -> String {
    let mut s = String::from("# Suite-selection study\n\n");
    let mutants: usize = outs.iter().map(|o| o.mutants.len()).sum();
    let rates: Vec<Option<f64>> = outs.iter().flat_map(Project::kill_rates).collect();
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
fn per_project(outs: &[Project], opts: &StudyOptions) -> Table {
    let n = opts.sizes.get(opts.sizes.len() / 2).copied().unwrap_or(0);
    // Without any ranking (the CLI requires one) there is no cell: the method columns stay empty.
    let r = if opts.rankings.contains(&Ranking::Win2) { Some(Ranking::Win2) } else { opts.rankings.first().copied() };
    let name = r.map_or("", Ranking::name);
    let heads = [format!("GA {name} n={n}"), format!("best of {name} n={n}"), format!("unranked n={n}")];
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
        let q = o.kill_rates();
        let d = |m| r.and_then(|r| o.cell(r, m, n)).and_then(|c| o.detection(c, opts.repetitions).all);
        t.push(vec![
            C::text(o.name.as_str()),
            C::int(o.alphabet as u64),
            C::int(u64::from(o.targets)),
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
pub fn times_md(outs: &[Project], opts: &StudyOptions) -> String {
    let t = per_n_table("times", "", opts, |r, m, n| {
        let ms: Vec<f64> = outs
            .iter()
            .filter_map(|o| {
                let i = o.cells.iter().position(|c| c.ranking == r && c.method == m && c.n == n)?;
                Some(o.cell_seconds.get(i)? * 1000.0 / f64::from(opts.repetitions))
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
