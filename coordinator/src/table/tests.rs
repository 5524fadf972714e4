//! Tests of the run table.

use super::*;

fn run(id: &str, seed: u64) -> Run {
    Run {
        run_id: id.into(),
        dataset: "d".into(),
        project: "p".into(),
        project_hash: "h".into(),
        algorithm: "random".into(),
        config_json: "{}".into(),
        seed,
        budget: Budget::Steps(10),
    }
}

fn table(runs: Vec<InitialRun>, now: Instant) -> RunTable {
    RunTable::new(
        TableConfig {
            experiment: "t".into(),
            lease_timeout: Duration::from_secs(10),
            generation: 1,
            memory_limit_bytes: 0,
            cpu_limit_seconds: 0,
            determinism_failures: 0,
            mutation: "off".into(),
            work_cap: 0,
        },
        runs,
        BTreeMap::new(),
        now,
    )
}

fn ok(run_id: &str, lease_id: &str, digest: &str) -> RunResult {
    RunResult {
        run_id: run_id.into(),
        lease_id: lease_id.into(),
        status: RunStatus::Ok as i32,
        digest: digest.into(),
        // Our own runs; external tools not declared deterministic report `false`.
        reproducible: true,
        ..Default::default()
    }
}

fn commit(t: &mut RunTable, d: ReportDecision, now: Instant) {
    match d {
        ReportDecision::Commit(w) => t.finish_commit(&w, now),
        other => panic!("expected a commit, got {other:?}"),
    }
}

#[test]
fn lease_expiry_requeues_then_gives_up() {
    let t0 = Instant::now();
    let mut t = table(vec![(run("a", 1), None, None)], t0);
    let w = t.register("x", "", "h", "p", 1, t0);
    let mut now = t0;
    for attempt in 1..=MAX_ATTEMPTS {
        let l = t.lease(&w, 4, now);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].attempt, attempt);
        now += Duration::from_secs(11);
        let (log, give_ups) = t.expire(now);
        assert_eq!(log.len(), 1);
        if attempt < MAX_ATTEMPTS {
            assert!(give_ups.is_empty());
        } else {
            assert_eq!(give_ups.len(), 1);
            assert_eq!(give_ups[0].fin.status, "infra_failure");
            t.finish_commit(&give_ups[0], now);
        }
    }
    let p = t.progress(now);
    assert_eq!((p.done, p.failed, p.infra_failed, p.pending, p.running), (1, 1, 1, 0, 0));
    assert!(p.finished);
}

#[test]
fn late_result_of_expired_lease_counts_and_revokes_the_new_lease() {
    let t0 = Instant::now();
    let mut t = table(vec![(run("a", 1), None, None)], t0);
    let w1 = t.register("one", "", "h", "p", 1, t0);
    let w2 = t.register("two", "", "h", "p", 1, t0);
    let l1 = t.lease(&w1, 1, t0).remove(0).lease_id;
    let now = t0 + Duration::from_secs(11);
    t.expire(now);
    let l2 = t.lease(&w2, 1, now).remove(0).lease_id;
    let d = t.begin_report(ok("a", &l1, "D"), "", now);
    commit(&mut t, d, now);
    assert_eq!(t.heartbeat(&w2, &[(l2.clone(), "a".into())], now), vec![l2.clone()]);
    // The second completion is compared by digest.
    assert!(matches!(t.begin_report(ok("a", &l2, "D"), "", now), ReportDecision::Duplicate));
    assert!(matches!(t.begin_report(ok("a", &l2, "E"), "", now), ReportDecision::Mismatch(_)));
    // A result that is not expected to repeat (a wall-clock budget, an external tool not
    // declared deterministic): the first one stands.
    let unrepeatable = RunResult { reproducible: false, ..ok("a", &l2, "E") };
    assert!(matches!(t.begin_report(unrepeatable, "", now), ReportDecision::Duplicate));
    let p = t.progress(now);
    assert_eq!((p.done, p.running, p.pending), (1, 0, 0));
}

#[test]
fn revoked_leases_stay_revoked_at_the_next_heartbeat() {
    let t0 = Instant::now();
    let mut t = table(vec![(run("a", 1), None, None), (run("b", 2), None, None)], t0);
    let w = t.register("x", "", "h", "p", 2, t0);
    let leases: Vec<(String, String)> = t.lease(&w, 2, t0).into_iter().map(|s| (s.lease_id, s.run_id)).collect();
    assert_eq!(leases.len(), 2);
    assert_eq!(t.cancel(true), 2);
    // The worker still holds both: it must be told to stop them, not have them adopted back.
    let mut revoked = t.heartbeat(&w, &leases, t0);
    revoked.sort();
    let mut expected: Vec<String> = leases.iter().map(|(l, _)| l.clone()).collect();
    expected.sort();
    assert_eq!(revoked, expected);
    let p = t.progress(t0);
    assert_eq!((p.running, p.pending), (0, 2));
    assert!(t.is_done());
}

#[test]
fn restart_adopts_hinted_and_unknown_leases() {
    let t0 = Instant::now();
    let runs = vec![
        (run("a", 1), None, Some(("L1.5".to_string(), "w1.1-x".to_string()))),
        (run("b", 2), None, None),
        (
            run("c", 3),
            Some(StoredFinal {
                status: "ok".into(),
                digest: "D".into(),
                coverage: 1.0,
                steps: 1,
                error: String::new(),
            }),
            None,
        ),
    ];
    let mut t = table(runs, t0);
    assert_eq!(t.progress(t0).resumed, 1);
    let w = t.register("x", "", "h", "p", 2, t0);
    // The hinted run is held, the pending one is leased.
    let l = t.lease(&w, 5, t0);
    assert_eq!(l.iter().map(|s| s.run_id.as_str()).collect::<Vec<_>>(), vec!["b"]);
    // A worker still running "a" under its old lease keeps it.
    assert!(t.heartbeat(&w, &[("L1.5".into(), "a".into())], t0).is_empty());
    // An unknown lease for a finished run is revoked.
    assert_eq!(t.heartbeat(&w, &[("L0.9".into(), "c".into())], t0), vec!["L0.9".to_string()]);
    let d = t.begin_report(ok("a", "L1.5", "X"), "", t0);
    commit(&mut t, d, t0);
    let p = t.progress(t0);
    assert_eq!((p.done, p.running, p.pending), (2, 1, 0));
}

#[test]
fn release_does_not_count_an_attempt() {
    let t0 = Instant::now();
    let mut t = table(vec![(run("a", 1), None, None)], t0);
    let w = t.register("x", "", "h", "p", 1, t0);
    let l = t.lease(&w, 1, t0).remove(0);
    assert_eq!(t.release(&w, &[(l.lease_id, l.run_id)], t0), 1);
    let again = t.lease(&w, 1, t0).remove(0);
    assert_eq!(again.attempt, 1);
}

#[test]
fn limit_is_a_final_result_compared_by_digest() {
    let t0 = Instant::now();
    let stored_limit = StoredFinal {
        status: "limit".into(),
        digest: "S".into(),
        coverage: 0.5,
        steps: 7,
        error: "work cap of 10 reached in the search (deterministic; partial result)".into(),
    };
    let mut t = table(vec![(run("a", 1), None, None), (run("b", 2), Some(stored_limit), None)], t0);
    // Resumed: a stored `limit` run is finished, counted on its own, not as a failure.
    let p = t.progress(t0);
    assert_eq!((p.done, p.limited, p.failed, p.pending), (1, 1, 0, 1));
    let w = t.register("x", "", "h", "p", 1, t0);
    let l = t.lease(&w, 4, t0);
    assert_eq!(l.iter().map(|s| s.run_id.as_str()).collect::<Vec<_>>(), vec!["a"], "b is not run again");
    let limited = |lease: &str, digest: &str| RunResult {
        status: RunStatus::Limit as i32,
        error: "work cap of 10 reached in the search (deterministic; partial result)".into(),
        limit_phase: "search".into(),
        work: 12,
        ..ok("a", lease, digest)
    };
    match t.begin_report(limited(&l[0].lease_id, "D"), "", t0) {
        ReportDecision::Commit(c) => {
            assert_eq!(c.fin.status, "limit");
            assert_eq!(c.fin.digest, "D");
            let stored: RunResult = prost::Message::decode(c.result.as_slice()).unwrap();
            assert_eq!((stored.work, stored.limit_phase.as_str()), (12, "search"), "stored with its result");
            t.finish_commit(&c, t0);
        }
        other => panic!("expected a commit, got {other:?}"),
    }
    let p = t.progress(t0);
    assert_eq!((p.done, p.limited, p.failed, p.running), (2, 2, 0, 0));
    assert!(p.finished && p.recent_failures.is_empty(), "{:?}", p.recent_failures);
    // A second completion is compared like an `ok` one: same digest duplicate, else mismatch.
    assert!(matches!(t.begin_report(limited("late", "D"), "", t0), ReportDecision::Duplicate));
    match t.begin_report(limited("late", "E"), "", t0) {
        ReportDecision::Mismatch(m) => {
            assert_eq!((m.stored_status.as_str(), m.reported_status.as_str()), ("limit", "limit"));
        }
        other => panic!("expected a mismatch, got {other:?}"),
    }
    assert!(matches!(t.begin_report(ok("a", "late", "D"), "", t0), ReportDecision::Mismatch(_)), "status differs");
    // Infrastructure reports cannot undo it.
    let infra = RunResult { status: RunStatus::InfraFailure as i32, ..ok("a", "late", "") };
    assert!(matches!(t.begin_report(infra, "", t0), ReportDecision::Handled));
    assert_eq!(t.progress(t0).limited, 2);
}

#[test]
fn cpu_limit_is_an_infrastructure_failure_retried_once() {
    let t0 = Instant::now();
    let mut t = table(vec![(run("a", 1), None, None)], t0);
    let w = t.register("x", "", "h", "p", 1, t0);
    let reason =
        format!("{}1 s exceeded (RLIMIT_CPU after 1 s; depends on the machine …)", clowder_proto::CPU_LIMIT_REASON);
    let report = |t: &mut RunTable, lease: String| {
        let r = RunResult {
            run_id: "a".into(),
            lease_id: lease,
            status: RunStatus::InfraFailure as i32,
            error: reason.clone(),
            ..Default::default()
        };
        t.begin_report(r, "", t0)
    };
    let first = t.lease(&w, 1, t0).remove(0);
    assert!(matches!(report(&mut t, first.lease_id), ReportDecision::Handled), "tried once more");
    let second = t.lease(&w, 1, t0).remove(0);
    assert_eq!(second.attempt, 2);
    match report(&mut t, second.lease_id) {
        ReportDecision::Commit(g) => {
            assert_eq!(g.fin.status, "infra_failure");
            assert_eq!(g.attempts, CPU_LIMIT_ATTEMPTS);
            // The reason keeps its start: resuming with a higher limit and `verify` rely on it.
            assert_eq!(clowder_proto::cpu_limit_of_reason(&g.fin.error), Some(1), "{}", g.fin.error);
            assert!(g.fin.error.contains("depends on the machine"), "{}", g.fin.error);
            t.finish_commit(&g, t0);
        }
        other => panic!("expected the give-up, got {other:?}"),
    }
    let p = t.progress(t0);
    assert_eq!((p.done, p.failed, p.infra_failed, p.limited), (1, 1, 1, 0));
    assert!(t.lease(&w, 1, t0).is_empty(), "final");
}

#[test]
fn infra_failure_report_requeues_and_real_result_replaces_give_up() {
    let t0 = Instant::now();
    let mut t = table(vec![(run("a", 1), None, None)], t0);
    let w = t.register("x", "", "h", "p", 1, t0);
    for _ in 0..MAX_ATTEMPTS {
        let l = t.lease(&w, 1, t0).remove(0);
        let r = RunResult {
            run_id: "a".into(),
            lease_id: l.lease_id,
            status: RunStatus::InfraFailure as i32,
            error: "fetch failed".into(),
            ..Default::default()
        };
        match t.begin_report(r, "", t0) {
            ReportDecision::Handled => {}
            ReportDecision::Commit(g) => t.finish_commit(&g, t0),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(t.progress(t0).infra_failed, 1);
    let d = t.begin_report(ok("a", "old", "D"), "", t0);
    commit(&mut t, d, t0);
    let p = t.progress(t0);
    assert_eq!((p.done, p.failed, p.infra_failed), (1, 0, 0));
}
