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
//! Replays run outside the search budget; their steps are reported
//! separately. A cap on those steps and the run's work cap for this phase
//! (both deterministic) bound the cost on pathological suites: once either is
//! reached, the remaining tests are kept as they are (a replay the work cap cut
//! short is not used).

use std::collections::BTreeSet;
use std::rc::Rc;

use crate::events::Event;
use crate::execution::{Evaluated, Executor};
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
    let mut cur_trace = trace.clone();
    let mut old = exec.fitness_of(t, &cur_trace);
    let mut changed = true;
    while changed && exec.replay_steps < REPLAY_STEP_CAP && !exec.work_capped() {
        changed = false;
        for i in (1..cur.len()).rev() {
            if exec.replay_steps >= REPLAY_STEP_CAP || exec.work_capped() {
                break;
            }
            let mut cand = cur.clone();
            cand.remove(i);
            let tr = exec.replay(&cand);
            if exec.work_capped() {
                // Possibly cut short: its trace says nothing about the candidate.
                break;
            }
            let f = exec.fitness_of(t, &tr);
            if f <= old {
                cur = cand;
                cur_trace = tr;
                old = f;
                changed = true;
                break;
            }
        }
    }
    (cur, cur_trace)
}
