//! The exports' writer and the analysis' loader agree on every column: a study written through
//! `clowder_schema` (the tables and writer `clowder export` and `clowder mutate-study` use),
//! with every column filled, loads from CSV and from Parquet with no column missing and every
//! value read back as written. Renaming, retyping or dropping a column the loader reads, on
//! either side, fails here.

use std::path::Path;

use clowder_analysis::load;
use clowder_schema::{Kind, MUTANTS, RUNS, TIMELINE, Table, TableWriter, Value};

/// A value of column `name` for row `i`: distinct per column and row, in the column's type.
fn cell(table: &Table, name: &str, i: u64) -> Value {
    let c = table.column(name).unwrap();
    match (name, c.kind) {
        ("status", _) => "ok".into(),
        ("project", _) => format!("p{i}").into(),
        ("algorithm", _) => "alg".into(),
        ("verdict", _) => "killed".into(),
        ("operator", _) => "SBD".into(),
        (_, Kind::Str) => format!("{name}-{i}").into(),
        (_, Kind::U64 | Kind::U32) => Value::U(10 * i + name.len() as u64),
        // Fractions, as coverage, scores and sequence criteria are.
        (_, Kind::F64) => Value::F((i as f64 + name.len() as f64 / 100.0) / 10.0),
        (_, Kind::Bool) => Value::B(i % 2 == 0),
    }
}

fn write(dir: &Path, table: Table, rows: u64, fixed: &[(&str, Value)]) {
    let mut w = TableWriter::create(dir, table).unwrap();
    for i in 0..rows {
        let cells = table.columns.iter().map(|c| {
            let v =
                fixed.iter().find(|(n, _)| *n == c.name).map_or_else(|| cell(&table, c.name, i), |(_, v)| v.clone());
            (c.name, v)
        });
        w.push(&table.row(cells).unwrap()).unwrap();
    }
    w.finish().unwrap();
}

fn study(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    write(dir, RUNS, 3, &[]);
    // Timeline and mutant rows of run 0, joined to it by run id.
    let run0 = [("run_id", cell(&RUNS, "run_id", 0)), ("project", cell(&RUNS, "project", 0))];
    write(dir, TIMELINE, 2, &run0);
    write(dir, MUTANTS, 2, &run0);
}

fn f(v: Value) -> Option<f64> {
    match v {
        Value::F(x) => Some(x),
        _ => None,
    }
}

fn u(v: Value) -> Option<u64> {
    match v {
        Value::U(x) => Some(x),
        _ => None,
    }
}

fn check(dir: &Path, format: &str) {
    let res = load(dir).unwrap();
    assert_eq!(res.files.len(), 3, "{format}: {:?}", res.files);
    for file in &res.files {
        assert!(file.name.ends_with(format), "{} read instead of {format}", file.name);
        assert!(file.missing.is_empty(), "{format}: {} lacks columns the loader reads: {:?}", file.name, file.missing);
    }
    assert!(res.notes.is_empty(), "{format}: {:?}", res.notes);
    assert_eq!(res.runs.len(), 3);
    for (i, r) in res.runs.iter().enumerate() {
        let i = i as u64;
        let want = |name: &str| cell(&RUNS, name, i);
        assert_eq!(Value::from(r.run_id.clone()), want("run_id"));
        assert_eq!(res.projects[r.project as usize], format!("p{i}"));
        assert_eq!(Value::from(res.datasets[r.dataset as usize].clone()), want("dataset"));
        assert_eq!(Some(r.seed), u(want("seed")));
        assert_eq!(Value::from(r.error.clone()), want("error"));
        assert_eq!(r.budget_unit.clone().map(Value::from), Some(want("budget_unit")));
        assert_eq!(r.budget, u(want("budget")));
        assert_eq!(r.coverage, f(want("coverage")));
        for (got, name) in [
            (r.covered, "covered"),
            (r.total_targets, "total_targets"),
            (r.steps, "steps"),
            (r.tests_after_min, "tests_after_min"),
            (r.events_after_min, "events_after_min"),
            (r.steps_to_full_coverage, "steps_to_full_coverage"),
            (r.mutants, "mutants"),
            (r.mutants_killed, "mutants_killed"),
            (r.mutants_excluded, "mutants_excluded"),
            (r.mutants_timeout, "mutants_timeout"),
            (r.seq_alphabet, "seq_alphabet"),
            (r.reliable_covered, "reliable_covered"),
        ] {
            assert_eq!(got, u(want(name)), "{format}: {name}");
        }
        assert_eq!(r.mutation_score, f(want("mutation_score")));
        for (k, name) in clowder_analysis::load::SEQ_METRICS.iter().enumerate() {
            assert_eq!(r.seq[k], f(want(name)), "{format}: {name}");
        }
    }
    let tl = res.timeline.as_ref().unwrap();
    let points: Vec<(u64, u32)> = tl.points(0).collect();
    let at = |i: u64| (u(cell(&TIMELINE, "steps", i)).unwrap(), u(cell(&TIMELINE, "covered", i)).unwrap() as u32);
    assert_eq!(points, [at(0), at(1)], "{format}");
    let m = res.mutants.as_ref().unwrap();
    assert_eq!(m.operators, ["SBD"]);
    assert_eq!(m.counts[&(0, 0)].killed, 2, "{format}");
    assert_eq!(m.strata[&(0, 0)], u(cell(&MUTANTS, "stratum_size", 1)).unwrap(), "{format}: the larger stratum size");
}

#[test]
fn the_loader_reads_every_column_the_writer_writes_from_csv_and_parquet() {
    let tmp = tempfile::tempdir().unwrap();
    let both = tmp.path().join("both");
    study(&both);
    // The loader prefers Parquet; a copy without it reads the CSV files.
    let csv = tmp.path().join("csv");
    std::fs::create_dir_all(&csv).unwrap();
    for t in [RUNS, TIMELINE, MUTANTS] {
        let name = format!("{}.csv", t.name);
        std::fs::copy(both.join(&name), csv.join(&name)).unwrap();
    }
    check(&both, ".parquet");
    check(&csv, ".csv");
}
