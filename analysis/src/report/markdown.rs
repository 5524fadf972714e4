//! The report's prose: `report.md` (inputs, conventions, each section with its tables and
//! images) and the headline tables printed on the terminal.

use std::fmt::Write as _;

use super::options::WriteOptions;
use super::sequence;
use super::tables::{Tables, tables};
use crate::compute::{Analysis, FullCoverageSource};
use crate::curves::{GridUnit, STEPS_PER_SECOND};
use crate::load::Results;
use crate::stats::PMethod;
use crate::table::float_csv;

/// The headline tables for the terminal: coverage and Table 6.
pub fn headline(an: &Analysis) -> String {
    let t = tables(an);
    let mut s = String::new();
    let _ = writeln!(s, "Coverage (mean/median over projects of per-project mean coverage, %)");
    s.push_str(&t.coverage.plain());
    if !t.table6.rows.is_empty() {
        let _ = writeln!(
            s,
            "\nPairwise comparison (Â12 exact; Mann-Whitney U two-sided, {}, α = {}{}; --incomplete {})",
            short_method(an.options.p_method),
            an.options.alpha,
            if an.options.holm { ", Holm-adjusted" } else { "" },
            an.options.incomplete.name()
        );
        s.push_str(&t.table6.plain());
    }
    if !t.mutation.rows.is_empty() {
        let _ = writeln!(s, "\nMutation scores (per operator in report.md)");
        s.push_str(&t.mutation.plain());
    }
    if !t.limit_runs.rows.is_empty() {
        let _ = writeln!(s, "\n{LIMIT_RULE}");
        s.push_str(&t.limit_runs.plain());
    }
    s
}

/// How `limit` runs are treated, stated in every report.
const LIMIT_RULE: &str = "Runs with status `limit` (ended deterministically by the per-run work cap) count as \
results like `ok` runs everywhere, under either `--incomplete` rule: their coverage is the deterministic outcome \
under the study's budget plus the cap.";

fn short_method(m: PMethod) -> &'static str {
    match m {
        PMethod::Asymptotic => "normal approximation with tie and continuity correction",
        PMethod::Exact => "exact permutation p",
    }
}

/// The text of `report.md`; `images` holds, per dataset, (section, Markdown image link).
pub(crate) fn markdown(
    an: &Analysis,
    res: &Results,
    t: &Tables,
    images: &[Vec<(String, String)>],
    wo: &WriteOptions,
) -> String {
    let o = &an.options;
    let mut s = String::new();
    let img = |kind: &str| -> String {
        let mut x = String::new();
        for imgs in images {
            for (k, link) in imgs {
                if k == kind {
                    let _ = writeln!(x, "{link}\n");
                }
            }
        }
        x
    };
    let _ = writeln!(s, "# Analysis report: {}\n", wo.title);
    let _ = writeln!(s, "Written by `clowder analyze`. All CSV files hold full-precision values; `.tex` files are");
    let _ = writeln!(s, "booktabs tables (`\\usepackage{{booktabs}}`).\n");

    let _ = writeln!(s, "## Inputs\n");
    for f in &res.files {
        let _ = writeln!(s, "- `{}`: {} rows", f.name, f.rows);
    }
    let _ = writeln!(
        s,
        "- {} dataset(s), {} project(s), {} algorithm configuration(s): {}",
        res.datasets.len(),
        res.projects.len(),
        res.algorithms.len(),
        res.algorithms.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ")
    );
    for d in &an.datasets {
        let st: Vec<String> = d.statuses.iter().map(|(k, v)| format!("{v} {k}")).collect();
        let _ = writeln!(s, "- dataset `{}`: {} projects; runs: {}", d.name, d.projects, st.join(", "));
    }
    for n in &res.notes {
        let _ = writeln!(s, "- note: {n}");
    }
    s.push('\n');

    let _ = writeln!(s, "## Conventions\n");
    let _ = writeln!(
        s,
        "- **Unit of analysis**: the project. Coverage summaries first average each project's runs with a result \
         (one per seed), then take the mean and median over projects."
    );
    let _ = writeln!(
        s,
        "- **Â12** (Vargha-Delaney): in \"A vs B\", A is the first sample. Â12 = P(A > B) + ½·P(A = B), counted \
         exactly over all pairs of runs (ties detected with `==` count one half). **Equal** means Â12 is exactly 0.5."
    );
    let _ = writeln!(
        s,
        "- **Mann-Whitney U**: U of A, two-sided p-value, {}. When all values are tied the test is not significant \
         (p = 1). Significant means p < α = {}{}.",
        o.p_method.name(),
        o.alpha,
        if o.holm {
            "; p-values are Holm-adjusted within each comparison (dataset, A vs B) across its projects"
        } else {
            "; p-values are not adjusted for multiple comparisons"
        }
    );
    let _ = writeln!(
        s,
        "- **Table 6** (as in the Whisker paper): **Better** = projects with Â12 > 0.5, **Sig better** = those of \
         them with p < α; **Equal** = Â12 = 0.5; **Worse** = Â12 < 0.5, **Sig worse** = those of them with p < α. \
         Better + Equal + Worse = projects compared. The Â12 column is the mean over compared projects."
    );
    let _ = writeln!(
        s,
        "- **Incomplete repetitions**: {}; cells lacking a result for some seed, and why, are in `excluded.csv`.",
        o.incomplete.describe()
    );
    let _ = writeln!(s, "- **`limit` runs**: {LIMIT_RULE}");
    let _ = writeln!(s, "- **Magnitude** of Â12: {}.", o.thresholds.describe());
    if an.grid_end > 0 {
        let _ = writeln!(
            s,
            "- **Coverage over time**: each run's coverage at a grid time is its covered count at the last change \
             point at or before that time, over its total targets; after the run's last point the final value \
             carries forward. Grid: every {} step(s) ({}) up to {} steps. Curves are the mean over projects of \
             each project's mean over runs; the band is the 95 % confidence interval of that mean (Student t over \
             projects).",
            o.grid.step,
            match o.grid.unit {
                GridUnit::Seconds => format!("{} Scratch s", float_csv(o.grid.step as f64 / STEPS_PER_SECOND as f64)),
                GridUnit::Steps => "VM steps".into(),
            },
            an.grid_end
        );
    }
    let _ = writeln!(s, "- **Time**: 30 VM steps are one Scratch second.");
    let _ = writeln!(
        s,
        "- **Box plots**: box = quartiles, black line = median, whiskers = the most extreme values within 1.5 IQR \
         of the box, ▲ = mean, ○ = outliers.\n"
    );

    let _ = writeln!(s, "## Coverage\n");
    s.push_str(&t.coverage.markdown());
    s.push('\n');
    s.push_str(&img("coverage"));

    let _ = writeln!(s, "## Pairwise comparison (Table 6)\n");
    if t.table6.rows.is_empty() {
        let _ = writeln!(s, "No comparison: fewer than two algorithms per dataset.\n");
    } else {
        s.push_str(&t.table6.markdown());
        s.push('\n');
        for d in &an.datasets {
            for c in &d.skipped_comparisons {
                let _ = writeln!(s, "- `{}`: {c} not compared (an algorithm has no runs there)", d.name);
            }
        }
        let _ = writeln!(
            s,
            "Excluded: projects left out under `--incomplete {}` (see Conventions). Per-project values (n A, n B, \
             U, Â12, p, magnitude, verdict): `pairs.csv`.\n",
            o.incomplete.name()
        );
        s.push_str(&img("a12"));
    }
    if !t.limit_runs.rows.is_empty() {
        let _ = writeln!(s, "### Runs ended by the work cap\n");
        let _ = writeln!(s, "Runs with status `limit`, counted as results (see Conventions); also `limit_runs.csv`.\n");
        s.push_str(&t.limit_runs.markdown());
        s.push('\n');
    }
    if !t.excluded.rows.is_empty() {
        let _ = writeln!(s, "### Incomplete repetitions\n");
        let mut shown = t.excluded.clone();
        let total = shown.rows.len();
        shown.rows.truncate(20);
        s.push_str(&shown.markdown());
        if total > 20 {
            let _ = writeln!(s, "\n… {} more in `excluded.csv`.", total - 20);
        }
        s.push('\n');
    }

    let _ = writeln!(s, "## Coverage over time\n");
    if an.datasets.iter().all(|d| d.curves.is_empty()) {
        let _ = writeln!(s, "Not available (needs `timeline.csv`).\n");
    } else {
        s.push_str(&img("time"));
        let _ = writeln!(s, "Values on the grid: `coverage_over_time.csv`.");
        if wo.per_run_timelines {
            let _ = writeln!(
                s,
                "Per-run timelines: `timeline_whisker.csv` (Whisker's columns with one column per Scratch second, \
                 headed by milliseconds `0,1000,…`; the value at second k is the coverage reached at step 30·k, \
                 not rounded to the nearest second as Whisker's wall clock does) and `timeline_pynguin.csv` \
                 (`CoverageTimeline_T1..Tn`, Tk = coverage at the end of the k-th grid interval)."
            );
        } else {
            let _ = writeln!(
                s,
                "Per-run timelines (Whisker per-second columns, Pynguin `CoverageTimeline_T1..Tn`) are written with \
                 `--per-run-timelines`."
            );
        }
        s.push('\n');
    }

    let _ = writeln!(s, "## Time to full coverage\n");
    let src = an.datasets.first().map(|d| d.full_coverage_source).unwrap_or(FullCoverageSource::CoverageOnly);
    let _ = writeln!(
        s,
        "{}\n",
        match src {
            FullCoverageSource::Column => "From `steps_to_full_coverage`; times are over the runs that reached 100 %.",
            FullCoverageSource::Timeline =>
                "From the timeline (first change point with every target covered); times are over the runs that \
                 reached 100 %.",
            FullCoverageSource::CoverageOnly =>
                "Only whether 100 % was reached (no `steps_to_full_coverage` column and no timeline, so no times).",
        }
    );
    s.push_str(&t.full_coverage.markdown());
    s.push('\n');

    let _ = writeln!(s, "## Test-suite size on projects with equal coverage\n");
    if !an.has_tests && !an.has_events {
        let _ = writeln!(s, "Not available (runs has neither `tests_after_min` nor `events_after_min`).\n");
    } else {
        let _ = writeln!(
            s,
            "Projects where every run (`ok` or `limit`) of every algorithm reaches exactly the same coverage and every \
             algorithm has complete repetitions. Whisker counts events (after minimisation).\n"
        );
        s.push_str(&t.suite_size.markdown());
        s.push('\n');
        if !t.suite_size_a12.rows.is_empty() {
            s.push_str(&t.suite_size_a12.markdown());
            s.push('\n');
        }
    }

    let _ = writeln!(s, "## Mutation analysis\n");
    if t.mutation.rows.is_empty() {
        let _ = writeln!(s, "No mutation data (mutation analysis off, or the columns/files are absent).\n");
    } else {
        s.push_str(&t.mutation.markdown());
        s.push('\n');
        if t.mutation_operators.rows.is_empty() {
            let _ = writeln!(s, "Per-operator scores need `mutants.csv`.\n");
        } else {
            s.push_str(&t.mutation_operators_wide.markdown());
            let _ = writeln!(
                s,
                "\nCounts per operator (generated, killed, excluded, timeout): `mutation_operators.csv`.\n"
            );
            s.push_str(&img("mutation"));
        }
    }

    sequence::markdown_section(&mut s, an, &t.sequence);

    let _ = writeln!(s, "## Project size\n");
    if an.datasets.iter().all(|d| d.sizes.is_empty()) {
        let _ = writeln!(s, "Not available (needs `total_targets`).\n");
    } else {
        s.push_str(&img("size"));
        s.push_str(&t.size_correlation.markdown());
        let _ = writeln!(s, "\nSizes per project: `project_sizes.csv`.\n");
    }
    s
}
