//! A deterministic synthetic study in the export format, for the benchmark and for tests.
//!
//! Not a model of real test generation: coverage levels are drawn so that comparisons have
//! many ties (easy projects fully covered by everyone) and clear differences elsewhere, and
//! every run has about `points` coverage change points over its step budget.

use std::io::{BufWriter, Write};
use std::path::Path;

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

/// Writes `runs.csv`, `timeline.csv` and (with mutants) `mutants.csv` into `dir`.
pub fn write_study(dir: &Path, spec: &SynthSpec) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut runs = BufWriter::with_capacity(1 << 20, std::fs::File::create(dir.join("runs.csv"))?);
    let mut tl = BufWriter::with_capacity(1 << 22, std::fs::File::create(dir.join("timeline.csv"))?);
    let mut mu = if spec.mutants > 0 {
        Some(BufWriter::with_capacity(1 << 20, std::fs::File::create(dir.join("mutants.csv"))?))
    } else {
        None
    };
    writeln!(
        runs,
        "run_id,dataset,project,project_hash,algorithm,config,seed,budget_unit,budget,status,error,coverage,covered,\
         total_targets,steps,executions,evaluations,tests_before_min,tests_after_min,events_before_min,\
         events_after_min,full_coverage,steps_to_full_coverage,mutants,mutants_killed,mutants_excluded,\
         mutants_timeout,mutation_score,geometry,reproducible,digest,duration_ms"
    )?;
    writeln!(tl, "run_id,dataset,project,algorithm,seed,status,steps,executions,covered,total_targets")?;
    if let Some(m) = mu.as_mut() {
        writeln!(m, "run_id,dataset,project,algorithm,seed,status,mutant_id,operator,block_id,verdict")?;
    }
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
                let run_id = hex_id((p as u64) << 20 | (ai as u64) << 10, seed);
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
                writeln!(tl, "{run_id},{ds},{project},{alg},{seed},ok,0,0,0,{total}")?;
                for (k, (&s, &c)) in steps_buf.iter().zip(&cov_buf).enumerate() {
                    writeln!(tl, "{run_id},{ds},{project},{alg},{seed},ok,{s},{},{c},{total}", k + 1)?;
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
                        writeln!(m, "{run_id},{ds},{project},{alg},{seed},ok,m{k},{op},b{k},{verdict}")?;
                    }
                }
                let mutants = spec.mutants as u64;
                let score = if mutants > excluded {
                    format!("{}", killed as f64 / (mutants - excluded) as f64)
                } else {
                    String::new()
                };
                let tests = 1 + rng.below(5);
                writeln!(
                    runs,
                    "{run_id},{ds},{project},{ph},{alg},\"{{\"\"algorithm\"\":\"\"{alg}\"\"}}\",{seed},steps,{budget},ok,,\
                     {cov},{final_cov},{total},{used},{exe},{exe},{tb},{tests},{eb},{ev},{full},{sf},{mutants},{killed},\
                     {excluded},0,{score},exact,true,{dig},{dur}",
                    ph = hex_id(p as u64, 0),
                    budget = spec.budget,
                    cov = final_cov as f64 / total as f64,
                    exe = 100 + rng.below(900),
                    tb = tests + rng.below(10),
                    eb = 20 + rng.below(80),
                    ev = 2 * tests + rng.below(20),
                    full = full_at.is_some(),
                    sf = full_at.map(|s| s.to_string()).unwrap_or_default(),
                    dig = hex_id(p as u64, seed << 8 | ai as u64),
                    dur = 1000 + rng.below(100_000),
                )?;
            }
        }
    }
    runs.flush()?;
    tl.flush()?;
    if let Some(mut m) = mu {
        m.flush()?;
    }
    Ok(())
}
