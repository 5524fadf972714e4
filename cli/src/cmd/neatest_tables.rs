//! `clowder neatest-tables RESULTS --replays R.csv --judged J.csv`: the Neatest paper's Tables
//! 3–5 from a study's exports (`runs`, and `mutants` for the static column of Table 5),
//! `clowder replay-study`'s CSV and `clowder judge-study`'s CSV. Computed by
//! [`clowder_analysis::neatest`]; this module reads the files and writes the page.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clowder_analysis::neatest::{self, Options};

/// Arguments of `clowder neatest-tables`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Results folder of the study (`results/<name>`, holding its exports: `clowder export`
    /// writes them for a study that is still running).
    pub results: PathBuf,
    /// `clowder replay-study`'s CSV (Table 4).
    #[arg(long)]
    pub replays: Option<PathBuf>,
    /// `clowder judge-study`'s CSV (Table 5).
    #[arg(long)]
    pub judged: Option<PathBuf>,
    /// The networks' algorithm label in the study.
    #[arg(long, default_value = "neatest")]
    pub focus: String,
    /// Significance level.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Folder for `neatest.md` and each table as CSV and LaTeX [default: RESULTS/report].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `clowder neatest-tables`.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let res = clowder_analysis::load(&args.results)?;
    let replays = args.replays.as_deref().map(neatest::read_replays).transpose()?;
    let judged = args.judged.as_deref().map(neatest::read_judged).transpose()?;
    let static_verdicts = match (&judged, clowder_analysis::load::find(&args.results, "mutants")) {
        (Some(_), Some(path)) => Some(neatest::read_static_verdicts(&path)?),
        _ => None,
    };
    let options = Options { focus: args.focus.clone(), alpha: args.alpha };
    let tables = neatest::tables(&res, replays.as_deref(), judged.as_deref(), static_verdicts.as_ref(), &options)?;
    let out = args.out.clone().unwrap_or_else(|| args.results.join("report"));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let page = out.join("neatest.md");
    std::fs::write(&page, tables.markdown()).with_context(|| format!("writing {}", page.display()))?;
    for t in tables.all() {
        for (ext, text) in [("csv", t.csv()), ("tex", t.latex())] {
            let path = out.join(format!("{}.{ext}", t.name));
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    for t in tables.all() {
        // The per-project rows are in the files; the terminal gets the summary rows.
        let last = t.rows.len().saturating_sub(if t.name == "neatest_versus" { t.rows.len() } else { 1 });
        let mut summary = t.clone();
        summary.rows.drain(..last);
        println!("{}\n{}", t.caption, summary.plain());
    }
    println!("written: {} (and each table as CSV and LaTeX)", page.display());
    Ok(ExitCode::SUCCESS)
}
