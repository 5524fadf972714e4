//! The smoke experiment end to end through the real binary: coordinator,
//! gRPC workers, VM and generator. Two runs must give the same exports
//! except for the timing column.

use std::path::Path;
use std::process::Command;

fn run_smoke(out: &Path, workers: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let status = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .current_dir(&root)
        .args(["run", "experiments/smoke.toml", "--quiet", "--workers", workers, "--output"])
        .arg(out)
        .status()
        .expect("start clowder");
    assert!(status.success(), "clowder run failed: {status}");
    std::fs::read_to_string(out.join("smoke/runs.csv")).expect("runs.csv written")
}

/// Parses a CSV (RFC 4180 quoting) and drops the timing column (`duration_ms`).
fn without_timing(csv_text: &str) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(csv_text.as_bytes());
    let mut rows: Vec<Vec<String>> =
        r.records().map(|rec| rec.expect("valid CSV").iter().map(str::to_string).collect()).collect();
    let col = rows[0].iter().position(|c| c == "duration_ms").expect("duration_ms column");
    for r in &mut rows {
        r.remove(col);
    }
    rows
}

#[test]
fn smoke_runs_are_byte_identical_except_timing() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    // Different worker counts: results must not depend on scheduling.
    let first = run_smoke(a.path(), "2");
    let second = run_smoke(b.path(), "1");
    let (ra, rb) = (without_timing(&first), without_timing(&second));
    // experiments/smoke.toml: 5 projects × Random, MOSA, MIO × 10 seeds, mutation analysis on.
    assert_eq!(ra.len(), 1 + 5 * 3 * 10, "one row per run");
    assert_eq!(ra, rb);
    let algorithm = ra[0].iter().position(|c| c == "algorithm").unwrap();
    let algorithms: std::collections::BTreeSet<&str> = ra[1..].iter().map(|r| r[algorithm].as_str()).collect();
    assert_eq!(algorithms, ["mio", "mosa", "random"].into_iter().collect(), "the three algorithms");
    let mutants = ra[0].iter().position(|c| c == "mutants").unwrap();
    assert!(ra[1..].iter().all(|r| r[mutants].parse::<u64>().unwrap() > 0), "every run has mutation analysis");
    let status = ra[0].iter().position(|c| c == "status").unwrap();
    assert!(ra[1..].iter().all(|r| r[status] == "ok"), "every smoke run succeeds: {first}");
    let cov = ra[0].iter().position(|c| c == "coverage").unwrap();
    assert!(ra[1..].iter().any(|r| r[cov].parse::<f64>().unwrap() > 0.5), "the generator covers something");
    // Timeline and mutants have no timing column: byte-identical.
    for f in ["timeline.csv", "mutants.csv"] {
        let x = std::fs::read(a.path().join("smoke").join(f)).unwrap();
        let y = std::fs::read(b.path().join("smoke").join(f)).unwrap();
        assert!(x == y, "{f} differs between identical studies");
    }
}

#[test]
fn unknown_key_in_experiment_is_reported_with_line() {
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("bad.toml");
    std::fs::write(&exp, "name = \"x\"\ndataset = \".\"\nseeds = 1\nbudget = { steps = 10 }\nwokers = 3\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_clowder")).arg("run").arg(&exp).output().expect("start clowder");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("wokers") && err.contains("line 5"), "stderr: {err}");
}
