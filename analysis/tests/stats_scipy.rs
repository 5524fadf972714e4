//! Statistics against reference values computed with scipy (`scripts/stats_fixtures.py`,
//! output committed in `tests/fixtures/stats_cases.json`), and the exact permutation p-value
//! against brute-force enumeration.

mod common;

use clowder_analysis::stats::{self, PMethod, PairCounts};
use common::rel_err;
use serde_json::Value;

fn fixtures() -> Value {
    let text = include_str!("fixtures/stats_cases.json");
    serde_json::from_str(text).expect("fixture JSON")
}

/// Floats are stored as repr() strings so they parse to the very same doubles.
fn floats(v: &Value) -> Vec<f64> {
    v.as_array().expect("array").iter().map(|x| x.as_str().expect("string").parse().expect("float")).collect()
}

fn float(v: &Value) -> f64 {
    v.as_str().expect("string").parse().expect("float")
}

#[test]
fn mann_whitney_and_a12_match_scipy() {
    let doc = fixtures();
    let cases = doc["mwu"].as_array().expect("cases");
    assert!(cases.len() > 100);
    let mut worst = (0.0f64, String::new());
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let (a, b) = (floats(&c["a"]), floats(&c["b"]));
        let m = stats::mann_whitney(&a, &b, PMethod::Asymptotic).unwrap();
        // U exact.
        assert_eq!(m.u(), float(&c["u1"]), "{name}: U");
        // Â12 exact: the same fraction, and the same double as U/(n1·n2).
        assert_eq!(m.counts.doubled_u(), c["a12_num"].as_u64().unwrap(), "{name}: Â12 numerator");
        assert_eq!(2 * m.counts.n1 * m.counts.n2, c["a12_den"].as_u64().unwrap(), "{name}: Â12 denominator");
        assert_eq!(m.a12(), float(&c["a12"]), "{name}: Â12");
        // p within 1e-12 relative.
        let want = float(&c["p_asymptotic"]);
        let e = rel_err(m.p, want);
        assert!(e <= 1e-12, "{name}: p {} vs scipy {want} (relative error {e:e})", m.p);
        if e > worst.0 {
            worst = (e, name.to_string());
        }
    }
    eprintln!("max relative p error vs scipy: {:e} ({})", worst.0, worst.1);
}

#[test]
fn exact_p_matches_python_brute_force() {
    let doc = fixtures();
    let mut checked = 0;
    for c in doc["mwu"].as_array().unwrap() {
        let Some(extreme) = c.get("exact_extreme") else { continue };
        let (a, b) = (floats(&c["a"]), floats(&c["b"]));
        let (e, t) = stats::exact_p_counts(&a, &b).unwrap();
        assert_eq!(
            (e, t),
            (extreme.as_u64().unwrap() as u128, c["exact_total"].as_u64().unwrap() as u128),
            "{}",
            c["name"]
        );
        checked += 1;
    }
    assert!(checked >= 80, "only {checked} exact cases");
}

/// 2·U of `a` by counting pairs directly (the definition, independent of the library).
fn doubled_u(a: &[f64], b: &[f64]) -> i64 {
    a.iter()
        .flat_map(|x| {
            b.iter().map(move |y| {
                if x > y {
                    2
                } else if x == y {
                    1
                } else {
                    0
                }
            })
        })
        .sum()
}

/// Enumerates every split of the pooled sample into n1 + n2 (as bit masks).
fn brute_force(a: &[f64], b: &[f64]) -> (u128, u128) {
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let (n1, n) = (a.len(), pooled.len());
    let center = (a.len() * b.len()) as i64;
    let obs = (doubled_u(a, b) - center).abs();
    let (mut extreme, mut total) = (0u128, 0u128);
    for mask in 0u32..(1 << n) {
        if mask.count_ones() as usize != n1 {
            continue;
        }
        let (xa, xb): (Vec<f64>, Vec<f64>) = {
            let mut xa = Vec::new();
            let mut xb = Vec::new();
            for (i, &v) in pooled.iter().enumerate() {
                if mask & (1 << i) != 0 { xa.push(v) } else { xb.push(v) }
            }
            (xa, xb)
        };
        total += 1;
        if (doubled_u(&xa, &xb) - center).abs() >= obs {
            extreme += 1;
        }
    }
    (extreme, total)
}

#[test]
fn exact_p_matches_rust_brute_force_on_random_small_samples() {
    // SplitMix64, fixed seed: deterministic cases with and without ties.
    let mut state = 0x5eed_u64;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for case in 0..300 {
        let n1 = 1 + (next() % 7) as usize;
        let n2 = 1 + (next() % (13 - n1 as u64)) as usize;
        let levels = [2, 3, 5, 1000][case % 4];
        let mut draw = |n: usize| (0..n).map(|_| (next() % levels) as f64 / levels as f64).collect::<Vec<_>>();
        let (a, b) = (draw(n1), draw(n2));
        assert_eq!(stats::exact_p_counts(&a, &b).unwrap(), brute_force(&a, &b), "case {case}: {a:?} vs {b:?}");
    }
}

#[test]
fn exact_p_without_ties_is_the_classic_distribution() {
    // 5 vs 5, complete separation: only the two extreme splits → p = 2/252.
    let (e, t) = stats::exact_p_counts(&[6.0, 7.0, 8.0, 9.0, 10.0], &[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    assert_eq!((e, t), (2, 252));
    // 20 vs 20 at the limit of practical sizes still runs and is tiny.
    let a: Vec<f64> = (0..20).map(|i| i as f64 + 100.0).collect();
    let b: Vec<f64> = (0..20).map(|i| i as f64).collect();
    let m = stats::mann_whitney(&a, &b, PMethod::Exact).unwrap();
    assert_eq!(m.p, 2.0 / 137_846_528_820.0);
}

#[test]
fn pearson_matches_scipy() {
    let doc = fixtures();
    for c in doc["pearson"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let (x, y) = (floats(&c["x"]), floats(&c["y"]));
        let got = stats::pearson(&x, &y).unwrap();
        let (r, p) = (float(&c["r"]), float(&c["p"]));
        assert!((got.r - r).abs() <= 1e-12, "{name}: r {} vs {r}", got.r);
        // The p-value goes through the regularised incomplete beta function; statrs and
        // scipy agree to about 1e-10 relative (p is never used for more than 4 digits).
        assert!(rel_err(got.p, p) <= 1e-9 || (got.p - p).abs() <= 1e-15, "{name}: p {} vs {p}", got.p);
    }
}

#[test]
fn holm_matches_reference() {
    let doc = fixtures();
    for c in doc["holm"].as_array().unwrap() {
        let got = stats::holm(&floats(&c["p"]));
        let want = floats(&c["adjusted"]);
        assert_eq!(got, want, "{}", c["name"]);
    }
}

#[test]
fn counts_are_symmetric() {
    let a = [0.5, 0.5, 1.0, 0.25];
    let b = [0.5, 0.75, 0.0];
    let ab = PairCounts::new(&a, &b).unwrap();
    let ba = PairCounts::new(&b, &a).unwrap();
    assert_eq!(ab.doubled_u() + ba.doubled_u(), 2 * 4 * 3);
    assert_eq!(ab.a12() + ba.a12(), 1.0);
}
