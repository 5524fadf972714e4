//! `clowder bench vm`: steps per second of clowder's VM and of the reference
//! (scratch-vm under the fidelity oracle), side by side in one run.
//!
//! Both run the same projects for the same number of steps with the same seed
//! and the same input script: green flag at step 0 and the generic script of
//! the oracle's `test/sanity.py` (keys, answers, mouse, clicks on the stage and
//! on up to three sprites), every step executed (the oracle's `--run-all`).
//!
//! * Reference: `node trace.js P --steps N --seed S --run-all --inputs F
//!   --stats`; its `#stats` line gives `vm_steps_per_sec`, the time spent
//!   inside scratch-vm's `runtime._step()` only (inputs, promise flushing and
//!   snapshots are outside).
//! * Ours: the time of the whole step loop (inputs applied plus `Vm::step`),
//!   so slightly more than the reference counts; loading and `Vm::new` are
//!   reported separately (the first `Vm::new` of a project also compiles it).
//!
//! Each side runs `--repeat` times per project and keeps its fastest run.
//! Projects are taken evenly spaced from the sorted `random-sample` folder.
//! This is a benchmark, not a test: build in release (`scripts/bench-vm.sh`).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clowder_vm::project::{LoadLimits, Project};
use clowder_vm::trace::{TraceInput, parse_inputs};
use clowder_vm::{Vm, VmOptions};

/// What `clowder bench` measures.
#[derive(clap::Subcommand)]
pub enum BenchWhat {
    /// VM steps per second, ours and the reference's, side by side.
    Vm(BenchVmArgs),
    /// CPU-seconds per 10⁹ work units over the corpora: how well the work meter is calibrated.
    Work(super::bench_work::BenchWorkArgs),
}

/// Runs a benchmark.
pub fn run(what: BenchWhat) -> anyhow::Result<ExitCode> {
    match what {
        BenchWhat::Vm(args) => vm(args),
        BenchWhat::Work(args) => super::bench_work::run(args),
    }
}

/// Arguments of `clowder bench vm`.
#[derive(clap::Args)]
pub struct BenchVmArgs {
    /// Corpora folder (with `random-sample/`); default `$CLOWDER_CORPORA`, else `../shared/corpora`.
    #[arg(long)]
    pub corpora: Option<PathBuf>,
    /// Installed fidelity oracle (folder with `trace.js` and `node_modules/`); without it only ours runs.
    #[arg(long)]
    pub oracle: Option<PathBuf>,
    /// Number of projects (evenly spaced over the sorted random-sample folder).
    #[arg(long, default_value_t = 60)]
    pub count: usize,
    /// Steps per run.
    #[arg(long, default_value_t = 300)]
    pub steps: u64,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Runs per project and side (the fastest counts).
    #[arg(long, default_value_t = 2)]
    pub repeat: usize,
    /// Only the green flag at step 0 instead of the generic input script.
    #[arg(long)]
    pub green_flag_only: bool,
    /// Also write the per-project table here (TSV).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Only the random-sample projects whose file name contains this (instead of the even spread).
    #[arg(long)]
    pub only: Option<String>,
    /// Only the random-sample projects named in this file (one file name per line, `#` comments),
    /// e.g. `experiments/bench-heavy.txt`, the 20 where scratch-vm is slowest.
    #[arg(long, conflicts_with = "only")]
    pub list: Option<PathBuf>,
    /// Also profile each project once more, per opcode (self time and count), into this TSV;
    /// needs a build with `--features op-profile` (see docs/vm.md).
    #[arg(long)]
    pub op_profile: Option<PathBuf>,
}

/// One input of the script (the oracle's input-file format).
#[derive(Debug, Clone)]
enum Event {
    GreenFlag,
    KeyDown(&'static str),
    KeyUp(&'static str),
    Answer(&'static str),
    MouseMove(f64, f64),
    MouseDown,
    MouseUp,
    ClickStage,
    ClickSprite(String),
}

/// The generic input script of `test/sanity.py` (`inputs_for`).
fn generic_inputs(sprites: &[String], steps: u64, green_flag_only: bool) -> Vec<(u64, Event)> {
    let mut ev = vec![(0, Event::GreenFlag)];
    if !green_flag_only {
        let keys = [
            ("space", 30, 36),
            ("right arrow", 60, 90),
            ("left arrow", 100, 130),
            ("up arrow", 140, 150),
            ("down arrow", 152, 160),
            ("a", 170, 172),
        ];
        for (key, down, up) in keys {
            ev.push((down, Event::KeyDown(key)));
            ev.push((up, Event::KeyUp(key)));
        }
        ev.push((45, Event::Answer("42")));
        ev.push((180, Event::MouseMove(100.0, -50.0)));
        ev.push((182, Event::MouseDown));
        ev.push((184, Event::MouseUp));
        ev.push((190, Event::ClickStage));
        ev.push((230, Event::Answer("hello")));
        for (i, name) in sprites.iter().take(3).enumerate() {
            ev.push((200 + 10 * i as u64, Event::ClickSprite(name.clone())));
        }
    }
    ev.retain(|(s, _)| *s < steps);
    // Stable by step, as the oracle sorts the input file.
    ev.sort_by_key(|(s, _)| *s);
    ev
}

fn inputs_json(events: &[(u64, Event)]) -> String {
    let items: Vec<serde_json::Value> = events
        .iter()
        .map(|(step, e)| {
            let mut o = serde_json::Map::new();
            o.insert("step".into(), (*step).into());
            let (kind, extra): (&str, Vec<(&str, serde_json::Value)>) = match e {
                Event::GreenFlag => ("greenflag", vec![]),
                Event::KeyDown(k) => ("key_down", vec![("key", (*k).into())]),
                Event::KeyUp(k) => ("key_up", vec![("key", (*k).into())]),
                Event::Answer(t) => ("answer", vec![("text", (*t).into())]),
                Event::MouseMove(x, y) => ("mouse_move", vec![("x", (*x).into()), ("y", (*y).into())]),
                Event::MouseDown => ("mouse_down", vec![]),
                Event::MouseUp => ("mouse_up", vec![]),
                Event::ClickStage => ("click_stage", vec![]),
                Event::ClickSprite(n) => ("click_sprite", vec![("sprite", n.clone().into())]),
            };
            o.insert("kind".into(), kind.into());
            for (k, v) in extra {
                o.insert(k.into(), v);
            }
            serde_json::Value::Object(o)
        })
        .collect();
    serde_json::Value::Array(items).to_string()
}

/// Our side: (step-loop time, `Vm::new` time, block executions and reporter evaluations).
pub(super) fn run_ours(
    project: &Arc<Project>,
    inputs: &[TraceInput],
    steps: u64,
    seed: u64,
) -> (Duration, Duration, u64) {
    let t0 = Instant::now();
    let mut vm = Vm::new(Arc::clone(project), VmOptions { seed, ..VmOptions::default() });
    let t_new = t0.elapsed();
    let mut next = 0;
    let t1 = Instant::now();
    for k in 0..steps {
        while let Some(inp) = inputs.get(next) {
            if inp.step != k {
                break;
            }
            vm.apply_input(&inp.kind);
            next += 1;
        }
        vm.step();
    }
    let elapsed = t1.elapsed();
    (elapsed, t_new, vm.operations())
}

/// The reference's `#stats` for one run.
fn run_reference(oracle: &Path, project: &Path, inputs: &Path, steps: u64, seed: u64) -> anyhow::Result<f64> {
    let out = Command::new("node")
        .arg(oracle.join("trace.js"))
        .arg(project)
        .args(["--steps", &steps.to_string(), "--seed", &seed.to_string(), "--run-all", "--stats", "--out"])
        .arg("/dev/null")
        .arg("--inputs")
        .arg(inputs)
        .output()
        .context("running node (is Node.js installed?)")?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("#stats "))
        .with_context(|| format!("no #stats line from trace.js ({}): {}", out.status, stderr.trim()))?;
    let stats: serde_json::Value = serde_json::from_str(line).context("parsing #stats")?;
    let reason = stats.get("reason").and_then(|r| r.as_str()).unwrap_or("");
    if reason != "steps_done" {
        bail!("reference ended with {reason}");
    }
    stats.get("vm_steps_per_sec").and_then(serde_json::Value::as_f64).context("#stats without vm_steps_per_sec")
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// Evenly spaced projects from the sorted `random-sample` folder (or those
/// whose name contains `only`).
fn select(corpora: &Path, count: usize, only: Option<&str>, list: Option<&Path>) -> anyhow::Result<Vec<PathBuf>> {
    let dir = corpora.join("random-sample");
    if let Some(list) = list {
        let text = std::fs::read_to_string(list).with_context(|| format!("reading {}", list.display()))?;
        let mut out = Vec::new();
        for line in text.lines().map(|l| l.split('#').next().unwrap_or("").trim()).filter(|l| !l.is_empty()) {
            if line.contains(['/', '\\']) {
                bail!("{}: {line:?} is not a file name of random-sample/", list.display());
            }
            let p = dir.join(line);
            if !p.is_file() {
                bail!("{}: no project {line:?} in {}", list.display(), dir.display());
            }
            out.push(p);
        }
        if out.is_empty() {
            bail!("{} names no project", list.display());
        }
        return Ok(out);
    }
    let mut all: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "sb3"))
        .collect();
    all.sort();
    if let Some(only) = only {
        all.retain(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains(only)));
        if all.is_empty() {
            bail!("no project in {} matches {only:?}", dir.display());
        }
        return Ok(all);
    }
    if all.is_empty() {
        bail!("no projects in {}", dir.display());
    }
    let count = count.min(all.len()).max(1);
    Ok((0..count).map(|i| all[i * all.len() / count].clone()).collect())
}

/// Runs the benchmark and prints the table and the summary.
pub fn vm(args: BenchVmArgs) -> anyhow::Result<ExitCode> {
    let corpora = args.corpora.clone().unwrap_or_else(|| {
        std::env::var_os("CLOWDER_CORPORA").map_or_else(|| PathBuf::from("../shared/corpora"), PathBuf::from)
    });
    let projects = select(&corpora, args.count, args.only.as_deref(), args.list.as_deref())?;
    if args.op_profile.is_some() {
        super::bench_profile::check_available()?;
    }
    let mut profiles = super::bench_profile::OpProfiles::default();
    let tmp = tempfile::tempdir().context("temporary folder")?;
    let repeat = args.repeat.max(1);
    let mut rows: Vec<String> = Vec::new();
    let (mut ratios, mut ours_all, mut ref_all) = (Vec::new(), Vec::new(), Vec::new());
    let (mut new_us, mut first_us) = (Vec::new(), Vec::new());
    let header = "project\tblocks\tours_steps_per_sec\tref_steps_per_sec\tratio\tvm_new_us\tfirst_vm_new_us\t\
                  ops_per_step\tours_ns_per_op\tref_ns_per_op\tnote";
    println!("{header}");
    for (i, path) in projects.iter().enumerate() {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let project = match Project::load_path(path, &LoadLimits::default()) {
            Ok(p) => Arc::new(p),
            Err(e) => {
                let row = format!("{name}\t\t\t\t\t\t\t\t\t\tload error: {e}");
                println!("{row}");
                rows.push(row);
                continue;
            }
        };
        let blocks = project.blocks.iter().filter(|b| !b.shadow).count();
        let sprites: Vec<String> = project.targets.iter().filter(|t| !t.is_stage).map(|t| t.name.clone()).collect();
        let events = generic_inputs(&sprites, args.steps, args.green_flag_only);
        let inputs_file = tmp.path().join(format!("{i:03}.inputs.json"));
        let text = inputs_json(&events);
        std::fs::write(&inputs_file, &text)?;
        // Both sides read the same file, ours through the trace module's parser.
        let inputs = parse_inputs(&text).map_err(anyhow::Error::msg)?;

        // Ours: the first `Vm::new` compiles the project (once per project and
        // worker in a study); it is timed apart. A panic is reported, not fatal.
        let ours = std::panic::catch_unwind(|| {
            let t0 = Instant::now();
            drop(Vm::new(Arc::clone(&project), VmOptions { seed: args.seed, ..VmOptions::default() }));
            let first_new = t0.elapsed();
            let runs: Vec<(Duration, Duration, u64)> =
                (0..repeat).map(|_| run_ours(&project, &inputs, args.steps, args.seed)).collect();
            let best = runs.iter().map(|r| r.0).min().unwrap_or_default();
            let new = runs.iter().map(|r| r.1).min().unwrap_or_default();
            let ops = runs.first().map_or(0, |r| r.2);
            (best, new, first_new, ops)
        });
        let (ours_sps, new_time, compile_time, ops, mut note) = match ours {
            Ok((d, t_new, t_first, ops)) => {
                (args.steps as f64 / d.as_secs_f64().max(1e-9), Some(t_new), Some(t_first), ops, String::new())
            }
            Err(_) => (f64::NAN, None, None, 0, "our VM panicked".to_string()),
        };
        if args.op_profile.is_some() && ours_sps.is_finite() {
            profiles.profile(&name, &project, &inputs, args.steps, args.seed);
        }
        let mut ref_sps = f64::NAN;
        if let Some(oracle) = &args.oracle {
            let mut best = f64::NAN;
            for _ in 0..repeat {
                match run_reference(oracle, path, &inputs_file, args.steps, args.seed) {
                    Ok(s) => best = if best.is_nan() { s } else { best.max(s) },
                    Err(e) => {
                        note = format!("{note} reference: {e:#}").trim().to_string();
                        break;
                    }
                }
            }
            ref_sps = best;
        }
        let ratio = ours_sps / ref_sps;
        if ours_sps.is_finite() {
            ours_all.push(ours_sps);
        }
        if let Some(t) = new_time {
            new_us.push(t.as_secs_f64() * 1e6);
        }
        if ref_sps.is_finite() {
            ref_all.push(ref_sps);
        }
        if ratio.is_finite() {
            ratios.push(ratio);
        }
        if let Some(t) = compile_time {
            first_us.push(t.as_secs_f64() * 1e6);
        }
        let us = |t: Option<Duration>| t.map_or(f64::NAN, |t| t.as_secs_f64() * 1e6);
        // Both VMs do the same work (the traces agree), so time per operation compares them
        // where it matters: on projects whose steps do a lot.
        let ops_per_step = ops as f64 / args.steps.max(1) as f64;
        let ns_per_op = |sps: f64| 1e9 / sps / ops_per_step;
        let row = format!(
            "{name}\t{blocks}\t{ours_sps:.0}\t{ref_sps:.0}\t{ratio:.1}\t{:.1}\t{:.1}\t{ops_per_step:.0}\t{:.2}\t{:.2}\t{note}",
            us(new_time),
            us(compile_time),
            ns_per_op(ours_sps),
            ns_per_op(ref_sps),
        );
        println!("{row}");
        rows.push(row);
    }
    let summary = format!(
        "# {} projects, {} steps, seed {}, {} inputs, best of {repeat}: median ours {:.0} steps/s, median reference \
         {:.0} steps/s, median ratio {:.1}x (min {:.1}x, max {:.1}x, {} projects with both), median Vm::new {:.1} us (first, with compiling: {:.1} us)",
        projects.len(),
        args.steps,
        args.seed,
        if args.green_flag_only { "green-flag-only" } else { "generic" },
        median(&mut ours_all),
        median(&mut ref_all),
        median(&mut ratios.clone()),
        ratios.iter().copied().fold(f64::INFINITY, f64::min),
        ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ratios.len(),
        median(&mut new_us),
        median(&mut first_us),
    );
    println!("{summary}");
    if let Some(out) = &args.out {
        let mut text = format!("{summary}\n{header}\n");
        for r in &rows {
            text.push_str(r);
            text.push('\n');
        }
        std::fs::write(out, text).with_context(|| format!("writing {}", out.display()))?;
    }
    if let Some(out) = &args.op_profile {
        profiles.write(out)?;
    }
    Ok(ExitCode::SUCCESS)
}
