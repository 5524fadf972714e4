//! The whole selection study on a small project: determinism, the kill matrix against a run's
//! own mutation analysis, and the GA against unranked selection on the rankings it maximises.

use std::sync::Arc;

use super::*;
use crate::config::{Algorithm, AlgorithmConfig};
use crate::mutation::{Baseline, MutationMode, Verdict};
use crate::testkit::{Arg, ProjectBuilder};
use crate::{DEFAULT_WORK_CAP, Prepared};

/// A cat whose moves depend on the order of keys: `b` moves it only after three `a`s, space
/// moves it only right after `b` (the counter `v` is reset by every other key), a click
/// resets the counter.
fn project() -> Arc<clowder_vm::Project> {
    let mut p = ProjectBuilder::new();
    p.global_var("v");
    p.global_var("armed");
    let cat = p.sprite("Cat");
    let t = p.t(cat);
    let flag = t.when_flag();
    let init = t.set_var("v", Arg::n(0.0));
    let init2 = t.set_var("armed", Arg::n(0.0));
    let home = t.goto_xy(Arg::n(0.0), Arg::n(0.0));
    t.script(flag, &[init, init2, home]);

    let ka = t.when_key("a");
    let inc = t.change_var("v", Arg::n(1.0));
    let disarm = t.set_var("armed", Arg::n(0.0));
    t.script(ka, &[inc, disarm]);

    let kb = t.when_key("b");
    let v = t.var("v");
    let cond = t.gt(Arg::b(&v), Arg::n(2.0));
    let step = t.change_x(Arg::n(10.0));
    let arm = t.set_var("armed", Arg::n(1.0));
    let guarded = t.if_(&cond, &[step, arm]);
    t.script(kb, &[guarded]);

    let ks = t.when_key("space");
    let armed = t.var("armed");
    let is_armed = t.eq(Arg::b(&armed), Arg::n(1.0));
    let jump = t.change_x(Arg::n(100.0));
    let reset = t.set_var("v", Arg::n(0.0));
    let guarded2 = t.if_(&is_armed, &[jump]);
    t.script(ks, &[guarded2, reset]);

    let click = t.when_clicked();
    let zero = t.set_var("v", Arg::n(0.0));
    t.script(click, &[zero]);
    Arc::new(p.load())
}

fn pool_options(size: usize, threads: usize) -> PoolOptions {
    PoolOptions {
        size,
        seed: 7,
        config: AlgorithmConfig::new(Algorithm::Random),
        work_cap: DEFAULT_WORK_CAP,
        mutants: MutationMode::All,
        threads,
    }
}

fn study_options() -> StudyOptions {
    StudyOptions {
        sizes: vec![3, 6],
        repetitions: 12,
        best_of: 200,
        ga: GaParams::default(),
        seed: 11,
        rankings: Ranking::ALL.to_vec(),
    }
}

fn same_pool(a: &Pool, b: &Pool) -> bool {
    a.tests == b.tests
        && a.statements == b.statements
        && a.words == b.words
        && a.alphabet == b.alphabet
        && a.mutants == b.mutants
        && a.steps == b.steps
}

/// Everything of a study but the times.
type Deterministic<'a> = (&'a [(Ranking, usize, u128)], &'a [Cell], &'a [RiskPoint]);

fn deterministic(s: &ProjectStudy) -> Deterministic<'_> {
    (&s.universe, &s.cells, &s.risk)
}

#[test]
fn the_study_is_deterministic_and_the_ga_maximises_its_ranking() {
    let project = project();
    let prepared = Prepared::new(&project);
    let quiet = |_: PoolProgress| {};
    let pool = build_pool(Arc::clone(&project), &prepared, &pool_options(80, 1), &quiet).expect("pool");
    assert_eq!(pool.tests.len(), 80);
    assert!(pool.tests.iter().all(|t| !t.events.is_empty() && t.assertions.len() == t.events.len()));
    assert!(pool.alphabet.len() >= 4, "keys a, b, space, the click, waits: {:?}", pool.alphabet.symbols());
    assert!(pool.statements.iter().all(|s| s.len() >= 4), "every test runs the flag script");
    let judged: Vec<&PoolMutant> = pool.mutants.iter().filter(|m| m.judged).collect();
    assert!(judged.len() >= 5, "{:?}", pool.mutants);
    assert!(judged.iter().any(|m| !m.killed_by.is_empty()), "some mutant is killed by some pool test");

    // The threads replaying mutants do not change the pool.
    let again = build_pool(Arc::clone(&project), &prepared, &pool_options(80, 3), &quiet).expect("pool");
    assert!(same_pool(&pool, &again));

    let opts = study_options();
    let a = run_study(&pool, &opts);
    let b = run_study(&again, &opts);
    assert_eq!(deterministic(&a), deterministic(&b));
    assert_eq!(a.cells.len(), 2 * Ranking::ALL.len() * Method::ALL.len());
    assert_eq!(a.seconds.len(), a.cells.len());
    assert!(!a.risk.is_empty());

    // On the ranking it maximises the GA is never worse than unranked selection, and over all
    // (ranking, n) it is better.
    let find = |r, m, n| a.cells.iter().find(|c| c.ranking == r && c.method == m && c.n == n).expect("cell");
    let (mut ga_total, mut unranked_total) = (0, 0);
    for &n in &opts.sizes {
        for r in Ranking::ALL {
            let (g, u) = (find(r, Method::Ga, n), find(r, Method::Unranked, n));
            assert!(g.rank_sum >= u.rank_sum, "{r:?} n={n}: GA {} < unranked {}", g.rank_sum, u.rank_sum);
            let universe = a.universe.iter().find(|x| x.0 == r).map_or(0, |x| x.1);
            assert!(g.rank_max as usize <= universe);
            ga_total += g.rank_sum;
            unranked_total += u.rank_sum;
        }
    }
    assert!(ga_total > unranked_total, "GA {ga_total}, unranked {unranked_total}");
    // Unranked selection draws one suite per repetition whatever the ranking.
    assert_eq!(find(Ranking::Kh2, Method::Unranked, 3).caught, find(Ranking::Win3, Method::Unranked, 3).caught);
    // Another seed selects other suites.
    let c = run_study(&pool, &StudyOptions { seed: 12, ..opts.clone() });
    assert_ne!(deterministic(&a).1, deterministic(&c).1);
}

#[test]
fn kill_rows_agree_with_the_runs_own_mutation_analysis() {
    let project = project();
    let prepared = Prepared::new(&project);
    let pool = build_pool(Arc::clone(&project), &prepared, &pool_options(25, 2), &|_| {}).expect("pool");
    // A mutant is killed by a suite exactly when its kill row has a killing test of the suite.
    let cfg = AlgorithmConfig::new(Algorithm::Random);
    let params = crate::config::Params::from_config(&cfg).expect("params");
    let info = crate::events::EventInfo::new(&project, 7);
    let subject = crate::mutation::analysis::Subject {
        project: Arc::clone(&project),
        model: &prepared.model,
        info: &info,
        params: &params,
        seed: 7,
    };
    let suite: Vec<crate::Test> = pool.tests[..6].to_vec();
    let baseline = Baseline::new(&subject, &suite);
    let all = crate::mutation::enumerate(&project);
    assert_eq!(all.len(), pool.mutants.len());
    for (m, pm) in all.iter().zip(&pool.mutants) {
        assert_eq!(m.id, pm.id);
        let (v, _) = baseline.judge(m);
        let killed_by_suite = pm.killed_by.iter().any(|&t| t < 6);
        assert_eq!(v.verdict == Verdict::Killed, killed_by_suite, "{}: {:?} vs {:?}", m.id, v, pm.killed_by);
        if let Some(t) = v.test {
            assert_eq!(pm.killed_by.first().copied(), Some(t), "the first killing test");
        }
    }
}
