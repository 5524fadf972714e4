//! `--incomplete exclude|compare` and `limit` runs on a synthetic study with failed, missing,
//! pending, cancelled and work-capped runs (2 datasets, 44 projects × 3 algorithms, 10 or 5
//! seeds), against per-project U, p, Â12, n and the Table-6 counts derived independently with
//! pandas + scipy by `scripts/stats_fixtures.py` (fixture `tests/fixtures/incomplete`).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clowder_analysis::compute::Comparison;
use clowder_analysis::{Analysis, Incomplete, Options, Results, WriteOptions, analyze, load, report};
use common::{read_csv, rel_err};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/incomplete")
}

fn expected(name: &str, mode: &str) -> Vec<BTreeMap<String, String>> {
    read_csv(&fixture_dir().join(name)).into_iter().filter(|r| r["mode"] == mode).collect()
}

fn run(incomplete: Incomplete) -> (Results, Analysis) {
    let res = load(&fixture_dir()).unwrap();
    let an = analyze(&res, &Options { incomplete, ..Options::default() }).unwrap();
    (res, an)
}

fn comparison<'a>(an: &'a Analysis, row: &BTreeMap<String, String>) -> &'a Comparison {
    let d = an.datasets.iter().find(|d| d.name == row["dataset"]).expect("dataset");
    d.comparisons.iter().find(|c| c.a == row["a"] && c.b == row["b"]).expect("comparison")
}

fn num<T: std::str::FromStr>(row: &BTreeMap<String, String>, k: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    row[k].parse().unwrap()
}

/// Per-project n, U, Â12 and p, and the projects compared, for one rule.
fn check_pairs(an: &Analysis, mode: &str) -> usize {
    let want = expected("expected_pairs.csv", mode);
    let mut per_comparison: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    let mut worst = 0.0f64;
    for e in &want {
        let c = comparison(an, e);
        let what = format!("{mode}: {} {} vs {} on {}", e["dataset"], e["a"], e["b"], e["project"]);
        let p = c.projects.iter().find(|p| p.project == e["project"]).unwrap_or_else(|| panic!("{what}: not compared"));
        assert_eq!((p.counts.n1, p.counts.n2), (num(e, "n_a"), num(e, "n_b")), "{what}: n");
        assert_eq!(p.counts.u(), num::<f64>(e, "u"), "{what}: U");
        assert_eq!(p.counts.a12(), num::<f64>(e, "a12"), "{what}: Â12");
        let err = rel_err(p.p, num(e, "p"));
        assert!(err <= 1e-12, "{what}: p {} vs scipy {} (relative error {err:e})", p.p, e["p"]);
        worst = worst.max(err);
        *per_comparison.entry((e["dataset"].clone(), e["a"].clone(), e["b"].clone())).or_default() += 1;
    }
    // Nothing compared beyond what scipy compared.
    for d in &an.datasets {
        for c in &d.comparisons {
            let n = per_comparison.get(&(d.name.clone(), c.a.clone(), c.b.clone())).copied().unwrap_or(0);
            assert_eq!(c.projects.len(), n, "{mode}: {} {} vs {}: projects compared", d.name, c.a, c.b);
        }
    }
    eprintln!("{mode}: max relative p error vs scipy {worst:e}");
    want.len()
}

/// Table-6 counts, excluded counts and mean Â12 for one rule.
fn check_table6(an: &Analysis, mode: &str) {
    let want = expected("expected_table6.csv", mode);
    assert_eq!(want.len(), 6);
    for e in &want {
        let c = comparison(an, e);
        let got = (c.projects.len(), c.excluded.len(), c.sig_better, c.better, c.equal, c.worse, c.sig_worse);
        let n = |k: &str| num::<usize>(e, k);
        let exp = (n("compared"), n("excluded"), n("sig_better"), n("better"), n("equal"), n("worse"), n("sig_worse"));
        assert_eq!(got, exp, "{mode}: {} {} vs {}", e["dataset"], e["a"], e["b"]);
        let mean: f64 = num(e, "mean_a12");
        let got_mean = c.mean_a12.unwrap();
        assert!((got_mean - mean).abs() <= 1e-12, "{mode}: mean Â12 {got_mean} vs {mean}");
    }
}

/// The projects excluded from each comparison, with the results each side had.
fn check_excluded(an: &Analysis, mode: &str) -> BTreeSet<(String, String, String, String)> {
    let want: BTreeSet<_> = expected("expected_excluded.csv", mode)
        .iter()
        .map(|e| {
            let key = (e["dataset"].clone(), e["a"].clone(), e["b"].clone(), e["project"].clone());
            (key, (num::<usize>(e, "n_a"), num::<usize>(e, "n_b")))
        })
        .collect();
    let got: BTreeSet<_> = an
        .datasets
        .iter()
        .flat_map(|d| {
            d.comparisons.iter().flat_map(move |c| {
                c.excluded
                    .iter()
                    .map(move |x| ((d.name.clone(), c.a.clone(), c.b.clone(), x.project.clone()), (x.n_a, x.n_b)))
            })
        })
        .collect();
    assert_eq!(got, want, "{mode}: excluded projects");
    got.into_iter().map(|(k, _)| k).collect()
}

#[test]
fn compare_mode_matches_scipy() {
    let (_, an) = run(Incomplete::Compare);
    let compared = check_pairs(&an, "compare");
    check_table6(&an, "compare");
    let excluded = check_excluded(&an, "compare");
    // The fixture exercises what the rule is about: unequal n, the smallest compared n (2),
    // and exclusions for 1 and 0 results.
    let all: Vec<_> = an.datasets.iter().flat_map(|d| &d.comparisons).collect();
    let pairs = all.iter().flat_map(|c| &c.projects);
    assert!(pairs.clone().filter(|p| p.counts.n1 != p.counts.n2).count() >= 20);
    assert!(pairs.clone().any(|p| p.counts.n1.min(p.counts.n2) == 2));
    let excl: Vec<_> = all.iter().flat_map(|c| &c.excluded).collect();
    assert!(excl.iter().any(|x| x.n_a.min(x.n_b) == 1) && excl.iter().any(|x| x.n_a.min(x.n_b) == 0));
    assert!(all.iter().map(|c| c.sig_better).sum::<usize>() >= 10);
    assert!(all.iter().map(|c| c.sig_worse).sum::<usize>() >= 1);
    assert!(all.iter().map(|c| c.equal).sum::<usize>() >= 10);
    assert!(compared >= 80 && excluded.len() >= 30);
}

#[test]
fn exclude_mode_excludes_exactly_the_incomplete_projects() {
    let (_, an) = run(Incomplete::Exclude);
    check_pairs(&an, "exclude");
    check_table6(&an, "exclude");
    let excluded = check_excluded(&an, "exclude");
    // Excluded = involved projects where A or B lacks a result for some expected seed, which
    // are exactly the cells listed in `exclusions`.
    for d in &an.datasets {
        let incomplete: BTreeSet<(&str, &str)> =
            d.exclusions.iter().map(|e| (e.project.as_str(), e.algorithm.as_str())).collect();
        for c in &d.comparisons {
            for p in &c.projects {
                assert!(!incomplete.contains(&(p.project.as_str(), c.a.as_str())), "{}", p.project);
                assert!(!incomplete.contains(&(p.project.as_str(), c.b.as_str())), "{}", p.project);
            }
            for x in &c.excluded {
                let lacks = |alg: &str| incomplete.contains(&(x.project.as_str(), alg));
                assert!(lacks(&c.a) || lacks(&c.b), "{} excluded from {} vs {}", x.project, c.a, c.b);
            }
        }
    }
    // Compare mode only adds projects: every project compared under exclude is compared there
    // with the same numbers.
    let (_, cmp) = run(Incomplete::Compare);
    for (d, dc) in an.datasets.iter().zip(&cmp.datasets) {
        for (c, cc) in d.comparisons.iter().zip(&dc.comparisons) {
            for p in &c.projects {
                assert!(cc.projects.contains(p), "{} {} vs {}: {}", d.name, c.a, c.b, p.project);
            }
            assert!(cc.projects.len() > c.projects.len() || c.excluded.is_empty());
        }
    }
    assert!(excluded.len() >= 60);
}

#[test]
fn limit_runs_count_as_results_and_are_reported() {
    for mode in [Incomplete::Exclude, Incomplete::Compare] {
        let (res, an) = run(mode);
        for e in read_csv(&fixture_dir().join("expected_limit.csv")) {
            let d = an.datasets.iter().find(|d| d.name == e["dataset"]).unwrap();
            let r = d.coverage.iter().find(|r| r.algorithm == e["algorithm"]).unwrap();
            assert_eq!((r.runs_limit, r.runs_ok), (num(&e, "runs_limit"), num(&e, "runs_result")), "{}", r.algorithm);
        }
        let tmp = tempfile::tempdir().unwrap();
        let wo = WriteOptions { title: "incomplete".into(), plots: false, per_run_timelines: false };
        report::write(&an, &res, tmp.path(), &wo).unwrap();
        let md = std::fs::read_to_string(tmp.path().join("report.md")).unwrap();
        let rule = format!("`--incomplete {}`", mode.name());
        assert!(md.contains(&format!("- **Incomplete repetitions**: {rule}:")), "{md}");
        assert!(md.contains("count as results like `ok` runs"), "{md}");
        assert!(md.contains("| d1 | mio | 15 | 273 |"), "{md}");
        let limit = std::fs::read_to_string(tmp.path().join("limit_runs.csv")).unwrap();
        assert!(limit.starts_with("dataset,algorithm,runs_limit,runs_ok\nd1,mio,15,273\n"), "{limit}");
        let pairs = std::fs::read_to_string(tmp.path().join("pairs.csv")).unwrap();
        assert!(pairs.starts_with("dataset,a,b,project,mean_a,mean_b,n_a,n_b,u_a,"), "{pairs}");
        let headline = report::headline(&an);
        assert!(headline.contains(&format!("--incomplete {}", mode.name())) && headline.contains("Runs limit"));
    }
}

#[test]
fn studies_without_limit_runs_get_no_limit_table() {
    let res = load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/table6")).unwrap();
    let an = analyze(&res, &Options::default()).unwrap();
    assert!(an.datasets.iter().flat_map(|d| &d.coverage).all(|r| r.runs_limit == 0));
    let t = report::tables(&an);
    assert!(t.limit_runs.rows.is_empty());
    assert!(!report::headline(&an).contains("Runs limit"));
}

#[test]
fn limit_runs_without_coverage_are_failures() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("runs.csv"),
        "project,algorithm,seed,status,coverage\n\
         p,a,1,limit,0.5\np,a,2,limit,\np,a,3,pending,\np,b,1,ok,0.25\np,b,2,ok,0.75\np,b,3,ok,0.5\n",
    )
    .unwrap();
    let res = load(tmp.path()).unwrap();
    assert!(res.notes.iter().any(|n| n.contains("1 ok/limit run(s) without coverage")), "{:?}", res.notes);
    let statuses: Vec<&str> = res.runs.iter().map(|r| r.status.as_str()).collect();
    assert_eq!(statuses, ["limit", "limit_without_coverage", "pending", "ok", "ok", "ok"]);
    let an = analyze(&res, &Options { incomplete: Incomplete::Compare, ..Options::default() }).unwrap();
    let c = &an.datasets[0].comparisons[0];
    // a has one result (the capped seed 1): too few to compare.
    assert_eq!(c.excluded[0].n_a, 1);
    assert_eq!((an.datasets[0].coverage[0].runs_ok, an.datasets[0].coverage[0].runs_not_ok), (1, 2));
}

/// Exports carry a `work` column (VM work, u64, empty for runs without a result) since the work
/// cap; the study loads exactly as from the older export without it (the fixture).
#[test]
fn the_work_column_of_newer_exports_is_accepted() {
    let old = load(&fixture_dir()).unwrap();
    let text = std::fs::read_to_string(fixture_dir().join("runs.csv")).unwrap();
    let mut with_work = String::new();
    for (i, line) in text.lines().enumerate() {
        // The loader reads columns by name, so appending the column is as good as the
        // exporter's place for it (after `evaluations`).
        let work = match i {
            0 => "work".to_string(),
            _ if line.contains(",ok,") || line.contains(",limit,") => (20_000_000_000u64 + i as u64).to_string(),
            _ => String::new(),
        };
        with_work.push_str(&format!("{line},{work}\n"));
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("runs.csv"), with_work).unwrap();
    let new = load(tmp.path()).unwrap();
    assert!(new.runs.iter().any(|r| r.is_limit()));
    assert_eq!(new.runs, old.runs);
    assert_eq!(new.notes, old.notes);
}

#[test]
fn exact_p_and_holm_work_with_unequal_sizes() {
    let res = load(&fixture_dir()).unwrap();
    let base = analyze(&res, &Options { incomplete: Incomplete::Compare, ..Options::default() }).unwrap();
    for opts in [
        Options { incomplete: Incomplete::Compare, p_method: clowder_analysis::PMethod::Exact, ..Options::default() },
        Options { incomplete: Incomplete::Compare, holm: true, ..Options::default() },
    ] {
        let an = analyze(&res, &opts).unwrap();
        for (d, db) in an.datasets.iter().zip(&base.datasets) {
            for (c, cb) in d.comparisons.iter().zip(&db.comparisons) {
                // Only p changes: the same projects, sizes, U and verdict directions.
                assert_eq!(
                    (c.excluded.clone(), c.better, c.equal, c.worse),
                    (cb.excluded.clone(), cb.better, cb.equal, cb.worse)
                );
                for (p, pb) in c.projects.iter().zip(&cb.projects) {
                    assert_eq!((&p.project, p.counts), (&pb.project, pb.counts));
                    assert!((0.0..=1.0).contains(&p.p_used));
                }
            }
        }
    }
}
