//! Tables 3–5 of the Neatest paper computed from a study (`runs`), its replays and its
//! judgements, per project with a row of means; and the Markdown page that states how.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{Judged, Replay};
use crate::error::AnalysisError;
use crate::load::Results;
use crate::stats::{PMethod, mann_whitney, mean};
use crate::table::{Cell as C, Table};

/// What the tables compare.
#[derive(Debug, Clone)]
pub struct Options {
    /// The networks' algorithm label (its runs carry reliable coverage and dynamic suites).
    pub focus: String,
    /// Significance level.
    pub alpha: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options { focus: "neatest".into(), alpha: 0.05 }
    }
}

/// The tables, each present when its input was given.
#[derive(Debug, Clone)]
pub struct Tables {
    /// Table 3: coverage per project and algorithm, the focus's reliable coverage, Â12 and p
    /// of the focus against each other algorithm.
    pub coverage: Table,
    /// Table 3's comparisons counted over projects (as the Whisker paper's Table 6).
    pub versus: Table,
    /// Table 4: coverage of the suites replayed on new seeds.
    pub replays: Option<Table>,
    /// Table 5: mutants killed and originals failed by the networks.
    pub oracle: Option<Table>,
    /// Options the tables were made with.
    pub options: Options,
}

/// Computes the tables. `static_verdicts` are the study's own mutant verdicts per (run id,
/// mutant id), for Table 5's static column.
pub fn tables(
    res: &Results,
    replays: Option<&[Replay]>,
    judged: Option<&[Judged]>,
    static_verdicts: Option<&BTreeMap<(String, String), String>>,
    options: &Options,
) -> Result<Tables, AnalysisError> {
    let Some(focus) = res.algorithms.iter().position(|a| *a == options.focus) else {
        return Err(AnalysisError::Options(format!(
            "no algorithm labelled {:?} in the study (it has {}); name the networks' label with --focus",
            options.focus,
            res.algorithms.join(", ")
        )));
    };
    if !(options.alpha > 0.0 && options.alpha < 1.0) {
        return Err(AnalysisError::Options(format!("alpha {} is not in (0, 1)", options.alpha)));
    }
    let others: Vec<usize> = (0..res.algorithms.len()).filter(|&a| a != focus).collect();
    let per_project = by_project(res);
    let coverage = coverage_table(res, &per_project, focus, &others);
    let versus = versus_table(res, &per_project, focus, &others, options.alpha);
    let run_coverage: BTreeMap<&str, f64> =
        per_project.iter().filter_map(|(name, p)| mean(&p.coverage(focus)).map(|m| (name.as_str(), m))).collect();
    let replays = replays.map(|r| replay_table(r, &run_coverage, &res.algorithms[focus], res));
    let oracle = judged.map(|j| oracle_table(j, static_verdicts));
    Ok(Tables { coverage, versus, replays, oracle, options: options.clone() })
}

/// One project's finished runs: per algorithm, (coverage, reliable fraction, statements).
struct Project {
    runs: Vec<Vec<(f64, Option<f64>, u64)>>,
}

impl Project {
    fn coverage(&self, alg: usize) -> Vec<f64> {
        self.runs[alg].iter().map(|r| r.0).collect()
    }
    fn reliable(&self, alg: usize) -> Vec<f64> {
        self.runs[alg].iter().filter_map(|r| r.1).collect()
    }
    fn statements(&self) -> u64 {
        self.runs.iter().flatten().map(|r| r.2).max().unwrap_or(0)
    }
}

/// Finished runs by project label (the dataset is named when the study has several).
fn by_project(res: &Results) -> BTreeMap<String, Project> {
    let mut out: BTreeMap<String, Project> = BTreeMap::new();
    for r in res.runs.iter().filter(|r| r.has_result()) {
        let Some(cov) = r.coverage else { continue };
        let name = &res.projects[r.project as usize];
        let label =
            if res.datasets.len() > 1 { format!("{}/{name}", res.datasets[r.dataset as usize]) } else { name.clone() };
        let total = r.total_targets.unwrap_or(0);
        out.entry(label).or_insert_with(|| Project { runs: vec![Vec::new(); res.algorithms.len()] }).runs
            [r.algorithm as usize]
            .push((cov, r.reliable_coverage(), total));
    }
    out
}

/// Â12 and p of `a` against `b`, when both have at least one value.
fn compare(a: &[f64], b: &[f64]) -> Option<(f64, f64, Ordering)> {
    let mw = mann_whitney(a, b, PMethod::Asymptotic).ok()?;
    Some((mw.a12(), mw.p, mw.counts.a12_vs_half()))
}

fn coverage_table(res: &Results, projects: &BTreeMap<String, Project>, focus: usize, others: &[usize]) -> Table {
    let name = |a: usize| res.algorithms[a].as_str();
    let mut cols: Vec<(String, String)> =
        vec![("project".into(), "project".into()), ("statements".into(), "statements".into())];
    for &a in std::iter::once(&focus).chain(others) {
        cols.push((format!("{} %", name(a)), format!("{}_coverage", name(a))));
        cols.push((String::new(), format!("{}_runs", name(a))));
    }
    cols.push((format!("{} reliable %", name(focus)), format!("{}_reliable", name(focus))));
    for &o in others {
        cols.push((format!("Â12 vs {}", name(o)), format!("a12_vs_{}", name(o))));
        cols.push((format!("p vs {}", name(o)), format!("p_vs_{}", name(o))));
    }
    let refs: Vec<(&str, &str)> = cols.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let mut t = Table::new(
        "neatest_coverage",
        &format!(
            "Coverage per project (mean over runs), {}'s reliable coverage (statements covered on stable_count seeds), and Â12 / Mann-Whitney p of {} against each algorithm",
            name(focus),
            name(focus)
        ),
        &refs,
    );
    let (mut means, mut reliable, mut a12s) =
        (vec![Vec::new(); res.algorithms.len()], Vec::new(), vec![Vec::new(); others.len()]);
    for (label, p) in projects {
        let mut row = vec![C::text(label.clone()), C::int(p.statements())];
        for &a in std::iter::once(&focus).chain(others) {
            let m = mean(&p.coverage(a));
            if let Some(m) = m {
                means[a].push(m);
            }
            row.push(C::opt_pct(m));
            row.push(C::int(p.runs[a].len() as u64));
        }
        let r = mean(&p.reliable(focus));
        if let Some(r) = r {
            reliable.push(r);
        }
        row.push(C::opt_pct(r));
        for (k, &o) in others.iter().enumerate() {
            match compare(&p.coverage(focus), &p.coverage(o)) {
                Some((a12, pv, _)) => {
                    a12s[k].push(a12);
                    row.push(C::num(a12, 2));
                    row.push(C::p(pv));
                }
                None => row.extend([C::na(), C::na()]),
            }
        }
        t.push(row);
    }
    let mut row = vec![C::text("mean"), C::na()];
    for &a in std::iter::once(&focus).chain(others) {
        row.push(C::opt_pct(mean(&means[a])));
        row.push(C::int(means[a].len() as u64));
    }
    row.push(C::opt_pct(mean(&reliable)));
    for v in &a12s {
        row.push(C::opt(mean(v), 2));
        row.push(C::na());
    }
    t.push(row);
    t
}

fn versus_table(
    res: &Results,
    projects: &BTreeMap<String, Project>,
    focus: usize,
    others: &[usize],
    alpha: f64,
) -> Table {
    let mut t = Table::new(
        "neatest_versus",
        "The focus algorithm against each other, counted over projects (Better: Â12 > 0.5, Sig: p < alpha)",
        &[
            ("comparison", "comparison"),
            ("projects", "projects"),
            ("mean Â12", "a12_mean"),
            ("Sig better", "sig_better"),
            ("Better", "better"),
            ("Equal", "equal"),
            ("Worse", "worse"),
            ("Sig worse", "sig_worse"),
        ],
    );
    for &o in others {
        let (mut n, mut a12s, mut c) = (0u64, Vec::new(), [0u64; 5]);
        for p in projects.values() {
            let Some((a12, pv, ord)) = compare(&p.coverage(focus), &p.coverage(o)) else { continue };
            n += 1;
            a12s.push(a12);
            match ord {
                Ordering::Greater => {
                    c[1] += 1;
                    c[0] += u64::from(pv < alpha);
                }
                Ordering::Equal => c[2] += 1,
                Ordering::Less => {
                    c[3] += 1;
                    c[4] += u64::from(pv < alpha);
                }
            }
        }
        t.push(vec![
            C::text(format!("{} vs {}", res.algorithms[focus], res.algorithms[o])),
            C::int(n),
            C::opt(mean(&a12s), 3),
            C::int(c[0]),
            C::int(c[1]),
            C::int(c[2]),
            C::int(c[3]),
            C::int(c[4]),
        ]);
    }
    t
}

/// Table 4: per project, the focus's dynamic and static replays (each run's mean over its
/// replay seeds is one sample), the other algorithms' static replays.
fn replay_table(replays: &[Replay], in_run: &BTreeMap<&str, f64>, focus: &str, res: &Results) -> Table {
    // (project, algorithm, suite) -> run -> (sum of fractions, replays)
    type PerRun<'a> = BTreeMap<&'a str, (f64, u32)>;
    let mut acc: BTreeMap<(&str, &str, &str), PerRun> = BTreeMap::new();
    for r in replays {
        let frac = if r.total == 0 { 1.0 } else { r.covered as f64 / r.total as f64 };
        let e = acc.entry((&r.project, &r.algorithm, &r.suite)).or_default().entry(&r.run_id).or_insert((0.0, 0));
        e.0 += frac;
        e.1 += 1;
    }
    let samples = |p: &str, a: &str, s: &str| -> Vec<f64> {
        acc.get(&(p, a, s)).map(|runs| runs.values().map(|(sum, n)| sum / f64::from(*n)).collect()).unwrap_or_default()
    };
    let others: Vec<&str> =
        res.algorithms.iter().map(String::as_str).filter(|a| *a != focus && acc.keys().any(|k| k.1 == *a)).collect();
    let mut cols: Vec<(String, String)> = vec![
        ("project".into(), "project".into()),
        (format!("{focus} in its run %"), format!("{focus}_run_coverage")),
        (format!("{focus} dynamic %"), format!("{focus}_dynamic")),
        (format!("{focus} static %"), format!("{focus}_static")),
        ("Â12 dynamic vs static".into(), "a12_dynamic_vs_static".into()),
        ("p".into(), "p_dynamic_vs_static".into()),
    ];
    for o in &others {
        cols.push((format!("{o} static %"), format!("{o}_static")));
    }
    let refs: Vec<(&str, &str)> = cols.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let mut t = Table::new(
        "neatest_replays",
        &format!(
            "Suites replayed on new seeds: coverage per project (each run's mean over the replay seeds is one sample), {focus}'s dynamic suites against the static replays of the same runs"
        ),
        &refs,
    );
    let mut projects: Vec<&str> = acc.keys().map(|k| k.0).collect();
    projects.dedup();
    let mut cols_mean: Vec<Vec<f64>> = vec![Vec::new(); 3 + others.len()];
    let mut a12s = Vec::new();
    for p in projects {
        let (dy, st) = (samples(p, focus, "dynamic"), samples(p, focus, "static"));
        let vals = [in_run.get(p).copied(), mean(&dy), mean(&st)];
        let mut row = vec![C::text(p)];
        for (k, v) in vals.iter().enumerate() {
            if let Some(v) = v {
                cols_mean[k].push(*v);
            }
            row.push(C::opt_pct(*v));
        }
        match compare(&dy, &st) {
            Some((a12, pv, _)) => {
                a12s.push(a12);
                row.push(C::num(a12, 2));
                row.push(C::p(pv));
            }
            None => row.extend([C::na(), C::na()]),
        }
        for (k, o) in others.iter().enumerate() {
            let m = mean(&samples(p, o, "static"));
            if let Some(m) = m {
                cols_mean[3 + k].push(m);
            }
            row.push(C::opt_pct(m));
        }
        t.push(row);
    }
    let mut row = vec![C::text("mean")];
    for v in cols_mean.iter().take(3) {
        row.push(C::opt_pct(mean(v)));
    }
    row.push(C::opt(mean(&a12s), 2));
    row.push(C::na());
    for v in cols_mean.iter().skip(3) {
        row.push(C::opt_pct(mean(v)));
    }
    t.push(row);
    t
}

/// Table 5: per project, the mutant judgements the networks failed, the originals they failed
/// (false positives), and the same judgements' mutants as the run's static suite judged them.
fn oracle_table(judged: &[Judged], static_verdicts: Option<&BTreeMap<(String, String), String>>) -> Table {
    #[derive(Default, Clone, Copy)]
    struct Count {
        mutants: u64,
        killed: u64,
        originals: u64,
        false_pos: u64,
        static_judged: u64,
        static_killed: u64,
    }
    let mut per: BTreeMap<&str, Count> = BTreeMap::new();
    for j in judged {
        let c = per.entry(&j.project).or_default();
        if j.is_original() {
            c.originals += 1;
            c.false_pos += u64::from(j.fail);
        } else {
            c.mutants += 1;
            c.killed += u64::from(j.fail);
            if let Some(v) = static_verdicts.and_then(|s| s.get(&(j.run_id.clone(), j.program.clone()))) {
                c.static_judged += 1;
                c.static_killed += u64::from(v == "killed");
            }
        }
    }
    let mut t = Table::new(
        "neatest_oracle",
        "Mutants and originals judged by the networks (a program fails when a network meets an event it has no output for or has surprising activations), beside the static suite's verdicts on the same mutants",
        &[
            ("project", "project"),
            ("mutants judged", "mutant_judgements"),
            ("killed", "killed"),
            ("killed %", "killed_share"),
            ("originals judged", "original_judgements"),
            ("false positives", "false_positives"),
            ("false positives %", "false_positive_share"),
            ("static killed %", "static_killed_share"),
            ("", "static_judged"),
        ],
    );
    let share = |a: u64, b: u64| if b == 0 { None } else { Some(a as f64 / b as f64) };
    let row = |name: &str, c: &Count| {
        vec![
            C::text(name),
            C::int(c.mutants),
            C::int(c.killed),
            C::opt_pct(share(c.killed, c.mutants)),
            C::int(c.originals),
            C::int(c.false_pos),
            C::opt_pct(share(c.false_pos, c.originals)),
            C::opt_pct(share(c.static_killed, c.static_judged)),
            C::int(c.static_judged),
        ]
    };
    let mut all = Count::default();
    for (p, c) in &per {
        t.push(row(p, c));
        all.mutants += c.mutants;
        all.killed += c.killed;
        all.originals += c.originals;
        all.false_pos += c.false_pos;
        all.static_judged += c.static_judged;
        all.static_killed += c.static_killed;
    }
    t.push(row("all", &all));
    t
}

impl Tables {
    /// The Markdown page: the tables and how they were computed.
    pub fn markdown(&self) -> String {
        let focus = &self.options.focus;
        let mut s = String::new();
        let _ = writeln!(s, "# Neatest tables\n");
        let _ = writeln!(
            s,
            "Conventions: a project's value is the mean over its finished runs (`ok` or `limit`); the `mean` row \
             is the mean over projects. Â12 is Vargha-Delaney's (A first, ties count one half); p is two-sided \
             Mann-Whitney U with the normal approximation, tie and continuity correction (scipy \
             `mannwhitneyu(method=\"asymptotic\")`); significant means p < {}.\n",
            self.options.alpha
        );
        let _ = writeln!(s, "## Coverage (the paper's Table 3)\n\n{}", self.coverage.markdown());
        let _ = writeln!(s, "{}", self.versus.markdown());
        match &self.replays {
            Some(t) => {
                let _ = writeln!(
                    s,
                    "## Replays on new seeds (the paper's Table 4)\n\nEvery finished run's suites replayed on the \
                     seeds of `clowder replay-study`: the static suite (the run's minimised event sequences) for \
                     every algorithm, and {focus}'s dynamic suite (its networks, choosing events from the game's \
                     state). \"in its run\" is the coverage the run reported.\n\n{}",
                    t.markdown()
                );
            }
            None => {
                let _ = writeln!(s, "## Replays on new seeds\n\nNot computed: no `--replays` file given.\n");
            }
        }
        match &self.oracle {
            Some(t) => {
                let _ = writeln!(
                    s,
                    "## Mutants judged by the networks (the paper's Table 5)\n\nEach {focus} run's dynamic suite \
                     judges the original and the sampled mutants on the judging seeds of `clowder judge-study`; \
                     every judgement is counted (a mutant judged on two seeds counts twice). \"static killed\" is \
                     the study's own mutation analysis of the same run's static suite on the same mutants (its \
                     regression assertions, replayed on the seed the run was generated with).\n\n{}",
                    t.markdown()
                );
            }
            None => {
                let _ = writeln!(s, "## Mutants judged by the networks\n\nNot computed: no `--judged` file given.\n");
            }
        }
        s
    }

    /// Every table present, for writing as CSV and LaTeX.
    pub fn all(&self) -> Vec<&Table> {
        let mut v = vec![&self.coverage, &self.versus];
        v.extend(self.replays.iter());
        v.extend(self.oracle.iter());
        v
    }
}
