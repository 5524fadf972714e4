//! `clowder dataset …`: manifests, statistics, downloads and sampling of
//! datasets of Scratch projects (the work is in `clowder-datasets`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Subcommand;
use clowder_analysis::plots::{LogHistogram, png_bytes};
use clowder_dataset_tools::fetch::{self, FetchOptions, Status, SystemClock};
use clowder_dataset_tools::sample::{self, Mode, SampleOptions};
use clowder_dataset_tools::stats::DatasetStats;
use clowder_datasets::expand_corpora;
use clowder_datasets::manifest::{self, MANIFEST_FILE};

/// The `dataset` subcommands.
#[derive(Subcommand)]
pub enum DatasetCommand {
    /// Write or refresh DIR/dataset.toml: files in stable order, blake3 hashes,
    /// duplicates flagged, size metrics; hand-written titles, sources and exclusions are kept.
    Scan {
        /// Dataset folder (`$CLOWDER_CORPORA/…` is expanded).
        dir: String,
    },
    /// Size distributions (statements, blocks, sprites, scripts, extensions, assets)
    /// as a table, and a histogram of statements per project (PNG, log scale).
    Stats {
        /// Dataset folder or project file (`$CLOWDER_CORPORA/…` is expanded).
        dir: String,
        /// Where to write the histogram (default: `<dataset name>-statements.png`).
        #[arg(long)]
        png: Option<PathBuf>,
        /// Do not write the histogram.
        #[arg(long, conflicts_with = "png")]
        no_png: bool,
        /// Also write one row per project to this CSV file.
        #[arg(long)]
        csv: Option<PathBuf>,
    },
    /// Download projects by id from the Scratch website into OUT as .sb3 files
    /// (resumable: re-run the same command to continue), with a per-project report
    /// (OUT/fetch-report.csv) and a manifest (OUT/dataset.toml).
    Fetch {
        /// File of project ids: one per line (first CSV field or a …/projects/ID URL); `#` comments.
        #[arg(long)]
        ids: PathBuf,
        /// Output folder.
        #[arg(long)]
        out: PathBuf,
        /// Projects downloaded at the same time.
        #[arg(long, default_value_t = 4)]
        jobs: usize,
        /// Requests per second over all jobs.
        #[arg(long, default_value_t = 5.0)]
        rate: f64,
        /// Requests allowed at once after a quiet period.
        #[arg(long, default_value_t = 10.0)]
        burst: f64,
        /// Attempts per request for network errors, timeouts, truncated bodies and 5xx.
        #[arg(long, default_value_t = 4)]
        attempts: u32,
        /// Timeout of one request, in seconds.
        #[arg(long, default_value_t = 120.0)]
        timeout: f64,
        /// Base URL of the project API.
        #[arg(long, default_value = "https://api.scratch.mit.edu")]
        api_base: String,
        /// Base URL of the project server.
        #[arg(long, default_value = "https://projects.scratch.mit.edu")]
        projects_base: String,
        /// Base URL of the asset server.
        #[arg(long, default_value = "https://assets.scratch.mit.edu")]
        assets_base: String,
        /// Write projects even when some of their assets are missing on the server.
        #[arg(long)]
        allow_missing_assets: bool,
        /// Try again the projects that failed for good last time (404, Scratch 2, …).
        #[arg(long)]
        retry_failed: bool,
        /// Keep downloaded assets in OUT/.clowder-fetch/assets afterwards.
        #[arg(long)]
        keep_cache: bool,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
    },
    /// Seeded sample of N projects of a dataset into OUT (copies, hard links, or a
    /// manifest that references the source files), optionally with the rest as a
    /// disjoint second split.
    Sample {
        /// Source dataset folder (`$CLOWDER_CORPORA/…` is expanded, and kept as the
        /// `root` of a `--reference` split so it works on other machines).
        dir: String,
        /// Projects to sample.
        #[arg(long)]
        n: usize,
        /// Seed.
        #[arg(long)]
        seed: u64,
        /// Output folder (absent or empty).
        #[arg(long)]
        out: PathBuf,
        /// Hard-link instead of copying.
        #[arg(long, conflicts_with = "reference")]
        link: bool,
        /// Write only a manifest whose `root` is the source folder (no copies).
        #[arg(long)]
        reference: bool,
        /// Write the projects not sampled to this folder.
        #[arg(long)]
        rest: Option<PathBuf>,
        /// Leave out remixes (needs a manifest with remix parents, as fetch writes).
        #[arg(long)]
        exclude_remixes: bool,
        /// Leave out projects the VM cannot load.
        #[arg(long)]
        exclude_unloadable: bool,
    },
    /// Random project ids the way the Whisker paper drew its Random1000 candidates:
    /// BATCHES start ids uniform in the ranges, each followed by consecutive ids.
    Ids {
        /// Id range FROM-TO (half-open); repeatable. The paper used 400000000-700000000.
        #[arg(long = "range", default_value = "400000000-700000000")]
        ranges: Vec<String>,
        /// Number of batches (random start ids).
        #[arg(long)]
        batches: u64,
        /// Ids per batch (the paper: 1000).
        #[arg(long, default_value_t = 1000)]
        batch_size: u64,
        /// Seed.
        #[arg(long)]
        seed: u64,
        /// Output file (one id per line).
        #[arg(long)]
        out: PathBuf,
    },
}

/// Runs a `dataset` subcommand.
pub fn run(cmd: DatasetCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        DatasetCommand::Scan { dir } => scan(Path::new(&expand_corpora(&dir))),
        DatasetCommand::Stats { dir, png, no_png, csv } => stats(&dir, png, no_png, csv),
        DatasetCommand::Fetch {
            ids,
            out,
            jobs,
            rate,
            burst,
            attempts,
            timeout,
            api_base,
            projects_base,
            assets_base,
            allow_missing_assets,
            retry_failed,
            keep_cache,
            quiet,
        } => {
            let positive = |x: f64| x > 0.0 && x.is_finite();
            if !positive(rate) || !positive(burst) || !positive(timeout) || attempts == 0 {
                bail!("--rate, --burst, --timeout and --attempts must be positive");
            }
            let opts = FetchOptions {
                api_base,
                projects_base,
                assets_base,
                jobs: jobs.max(1),
                rate,
                burst,
                max_attempts: attempts,
                timeout: Duration::from_secs_f64(timeout),
                allow_missing_assets,
                retry_failed,
                keep_cache,
                ..FetchOptions::default()
            };
            fetch_cmd(&ids, &out, &opts, quiet)
        }
        DatasetCommand::Sample { dir, n, seed, out, link, reference, rest, exclude_remixes, exclude_unloadable } => {
            let mode = if reference {
                Mode::Reference
            } else if link {
                Mode::Link
            } else {
                Mode::Copy
            };
            let opts = SampleOptions { n, seed, mode, exclude_remixes, exclude_unloadable, rest };
            let r = sample::sample(Path::new(&expand_corpora(&dir)), &dir, &out, &opts)?;
            println!(
                "sampled {} of {} eligible projects ({} filtered out) into {}{}",
                r.chosen.len(),
                r.candidates,
                r.filtered,
                out.display(),
                opts.rest.as_ref().map(|p| format!("; the other {} into {}", r.rest, p.display())).unwrap_or_default()
            );
            Ok(ExitCode::SUCCESS)
        }
        DatasetCommand::Ids { ranges, batches, batch_size, seed, out } => {
            let parsed = ranges
                .iter()
                .map(|r| {
                    let (a, b) = r.split_once('-').with_context(|| format!("range {r:?} is not FROM-TO"))?;
                    Ok((a.trim().parse::<u64>()?, b.trim().parse::<u64>()?))
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            let ids = sample::random_ids(&parsed, batches, batch_size, seed).map_err(anyhow::Error::msg)?;
            let mut text = format!(
                "# clowder dataset ids --range {} --batches {batches} --batch-size {batch_size} --seed {seed}\n",
                ranges.join(" --range ")
            );
            for id in &ids {
                text.push_str(&id.to_string());
                text.push('\n');
            }
            std::fs::write(&out, text).with_context(|| format!("writing {}", out.display()))?;
            println!("{} ids in {batches} batches written to {}", ids.len(), out.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn scan(dir: &Path) -> anyhow::Result<ExitCode> {
    let (m, r) = manifest::scan(dir, &Default::default())?;
    println!(
        "{}: {} projects ({} added, {} changed, {} removed, {} duplicates, {} do not load)",
        dir.join(MANIFEST_FILE).display(),
        r.projects,
        r.added.len(),
        r.changed.len(),
        r.removed.len(),
        r.duplicates.len(),
        r.load_errors.len()
    );
    for (f, first) in &r.duplicates {
        println!("  duplicate: {f} has the same bytes as {first} (left out of studies)");
    }
    for f in &r.removed {
        println!("  removed: {f} (file gone)");
    }
    for n in &r.name_clashes {
        println!("  warning: several files are named {n:?} (results would not tell them apart)");
    }
    let excluded = m.projects.iter().filter(|e| !e.exclude.is_empty()).count();
    if excluded > 0 {
        println!("  {excluded} projects are excluded by hand");
    }
    Ok(ExitCode::SUCCESS)
}

fn stats(dir: &str, png: Option<PathBuf>, no_png: bool, csv: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let path = PathBuf::from(expand_corpora(dir));
    let st = DatasetStats::collect(&path)?;
    print!("{}", st.table());
    if let Some(csv) = csv {
        st.write_csv(&csv).map_err(anyhow::Error::msg)?;
        println!("per-project rows: {}", csv.display());
    }
    if !no_png {
        let name = path
            .canonicalize()
            .ok()
            .and_then(|p| p.file_stem().map(|n| n.to_string_lossy().to_string()))
            .unwrap_or_else(|| "dataset".into());
        let png = png.unwrap_or_else(|| PathBuf::from(format!("{name}-statements.png")));
        let values: Vec<u64> = st.loaded().map(|m| m.statements).collect();
        let plot =
            LogHistogram::from_counts(&format!("{name}: statements per project"), "statements (log scale)", &values);
        let bytes = png_bytes(&plot).map_err(anyhow::Error::msg)?;
        std::fs::write(&png, bytes).with_context(|| format!("writing {}", png.display()))?;
        println!("histogram: {}", png.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn fetch_cmd(ids_file: &Path, out: &Path, opts: &FetchOptions, quiet: bool) -> anyhow::Result<ExitCode> {
    // 10 million ids of up to 12 digits fit comfortably; anything larger is not an ids file.
    const MAX_IDS_FILE: u64 = 512 << 20;
    let size = std::fs::metadata(ids_file).with_context(|| format!("reading {}", ids_file.display()))?.len();
    if size > MAX_IDS_FILE {
        bail!("{}: {size} bytes, over the limit of {MAX_IDS_FILE} for an ids file", ids_file.display());
    }
    let text = std::fs::read_to_string(ids_file).with_context(|| format!("reading {}", ids_file.display()))?;
    let ids = fetch::parse_ids(&text).map_err(|e| anyhow::anyhow!("{}: {e}", ids_file.display()))?;
    let bar = crate::progress::Progress::new(ids.len() as u64, "projects", quiet);
    let failed = std::sync::atomic::AtomicU64::new(0);
    let on_done = |row: &fetch::Row, _reused: bool| {
        if !row.status.has_file() {
            let n = failed.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            bar.set_message(format!("({n} not downloaded)"));
        }
        bar.inc(1);
    };
    let cancel = AtomicBool::new(false);
    let summary = fetch::fetch(&ids, out, opts, &SystemClock::default(), &cancel, &on_done)?;
    bar.finish_and_clear();
    let counts: Vec<String> = summary.counts().iter().map(|(s, n)| format!("{} {n}", s.as_str())).collect();
    println!(
        "{} ids: {} ({} reused from earlier runs; {} requests, {:.1} MB)",
        summary.rows.len(),
        counts.join(", "),
        summary.reused,
        summary.requests,
        summary.bytes_downloaded as f64 / 1e6
    );
    println!("report: {}", out.join(fetch::REPORT_FILE).display());
    let unfinished = summary.rows.iter().filter(|r| !r.status.is_final()).count();
    if unfinished > 0 {
        let kinds: Vec<&str> = [Status::Network, Status::Truncated, Status::RateLimited, Status::HttpError]
            .into_iter()
            .filter(|s| summary.rows.iter().any(|r| r.status == *s))
            .map(Status::as_str)
            .collect();
        eprintln!(
            "{unfinished} projects failed transiently ({}); run the same command again to retry them",
            kinds.join(", ")
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
