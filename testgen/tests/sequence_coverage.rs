//! Sequence coverage of generated runs: present, consistent with the library, outside the
//! digest, and readable from results written before it existed.

use std::sync::Arc;

use clowder_testgen::sequence::{Alphabet, suite_coverage};
use clowder_testgen::testkit::{Arg, ProjectBuilder};
use clowder_testgen::{Algorithm, AlgorithmConfig, Budget, RunOutcome, generate, result};

/// Keys, a click and a wait-dependent statement: several symbols per run.
fn program() -> ProjectBuilder {
    let mut p = ProjectBuilder::new();
    p.global_var("n");
    let s = p.sprite("S");
    let t = p.t(s);
    let flag = t.when_flag();
    let set = t.set_var("n", Arg::n(0.0));
    t.script(flag, &[set]);
    for key in ["space", "a", "left arrow"] {
        let k = t.when_key(key);
        let ch = t.change_var("n", Arg::n(1.0));
        let n = t.var("n");
        let c = t.gt(Arg::b(&n), Arg::n(4.0));
        let say = t.say(Arg::t(key));
        let iff = t.if_(&c, &[say]);
        t.script(k, &[ch, iff]);
    }
    let c = t.when_clicked();
    let w = t.wait(2.0);
    let hide = t.hide();
    t.script(c, &[w, hide]);
    p
}

#[test]
fn runs_report_sequence_coverage_of_both_suites() {
    let p = Arc::new(program().load());
    for alg in [Algorithm::Random, Algorithm::Mosa, Algorithm::Mio] {
        let o = generate(Arc::clone(&p), &AlgorithmConfig::new(alg), 3, Budget::Steps(6000), &mut |_| {}).expect("run");
        let name = alg.name();
        let k = o.seq_alphabet.expect("computed");
        let suite_alphabet = Alphabet::from_tests(o.suite.iter().map(|t| t.events.as_slice()));
        assert!(k as usize >= suite_alphabet.len() && k >= 2, "{name}: |Σ| = {k}");
        for v in [o.seq_kh2, o.seq_kh3, o.seq_win2, o.seq_win3, o.seq_kh2_unmin, o.seq_kh3_unmin] {
            assert!((0.0..=1.0).contains(&v), "{name}: {v}");
        }
        // Minimised tests are subsequences of archive tests: no new Kuhn–Higdon tuples.
        assert!(o.seq_kh2 <= o.seq_kh2_unmin && o.seq_kh3 <= o.seq_kh3_unmin, "{name}");
        // Symbols of Σ outside the suite change denominators only: the covered counts over
        // the suite's own symbols, over the run's denominators, give the reported values.
        let c = suite_coverage(&suite_alphabet, o.suite.iter().map(|t| t.events.as_slice()));
        let k = f64::from(k);
        let want = [
            c.kh2.covered as f64 / (k * (k - 1.0)),
            if k < 3.0 { 1.0 } else { c.kh3.covered as f64 / (k * (k - 1.0) * (k - 2.0)) },
            c.win2.covered as f64 / (k * k),
            c.win3.covered as f64 / (k * k * k),
        ];
        let got = [o.seq_kh2, o.seq_kh3, o.seq_win2, o.seq_win3];
        for (w, g) in want.iter().zip(got) {
            assert!((w - g).abs() < 1e-12, "{name}: {want:?} vs {got:?}");
        }
        // The digest covers the timeline and the suite only.
        assert_eq!(o.digest, result::digest(&o.timeline, &o.suite), "{name}");
    }
}

#[test]
fn results_without_sequence_coverage_still_load() {
    let p = Arc::new(program().load());
    let o = generate(p, &AlgorithmConfig::new(Algorithm::Random), 1, Budget::Steps(2000), &mut |_| {}).expect("run");
    let mut json = serde_json::to_value(&o).expect("serialise");
    let map = json.as_object_mut().expect("object");
    map.retain(|k, _| !k.starts_with("seq_"));
    let old: RunOutcome = serde_json::from_value(json).expect("an older result loads");
    assert_eq!((old.seq_alphabet, old.seq_kh3, old.seq_win2_unmin), (None, 0.0, 0.0));
    assert_eq!(old.digest, o.digest);
}
