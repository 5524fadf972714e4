//! Sequence coverage in the analysis (issue 20): means per algorithm, Table 6 on each
//! criterion and the correlation of each criterion with the mutation score, on a hand-made
//! study whose answers are known; and a study without sequence columns says so.

use std::path::Path;

use clowder_analysis::load::SEQ_METRICS;
use clowder_analysis::{Options, WriteOptions, analyze, load, report};
use clowder_schema::{RUNS, TableWriter, Value};

/// Two algorithms on four projects, two seeds each. Algorithm `a`: K-H t=2 = 0.1·k + 0.01·s on
/// project k, seed s, and k + s of 10 mutants killed, so its per-project means of both lie on
/// a rising line; `b`: K-H t=2 = 0.05·k and 5 − k killed, a falling line. Every other sequence
/// criterion is 0.5 everywhere. Statement coverage is 0.2·k (`a`) and 0.1·k (`b`).
fn write_study(dir: &Path, with_sequence: bool) {
    std::fs::create_dir_all(dir).unwrap();
    let mut w = TableWriter::create(dir, RUNS).unwrap();
    for (alg, kh2, cov, killed) in [
        (
            "a",
            (|k: u64, s: u64| 0.1 * k as f64 + 0.01 * s as f64) as fn(u64, u64) -> f64,
            0.2,
            (|k, s| k + s) as fn(u64, u64) -> u64,
        ),
        ("b", |k, _| 0.05 * k as f64, 0.1, |k, _| 5 - k),
    ] {
        for k in 1..=4u64 {
            for s in 1..=2u64 {
                let mut cells: Vec<(&str, Value)> = vec![
                    ("run_id", format!("{alg}{k}{s}").into()),
                    ("dataset", "d".into()),
                    ("project", format!("p{k}").into()),
                    ("project_hash", format!("h{k}").into()),
                    ("algorithm", alg.into()),
                    ("config", "{}".into()),
                    ("seed", s.into()),
                    ("budget_unit", "steps".into()),
                    ("budget", 100u64.into()),
                    ("status", "ok".into()),
                    ("error", "".into()),
                    ("coverage", (cov * k as f64).into()),
                    ("mutants", 10u32.into()),
                    ("mutants_killed", Value::U(killed(k, s))),
                    ("mutants_excluded", 0u32.into()),
                    ("mutants_timeout", 0u32.into()),
                    ("mutation_score", (killed(k, s) as f64 / 10.0).into()),
                ];
                if with_sequence {
                    cells.push(("seq_alphabet", 6u32.into()));
                    cells.push(("seq_kh2", kh2(k, s).into()));
                    cells.extend(SEQ_METRICS[1..].iter().map(|&m| (m, 0.5f64.into())));
                }
                w.push(&RUNS.row(cells).unwrap()).unwrap();
            }
        }
    }
    w.finish().unwrap();
}

#[test]
fn criteria_per_algorithm_table6_and_correlation_with_the_mutation_score() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("study");
    write_study(&dir, true);
    let res = load(&dir).unwrap();
    let an = analyze(&res, &Options::default()).unwrap();
    let seq = an.datasets[0].sequence.as_ref().expect("sequence analysis");

    let a = &seq.rows[0];
    assert_eq!((a.algorithm.as_str(), a.projects, a.runs), ("a", 4, 8));
    assert!((a.means[0].unwrap() - 0.265).abs() < 1e-12, "{:?}", a.means);
    assert!(a.means[1..].iter().all(|&m| m == Some(0.5)));
    assert!((seq.rows[1].means[0].unwrap() - 0.125).abs() < 1e-12);

    // Table 6 on K-H t=2: a's two runs beat b's on every project (Â12 = 1; two seeds are too
    // few for significance); on the constant criteria every project ties.
    let kh2 = &seq.table6[0];
    assert_eq!(kh2.metric, "seq_kh2");
    let c = &kh2.comparisons[0];
    assert_eq!((c.a.as_str(), c.b.as_str(), c.better, c.sig_better, c.equal), ("a", "b", 4, 0, 0));
    assert_eq!(c.mean_a12, Some(1.0));
    for t in &seq.table6[1..] {
        assert_eq!(t.comparisons[0].equal, 4, "{}", t.metric);
    }

    let r = |alg: &str, criterion: &str| {
        seq.correlations.iter().find(|c| c.algorithm == alg && c.criterion == criterion).unwrap().pearson
    };
    for criterion in ["coverage", "seq_kh2"] {
        let (pa, pb) = (r("a", criterion).unwrap(), r("b", criterion).unwrap());
        assert!((pa.r - 1.0).abs() < 1e-9 && (pb.r + 1.0).abs() < 1e-9, "{criterion}: {pa:?} {pb:?}");
        assert_eq!(pa.n, 4);
    }
    assert!(r("a", "seq_win3").is_none(), "a constant criterion has no correlation");

    let out = tmp.path().join("report");
    let files =
        report::write(&an, &res, &out, &WriteOptions { title: "t".into(), plots: false, per_run_timelines: false })
            .unwrap();
    for f in ["sequence_coverage.csv", "sequence_table6.csv", "mutation_correlation.csv", "sequence_table6.tex"] {
        assert!(files.iter().any(|p| p.to_str() == Some(f)), "{f} not in {files:?}");
    }
    let csv = std::fs::read_to_string(out.join("mutation_correlation.csv")).unwrap();
    assert!(csv.starts_with("dataset,algorithm,criterion,projects,r,p\n"), "{csv}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Event-sequence coverage") && md.contains("| K-H t=2 |"), "{md}");
}

#[test]
fn a_study_without_sequence_columns_says_it_has_none() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("study");
    write_study(&dir, false);
    let res = load(&dir).unwrap();
    assert!(res.runs.iter().all(|r| r.seq == [None; 8] && r.seq_alphabet.is_none()));
    let an = analyze(&res, &Options::default()).unwrap();
    assert!(an.datasets[0].sequence.is_none());
    let out = tmp.path().join("report");
    let files =
        report::write(&an, &res, &out, &WriteOptions { title: "t".into(), plots: false, per_run_timelines: false })
            .unwrap();
    assert!(!files.iter().any(|p| p.to_string_lossy().starts_with("sequence")), "{files:?}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Event-sequence coverage\n\nNot available"), "{md}");
}
