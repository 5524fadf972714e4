//! The exports against the schema: every `runs` column holds the field it names, results
//! stored before a column existed leave it empty, and the other tables follow their rows.

use std::collections::BTreeMap;

use super::*;
use crate::store::tests::{finish, run};
use clowder_proto::{Provenance, RunStatus, SequenceCoverage, TimelineSample};

fn read(path: &Path) -> (Vec<String>, Vec<BTreeMap<String, String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let rows =
        r.records().map(|rec| header.iter().cloned().zip(rec.unwrap().iter().map(str::to_string)).collect()).collect();
    (header, rows)
}

fn verdict(id: &str, v: &str) -> MutantVerdict {
    MutantVerdict {
        mutant_id: id.into(),
        operator: "SBD".into(),
        block_id: "b".into(),
        verdict: v.into(),
        stratum_size: 9,
    }
}

fn full_result() -> RunResult {
    RunResult {
        status: RunStatus::Ok as i32,
        coverage: 0.5,
        covered: 3,
        total_targets: 6,
        steps: 100,
        executions: 4,
        evaluations: 5,
        work: 77,
        tests_before_min: 3,
        tests_after_min: 2,
        events_before_min: 9,
        events_after_min: 5,
        full_coverage: false,
        mutants_generated: 8,
        mutants_killed: 3,
        mutants_excluded: 1,
        mutants_timeout: 1,
        mutation_score: Some(3.0 / 7.0),
        reliable_covered: Some(2),
        sequence: Some(SequenceCoverage {
            alphabet: 5,
            kh2: 0.25,
            kh3: 0.125,
            win2: 0.5,
            win3: 0.0625,
            kh2_unmin: 0.3,
            kh3_unmin: 0.2,
            win2_unmin: 0.6,
            win3_unmin: 0.1,
        }),
        geometry: "exact".into(),
        reproducible: true,
        digest: "da".into(),
        duration_ms: 1234,
        timeline: vec![
            TimelineSample { steps: 10, executions: 1, covered: 2, ..Default::default() },
            TimelineSample { steps: 20, executions: 2, covered: 3, ..Default::default() },
        ],
        mutants: vec![verdict("m2", "killed"), verdict("m1", "survived")],
        provenance: Some(Provenance { host: "host".into(), engine_version: "e".into(), ..Default::default() }),
        ..Default::default()
    }
}

#[test]
fn runs_columns_hold_the_fields_they_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path()).unwrap();
    let runs = [run("a", "p1", 1), run("b", "p2", 1), run("c", "p3", 1), run("d", "p4", 1)];
    s.submit("e", "", &runs, &[]).unwrap();
    // b: a result made before sequence coverage existed (no `sequence` on the wire).
    let old = RunResult { sequence: None, full_coverage: true, steps_to_full_coverage: 60, ..full_result() };
    let give_up = RunResult { status: RunStatus::InfraFailure as i32, duration_ms: 55, ..Default::default() };
    finish(s, vec![("a", "ok", full_result()), ("b", "ok", old), ("d", "infra_failure", give_up)]);
    let files = export_results(dir.path(), &ExportOptions::default()).unwrap();
    assert_eq!(files.len(), 10, "five tables, CSV and Parquet: {files:?}");

    let (header, rows) = read(&dir.path().join("runs.csv"));
    assert_eq!(header, RUNS.columns.iter().map(|c| c.name).collect::<Vec<_>>());
    let want_a: BTreeMap<&str, &str> = [
        ("run_id", "a"),
        ("dataset", "d"),
        ("project", "p1"),
        ("project_hash", "h-p1"),
        ("algorithm", "random"),
        ("config", "{\"algorithm\":\"random\"}"),
        ("seed", "1"),
        ("budget_unit", "executions"),
        ("budget", "7"),
        ("status", "ok"),
        ("error", ""),
        ("coverage", "0.5"),
        ("covered", "3"),
        ("total_targets", "6"),
        ("steps", "100"),
        ("executions", "4"),
        ("evaluations", "5"),
        ("work", "77"),
        ("tests_before_min", "3"),
        ("tests_after_min", "2"),
        ("events_before_min", "9"),
        ("events_after_min", "5"),
        ("full_coverage", "false"),
        ("steps_to_full_coverage", ""),
        ("mutants", "8"),
        ("mutants_killed", "3"),
        ("mutants_excluded", "1"),
        ("mutants_timeout", "1"),
        ("mutation_score", "0.42857142857142855"),
        ("reliable_covered", "2"),
        ("seq_alphabet", "5"),
        ("seq_kh2", "0.25"),
        ("seq_kh3", "0.125"),
        ("seq_win2", "0.5"),
        ("seq_win3", "0.0625"),
        ("seq_kh2_unmin", "0.3"),
        ("seq_kh3_unmin", "0.2"),
        ("seq_win2_unmin", "0.6"),
        ("seq_win3_unmin", "0.1"),
        ("geometry", "exact"),
        ("reproducible", "true"),
        ("digest", "da"),
        ("duration_ms", "1234"),
    ]
    .into_iter()
    .collect();
    assert_eq!(want_a.len(), RUNS.columns.len(), "the expectation names every column");
    let row = |id: &str| rows.iter().find(|r| r["run_id"] == id).unwrap();
    for c in RUNS.columns {
        assert_eq!(row("a")[c.name], want_a[c.name], "column {}", c.name);
    }
    let b = row("b");
    assert_eq!((b["coverage"].as_str(), b["steps_to_full_coverage"].as_str()), ("0.5", "60"));
    for c in RUNS.columns.iter().filter(|c| c.name.starts_with("seq_")) {
        assert_eq!(b[c.name], "", "an old result has no {}", c.name);
    }
    // Pending and given-up runs: every result column empty (a give-up keeps its time).
    let first_result = RUNS.position("coverage").unwrap();
    for (id, time) in [("c", ""), ("d", "55")] {
        for c in &RUNS.columns[first_result..RUNS.columns.len() - 1] {
            assert_eq!(row(id)[c.name], "", "run {id}: {}", c.name);
        }
        assert_eq!(row(id)["duration_ms"], time);
    }

    let (header, tl) = read(&dir.path().join("timeline.csv"));
    assert_eq!(header, TIMELINE.columns.iter().map(|c| c.name).collect::<Vec<_>>());
    let points: Vec<(&str, &str, &str)> =
        tl.iter().map(|r| (r["run_id"].as_str(), r["steps"].as_str(), r["covered"].as_str())).collect();
    assert_eq!(
        points,
        [("a", "0", "0"), ("a", "10", "2"), ("a", "20", "3"), ("b", "0", "0"), ("b", "10", "2"), ("b", "20", "3")]
    );
    let (_, mu) = read(&dir.path().join("mutants.csv"));
    let ids: Vec<&str> = mu.iter().filter(|r| r["run_id"] == "a").map(|r| r["mutant_id"].as_str()).collect();
    assert_eq!(ids, ["m1", "m2"], "ordered by mutant id");
    assert!(mu.iter().all(|r| r["stratum_size"] == "9" && r["seed"] == "1"));
    let (_, prov) = read(&dir.path().join("provenance.csv"));
    assert_eq!(prov.iter().map(|r| r["run_id"].as_str()).collect::<Vec<_>>(), ["a", "b", "d"]);
    assert_eq!(prov[0]["attempts"], "2");
}
