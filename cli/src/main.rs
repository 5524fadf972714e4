//! `clowder`: run and analyse large studies of automated test generation for
//! Scratch programs. Thin: parses arguments and calls the crates.

mod cmd;
mod progress;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "clowder", version, about = "Large empirical studies of test generation for Scratch programs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run an experiment: embedded coordinator plus local workers over gRPC.
    Run {
        /// Experiment file (TOML).
        experiment: PathBuf,
        /// Worker count (default: one per available core).
        #[arg(long)]
        workers: Option<usize>,
        /// Put results under this folder instead of the experiment's `output`.
        #[arg(long)]
        output: Option<PathBuf>,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
    },
    /// One test-generation run on one project (prints the outcome; --out saves suite and timeline).
    Gen(cmd::generate::GenArgs),
    /// Run a hand-written Whisker test suite on projects (TAP, tests.csv, JSON feedback).
    Test(cmd::test::TestArgs),
    /// Mutation analysis of generated suites (scores overall and per operator); --list shows the mutants.
    Mutate(cmd::mutate::MutateArgs),
    /// Mutation analysis as a follow-up on the suites a finished study stored (writes an analysable copy).
    MutateStudy(cmd::mutate_study::Args),
    /// Replay every finished run's suites on new seeds: static event sequences and Neatest's
    /// dynamic suites (the Neatest paper's Table 4)
    ReplayStudy(cmd::replay_study::Args),
    /// Judge the mutants and the original with every Neatest run's dynamic suite: mutants killed
    /// and false positives (the Neatest paper's Table 5)
    JudgeStudy(cmd::judge_study::Args),
    /// The Neatest paper's Tables 3–5 from a study, its replays and its judgements.
    NeatestTables(cmd::neatest_tables::Args),
    /// Suite selection by coverage criteria (GA, best of 1 000, unranked) and the mutants the suites catch.
    SelectStudy(cmd::select_study::Args),
    /// Analyse the results of an experiment: statistics, tables, plots, report folder.
    Analyze(cmd::analyze::AnalyzeArgs),
    /// Serve an experiment to remote workers (durable, resumable).
    Coordinator(cmd::coordinator::Args),
    /// Join a coordinator and execute runs, one per pinned core.
    Worker(cmd::worker::Args),
    /// Live progress of a running study.
    Status(cmd::status::Args),
    /// Write the CSV and Parquet exports of a study from its store.
    Export(cmd::export::Args),
    /// Write (and submit) an sbatch script of pilot workers.
    Slurm(cmd::slurm::Args),
    /// Re-execute finished runs locally and check that their digests reproduce.
    Verify(cmd::verify::Args),
    /// Benchmarks (`clowder bench vm`: VM steps/s against the reference scratch-vm).
    Bench {
        #[command(subcommand)]
        what: cmd::bench::BenchWhat,
    },
    /// Datasets: manifests, statistics, downloads from the Scratch website, sampling.
    Dataset {
        #[command(subcommand)]
        command: cmd::dataset::DatasetCommand,
    },
    /// Direct access to the VM (`clowder vm trace …`).
    Vm {
        #[command(subcommand)]
        command: cmd::vm::VmCommand,
    },
}

/// Restores the default action of SIGPIPE (the Rust runtime ignores it), so that
/// `clowder gen … | head` ends quietly like other Unix tools instead of panicking in `println!`.
/// Only for the commands that print and start no child processes: a worker writing to a child
/// that died must get an error it can record, not be killed.
fn default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any thread exists; `signal` with `SIG_DFL`
    // only resets the disposition of one signal.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(
        cli.command,
        Command::Analyze(_)
            | Command::Status(_)
            | Command::Gen(_)
            | Command::Mutate(_)
            | Command::Test(_)
            | Command::MutateStudy(_)
            | Command::ReplayStudy(_)
            | Command::JudgeStudy(_)
            | Command::SelectStudy(_)
            | Command::Dataset { .. }
            | Command::Vm { .. }
    ) {
        default_sigpipe();
    }
    let outcome = match cli.command {
        Command::Run { experiment, workers, output, quiet } => {
            cmd::run::run(cmd::run::RunArgs { experiment, workers, output, quiet })
        }
        Command::Analyze(args) => cmd::analyze::run(args),
        Command::Coordinator(a) => cmd::coordinator::run(a),
        Command::Worker(a) => cmd::worker::run(a),
        Command::Status(a) => cmd::status::run(a),
        Command::Export(a) => cmd::export::run(a),
        Command::Slurm(a) => cmd::slurm::run(a),
        Command::Verify(a) => cmd::verify::run(a),
        Command::Bench { what } => cmd::bench::run(what),
        Command::Gen(args) => cmd::generate::run(args),
        Command::Test(args) => cmd::test::run(args),
        Command::Mutate(args) => cmd::mutate::run(args),
        Command::MutateStudy(args) => cmd::mutate_study::run(args),
        Command::ReplayStudy(args) => cmd::replay_study::run(args),
        Command::JudgeStudy(args) => cmd::judge_study::run(args),
        Command::NeatestTables(args) => cmd::neatest_tables::run(&args),
        Command::SelectStudy(args) => cmd::select_study::run(args),
        Command::Dataset { command } => cmd::dataset::run(command),
        Command::Vm { command } => cmd::vm::run(command),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    /// clap checks a command's definition only when that command is parsed; this checks every
    /// subcommand's (e.g. two flattened argument structs that clash) without running any.
    #[test]
    fn every_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
