//! `clowder analyze RESULTS`: statistics and a report folder from a study's exports.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clowder_analysis::curves::STEPS_PER_SECOND;
use clowder_analysis::{Grid, GridUnit, Incomplete, Options, PMethod, Thresholds, WriteOptions};

/// Arguments of `clowder analyze`.
#[derive(clap::Args, Debug)]
pub struct AnalyzeArgs {
    /// Results folder (`results/<name>`, holding runs.csv or runs.parquet; timeline and
    /// mutants files are used when present).
    pub results: PathBuf,
    /// Report folder [default: RESULTS/report].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Comparison "A vs B" (A is the first sample); repeatable. Default: every pair of
    /// algorithms, alphabetical. Labels may contain commas inside brackets.
    #[arg(long, value_name = "A,B")]
    pub compare: Vec<String>,
    /// Significance level.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Mann-Whitney p-value: normal approximation with tie and continuity correction, or the
    /// exact tie-aware permutation p (small samples, at most 100 runs per comparison).
    #[arg(long, value_enum, default_value_t = PValue::Asymptotic)]
    pub p_value: PValue,
    /// Holm-adjust the p-values of each comparison across its projects.
    #[arg(long)]
    pub holm: bool,
    /// Projects with failed or missing runs: leave them out of a comparison, or test the runs
    /// that exist (unequal n; fewer than 2 results on a side still excludes the project).
    #[arg(long, value_enum, default_value_t = IncompleteRule::Exclude)]
    pub incomplete: IncompleteRule,
    /// Â12 magnitude thresholds.
    #[arg(long, value_enum, default_value_t = Magnitudes::VarghaDelaney)]
    pub magnitude: Magnitudes,
    /// Coverage-over-time grid: `<n>s` (Scratch seconds, 30 steps each) or `<n>steps`.
    #[arg(long, default_value = "1s")]
    pub grid: String,
    /// Also write per-run timelines (Whisker per-second columns, Pynguin CoverageTimeline_T*).
    /// Large for big studies: one row per run, one column per grid point.
    #[arg(long)]
    pub per_run_timelines: bool,
    /// Skip the plots.
    #[arg(long)]
    pub no_plots: bool,
    /// Print nothing but errors.
    #[arg(long)]
    pub quiet: bool,
}

/// `--p-value`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PValue {
    /// scipy mannwhitneyu(method="asymptotic", use_continuity=True).
    Asymptotic,
    /// Exact permutation distribution of U given the ties.
    Exact,
}

/// `--incomplete`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncompleteRule {
    /// A project enters "A vs B" only if every expected seed of A and B has a result.
    Exclude,
    /// Mann-Whitney U and Â12 on the results that exist, n reported per project.
    Compare,
}

/// `--magnitude`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Magnitudes {
    /// 0.56 / 0.64 / 0.71 (Vargha and Delaney 2000).
    VarghaDelaney,
    /// |δ| 0.147 / 0.33 / 0.474 (Romano et al. 2006).
    Romano,
}

/// Splits "A,B" at the comma outside brackets (sweep labels contain `[x=1,y=2]`).
fn split_pair(s: &str) -> anyhow::Result<(String, String)> {
    let mut depth = 0i32;
    let mut cut = None;
    for (i, c) in s.char_indices() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth -= 1,
            ',' if depth == 0 => {
                if cut.is_some() {
                    bail!("--compare {s:?}: expected exactly two algorithms A,B");
                }
                cut = Some(i);
            }
            _ => {}
        }
    }
    let Some(i) = cut else { bail!("--compare {s:?}: expected A,B") };
    let (a, b) = (s[..i].trim(), s[i + 1..].trim());
    if a.is_empty() || b.is_empty() {
        bail!("--compare {s:?}: expected A,B");
    }
    Ok((a.to_string(), b.to_string()))
}

/// Parses `--grid`: `1s`, `0.5s`, `10s`, `30steps`.
fn parse_grid(s: &str) -> anyhow::Result<Grid> {
    let s = s.trim();
    let bad = || anyhow::anyhow!("--grid {s:?}: expected <n>s (Scratch seconds) or <n>steps, e.g. 1s or 100steps");
    if let Some(n) = s.strip_suffix("steps") {
        let step: u64 = n.trim().parse().map_err(|_| bad())?;
        if step == 0 {
            bail!("--grid: the step must be at least 1");
        }
        return Ok(Grid { unit: GridUnit::Steps, step });
    }
    let n = s.strip_suffix('s').ok_or_else(bad)?;
    let secs: f64 = n.trim().parse().map_err(|_| bad())?;
    let steps = secs * STEPS_PER_SECOND as f64;
    if !((1.0..=1e12).contains(&steps) && steps.fract() == 0.0) {
        bail!("--grid {s:?}: seconds × 30 must be a whole number of steps ≥ 1");
    }
    Ok(Grid { unit: GridUnit::Seconds, step: steps as u64 })
}

/// Runs the analysis, writes the report folder and prints the headline tables.
pub fn run(args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let compare = args.compare.iter().map(|c| split_pair(c)).collect::<anyhow::Result<Vec<_>>>()?;
    let options = Options {
        alpha: args.alpha,
        compare,
        p_method: match args.p_value {
            PValue::Asymptotic => PMethod::Asymptotic,
            PValue::Exact => PMethod::Exact,
        },
        holm: args.holm,
        thresholds: match args.magnitude {
            Magnitudes::VarghaDelaney => Thresholds::VarghaDelaney,
            Magnitudes::Romano => Thresholds::Romano,
        },
        grid: parse_grid(&args.grid)?,
        incomplete: match args.incomplete {
            IncompleteRule::Exclude => Incomplete::Exclude,
            IncompleteRule::Compare => Incomplete::Compare,
        },
    };
    if clowder_analysis::tests_report::is_test_study(&args.results) {
        return test_study(&args);
    }
    let results = clowder_analysis::load(&args.results)?;
    let analysis = clowder_analysis::analyze(&results, &options)?;
    let (out, title) = out_and_title(&args);
    let wo = WriteOptions { title, plots: !args.no_plots, per_run_timelines: args.per_run_timelines };
    let files = clowder_analysis::report::write(&analysis, &results, &out, &wo)
        .with_context(|| format!("writing the report to {}", out.display()))?;
    if !args.quiet {
        print!("{}", clowder_analysis::report::headline(&analysis));
        for n in &results.notes {
            eprintln!("note: {n}");
        }
        eprintln!("report: {} ({} files)", out.join("report.md").display(), files.len());
    }
    Ok(ExitCode::SUCCESS)
}

/// The report folder (`--out`, else `RESULTS/report`) and the report's title (the results
/// folder's name).
fn out_and_title(args: &AnalyzeArgs) -> (std::path::PathBuf, String) {
    let out = args.out.clone().unwrap_or_else(|| args.results.join("report"));
    let title = args
        .results
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "results".into());
    (out, title)
}

/// The report of a test study (`tests.csv`: verdicts of hand-written suites): pass rates per
/// test and per project, and a project × test matrix per suite.
fn test_study(args: &AnalyzeArgs) -> anyhow::Result<ExitCode> {
    use clowder_analysis::tests_report;
    let study = tests_report::load(&args.results)?;
    let (out, title) = out_and_title(args);
    let files = tests_report::write(&study, &out, &title, !args.no_plots)
        .with_context(|| format!("writing the report to {}", out.display()))?;
    if !args.quiet {
        print!("{}", tests_report::headline(&study));
        eprintln!("report: {} ({} files)", out.join("report.md").display(), files.len());
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_split_outside_brackets() {
        assert_eq!(split_pair("mio,random").unwrap(), ("mio".into(), "random".into()));
        assert_eq!(split_pair("mosa[a=1,b=2],mio").unwrap(), ("mosa[a=1,b=2]".into(), "mio".into()));
        assert!(split_pair("mio").is_err());
        assert!(split_pair("a,b,c").is_err());
        assert!(split_pair(",b").is_err());
    }

    fn args(results: PathBuf, out: PathBuf) -> AnalyzeArgs {
        AnalyzeArgs {
            results,
            out: Some(out),
            compare: Vec::new(),
            alpha: 0.05,
            p_value: PValue::Asymptotic,
            holm: false,
            incomplete: IncompleteRule::Exclude,
            magnitude: Magnitudes::VarghaDelaney,
            grid: "1s".into(),
            per_run_timelines: false,
            no_plots: true,
            quiet: true,
        }
    }

    fn fixture() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../analysis/tests/fixtures/table6")
    }

    #[test]
    fn writes_a_report_with_the_chosen_options() {
        let tmp = tempfile::tempdir().unwrap();
        let mut a = args(fixture(), tmp.path().join("r"));
        a.compare = vec!["random,mio".into()];
        a.holm = true;
        a.magnitude = Magnitudes::Romano;
        assert_eq!(run(a).unwrap(), ExitCode::SUCCESS);
        let md = std::fs::read_to_string(tmp.path().join("r/report.md")).unwrap();
        assert!(md.contains("| d1 | random vs mio |"), "{md}");
        assert!(!md.contains("mio vs mosa"));
        assert!(md.contains("Holm-adjusted") && md.contains("Romano et al. (2006)"));
        let table6 = std::fs::read_to_string(tmp.path().join("r/table6.csv")).unwrap();
        assert!(table6.starts_with("dataset,comparison,a,b,mean_a12,"));
    }

    #[test]
    fn incomplete_rule_reaches_the_report() {
        let tmp = tempfile::tempdir().unwrap();
        let incomplete = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../analysis/tests/fixtures/incomplete");
        for (rule, name) in [(IncompleteRule::Exclude, "exclude"), (IncompleteRule::Compare, "compare")] {
            let out = tmp.path().join(name);
            let mut a = args(incomplete.clone(), out.clone());
            a.incomplete = rule;
            assert_eq!(run(a).unwrap(), ExitCode::SUCCESS);
            let md = std::fs::read_to_string(out.join("report.md")).unwrap();
            assert!(md.contains(&format!("- **Incomplete repetitions**: `--incomplete {name}`:")), "{md}");
            assert!(md.contains("### Runs ended by the work cap"), "{md}");
        }
        // More projects enter the comparisons when the runs that exist are tested.
        let compared =
            |name: &str| std::fs::read_to_string(tmp.path().join(name).join("pairs.csv")).unwrap().lines().count();
        assert!(compared("compare") > compared("exclude"));
    }

    #[test]
    fn bad_options_are_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let mut a = args(fixture(), tmp.path().join("r"));
        a.compare = vec!["mio,nope".into()];
        let e = run(a).unwrap_err().to_string();
        assert!(e.contains("unknown algorithm \"nope\""), "{e}");
        let mut a = args(fixture(), tmp.path().join("r"));
        a.grid = "2 minutes".into();
        assert!(run(a).unwrap_err().to_string().contains("--grid"));
        let a = args(tmp.path().join("missing"), tmp.path().join("r"));
        assert!(run(a).unwrap_err().to_string().contains("not a folder"));
    }

    #[test]
    fn grids_parse() {
        assert_eq!(parse_grid("1s").unwrap(), Grid { unit: GridUnit::Seconds, step: 30 });
        assert_eq!(parse_grid("0.5s").unwrap(), Grid { unit: GridUnit::Seconds, step: 15 });
        assert_eq!(parse_grid("100steps").unwrap(), Grid { unit: GridUnit::Steps, step: 100 });
        assert!(parse_grid("0.01s").is_err());
        assert!(parse_grid("0steps").is_err());
        assert!(parse_grid("fast").is_err());
    }
}
