//! The report of a test study (experiment kind `test`, docs/testing.md): from `tests.csv`
//! (or `.parquet`), pass rates per test and per project, verdict counts per suite, and a
//! project × test matrix plot per suite.
//!
//! A test's pass rate is its `pass` verdicts over all its verdicts (every project and seed it
//! ran on); a project's, its `pass` verdicts over all verdicts of the suite's tests on it.
//! `skip` counts as not passed, as Whisker's summary does.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use clowder_schema::TESTS;

use crate::error::AnalysisError;
use crate::load::{Frame, err, find, read_columns, schema_columns};
use crate::plots::{Plot, render};
use crate::table::{Cell, Table};

/// Verdict counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// `pass`.
    pub pass: u64,
    /// `fail`.
    pub fail: u64,
    /// `error`.
    pub error: u64,
    /// `skip`.
    pub skip: u64,
}

impl Counts {
    /// All verdicts.
    pub fn total(&self) -> u64 {
        self.pass + self.fail + self.error + self.skip
    }

    /// `pass` over all verdicts (`None` without verdicts).
    pub fn pass_rate(&self) -> Option<f64> {
        (self.total() > 0).then(|| self.pass as f64 / self.total() as f64)
    }

    fn add(&mut self, verdict: &str) -> bool {
        match verdict {
            "pass" => self.pass += 1,
            "fail" => self.fail += 1,
            "error" => self.error += 1,
            "skip" => self.skip += 1,
            _ => return false,
        }
        true
    }
}

/// The verdicts of a test study, grouped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TestStudy {
    /// (suite, test index) → (test name, counts).
    pub by_test: BTreeMap<(String, u64), (String, Counts)>,
    /// (suite, project) → counts.
    pub by_project: BTreeMap<(String, String), Counts>,
    /// (suite, project, test index) → counts over seeds.
    pub cells: BTreeMap<(String, String, u64), Counts>,
    /// (suite file, project, seed, test index) → entry → verdict: what entries of the same
    /// file (e.g. one suite on several modelled Whisker machines) said on the same run.
    pub by_file: BTreeMap<(String, String, u64, u64), BTreeMap<String, String>>,
    /// Rows with a verdict other than pass/fail/error/skip (ignored).
    pub unknown: u64,
}

impl TestStudy {
    /// The suites (the `algorithm` column), sorted.
    pub fn suites(&self) -> Vec<&str> {
        let mut s: Vec<&str> = self.by_project.keys().map(|(s, _)| s.as_str()).collect();
        s.dedup();
        s
    }

    /// Counts over everything of `suite`.
    pub fn suite_counts(&self, suite: &str) -> Counts {
        let mut c = Counts::default();
        for ((s, _), x) in &self.by_project {
            if s == suite {
                c.pass += x.pass;
                c.fail += x.fail;
                c.error += x.error;
                c.skip += x.skip;
            }
        }
        c
    }
}

/// The columns of `tests` the report reads.
const TESTS_READ: [(&str, bool); 7] = [
    ("project", true),
    ("algorithm", true),
    ("seed", true),
    ("suite", true),
    ("index", true),
    ("test", true),
    ("verdict", true),
];

/// Whether `dir` holds the verdicts of a test study.
pub fn is_test_study(dir: &Path) -> bool {
    find(dir, TESTS.name).is_some()
}

/// Reads `tests.parquet` or `tests.csv` of a results folder.
pub fn load(dir: &Path) -> Result<TestStudy, AnalysisError> {
    let path = find(dir, TESTS.name).ok_or_else(|| err(dir, "no tests.csv or tests.parquet (not a test study)"))?;
    let (df, _) = read_columns(&path, &schema_columns(&TESTS, &TESTS_READ)?)?;
    let f = Frame { df: &df, path: &path };
    let none = || err(&path, "missing column");
    let (projects, suites, tests, verdicts) = (
        f.str("project")?.ok_or_else(none)?,
        f.str("algorithm")?.ok_or_else(none)?,
        f.str("test")?.ok_or_else(none)?,
        f.str("verdict")?.ok_or_else(none)?,
    );
    let index = f.u64("index")?.ok_or_else(none)?;
    let (files, seeds) = (f.str("suite")?.ok_or_else(none)?, f.u64("seed")?.ok_or_else(none)?);
    let mut study = TestStudy::default();
    for i in 0..df.height() {
        let (Some(p), Some(s), Some(t), Some(v), Some(k), Some(file), Some(seed)) =
            (projects[i], suites[i], tests[i], verdicts[i], index[i], files[i], seeds[i])
        else {
            study.unknown += 1;
            continue;
        };
        if !Counts::default().add(v) {
            study.unknown += 1;
            continue;
        }
        study.by_test.entry((s.to_string(), k)).or_insert_with(|| (t.to_string(), Counts::default())).1.add(v);
        study.by_project.entry((s.to_string(), p.to_string())).or_default().add(v);
        study.cells.entry((s.to_string(), p.to_string(), k)).or_default().add(v);
        study
            .by_file
            .entry((file.to_string(), p.to_string(), seed, k))
            .or_default()
            .insert(s.to_string(), v.to_string());
    }
    Ok(study)
}

/// One entry's verdicts against those of the first entry (by name) of the same suite file, on
/// the same (project, seed, test).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EntryDifference {
    /// Verdicts compared.
    pub compared: u64,
    /// Of them, verdicts that differ.
    pub differ: u64,
    /// The first difference: project, seed, the first entry's verdict, this entry's.
    pub example: Option<(String, u64, String, String)>,
}

/// Tests whose verdict depends on the entry that ran them, for every suite file that two or
/// more entries run: (file, entry, first entry, test index) → comparison. Entries of one file
/// differ only in their options (`whisker_wall_ms`, `fresh_tests`, …), so a difference is a
/// verdict that depends on Whisker's machine.
pub fn entry_differences(study: &TestStudy) -> BTreeMap<(String, String, String, u64), EntryDifference> {
    let mut out: BTreeMap<(String, String, String, u64), EntryDifference> = BTreeMap::new();
    for ((file, project, seed, index), by_entry) in &study.by_file {
        let mut entries = by_entry.iter();
        let Some((first, base)) = entries.next() else { continue };
        for (entry, verdict) in entries {
            let d = out.entry((file.clone(), entry.clone(), first.clone(), *index)).or_default();
            d.compared += 1;
            if verdict != base {
                d.differ += 1;
                if d.example.is_none() {
                    d.example = Some((project.clone(), *seed, base.clone(), verdict.clone()));
                }
            }
        }
    }
    out
}

fn count_cells(c: &Counts) -> Vec<Cell> {
    vec![
        Cell::int(c.total()),
        Cell::int(c.pass),
        Cell::int(c.fail),
        Cell::int(c.error),
        Cell::int(c.skip),
        Cell::opt_pct(c.pass_rate()),
    ]
}

const COUNT_COLUMNS: [(&str, &str); 6] = [
    ("Verdicts", "verdicts"),
    ("Pass", "pass"),
    ("Fail", "fail"),
    ("Error", "error"),
    ("Skip", "skip"),
    ("Pass rate %", "pass_rate"),
];

/// The report's tables: verdicts per suite, pass rates per test and per project.
pub fn tables(study: &TestStudy) -> [Table; 3] {
    let with = |lead: &[(&'static str, &'static str)]| -> Vec<(&'static str, &'static str)> {
        lead.iter().chain(COUNT_COLUMNS.iter()).copied().collect()
    };
    let mut suites = Table::new(
        "test_verdicts",
        "Verdicts per suite (every test on every project and seed)",
        &with(&[("Suite", "suite"), ("Projects", "projects"), ("Tests", "tests")]),
    );
    for s in study.suites() {
        let projects = study.by_project.keys().filter(|(x, _)| x == s).count() as u64;
        let tests = study.by_test.keys().filter(|(x, _)| x == s).count() as u64;
        let mut row = vec![Cell::text(s), Cell::int(projects), Cell::int(tests)];
        row.extend(count_cells(&study.suite_counts(s)));
        suites.push(row);
    }
    let mut by_test = Table::new(
        "test_pass_rates",
        "Pass rate per test (over its projects and seeds)",
        &with(&[("Suite", "suite"), ("#", "index"), ("Test", "test")]),
    );
    for ((s, k), (name, c)) in &study.by_test {
        let mut row = vec![Cell::text(s.as_str()), Cell::int(*k), Cell::text(name.as_str())];
        row.extend(count_cells(c));
        by_test.push(row);
    }
    let mut by_project = Table::new(
        "project_pass_rates",
        "Pass rate per project (over the suite's tests and the seeds)",
        &with(&[("Suite", "suite"), ("Project", "project")]),
    );
    for ((s, p), c) in &study.by_project {
        let mut row = vec![Cell::text(s.as_str()), Cell::text(p.as_str())];
        row.extend(count_cells(c));
        by_project.push(row);
    }
    [suites, by_test, by_project]
}

/// The table of [`entry_differences`] (one row per (file, entry, test) with a difference) and
/// a line saying how many verdicts were compared and how many differ; `None` when no suite
/// file is run by two entries.
pub fn differences(study: &TestStudy) -> Option<(Table, String)> {
    let diffs = entry_differences(study);
    if diffs.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "entry_differences",
        "Verdicts that differ between entries of the same suite file (each entry against the first by name, \
         on the same project, seed and test)",
        &[
            ("Suite file", "suite"),
            ("Entry", "entry"),
            ("Against", "against"),
            ("#", "index"),
            ("Test", "test"),
            ("Compared", "compared"),
            ("Differ", "differ"),
            ("First difference", "example"),
        ],
    );
    for ((file, entry, first, index), d) in &diffs {
        let Some((project, seed, was, now)) = &d.example else { continue };
        let name = study.by_test.get(&(entry.clone(), *index)).map_or("", |(n, _)| n.as_str());
        t.push(vec![
            Cell::text(file.as_str()),
            Cell::text(entry.as_str()),
            Cell::text(first.as_str()),
            Cell::int(*index),
            Cell::text(name),
            Cell::int(d.compared),
            Cell::int(d.differ),
            Cell::text(format!("{project} seed {seed}: {was} -> {now}")),
        ]);
    }
    let compared: u64 = diffs.values().map(|d| d.compared).sum();
    let differ: u64 = diffs.values().map(|d| d.differ).sum();
    let line = format!(
        "Entries sharing a suite file: {differ} of {compared} verdicts differ from the first entry's, in {} \
         (entry, test) pairs",
        t.rows.len()
    );
    Some((t, line))
}

/// The project × test matrix of one suite: each cell the pass rate of the test on the project
/// over the seeds (green 100 %, red 0 %), grey when every verdict was `skip`, purple when any
/// was `error`.
pub struct Matrix {
    /// The suite.
    pub suite: String,
    /// Row labels (projects).
    pub projects: Vec<String>,
    /// Column labels (test indices).
    pub tests: Vec<u64>,
    /// Counts per (row, column).
    pub cells: Vec<Vec<Option<Counts>>>,
}

impl Matrix {
    /// The matrix of `suite` in `study`.
    pub fn of(study: &TestStudy, suite: &str) -> Matrix {
        let projects: Vec<String> =
            study.by_project.keys().filter(|(s, _)| s == suite).map(|(_, p)| p.clone()).collect();
        let tests: Vec<u64> = study.by_test.keys().filter(|(s, _)| s == suite).map(|(_, k)| *k).collect();
        let cells = projects
            .iter()
            .map(|p| tests.iter().map(|k| study.cells.get(&(suite.to_string(), p.clone(), *k)).copied()).collect())
            .collect();
        Matrix { suite: suite.to_string(), projects, tests, cells }
    }
}

const GREEN: RGBColor = RGBColor(0, 158, 115);
const RED: RGBColor = RGBColor(213, 94, 0);
const GREY: RGBColor = RGBColor(200, 200, 200);
const PURPLE: RGBColor = RGBColor(204, 121, 167);

fn cell_color(c: &Counts) -> RGBColor {
    if c.error > 0 {
        return PURPLE;
    }
    if c.skip == c.total() {
        return GREY;
    }
    let t = c.pass as f64 / c.total() as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
    RGBColor(mix(RED.0, GREEN.0), mix(RED.1, GREEN.1), mix(RED.2, GREEN.2))
}

impl Plot for Matrix {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, _raster: bool) -> Result<(), String> {
        root.fill(&WHITE).map_err(e2s)?;
        let (w, h) = root.dim_in_pixel();
        let (w, h) = (i32::try_from(w).unwrap_or(1000), i32::try_from(h).unwrap_or(600));
        let title = format!(
            "{}: pass rate per project and test (green 100 %, red 0 %, grey skipped, purple error)",
            self.suite
        );
        root.draw(&Text::new(title, (16, 10), ("sans-serif", 20).into_font().color(&BLACK))).map_err(e2s)?;
        let (rows, cols) = (self.projects.len().max(1) as i32, self.tests.len().max(1) as i32);
        let (left, top, right, bottom) = (230, 64, 16, 16);
        let cw = ((w - left - right) / cols).max(1);
        let ch = ((h - top - bottom) / rows).max(1);
        let label = ("sans-serif", ch.clamp(6, 16)).into_font().color(&BLACK);
        let tick = ("sans-serif", cw.clamp(6, 14)).into_font().color(&BLACK);
        for (j, k) in self.tests.iter().enumerate() {
            let x = left + j as i32 * cw + cw / 4;
            root.draw(&Text::new(k.to_string(), (x, top - 18), tick.clone())).map_err(e2s)?;
        }
        for (i, p) in self.projects.iter().enumerate() {
            let y = top + i as i32 * ch;
            let name: String = p.chars().take(34).collect();
            root.draw(&Text::new(name, (8, y + (ch - ch.clamp(6, 16)) / 2), label.clone())).map_err(e2s)?;
            for (j, c) in self.cells.get(i).into_iter().flatten().enumerate() {
                let Some(c) = c else { continue };
                let x = left + j as i32 * cw;
                let fill = cell_color(c);
                root.draw(&Rectangle::new([(x, y), (x + cw - 1, y + ch - 1)], fill.filled())).map_err(e2s)?;
            }
        }
        Ok(())
    }
}

fn e2s<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

fn write_file(path: &Path, content: &[u8]) -> Result<(), AnalysisError> {
    std::fs::write(path, content)
        .map_err(|e| AnalysisError::Output { path: path.display().to_string(), msg: e.to_string() })
}

fn stem(suite: &str) -> String {
    let s: String = suite
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .take(60)
        .collect();
    format!("matrix-{s}")
}

/// Writes the report folder of a test study (`report.md`, the tables as CSV and LaTeX, one
/// matrix plot per suite); returns the files written (relative to `out`), sorted.
pub fn write(study: &TestStudy, out: &Path, title: &str, plots: bool) -> Result<Vec<PathBuf>, AnalysisError> {
    let mk = |p: &Path| {
        std::fs::create_dir_all(p)
            .map_err(|e| AnalysisError::Output { path: p.display().to_string(), msg: e.to_string() })
    };
    mk(out)?;
    let mut written: Vec<PathBuf> = Vec::new();
    let tables = tables(study);
    let mut md = format!("# Test study: {title}\n\n");
    let _ = writeln!(
        md,
        "Verdicts from `tests.csv`: a test's pass rate is its `pass` verdicts over all its verdicts \
         (projects × seeds); `skip` (an assumption not met) counts as not passed.\n"
    );
    if study.unknown > 0 {
        let _ = writeln!(md, "{} row(s) with an unknown or empty verdict were ignored.\n", study.unknown);
    }
    for t in &tables {
        for (ext, text) in [("csv", t.csv()), ("tex", t.latex())] {
            let name = format!("{}.{ext}", t.name);
            write_file(&out.join(&name), text.as_bytes())?;
            written.push(name.into());
        }
        let _ = writeln!(md, "## {}\n\n{}", t.caption, t.markdown());
    }
    // Written whenever a file has two entries, with or without rows: "none differ" is a result.
    if let Some((t, line)) = differences(study) {
        for (ext, text) in [("csv", t.csv()), ("tex", t.latex())] {
            let name = format!("{}.{ext}", t.name);
            write_file(&out.join(&name), text.as_bytes())?;
            written.push(name.into());
        }
        let _ = writeln!(md, "## {}\n\n{line}.\n\n{}", t.caption, t.markdown());
    }
    if plots {
        mk(&out.join("img"))?;
        let _ = writeln!(md, "## Project × test matrices\n");
        for s in study.suites() {
            let name = stem(s);
            render(&Matrix::of(study, s), &out.join("img").join(&name))?;
            written.push(format!("img/{name}.png").into());
            written.push(format!("img/{name}.svg").into());
            let _ = writeln!(md, "![{s}: pass rate per project and test](img/{name}.png)\n");
        }
    }
    write_file(&out.join("report.md"), md.as_bytes())?;
    written.push("report.md".into());
    written.sort();
    Ok(written)
}

/// The verdicts per suite as terminal text (`clowder analyze` prints it), and whether entries
/// of one suite file disagree.
pub fn headline(study: &TestStudy) -> String {
    let mut text = tables(study)[0].plain();
    if let Some((_, line)) = differences(study) {
        let _ = writeln!(text, "{line}.");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "run_id,dataset,project,algorithm,seed,status,suite,index,test,verdict,message,steps
r1,d,a,S,1,ok,S.js,1,first,pass,,10
r1,d,a,S,1,ok,S.js,2,second,fail,\"no, it does not\",5
r2,d,a,S,2,ok,S.js,1,first,pass,,10
r2,d,a,S,2,ok,S.js,2,second,pass,,5
r3,d,b,S,1,ok,S.js,1,first,skip,Could not find sprite,0
r3,d,b,S,1,ok,S.js,2,second,skip,Could not find sprite,0
r4,d,b,T,1,ok,T.js,1,only,error,TypeError,0
r4,d,b,T,1,ok,T.js,2,other,maybe,,0
";

    #[test]
    fn pass_rates_per_test_and_project_and_a_deterministic_matrix() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tests.csv"), CSV).unwrap();
        assert!(is_test_study(dir.path()));
        let study = load(dir.path()).unwrap();
        assert_eq!(study.unknown, 1);
        assert_eq!(study.suites(), ["S", "T"]);
        let (_, first) = &study.by_test[&("S".to_string(), 1)];
        assert_eq!(*first, Counts { pass: 2, fail: 0, error: 0, skip: 1 });
        assert_eq!(study.by_project[&("S".to_string(), "a".to_string())].pass_rate(), Some(0.75));
        assert_eq!(study.by_project[&("S".to_string(), "b".to_string())].pass_rate(), Some(0.0));
        let [suites, by_test, by_project] = tables(&study);
        assert_eq!(suites.rows.len(), 2);
        assert!(by_test.csv().contains("S,2,second,3,1,1,0,1,0.3333333333333333"), "{}", by_test.csv());
        assert!(by_project.csv().contains("T,b,1,0,0,1,0,"), "{}", by_project.csv());
        let m = Matrix::of(&study, "S");
        assert_eq!((m.projects.len(), m.tests.len()), (2, 2));
        assert_eq!(cell_color(&m.cells[1][0].unwrap()), GREY);
        assert_eq!(cell_color(&Counts { pass: 1, ..Default::default() }), GREEN);
        assert_eq!(cell_color(&Counts { fail: 1, ..Default::default() }), RED);
        let out = dir.path().join("report");
        let files = write(&study, &out, "t", true).unwrap();
        assert!(files.contains(&PathBuf::from("img/matrix-S.png")), "{files:?}");
        let png = std::fs::read(out.join("img/matrix-S.png")).unwrap();
        write(&study, &out, "t", true).unwrap();
        assert_eq!(std::fs::read(out.join("img/matrix-S.png")).unwrap(), png, "same data, same bytes");
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        assert!(md.contains("| S | 2 | 2 | 6 | 3 | 1 | 0 | 2 | 50.00 |"), "{md}");
        assert!(differences(&study).is_none(), "no file has two entries");
        assert!(!files.iter().any(|f| f.starts_with("entry_differences")));
    }

    /// Two entries of one file (the second on another modelled machine): the verdicts that
    /// move between them are listed, per test, with the first (project, seed) where they do.
    #[test]
    fn verdicts_that_depend_on_the_entry_are_listed() {
        let csv = "run_id,dataset,project,algorithm,seed,status,suite,index,test,verdict,message,steps
r1,d,a,S,1,ok,S.js,1,first,pass,,10
r1,d,a,S,1,ok,S.js,2,second,fail,,5
r2,d,a,S-slow,1,ok,S.js,1,first,pass,,10
r2,d,a,S-slow,1,ok,S.js,2,second,pass,,5
r3,d,b,S,1,ok,S.js,1,first,pass,,10
r3,d,b,S,1,ok,S.js,2,second,pass,,5
r4,d,b,S-slow,1,ok,S.js,1,first,pass,,10
r4,d,b,S-slow,1,ok,S.js,2,second,pass,,5
r5,d,a,T,1,ok,T.js,1,only,pass,,1
";
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tests.csv"), csv).unwrap();
        let study = load(dir.path()).unwrap();
        let diffs = entry_differences(&study);
        let key = |k: u64| ("S.js".to_string(), "S-slow".to_string(), "S".to_string(), k);
        assert_eq!(diffs[&key(1)], EntryDifference { compared: 2, differ: 0, example: None });
        let second = &diffs[&key(2)];
        assert_eq!((second.compared, second.differ), (2, 1));
        assert_eq!(second.example, Some(("a".into(), 1, "fail".into(), "pass".into())));
        assert_eq!(diffs.len(), 2, "T.js has one entry: nothing to compare");
        let (table, line) = differences(&study).unwrap();
        assert_eq!(table.rows.len(), 1);
        assert!(table.csv().contains("S.js,S-slow,S,2,second,2,1,a seed 1: fail -> pass"), "{}", table.csv());
        assert!(line.contains("1 of 4 verdicts differ"), "{line}");
        assert!(headline(&study).contains("1 of 4 verdicts differ"));
        let files = write(&study, &dir.path().join("report"), "t", false).unwrap();
        assert!(files.contains(&PathBuf::from("entry_differences.csv")), "{files:?}");
    }
}
