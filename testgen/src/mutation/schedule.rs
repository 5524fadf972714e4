//! The order in which mutants are judged, on one thread or several, and the analysis' work
//! cap: judging stops once the work so far reaches the cap, at the same mutant on every
//! machine and for any number of threads.
//!
//! Without a cap mutants are judged in enumeration order. With one they are judged in an
//! order shuffled with the run's seed, so the mutants a capped analysis reaches are a seeded
//! random subset of all of them (each operator's verdicts then stand for its stratum as a
//! sample's do, [`super::OperatorSummary::weight`]), not the first blocks of the project. A
//! mutant is judged when the work before it (the baseline's and the mutants' judged before
//! it in that order) is below the cap; the rest are counted as unjudged
//! ([`super::MutationReport::unjudged`]).

use super::analysis::{Baseline, MutantVerdict, Progress};
use super::operators::Mutant;
use crate::rng::Rng;
use crate::work::Meter;

/// A mutant's verdict, the steps and the work of judging it.
pub(super) type Judged = (MutantVerdict, u64, Meter);

/// Judges `chosen` on up to `workers` threads and returns, in `chosen`'s order, the verdicts
/// of the mutants judged before `cap` (work units, counting from `spent`) was reached.
pub(super) fn judge_all(
    baseline: &Baseline<'_, '_>,
    chosen: &[Mutant],
    cap: Option<u64>,
    spent: u64,
    seed: u64,
    workers: usize,
    progress: &mut dyn FnMut(&Progress),
) -> Vec<Judged> {
    let order = judging_order(chosen.len(), cap.is_some(), seed);
    let mut judged = if workers.clamp(1, chosen.len().max(1)) == 1 {
        in_order(baseline, chosen, &order, cap, spent, progress)
    } else {
        in_parallel(baseline, chosen, &order, cap, spent, workers, progress)
    };
    judged.sort_unstable_by_key(|(i, _)| *i);
    judged.into_iter().map(|(_, j)| j).collect()
}

/// Enumeration order, or (with a cap) a permutation drawn from the run's seed.
fn judging_order(n: usize, shuffled: bool, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    if shuffled {
        let mut rng = Rng::new(seed, 0x4D55_5443); // "MUTC": a stream of its own
        for i in (1..n).rev() {
            order.swap(i, rng.below(i + 1));
        }
    }
    order
}

fn in_order(
    baseline: &Baseline<'_, '_>,
    chosen: &[Mutant],
    order: &[usize],
    cap: Option<u64>,
    mut spent: u64,
    progress: &mut dyn FnMut(&Progress),
) -> Vec<(usize, Judged)> {
    let mut out = Vec::with_capacity(order.len());
    for &i in order {
        let Some(m) = chosen.get(i) else { continue };
        if cap.is_some_and(|c| spent >= c) {
            break;
        }
        let j = baseline.judge_metered(m);
        spent = spent.saturating_add(j.2.total());
        progress(&Progress::Judged { done: out.len() + 1, verdict: &j.0, work: j.2.total() });
        out.push((i, j));
    }
    out
}

/// Threads take the next position of `order`; the verdicts are taken up in that order, so the
/// cap falls where [`in_order`] puts it. A thread busy on a mutant past the cap when it is
/// reached finishes it, and that verdict is dropped.
fn in_parallel(
    baseline: &Baseline<'_, '_>,
    chosen: &[Mutant],
    order: &[usize],
    cap: Option<u64>,
    mut spent: u64,
    workers: usize,
    progress: &mut dyn FnMut(&Progress),
) -> Vec<(usize, Judged)> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let mut slots: Vec<Option<Judged>> = vec![None; order.len()];
    let mut taken = 0usize; // positions of `order` taken up, in order
    let mut cut = order.len();
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..workers.clamp(1, order.len().max(1)) {
            let tx = tx.clone();
            let (next, stop) = (&next, &stop);
            scope.spawn(move || {
                while !stop.load(Relaxed) {
                    let p = next.fetch_add(1, Relaxed);
                    let Some(m) = order.get(p).and_then(|&i| chosen.get(i)) else { break };
                    if tx.send((p, baseline.judge_metered(m))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (done, (p, j)) in rx.into_iter().enumerate() {
            progress(&Progress::Judged { done: done + 1, verdict: &j.0, work: j.2.total() });
            if let Some(slot) = slots.get_mut(p) {
                *slot = Some(j);
            }
            while cut == order.len() {
                let Some(Some(j)) = slots.get(taken) else { break };
                if cap.is_some_and(|c| spent >= c) {
                    cut = taken;
                    stop.store(true, Relaxed);
                    break;
                }
                spent = spent.saturating_add(j.2.total());
                taken += 1;
            }
        }
    });
    // Every position below `cut` was taken by exactly one thread (none stops before the cap
    // is found) and sent back.
    order.iter().zip(slots).take(cut).filter_map(|(&i, j)| j.map(|j| (i, j))).collect()
}

#[cfg(test)]
mod tests {
    use super::judging_order;

    #[test]
    fn the_capped_order_is_a_seeded_permutation_and_the_uncapped_one_enumeration_order() {
        assert_eq!(judging_order(5, false, 9), vec![0, 1, 2, 3, 4]);
        let a = judging_order(200, true, 9);
        assert_eq!(a, judging_order(200, true, 9), "same seed, same order");
        assert_ne!(a, judging_order(200, true, 10), "another seed, another order");
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..200).collect::<Vec<_>>(), "a permutation");
        assert_ne!(a, sorted, "shuffled");
    }
}
