//! End-to-end: loading (CSV and Parquet, missing optional columns, bad input), coverage over
//! time, and the report folder (deterministic bytes).

use std::collections::BTreeMap;
use std::path::Path;

use clowder_analysis::synth::{SynthSpec, write_study};
use clowder_analysis::{GridUnit, Options, WriteOptions, analyze, load, report};

fn small_spec() -> SynthSpec {
    SynthSpec {
        datasets: vec!["random".into(), "top".into()],
        projects: 12,
        algorithms: vec!["mio".into(), "mosa".into(), "random".into()],
        seeds: 5,
        points: 10,
        budget: 900,
        mutants: 16,
        seed: 7,
    }
}

fn read_dir(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            for (k, v) in read_dir(&p) {
                out.insert(format!("{name}/{k}"), v);
            }
        } else {
            out.insert(name, std::fs::read(&p).unwrap());
        }
    }
    out
}

fn wo() -> WriteOptions {
    WriteOptions { title: "small".into(), plots: true, per_run_timelines: true }
}

#[test]
fn report_folder_is_complete_and_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("study");
    write_study(&study, &small_spec()).unwrap();
    let res = load(&study).unwrap();
    assert_eq!(res.runs.len(), 180);
    assert!(res.notes.is_empty(), "{:?}", res.notes);
    let an = analyze(&res, &Options::default()).unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let files = report::write(&an, &res, &a, &wo()).unwrap();
    // A second, independent load + analysis + write gives the same bytes.
    let res2 = load(&study).unwrap();
    let an2 = analyze(&res2, &Options::default()).unwrap();
    report::write(&an2, &res2, &b, &wo()).unwrap();
    let (fa, fb) = (read_dir(&a), read_dir(&b));
    assert_eq!(fa.keys().collect::<Vec<_>>(), fb.keys().collect::<Vec<_>>());
    for (k, v) in &fa {
        assert!(v == &fb[k], "{k} differs between two runs");
    }
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    for want in [
        "report.md",
        "coverage.csv",
        "coverage.tex",
        "table6.csv",
        "table6.tex",
        "pairs.csv",
        "excluded.csv",
        "full_coverage.csv",
        "suite_size.csv",
        "mutation.csv",
        "mutation_operators.csv",
        "coverage_over_time.csv",
        "timeline_whisker.csv",
        "timeline_pynguin.csv",
        "img/coverage_over_time_random.png",
        "img/coverage_over_time_top.svg",
        "img/coverage_boxplot_top.png",
        "img/a12_random.png",
        "img/mutation_operators_random.png",
        "img/project_sizes_top.png",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} missing from {names:?}");
    }
    let md = String::from_utf8(fa["report.md"].clone()).unwrap();
    for want in [
        "## Conventions",
        "A is the first sample",
        "ties detected with `==` count one half",
        "tie and continuity correction",
        "(p = 1)",
        "Vargha-Delaney (2000)",
        "![Coverage over time, random](img/coverage_over_time_random.png)",
        "| Dataset | Comparison | Â12 | Magnitude | Sig better | Better | Equal | Worse | Sig worse |",
    ] {
        assert!(md.contains(want), "report.md lacks {want:?}");
    }
    let tex = String::from_utf8(fa["table6.tex"].clone()).unwrap();
    assert!(tex.contains("\\toprule") && tex.contains("mio vs mosa") && tex.contains("$\\hat{A}$12"));
}

#[test]
fn parquet_input_gives_the_same_analysis() {
    use polars::prelude::*;
    let tmp = tempfile::tempdir().unwrap();
    let csv_dir = tmp.path().join("csv");
    let pq_dir = tmp.path().join("pq");
    write_study(&csv_dir, &small_spec()).unwrap();
    std::fs::create_dir_all(&pq_dir).unwrap();
    for stem in ["runs", "timeline", "mutants"] {
        let src = csv_dir.join(format!("{stem}.csv"));
        let mut df = CsvReadOptions::default()
            .with_has_header(true)
            .with_infer_schema_length(None)
            .try_into_reader_with_file_path(Some(src))
            .unwrap()
            .finish()
            .unwrap();
        let f = std::fs::File::create(pq_dir.join(format!("{stem}.parquet"))).unwrap();
        ParquetWriter::new(f).finish(&mut df).unwrap();
    }
    let a = analyze(&load(&csv_dir).unwrap(), &Options::default()).unwrap();
    let pq = load(&pq_dir).unwrap();
    assert_eq!(
        pq.files.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
        ["runs.parquet", "timeline.parquet", "mutants.parquet"]
    );
    let b = analyze(&pq, &Options::default()).unwrap();
    assert_eq!(a, b);
}

const LEGACY_RUNS: &str = "run_id,project,algorithm,seed,budget_unit,budget,status,coverage,covered,total_targets,\
steps,executions,tests,geometry,digest,error,duration_ms
r1,p1,random,1,steps,3000,ok,0.500000,2,4,3000,10,1,exact,d,,5
r2,p1,random,2,steps,3000,ok,0.750000,3,4,3000,10,2,exact,d,,5
r3,p1,short,1,steps,3000,ok,0.500000,2,4,3000,10,1,exact,d,,5
r4,p1,short,2,steps,3000,error,,,,,,,,,\"vm error, badly\",5
r5,p2,random,1,steps,3000,ok,1.000000,4,4,120,3,1,exact,d,,5
r6,p2,random,2,steps,3000,ok,1.000000,4,4,150,3,1,exact,d,,5
r7,p2,short,1,steps,3000,ok,1.000000,4,4,90,3,2,exact,d,,5
r8,p2,short,2,steps,3000,ok,1.000000,4,4,95,3,1,exact,d,,5
";

#[test]
fn todays_runs_csv_without_optional_columns_and_files() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("runs.csv"), LEGACY_RUNS).unwrap();
    let res = load(tmp.path()).unwrap();
    let notes = res.notes.join("\n");
    assert!(notes.contains("no `dataset` column"), "{notes}");
    assert!(notes.contains("legacy `tests` column"), "{notes}");
    assert!(notes.contains("timeline.csv/.parquet not found"), "{notes}");
    assert!(notes.contains("mutants.csv/.parquet not found"), "{notes}");
    assert!(notes.contains("events_after_min") && notes.contains("steps_to_full_coverage"), "{notes}");
    let an = analyze(&res, &Options::default()).unwrap();
    let d = &an.datasets[0];
    assert_eq!(d.name, "all");
    let c = &d.comparisons[0];
    assert_eq!((c.a.as_str(), c.b.as_str()), ("random", "short"));
    // p1 lacks a successful `short` run for seed 2; p2 is all tied.
    assert_eq!((c.projects.len(), c.excluded.len(), c.equal), (1, 1, 1));
    assert_eq!(d.exclusions[0].reason, "seed 2: error (vm error, badly)");
    assert_eq!(d.suite_size.projects, 1);
    assert_eq!(d.suite_size.rows[0].mean_tests, Some(1.0));
    let tmp_out = tmp.path().join("report");
    report::write(&an, &res, &tmp_out, &wo()).unwrap();
    let md = std::fs::read_to_string(tmp_out.join("report.md")).unwrap();
    assert!(md.contains("Not available (needs `timeline.csv`)"));
    assert!(md.contains("Only whether 100 % was reached"));
    assert!(md.contains("No mutation data"));
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn bad_input_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let e = load(&d.join("nope")).unwrap_err().to_string();
    assert!(e.contains("not a folder"), "{e}");
    let e = load(d).unwrap_err().to_string();
    assert!(e.contains("no runs.csv or runs.parquet"), "{e}");
    write(d, "runs.csv", "run_id,project,seed,status,coverage\nr,p,1,ok,0.5\n");
    let e = load(d).unwrap_err().to_string();
    assert!(e.contains("runs.csv") && e.contains("missing required column(s): algorithm"), "{e}");
    write(d, "runs.csv", "project,algorithm,seed,status,coverage\np,a,one,ok,0.5\n");
    let e = load(d).unwrap_err().to_string();
    assert!(e.contains("runs.csv"), "{e}");
    write(d, "runs.csv", "project,algorithm,seed,status,coverage\np,a,1,ok,1.5\n");
    let e = load(d).unwrap_err().to_string();
    assert!(e.contains("coverage 1.5 outside 0..1"), "{e}");
    write(d, "runs.csv", "project,algorithm,seed,status,coverage\np,a,1,ok,0.5\np,a,1,ok,0.6\n");
    let e = load(d).unwrap_err().to_string();
    assert!(e.contains("two rows for dataset all, project p, algorithm a, seed 1"), "{e}");
    write(d, "runs.csv", "project,algorithm,seed,status,coverage\np,a,1,ok,0.5\n");
    let e = analyze(&load(d).unwrap(), &Options { alpha: 0.0, ..Options::default() }).unwrap_err().to_string();
    assert!(e.contains("alpha"), "{e}");
}

#[test]
fn coverage_over_time_is_the_mean_over_projects_with_a_t_band() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Two projects (totals 4 and 10), two runs each, budget 90 steps (3 s).
    write(
        d,
        "runs.csv",
        "run_id,project,algorithm,seed,budget_unit,budget,status,coverage,covered,total_targets\n\
         a1,p1,alg,1,steps,90,ok,1,4,4\n\
         a2,p1,alg,2,steps,90,ok,0.5,2,4\n\
         b1,p2,alg,1,steps,90,ok,0.5,5,10\n\
         b2,p2,alg,2,steps,90,ok,0.3,3,10\n",
    );
    write(
        d,
        "timeline.csv",
        "run_id,steps,covered,total_targets\n\
         a1,0,0,4\na1,10,2,4\na1,40,4,4\n\
         a2,0,0,4\na2,30,2,4\n\
         b1,0,0,10\nb1,31,5,10\n\
         b2,0,0,10\nb2,5,1,10\nb2,60,3,10\n",
    );
    let res = load(d).unwrap();
    let an = analyze(&res, &Options::default()).unwrap();
    assert_eq!(an.grid_end, 90);
    let c = &an.datasets[0].curves[0];
    assert_eq!((c.projects, c.runs), (2, 4));
    let mean: Vec<f64> = c.points.iter().map(|p| p.mean).collect();
    // t=0: all 0. t=30: p1 = (2+2)/8 = 0.5, p2 = (0+1)/20 = 0.05 → 0.275.
    // t=60: p1 = (4+2)/8 = 0.75, p2 = (5+3)/20 = 0.4 → 0.575; t=90 carried forward.
    assert_eq!(c.points.iter().map(|p| p.steps).collect::<Vec<_>>(), vec![0, 30, 60, 90]);
    let want = [0.0, 0.275, 0.575, 0.575];
    for (g, w) in mean.iter().zip(want) {
        assert!((g - w).abs() < 1e-15, "{mean:?}");
    }
    // Band: t(0.975, 1) · sd / √2 with sd of {0.75, 0.4} = 0.35/√2.
    let half = 12.706204736174698 * (0.35 / 2f64.sqrt()) / 2f64.sqrt();
    assert!((c.points[2].hi - (0.575 + half)).abs() < 1e-9, "{:?}", c.points[2]);
    assert!((c.points[2].lo - (0.575 - half)).abs() < 1e-9);
    // Full coverage derived from the timeline: run a1 at step 40.
    let fc = &an.datasets[0].full_coverage[0];
    assert_eq!((fc.reached, fc.mean_steps), (1, Some(40.0)));
    // Steps grid.
    let opts = Options { grid: clowder_analysis::Grid { unit: GridUnit::Steps, step: 45 }, ..Options::default() };
    let an = analyze(&res, &opts).unwrap();
    assert_eq!(an.datasets[0].curves[0].points.len(), 3);
    // Per-run exports.
    let out = d.join("report");
    report::write(&an, &res, &out, &WriteOptions { title: "t".into(), plots: false, per_run_timelines: true }).unwrap();
    let whisker = std::fs::read_to_string(out.join("timeline_whisker.csv")).unwrap();
    let mut lines = whisker.lines();
    assert!(lines.next().unwrap().ends_with("timeToReachFullCoverage,0,1000,2000,3000"));
    assert_eq!(lines.next().unwrap(), "p1,alg,1,all,4,4,1,,,1333.3333333333333,0,0.5,1,1");
    let pynguin = std::fs::read_to_string(out.join("timeline_pynguin.csv")).unwrap();
    let mut lines = pynguin.lines();
    assert_eq!(
        lines.next().unwrap(),
        "TargetModule,ConfigurationId,RandomSeed,Dataset,Coverage,CoverageTimeline_T1,CoverageTimeline_T2"
    );
    assert_eq!(lines.next().unwrap(), "p1,alg,1,all,1,1,1");
    assert_eq!(lines.nth(2).unwrap(), "p2,alg,2,all,0.3,0.1,0.3");
}
