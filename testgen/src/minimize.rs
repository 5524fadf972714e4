//! 1-minimisation of the final suite (paper §5.4, Whisker's `TestMinimizer`
//! and `getMinimizedTestSuite`).
//!
//! Targets are visited deepest first (CDG depth; leaves cover what precedes
//! them). For a target not yet covered by the minimised suite, a random test
//! covering it is minimised for it: from the last event backwards, an event
//! (with its one-step wait) is dropped if the test without it, replayed,
//! still covers the target; after each drop the scan restarts. The first event
//! is never dropped, as in Whisker. The minimised test joins the suite and
//! everything its replay covers counts as covered.
//!
//! Two things make the replays cheaper without changing any decision
//! (engine `+sem14`): a candidate without event i shares the current test's
//! first i events, so it continues from a snapshot of the VM after them (kept
//! by earlier replays where the VM did more work since the last snapshot than
//! copying costs: [`Executor::snapshot_worth`]); and a candidate's replay stops
//! once it covers the target, which it then keeps (covered stays covered). The
//! minimised test's whole trace is replayed once at the end, from a snapshot.
//!
//! Replays run outside the search budget; their steps are reported
//! separately. A cap on those steps and the run's work cap for this phase
//! (both deterministic) bound the cost on pathological suites: once either is
//! reached, the remaining tests are kept as they are (a replay the work cap cut
//! short is not used).

use std::collections::BTreeSet;
use std::rc::Rc;

use crate::events::Event;
use crate::execution::{Evaluated, Executor, Replayed, Snapshot};
use crate::rng::Rng;
use crate::work::{Kind, cost};

/// Replay steps after which minimisation stops shortening tests.
pub const REPLAY_STEP_CAP: u64 = 2_000_000;

/// The minimised suite of `tests`.
pub fn minimize_suite(exec: &mut Executor<'_>, rng: &mut Rng, tests: &[Rc<Evaluated>]) -> Vec<Vec<Event>> {
    let n = exec.ctx().model.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&t| std::cmp::Reverse(exec.ctx().model.depth(t)));
    let mut covered: BTreeSet<usize> = BTreeSet::new();
    let mut suite = Vec::new();
    for t in order {
        if covered.contains(&t) {
            continue;
        }
        exec.charge(Kind::Search, cost::TARGET.saturating_mul(tests.len() as u64));
        let covering: Vec<&Rc<Evaluated>> = tests.iter().filter(|e| e.fitness[t] == 0.0).collect();
        if covering.is_empty() {
            continue;
        }
        let pick = covering[rng.below(covering.len())];
        let (events, trace) = minimize_test(exec, t, &pick.events, &pick.trace);
        exec.charge_targets(1);
        for u in 0..n {
            if exec.ctx().model.covers(u, &trace) {
                covered.insert(u);
            }
        }
        // A test whose replay lost the target (cannot happen with a
        // deterministic VM) still covers it in its recorded trace.
        covered.insert(t);
        suite.push(events);
    }
    suite
}

fn minimize_test(
    exec: &mut Executor<'_>,
    t: usize,
    events: &[Event],
    trace: &crate::trace::Trace,
) -> (Vec<Event>, crate::trace::Trace) {
    let mut cur = events.to_vec();
    // Cur's trace, once a replay ran it to the end (a replay that kept a candidate stopped
    // when the candidate covered the target: the rest of it cannot change that).
    let mut cur_trace = Some(trace.clone());
    let mut old = exec.fitness_of(t, trace);
    // snaps[k]: the VM after the first k events of `cur`, where a replay kept one. A candidate
    // without event i shares cur's first i events, so its replay continues from the last
    // snapshot at or before i (same trace as a replay from the start, less work).
    let mut snaps: Vec<Option<Snapshot>> = Vec::new();
    let mut changed = true;
    while changed && exec.replay_steps < REPLAY_STEP_CAP && !exec.work_capped() {
        changed = false;
        for i in (1..cur.len()).rev() {
            if exec.replay_steps >= REPLAY_STEP_CAP || exec.work_capped() {
                break;
            }
            let mut cand = cur.clone();
            cand.remove(i);
            // The test covers `t` (fitness 0), so a candidate is kept exactly when it covers
            // `t` too: its replay may stop there.
            let until = (old == 0.0).then_some(t);
            let r = replay_after(exec, &snaps, i, &cand, until);
            if exec.work_capped() {
                // Possibly cut short: its trace says nothing about the candidate.
                break;
            }
            // Covered: fitness 0.
            let f = if r.stopped { 0.0 } else { exec.fitness_of(t, &r.trace) };
            let accept = f <= old;
            if accept {
                // Snapshots after more than i events were of cur's later events.
                snaps.truncate(i + 1);
            }
            for (p, s) in r.kept {
                // Up to i events the candidate and cur agree; beyond, only an accepted candidate.
                if p <= i || accept {
                    if snaps.len() <= p {
                        snaps.resize_with(p + 1, || None);
                    }
                    snaps[p].get_or_insert(s);
                }
            }
            if accept {
                cur = cand;
                old = f;
                cur_trace = (!r.stopped).then_some(r.trace);
                changed = true;
                break;
            }
        }
    }
    let trace = match cur_trace {
        Some(tr) => tr,
        // The whole trace of the minimised test (what it covers besides `t`); if the work cap
        // cuts this replay short, the part it ran (which covers `t`).
        None => replay_after(exec, &snaps, cur.len(), &cur, None).trace,
    };
    (cur, trace)
}

/// Replays `events` (which begin with cur's first `upto` events) from the last snapshot in
/// `snaps` at or before `upto`, or from the start.
fn replay_after(
    exec: &mut Executor<'_>,
    snaps: &[Option<Snapshot>],
    upto: usize,
    events: &[Event],
    until: Option<usize>,
) -> Replayed {
    let from = snaps.iter().enumerate().take(upto + 1).rev().find_map(|(k, s)| s.as_ref().map(|s| (k, s)));
    match from {
        Some((k, s)) => {
            let mut r = exec.replay_from(Some(s), events.get(k..).unwrap_or_default(), until);
            r.kept.iter_mut().for_each(|(j, _)| *j += k);
            r
        }
        None => exec.replay_from(None, events, until),
    }
}
