//! Running a suite with assertions on mutants (Whisker paper RQ4).
//!
//! * Every test replays from a fresh VM seeded with the run's seed, on the
//!   original and on each mutant alike, with the same event semantics as the
//!   search ([`Executor::replay_observed`]).
//! * A test that fails on the unmodified project is a false positive: it is
//!   excluded from the analysis and counted ([`MutationReport::excluded_tests`]).
//!   When the suite has tests but all of them are excluded, no mutant can be
//!   judged and every mutant's verdict is `excluded`. (With a deterministic VM
//!   a test always passes where its assertions were recorded, so exclusions
//!   only appear when a suite is replayed under other conditions.)
//! * A mutant is **killed** when some remaining test fails on it (an assertion
//!   is violated after some event). Tests run in suite order and the analysis
//!   of a mutant stops at its first killing test.
//! * **Timeout**: a mutant replay may take at most as many steps as the
//!   original test took (it cannot take more by construction: events fix the
//!   step count), and no step may run away: a step that exceeds the VM's
//!   operation budget ([`clowder_vm::StepOutcome::Hang`]) more often than in
//!   the original test ends that test's replay, and so does VM work beyond
//!   [`WORK_FACTOR`] times the original's plus [`WORK_SLACK`] (checked before
//!   every step: a mutant that turns a cheap loop into collision checks on
//!   every frame ends at the same point on every machine). A mutant that is
//!   not killed by any test but ran away in one is a `timeout`. Runaways never
//!   hang the analysis.
//! * Otherwise the mutant **survived**. A suite without tests kills nothing.
//! * **Unreached mutants are not replayed.** Until a thread first executes an edited
//!   block, a mutant's run is the original's, step for step. So a test whose replay on
//!   the original never executed the statement holding the edited block (nor the
//!   statements and C blocks around it, see [`reaches`]) passes on the mutant exactly as
//!   on the original: it is counted with the original's steps and not run. KRM mutants
//!   are always replayed (the edited hat fires on another key). An edge-activated hat
//!   (`when timer > …`) is executed, and marked, on every step its input is evaluated,
//!   fired or not, as scratch-vm runs it in a thread of its own. A step cut short by the
//!   operation budget changes nothing here: a command is marked before its inputs are
//!   evaluated, the mutant's run is cut at the same operation as the original's until the
//!   edit is evaluated, and a hat started in that step but never run is stopped in both
//!   alike. Verdicts, steps and digests are the same as with every
//!   replay run (checked on real projects whose tests hang, `testgen/tests/
//!   mutation_corpora.rs`); only the time differs.
//! * Score = killed / (generated − excluded), overall and per operator
//!   (`None` when nothing can be judged); timeouts count in the denominator,
//!   not as killed.

use std::sync::Arc;

use clowder_vm::project::{BlockIdx, Input, Project};
use serde::{Deserialize, Serialize};

use super::operators::{Edit, Mutant, Operator};
use super::{MutationMode, mutate, select};
use crate::assertions;
use crate::config::{Budget, Params};
use crate::events::EventInfo;
use crate::execution::{Executor, RunCtx};
use crate::fitness::FitnessModel;
use crate::result::{Test, TimelinePoint};
use crate::work::{Kind, Meter, cost};

/// The verdict of one mutant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// A test that passes on the original fails on the mutant.
    Killed,
    /// Every test passes on the mutant.
    Survived,
    /// Not killed, and some test's replay ran away (step or operation limit).
    Timeout,
    /// Cannot be judged: every test fails on the original already.
    Excluded,
}

impl Verdict {
    /// `killed`, `survived`, `timeout` or `excluded` (the export's spelling).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Killed => "killed",
            Verdict::Survived => "survived",
            Verdict::Timeout => "timeout",
            Verdict::Excluded => "excluded",
        }
    }
}

/// One row of the verdict table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MutantVerdict {
    /// Mutant id (`AOR-000003`).
    pub mutant_id: String,
    /// Operator.
    pub operator: Operator,
    /// `<block id>-<sprite>`.
    pub block_id: String,
    /// What the mutant changes.
    pub detail: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Index of the killing test in the suite (killed mutants only).
    pub test: Option<u32>,
    /// Number of the event after which an assertion failed (1-based; killed only).
    pub event: Option<u32>,
}

/// Counts of one operator (or of all).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OperatorSummary {
    /// Operator (`None` in the overall line).
    pub operator: Option<Operator>,
    /// Mutants the project has (for this operator), analysed or not: with a sample, each
    /// analysed mutant stands for `enumerated / generated` of them.
    #[serde(default)]
    pub enumerated: u32,
    /// Mutants analysed.
    pub generated: u32,
    /// Killed.
    pub killed: u32,
    /// Survived.
    pub survived: u32,
    /// Timed out.
    pub timeout: u32,
    /// Excluded.
    pub excluded: u32,
}

impl OperatorSummary {
    /// How many of the project's mutants each analysed one stands for: enumerated / analysed
    /// (1 when every mutant was analysed; the weight of a stratified sample's verdicts).
    pub fn weight(&self) -> f64 {
        if self.generated == 0 {
            1.0
        } else {
            f64::from(self.enumerated.max(self.generated)) / f64::from(self.generated)
        }
    }

    /// killed / (generated − excluded); `None` when no mutant can be judged.
    pub fn score(&self) -> Option<f64> {
        let judged = self.generated - self.excluded;
        (judged > 0).then(|| f64::from(self.killed) / f64::from(judged))
    }

    fn add(&mut self, v: Verdict) {
        self.generated += 1;
        match v {
            Verdict::Killed => self.killed += 1,
            Verdict::Survived => self.survived += 1,
            Verdict::Timeout => self.timeout += 1,
            Verdict::Excluded => self.excluded += 1,
        }
    }
}

/// The result of the mutation analysis of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MutationReport {
    /// The mode (`on`, `sample:N`).
    pub mode: String,
    /// Mutants the project has (all operators, before sampling).
    pub enumerated: u32,
    /// Tests of the suite that fail on the original (excluded).
    pub excluded_tests: u32,
    /// Overall counts (`operator` is `None`).
    pub total: OperatorSummary,
    /// Counts per operator, in Table 5 order (operators without mutants included).
    pub per_operator: Vec<OperatorSummary>,
    /// One verdict per analysed mutant, in enumeration order.
    pub verdicts: Vec<MutantVerdict>,
    /// VM steps replayed by the analysis (original and mutants).
    pub steps: u64,
    /// Mutants the analysis' work cap left unjudged (not in `verdicts` nor in the counts).
    /// Left out of the serialised report when 0, so uncapped reports (and digests) are as
    /// before the cap existed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unjudged: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl MutationReport {
    /// Mutants of operator `op` the project has (the stratum its sampled verdicts stand for).
    pub fn stratum_size(&self, op: Operator) -> u32 {
        self.per_operator.iter().find(|s| s.operator == Some(op)).map_or(0, |s| s.enumerated)
    }

    /// Overall mutation score: killed / (generated − excluded).
    pub fn score(&self) -> Option<f64> {
        self.total.score()
    }

    /// The run digest extended with the verdicts (equal digests: equal runs
    /// including their mutation analysis).
    pub fn extend_digest(&self, digest: &str) -> String {
        let mut h = blake3::Hasher::new();
        h.update(b"clowder-digest-mutation-v1\0");
        h.update(digest.as_bytes());
        h.update(b"\0");
        h.update(serde_json::to_string(self).unwrap_or_default().as_bytes());
        h.finalize().to_hex().to_string()
    }
}

/// What one test of a suite does on one mutant ([`Baseline::kill_row`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TestOutcome {
    /// An assertion fails on the mutant: the test kills it.
    Kills,
    /// Every assertion holds.
    Passes,
    /// The replay ran away (step, hang or work limit) before any assertion failed.
    RanAway,
    /// The test fails on the original project, so it judges no mutant.
    Excluded,
}

/// Every test's outcome on one mutant, in suite order, and the VM steps the replays took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KillRow {
    /// One outcome per test of the suite.
    pub outcomes: Vec<TestOutcome>,
    /// VM steps replayed on the mutant.
    pub steps: u64,
    /// Work of building the mutant and replaying the tests on it (work-meter units).
    pub work: u64,
}

/// What one replay of a test showed.
#[derive(Debug, Clone, Copy, Default)]
struct TestRun {
    /// Events sent when an assertion failed (1-based).
    failed_at: Option<usize>,
    /// The replay exceeded a limit and was stopped.
    ran_away: bool,
    /// Steps that exceeded the VM's operation budget.
    hangs: u64,
    /// VM work (block executions and geometry).
    work: u64,
    /// Steps run.
    steps: u64,
}

/// A mutant's replay of a test may do this many times the original's VM work …
pub const WORK_FACTOR: u64 = 10;
/// … plus this much.
pub const WORK_SLACK: u64 = 100_000_000;

/// Limits of a mutant replay, derived from the original's replay.
#[derive(Debug, Clone, Copy)]
struct Limits {
    steps: u64,
    hangs: u64,
    work: u64,
}

impl Limits {
    fn work_bound(&self) -> u64 {
        self.work.saturating_mul(WORK_FACTOR).saturating_add(WORK_SLACK)
    }
}

/// Replays `test`; with `executed`, also keeps the VM's executed-block bits at the end.
fn run_test(
    exec: &mut Executor<'_>,
    test: &Test,
    limits: Option<Limits>,
    mut executed: Option<&mut Vec<u64>>,
) -> TestRun {
    let mut run = TestRun::default();
    let bound = limits.map(|l| l.work_bound());
    exec.cap_work("mutant replay", bound.map(|b| exec.work().saturating_add(b)));
    let mut units = 0u64;
    let steps = exec.replay_observed(&test.events, &mut |k, sut| {
        run.hangs = sut.hangs();
        run.work = sut.work();
        if let Some(bits) = executed.as_deref_mut() {
            bits.clear();
            bits.extend_from_slice(sut.executed_bits());
        }
        if let Some(l) = limits
            && (sut.hangs() > l.hangs || sut.vm().steps() > l.steps || bound.is_some_and(|b| sut.work() >= b))
        {
            run.ran_away = true;
            return false;
        }
        if k > 0
            && let Some(list) = test.assertions.get(k - 1)
            && assertions::first_failure(list, sut, &mut units).is_some()
        {
            run.failed_at = Some(k);
            return false;
        }
        true
    });
    exec.charge(Kind::Observe, units);
    run.steps = steps;
    run
}

/// What a run provides to the analysis: the project and the run's static data.
pub struct Subject<'a> {
    /// The original project.
    pub project: Arc<Project>,
    /// Its fitness model (only needed to build executors; not evaluated).
    pub model: &'a FitnessModel,
    /// Its event information (not used by replays; needed to build executors).
    pub info: &'a EventInfo,
    /// The run's parameters.
    pub params: &'a Params,
    /// The run's seed (every replay's VM seed, and the sampling seed).
    pub seed: u64,
}

impl Subject<'_> {
    fn executor<'s>(&'s self, project: Arc<Project>, sink: &'s mut dyn FnMut(&TimelinePoint)) -> Executor<'s> {
        let ctx = RunCtx { project, model: self.model, info: self.info, params: self.params, vm_seed: self.seed };
        let mut exec = Executor::new(ctx, Budget::Executions(1), sink);
        // Replays only observe states: no branch distances, no coverage.
        exec.observe_only();
        exec
    }
}

/// A suite replayed on the original program: which tests are valid (pass on
/// the original) and each one's limits. Judges mutants one at a time, so the
/// analysis of many mutants keeps only one mutant program alive at a time.
pub struct Baseline<'s, 'a> {
    subject: &'s Subject<'a>,
    suite: &'s [Test],
    valid: Vec<Valid>,
    /// Whether tests that never reach a mutant's edit are skipped (module docs).
    skip_unreached: bool,
    /// Steps the replays on the original took.
    pub steps: u64,
    /// Work of the replays on the original (work-meter units).
    pub work: Meter,
}

impl<'s, 'a> Baseline<'s, 'a> {
    /// Replays `suite` on `subject`'s original project.
    pub fn new(subject: &'s Subject<'a>, suite: &'s [Test]) -> Self {
        Self::with_skipping(subject, suite, true)
    }

    /// As [`Baseline::new`], but every mutant replays every test, reached or not: the
    /// reference that the skipping of unreached tests is checked against.
    pub fn exhaustive(subject: &'s Subject<'a>, suite: &'s [Test]) -> Self {
        Self::with_skipping(subject, suite, false)
    }

    fn with_skipping(subject: &'s Subject<'a>, suite: &'s [Test], skip_unreached: bool) -> Self {
        let mut sink = |_: &TimelinePoint| {};
        let mut exec = subject.executor(Arc::clone(&subject.project), &mut sink);
        let originals: Vec<(TestRun, Vec<u64>)> = suite
            .iter()
            .map(|t| {
                let mut bits = Vec::new();
                let r = run_test(&mut exec, t, None, Some(&mut bits));
                (r, bits)
            })
            .collect();
        let work = *exec.meter();
        drop(exec);
        let steps = originals.iter().map(|(r, _)| r.steps).sum::<u64>();
        let valid = originals
            .into_iter()
            .enumerate()
            .filter(|(_, (r, _))| r.failed_at.is_none())
            .map(|(test, (r, executed))| Valid {
                test,
                limits: Limits { steps: r.steps, hangs: r.hangs, work: r.work },
                executed,
            })
            .collect();
        Baseline { subject, suite, valid, skip_unreached, steps, work }
    }

    /// What judging `mutants` will replay ([`Plan`]); looks at each mutant's edit and every
    /// valid test's executed blocks, replays nothing.
    pub fn plan(&self, mutants: &[Mutant]) -> Plan {
        let per_mutant = cost::MUTANT_BLOCK.saturating_mul(self.subject.project.blocks.len() as u64);
        let mut plan = Plan { mutants: mutants.len(), baseline_work: self.work.total(), ..Plan::default() };
        for m in mutants {
            let mut reached = false;
            for v in &self.valid {
                let skipped = v.skips(&self.subject.project, &m.edit, self.skip_unreached);
                if !skipped {
                    reached = true;
                    plan.expected_work = plan.expected_work.saturating_add(v.limits.work);
                    plan.bound_work = plan.bound_work.saturating_add(v.limits.work_bound());
                }
            }
            if reached {
                plan.replayed += 1;
                plan.expected_work = plan.expected_work.saturating_add(per_mutant);
                plan.bound_work = plan.bound_work.saturating_add(per_mutant);
            }
        }
        plan
    }

    /// Valid tests whose replay on the original had a step cut short by the operation
    /// budget (a program that runs away in some frame).
    pub fn hanging_tests(&self) -> usize {
        self.valid.iter().filter(|v| v.limits.hangs > 0).count()
    }

    /// Tests of the suite that fail on the original (false positives).
    pub fn excluded_tests(&self) -> u32 {
        (self.suite.len() - self.valid.len()) as u32
    }

    /// What every test of the suite does on `m` (the kill matrix row of the mutant): unlike
    /// [`Baseline::judge`], which stops at the first killing test, every valid test is judged
    /// (a test that never reaches the edit passes without a replay, as in `judge`).
    /// Same replays, limits and kill rule as `judge`; `None` when the mutant does not fit the
    /// project (it cannot be judged).
    pub fn kill_row(&self, m: &Mutant) -> Option<KillRow> {
        let mut row = KillRow { outcomes: vec![TestOutcome::Excluded; self.suite.len()], steps: 0, work: 0 };
        let (steps, work) =
            replay_on_mutant(self.subject, self.suite, &self.valid, self.skip_unreached, m, &mut |i, r| {
                row.outcomes[i] = if r.failed_at.is_some() {
                    TestOutcome::Kills
                } else if r.ran_away {
                    TestOutcome::RanAway
                } else {
                    TestOutcome::Passes
                };
                true
            })?;
        row.steps = steps;
        row.work = work.total();
        Some(row)
    }

    /// The verdict of `m` and the VM steps its replays took.
    pub fn judge(&self, m: &Mutant) -> (MutantVerdict, u64) {
        let (row, used, _) = self.judge_metered(m);
        (row, used)
    }

    /// [`Baseline::judge`] with the work of building the mutant and its replays.
    pub fn judge_metered(&self, m: &Mutant) -> (MutantVerdict, u64, Meter) {
        let (verdict, test, event, used, work) = judge(self.subject, self.suite, &self.valid, self.skip_unreached, m);
        let row = MutantVerdict {
            mutant_id: m.id.clone(),
            operator: m.operator,
            block_id: m.block_id.clone(),
            detail: m.detail.clone(),
            verdict,
            test,
            event,
        };
        (row, used, work)
    }
}

/// Mutation analysis of `suite` (with its assertions) on `subject`'s project.
/// `None` when `mode` is off.
pub fn analyse(subject: &Subject<'_>, suite: &[Test], mode: MutationMode) -> Option<MutationReport> {
    analyse_with(subject, suite, mode, None, true, 1, &mut |_| {}).map(|(r, _)| r)
}

/// [`analyse`] with the analysis' work (work-meter units, by kind): enumerating and building
/// mutants, replays, observations. With a `cap` (work units) judging stops once the
/// analysis' work reaches it, and the mutants left are counted as unjudged
/// ([`MutationReport::unjudged`]; `super::schedule` says which ones are judged).
pub fn analyse_metered(
    subject: &Subject<'_>,
    suite: &[Test],
    mode: MutationMode,
    cap: Option<u64>,
) -> Option<(MutationReport, Meter)> {
    analyse_with(subject, suite, mode, cap, true, 1, &mut |_| {})
}

/// [`analyse_metered`] (with its `cap`) judging mutants on `workers` threads, telling `progress` the plan
/// before the first mutant and then every verdict as it comes. Report and work are those of
/// [`analyse_metered`] whatever the number of workers (verdicts are independent, kept in
/// mutant order, and work is a sum).
pub fn analyse_parallel(
    subject: &Subject<'_>,
    suite: &[Test],
    mode: MutationMode,
    cap: Option<u64>,
    workers: usize,
    progress: &mut dyn FnMut(&Progress),
) -> Option<(MutationReport, Meter)> {
    analyse_with(subject, suite, mode, cap, true, workers, progress)
}

/// [`analyse`] with every test replayed on every mutant (no skipping of unreached tests):
/// the same report, slower; the reference for checks.
pub fn analyse_exhaustive(subject: &Subject<'_>, suite: &[Test], mode: MutationMode) -> Option<MutationReport> {
    analyse_with(subject, suite, mode, None, false, 1, &mut |_| {}).map(|(r, _)| r)
}

/// What an analysis will do, known after the replays on the original and before the first
/// mutant: how many mutants need a replay at all, and the work their replays take if each
/// behaves as the original (`expected`) and at most (`bound`: every reaching test runs to
/// its per-test work limit, [`WORK_FACTOR`] × the original's + [`WORK_SLACK`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Plan {
    /// Mutants to judge.
    pub mutants: usize,
    /// Of these, the mutants that some valid test reaches: built and replayed. The others
    /// pass every test exactly as the original does (module docs) and cost nothing.
    pub replayed: usize,
    /// Work units of the replays on the original (already done).
    pub baseline_work: u64,
    /// Work units of the mutants' replays if every reaching test were replayed to its end
    /// at the original's cost (kills end replays earlier, runaways later).
    pub expected_work: u64,
    /// Work units the mutants' replays can take at most.
    pub bound_work: u64,
}

/// What [`analyse_parallel`] reports while it runs.
#[derive(Debug, Clone, Copy)]
pub enum Progress<'v> {
    /// The plan, before the first mutant.
    Plan(Plan),
    /// One more verdict (`done` of the plan's mutants so far, in completion order), with the
    /// work of its replays.
    Judged {
        /// Verdicts so far.
        done: usize,
        /// This one.
        verdict: &'v MutantVerdict,
        /// Work units of building and replaying the mutant.
        work: u64,
    },
}

fn analyse_with(
    subject: &Subject<'_>,
    suite: &[Test],
    mode: MutationMode,
    cap: Option<u64>,
    skip_unreached: bool,
    workers: usize,
    progress: &mut dyn FnMut(&Progress),
) -> Option<(MutationReport, Meter)> {
    if mode == MutationMode::Off {
        return None;
    }
    let all = super::enumerate(&subject.project);
    let chosen = select(&all, mode, subject.seed);
    let mut meter = Meter::default();
    // Enumeration looks at every block once.
    meter.add(Kind::Mutants, cost::TARGET.saturating_mul(subject.project.blocks.len() as u64));

    // The original: false positives and the per-test limits.
    let baseline = Baseline::with_skipping(subject, suite, skip_unreached);
    let mut steps = baseline.steps;
    meter.absorb(&baseline.work);
    let excluded_tests = baseline.excluded_tests();
    progress(&Progress::Plan(baseline.plan(&chosen)));

    let mut verdicts = Vec::with_capacity(chosen.len());
    let judged = super::schedule::judge_all(&baseline, &chosen, cap, meter.total(), subject.seed, workers, progress);
    let unjudged = (chosen.len() - judged.len()) as u32;
    for (row, used, work) in judged {
        steps += used;
        meter.absorb(&work);
        verdicts.push(row);
    }

    let mut total = OperatorSummary { enumerated: all.len() as u32, ..Default::default() };
    let mut per_operator: Vec<OperatorSummary> = Operator::ALL
        .iter()
        .map(|&o| OperatorSummary {
            operator: Some(o),
            enumerated: all.iter().filter(|m| m.operator == o).count() as u32,
            ..Default::default()
        })
        .collect();
    for v in &verdicts {
        total.add(v.verdict);
        if let Some(s) = per_operator.iter_mut().find(|s| s.operator == Some(v.operator)) {
            s.add(v.verdict);
        }
    }
    let report = MutationReport {
        mode: mode.as_string(),
        enumerated: all.len() as u32,
        excluded_tests,
        total,
        per_operator,
        verdicts,
        steps,
        unjudged,
    };
    Some((report, meter))
}

/// A test that passes on the original, with what its original replay showed.
struct Valid {
    /// Index in the suite.
    test: usize,
    /// The mutant replay's limits.
    limits: Limits,
    /// Executed-block bits at the end of the original replay.
    executed: Vec<u64>,
}

impl Valid {
    /// Whether a mutant with `edit` may skip this test's replay: skipping is on and the
    /// original's replay never reached the edit (module docs).
    fn skips(&self, project: &Project, edit: &Edit, skip_unreached: bool) -> bool {
        skip_unreached && !reaches(project, edit, &self.executed)
    }
}

/// Whether a replay that executed the blocks in `executed` may have evaluated `edit`'s
/// block. Only commands are marked executed, and a command evaluates its inputs only when
/// it executes: so the edited block is reached only if the first command at or above it
/// executed, where "above" follows reporter nesting up to the command holding it. A C
/// block's substack starts a command of its own, and a stack's next block too. Errs towards
/// `true` (replay) on anything unexpected, and always for KRM (another key fires the hat).
fn reaches(project: &Project, edit: &Edit, executed: &[u64]) -> bool {
    let marked = |b: BlockIdx| executed.get(b as usize / 64).is_some_and(|w| w & (1u64 << (b % 64)) != 0);
    if matches!(edit, Edit::SetKey { .. }) {
        return true;
    }
    let mut x = edit.block();
    // Reporter nesting is bounded by the project's block count (the loader rejects cycles;
    // the bound keeps a malformed chain from looping).
    for _ in 0..=project.blocks.len() {
        if marked(x) {
            return true;
        }
        // A reporter held in two slots may be reached through either holder; its parent is
        // only the first one.
        if project.shared.binary_search(&x).is_ok() {
            return true;
        }
        let Some(block) = project.blocks.get(x as usize) else { return true };
        let Some(p) = block.parent else { return false };
        let Some(parent) = project.blocks.get(p as usize) else { return true };
        if parent.next == Some(x) {
            return false; // x is a command in a stack
        }
        let slot = parent.inputs.iter().find(|(_, i)| *i == Input::Block(x)).map(|(n, _)| n.as_str());
        match slot {
            Some(n) if n.starts_with("SUBSTACK") => return false, // x starts a substack
            Some(_) => x = p,                                     // x is a reporter in p
            None => return true,
        }
    }
    true
}

/// The verdict of one mutant, the killing test and event, and the steps used.
fn judge(
    subject: &Subject<'_>,
    suite: &[Test],
    valid: &[Valid],
    skip_unreached: bool,
    m: &Mutant,
) -> (Verdict, Option<u32>, Option<u32>, u64, Meter) {
    if suite.is_empty() {
        return (Verdict::Survived, None, None, 0, Meter::default());
    }
    if valid.is_empty() {
        return (Verdict::Excluded, None, None, 0, Meter::default());
    }
    let mut killer = None;
    let mut ran_away = false;
    let Some((used, work)) = replay_on_mutant(subject, suite, valid, skip_unreached, m, &mut |i, r| {
        if let Some(k) = r.failed_at {
            killer = Some((i as u32, k as u32));
            return false;
        }
        ran_away |= r.ran_away;
        true
    }) else {
        // Enumerated from this very project, so every edit fits; a misfit would
        // be a bug, and "cannot be judged" is the honest verdict for it.
        return (Verdict::Excluded, None, None, 0, Meter::default());
    };
    match killer {
        Some((i, k)) => (Verdict::Killed, Some(i), Some(k), used, work),
        None => (if ran_away { Verdict::Timeout } else { Verdict::Survived }, None, None, used, work),
    }
}

/// Replays the valid tests of `suite` in order on the mutant `m`, passing each test's index and
/// replay to `each` until it returns false; the steps used and the work of building the mutant
/// and replaying, or `None` when the mutant does not fit the project.
fn replay_on_mutant(
    subject: &Subject<'_>,
    suite: &[Test],
    valid: &[Valid],
    skip_unreached: bool,
    m: &Mutant,
    each: &mut dyn FnMut(usize, &TestRun) -> bool,
) -> Option<(u64, Meter)> {
    let unreached = |v: &Valid| v.skips(&subject.project, &m.edit, skip_unreached);
    if valid.iter().all(unreached) {
        // No test reaches the edit: every replay would be the original's (module docs), so the
        // mutant is not even built (most mutants of a large, little-covered project). The
        // mutants are enumerated from this project, so each fits it.
        let mut used = 0;
        for v in valid {
            let r = TestRun { steps: v.limits.steps, ..TestRun::default() };
            used += r.steps;
            if !each(v.test, &r) {
                break;
            }
        }
        return Some((used, Meter::default()));
    }
    let program = mutate(&subject.project, m).ok()?;
    let mut sink = |_: &TimelinePoint| {};
    let blocks = program.blocks.len() as u64;
    let mut exec = subject.executor(Arc::new(program), &mut sink);
    // The copy of the project and the compilation of its program for the mutant's VMs.
    exec.charge(Kind::Mutants, cost::MUTANT_BLOCK.saturating_mul(blocks));
    let mut used = 0;
    for v in valid {
        let (i, limits) = (v.test, v.limits);
        let r = if unreached(v) {
            // Unreached: the replay would be the original's, which passed (module docs).
            TestRun { steps: limits.steps, ..TestRun::default() }
        } else {
            run_test(&mut exec, &suite[i], Some(limits), None)
        };
        used += r.steps;
        if !each(i, &r) {
            break;
        }
    }
    Some((used, *exec.meter()))
}

#[cfg(test)]
mod tests {
    use clowder_vm::project::BlockIdx;
    use serde_json::json;

    use super::{Edit, reaches};
    use crate::testkit::{Arg, ProjectBuilder};

    /// Cat: `when flag clicked: if <score > 5> then [change x by (1 + 2)] else [move 10]`
    /// and `when b key pressed: change x by (3 * 4)`.
    #[test]
    fn an_edit_is_reached_only_through_the_command_holding_it() {
        let mut p = ProjectBuilder::new();
        p.global_var("score");
        let c = p.sprite("Cat");
        let t = p.t(c);
        let score = t.var("score");
        let gt = t.gt(Arg::b(&score), Arg::n(5.0));
        let add = t.block("operator_add", json!({"NUM1": [1, [4, "1"]], "NUM2": [1, [4, "2"]]}), json!({}));
        let then = t.change_x(Arg::b(&add));
        let els = t.move_steps(10.0);
        let branch = t.if_else(&gt, std::slice::from_ref(&then), std::slice::from_ref(&els));
        let flag = t.when_flag();
        t.script(flag.clone(), std::slice::from_ref(&branch));
        let mul = t.block("operator_multiply", json!({"NUM1": [1, [4, "3"]], "NUM2": [1, [4, "4"]]}), json!({}));
        let unreached = t.change_x(Arg::b(&mul));
        let key = t.when_key("b");
        t.script(key.clone(), std::slice::from_ref(&unreached));
        let project = p.load();
        let idx = |id: &str| project.blocks.iter().position(|b| b.id == id).expect("block") as BlockIdx;

        // The green-flag script ran and took the else branch.
        let mut executed = vec![0u64; project.blocks.len().div_ceil(64)];
        for id in [&flag, &branch, &els] {
            let b = idx(id);
            executed[b as usize / 64] |= 1 << (b % 64);
        }
        let op = |id: &str| Edit::SetOpcode { block: idx(id), opcode: "operator_subtract".into() };
        let reached = |e: Edit| reaches(&project, &e, &executed);

        assert!(reached(Edit::SetOpcode { block: idx(&gt), opcode: "operator_lt".into() }), "condition of a run if");
        assert!(reached(Edit::Negate { block: idx(&gt) }));
        assert!(!reached(op(&add)), "reporter in the branch not taken");
        assert!(!reached(Edit::DeleteBlock { block: idx(&then) }), "first command of a substack not taken");
        assert!(reached(Edit::DeleteBlock { block: idx(&els) }));
        assert!(!reached(op(&mul)), "reporter in a script whose hat never fired");
        assert!(!reached(Edit::DeleteScript { block: idx(&key) }));
        assert!(reached(Edit::DeleteScript { block: idx(&flag) }));
        // KRM: the edited hat may fire on its new key although it never fired before.
        assert!(reached(Edit::SetKey { block: idx(&key), key: "space".into() }));
        // Nothing executed at all: nothing is reached, except through a key change.
        let none = vec![0u64; executed.len()];
        assert!(!reaches(&project, &Edit::DeleteBlock { block: idx(&els) }, &none));
        assert!(reaches(&project, &Edit::SetKey { block: idx(&key), key: "a".into() }, &none));
    }
}
