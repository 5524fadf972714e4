//! Mutation analysis end to end: an experiment with `mutation = { sample = N }`
//! through the real binary (coordinator, workers, generator, analysis,
//! exports): verdict rows in `mutants.csv`, counts and scores in `runs.csv`,
//! identical on a second run.

use std::path::Path;
use std::process::Command;

fn read_csv(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(text.as_bytes());
    r.records().map(|rec| rec.expect("valid CSV").iter().map(str::to_string).collect()).collect()
}

fn col(rows: &[Vec<String>], name: &str) -> usize {
    rows[0].iter().position(|c| c == name).unwrap_or_else(|| panic!("no column {name}"))
}

fn run(dir: &Path) {
    run_with(dir, "{ sample = 4 }");
}

fn run_with(dir: &Path, mutation: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dataset = root.join("datasets/smoke");
    let exp = dir.join("mut.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"mut\"\ndataset = {:?}\nseeds = 1\nbudget = {{ steps = 2000 }}\nmutation = {mutation}\n\
             [[algorithms]]\nname = \"random\"\n",
            dataset.display().to_string()
        ),
    )
    .unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .args(["run", "--quiet", "--workers", "1", "--output"])
        .arg(dir.join("out"))
        .arg(&exp)
        .status()
        .expect("start clowder");
    assert!(status.success(), "clowder run failed: {status}");
}

#[test]
fn experiments_export_mutant_verdicts() {
    let a = tempfile::tempdir().unwrap();
    run(a.path());
    let runs = read_csv(&a.path().join("out/mut/runs.csv"));
    let mutants = read_csv(&a.path().join("out/mut/mutants.csv"));
    assert!(runs.len() > 1 && mutants.len() > 1, "runs and verdict rows exist");
    let (rid, op, verdict) = (col(&mutants, "run_id"), col(&mutants, "operator"), col(&mutants, "verdict"));
    for r in &mutants[1..] {
        assert!(["KRM", "SBD", "SDM", "AOR", "LOR", "ROR", "NCM", "VRM"].contains(&r[op].as_str()), "{r:?}");
        assert!(["killed", "survived", "timeout", "excluded"].contains(&r[verdict].as_str()), "{r:?}");
    }
    let (id, n, killed, excluded, score, status) = (
        col(&runs, "run_id"),
        col(&runs, "mutants"),
        col(&runs, "mutants_killed"),
        col(&runs, "mutants_excluded"),
        col(&runs, "mutation_score"),
        col(&runs, "status"),
    );
    let mut any_killed = false;
    for r in &runs[1..] {
        assert_eq!(r[status], "ok", "{r:?}");
        let rows: Vec<&Vec<String>> = mutants[1..].iter().filter(|m| m[rid] == r[id]).collect();
        let count = |v: &str| rows.iter().filter(|m| m[verdict] == v).count();
        assert_eq!(r[n].parse::<usize>().unwrap(), rows.len(), "one verdict row per mutant");
        assert_eq!(r[killed].parse::<usize>().unwrap(), count("killed"));
        assert_eq!(r[excluded].parse::<usize>().unwrap(), count("excluded"));
        assert!(rows.iter().filter(|m| m[op] == "SBD").count() <= 4, "sample of at most 4 per operator");
        let judged = rows.len() - count("excluded");
        if judged > 0 {
            let s: f64 = r[score].parse().unwrap();
            assert!((s - count("killed") as f64 / judged as f64).abs() < 1e-12, "{r:?}");
        }
        any_killed |= count("killed") > 0;
    }
    assert!(any_killed, "the generated suites detect some mutants");
    let b = tempfile::tempdir().unwrap();
    run(b.path());
    let x = std::fs::read(a.path().join("out/mut/mutants.csv")).unwrap();
    let y = std::fs::read(b.path().join("out/mut/mutants.csv")).unwrap();
    assert!(x == y, "verdicts are identical between identical studies");
    let digests = |rows: &[Vec<String>]| {
        let d = col(rows, "digest");
        rows[1..].iter().map(|r| r[d].clone()).collect::<Vec<_>>()
    };
    assert_eq!(digests(&runs), digests(&read_csv(&b.path().join("out/mut/runs.csv"))));
}

/// `clowder mutate-study` on a study run with mutation analysis off gives the verdicts and
/// counts the same study gets with mutation analysis on, and its output folder analyses.
#[test]
fn follow_up_analysis_of_stored_suites_equals_in_run_analysis() {
    let on = tempfile::tempdir().unwrap();
    run(on.path());
    let off = tempfile::tempdir().unwrap();
    run_with(off.path(), "\"off\"");
    let followed = off.path().join("followed");
    let st = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .args(["mutate-study", "--sample", "4", "--jobs", "2", "--out"])
        .arg(&followed)
        .arg(off.path().join("out/mut"))
        .status()
        .expect("start clowder");
    assert!(st.success(), "clowder mutate-study failed: {st}");
    // Keyed by project and seed: run ids differ between the two studies (mutation is part of
    // a run's identity).
    let verdicts = |path: &Path| {
        let rows = read_csv(path);
        let c: Vec<usize> =
            ["project", "seed", "mutant_id", "operator", "block_id", "verdict"].iter().map(|n| col(&rows, n)).collect();
        let mut v: Vec<Vec<String>> = rows[1..].iter().map(|r| c.iter().map(|&i| r[i].clone()).collect()).collect();
        v.sort();
        v
    };
    let expected = verdicts(&on.path().join("out/mut/mutants.csv"));
    assert!(expected.len() > 10, "the in-run study has verdicts");
    assert_eq!(verdicts(&followed.join("mutants.csv")), expected);
    let counts = |path: &Path| {
        let rows = read_csv(path);
        let c: Vec<usize> = [
            "project",
            "seed",
            "status",
            "mutants",
            "mutants_killed",
            "mutants_excluded",
            "mutants_timeout",
            "mutation_score",
        ]
        .iter()
        .map(|n| col(&rows, n))
        .collect();
        let mut v: Vec<Vec<String>> = rows[1..].iter().map(|r| c.iter().map(|&i| r[i].clone()).collect()).collect();
        v.sort();
        v
    };
    assert_eq!(counts(&followed.join("runs.csv")), counts(&on.path().join("out/mut/runs.csv")));
    let failures = read_csv(&followed.join("mutation_failures.csv"));
    assert_eq!(failures.len(), 1, "no failures, header only: {failures:?}");
    // Written by the exports' writer: Parquet next to every CSV, and the study's own columns
    // (sequence coverage among them) carried over unchanged.
    for t in ["runs", "mutants", "mutation_failures", "timeline", "provenance"] {
        assert!(followed.join(format!("{t}.parquet")).is_file(), "{t}.parquet written");
    }
    let kept = |path: &Path| {
        let rows = read_csv(path);
        let c: Vec<usize> = ["run_id", "coverage", "seq_alphabet", "seq_kh2", "seq_win3_unmin", "digest"]
            .iter()
            .map(|n| col(&rows, n))
            .collect();
        rows[1..].iter().map(|r| c.iter().map(|&i| r[i].clone()).collect::<Vec<_>>()).collect::<Vec<_>>()
    };
    let study = kept(&off.path().join("out/mut/runs.csv"));
    assert!(study.iter().all(|r| !r[2].is_empty() && !r[3].is_empty()), "the study has sequence coverage");
    assert_eq!(kept(&followed.join("runs.csv")), study);
    // The analysis reads the follow-up's Parquet files (preferred over CSV).
    let st = Command::new(env!("CARGO_BIN_EXE_clowder")).arg("analyze").arg(&followed).status().expect("start");
    assert!(st.success(), "clowder analyze failed: {st}");
    let md = std::fs::read_to_string(followed.join("report/report.md")).unwrap();
    assert!(md.contains("runs.parquet") && md.contains("### Correlation with the mutation score"), "{md}");
    // A second follow-up never overwrites a folder with results in it.
    let again = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .args(["mutate-study", "--out"])
        .arg(&followed)
        .arg(off.path().join("out/mut"))
        .output()
        .expect("start clowder");
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"), "{again:?}");
}
