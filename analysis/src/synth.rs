//! A deterministic synthetic study in the export format, for the benchmark and for tests.
//!
//! Not a model of real test generation: coverage levels are drawn so that comparisons have
//! many ties (easy projects fully covered by everyone) and clear differences elsewhere, and
//! every run has about `points` coverage change points over its step budget.

use std::path::Path;

use clowder_schema::{Formats, MUTANTS, RUNS, TIMELINE, TableWriter, Value, WriteError};

use crate::load::SEQ_METRICS;

/// What to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthSpec {
    /// Dataset names; projects are split evenly between them.
    pub datasets: Vec<String>,
    /// Projects in total.
    pub projects: usize,
    /// Algorithm labels.
    pub algorithms: Vec<String>,
    /// Seeds 1..=seeds.
    pub seeds: u64,
    /// Change points per run (besides the initial one), when the project is large enough.
    pub points: usize,
    /// Step budget per run.
    pub budget: u64,
    /// Mutants per run (0: no `mutants.csv`, mutation columns 0).
    pub mutants: usize,
    /// Generator seed.
    pub seed: u64,
}

impl SynthSpec {
    /// The benchmark study: 1000 projects × 3 algorithms × 20 seeds = 60 000 runs with about
    /// 50 change points each over 180 000 steps (the Whisker budget).
    pub fn benchmark() -> Self {
        Self {
            datasets: vec!["bench".into()],
            projects: 1000,
            algorithms: vec!["mio".into(), "mosa".into(), "random".into()],
            seeds: 20,
            points: 50,
            budget: 180_000,
            mutants: 0,
            seed: 1,
        }
    }

    /// Runs in the study.
    pub fn runs(&self) -> usize {
        self.projects * self.algorithms.len() * self.seeds as usize
    }
}

/// SplitMix64 (the generator the VM uses), fixed seed: same spec, same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
}

fn hex_id(a: u64, b: u64) -> String {
    let mut r = Rng(a.wrapping_mul(0x100_0000_01B3) ^ b);
    format!("{:016x}{:016x}", r.next(), r.next())
}

const OPS: [&str; 8] = ["KRM", "SBD", "SDM", "AOR", "LOR", "ROR", "NCM", "VRM"];

/// Sequence coverage of a run (`seq_alphabet`, then the [`crate::load::SEQ_METRICS`] values),
/// from its own stream so that the rest of the study is drawn as before these columns existed.
/// Grows with the run's coverage, with noise; the unminimised suite covers at least as much.
fn sequence(run_key: u64, coverage: f64) -> (u32, [f64; 8]) {
    let mut r = Rng(run_key ^ 0x5EC0_5EC0_5EC0_5EC0);
    let alphabet = 2 + r.below(30) as u32;
    let mut v = [0.0; 8];
    for k in 0..4 {
        // Longer tuples are harder to cover.
        let shrink = if k % 2 == 0 { 0.9 } else { 0.6 };
        v[k] = (coverage * shrink * (0.7 + 0.3 * r.unit())).min(1.0);
        v[k + 4] = (v[k] + (1.0 - v[k]) * 0.5 * r.unit()).min(1.0);
    }
    (alphabet, v)
}

/// Writes `runs.csv`, `timeline.csv` and (with mutants) `mutants.csv` into `dir`, through the
/// exports' own writer and tables (`clowder_schema`), CSV only: the benchmark and the tests
/// make the Parquet form themselves.
pub fn write_study(dir: &Path, spec: &SynthSpec) -> Result<(), WriteError> {
    std::fs::create_dir_all(dir).map_err(|source| WriteError::Io { path: dir.to_path_buf(), source })?;
    let mut runs = TableWriter::create_as(dir, RUNS, Formats::CsvOnly)?;
    let mut tl = TableWriter::create_as(dir, TIMELINE, Formats::CsvOnly)?;
    let mut mu = if spec.mutants > 0 { Some(TableWriter::create_as(dir, MUTANTS, Formats::CsvOnly)?) } else { None };
    // Mutants per operator in every run (all analysed: each stratum is complete).
    let strata: Vec<u32> = (0..OPS.len()).map(|o| (o..spec.mutants).step_by(OPS.len()).count() as u32).collect();
    let mut rng = Rng(spec.seed);
    let nds = spec.datasets.len().max(1);
    let per_ds = spec.projects.div_ceil(nds);
    let mut steps_buf: Vec<u64> = Vec::with_capacity(spec.points + 1);
    let mut cov_buf: Vec<u64> = Vec::with_capacity(spec.points + 1);
    for p in 0..spec.projects {
        let ds = spec.datasets.get(p / per_ds).map(String::as_str).unwrap_or("bench");
        let project = format!("p{p:05}");
        let total = 40 + rng.below(560);
        // Project difficulty: a third of the projects are easy (everyone reaches 100 %).
        let easy = rng.below(3) == 0;
        let base = 0.3 + 0.6 * rng.unit();
        for (ai, alg) in spec.algorithms.iter().enumerate() {
            let strength = 0.04 * ai as f64;
            for seed in 1..=spec.seeds {
                let run_key = (p as u64) << 20 | (ai as u64) << 10;
                let run_id = hex_id(run_key, seed);
                let final_cov = if easy {
                    total
                } else {
                    // Quantised levels so that runs tie often.
                    let level = (base + strength + 0.05 * rng.below(3) as f64).min(1.0);
                    ((total as f64 * level).round() as u64).clamp(1, total)
                };
                // Change points: strictly increasing covered counts at increasing steps,
                // front-loaded like real searches.
                let n = spec.points.min(final_cov as usize).max(1);
                steps_buf.clear();
                cov_buf.clear();
                let end_step =
                    if final_cov == total { spec.budget / 4 + rng.below(spec.budget / 2) } else { spec.budget };
                let mut last_step = 0;
                for k in 1..=n {
                    let frac = (k as f64 / n as f64).powi(3);
                    let s = ((frac * end_step as f64) as u64).max(last_step + 1);
                    last_step = s;
                    steps_buf.push(s);
                    cov_buf.push(((k as u64) * final_cov).div_ceil(n as u64));
                }
                let full_at = (final_cov == total).then(|| *steps_buf.last().unwrap_or(&0));
                let used = if full_at.is_some() { last_step } else { spec.budget };
                let ctx = |v: &mut Vec<Value>| {
                    v.extend([run_id.as_str().into(), ds.into(), project.as_str().into(), alg.as_str().into()]);
                    v.extend([seed.into(), "ok".into()]);
                };
                let points = std::iter::once((0, 0, 0))
                    .chain(steps_buf.iter().zip(&cov_buf).enumerate().map(|(k, (&s, &c))| (s, k as u64 + 1, c)));
                for (s, executions, c) in points {
                    let mut v = Vec::with_capacity(TIMELINE.columns.len());
                    ctx(&mut v);
                    v.extend([s.into(), executions.into(), Value::U(c), Value::U(total)]);
                    tl.push(&v)?;
                }
                let (mut killed, mut excluded) = (0u64, 0u64);
                if let Some(m) = mu.as_mut() {
                    for k in 0..spec.mutants {
                        let op = OPS[k % OPS.len()];
                        let roll = rng.unit();
                        let verdict = if roll < 0.02 {
                            excluded += 1;
                            "excluded"
                        } else if roll < 0.5 + 0.3 * (final_cov as f64 / total as f64) - 0.2 {
                            killed += 1;
                            "killed"
                        } else {
                            "survived"
                        };
                        let mut v = Vec::with_capacity(MUTANTS.columns.len());
                        ctx(&mut v);
                        v.extend([format!("m{k}").into(), op.into(), format!("b{k}").into(), verdict.into()]);
                        v.push(strata[k % OPS.len()].into());
                        m.push(&v)?;
                    }
                }
                let mutants = spec.mutants as u64;
                let score = (mutants > excluded).then(|| killed as f64 / (mutants - excluded) as f64);
                let tests = 1 + rng.below(5);
                let coverage = final_cov as f64 / total as f64;
                let (alphabet, seq) = sequence(run_key ^ seed, coverage);
                let exe = 100 + rng.below(900);
                let mut cells: Vec<(&str, Value)> = vec![
                    ("run_id", run_id.as_str().into()),
                    ("dataset", ds.into()),
                    ("project", project.as_str().into()),
                    ("project_hash", hex_id(p as u64, 0).into()),
                    ("algorithm", alg.as_str().into()),
                    ("config", format!("{{\"algorithm\":\"{alg}\"}}").into()),
                    ("seed", seed.into()),
                    ("budget_unit", "steps".into()),
                    ("budget", spec.budget.into()),
                    ("status", "ok".into()),
                    ("error", "".into()),
                    ("coverage", coverage.into()),
                    ("covered", Value::U(final_cov)),
                    ("total_targets", Value::U(total)),
                    ("steps", used.into()),
                    ("executions", exe.into()),
                    ("evaluations", exe.into()),
                    ("work", used.into()),
                    ("tests_before_min", Value::U(tests + rng.below(10))),
                    ("tests_after_min", Value::U(tests)),
                    ("events_before_min", Value::U(20 + rng.below(80))),
                    ("events_after_min", Value::U(2 * tests + rng.below(20))),
                    ("full_coverage", full_at.is_some().into()),
                    ("steps_to_full_coverage", full_at.into()),
                    ("mutants", Value::U(mutants)),
                    ("mutants_killed", Value::U(killed)),
                    ("mutants_excluded", Value::U(excluded)),
                    ("mutants_timeout", Value::U(0)),
                    ("mutation_score", score.into()),
                    ("seq_alphabet", alphabet.into()),
                    ("geometry", "exact".into()),
                    ("reproducible", true.into()),
                    ("digest", hex_id(p as u64, seed << 8 | ai as u64).into()),
                    ("duration_ms", (1000 + rng.below(100_000)).into()),
                ];
                cells.extend(SEQ_METRICS.iter().zip(seq).map(|(&m, x)| (m, x.into())));
                runs.push(&RUNS.row(cells)?)?;
            }
        }
    }
    runs.finish()?;
    tl.finish()?;
    if let Some(m) = mu {
        m.finish()?;
    }
    Ok(())
}
