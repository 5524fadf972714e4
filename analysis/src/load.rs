//! Loading the exports of a study (`runs`, `timeline`, `mutants`; CSV or Parquet) with polars.
//!
//! Files are scanned lazily and only the columns the analysis needs are parsed, with the
//! types of `docs/exports.md`. Optional files and columns may be missing: what is missing is
//! recorded in [`Results::notes`] and the sections that need it say so in the report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use polars::prelude::*;

use clowder_schema::{Kind, MUTANTS, RUNS, TIMELINE, Table};

use crate::error::AnalysisError;

/// Label used for the dataset when `runs` has no `dataset` column.
pub const NO_DATASET: &str = "all";

/// One run (a row of `runs.csv`), with names interned as indices into [`Results`].
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// `run_id` (empty when the column is missing).
    pub run_id: String,
    /// Index into [`Results::datasets`].
    pub dataset: u32,
    /// Index into [`Results::projects`].
    pub project: u32,
    /// Index into [`Results::algorithms`].
    pub algorithm: u32,
    /// Seed.
    pub seed: u64,
    /// Status (`ok`, `error`, …).
    pub status: String,
    /// Reason for a non-ok status.
    pub error: String,
    /// Budget unit (`steps`, `executions`, …), if known.
    pub budget_unit: Option<String>,
    /// Budget amount.
    pub budget: Option<u64>,
    /// Coverage 0..1.
    pub coverage: Option<f64>,
    /// Covered targets.
    pub covered: Option<u64>,
    /// Targets in the project.
    pub total_targets: Option<u64>,
    /// VM steps used.
    pub steps: Option<u64>,
    /// Tests in the final (minimised) suite.
    pub tests_after_min: Option<u64>,
    /// Events in the final (minimised) suite.
    pub events_after_min: Option<u64>,
    /// Step at which every target was covered.
    pub steps_to_full_coverage: Option<u64>,
    /// Mutants generated.
    pub mutants: Option<u64>,
    /// Mutants killed.
    pub mutants_killed: Option<u64>,
    /// Mutants excluded (false positives on the original).
    pub mutants_excluded: Option<u64>,
    /// Runaway mutants.
    pub mutants_timeout: Option<u64>,
    /// Mutation score as exported.
    pub mutation_score: Option<f64>,
    /// Size of the run's event alphabet for sequence coverage (`seq_alphabet`).
    pub seq_alphabet: Option<u64>,
    /// Sequence coverage, one value per [`SEQ_METRICS`] column (empty in exports made before
    /// it existed).
    pub seq: [Option<f64>; SEQ_METRICS.len()],
    /// Neatest: statements covered on `stable_count` seeds (`None` for other algorithms).
    pub reliable_covered: Option<u64>,
}

/// The sequence-coverage columns of `runs` (issue 20, `docs/exports.md`): Kuhn–Higdon and
/// window coverage for t = 2, 3 of the final suite, then of the suite before minimisation.
pub const SEQ_METRICS: [&str; 8] = [
    "seq_kh2",
    "seq_kh3",
    "seq_win2",
    "seq_win3",
    "seq_kh2_unmin",
    "seq_kh3_unmin",
    "seq_win2_unmin",
    "seq_win3_unmin",
];

/// Status of a run that finished normally.
pub const STATUS_OK: &str = "ok";

/// Status of a run ended deterministically by its per-run work cap: its coverage, timeline and
/// digest are a partial but valid result.
pub const STATUS_LIMIT: &str = "limit";

impl Run {
    /// Whether the run carries a result the analysis uses: status `ok` or `limit`. A `limit`
    /// run's coverage is the deterministic outcome under the study's budget plus the work cap,
    /// so it is a sample like any other; every other status is a failure.
    pub fn has_result(&self) -> bool {
        self.status == STATUS_OK || self.is_limit()
    }

    /// Status `limit` (ended by the per-run work cap).
    pub fn is_limit(&self) -> bool {
        self.status == STATUS_LIMIT
    }

    /// Neatest's reliable coverage as a fraction of the project's targets (`None` for runs
    /// of other algorithms and for runs that report no targets).
    pub fn reliable_coverage(&self) -> Option<f64> {
        match (self.reliable_covered, self.total_targets) {
            (Some(c), Some(t)) if t > 0 => Some(c as f64 / t as f64),
            _ => None,
        }
    }
}

/// Coverage change points of the runs, stored contiguously per run (CSR layout).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    /// `offsets[i]..offsets[i+1]` are the points of run `i` (same order as [`Results::runs`]).
    pub offsets: Vec<usize>,
    /// Step of each change point (ascending within a run).
    pub steps: Vec<u64>,
    /// Covered targets from that step on.
    pub covered: Vec<u32>,
    /// `total_targets` of the run as given in the timeline (0 when unknown).
    pub total: Vec<u32>,
}

impl Timeline {
    /// Change points of run `i` as (steps, covered).
    pub fn points(&self, i: usize) -> impl Iterator<Item = (u64, u32)> + '_ {
        let r = self.offsets[i]..self.offsets[i + 1];
        self.steps[r.clone()].iter().copied().zip(self.covered[r].iter().copied())
    }
    /// Whether run `i` has any point.
    pub fn has(&self, i: usize) -> bool {
        self.offsets[i + 1] > self.offsets[i]
    }
}

/// Mutant verdict counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Verdicts {
    /// Killed.
    pub killed: u64,
    /// Survived.
    pub survived: u64,
    /// Runaway (step limit).
    pub timeout: u64,
    /// Excluded (false positive on the original).
    pub excluded: u64,
}

impl Verdicts {
    /// All mutants.
    pub fn total(&self) -> u64 {
        self.killed + self.survived + self.timeout + self.excluded
    }
    /// killed / (generated − excluded), as `mutation_score` in `runs.csv`.
    pub fn score(&self) -> Option<f64> {
        let d = self.total() - self.excluded;
        (d > 0).then(|| self.killed as f64 / d as f64)
    }
    /// Adds another count.
    pub fn add(&mut self, o: &Verdicts) {
        self.killed += o.killed;
        self.survived += o.survived;
        self.timeout += o.timeout;
        self.excluded += o.excluded;
    }
}

/// Mutant verdicts per run and operator.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mutants {
    /// Operators seen ([`OPERATORS`] order first).
    pub operators: Vec<String>,
    /// Verdict counts per (run index, operator index).
    pub counts: BTreeMap<(u32, usize), Verdicts>,
    /// Mutants the run's project has per (run index, operator index), when the export says
    /// (`stratum_size`; absent when every mutant was analysed or the export predates it).
    pub strata: BTreeMap<(u32, usize), u64>,
}

/// One input file that was read.
#[derive(Debug, Clone, PartialEq)]
pub struct InputFile {
    /// File name (relative to the results folder).
    pub name: String,
    /// Data rows.
    pub rows: usize,
    /// Optional columns that were absent.
    pub missing: Vec<String>,
}

/// Everything loaded from a results folder.
#[derive(Debug, Clone, Default)]
pub struct Results {
    /// Dataset names, sorted.
    pub datasets: Vec<String>,
    /// Project names, sorted.
    pub projects: Vec<String>,
    /// Algorithm labels, sorted.
    pub algorithms: Vec<String>,
    /// Runs sorted by (dataset, project, algorithm, seed).
    pub runs: Vec<Run>,
    /// Coverage change points, if `timeline` exists.
    pub timeline: Option<Timeline>,
    /// Mutant verdicts, if `mutants` exists.
    pub mutants: Option<Mutants>,
    /// Files read.
    pub files: Vec<InputFile>,
    /// Remarks about the input (missing files or columns, ignored rows).
    pub notes: Vec<String>,
}

/// A column the analysis reads.
pub(crate) struct Col {
    name: &'static str,
    dtype: DataType,
    required: bool,
}

/// The polars type a column of `kind` is read as.
fn dtype(kind: Kind) -> DataType {
    match kind {
        Kind::Str => DataType::String,
        Kind::U64 => DataType::UInt64,
        Kind::U32 => DataType::UInt32,
        Kind::F64 => DataType::Float64,
        Kind::Bool => DataType::Boolean,
    }
}

/// The columns called `names` (with whether a file must have them) of `table`, typed as the
/// schema (`clowder_schema`) says the writers write them.
pub(crate) fn schema_columns(table: &Table, names: &[(&'static str, bool)]) -> Result<Vec<Col>, AnalysisError> {
    names
        .iter()
        .map(|&(name, required)| {
            let c = table.column(name).ok_or_else(|| AnalysisError::Input {
                path: format!("{}.csv", table.name),
                msg: format!("internal: the export schema has no column {name}"),
            })?;
            Ok(Col { name, dtype: dtype(c.kind), required })
        })
        .collect()
}

/// The columns of `runs` the analysis reads, and whether it must have them. Others (`digest`,
/// `work`, …) are never parsed, so exports with more columns than the analysis knows, or fewer
/// optional ones, load alike.
const RUNS_READ: [(&str, bool); 31] = [
    ("run_id", false),
    ("dataset", false),
    ("project", true),
    ("algorithm", true),
    ("seed", true),
    ("status", true),
    ("error", false),
    ("budget_unit", false),
    ("budget", false),
    ("coverage", true),
    ("covered", false),
    ("total_targets", false),
    ("steps", false),
    ("tests_after_min", false),
    ("events_after_min", false),
    ("steps_to_full_coverage", false),
    ("mutants", false),
    ("mutants_killed", false),
    ("mutants_excluded", false),
    ("mutants_timeout", false),
    ("mutation_score", false),
    ("seq_alphabet", false),
    ("seq_kh2", false),
    ("seq_kh3", false),
    ("seq_win2", false),
    ("seq_win3", false),
    ("seq_kh2_unmin", false),
    ("seq_kh3_unmin", false),
    ("seq_win2_unmin", false),
    ("seq_win3_unmin", false),
    ("reliable_covered", false),
];

/// The columns of `timeline` the analysis reads.
const TIMELINE_READ: [(&str, bool); 4] =
    [("run_id", true), ("steps", true), ("covered", true), ("total_targets", false)];

/// The columns of `mutants` the analysis reads.
const MUTANTS_READ: [(&str, bool); 4] =
    [("run_id", true), ("operator", true), ("verdict", true), ("stratum_size", false)];

/// Early exports (before docs/exports.md) called the final suite size `tests`; read when
/// `tests_after_min` is absent. Not in the schema: nothing writes it any more.
const LEGACY_TESTS: &str = "tests";

fn runs_columns() -> Result<Vec<Col>, AnalysisError> {
    let mut cols = schema_columns(&RUNS, &RUNS_READ)?;
    cols.push(Col { name: LEGACY_TESTS, dtype: DataType::UInt64, required: false });
    Ok(cols)
}

/// Finds `<stem>.parquet` or `<stem>.csv` (Parquet first: same data, faster to read).
pub fn find(dir: &Path, stem: &str) -> Option<PathBuf> {
    [format!("{stem}.parquet"), format!("{stem}.csv")].into_iter().map(|n| dir.join(n)).find(|p| p.is_file())
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

pub(crate) fn err(path: &Path, msg: impl std::fmt::Display) -> AnalysisError {
    AnalysisError::Input { path: path.display().to_string(), msg: msg.to_string() }
}

/// Reads the wanted columns of one file; absent optional columns are listed, absent required
/// ones are an error naming them.
pub(crate) fn read_columns(path: &Path, cols: &[Col]) -> Result<(DataFrame, Vec<String>), AnalysisError> {
    let is_parquet = path.extension().is_some_and(|e| e == "parquet");
    let pl_path = PlRefPath::new(path.to_string_lossy().to_string());
    let mut lf = if is_parquet {
        LazyFrame::scan_parquet(pl_path, ScanArgsParquet { glob: false, ..Default::default() })
            .map_err(|e| err(path, e))?
    } else {
        // Known columns are parsed with their contract types directly (no inference).
        let schema: Schema = cols.iter().map(|c| Field::new(c.name.into(), c.dtype.clone())).collect();
        LazyCsvReader::new(pl_path)
            .with_has_header(true)
            .with_glob(false)
            .with_dtype_overwrite(Some(Arc::new(schema)))
            .finish()
            .map_err(|e| err(path, e))?
    };
    let schema = lf.collect_schema().map_err(|e| err(path, e))?;
    let mut exprs = Vec::new();
    let mut missing = Vec::new();
    let mut missing_required = Vec::new();
    for c in cols {
        if schema.contains(c.name) {
            exprs.push(col(c.name).strict_cast(c.dtype.clone()));
        } else if c.required {
            missing_required.push(c.name);
        } else {
            missing.push(c.name.to_string());
        }
    }
    if !missing_required.is_empty() {
        return Err(err(path, format!("missing required column(s): {}", missing_required.join(", "))));
    }
    let df = lf.select(exprs).collect().map_err(|e| err(path, e))?;
    Ok((df, missing))
}

/// Column accessors that turn polars errors into input errors.
pub(crate) struct Frame<'a> {
    pub(crate) df: &'a DataFrame,
    pub(crate) path: &'a Path,
}

impl Frame<'_> {
    fn has(&self, name: &str) -> bool {
        self.df.column(name).is_ok()
    }
    pub(crate) fn str(&self, name: &str) -> Result<Option<Vec<Option<&str>>>, AnalysisError> {
        if !self.has(name) {
            return Ok(None);
        }
        let c = self.df.column(name).and_then(|c| c.str()).map_err(|e| err(self.path, e))?;
        Ok(Some(c.iter().collect()))
    }
    pub(crate) fn u64(&self, name: &str) -> Result<Option<Vec<Option<u64>>>, AnalysisError> {
        if !self.has(name) {
            return Ok(None);
        }
        // u32 columns are widened: the analysis counts in u64.
        let c = self.df.column(name).and_then(|c| c.cast(&DataType::UInt64)).map_err(|e| err(self.path, e))?;
        Ok(Some(c.u64().map_err(|e| err(self.path, e))?.iter().collect()))
    }
    fn f64(&self, name: &str) -> Result<Option<Vec<Option<f64>>>, AnalysisError> {
        if !self.has(name) {
            return Ok(None);
        }
        let c = self.df.column(name).and_then(|c| c.f64()).map_err(|e| err(self.path, e))?;
        Ok(Some(c.iter().collect()))
    }
}

/// Interns names: sorted unique list and the index of each row's name in it.
fn intern(values: &[Option<&str>], default: &str) -> (Vec<String>, Vec<u32>) {
    let mut set: BTreeMap<&str, u32> = BTreeMap::new();
    for v in values {
        set.entry(v.unwrap_or(default)).or_insert(0);
    }
    for (i, (_, idx)) in set.iter_mut().enumerate() {
        *idx = i as u32;
    }
    let idx = values.iter().map(|v| set[v.unwrap_or(default)]).collect();
    (set.keys().map(|s| s.to_string()).collect(), idx)
}

fn get<T: Copy>(col: &Option<Vec<Option<T>>>, i: usize) -> Option<T> {
    col.as_ref().and_then(|c| c[i])
}

/// Loads a results folder: `runs` (required), `timeline` and `mutants` (optional).
pub fn load(dir: &Path) -> Result<Results, AnalysisError> {
    if !dir.is_dir() {
        return Err(err(dir, "not a folder (expected results/<experiment>)"));
    }
    let runs_path =
        find(dir, "runs").ok_or_else(|| err(dir, "no runs.csv or runs.parquet (run the experiment first)"))?;
    let mut res = load_runs(&runs_path)?;
    match find(dir, "timeline") {
        Some(p) => load_timeline(&p, &mut res)?,
        None => res
            .notes
            .push("timeline.csv/.parquet not found: coverage over time and per-run timelines are not available".into()),
    }
    match find(dir, "mutants") {
        Some(p) => load_mutants(&p, &mut res)?,
        None => res.notes.push("mutants.csv/.parquet not found: mutation scores per operator are not available".into()),
    }
    Ok(res)
}

fn load_runs(path: &Path) -> Result<Results, AnalysisError> {
    let (df, mut missing) = read_columns(path, &runs_columns()?)?;
    let f = Frame { df: &df, path };
    let n = df.height();
    let mut notes = Vec::new();
    let dataset = f.str("dataset")?;
    let dataset = dataset.unwrap_or_else(|| vec![None; n]);
    if !f.has("dataset") {
        notes.push(format!("runs: no `dataset` column; all projects form one dataset \"{NO_DATASET}\""));
    }
    let project = f.str("project")?.unwrap_or_default();
    let algorithm = f.str("algorithm")?.unwrap_or_default();
    if project.iter().any(|p| p.is_none()) || algorithm.iter().any(|a| a.is_none()) {
        return Err(err(path, "empty `project` or `algorithm` value"));
    }
    let (datasets, ds_idx) = intern(&dataset, NO_DATASET);
    let (projects, proj_idx) = intern(&project, "");
    let (algorithms, alg_idx) = intern(&algorithm, "");
    let run_id = f.str("run_id")?;
    let seed = f.u64("seed")?;
    let status = f.str("status")?.unwrap_or_default();
    let error = f.str("error")?;
    let budget_unit = f.str("budget_unit")?;
    let budget = f.u64("budget")?;
    let coverage = f.f64("coverage")?;
    let covered = f.u64("covered")?;
    let total = f.u64("total_targets")?;
    let steps = f.u64("steps")?;
    let mut tests = f.u64("tests_after_min")?;
    if tests.is_none() {
        if let Some(t) = f.u64(LEGACY_TESTS)? {
            notes.push("runs: `tests_after_min` missing; using the legacy `tests` column (same value)".into());
            missing.retain(|m| m != "tests_after_min");
            tests = Some(t);
        }
    }
    missing.retain(|m| m != LEGACY_TESTS);
    let events = f.u64("events_after_min")?;
    let to_full = f.u64("steps_to_full_coverage")?;
    let mutants = f.u64("mutants")?;
    let killed = f.u64("mutants_killed")?;
    let excluded = f.u64("mutants_excluded")?;
    let timeout = f.u64("mutants_timeout")?;
    let mscore = f.f64("mutation_score")?;
    let alphabet = f.u64("seq_alphabet")?;
    let seq = SEQ_METRICS.map(|m| f.f64(m));
    let seq: Vec<Option<Vec<Option<f64>>>> = seq.into_iter().collect::<Result<_, _>>()?;
    let reliable = f.u64("reliable_covered")?;

    let mut runs = Vec::with_capacity(n);
    for i in 0..n {
        let seed_v = get(&seed, i).ok_or_else(|| err(path, format!("row {}: empty seed", i + 2)))?;
        let status_v = status[i].ok_or_else(|| err(path, format!("row {}: empty status", i + 2)))?;
        let cov = get(&coverage, i);
        if let Some(c) = cov {
            if !(0.0..=1.0).contains(&c) {
                return Err(err(path, format!("row {}: coverage {c} outside 0..1", i + 2)));
            }
        }
        runs.push(Run {
            run_id: run_id.as_ref().and_then(|c| c[i]).unwrap_or("").to_string(),
            dataset: ds_idx[i],
            project: proj_idx[i],
            algorithm: alg_idx[i],
            seed: seed_v,
            status: status_v.to_string(),
            error: error.as_ref().and_then(|c| c[i]).unwrap_or("").to_string(),
            budget_unit: budget_unit.as_ref().and_then(|c| c[i]).map(str::to_string),
            budget: get(&budget, i),
            coverage: cov,
            covered: get(&covered, i),
            total_targets: get(&total, i),
            steps: get(&steps, i),
            tests_after_min: get(&tests, i),
            events_after_min: get(&events, i),
            steps_to_full_coverage: get(&to_full, i),
            mutants: get(&mutants, i),
            mutants_killed: get(&killed, i),
            mutants_excluded: get(&excluded, i),
            mutants_timeout: get(&timeout, i),
            mutation_score: get(&mscore, i),
            seq_alphabet: get(&alphabet, i),
            seq: std::array::from_fn(|k| get(&seq[k], i)),
            reliable_covered: get(&reliable, i),
        });
    }
    runs.sort_by_key(|r| (r.dataset, r.project, r.algorithm, r.seed));
    for w in runs.windows(2) {
        if (w[0].dataset, w[0].project, w[0].algorithm, w[0].seed)
            == (w[1].dataset, w[1].project, w[1].algorithm, w[1].seed)
        {
            return Err(err(
                path,
                format!(
                    "two rows for dataset {}, project {}, algorithm {}, seed {}",
                    datasets[w[0].dataset as usize],
                    projects[w[0].project as usize],
                    algorithms[w[0].algorithm as usize],
                    w[0].seed
                ),
            ));
        }
    }
    let bad_ok = runs.iter().filter(|r| r.has_result() && r.coverage.is_none()).count();
    if bad_ok > 0 {
        notes.push(format!("runs: {bad_ok} ok/limit run(s) without coverage are treated as failed"));
        for r in runs.iter_mut().filter(|r| r.has_result() && r.coverage.is_none()) {
            r.status = format!("{}_without_coverage", r.status);
        }
    }
    missing.sort();
    if !missing.is_empty() {
        notes.push(format!("{}: optional column(s) absent: {}", file_name(path), missing.join(", ")));
    }
    Ok(Results {
        datasets,
        projects,
        algorithms,
        runs,
        timeline: None,
        mutants: None,
        files: vec![InputFile { name: file_name(path), rows: n, missing }],
        notes,
    })
}

/// Index from run_id to run position; only for lookups (never iterated).
fn run_index(res: &Results) -> std::collections::HashMap<&str, u32> {
    res.runs
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.run_id.is_empty())
        .map(|(i, r)| (r.run_id.as_str(), i as u32))
        .collect()
}

/// Maps each row's run_id to a run index (None for unknown ids); consecutive rows of the same
/// run (the usual sorted layout) cost one string comparison.
fn map_rows(ids: &StringChunked, index: &std::collections::HashMap<&str, u32>) -> Vec<Option<u32>> {
    let mut out = Vec::with_capacity(ids.len());
    let mut last: Option<(&str, Option<u32>)> = None;
    for id in ids.iter() {
        let v = match (id, last) {
            (Some(s), Some((l, v))) if s == l => v,
            (Some(s), _) => {
                let v = index.get(s).copied();
                last = Some((s, v));
                v
            }
            (None, _) => None,
        };
        out.push(v);
    }
    out
}

fn load_timeline(path: &Path, res: &mut Results) -> Result<(), AnalysisError> {
    if res.runs.iter().all(|r| r.run_id.is_empty()) {
        res.notes.push(format!("{}: ignored, runs has no `run_id` column to join on", file_name(path)));
        return Ok(());
    }
    let (df, missing) = read_columns(path, &schema_columns(&TIMELINE, &TIMELINE_READ)?)?;
    let n = df.height();
    let e = |x: PolarsError| err(path, x);
    let ids = df.column("run_id").and_then(|c| c.str()).map_err(e)?;
    // Plain vectors: sequential iteration, no per-row chunk lookups.
    let steps: Vec<Option<u64>> = df.column("steps").and_then(|c| c.u64()).map_err(e)?.iter().collect();
    let covered: Vec<Option<u32>> = df.column("covered").and_then(|c| c.u32()).map_err(e)?.iter().collect();
    let total: Option<Vec<Option<u32>>> = match df.column("total_targets") {
        Ok(c) => Some(c.u32().map_err(e)?.iter().collect()),
        Err(_) => None,
    };
    let index = run_index(res);
    let owner = map_rows(ids, &index);
    // Counting sort of the rows by run (stable: keeps file order within a run).
    let runs = res.runs.len();
    let mut counts = vec![0usize; runs + 1];
    let mut unknown = 0usize;
    let mut empty_values = 0usize;
    for (i, o) in owner.iter().enumerate() {
        match o {
            Some(r) if steps[i].is_some() && covered[i].is_some() => counts[*r as usize + 1] += 1,
            Some(_) => empty_values += 1,
            None => unknown += 1,
        }
    }
    for i in 0..runs {
        counts[i + 1] += counts[i];
    }
    let offsets = counts.clone();
    let total_points = offsets[runs];
    let mut out_steps = vec![0u64; total_points];
    let mut out_cov = vec![0u32; total_points];
    let mut out_total = vec![0u32; total_points];
    let mut fill = counts;
    for (i, o) in owner.iter().enumerate() {
        let Some(r) = o else { continue };
        let (Some(s), Some(c)) = (steps[i], covered[i]) else { continue };
        let at = fill[*r as usize];
        fill[*r as usize] += 1;
        out_steps[at] = s;
        out_cov[at] = c;
        out_total[at] = total.as_ref().and_then(|t| t[i]).unwrap_or(0);
    }
    // Points must ascend by step within a run; sort the (rare) runs that do not.
    let mut unsorted = 0usize;
    for r in 0..runs {
        let range = offsets[r]..offsets[r + 1];
        if out_steps[range.clone()].windows(2).any(|w| w[0] > w[1]) {
            unsorted += 1;
            let mut pts: Vec<(u64, u32, u32)> =
                range.clone().map(|k| (out_steps[k], out_cov[k], out_total[k])).collect();
            pts.sort_by_key(|p| p.0); // stable: same-step points keep file order
            for (k, p) in range.zip(pts) {
                (out_steps[k], out_cov[k], out_total[k]) = p;
            }
        }
    }
    if unknown > 0 {
        res.notes.push(format!("{}: {unknown} row(s) for run_ids not in runs were ignored", file_name(path)));
    }
    if empty_values > 0 {
        res.notes.push(format!("{}: {empty_values} row(s) with empty steps/covered were ignored", file_name(path)));
    }
    if unsorted > 0 {
        res.notes
            .push(format!("{}: points of {unsorted} run(s) were not in step order and were sorted", file_name(path)));
    }
    if !missing.is_empty() {
        res.notes.push(format!("{}: optional column(s) absent: {}", file_name(path), missing.join(", ")));
    }
    res.files.push(InputFile { name: file_name(path), rows: n, missing });
    res.timeline = Some(Timeline { offsets, steps: out_steps, covered: out_cov, total: out_total });
    Ok(())
}

fn load_mutants(path: &Path, res: &mut Results) -> Result<(), AnalysisError> {
    if res.runs.iter().all(|r| r.run_id.is_empty()) {
        res.notes.push(format!("{}: ignored, runs has no `run_id` column to join on", file_name(path)));
        return Ok(());
    }
    let (df, missing) = read_columns(path, &schema_columns(&MUTANTS, &MUTANTS_READ)?)?;
    let n = df.height();
    let e = |x: PolarsError| err(path, x);
    let ids = df.column("run_id").and_then(|c| c.str()).map_err(e)?;
    let ops: Vec<Option<&str>> = df.column("operator").and_then(|c| c.str()).map_err(e)?.iter().collect();
    let verdicts: Vec<Option<&str>> = df.column("verdict").and_then(|c| c.str()).map_err(e)?.iter().collect();
    let sizes = Frame { df: &df, path }.u64("stratum_size")?.unwrap_or_default();
    let index = run_index(res);
    let owner = map_rows(ids, &index);
    // Operators seen, in first-seen order; renumbered into report order at the end.
    let mut seen: Vec<std::string::String> = Vec::new();
    let mut counts: BTreeMap<(u32, usize), Verdicts> = BTreeMap::new();
    let mut strata: BTreeMap<(u32, usize), u64> = BTreeMap::new();
    let (mut unknown, mut bad) = (0usize, BTreeMap::<std::string::String, usize>::new());
    for (i, o) in owner.iter().enumerate() {
        let Some(r) = o else {
            unknown += 1;
            continue;
        };
        let (Some(op), Some(v)) = (ops[i], verdicts[i]) else {
            *bad.entry("(empty)".into()).or_default() += 1;
            continue;
        };
        let op_idx = match seen.iter().position(|s| s == op) {
            Some(k) => k,
            None if seen.len() < MAX_OPERATORS => {
                seen.push(op.to_string());
                seen.len() - 1
            }
            None => return Err(err(path, format!("more than {MAX_OPERATORS} distinct operators"))),
        };
        if let Some(n) = sizes.get(i).copied().flatten().filter(|&n| n > 0) {
            let size = strata.entry((*r, op_idx)).or_insert(0);
            *size = (*size).max(n);
        }
        let slot = counts.entry((*r, op_idx)).or_default();
        match v {
            "killed" => slot.killed += 1,
            "survived" => slot.survived += 1,
            "timeout" => slot.timeout += 1,
            "excluded" => slot.excluded += 1,
            other => *bad.entry(other.chars().take(40).collect()).or_default() += 1,
        }
    }
    let mut order: Vec<usize> = (0..seen.len()).collect();
    order.sort_by_key(|&k| operator_rank(&seen[k]));
    let operators: Vec<std::string::String> = order.iter().map(|&k| seen[k].clone()).collect();
    let mut renumber = vec![0usize; seen.len()];
    for (new, &old) in order.iter().enumerate() {
        renumber[old] = new;
    }
    let counts = counts.into_iter().map(|((r, k), v)| ((r, renumber[k]), v)).collect();
    let strata = strata.into_iter().map(|((r, k), n)| ((r, renumber[k]), n)).collect();
    if unknown > 0 {
        res.notes.push(format!("{}: {unknown} row(s) for run_ids not in runs were ignored", file_name(path)));
    }
    for (v, c) in &bad {
        res.notes.push(format!("{}: {c} row(s) with unknown verdict {v:?} were ignored", file_name(path)));
    }
    res.files.push(InputFile { name: file_name(path), rows: n, missing });
    res.mutants = Some(Mutants { operators, counts, strata });
    Ok(())
}

/// Limit on distinct mutation operators (there are 8; more means a broken file).
const MAX_OPERATORS: usize = 64;

/// The mutation operators in the order of the Whisker paper; others follow alphabetically.
pub const OPERATORS: [&str; 8] = ["KRM", "SBD", "SDM", "AOR", "LOR", "ROR", "NCM", "VRM"];

fn operator_rank(op: &str) -> (usize, std::string::String) {
    (OPERATORS.iter().position(|o| *o == op).unwrap_or(OPERATORS.len()), op.to_string())
}
