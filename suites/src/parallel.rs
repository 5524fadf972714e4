//! Work spread over threads with results in input order: the output never depends on the
//! number of threads. (A JavaScript runtime is bound to its thread, so each item makes its
//! own on the thread that takes it.)

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` over `items` on `workers` threads; the results in the order of `items`.
pub fn map<T: Sync, R: Send>(items: &[T], workers: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = workers.clamp(1, items.len().max(1));
    if workers == 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    if let Ok(mut slots) = slots.lock() {
                        slots[i] = Some(r);
                    }
                }
            });
        }
    });
    slots.into_inner().unwrap_or_default().into_iter().flatten().collect()
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
}
