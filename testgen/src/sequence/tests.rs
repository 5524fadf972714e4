//! Hand-made suites for both criteria, and the fast counts against brute force.

use std::collections::BTreeSet;

use super::*;
use crate::rng::Rng;

const X: u32 = SequenceCounter::OUTSIDE;

fn wait(steps: u32) -> Event {
    Event::Wait { steps }
}

fn key(k: &str, steps: u32) -> Event {
    Event::KeyPress { key: k.into(), steps }
}

fn click(sprite: &str, clone: u32, x: f64) -> Event {
    Event::ClickSprite { sprite: sprite.into(), clone, x, y: 0.0, steps: 3 }
}

/// Covered and total of one criterion on a suite of encoded tests.
fn count(c: Criterion, k: usize, s: Strength, suite: &[&[u32]]) -> (u64, u128) {
    let mut counter = SequenceCounter::new(c, k, s);
    for t in suite {
        counter.add(t);
    }
    (counter.covered(), counter.total())
}

fn ratio(c: Criterion, k: usize, s: Strength, suite: &[&[u32]]) -> f64 {
    let mut counter = SequenceCounter::new(c, k, s);
    for t in suite {
        counter.add(t);
    }
    counter.ratio()
}

use Criterion::{KuhnHigdon as KH, Window as WIN};
use Strength::{Three, Two};

#[test]
fn symbols_abstract_numeric_parameters() {
    assert_eq!(Symbol::of(&key("space", 1)), Symbol::of(&key("space", 4)));
    assert_ne!(Symbol::of(&key("space", 1)), Symbol::of(&key("left arrow", 1)));
    // Clone number, position and duration of a click are dropped; the sprite is kept.
    assert_eq!(Symbol::of(&click("Cat", 0, 10.0)), Symbol::of(&click("Cat", 3, -50.0)));
    assert_ne!(Symbol::of(&click("Cat", 0, 0.0)), Symbol::of(&click("Dog", 0, 0.0)));
    assert_eq!(Symbol::of(&wait(1)), Symbol::of(&wait(99)));
    assert_eq!(Symbol::of(&Event::TypeNumber { number: 3 }), Symbol::of(&Event::TypeNumber { number: -240 }));
    assert_ne!(Symbol::of(&Event::TypeText { text: "a".into() }), Symbol::of(&Event::TypeText { text: "b".into() }));
    assert_ne!(Symbol::of(&Event::MouseDown { down: true }), Symbol::of(&Event::MouseDown { down: false }));
    assert_eq!(Symbol::of(&Event::MouseMove { x: 1.0, y: 2.0 }), Symbol::of(&Event::MouseMove { x: -100.0, y: 50.0 }));
    assert_ne!(Symbol::of(&Event::MouseMove { x: 1.0, y: 2.0 }), Symbol::of(&Event::MouseMoveTo { x: 1.0, y: 2.0 }));
    assert_eq!(
        Symbol::of(&Event::DragSprite { sprite: "Cat".into(), clone: 2, x: 1.0, y: 2.0 }),
        Symbol::of(&Event::DragSprite { sprite: "Cat".into(), clone: 0, x: 9.0, y: 9.0 })
    );
    assert_eq!(
        Symbol::of(&Event::Sound { volume: 10.0, steps: 1 }),
        Symbol::of(&Event::Sound { volume: 90.0, steps: 5 })
    );
    let names: Vec<String> = [
        key("space", 1),
        click("Cat", 1, 0.0),
        Event::ClickStage,
        Event::TypeText { text: "Hello".into() },
        Event::TypeNumber { number: 1 },
        Event::MouseDown { down: true },
        Event::MouseDown { down: false },
        Event::MouseMove { x: 0.0, y: 0.0 },
        Event::MouseMoveTo { x: 0.0, y: 0.0 },
        Event::DragSprite { sprite: "Dog".into(), clone: 0, x: 0.0, y: 0.0 },
        Event::Sound { volume: 1.0, steps: 1 },
        wait(3),
        Event::GreenFlag,
    ]
    .iter()
    .map(|e| Symbol::of(e).to_string())
    .collect();
    assert_eq!(
        names,
        [
            "key:space",
            "click:Cat",
            "stage",
            "text:Hello",
            "number",
            "mousedown",
            "mouseup",
            "mousemove",
            "mousemoveto",
            "drag:Dog",
            "sound",
            "wait",
            "flag"
        ]
    );
}

#[test]
fn alphabet_is_sorted_and_independent_of_insertion_order() {
    let t1 = vec![wait(5), key("space", 1), click("Cat", 0, 0.0), wait(7)];
    let t2 = vec![key("a", 2), key("space", 3)];
    let a = Alphabet::from_tests([t1.as_slice(), t2.as_slice()]);
    let b = Alphabet::from_tests([t2.as_slice(), t1.as_slice()]);
    assert_eq!(a, b);
    let names: Vec<String> = a.symbols().iter().map(ToString::to_string).collect();
    assert_eq!(names, ["key:a", "key:space", "click:Cat", "wait"]);
    assert_eq!(a.len(), 4);
    assert_eq!(a.index_of(&key("space", 9)), Some(1));
    assert_eq!(a.index_of(&Event::ClickStage), None);
    let mut buf = Vec::new();
    a.encode(&[wait(1), Event::ClickStage, key("a", 1)], &mut buf);
    assert_eq!(buf, [3, X, 0]);
    assert!(Alphabet::new().is_empty());
}

#[test]
fn kuhn_higdon_counts_ordered_distinct_subsequences() {
    // a b c: pairs ab, ac, bc of the 6 ordered pairs; the triple abc of 6.
    let s: &[&[u32]] = &[&[0, 1, 2]];
    assert_eq!(count(KH, 3, Two, s), (3, 6));
    assert_eq!(count(KH, 3, Three, s), (1, 6));
    // Adding c b a covers the other orders.
    let s: &[&[u32]] = &[&[0, 1, 2], &[2, 1, 0]];
    assert_eq!(count(KH, 3, Two, s), (6, 6));
    assert_eq!(count(KH, 3, Three, s), (2, 6));
    // Not adjacent: a x x b still covers ab.
    assert_eq!(count(KH, 4, Two, &[&[0, 2, 3, 1]]).0, 6);
    assert_eq!(count(KH, 4, Three, &[&[0, 2, 3, 1]]).0, 4);
}

#[test]
fn repeated_events_form_windows_but_no_tuples() {
    let s: &[&[u32]] = &[&[0, 0, 0, 0]];
    assert_eq!(count(KH, 2, Two, s), (0, 2));
    assert_eq!(count(KH, 3, Three, s), (0, 6));
    assert_eq!(count(WIN, 2, Two, s), (1, 4));
    assert_eq!(count(WIN, 2, Three, s), (1, 8));
    // a b a b: KH pairs ab and ba, no distinct triple over 2 symbols (and a b a is not one
    // over 3); windows ab, ba and aba, bab.
    let s: &[&[u32]] = &[&[0, 1, 0, 1]];
    assert_eq!(count(KH, 3, Two, s).0, 2);
    assert_eq!(count(KH, 3, Three, s).0, 0);
    assert_eq!(count(WIN, 3, Two, s).0, 2);
    assert_eq!(count(WIN, 3, Three, s).0, 2);
    // a b a c: triples abc, bac (a repeated around b gives no extra triple).
    assert_eq!(count(KH, 3, Three, &[&[0, 1, 0, 2]]).0, 2);
}

#[test]
fn tests_shorter_than_t_cover_nothing() {
    let s: &[&[u32]] = &[&[0], &[1], &[]];
    for c in [KH, WIN] {
        assert_eq!(count(c, 3, Two, s).0, 0);
    }
    let s: &[&[u32]] = &[&[0, 1], &[2, 1], &[1]];
    assert_eq!(count(KH, 3, Three, s).0, 0);
    assert_eq!(count(WIN, 3, Three, s).0, 0);
    assert_eq!(count(KH, 3, Two, s).0, 2);
    assert_eq!(count(WIN, 3, Two, s).0, 2);
}

#[test]
fn empty_suite_and_empty_alphabet() {
    for c in [KH, WIN] {
        for s in [Two, Three] {
            assert_eq!(ratio(c, 3, s, &[]), 0.0, "{c:?} {s:?}: nothing covered of a non-empty alphabet");
            assert_eq!(ratio(c, 0, s, &[]), 1.0, "{c:?} {s:?}: nothing to cover");
            assert_eq!(ratio(c, 0, s, &[&[], &[X, X]]), 1.0);
        }
    }
    let cov = suite_coverage(&Alphabet::new(), std::iter::empty::<&[Event]>());
    assert_eq!(
        (cov.alphabet, cov.kh2.ratio(), cov.kh3.ratio(), cov.win2.ratio(), cov.win3.ratio()),
        (0, 1.0, 1.0, 1.0, 1.0)
    );
}

#[test]
fn alphabets_smaller_than_t() {
    // One symbol: no pair or triple of distinct symbols exists (ratio 1.0); the words
    // `ww`, `www` do.
    let s: &[&[u32]] = &[&[0, 0]];
    assert_eq!(count(KH, 1, Two, s), (0, 0));
    assert_eq!(ratio(KH, 1, Two, s), 1.0);
    assert_eq!(ratio(KH, 1, Three, s), 1.0);
    assert_eq!(ratio(WIN, 1, Two, s), 1.0);
    assert_eq!(ratio(WIN, 1, Three, s), 0.0);
    assert_eq!(ratio(WIN, 1, Two, &[&[0]]), 0.0);
    // Two symbols, t = 3: no distinct triple.
    assert_eq!(count(KH, 2, Three, &[&[0, 1, 0]]), (0, 0));
    assert_eq!(ratio(KH, 2, Three, &[&[0, 1, 0]]), 1.0);
}

#[test]
fn events_outside_the_alphabet_break_windows_only() {
    let s: &[&[u32]] = &[&[0, X, 1, 7, 2]];
    assert_eq!(count(KH, 3, Two, s).0, 3);
    assert_eq!(count(KH, 3, Three, s).0, 1);
    assert_eq!(count(WIN, 3, Two, s).0, 0);
}

#[test]
fn add_reports_what_each_test_adds() {
    let mut c = SequenceCounter::new(KH, 3, Two);
    assert_eq!(c.add(&[0, 1]), 1);
    assert_eq!(c.add(&[0, 1]), 0);
    assert_eq!(c.add(&[0, 1, 2]), 2);
    assert_eq!(c.covered(), 3);
    let snapshot = c.clone();
    assert_eq!(c.add(&[2, 1, 0]), 3);
    assert_eq!((snapshot.covered(), c.covered()), (3, 6));
    assert_eq!((c.criterion(), c.strength(), c.alphabet_len()), (KH, Two, 3));
}

#[test]
fn suite_coverage_of_events() {
    let t1 = vec![key("space", 1), wait(10), key("space", 4), click("Cat", 0, 0.0)];
    let t2 = vec![click("Cat", 2, 5.0), wait(3)];
    let a = Alphabet::from_tests([t1.as_slice(), t2.as_slice()]);
    assert_eq!(a.len(), 3); // key:space, click:Cat, wait
    let c = suite_coverage(&a, [t1.as_slice(), t2.as_slice()]);
    assert_eq!(c.alphabet, 3);
    // Pairs: (space, wait) (wait, space) (space, Cat) (wait, Cat) (Cat, wait) = 5 of 6.
    assert_eq!(c.kh2, Covered { covered: 5, total: 6 });
    // Triples: space wait Cat, wait space Cat = 2 of 6.
    assert_eq!(c.kh3, Covered { covered: 2, total: 6 });
    // Windows: (space wait) (wait space) (space Cat) (Cat wait) = 4 of 9.
    assert_eq!(c.win2, Covered { covered: 4, total: 9 });
    assert_eq!(c.win3, Covered { covered: 2, total: 27 });
}

#[test]
fn minimisation_never_adds_kuhn_higdon_tuples_but_can_add_windows() {
    let full: &[u32] = &[0, 1, 2];
    let minimised: &[u32] = &[0, 2]; // b removed: a and c become adjacent
    assert!(count(KH, 3, Two, &[minimised]).0 <= count(KH, 3, Two, &[full]).0);
    assert_eq!(count(WIN, 3, Two, &[full]).0, 2);
    let mut c = SequenceCounter::new(WIN, 3, Two);
    c.add(full);
    assert_eq!(c.add(minimised), 1, "ac is a new window");
}

/// Brute force by the definitions: every tuple / word over `0..k`, checked against every
/// test (subsequence for Kuhn–Higdon, contiguous for windows).
fn brute_force_by_tuples(c: Criterion, k: usize, t: usize, suite: &[Vec<u32>]) -> (u64, u128) {
    let mut covered = 0u64;
    let mut total = 0u128;
    let mut w = vec![0u32; t];
    let n = k.pow(t as u32);
    for code in 0..n {
        let mut x = code;
        for i in (0..t).rev() {
            w[i] = (x % k) as u32;
            x /= k;
        }
        let distinct = (0..t).all(|i| (i + 1..t).all(|j| w[i] != w[j]));
        if c == KH && !distinct {
            continue;
        }
        total += 1;
        let hit = suite.iter().any(|test| match c {
            KH => {
                let mut i = 0;
                for &s in test {
                    if i < t && s == w[i] {
                        i += 1;
                    }
                }
                i == t
            }
            WIN => test.windows(t).any(|win| win == w.as_slice()),
        });
        covered += u64::from(hit);
    }
    (covered, total)
}

/// Brute force from the tests: every choice of `t` positions (increasing for Kuhn–Higdon,
/// consecutive for windows) collected into a set.
fn brute_force_by_positions(c: Criterion, k: usize, t: usize, suite: &[Vec<u32>]) -> u64 {
    let mut set: BTreeSet<Vec<u32>> = BTreeSet::new();
    for test in suite {
        match c {
            KH => {
                let v: Vec<u32> = test.iter().copied().filter(|&s| (s as usize) < k).collect();
                let n = v.len();
                let mut idx: Vec<usize> = (0..t).collect();
                if n < t {
                    continue;
                }
                loop {
                    let tuple: Vec<u32> = idx.iter().map(|&i| v[i]).collect();
                    if tuple.iter().collect::<BTreeSet<_>>().len() == t {
                        set.insert(tuple);
                    }
                    // Next combination of t positions in 0..n.
                    let Some(i) = (0..t).rev().find(|&i| idx[i] < n - t + i) else { break };
                    idx[i] += 1;
                    for j in i + 1..t {
                        idx[j] = idx[j - 1] + 1;
                    }
                }
            }
            WIN => {
                for win in test.windows(t) {
                    if win.iter().all(|&s| (s as usize) < k) {
                        set.insert(win.to_vec());
                    }
                }
            }
        }
    }
    set.len() as u64
}

fn random_suite(rng: &mut Rng, k: usize, tests: usize, max_len: usize) -> Vec<Vec<u32>> {
    (0..tests)
        .map(|_| {
            let n = rng.below(max_len + 1);
            (0..n)
                .map(|_| {
                    let r = rng.next_double();
                    if r < 0.05 {
                        X
                    } else if r < 0.08 {
                        (k + rng.below(3)) as u32 // out of range counts as outside
                    } else {
                        rng.below(k.max(1)) as u32
                    }
                })
                .collect()
        })
        .collect()
}

/// Adds the suite one test at a time to a dense and a sparse counter, checking that the
/// gains add up and that both agree with brute force on every prefix.
fn check(c: Criterion, k: usize, s: Strength, suite: &[Vec<u32>], by_tuples: bool) {
    let t = s.t();
    let mut dense = SequenceCounter::new(c, k, s);
    let mut sparse = SequenceCounter::new_sparse(c, k, s);
    let mut gained = 0;
    for (i, test) in suite.iter().enumerate() {
        let g = dense.add(test);
        assert_eq!(g, sparse.add(test), "{c:?} t={t} k={k}: gains differ at test {i}: {suite:?}");
        gained += g;
        let prefix = &suite[..=i];
        let want = brute_force_by_positions(c, k, t, prefix);
        assert_eq!(dense.covered(), want, "{c:?} t={t} k={k}, prefix {i}: {prefix:?}");
        assert_eq!(sparse.covered(), want, "{c:?} t={t} k={k} (sparse), prefix {i}: {prefix:?}");
    }
    assert_eq!(gained, dense.covered());
    if by_tuples {
        let (covered, total) = brute_force_by_tuples(c, k, t, suite);
        assert_eq!((dense.covered(), dense.total()), (covered, total), "{c:?} t={t} k={k}: {suite:?}");
        assert_eq!(sparse.total(), total);
    }
}

#[test]
fn fast_counts_match_brute_force_on_random_suites() {
    let mut rng = Rng::new(20, 0x5E0);
    for _ in 0..400 {
        let k = rng.below(8);
        let tests = rng.below(7);
        let suite = random_suite(&mut rng, k, tests, 12);
        for c in [KH, WIN] {
            for s in [Two, Three] {
                check(c, k, s, &suite, true);
            }
        }
    }
}

#[test]
fn fast_counts_match_brute_force_across_word_boundaries() {
    // Rows of more than one 64-bit word, and symbols on either side of a word boundary.
    let mut rng = Rng::new(21, 0x5E1);
    for k in [63usize, 64, 65, 127, 129, 200] {
        for _ in 0..6 {
            let tests = 1 + rng.below(5);
            let mut suite = random_suite(&mut rng, k, tests, 30);
            suite.push(vec![0, 63.min(k as u32 - 1), (k - 1) as u32, 64.min(k as u32 - 1), 0]);
            for c in [KH, WIN] {
                for s in [Two, Three] {
                    check(c, k, s, &suite, false);
                }
            }
        }
    }
}

#[test]
fn large_alphabets_use_the_sparse_sets() {
    // 400 symbols: 400²·7 words of triples exceed the dense limit, as do 400³ window bits.
    let k = 400;
    let mut rng = Rng::new(22, 0x5E2);
    let suite = random_suite(&mut rng, k, 5, 25);
    assert!(SequenceCounter::new(KH, k, Three).is_sparse());
    assert!(SequenceCounter::new(WIN, k, Three).is_sparse());
    assert!(!SequenceCounter::new(KH, k, Two).is_sparse());
    assert!(!SequenceCounter::new(KH, 50, Three).is_sparse());
    for c in [KH, WIN] {
        for s in [Two, Three] {
            check(c, k, s, &suite, false);
        }
    }
}

/// The codes of the items of `suite` by brute force over positions (see
/// [`SequenceCounter::items`] for the code of an item).
fn brute_force_items(c: Criterion, k: usize, t: usize, suite: &[Vec<u32>]) -> BTreeSet<u128> {
    let code = |tuple: &[u32]| tuple.iter().fold(0u128, |acc, &s| acc * k as u128 + u128::from(s));
    let mut set = BTreeSet::new();
    for test in suite {
        match c {
            KH => {
                let v: Vec<u32> = test.iter().copied().filter(|&s| (s as usize) < k).collect();
                for i in 0..v.len() {
                    for j in i + 1..v.len() {
                        if t == 2 {
                            if v[i] != v[j] {
                                set.insert(code(&[v[i], v[j]]));
                            }
                            continue;
                        }
                        for l in j + 1..v.len() {
                            if v[i] != v[j] && v[j] != v[l] && v[i] != v[l] {
                                set.insert(code(&[v[i], v[j], v[l]]));
                            }
                        }
                    }
                }
            }
            WIN => {
                for win in test.windows(t) {
                    if win.iter().all(|&s| (s as usize) < k) {
                        set.insert(code(win));
                    }
                }
            }
        }
    }
    set
}

#[test]
fn items_are_the_covered_tuples_in_order() {
    let mut rng = Rng::new(23, 0x5E3);
    for round in 0..300 {
        // Small alphabets, and a few across word boundaries and in the sparse representation.
        let k = if round % 10 == 9 { [65usize, 130][round % 2] } else { rng.below(9) };
        let tests = rng.below(6);
        let suite = random_suite(&mut rng, k, tests, 14);
        for c in [KH, WIN] {
            for s in [Two, Three] {
                let want: Vec<u128> = brute_force_items(c, k, s.t(), &suite).into_iter().collect();
                for mut counter in [SequenceCounter::new(c, k, s), SequenceCounter::new_sparse(c, k, s)] {
                    for test in &suite {
                        counter.add(test);
                    }
                    assert_eq!(counter.items(), want, "{c:?} t={} k={k}: {suite:?}", s.t());
                    assert_eq!(counter.items().len() as u64, counter.covered());
                }
            }
        }
    }
    // A hand-made case: (a b a c) covers the pairs ab, ac, ba, bc and the windows ab, ba, ac.
    let mut kh = SequenceCounter::new(KH, 3, Two);
    kh.add(&[0, 1, 0, 2]);
    assert_eq!(kh.items(), vec![1, 2, 3, 5]);
    let mut win = SequenceCounter::new(WIN, 3, Two);
    win.add(&[0, 1, 0, 2]);
    assert_eq!(win.items(), vec![1, 2, 3]);
}
