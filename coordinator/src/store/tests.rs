//! Tests of the store's typed reads (and a helper the export tests share).

use super::*;
use clowder_proto::{Provenance, RunResult, RunStatus};
use prost::Message;

pub(crate) fn run(id: &str, project: &str, seed: u64) -> Run {
    Run {
        run_id: id.into(),
        dataset: "d".into(),
        project: project.into(),
        project_hash: format!("h-{project}"),
        algorithm: "random".into(),
        config_json: "{\"algorithm\":\"random\"}".into(),
        seed,
        budget: Budget::Executions(7),
    }
}

/// Stores final results (status, result) through the writer thread, as the coordinator does.
pub(crate) fn finish(store: Store, results: Vec<(&str, &str, RunResult)>) {
    let (w, handle) = StoreWriter::spawn(store, Box::new(|_| {})).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    for (i, (id, status, r)) in results.into_iter().enumerate() {
        let fin = StoredFinal {
            status: status.into(),
            digest: r.digest.clone(),
            coverage: r.coverage,
            steps: r.steps,
            error: r.error.clone(),
        };
        let write = FinalWrite {
            run_id: id.into(),
            fin,
            attempts: 2,
            result: r.encode_to_vec(),
            index: i,
            worker_id: "w".into(),
        };
        rt.block_on(w.commit_final(write)).unwrap();
    }
    drop(w);
    handle.join().unwrap();
}

fn ok(digest: &str) -> RunResult {
    RunResult {
        status: RunStatus::Ok as i32,
        digest: digest.into(),
        suite_json: format!("[\"{digest}\"]"),
        provenance: Some(Provenance { host: "h".into(), ..Default::default() }),
        ..Default::default()
    }
}

#[test]
fn typed_reads_select_order_and_decode() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path()).unwrap();
    let first = [run("a", "q", 2), run("b", "p", 1), run("c", "p", 3)];
    s.submit("e", "name = 'e'", &first, &[]).unwrap();
    s.submit("e", "name = 'e' # again", &first[..2], &[]).unwrap();
    finish(s, vec![("a", "ok", ok("da")), ("b", "limit", ok("db"))]);

    let s = Store::open_read_only(dir.path()).unwrap();
    let visit = |q: RunQuery<'_>| {
        let mut seen = Vec::new();
        s.for_each_run(&q, |r: StoredRun| -> Result<(), StoreError> {
            seen.push((r.run.run_id, r.status, r.generation, r.result.map(|x| x.digest)));
            Ok(())
        })
        .unwrap();
        seen
    };
    let all = visit(RunQuery { with_result: true, ..Default::default() });
    // Export order: project, algorithm, seed.
    let ids: Vec<&str> = all.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(ids, ["b", "c", "a"]);
    assert_eq!(all[0], ("b".into(), "limit".into(), 2, Some("db".into())));
    assert_eq!(all[1], ("c".into(), "pending".into(), 1, None));
    let latest = visit(RunQuery { generation: Some(2), ..Default::default() });
    assert_eq!(latest.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), ["b", "a"]);
    assert!(latest.iter().all(|r| r.3.is_none()), "results are read only when asked for");
    let done = visit(RunQuery { statuses: &["ok", "pending"], ..Default::default() });
    assert_eq!(done.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), ["c", "a"]);

    // The first row's other fields come back as stored.
    let mut b = None;
    s.for_each_run(&RunQuery { statuses: &["limit"], ..Default::default() }, |r| -> Result<(), StoreError> {
        b = Some(r);
        Ok(())
    })
    .unwrap();
    let b = b.unwrap();
    assert_eq!(b.run, run("b", "p", 1));
    assert_eq!((b.attempts, b.digest.as_str(), b.engine_version.as_str()), (2, "db", clowder_vm::ENGINE_VERSION));

    assert_eq!(s.run_result("a").unwrap().unwrap().suite_json, "[\"da\"]");
    assert!(s.run_result("c").unwrap().is_none(), "pending: no result");
    assert!(s.run_result("zz").is_err(), "unknown run");
    let subs = s.submissions().unwrap();
    assert_eq!(
        subs.iter().map(|x| (x.generation, x.experiment_toml.as_str())).collect::<Vec<_>>(),
        [(1, "name = 'e'"), (2, "name = 'e' # again")]
    );
    assert!(s.determinism_failures().unwrap().is_empty());
    // A snapshot hands its closure's result (and error) back.
    assert_eq!(s.snapshot(|s| s.current_generation()).unwrap(), 2);
}

#[test]
fn a_corrupt_result_is_an_error_naming_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path()).unwrap();
    s.submit("e", "", &[run("a", "p", 1)], &[]).unwrap();
    s.conn.execute("UPDATE runs SET status = 'ok', result = x'ffffffff' WHERE run_id = 'a'", []).unwrap();
    let q = RunQuery { with_result: true, ..Default::default() };
    let e = s.for_each_run(&q, |_| -> Result<(), StoreError> { Ok(()) }).unwrap_err();
    assert!(e.to_string().contains("run a: stored result does not decode"), "{e}");
    assert!(s.run_result("a").unwrap_err().to_string().contains("run a"));
    // Without results the row reads fine.
    assert!(s.for_each_run(&RunQuery::default(), |_| -> Result<(), StoreError> { Ok(()) }).is_ok());
}
