//! Benchmark: exact sequence coverage of a suite of 1 000 tests × 100 events over an
//! alphabet of 50 symbols (deterministic random suite), per criterion and strength, with
//! the sparse representation (used for large alphabets) side by side.
//!
//! `cargo bench -p clowder-testgen --bench sequence` (release profile).
//! Environment: `BENCH_TESTS` (default 1000), `BENCH_EVENTS` (default 100),
//! `BENCH_SYMBOLS` (default 50), `BENCH_REPS` (default 21; the median is printed; the
//! sparse sets, much slower at this size, run once).

use std::time::Instant;

use clowder_testgen::events::Event;
use clowder_testgen::rng::Rng;
use clowder_testgen::sequence::{Alphabet, Criterion, SequenceCounter, Strength, suite_coverage};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// Median wall time of `reps` calls of `f`, in milliseconds; `f` returns a number that
/// is printed so the work cannot be optimised away.
fn median_ms(reps: usize, mut f: impl FnMut() -> u64) -> (f64, u64) {
    let mut times = Vec::with_capacity(reps);
    let mut out = 0;
    for _ in 0..reps.max(1) {
        let t0 = Instant::now();
        out = std::hint::black_box(f());
        times.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], out)
}

fn main() {
    let (n_tests, n_events, k, reps) =
        (env("BENCH_TESTS", 1000), env("BENCH_EVENTS", 100), env("BENCH_SYMBOLS", 50), env("BENCH_REPS", 21));
    let mut rng = Rng::new(1, 0xBE7C);
    // Events over k symbols: keys k0.., one per symbol, with random durations (dropped by
    // the abstraction).
    let suite: Vec<Vec<Event>> = (0..n_tests)
        .map(|_| {
            (0..n_events)
                .map(|_| Event::KeyPress { key: format!("k{}", rng.below(k)), steps: 1 + rng.below(4) as u32 })
                .collect()
        })
        .collect();
    let alphabet = Alphabet::from_tests(suite.iter().map(Vec::as_slice));
    let mut encoded: Vec<Vec<u32>> = Vec::with_capacity(n_tests);
    for t in &suite {
        let mut buf = Vec::new();
        alphabet.encode(t, &mut buf);
        encoded.push(buf);
    }
    println!("{n_tests} tests × {n_events} events, |Σ| = {}, median of {reps} runs", alphabet.len());
    let k = alphabet.len();
    let run = |c: SequenceCounter| -> u64 {
        let mut c = c;
        for t in &encoded {
            c.add(t);
        }
        c.covered()
    };
    let mut dense_kh3 = 0.0;
    for (name, c, s) in [
        ("Kuhn–Higdon t=3", Criterion::KuhnHigdon, Strength::Three),
        ("Kuhn–Higdon t=2", Criterion::KuhnHigdon, Strength::Two),
        ("windows     t=3", Criterion::Window, Strength::Three),
        ("windows     t=2", Criterion::Window, Strength::Two),
    ] {
        let (ms, covered) = median_ms(reps, || run(SequenceCounter::new(c, k, s)));
        let (sparse_ms, sparse_covered) = median_ms(1, || run(SequenceCounter::new_sparse(c, k, s)));
        assert_eq!(covered, sparse_covered, "{name}: dense and sparse disagree");
        let total = SequenceCounter::new(c, k, s).total();
        if c == Criterion::KuhnHigdon && s == Strength::Three {
            dense_kh3 = ms;
        }
        println!(
            "{name}: {ms:8.3} ms (covered {covered} of {total}); sparse sets {sparse_ms:8.3} ms ({:.1}× the bitsets)",
            sparse_ms / ms
        );
    }
    let (ms, covered) = median_ms(reps, || {
        let a = Alphabet::from_tests(suite.iter().map(Vec::as_slice));
        let c = suite_coverage(&a, suite.iter().map(Vec::as_slice));
        c.kh2.covered + c.kh3.covered + c.win2.covered + c.win3.covered
    });
    println!(
        "all four from events (alphabet, encoding, K–H and windows t=2,3): {ms:8.3} ms ({covered} items; {:.2}× K–H t=3 alone)",
        ms / dense_kh3
    );
}
