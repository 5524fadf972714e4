//! Tests of the surprise module. Values marked "Whisker:" come from Whisker's own tests
//! (`test/whisker/utils/Statistics.test.ts`, `test/whisker/whiskerNet/Misc/ActivationTrace.test.ts`,
//! `test/whisker/whiskerNet/Misc/NetworkAnalysis.test.ts`); the scenarios of the latter use random
//! values there, so they are rebuilt here with a seeded generator and the same bounds.

use std::f64::consts::PI;

use super::*;

/// SplitMix64: a tiny seeded generator, so the "random" scenarios are reproducible.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[min, max)`.
    fn double(&mut self, min: f64, max: f64) -> f64 {
        min + (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * (max - min)
    }

    /// Whisker's test activations: `Math.round(nextDoubleMinMax(min, max) * 100) / 100`.
    fn activation(&mut self, min: f64, max: f64) -> f64 {
        (self.double(min, max) * 100.0).round() / 100.0
    }
}

fn round_to(value: f64, decimals: i32) -> f64 {
    let factor = 10f64.powi(decimals);
    (value * factor).round() / factor
}

// ---------------------------------------------------------------- statistics

#[test]
fn surprise_statistics_match_whisker() {
    // Whisker: Statistics.test.ts ("equalValues", "differentValues").
    let equal = [10.0, 10.0, 10.0, 10.0];
    let different = [10.0, 0.0, 2.0, 3.0, 12.0, 5.0, 17.0];
    assert_eq!(mean(&equal), 10.0);
    assert_eq!(mean(&different), 7.0);
    assert_eq!(variance(&equal), 0.0);
    assert_eq!(round_to(variance(&different), 2), 32.57);
    assert_eq!(std_dev(&equal), 0.0);
    assert_eq!(round_to(std_dev(&different), 2), 5.71);
    assert_eq!(median(&[1.0, 2.0, 3.0, 4.0]), 2.5);
    assert_eq!(median(&[1.0, 2.0, 3.0, 4.0, 5.0]), 3.0);
    assert_eq!(median(&equal), 10.0);
    assert_eq!(iqr(&[1.0, 2.0, 3.0, 4.0, 5.0]), 3.0);
    assert_eq!(iqr(&equal), 0.0);
    assert_eq!(iqr(&[1.0, 1.0, 1.0, 1.0, 10.0]), 1.0, "Whisker: missing quartile gives 1");
    // Whisker: gaussianKernel(0).toFixed(1) == "0.4".
    assert_eq!(format!("{:.1}", gaussian_kernel(0.0)), "0.4");
    assert_eq!(gaussian_kernel(0.0), 1.0 / (2.0 * PI).sqrt());
    // Whisker: silvermanRuleOfThumb([0..5]).toFixed(1) == "1.1".
    let ramp = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
    assert_eq!(format!("{:.1}", silverman_bandwidth(&ramp)), "1.1");
}

#[test]
fn surprise_statistics_order_insensitive() {
    // The median and IQR sort a copy; the input order must not matter.
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    assert_eq!(iqr(&[5.0, 3.0, 1.0, 4.0, 2.0]), 3.0);
}

#[test]
fn surprise_bandwidth_is_silverman_with_population_std() {
    // σ = sqrt(35/12) (population), IQR = 4 - 1 = 3: σ < IQR / 1.34, so σ is used.
    let ramp = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
    let expected = 0.9 * (35.0f64 / 12.0).sqrt() * 6f64.powf(-0.2);
    assert!((silverman_bandwidth(&ramp) - expected).abs() < 1e-15);
    // Outliers on both sides: median 1, lower [-1000, 0, 0] → 0, upper [2, 2, 1000] → 2, so
    // IQR = 2 and IQR / 1.34 is far below σ ≈ 471.
    let outliers = [-1000.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 1000.0];
    assert_eq!(iqr(&outliers), 2.0);
    let expected = 0.9 * (2.0 / 1.34) * 9f64.powf(-0.2);
    assert!((silverman_bandwidth(&outliers) - expected).abs() < 1e-15);
    // Medians of the halves: lower [1] → 1, upper [3, 50] → 26.5.
    assert_eq!(iqr(&[1.0, 2.0, 2.0, 2.0, 2.0, 3.0, 50.0]), 25.5);
}

/// Relative closeness: V8 and Rust's libm may differ in the last bits of `exp`, `ln`, `pow`.
fn close(actual: f64, expected: f64) -> bool {
    actual == expected || (actual - expected).abs() <= 1e-13 * expected.abs().max(1.0)
}

#[test]
fn surprise_matches_whisker_run_under_node() {
    // Expected values printed by Whisker's own `Statistics.ts` and
    // `NetworkAnalysis.calculateLSA` (master, transpiled with tsc, run under Node 20).
    let ramp = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
    let outliers = [-1000.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 1000.0];
    let different = [10.0, 0.0, 2.0, 3.0, 12.0, 5.0, 17.0];
    let activations = [
        0.1, 0.11, 0.12, 0.13, 0.14, 0.15, 0.16, 0.17, 0.18, 0.19, 0.2, 0.15, 0.15, 0.14, 0.16, 0.12, 0.18, 0.13, 0.17,
        0.15, 0.11, 0.19, 0.14, 0.16, 0.15, 0.13, 0.17, 0.12, 0.18, 0.15,
    ];
    let cases = [
        ("silverman ramp", silverman_bandwidth(&ramp), 1.074127061995466),
        ("lsa ramp 2.5", lsa(&ramp, 2.5), 1.7955583548528793),
        ("lsa ramp 0", lsa(&ramp, 0.0), 2.169066825088353),
        ("lsa ramp 7", lsa(&ramp, 7.0), 4.4022100222346365),
        ("silverman outliers", silverman_bandwidth(&outliers), 0.8656039007157146),
        ("lsa outliers 1", lsa(&outliers, 1.0), 1.3519846908604696),
        ("variance", variance(&different), 32.57142857142857),
        ("std", std_dev(&different), 5.707138387268051),
        ("silverman different", silverman_bandwidth(&different), 3.480497329949687),
        ("lsa different 7", lsa(&different, 7.0), 3.04205266007503),
        ("lsa different 40", lsa(&different, 40.0), 25.946487513699296),
        ("silverman activations", silverman_bandwidth(&activations), 0.011710898752518474),
        ("lsa activations 0.15", lsa(&activations, 0.15), -2.5952118064259864),
        ("lsa activations 0.3", lsa(&activations, 0.3), 36.329678322133645),
        ("lsa activations 0.215", lsa(&activations, 0.215), 0.25629158617965364),
        ("lsa constant 0.3 vs 0.301", lsa(&[0.3; 30], 0.301), 0.0010000000000000009),
    ];
    for (name, actual, expected) in cases {
        assert!(close(actual, expected), "{name}: {actual:e} vs Whisker {expected:e}");
    }
    assert_eq!(lsa(&ramp, 1e6), f64::INFINITY);
    // 0.3 against 30 activations in [0.1, 0.2]: above 30, surprising; 0.215 is not.
    assert!(lsa(&activations, 0.3) > DEFAULT_LSA_THRESHOLD);
}

/// The Park–Miller generator the Node cross-check used (exact in both languages).
struct ParkMiller(u64);

impl ParkMiller {
    fn next(&mut self) -> u64 {
        self.0 = self.0 * 48271 % 2_147_483_647;
        self.0
    }
}

#[test]
fn surprise_analysis_matches_whisker_run_under_node() {
    // The same traces were fed to Whisker's `NetworkAnalysis.LSA` under Node (nodes `H:0`..`H:7`
    // inserted in ascending order, so the summation order matches): averageLSA
    // 52.24704168507532, surpriseCount 5, surprising 10/H:6 15/H:2 20/H:3 20/H:4 25/H:0.
    // Nodes 0–5 vary, node 6 is constant 0.3 (the test deviates to 0.31 at step 10), node 7 has
    // only 10 samples (skipped); the test's extra step 30 ends the analysis.
    let mut rng = ParkMiller(12345);
    let steps = [1u32, 5, 10, 15, 20, 25];
    let mut reference = ActivationTrace::new();
    for &step in &steps {
        let mut values: Vec<Vec<f64>> = vec![Vec::new(); 8];
        for rep in 0..30 {
            for (node, list) in values.iter_mut().enumerate() {
                let r = rng.next();
                match node {
                    0..=5 => list.push(0.1 + (r % 11) as f64 / 100.0),
                    6 => list.push(0.3),
                    _ if rep < 10 => list.push(0.5 + (r % 5) as f64 / 100.0),
                    _ => {}
                }
            }
        }
        for (node, list) in (0u32..).zip(values) {
            reference.set_samples(step, node, list);
        }
    }
    let mut test = ActivationTrace::new();
    for step in steps.iter().copied().chain([30]) {
        for node in 0u32..8 {
            let r = rng.next();
            let value = match node {
                0..=5 => 0.05 + (r % 31) as f64 / 100.0,
                6 if step == 10 => 0.31,
                6 => 0.3,
                _ => 0.9,
            };
            test.set_samples(step, node, vec![value]);
        }
    }
    assert_eq!(rng.0, 528_047_427, "same stream as the Node run");

    let report = analyse(&reference, Some(&test), &SurpriseConfig::default());
    let average = report.average_lsa.unwrap_or(f64::NAN);
    assert!(close(average, 52.24704168507532), "averageLSA {average:e}");
    assert_eq!(report.surprise_count, 5);
    let surprising: Vec<(u32, u32)> =
        report.judgements.iter().filter(|j| j.surprising).map(|j| (j.step, j.node)).collect();
    assert_eq!(surprising, vec![(10, 6), (15, 2), (20, 3), (20, 4), (25, 0)]);
    assert_eq!(report.suspicious_nodes.iter().copied().collect::<Vec<_>>(), vec![0, 2, 3, 4, 6]);
    assert_eq!(report.stopped_at, Some(30));
    assert_eq!(report.compared_steps, 6);
    assert_eq!(report.judgements.len(), 6 * 7, "node 7 has too few samples");
}

#[test]
fn surprise_kde_and_lsa_by_hand() {
    // Density at 2.5 of [0..5], written out term by term.
    let ramp = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
    let h = 0.9 * (35.0f64 / 12.0).sqrt() * 6f64.powf(-0.2);
    let phi = |z: f64| (-0.5 * z * z).exp() / (2.0 * PI).sqrt();
    let density: f64 = ramp.iter().map(|s| phi((2.5 - s) / h)).sum::<f64>() / (6.0 * h);
    assert!((kde_density(&ramp, 2.5) - density).abs() < 1e-15);
    assert!((lsa(&ramp, 2.5) + density.ln()).abs() < 1e-12);
    assert!((lsa(&ramp, 2.5) - 1.7956).abs() < 1e-4, "lsa = {}", lsa(&ramp, 2.5));
    // Far away the density underflows to 0 and the LSA is +∞, as in Whisker.
    assert_eq!(kde_density(&ramp, 1e6), 0.0);
    assert_eq!(lsa(&ramp, 1e6), f64::INFINITY);
}

#[test]
fn surprise_lsa_constant_reference() {
    // Whisker: NetworkAnalysis.test.ts "LSA equal values in ATs" and "constant reference but
    // slightly different test trace": 30 × 0.3 against 0.3 and 0.301.
    let constant = vec![0.3; 30];
    assert_eq!(lsa(&constant, 0.3), 0.0);
    assert_eq!(lsa_threshold(&constant, &SurpriseConfig::default()), 0.0);
    let deviation = lsa(&constant, 0.3 + 0.001);
    assert!((deviation - 0.001).abs() < 1e-12);
    assert!(deviation > lsa_threshold(&constant, &SurpriseConfig::default()));
    assert_eq!(lsa_threshold(&[0.1, 0.2], &SurpriseConfig::default()), 30.0);
}

#[test]
fn surprise_degenerate_inputs_do_not_panic() {
    assert!(mean(&[]).is_nan());
    assert!(variance(&[]).is_nan());
    assert!(median(&[]).is_nan());
    assert_eq!(iqr(&[]), 0.0);
    assert!(silverman_bandwidth(&[]).is_nan());
    assert!(kde_density(&[], 1.0).is_nan());
    assert_eq!(lsa(&[], 1.0), 0.0, "Whisker: `every` over no samples is true");
    assert_eq!(lsa(&[2.0], 5.0), 3.0);
    assert!(lsa(&[1.0, f64::NAN], 0.5).is_nan());
    assert!(lsa(&[1.0, 1.0], f64::NAN).is_nan());
    assert_eq!(silverman_bandwidth(&[4.0, 4.0]), 0.0);
}

// ---------------------------------------------------------------- properties

#[test]
fn surprise_property_mean_less_surprising_than_far_away() {
    let mut rng = Rng(7);
    for round in 0..200 {
        let n = 2 + (rng.next_u64() % 60) as usize;
        let centre = rng.double(-5.0, 5.0);
        let spread = rng.double(0.01, 3.0);
        let samples: Vec<f64> = (0..n).map(|_| centre + rng.double(-spread, spread)).collect();
        if is_constant(&samples) {
            continue;
        }
        let m = mean(&samples);
        let far = m + 10.0 * (samples.iter().fold(0.0f64, |a, s| a.max((s - m).abs())) + 1.0);
        assert!(lsa(&samples, m) < lsa(&samples, far), "round {round}");
        assert!(lsa(&samples, m) < lsa(&samples, 2.0 * m - far), "round {round}");
    }
}

#[test]
fn surprise_property_deterministic() {
    let reference = scenario_reference(11);
    let test = test_trace(&mut Rng(12), 12, 15, 0.1, 0.3);
    let a = analyse(&reference, Some(&test), &SurpriseConfig::default());
    let b = analyse(&reference.clone(), Some(&test.clone()), &SurpriseConfig::default());
    assert_eq!(a.surprise_count, b.surprise_count);
    assert_eq!(a.judgements.len(), b.judgements.len());
    for (x, y) in a.judgements.iter().zip(&b.judgements) {
        assert_eq!(x.lsa.to_bits(), y.lsa.to_bits());
    }
    let (ma, mb) = (a.average_lsa.map(f64::to_bits), b.average_lsa.map(f64::to_bits));
    assert_eq!(ma, mb);
    // Merging the same runs in another grouping gives the same reference.
    let runs: Vec<ActivationTrace> = (0..4).map(|i| test_trace(&mut Rng(100 + i), 3, 2, 0.0, 1.0)).collect();
    let all = ActivationTrace::merged(&runs);
    let mut halves = ActivationTrace::merged(&runs[..2]);
    halves.merge(&ActivationTrace::merged(&runs[2..]));
    assert_eq!(all, halves);
}

// ---------------------------------------------------------------- traces

#[test]
fn surprise_round_activation_like_math_round() {
    assert_eq!(round_activation(0.1234), 0.123);
    assert_eq!(round_activation(0.9999), 1.0);
    assert_eq!(round_activation(-0.2346), -0.235);
    // 0.0625 · 1000 = 62.5 exactly: JavaScript rounds ties towards +∞.
    assert_eq!(round_activation(0.0625), 0.063);
    assert_eq!(round_activation(-0.0625), -0.062);
    assert_eq!(round_activation(-0.0004).to_bits(), 0.0f64.to_bits(), "no negative zero");
    assert!(round_activation(f64::NAN).is_nan());
    assert_eq!(round_activation(f64::INFINITY), f64::INFINITY);
}

#[test]
fn surprise_trace_steps() {
    assert!(!is_trace_step(0));
    assert!(is_trace_step(1));
    assert!(!is_trace_step(2));
    assert!(is_trace_step(5));
    assert!(is_trace_step(10));
    assert!(!is_trace_step(11));
}

/// Whisker's ActivationTrace.test.ts fixture: 15 nodes, values `nextInt(0, 100)`.
fn repetition(rng: &mut Rng, nodes: u32) -> Vec<(u32, f64)> {
    (0..nodes).map(|node| (node, (rng.next_u64() % 100) as f64)).collect()
}

#[test]
fn surprise_trace_update_like_whisker() {
    // Whisker: ActivationTrace.test.ts "Update AT with new node activations".
    let mut rng = Rng(3);
    let mut trace = ActivationTrace::new();
    assert_eq!(trace.step_count(), 0);
    trace.record_step(1, &repetition(&mut rng, 15));
    assert_eq!(trace.step_count(), 1);
    assert_eq!(trace.samples(1, 0).map(<[f64]>::len), Some(1));
    assert_eq!(trace.samples(1, 1).map(<[f64]>::len), Some(1));
    assert_eq!(trace.step(1).map(|s| s.len()), Some(15));
    for _ in 0..20 {
        trace.record_step(2, &repetition(&mut rng, 15));
    }
    assert_eq!(trace.step_count(), 2);
    assert_eq!(trace.samples(2, 0).map(<[f64]>::len), Some(20));
    assert_eq!(trace.step(2).map(|s| s.len()), Some(15));
    // A node activated from step 3 on (Whisker adds an activated and a deactivated node; only
    // the activated one is passed here).
    for _ in 0..30 {
        let mut nodes = repetition(&mut rng, 15);
        nodes.push((99, 0.5));
        trace.record_step(3, &nodes);
    }
    assert_eq!(trace.step_count(), 3);
    assert_eq!(trace.step(3).map(|s| s.len()), Some(16));
    assert_eq!(trace.samples(3, 99).map(<[f64]>::len), Some(30));
    assert_eq!(trace.traced_nodes().len(), 16);
    // An empty record still creates the step.
    trace.record_step(4, &[]);
    assert_eq!(trace.step(4).map(|s| s.len()), Some(0));
}

#[test]
fn surprise_trace_json_like_whisker() {
    // Whisker: ActivationTrace.test.ts "JSON representation of AT".
    let mut rng = Rng(4);
    let first = repetition(&mut rng, 15);
    let second = repetition(&mut rng, 15);
    let mut trace = ActivationTrace::new();
    trace.record_step(0, &first);
    trace.record_step(0, &second);
    trace.record_step(3, &first);
    let json = serde_json::to_value(&trace).expect("serialises");
    let object = json.as_object().expect("object");
    assert_eq!(object.len(), 2);
    assert_eq!(json["0"].as_object().map(|o| o.len()), Some(15));
    assert_eq!(json["0"]["H:0"].as_array().map(Vec::len), Some(2));
    assert_eq!(json["3"].as_object().map(|o| o.len()), Some(15));
    assert_eq!(json["3"]["H:1"].as_array().map(Vec::len), Some(1));
    let back: ActivationTrace = serde_json::from_value(json).expect("deserialises");
    assert_eq!(back, trace);
}

#[test]
fn surprise_trace_json_reading() {
    // The shape NetworkLoader.loadActivationTrace reads; steps sort numerically, not as strings.
    let text = r#"{"10": {"H:7": [0.5, null]}, "5": {"H:7": [0.25], "8": [1]}, "1": {}}"#;
    let trace: ActivationTrace = serde_json::from_str(text).expect("valid trace");
    assert_eq!(trace.steps().collect::<Vec<_>>(), vec![1, 5, 10]);
    assert_eq!(trace.samples(5, 8), Some(&[1.0][..]));
    let ten = trace.samples(10, 7).expect("node 7 at step 10");
    assert_eq!(ten[0], 0.5);
    assert!(ten[1].is_nan());
    assert_eq!(trace.traced_nodes().iter().copied().collect::<Vec<_>>(), vec![7, 8]);
    let text = serde_json::to_string(&trace).expect("serialises");
    assert_eq!(text, r#"{"1":{},"5":{"H:7":[0.25],"H:8":[1.0]},"10":{"H:7":[0.5,null]}}"#);
    assert!(serde_json::from_str::<ActivationTrace>(r#"{"1": {"I:0-0": [1]}}"#).is_err());
    assert!(serde_json::from_str::<ActivationTrace>(r#"{"x": {}}"#).is_err());
    assert!(serde_json::from_str::<ActivationTrace>(r#"[1]"#).is_err());
}

#[test]
fn surprise_trace_merge() {
    let mut a = ActivationTrace::with_traced_nodes([1, 2]);
    a.push(1, 1, 0.1);
    let mut b = ActivationTrace::new();
    b.push(1, 1, 0.2);
    b.push(5, 3, 0.3);
    a.merge(&b);
    assert_eq!(a.samples(1, 1), Some(&[0.1, 0.2][..]));
    assert_eq!(a.samples(5, 3), Some(&[0.3][..]));
    assert_eq!(a.traced_nodes().len(), 3);
}

// ---------------------------------------------------------------- analysis

/// Whisker's NetworkAnalysis.test.ts reference: 10 steps × 30 repetitions × 15 nodes with
/// activations in [0.1, 0.2] rounded to two decimals.
fn scenario_reference(seed: u64) -> ActivationTrace {
    let mut rng = Rng(seed);
    let mut trace = ActivationTrace::new();
    for step in 0..10 {
        for _ in 0..30 {
            let nodes: Vec<(u32, f64)> = (0..15).map(|node| (node, rng.activation(0.1, 0.2))).collect();
            trace.record_step(step, &nodes);
        }
    }
    trace
}

/// One run over `steps` steps and `nodes` nodes with activations in [min, max].
fn test_trace(rng: &mut Rng, steps: u32, nodes: u32, min: f64, max: f64) -> ActivationTrace {
    let mut trace = ActivationTrace::new();
    for step in 0..steps {
        let values: Vec<(u32, f64)> = (0..nodes).map(|node| (node, rng.activation(min, max))).collect();
        trace.record_step(step, &values);
    }
    trace
}

/// The first repetition of every step of the reference scenario (Whisker's "equal ATs").
fn first_repetition(reference: &ActivationTrace) -> ActivationTrace {
    let mut trace = ActivationTrace::new();
    for (step, nodes) in reference.iter() {
        let values: Vec<(u32, f64)> =
            nodes.iter().filter_map(|(&node, values)| values.first().map(|&v| (node, v))).collect();
        trace.record_step(step, &values);
    }
    trace
}

#[test]
fn surprise_same_distribution_shorter_test() {
    // Whisker: "LSA same distribution as test AT; shorter test trace": averageLSA < 1, count 0.
    for seed in 0..5 {
        let reference = scenario_reference(seed);
        let test = test_trace(&mut Rng(1000 + seed), 8, 15, 0.1, 0.2);
        let report = analyse(&reference, Some(&test), &SurpriseConfig::default());
        assert!(report.average_lsa.is_some_and(|a| a < 1.0), "{:?}", report.average_lsa);
        assert_eq!(report.surprise_count, 0);
        assert_eq!(report.compared_steps, 8);
        assert_eq!(report.judgements.len(), 8 * 15);
        assert_eq!(report.stopped_at, None);
        assert!(!is_mutant(false, report.surprise_count));
    }
}

#[test]
fn surprise_different_distribution_longer_test() {
    // Whisker: "LSA different distribution as test AT; shorter training trace": averageLSA > 5,
    // count > 1. The test runs 12 steps; the reference has 10, so the analysis stops at step 10.
    let reference = scenario_reference(21);
    let test = test_trace(&mut Rng(22), 12, 15, 0.5, 1.0);
    let report = analyse(&reference, Some(&test), &SurpriseConfig::default());
    assert!(report.average_lsa.is_some_and(|a| a > 5.0), "{:?}", report.average_lsa);
    assert!(report.surprise_count > 1);
    assert_eq!(report.stopped_at, Some(10));
    assert_eq!(report.compared_steps, 10);
    // Every value lies far outside [0.1, 0.2]: all 150 are surprising, each capped at 100 in the
    // average, so it is 15 nodes × 100.
    assert_eq!(report.surprise_count, 150);
    assert_eq!(report.average_lsa, Some(1500.0));
    assert_eq!(report.suspicious_nodes.len(), 15);
    assert_eq!(mutant_verdict(false, report.surprise_count), Some(KillReason::SurprisingActivations));
}

#[test]
fn surprise_equal_traces() {
    // Whisker: "LSA equal ATs": averageLSA < 1, count 0.
    let reference = scenario_reference(31);
    let test = first_repetition(&reference);
    let report = analyse(&reference, Some(&test), &SurpriseConfig::default());
    assert!(report.average_lsa.is_some_and(|a| a < 1.0));
    assert_eq!(report.surprise_count, 0);
}

#[test]
fn surprise_too_few_samples_skipped() {
    // Whisker: "LSA equal ATs; too few samples": step 5 keeps a single sample per node.
    let mut reference = scenario_reference(41);
    let test = first_repetition(&reference);
    let mut rng = Rng(42);
    for node in 0..15 {
        reference.set_samples(5, node, vec![rng.activation(0.1, 0.2)]);
    }
    let report = analyse(&reference, Some(&test), &SurpriseConfig::default());
    assert!(report.average_lsa.is_some_and(|a| a < 1.0));
    assert_eq!(report.surprise_count, 0);
    assert!(report.judgements.iter().all(|j| j.step != 5));
    assert_eq!(report.compared_steps, 10, "a step with only skipped nodes still counts");
}

#[test]
fn surprise_mismatching_nodes() {
    // Whisker: "LSA mismatching nodes": 3 steps × 30 reps × 10 nodes plus a node only the
    // reference has (11) and one only the test has (12). (Whisker's test then analyses against
    // another reference by mistake; the intent is checked here.)
    let mut rng = Rng(51);
    let mut training = ActivationTrace::new();
    for step in 0..3 {
        for _ in 0..30 {
            let mut nodes: Vec<(u32, f64)> = (0..10).map(|n| (n, rng.activation(0.1, 0.2))).collect();
            nodes.push((11, rng.activation(0.1, 0.2)));
            training.record_step(step, &nodes);
        }
    }
    let mut test = ActivationTrace::new();
    for step in 0..3 {
        let mut nodes: Vec<(u32, f64)> = (0..10).map(|n| (n, rng.activation(0.1, 0.2))).collect();
        nodes.push((12, rng.activation(0.1, 0.2)));
        test.record_step(step, &nodes);
    }
    let report = analyse(&training, Some(&test), &SurpriseConfig::default());
    assert!(report.average_lsa.is_some_and(|a| a < 1.0));
    assert_eq!(report.surprise_count, 0);
    assert_eq!(training.step(0).map(|s| s.len()), Some(11));
    assert_eq!(test.step(0).map(|s| s.len()), Some(11));
    assert!(report.judgements.iter().all(|j| j.node != 12 && j.node != 11));
}

#[test]
fn surprise_missing_test_trace() {
    // Whisker: "LSA missing test trace": averageLSA undefined, count = traced nodes (15).
    let reference = scenario_reference(61);
    let report = analyse(&reference, None, &SurpriseConfig::default());
    assert_eq!(report.average_lsa, None);
    assert_eq!(report.surprise_count, 15);
    assert!(report.test_missing);
    // Nodes the trace was created for count even if never recorded.
    let report = analyse(&ActivationTrace::with_traced_nodes(0..4), None, &SurpriseConfig::default());
    assert_eq!(report.surprise_count, 4);
}

#[test]
fn surprise_constant_reference_values() {
    // Whisker: "LSA equal values in ATs" (count 0) and "LSA constant reference but slightly
    // different test trace" (count 1); both averageLSA < 1.
    let mut reference = scenario_reference(71);
    let mut test = first_repetition(&reference);
    reference.set_samples(5, 0, vec![0.3; 30]);
    test.set_samples(5, 0, vec![0.3]);
    let report = analyse(&reference, Some(&test), &SurpriseConfig::default());
    assert!(report.average_lsa.is_some_and(|a| a < 1.0));
    assert_eq!(report.surprise_count, 0);

    test.set_samples(5, 0, vec![0.3 + 0.001]);
    let report = analyse(&reference, Some(&test), &SurpriseConfig::default());
    assert!(report.average_lsa.is_some_and(|a| a < 1.0));
    assert_eq!(report.surprise_count, 1);
    let judged: Vec<_> = report.judgements.iter().filter(|j| j.surprising).collect();
    assert_eq!(judged.len(), 1);
    assert_eq!((judged[0].step, judged[0].node, judged[0].threshold), (5, 0, 0.0));
    assert!((judged[0].lsa - 0.001).abs() < 1e-12);
}

#[test]
fn surprise_stops_and_degenerate_reports() {
    let reference = scenario_reference(81);
    // No test step at all: Whisker's 0 / 0.
    let report = analyse(&reference, Some(&ActivationTrace::new()), &SurpriseConfig::default());
    assert!(report.average_lsa.is_some_and(f64::is_nan));
    assert_eq!(report.surprise_count, 0);
    // The first test step is unknown to the reference: stop at once, later steps are ignored.
    let test = first_repetition(&reference);
    let mut reference_gap = reference.clone();
    reference_gap.remove_step(0);
    let report = analyse(&reference_gap, Some(&test), &SurpriseConfig::default());
    assert_eq!(report.stopped_at, Some(0));
    assert_eq!(report.compared_steps, 0);
    assert_eq!(report.surprise_count, 0);
    // An empty reference step also stops the analysis (steps 0, 1, 2 compared).
    let mut reference_empty = reference.clone();
    reference_empty.remove_step(3);
    reference_empty.record_step(3, &[]);
    let report = analyse(&reference_empty, Some(&test), &SurpriseConfig::default());
    assert_eq!(report.stopped_at, Some(3));
    assert_eq!(report.compared_steps, 3);
    let mut early = ActivationTrace::new();
    early.record_step(0, &[(0, 5.0)]);
    // The cap applies to the average only; the judgement keeps +∞.
    let report = analyse(&reference, Some(&early), &SurpriseConfig::default());
    assert_eq!(report.judgements[0].lsa, f64::INFINITY);
    assert_eq!(report.average_lsa, Some(100.0));
    // A lower minimum judges sparse references; min_samples 0 with an empty value list is fine.
    let mut sparse = ActivationTrace::new();
    sparse.set_samples(1, 0, vec![]);
    let mut probe = ActivationTrace::new();
    probe.set_samples(1, 0, vec![]);
    probe.push(1, 1, 0.5);
    let config = SurpriseConfig { min_samples: 0, ..SurpriseConfig::default() };
    let report = analyse(&sparse, Some(&probe), &config);
    assert_eq!(report.surprise_count, 0);
    assert_eq!(report.average_lsa, Some(0.0));
}

// ---------------------------------------------------------------- uncertainty and verdicts

#[test]
fn surprise_uncertainty_is_gini_impurity() {
    assert_eq!(uncertainty(&[]), None);
    assert_eq!(uncertainty(&[1.0]), Some(0.0));
    assert_eq!(uncertainty(&[0.5, 0.5]), Some(0.5));
    assert_eq!(uncertainty(&[0.25; 4]), Some(0.75));
    assert_eq!(uncertainty(&softmax(&[0.0, 0.0, 0.0, 0.0])), Some(0.75));
    let p = softmax(&[0.0, 3f64.ln()]);
    assert!((p[0] - 0.25).abs() < 1e-15 && (p[1] - 0.75).abs() < 1e-15);
    assert!((uncertainty(&p).unwrap_or(f64::NAN) - 0.375).abs() < 1e-15);
    assert!(softmax(&[]).is_empty());
    assert!((average_uncertainty([0.2, 0.4]) - 0.3).abs() < 1e-15);
    assert!(average_uncertainty([]).is_nan(), "Whisker: 0 / 0");
}

#[test]
fn surprise_mutant_verdict() {
    // DynamicNetworkSuite.isMutant: new events first, then any surprising activation.
    assert_eq!(mutant_verdict(true, 3), Some(KillReason::NewEvents));
    assert_eq!(mutant_verdict(false, 1), Some(KillReason::SurprisingActivations));
    assert_eq!(mutant_verdict(false, 0), None);
    assert!(is_mutant(true, 0));
    assert!(!is_mutant(false, 0));
    let original = ["WaitEvent", "KeyPressEvent-left arrow"];
    let executed = ["WaitEvent", "KeyPressEvent-left arrow", "KeyPressEvent-space"];
    assert_eq!(new_events(&original, &executed), vec![&"KeyPressEvent-space"]);
    assert!(new_events(&executed, &original).is_empty());
}

// ---------------------------------------------------------------- Whisker fixture

/// Whisker's `GroundTruthFruitCatching.json` (5 recorded runs of FruitCatching, state features
/// per decision), read from the local Whisker mirror if there is one.
fn fruit_catching_fixture() -> Option<serde_json::Value> {
    let repo = "/work/.mirror/se2p+whisker/repo";
    if !std::path::Path::new(repo).exists() {
        return None;
    }
    let output = std::process::Command::new("git")
        .args(["-C", repo, "show", "master:whisker-main/test/whisker/whiskerNet/Misc/GroundTruthFruitCatching.json"])
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    serde_json::from_slice(&output.stdout).ok()
}

/// One activation trace per run: step = decision index, node = index of the `(sprite, feature)`
/// pair in sorted order, value = the feature.
fn fixture_traces(fixture: &serde_json::Value) -> Vec<ActivationTrace> {
    let mut names = std::collections::BTreeSet::new();
    let runs = fixture.as_object().cloned().unwrap_or_default();
    for run in runs.values() {
        for record in run.as_object().into_iter().flat_map(|r| r.values()) {
            for (sprite, features) in record["features"].as_object().into_iter().flatten() {
                for feature in features.as_object().into_iter().flat_map(|f| f.keys()) {
                    names.insert((sprite.clone(), feature.clone()));
                }
            }
        }
    }
    let index: std::collections::BTreeMap<_, u32> = names.into_iter().zip(0..).collect();
    let mut traces = Vec::new();
    for run in runs.values() {
        let mut trace = ActivationTrace::new();
        for (step, record) in run.as_object().into_iter().flatten() {
            let Ok(step) = step.parse::<u32>() else { continue };
            let mut values = Vec::new();
            for (sprite, features) in record["features"].as_object().into_iter().flatten() {
                for (feature, value) in features.as_object().into_iter().flatten() {
                    if let (Some(&node), Some(value)) = (index.get(&(sprite.clone(), feature.clone())), value.as_f64())
                    {
                        values.push((node, value));
                    }
                }
            }
            trace.record_step(step, &values);
        }
        traces.push(trace);
    }
    traces
}

#[test]
fn surprise_on_whisker_fixture() {
    let Some(fixture) = fruit_catching_fixture() else {
        println!("SKIP: no Whisker mirror with GroundTruthFruitCatching.json");
        return;
    };
    let runs = fixture_traces(&fixture);
    assert_eq!(runs.len(), 5);
    let reference = ActivationTrace::merged(&runs);

    // Five runs are far below Whisker's 30 samples: nothing is judged, nothing is surprising,
    // and the average is 0 over the compared steps.
    let report = analyse(&reference, Some(&runs[0]), &SurpriseConfig::default());
    assert_eq!(report.surprise_count, 0);
    assert!(report.judgements.is_empty());
    assert_eq!(report.compared_steps, runs[0].step_count());
    assert_eq!(report.average_lsa, Some(0.0));

    // Judging every sample: a run that is part of its reference is never surprising — its own
    // value alone gives the density K(0)/(n·h), so the LSA stays far below 30.
    let all = SurpriseConfig { min_samples: 1, ..SurpriseConfig::default() };
    for run in &runs {
        let report = analyse(&reference, Some(run), &all);
        assert_eq!(report.surprise_count, 0);
        assert!(report.judgements.iter().all(|j| j.lsa < 5.0));
        assert!(!report.judgements.is_empty());
    }

    // Leaving a run out of the reference: its deviations are judged; the result is stable.
    let held_out: Vec<usize> = (0..runs.len())
        .map(|k| {
            let others = ActivationTrace::merged(runs.iter().enumerate().filter(|(i, _)| *i != k).map(|(_, r)| r));
            let first = analyse(&others, Some(&runs[k]), &all);
            let second = analyse(&others, Some(&runs[k]), &all);
            assert_eq!(first, second);
            first.surprise_count
        })
        .collect();
    println!("fixture leave-one-out surprise counts: {held_out:?}");
    assert!(held_out.iter().any(|&c| c > 0));
}
