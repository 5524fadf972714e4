//! Work spread over threads with results in input order: the output never depends on the
//! number of threads. (A JavaScript runtime is bound to its thread, so each item makes its
//! own on the thread that takes it.)

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` over `items` on `workers` threads; the results in the order of `items`.
pub fn map<T: Sync, R: Send>(items: &[T], workers: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    map_with(items, workers, f, |_, _| {})
}

/// As [`map`], and `done(i, &result)` is called as each item finishes (in the order they
/// finish, one call at a time), so that a long computation can save what it has so far.
pub fn map_with<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    f: impl Fn(&T) -> R + Sync,
    mut done: impl FnMut(usize, &R) + Send,
) -> Vec<R> {
    let workers = workers.clamp(1, items.len().max(1));
    if workers == 1 {
        return items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let r = f(item);
                done(i, &r);
                r
            })
            .collect();
    }
    let next = AtomicUsize::new(0);
    let slots: Mutex<(Vec<Option<R>>, _)> = Mutex::new(((0..items.len()).map(|_| None).collect(), &mut done));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    if let Ok(mut guard) = slots.lock() {
                        let (slots, done) = &mut *guard;
                        done(i, &r);
                        slots[i] = Some(r);
                    }
                }
            });
        }
    });
    slots.into_inner().map(|(slots, _)| slots).unwrap_or_default().into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_keep_the_input_order_for_any_thread_count() {
        let items: Vec<u64> = (0..50).collect();
        let one = super::map(&items, 1, |x| x * x);
        let four = super::map(&items, 4, |x| x * x);
        assert_eq!(one, four);
        assert_eq!(four[7], 49);
    }

    #[test]
    fn every_item_is_reported_once_as_it_finishes() {
        let items: Vec<u64> = (0..50).collect();
        for workers in [1, 4] {
            let mut seen = Vec::new();
            let out = super::map_with(&items, workers, |x| x + 1, |i, r| seen.push((i, *r)));
            seen.sort_unstable();
            let expected: Vec<(usize, u64)> = (0..50).map(|i| (i, i as u64 + 1)).collect();
            assert_eq!(seen, expected);
            assert_eq!(out, (1..=50).collect::<Vec<u64>>());
        }
    }
}
