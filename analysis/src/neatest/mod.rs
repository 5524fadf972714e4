//! The Neatest paper's tables from a study and its follow-ups (`clowder neatest-tables`):
//! Table 3 (coverage and reliable coverage, the focus algorithm against each other), Table 4
//! (suites replayed on new seeds: `clowder replay-study`'s CSV) and Table 5 (mutants and the
//! original judged by the networks: `clowder judge-study`'s CSV, beside the study's own static
//! verdicts of the same mutants).
//!
//! This module reads the follow-up files; [`tables`] computes the tables.

pub mod tables;

use std::collections::BTreeMap;
use std::path::Path;

use clowder_schema::{JUDGED, MUTANTS, REPLAYS};

use crate::error::AnalysisError;
use crate::load::{Frame, err, read_columns, schema_columns};

pub use tables::{Options, Tables, tables};

/// One replay of a run's suite (a row of `clowder replay-study`'s CSV).
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// The run.
    pub run_id: String,
    /// Its project.
    pub project: String,
    /// Its algorithm label.
    pub algorithm: String,
    /// `static` or `dynamic`.
    pub suite: String,
    /// Statements the suite covered on this seed.
    pub covered: u64,
    /// Statements of the project.
    pub total: u64,
}

/// One program judged by a run's networks (a row of `clowder judge-study`'s CSV).
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// The Neatest run whose dynamic suite judged.
    pub run_id: String,
    /// Its project.
    pub project: String,
    /// `original`, or the mutant's id.
    pub program: String,
    /// Some network failed the program.
    pub fail: bool,
}

impl Judged {
    /// Whether the original program was judged (a failure is a false positive).
    pub fn is_original(&self) -> bool {
        self.program == "original"
    }
}

/// Reads `clowder replay-study`'s CSV.
pub fn read_replays(path: &Path) -> Result<Vec<Replay>, AnalysisError> {
    let cols =
        [("run_id", true), ("project", true), ("algorithm", true), ("suite", true), ("covered", true), ("total", true)];
    let (df, _) = read_columns(path, &schema_columns(&REPLAYS, &cols)?)?;
    let f = Frame { df: &df, path };
    let (run, project, alg, suite) =
        (req_str(&f, "run_id")?, req_str(&f, "project")?, req_str(&f, "algorithm")?, req_str(&f, "suite")?);
    let (covered, total) = (req_u64(&f, "covered")?, req_u64(&f, "total")?);
    let mut out = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        let row = i + 2;
        let s = |c: &[Option<&str>], name: &str| {
            c[i].map(str::to_string).ok_or_else(|| err(path, format!("row {row}: empty {name}")))
        };
        let n = |c: &[Option<u64>], name: &str| c[i].ok_or_else(|| err(path, format!("row {row}: empty {name}")));
        let r = Replay {
            run_id: s(&run, "run_id")?,
            project: s(&project, "project")?,
            algorithm: s(&alg, "algorithm")?,
            suite: s(&suite, "suite")?,
            covered: n(&covered, "covered")?,
            total: n(&total, "total")?,
        };
        if r.covered > r.total {
            return Err(err(path, format!("row {row}: {} of {} statements covered", r.covered, r.total)));
        }
        out.push(r);
    }
    Ok(out)
}

/// Reads `clowder judge-study`'s CSV.
pub fn read_judged(path: &Path) -> Result<Vec<Judged>, AnalysisError> {
    let cols = [("run_id", true), ("project", true), ("program", true), ("verdict", true)];
    let (df, _) = read_columns(path, &schema_columns(&JUDGED, &cols)?)?;
    let f = Frame { df: &df, path };
    let (run, project, program, verdict) =
        (req_str(&f, "run_id")?, req_str(&f, "project")?, req_str(&f, "program")?, req_str(&f, "verdict")?);
    let mut out = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        let row = i + 2;
        let s = |c: &[Option<&str>], name: &str| {
            c[i].map(str::to_string).ok_or_else(|| err(path, format!("row {row}: empty {name}")))
        };
        let fail = match verdict[i] {
            Some("fail") => true,
            Some("pass") => false,
            v => return Err(err(path, format!("row {row}: verdict {v:?} is neither pass nor fail"))),
        };
        out.push(Judged {
            run_id: s(&run, "run_id")?,
            project: s(&project, "project")?,
            program: s(&program, "program")?,
            fail,
        });
    }
    Ok(out)
}

/// The study's own verdicts per (run id, mutant id) from its `mutants` export (`killed`,
/// `survived`, …): what the static suite of a run said of each mutant it analysed.
pub fn read_static_verdicts(path: &Path) -> Result<BTreeMap<(String, String), String>, AnalysisError> {
    let cols = [("run_id", true), ("mutant_id", true), ("verdict", true)];
    let (df, _) = read_columns(path, &schema_columns(&MUTANTS, &cols)?)?;
    let f = Frame { df: &df, path };
    let (run, mutant, verdict) = (req_str(&f, "run_id")?, req_str(&f, "mutant_id")?, req_str(&f, "verdict")?);
    let mut out = BTreeMap::new();
    for i in 0..df.height() {
        if let (Some(r), Some(m), Some(v)) = (run[i], mutant[i], verdict[i]) {
            out.insert((r.to_string(), m.to_string()), v.to_string());
        }
    }
    Ok(out)
}

fn req_str<'a>(f: &'a Frame<'a>, name: &str) -> Result<Vec<Option<&'a str>>, AnalysisError> {
    f.str(name)?.ok_or_else(|| err(f.path, format!("no column {name}")))
}

fn req_u64(f: &Frame<'_>, name: &str) -> Result<Vec<Option<u64>>, AnalysisError> {
    f.u64(name)?.ok_or_else(|| err(f.path, format!("no column {name}")))
}
