//! `clowder bench work`: how well the work meter's units track CPU time.
//!
//! Runs test generation on every project of the chosen corpora folders (each run on one
//! thread, after a warm-up run of the same project so that its costumes are decoded and its
//! program compiled, as in a worker that has run it before) and prints, per run, its thread
//! CPU time, its work units and their ratio, CPU-seconds per 10⁹ units. The summary gives
//! the ratio's minimum, median and maximum and the runs furthest from the median on both
//! sides; a least-squares fit of CPU time on the meter's kinds says, per kind, how many
//! CPU-nanoseconds one unit costs on this machine (1.0 everywhere is a perfect calibration).
//! Short runs repeat until they have used `--min-cpu-ms`, so that the clock's resolution
//! does not decide their ratio. Runs far from the median ratio are measured again in
//! [`LATER_PASSES`] passes at the end, minutes later, and their CPU is the median of all
//! their repetitions: a disturbance of a shared machine that outlasts one run's repetitions
//! would otherwise decide the extremes the report is read for. A benchmark, not a test:
//! build in release.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, bail};
use clowder_testgen::work::Kind;
use clowder_testgen::{Algorithm, AlgorithmConfig, Budget, MutationMode, Prepared, RunOptions};
use clowder_vm::project::{LoadLimits, Project};

/// Repetitions of a run at least (their median is its CPU).
const MIN_REPS: usize = 3;

/// Passes at the end over the runs whose ratio is beyond [`FAR`] times the median (or below
/// it by as much).
const LATER_PASSES: usize = 2;

/// How far from the median ratio a run is measured again.
const FAR: f64 = 1.75;

/// Arguments of `clowder bench work`.
#[derive(clap::Args)]
pub struct BenchWorkArgs {
    /// Corpora folder; default `$CLOWDER_CORPORA`, else `../shared/corpora`.
    #[arg(long)]
    pub corpora: Option<PathBuf>,
    /// Folders of the corpora to run (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "random-sample,whisker-rq1,whisker-integration,codeclub,large,conformance"
    )]
    pub sets: Vec<String>,
    /// Algorithms (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "random,mosa,mio")]
    pub algorithms: Vec<String>,
    /// Step budget of each run.
    #[arg(long, default_value_t = 3000)]
    pub steps: u64,
    /// With mutation analysis of every mutant (its replays count too).
    #[arg(long, conflicts_with = "search_only")]
    pub mutation: bool,
    /// The search only (no minimisation, no assertions): CPU per step of the algorithms
    /// themselves, e.g. MIO's against Random's.
    #[arg(long)]
    pub search_only: bool,
    /// Only every n-th project of each folder (sorted by name) …
    #[arg(long, default_value_t = 1)]
    pub every: usize,
    /// … starting with this one (0-based), so that disjoint samples can tune and check.
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
    /// Repeat a run at least three times and until it used this much CPU time (ms), at most 50
    /// times; its CPU is the median repetition's (one disturbed repetition does not move it).
    /// Runs beyond 1.75 times the median ratio (or below it by as much) are measured again in
    /// two passes at the end, and their CPU is the median of all their repetitions.
    #[arg(long, default_value_t = 30)]
    pub min_cpu_ms: u64,
    /// Only projects whose file name contains one of these (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Runs measured at the same time (each on its own thread).
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write every run's row here (TSV).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run nothing: print the report of the rows an earlier `--out` wrote.
    #[arg(long, conflicts_with = "out")]
    pub report: Option<PathBuf>,
}

/// One measured run.
struct Row {
    set: String,
    project: String,
    algorithm: String,
    cpu_s: f64,
    steps: u64,
    work: u64,
    by_kind: Vec<u64>,
    status: &'static str,
}

impl Row {
    fn ratio(&self) -> f64 {
        self.cpu_s / (self.work.max(1) as f64 / 1e9)
    }
}

fn thread_cpu_s() -> f64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes the timespec it is given and nothing else.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
    }
    0.0
}

/// Runs `clowder bench work`.
pub fn run(args: BenchWorkArgs) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.report {
        report(&read_rows(path)?);
        return Ok(ExitCode::SUCCESS);
    }
    let corpora = args.corpora.clone().unwrap_or_else(|| {
        std::env::var_os("CLOWDER_CORPORA").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("../shared/corpora"))
    });
    if !corpora.is_dir() {
        bail!("corpora folder {} not found (--corpora or CLOWDER_CORPORA)", corpora.display());
    }
    let algorithms: Vec<Algorithm> =
        args.algorithms.iter().map(|a| Algorithm::parse(a).map_err(anyhow::Error::msg)).collect::<Result<_, _>>()?;
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for set in &args.sets {
        let dir = corpora.join(set);
        let rd = std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?;
        let mut v: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "sb3" || x == "json"))
            .filter(|p| {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                args.only.is_empty() || args.only.iter().any(|o| name.contains(o.as_str()))
            })
            .collect();
        v.sort();
        files.extend(v.into_iter().skip(args.offset).step_by(args.every.max(1)).map(|p| (set.clone(), p)));
    }
    eprintln!("bench work: {} projects × {} algorithms, {} steps", files.len(), algorithms.len(), args.steps);
    let next = AtomicUsize::new(0);
    let rows: std::sync::Mutex<Vec<(Row, Vec<f64>)>> = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..args.jobs.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((set, path)) = files.get(i) else { break };
                    let measured = measure(set, path, &algorithms, &args, None);
                    if let Ok(mut r) = rows.lock() {
                        r.extend(measured);
                    }
                    // Progress on stderr (the whole corpora take minutes).
                    if (i + 1) % 50 == 0 || i + 1 == files.len() {
                        eprintln!("bench work: {}/{} projects measured", i + 1, files.len());
                    }
                }
            });
        }
    });
    let mut rows = rows.into_inner().unwrap_or_default();
    measure_far_again(&mut rows, &files, &args);
    let mut rows: Vec<Row> = rows.into_iter().map(|(r, _)| r).collect();
    rows.sort_by(|a, b| (&a.set, &a.project, &a.algorithm).cmp(&(&b.set, &b.project, &b.algorithm)));
    if let Some(out) = &args.out {
        write_rows(out, &rows)?;
    }
    report(&rows);
    Ok(ExitCode::SUCCESS)
}

/// The runs whose ratio is far from the median ([`FAR`]), measured again in
/// [`LATER_PASSES`] passes, one after the other, each over all of them: their CPU becomes the
/// median of all their repetitions.
fn measure_far_again(rows: &mut [(Row, Vec<f64>)], files: &[(String, PathBuf)], args: &BenchWorkArgs) {
    let ratios: Vec<f64> = rows.iter().map(|(r, _)| r.ratio()).collect();
    let Some((med, far)) = far_from_median(&ratios) else { return };
    if far.is_empty() {
        return;
    }
    eprintln!("bench work: {} runs beyond {FAR}× the median ratio {med:.3}: {LATER_PASSES} more passes", far.len());
    for pass in 0..LATER_PASSES {
        for &i in &far {
            let Some((row, times)) = rows.get_mut(i) else { continue };
            let Some((_, path)) = files.iter().find(|(set, p)| {
                *set == row.set && p.file_name().is_some_and(|n| n.to_string_lossy() == row.project.as_str())
            }) else {
                continue;
            };
            let Ok(alg) = Algorithm::parse(&row.algorithm) else { continue };
            for (again, more) in measure(&row.set, path, &[alg], args, Some(row.work)) {
                // The same run (its work is deterministic), measured minutes later.
                if again.work == row.work {
                    times.extend(more);
                }
            }
            times.sort_by(f64::total_cmp);
            if let Some(&m) = times.get(times.len() / 2) {
                row.cpu_s = m;
            }
        }
        eprintln!("bench work: pass {} of {LATER_PASSES} over the far runs done", pass + 1);
    }
}

/// The median of `ratios` and the indices of those beyond [`FAR`] times it or below it by as
/// much (`None` without ratios).
fn far_from_median(ratios: &[f64]) -> Option<(f64, Vec<usize>)> {
    let mut sorted = ratios.to_vec();
    sorted.sort_by(f64::total_cmp);
    let med = *sorted.get(sorted.len() / 2)?;
    let far = ratios.iter().enumerate().filter(|&(_, &r)| r > med * FAR || r * FAR < med).map(|(i, _)| i).collect();
    Some((med, far))
}

/// Every algorithm's run of one project (none when it does not load), with the CPU time of
/// each repetition. `work`: the run's work as measured before (a later pass), which must
/// come out the same.
fn measure(
    set: &str,
    path: &Path,
    algorithms: &[Algorithm],
    args: &BenchWorkArgs,
    work: Option<u64>,
) -> Vec<(Row, Vec<f64>)> {
    let Ok(project) = Project::load_path(path, &LoadLimits::default()) else { return Vec::new() };
    let project = Arc::new(project);
    let prepared = Prepared::new(&project);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let opts = RunOptions {
        mutation: if args.mutation { MutationMode::All } else { MutationMode::Off },
        work_cap: clowder_testgen::default_work_cap(Budget::Steps(args.steps)),
    };
    let mut out = Vec::new();
    for &alg in algorithms {
        let mut cfg = AlgorithmConfig::new(alg);
        if args.search_only {
            cfg.params.insert("minimize".into(), false.into());
            cfg.params.insert("assertions".into(), false.into());
        }
        let once = || {
            clowder_testgen::generate_prepared_with(
                Arc::clone(&project),
                &prepared,
                &cfg,
                args.seed,
                Budget::Steps(args.steps),
                &opts,
                &mut |_| {},
            )
        };
        // Warm-up: costumes decoded, program compiled (shared by later runs of the project).
        if once().is_err() {
            continue;
        }
        let (mut cpu, mut times) = (0.0, Vec::new());
        let mut last = None;
        while times.len() < 50 && (times.len() < MIN_REPS || cpu * 1000.0 < args.min_cpu_ms as f64) {
            let t0 = thread_cpu_s();
            let o = once();
            let t = thread_cpu_s() - t0;
            cpu += t;
            times.push(t);
            last = o.ok();
        }
        let Some(o) = last else { continue };
        if work.is_some_and(|w| w != o.work) {
            eprintln!("bench work: {name} {}: work {} now, {:?} before (not deterministic?)", alg.name(), o.work, work);
        }
        times.sort_by(f64::total_cmp);
        let median = times.get(times.len() / 2).copied().unwrap_or(cpu);
        let by_kind = Kind::ALL
            .iter()
            .map(|k| o.work_by_kind.iter().find(|(n, _)| n == k.name()).map_or(0, |(_, u)| *u))
            .collect();
        let row = Row {
            set: set.to_string(),
            project: name.clone(),
            algorithm: alg.name().to_string(),
            cpu_s: median,
            steps: o.steps,
            work: o.work,
            by_kind,
            status: if o.limit.is_some() { "limit" } else { "ok" },
        };
        out.push((row, times));
    }
    out
}

fn write_rows(out: &Path, rows: &[Row]) -> anyhow::Result<()> {
    let mut s = String::from("set\tproject\talgorithm\tstatus\tcpu_s\tsteps\twork\ts_per_1e9");
    for k in Kind::ALL {
        s.push('\t');
        s.push_str(k.name());
    }
    s.push('\n');
    for r in rows {
        s.push_str(&format!(
            "{}\t{}\t{}\t{}\t{:.6}\t{}\t{}\t{:.3}",
            r.set,
            r.project,
            r.algorithm,
            r.status,
            r.cpu_s,
            r.steps,
            r.work,
            r.ratio()
        ));
        for u in &r.by_kind {
            s.push_str(&format!("\t{u}"));
        }
        s.push('\n');
    }
    std::fs::write(out, s).with_context(|| format!("writing {}", out.display()))
}

/// The rows [`write_rows`] wrote (a file from another build may have other kinds: those
/// this build does not know are left out, missing ones read 0).
fn read_rows(path: &Path) -> anyhow::Result<Vec<Row>> {
    let mut r = csv::ReaderBuilder::new()
        .delimiter(b'\t')
        .from_path(path)
        .with_context(|| format!("reading {}", path.display()))?;
    let head = r.headers().with_context(|| format!("reading the header of {}", path.display()))?.clone();
    let col = |name: &str| head.iter().position(|h| h == name);
    let need = |name: &str| col(name).with_context(|| format!("{}: no column `{name}`", path.display()));
    let (set, project, algorithm) = (need("set")?, need("project")?, need("algorithm")?);
    let (status, cpu_s, steps, work) = (need("status")?, need("cpu_s")?, need("steps")?, need("work")?);
    let kinds: Vec<Option<usize>> = Kind::ALL.iter().map(|k| col(k.name())).collect();
    let mut rows = Vec::new();
    for (line, rec) in r.records().enumerate() {
        let rec = rec.with_context(|| format!("{}: row {}", path.display(), line + 2))?;
        let text = |i: usize| rec.get(i).unwrap_or_default();
        let bad = |what: &str| anyhow::anyhow!("{}: row {}: `{what}` is not a number", path.display(), line + 2);
        let num = |i: usize, what: &str| text(i).parse::<u64>().map_err(|_| bad(what));
        rows.push(Row {
            set: text(set).to_string(),
            project: text(project).to_string(),
            algorithm: text(algorithm).to_string(),
            cpu_s: text(cpu_s).parse::<f64>().map_err(|_| bad("cpu_s"))?,
            steps: num(steps, "steps")?,
            work: num(work, "work")?,
            by_kind: kinds.iter().map(|c| c.and_then(|i| text(i).parse().ok()).unwrap_or(0)).collect(),
            status: if text(status) == "limit" { "limit" } else { "ok" },
        });
    }
    Ok(rows)
}

fn report(rows: &[Row]) {
    if rows.is_empty() {
        println!("no runs");
        return;
    }
    let mut ratios: Vec<f64> = rows.iter().map(Row::ratio).collect();
    ratios.sort_by(f64::total_cmp);
    let med = ratios[ratios.len() / 2];
    let (min, max) = (ratios[0], ratios[ratios.len() - 1]);
    println!("runs: {}  CPU-seconds per 10^9 work units: min {min:.3}  median {med:.3}  max {max:.3}", rows.len());
    println!(
        "spread: max/median {:.2}, median/min {:.2} (within a factor of 3 of the median: {})",
        max / med,
        med / min,
        if max / med <= 3.0 && med / min <= 3.0 { "yes" } else { "no" }
    );
    let total_cpu: f64 = rows.iter().map(|r| r.cpu_s).sum();
    println!("total CPU {total_cpu:.1} s over the measured runs");
    let mut by: Vec<&Row> = rows.iter().collect();
    by.sort_by(|a, b| a.ratio().total_cmp(&b.ratio()));
    let show = |r: &Row| {
        println!(
            "  {:>8.3}  {:>9.4} s  {:>14}  {:<6} {}/{} {}",
            r.ratio(),
            r.cpu_s,
            r.work,
            r.algorithm,
            r.set,
            r.project,
            r.status
        );
    };
    println!("lowest ratios (units overcharge):");
    by.iter().take(5).for_each(|r| show(r));
    println!("highest ratios (units undercharge):");
    by.iter().rev().take(5).for_each(|r| show(r));
    if let Some(fit) = fit(rows) {
        println!("least-squares fit, CPU-ns per unit by kind (relative errors weighted equally):");
        for (k, c) in Kind::ALL.iter().zip(fit) {
            println!("  {:<11} {c:>8.3}", k.name());
        }
    }
    for alg in ["mosa", "mio"] {
        per_step_against_random(rows, alg);
    }
    // Share of each kind in all units.
    let total: f64 = rows.iter().map(|r| r.work as f64).sum();
    print!("share of units:");
    for (i, k) in Kind::ALL.iter().enumerate() {
        let u: f64 = rows.iter().map(|r| r.by_kind.get(i).copied().unwrap_or(0) as f64).sum();
        print!(" {} {:.1}%", k.name(), 100.0 * u / total.max(1.0));
    }
    println!();
}

/// `alg`'s CPU time per step over Random's on each project both ran (searches that end early by
/// full coverage cost more per step: their steps are the expensive first ones).
fn per_step_against_random(rows: &[Row], alg: &str) {
    let per_step = |r: &Row| r.cpu_s / r.steps.max(1) as f64;
    let mut ratios: Vec<(f64, &Row, &Row)> = rows
        .iter()
        .filter(|r| r.algorithm == alg)
        .filter_map(|r| {
            let base = rows.iter().find(|b| b.algorithm == "random" && b.set == r.set && b.project == r.project)?;
            (base.cpu_s > 0.0).then(|| (per_step(r) / per_step(base), r, base))
        })
        .collect();
    if ratios.is_empty() {
        return;
    }
    ratios.sort_by(|a, b| a.0.total_cmp(&b.0));
    let med = ratios[ratios.len() / 2].0;
    let same: Vec<f64> = ratios.iter().filter(|(_, r, b)| r.steps == b.steps).map(|x| x.0).collect();
    let worst_same = same.iter().copied().fold(0.0f64, f64::max);
    println!(
        "{alg}/random CPU per step: {} projects, median {med:.2}, max {:.2}; {} with equal steps (neither ended early), max {worst_same:.2}",
        ratios.len(),
        ratios[ratios.len() - 1].0,
        same.len()
    );
    for (x, r, b) in ratios.iter().rev().take(5) {
        println!(
            "  {x:>6.2}  {}/{}: {alg} {:.4} s / {} steps, random {:.4} s / {} steps",
            r.set, r.project, r.cpu_s, r.steps, b.cpu_s, b.steps
        );
    }
    // Where the CPU per step is above 1.5× Random's (issue 31), is it the program or the
    // algorithm? The CPU ratio per step is the ratio of the program's own work per step (by
    // the meter) times the ratio of CPU per unit of it. Only where both searched their whole
    // budget: a search that ends early by full coverage has only its dearest (first) steps,
    // and those are listed apart. (Below 1.5× a quotient of small program counts says little:
    // the test generator's own work dominates there.)
    let above: Vec<&(f64, &Row, &Row)> = ratios.iter().filter(|(x, _, _)| *x > 1.5).collect();
    let early: Vec<f64> =
        above.iter().filter(|(_, r, b)| r.steps != b.steps).map(|(_, r, b)| r.cpu_s / b.cpu_s).collect();
    if !early.is_empty() {
        println!(
            "{alg}/random above 1.5× CPU per step with fewer or more steps (a search ended by full coverage): {} projects, {alg}'s whole CPU {:.2}–{:.2}× Random's",
            early.len(),
            early.iter().copied().fold(f64::INFINITY, f64::min),
            early.iter().copied().fold(0.0, f64::max)
        );
    }
    let over: Vec<(f64, f64, &Row)> = above
        .iter()
        .filter(|(_, r, b)| r.steps == b.steps && program_units(r) > 0 && program_units(b) > 0)
        .map(|&&(x, r, b)| {
            let work = program_units(r) as f64 / program_units(b) as f64;
            (work, x / work, r)
        })
        .collect();
    if let Some(worst) = over.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
        println!(
            "{alg}/random above 1.5× CPU per step, both with the whole budget: {} projects; there, the program's own work (vm, eval, geometry, scheduler units) per step {:.2}–{:.2}×, CPU per unit of it at most {:.2}× ({}/{})",
            over.len(),
            over.iter().map(|s| s.0).fold(f64::INFINITY, f64::min),
            over.iter().map(|s| s.0).fold(0.0, f64::max),
            worst.1,
            worst.2.set,
            worst.2.project
        );
    }
    // The rest of the units are the test generator's own (fitness with the branch distances the
    // VM measured for it, extraction, VM starts, bookkeeping): a large share there says the
    // algorithm, not the program, is dear.
    for (work, per_unit, r) in over.iter().rev() {
        let own = 1.0 - program_units(r) as f64 / r.work.max(1) as f64;
        println!(
            "  program work per step {work:>5.2}×, CPU per unit {per_unit:>5.2}×, test generator's own units {:>4.1}% of {alg}'s  {}/{}",
            100.0 * own,
            r.set,
            r.project
        );
    }
}

/// Units of what the program itself did (its blocks, reporters, geometry and scheduling), as
/// against what the test generator spent around it.
fn program_units(r: &Row) -> u64 {
    let of = |k: Kind| Kind::ALL.iter().position(|x| *x == k).and_then(|i| r.by_kind.get(i)).copied().unwrap_or(0);
    of(Kind::Vm) + of(Kind::Eval) + of(Kind::Geometry) + of(Kind::Scheduler)
}

/// Least squares of `Σ_k c_k · units_k / cpu ≈ 1` over the runs (each run's relative error
/// weighted equally); kinds no run used get 0. `None` when the system is singular.
fn fit(rows: &[Row]) -> Option<Vec<f64>> {
    let n = Kind::ALL.len();
    let used: Vec<usize> =
        (0..n).filter(|&k| rows.iter().any(|r| r.by_kind.get(k).copied().unwrap_or(0) > 0)).collect();
    let m = used.len();
    let mut a = vec![vec![0.0f64; m + 1]; m];
    for r in rows.iter().filter(|r| r.cpu_s > 0.0) {
        let x: Vec<f64> =
            used.iter().map(|&k| r.by_kind.get(k).copied().unwrap_or(0) as f64 * 1e-9 / r.cpu_s).collect();
        for i in 0..m {
            for j in 0..m {
                a[i][j] += x[i] * x[j];
            }
            a[i][m] += x[i];
        }
    }
    // Gaussian elimination with partial pivoting.
    for col in 0..m {
        let piv = (col..m).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, piv);
        let pivot_row = a[col].clone();
        for (row, r) in a.iter_mut().enumerate() {
            if row != col {
                let f = r[col] / pivot_row[col];
                for (x, p) in r.iter_mut().zip(&pivot_row).skip(col) {
                    *x -= f * p;
                }
            }
        }
    }
    let mut out = vec![0.0; n];
    for (i, &k) in used.iter().enumerate() {
        out[k] = a[i][m] / a[i][i];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ends are measured again, and only what lies beyond 1.75× the median either way.
    #[test]
    fn runs_far_from_the_median_on_both_sides_are_picked() {
        let ratios = [1.0, 1.7, 0.6, 3.2, 0.5, 1.1, 0.9, 1.76, 0.57];
        assert_eq!(far_from_median(&ratios), Some((1.0, vec![3, 4, 7, 8])));
        assert!(far_from_median(&[]).is_none());
        assert_eq!(far_from_median(&[2.0]), Some((2.0, Vec::new())));
    }
}
