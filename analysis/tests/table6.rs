//! Table-6 counts and the coverage summary on a synthetic study (2 datasets, 58 projects ×
//! 3 algorithms × 20 seeds, heavy ties, failed and missing runs), against the values derived
//! independently with pandas + scipy by `scripts/stats_fixtures.py`.

mod common;

use std::path::Path;

use clowder_analysis::{Options, analyze, load};
use common::read_csv;

fn fixture_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/table6")
}

#[test]
fn table6_counts_match_pandas_and_scipy() {
    let res = load(&fixture_dir()).unwrap();
    assert_eq!(res.runs.len(), 3479);
    let an = analyze(&res, &Options::default()).unwrap();
    let expected = read_csv(&fixture_dir().join("expected_table6.csv"));
    assert_eq!(expected.len(), 6);
    let mut compared_total = 0;
    for e in &expected {
        let d = an.datasets.iter().find(|d| d.name == e["dataset"]).expect("dataset");
        let c = d.comparisons.iter().find(|c| c.a == e["a"] && c.b == e["b"]).expect("comparison");
        let n = |k: &str| e[k].parse::<usize>().unwrap();
        let got = (c.projects.len(), c.excluded.len(), c.sig_better, c.better, c.equal, c.worse, c.sig_worse);
        let want = (n("compared"), n("excluded"), n("sig_better"), n("better"), n("equal"), n("worse"), n("sig_worse"));
        assert_eq!(got, want, "{} {} vs {}", e["dataset"], e["a"], e["b"]);
        assert_eq!(c.better + c.equal + c.worse, c.projects.len());
        let mean: f64 = e["mean_a12"].parse().unwrap();
        let got_mean = c.mean_a12.unwrap();
        assert!((got_mean - mean).abs() <= 1e-12, "mean Â12 {got_mean} vs {mean}");
        compared_total += c.projects.len();
    }
    // The fixture really exercises every column: ties, significance both ways, exclusions.
    let all: Vec<_> = an.datasets.iter().flat_map(|d| &d.comparisons).collect();
    assert!(all.iter().map(|c| c.equal).sum::<usize>() >= 20);
    assert!(all.iter().map(|c| c.sig_better).sum::<usize>() >= 20);
    assert!(all.iter().map(|c| c.sig_worse).sum::<usize>() >= 2);
    assert!(all.iter().map(|c| c.excluded.len()).sum::<usize>() >= 8);
    assert!(compared_total >= 150);
}

#[test]
fn coverage_summary_matches_pandas() {
    let res = load(&fixture_dir()).unwrap();
    let an = analyze(&res, &Options::default()).unwrap();
    for e in read_csv(&fixture_dir().join("expected_coverage.csv")) {
        let d = an.datasets.iter().find(|d| d.name == e["dataset"]).unwrap();
        let r = d.coverage.iter().find(|r| r.algorithm == e["algorithm"]).unwrap();
        assert_eq!(r.projects, e["projects"].parse::<usize>().unwrap());
        assert_eq!(r.runs_ok, e["runs_ok"].parse::<usize>().unwrap());
        assert_eq!(r.runs_not_ok, e["runs_not_ok"].parse::<usize>().unwrap());
        let mean: f64 = e["mean"].parse().unwrap();
        let median: f64 = e["median"].parse().unwrap();
        assert!((r.mean.unwrap() - mean).abs() <= 1e-12, "{}: mean", r.algorithm);
        assert!((r.median.unwrap() - median).abs() <= 1e-12, "{}: median", r.algorithm);
    }
}

#[test]
fn exclusions_name_the_reason() {
    let res = load(&fixture_dir()).unwrap();
    let an = analyze(&res, &Options::default()).unwrap();
    let d1 = an.datasets.iter().find(|d| d.name == "d1").unwrap();
    let find = |p: &str, a: &str| d1.exclusions.iter().find(|e| e.project == p && e.algorithm == a).unwrap();
    assert_eq!(find("p007", "mosa").reason, "seed 13: error (vm error: synthetic)");
    assert_eq!(find("p031", "random").reason, "missing seed(s) 20");
    assert!(find("p040", "mio").reason.starts_with("seed 1: infra_failure (worker lost); seed 2: infra_failure"));
}

#[test]
fn holm_and_exact_change_only_significance() {
    let res = load(&fixture_dir()).unwrap();
    let plain = analyze(&res, &Options::default()).unwrap();
    let holm = analyze(&res, &Options { holm: true, ..Options::default() }).unwrap();
    let exact = analyze(&res, &Options { p_method: clowder_analysis::PMethod::Exact, ..Options::default() }).unwrap();
    for ((p, h), x) in plain.datasets.iter().zip(&holm.datasets).zip(&exact.datasets) {
        for ((cp, ch), cx) in p.comparisons.iter().zip(&h.comparisons).zip(&x.comparisons) {
            for c in [ch, cx] {
                assert_eq!((cp.better, cp.equal, cp.worse), (c.better, c.equal, c.worse));
                assert_eq!(cp.mean_a12, c.mean_a12);
            }
            // Holm never finds more significant projects than unadjusted p-values.
            assert!(ch.sig_better <= cp.sig_better && ch.sig_worse <= cp.sig_worse);
        }
    }
    let sig = |a: &clowder_analysis::Analysis| -> usize {
        a.datasets.iter().flat_map(|d| &d.comparisons).map(|c| c.sig_better + c.sig_worse).sum()
    };
    assert!(sig(&holm) < sig(&plain), "Holm should remove some significant results here");
}

#[test]
fn compare_option_orients_and_validates() {
    let res = load(&fixture_dir()).unwrap();
    let opts = Options { compare: vec![("random".into(), "mio".into())], ..Options::default() };
    let an = analyze(&res, &opts).unwrap();
    let base = analyze(&res, &Options::default()).unwrap();
    for (d, b) in an.datasets.iter().zip(&base.datasets) {
        assert_eq!(d.comparisons.len(), 1);
        let r = &d.comparisons[0];
        let m = b.comparisons.iter().find(|c| c.a == "mio" && c.b == "random").unwrap();
        // Swapping A and B mirrors the counts.
        assert_eq!(
            (r.better, r.equal, r.worse, r.sig_better, r.sig_worse),
            (m.worse, m.equal, m.better, m.sig_worse, m.sig_better)
        );
        assert!((r.mean_a12.unwrap() + m.mean_a12.unwrap() - 1.0).abs() < 1e-12);
    }
    let bad = Options { compare: vec![("mio".into(), "nope".into())], ..Options::default() };
    let e = analyze(&res, &bad).unwrap_err().to_string();
    assert!(e.contains("unknown algorithm \"nope\"") && e.contains("mio, mosa, random"), "{e}");
}
