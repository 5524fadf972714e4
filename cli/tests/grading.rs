//! A test experiment end to end through the real binary (`experiments/grading-smoke.toml`:
//! the repository's own suite on datasets/smoke): coordinator, workers fetching the suite by
//! hash, `tests.csv`. The same study twice, and with another worker count, gives the same
//! rows; the verdicts are the ones the suite and projects call for.

use std::path::Path;
use std::process::Command;

fn run(out: &Path, workers: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let status = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .current_dir(&root)
        .args(["run", "experiments/grading-smoke.toml", "--quiet", "--workers", workers, "--output"])
        .arg(out)
        .status()
        .expect("start clowder");
    assert!(status.success(), "clowder run failed: {status}");
}

fn rows(path: &Path) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new().has_headers(false).from_path(path).expect("CSV written");
    r.records().map(|rec| rec.expect("valid CSV").iter().map(str::to_string).collect()).collect()
}

/// Rows without the timing column.
fn runs_without_timing(dir: &Path) -> Vec<Vec<String>> {
    let mut rows = rows(&dir.join("grading-smoke/runs.csv"));
    let col = rows[0].iter().position(|c| c == "duration_ms").expect("duration_ms column");
    rows.iter_mut().for_each(|r| drop(r.remove(col)));
    rows
}

#[test]
fn a_test_experiment_grades_every_project_the_same_for_any_worker_count() {
    let (a, b, c) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    run(a.path(), "2");
    run(b.path(), "2");
    run(c.path(), "1");
    let tests_a = std::fs::read(a.path().join("grading-smoke/tests.csv")).expect("tests.csv");
    for other in [&b, &c] {
        let t = std::fs::read(other.path().join("grading-smoke/tests.csv")).expect("tests.csv");
        assert!(t == tests_a, "tests.csv differs between identical studies");
        assert_eq!(runs_without_timing(other.path()), runs_without_timing(a.path()));
    }
    let runs = runs_without_timing(a.path());
    assert_eq!(runs.len(), 1 + 5 * 2, "one run per (project, seed)");
    let status = runs[0].iter().position(|c| c == "status").unwrap();
    assert!(runs[1..].iter().all(|r| r[status] == "ok"), "verdicts are data, runs are ok: {runs:?}");

    let tests = rows(&a.path().join("grading-smoke/tests.csv"));
    let col = |name: &str| tests[0].iter().position(|c| c == name).unwrap_or_else(|| panic!("column {name}"));
    let (project, seed, suite, test, verdict, message) =
        (col("project"), col("seed"), col("suite"), col("test"), col("verdict"), col("message"));
    assert_eq!(tests.len(), 1 + 5 * 2 * 4, "one row per (project, seed, test)");
    assert!(tests[1..].iter().all(|r| r[suite] == "SmokeTest.js" && r[col("algorithm")] == "smoke-suite"));
    let verdicts = |p: &str, s: &str| -> Vec<(String, String)> {
        tests[1..]
            .iter()
            .filter(|r| r[project] == p && r[seed] == s)
            .map(|r| (r[test].clone(), r[verdict].clone()))
            .collect()
    };
    let expect = |v: [(&str, &str); 4]| v.map(|(t, s)| (t.to_string(), s.to_string())).to_vec();
    for s in ["1", "2"] {
        assert_eq!(
            verdicts("arrows", s),
            expect([
                ("moves right", "pass"),
                ("says right side", "pass"),
                ("counts space", "skip"),
                ("says many", "skip")
            ])
        );
        assert_eq!(
            verdicts("counter", s),
            expect([
                ("moves right", "skip"),
                ("says right side", "skip"),
                ("counts space", "pass"),
                ("says many", "fail")
            ])
        );
        for p in ["clicker", "guess", "relay"] {
            assert!(verdicts(p, s).iter().all(|(_, v)| v == "skip"), "{p}: no Player, no Cat");
        }
    }
    let failed = tests[1..].iter().find(|r| r[verdict] == "fail").expect("a failing test");
    assert!(failed[message].contains("many"), "the assertion's message: {failed:?}");
    let skipped = tests[1..].iter().find(|r| r[project] == "relay").expect("relay rows");
    assert!(skipped[message].contains("Could not find sprite"), "the assumption's message: {skipped:?}");
}
