//! End-to-end analysis benchmark: 60 000 runs (1000 projects × 3 algorithms × 20 seeds) with
//! about 50 coverage change points each, generated deterministically, then loaded, analysed
//! (all tables + the coverage-over-time grid) and written as a report.
//!
//! ```sh
//! cargo run --release -p clowder-analysis --example bench            # CSV input, no plots
//! cargo run --release -p clowder-analysis --example bench -- --plots --parquet --repeat 3
//! ```
//!
//! Options: `--projects N` (default 1000), `--seeds N` (20), `--points N` (50), `--mutants N`
//! (0; mutants per run), `--plots`, `--parquet` (also time Parquet input), `--repeat N` (3),
//! `--dir DIR` (keep the generated study there instead of a temporary folder).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clowder_analysis::synth::{SynthSpec, write_study};
use clowder_analysis::{Options, WriteOptions, analyze, load, report};

struct Args {
    spec: SynthSpec,
    plots: bool,
    parquet: bool,
    repeat: usize,
    dir: Option<PathBuf>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args { spec: SynthSpec::benchmark(), plots: false, parquet: false, repeat: 3, dir: None };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut num = |name: &str| -> Result<u64, String> {
            it.next().and_then(|v| v.parse().ok()).ok_or_else(|| format!("{name} needs a number"))
        };
        match k.as_str() {
            "--projects" => a.spec.projects = num("--projects")? as usize,
            "--seeds" => a.spec.seeds = num("--seeds")?,
            "--points" => a.spec.points = num("--points")? as usize,
            "--mutants" => a.spec.mutants = num("--mutants")? as usize,
            "--repeat" => a.repeat = num("--repeat")?.max(1) as usize,
            "--plots" => a.plots = true,
            "--parquet" => a.parquet = true,
            "--dir" => a.dir = Some(it.next().ok_or("--dir needs a path")?.into()),
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(a)
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn to_parquet(src: &Path, dst: &Path) -> Result<(), String> {
    use polars::prelude::*;
    std::fs::create_dir_all(dst).map_err(|e| e.to_string())?;
    for stem in ["runs", "timeline", "mutants"] {
        let p = src.join(format!("{stem}.csv"));
        if !p.is_file() {
            continue;
        }
        let mut df = CsvReadOptions::default()
            .with_has_header(true)
            .with_infer_schema_length(Some(10_000))
            .try_into_reader_with_file_path(Some(p))
            .and_then(|r| r.finish())
            .map_err(|e| e.to_string())?;
        let f = std::fs::File::create(dst.join(format!("{stem}.parquet"))).map_err(|e| e.to_string())?;
        ParquetWriter::new(f).finish(&mut df).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// One timed pass: (load, analyse, write) durations.
fn pass(dir: &Path, out: &Path, plots: bool) -> Result<[Duration; 3], String> {
    let t0 = Instant::now();
    let res = load(dir).map_err(|e| e.to_string())?;
    let t1 = Instant::now();
    let an = analyze(&res, &Options::default()).map_err(|e| e.to_string())?;
    let t2 = Instant::now();
    let wo = WriteOptions { title: "bench".into(), plots, per_run_timelines: false };
    report::write(&an, &res, out, &wo).map_err(|e| e.to_string())?;
    let t3 = Instant::now();
    Ok([t1 - t0, t2 - t1, t3 - t2])
}

fn run() -> Result<(), String> {
    let args = parse()?;
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = args.dir.clone().unwrap_or_else(|| tmp.path().join("study"));
    let g0 = Instant::now();
    write_study(&dir, &args.spec).map_err(|e| e.to_string())?;
    let size = |n: &str| std::fs::metadata(dir.join(n)).map(|m| m.len() as f64 / 1e6).unwrap_or(0.0);
    eprintln!(
        "generated {} runs in {:.2} s: runs.csv {:.1} MB, timeline.csv {:.1} MB{}",
        args.spec.runs(),
        secs(g0.elapsed()),
        size("runs.csv"),
        size("timeline.csv"),
        if args.spec.mutants > 0 { format!(", mutants.csv {:.1} MB", size("mutants.csv")) } else { String::new() }
    );
    let mut inputs = vec![("csv", dir.clone())];
    if args.parquet {
        let pq = tmp.path().join("parquet");
        to_parquet(&dir, &pq)?;
        inputs.push(("parquet", pq));
    }
    let res = load(&dir).map_err(|e| e.to_string())?;
    let points = res.timeline.as_ref().map(|t| t.steps.len()).unwrap_or(0);
    println!(
        "study: {} runs, {} timeline points ({:.1} per run), grid 1 s; plots: {}",
        res.runs.len(),
        points,
        points as f64 / res.runs.len().max(1) as f64,
        if args.plots { "yes" } else { "no" }
    );
    drop(res);
    println!("{:<8} {:>4} {:>8} {:>8} {:>8} {:>8}", "input", "pass", "load s", "tables s", "write s", "total s");
    for (name, input) in &inputs {
        let mut totals = Vec::new();
        for i in 0..args.repeat {
            let out = tmp.path().join(format!("report-{name}-{i}"));
            let [l, a, w] = pass(input, &out, args.plots)?;
            let total = l + a + w;
            totals.push(secs(total));
            println!("{name:<8} {:>4} {:>8.3} {:>8.3} {:>8.3} {:>8.3}", i + 1, secs(l), secs(a), secs(w), secs(total));
        }
        totals.sort_by(f64::total_cmp);
        println!("{name:<8} median total {:.3} s", totals[totals.len() / 2]);
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
