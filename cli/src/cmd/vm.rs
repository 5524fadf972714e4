//! `clowder vm <subcommand>`: direct access to the VM.
//!
//! `clowder vm trace PROJECT --steps N --seed S [--inputs FILE]` prints the
//! fidelity oracle's JSONL trace (headless profile), for comparison with the
//! real scratch-vm (`scripts/fidelity.sh`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Subcommand;
use clowder_vm::trace::{TraceOptions, load_error_record, parse_inputs, write_trace};
use clowder_vm::{LoadLimits, Project};

/// Subcommands of `clowder vm`.
#[derive(Subcommand)]
pub enum VmCommand {
    /// Run a project headless and print the per-step JSONL state trace of the fidelity oracle.
    Trace {
        /// Project file (.sb3 or project.json).
        project: PathBuf,
        /// Steps to run at most.
        #[arg(long, default_value_t = 300)]
        steps: u64,
        /// SplitMix64 seed (decimal or 0x hex, reduced mod 2^64; negative wraps).
        #[arg(long, default_value = "0", allow_hyphen_values = true)]
        seed: String,
        /// Input script (JSON array of {"step", "kind", ...}); default: green flag at step 0.
        #[arg(long)]
        inputs: Option<PathBuf>,
        /// Hang guard: block executions allowed in one step.
        #[arg(long, default_value_t = 5_000_000)]
        max_ops: u64,
        /// Never end early (always run all steps unless a hang).
        #[arg(long)]
        run_all: bool,
        /// Write the trace to this file instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Run with the test-generation instrumentation on (for checking that it changes nothing).
        #[arg(long, hide = true)]
        instrument: bool,
        /// Semantics profile: headless (the oracle's), default or whisker (Whisker's scratch-vm;
        /// the seed keys seed-random as Whisker's -se does).
        #[arg(long, default_value = "headless")]
        profile: String,
        /// Profile whisker only: model a machine on which every Whisker step takes exactly this
        /// many real milliseconds, for the blocks Whisker times on the wall clock (music beats,
        /// `when timer >`); default: the virtual clock. Compare with a Whisker whose clock is
        /// pinned to its steps (`scripts/whisker_sweep.py --pin-clock`).
        #[arg(long, value_name = "MS", value_parser = super::common::whisker_wall_ms)]
        whisker_wall_ms: Option<f64>,
        /// Profile whisker only: run `speak` as Whisker does on a machine that cannot reach
        /// Scratch's synthesis service (the block never ends; `whisker_sweep.py --offline`).
        #[arg(long)]
        whisker_offline_speech: bool,
        /// Profile whisker only: the maths library of the browser Whisker runs in (chromium,
        /// the default; glibc; node), as `clowder test --whisker-maths`.
        #[arg(long, value_name = "LIB", value_parser = super::common::whisker_maths)]
        whisker_maths: Option<clowder_vm::util::mathlib::MathLib>,
    },
    /// Answer render-oracle geometry questions (its query format) with the VM's CPU renderer.
    GeometryQuery {
        /// Project file (.sb3 or project.json).
        project: PathBuf,
        /// Query file: a JSON list of scenes with questions (render-oracle format).
        queries: PathBuf,
    },
}

/// Parses a seed like the oracle: decimal or `0x` hex, reduced mod 2^64, negative values wrap.
fn parse_seed(s: &str) -> anyhow::Result<u64> {
    let t = s.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t),
    };
    let v: u128 = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        u128::from_str_radix(h, 16).with_context(|| format!("bad seed {s:?}"))?
    } else {
        body.parse::<u128>().with_context(|| format!("bad seed {s:?}"))?
    };
    let v = (v % (1u128 << 64)) as u64;
    Ok(if neg { v.wrapping_neg() } else { v })
}

/// Runs a `clowder vm` subcommand.
pub fn run(cmd: VmCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        VmCommand::Trace {
            project,
            steps,
            seed,
            inputs,
            max_ops,
            run_all,
            out,
            instrument,
            profile,
            whisker_wall_ms,
            whisker_offline_speech,
            whisker_maths,
        } => {
            let seed = parse_seed(&seed)?;
            let profile = match profile.as_str() {
                "headless" => clowder_vm::Profile::Headless,
                "default" => clowder_vm::Profile::Default,
                "whisker" => clowder_vm::Profile::Whisker,
                other => anyhow::bail!("unknown profile {other:?} (known: headless, default, whisker)"),
            };
            anyhow::ensure!(
                (whisker_wall_ms.is_none() && !whisker_offline_speech && whisker_maths.is_none())
                    || profile == clowder_vm::Profile::Whisker,
                "--whisker-wall-ms, --whisker-offline-speech and --whisker-maths model Whisker's machine: they need --profile whisker"
            );
            let inputs = match inputs {
                Some(p) => {
                    let text = std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
                    Some(parse_inputs(&text).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?)
                }
                None => None,
            };
            let mut sink: Box<dyn Write> = match &out {
                Some(p) => Box::new(std::io::BufWriter::new(
                    std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
                )),
                None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
            };
            let loaded = Project::load_path(&project, &LoadLimits::default());
            let code = match loaded {
                Ok(p) => {
                    let opts = TraceOptions {
                        steps,
                        seed,
                        inputs,
                        max_ops,
                        run_all,
                        instrument,
                        profile,
                        whisker_wall_ms,
                        whisker_offline_speech,
                        whisker_maths,
                    };
                    let end = write_trace(Arc::new(p), &opts, &mut sink)?;
                    if end.reason == "load_error" { ExitCode::from(2) } else { ExitCode::SUCCESS }
                }
                Err(e) => {
                    sink.write_all(load_error_record(seed, &e.to_string()).as_bytes())?;
                    ExitCode::from(2)
                }
            };
            sink.flush()?;
            Ok(code)
        }
        VmCommand::GeometryQuery { project, queries } => super::geometry_query::run(&project, &queries),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_seed;

    #[test]
    fn seeds_like_the_oracle() {
        assert_eq!(parse_seed("1").ok(), Some(1));
        assert_eq!(parse_seed("-1").ok(), Some(u64::MAX));
        assert_eq!(parse_seed("0x10").ok(), Some(16));
        assert_eq!(parse_seed("18446744073709551617").ok(), Some(1));
        assert!(parse_seed("abc").is_err());
    }
}
