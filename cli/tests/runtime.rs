//! The distributed runtime with real processes: `clowder coordinator`,
//! `clowder worker` and `clowder run` started as separate programs, killed with
//! SIGKILL, restarted, and checked through their exports, stores and journals.
//!
//! The tests in this file run one at a time (they share the machine's cores and
//! kill processes at chosen moments); each is bounded by timeouts.

mod harness;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness::*;

fn smoke_dataset() -> PathBuf {
    root().join("datasets/smoke")
}

/// Adds a script no test can cover (a `say` under `if 1 > 2`) to the first sprite of a
/// project, so that a run on it uses its whole budget.
fn add_never_script(p: &mut serde_json::Value) {
    let blocks = p["targets"][1]["blocks"].as_object_mut().unwrap();
    for (id, b) in [
        (
            "u1",
            r#"{"opcode":"event_whenflagclicked","next":"u2","parent":null,"inputs":{},"fields":{},"shadow":false,"topLevel":true,"x":0,"y":300}"#,
        ),
        (
            "u2",
            r#"{"opcode":"control_if","next":null,"parent":"u1","inputs":{"CONDITION":[2,"u3"],"SUBSTACK":[2,"u4"]},"fields":{},"shadow":false,"topLevel":false}"#,
        ),
        (
            "u3",
            r#"{"opcode":"operator_gt","next":null,"parent":"u2","inputs":{"OPERAND1":[1,[10,"1"]],"OPERAND2":[1,[10,"2"]]},"fields":{},"shadow":false,"topLevel":false}"#,
        ),
        (
            "u4",
            r#"{"opcode":"looks_say","next":null,"parent":"u2","inputs":{"MESSAGE":[1,[10,"never"]]},"fields":{},"shadow":false,"topLevel":false}"#,
        ),
    ] {
        blocks.insert(id.to_string(), serde_json::from_str(b).unwrap());
    }
}

/// A project that can never be covered fully: the smoke project `counter` plus that script.
fn endless_project(dir: &Path) -> PathBuf {
    let mut p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(smoke_dataset().join("counter.json")).unwrap()).unwrap();
    add_never_script(&mut p);
    let dir = dir.join("endless");
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("endless.json");
    std::fs::write(&f, serde_json::to_string(&p).unwrap()).unwrap();
    f
}

/// The smoke projects, each with that script: no run ends early by full coverage, so a
/// study's runs last long enough for every worker started with it to get some.
fn endless_smoke(dir: &Path) -> PathBuf {
    let out = dir.join("endless-smoke");
    std::fs::create_dir_all(&out).unwrap();
    for e in std::fs::read_dir(smoke_dataset()).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "json") {
            let mut p: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            add_never_script(&mut p);
            std::fs::write(out.join(path.file_name().unwrap()), serde_json::to_string(&p).unwrap()).unwrap();
        }
    }
    out
}

/// Writes an experiment file; `dataset` is absolute.
fn experiment(
    dir: &Path,
    file: &str,
    name: &str,
    dataset: &Path,
    seeds: &str,
    steps: u64,
    algorithms: &[&str],
) -> PathBuf {
    let mut s = format!(
        "name = \"{name}\"\ndataset = \"{}\"\nseeds = {seeds}\nbudget = {{ steps = {steps} }}\n",
        dataset.display()
    );
    for a in algorithms {
        s.push_str(&format!("\n[[algorithms]]\nname = \"{a}\"\nalgorithm = \"random\"\n"));
        if *a == "random-short" {
            s.push_str("params = { min_events = 1, max_events = 5 }\n");
        }
    }
    let p = dir.join(file);
    std::fs::write(&p, s).unwrap();
    p
}

fn digests(runs_csv: &Path) -> BTreeMap<String, (String, String)> {
    csv_rows(runs_csv).into_iter().map(|r| (r["run_id"].clone(), (r["status"].clone(), r["digest"].clone()))).collect()
}

/// The undisturbed reference: `clowder run` of the same experiment.
fn reference(exp: &Path, out: &Path, slots: &str) -> BTreeMap<String, (String, String)> {
    let st = clowder()
        .arg("run")
        .arg(exp)
        .args(["--quiet", "--workers", slots, "--output"])
        .arg(out)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "reference run failed");
    digests(&out.join(exp_name(exp)).join("runs.csv"))
}

/// Journal lines: (run id, status, digest, new|dup).
fn journal(path: &Path) -> Vec<(String, String, String, String)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let v: Vec<&str> = l.split(' ').collect();
            (v.len() == 4).then(|| (v[0].into(), v[1].into(), v[2].into(), v[3].into()))
        })
        .collect()
}

/// Final results in the store: run id → (status, digest), for finished runs.
fn stored(results: &Path) -> BTreeMap<String, (String, String)> {
    // Read-write open: after a SIGKILL the WAL may need recovery, which a
    // read-only connection cannot do. Nobody else has the store open now.
    let c = rusqlite::Connection::open(results.join("study.sqlite")).unwrap();
    let mut st = c.prepare("SELECT run_id, status, digest FROM runs WHERE status != 'pending'").unwrap();
    st.query_map([], |r| Ok((r.get::<_, String>(0)?, (r.get::<_, String>(1)?, r.get::<_, String>(2)?))))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Finished runs in the store, read while the coordinator writes (WAL readers
/// do not block it).
fn stored_count(results: &Path) -> usize {
    let Ok(c) = rusqlite::Connection::open_with_flags(
        results.join("study.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) else {
        return 0;
    };
    c.query_row("SELECT COUNT(*) FROM runs WHERE status != 'pending'", [], |r| r.get::<_, i64>(0)).unwrap_or(0) as usize
}

/// Budget of a run that takes a few seconds (on `endless_project`).
const LONG_STEPS: u64 = 20_000_000;

/// Acceptance 1: kill -9 a worker in the middle of a run; the lease expires,
/// another worker runs it, exactly one row exists, with the undisturbed digest.
#[test]
fn killed_worker_run_is_leased_again_and_reproduces() {
    let _g = serial();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cache = t.join("cache");
    // One run that takes a few seconds in a dev build.
    let exp = experiment(t, "long.toml", "long", &endless_project(t), "1", LONG_STEPS, &["random"]);
    let want = reference(&exp, &t.join("ref"), "1");
    assert_eq!(want.len(), 1);

    let out = t.join("out");
    let (mut coord, url) = coordinator(&exp, &out, "127.0.0.1:0", &["--lease-timeout", "1"], &t.join("coord.log"));
    let results = out.join("long");
    let token = results.join("token");
    let mut a = worker(&url, &token, "a", &["--slots", "1"], &t.join("a.log"), &cache);
    // Wait until A's run process is executing, let it work a little, then kill A.
    wait_until("worker a to start its run", Duration::from_secs(20), || !children_of(a.pid()).is_empty());
    std::thread::sleep(Duration::from_millis(500));
    let run_procs = children_of(a.pid());
    a.kill9();
    // The run process dies with its worker (no orphan keeps computing).
    wait_until("the run process to die with its worker", Duration::from_secs(5), || {
        run_procs.iter().all(|&p| !alive(p))
    });
    assert!(coord.try_exit().is_none(), "the coordinator keeps serving: {}", coord.log_text());
    let mut b = worker(&url, &token, "b", &["--slots", "1"], &t.join("b.log"), &cache);
    assert!(b.wait(Duration::from_secs(40)).success(), "worker b failed:\n{}", b.log_text());
    assert!(coord.wait(Duration::from_secs(20)).success(), "coordinator failed:\n{}", coord.log_text());
    let log = coord.log_text();
    assert!(log.contains("expired (worker lost)"), "the lease expired: {log}");

    let rows = csv_rows(&results.join("runs.csv"));
    assert_eq!(rows.len(), 1, "exactly one result row");
    let got: BTreeMap<_, _> = digests(&results.join("runs.csv"));
    assert_eq!(got, want, "the re-executed run reproduces the undisturbed digest");
    let prov = csv_rows(&results.join("provenance.csv"));
    assert_eq!(prov[0]["attempts"], "2", "leased twice");
    assert!(prov[0]["worker_id"].ends_with("-b"), "completed by worker b: {:?}", prov[0]);
}

/// A small deterministic generator for the "random" kill moments.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// Acceptance 2: kill -9 the coordinator at (seeded) random moments during a
/// study, at least 20 times, restarting it each time: no acknowledged result is
/// lost, no run has two rows, and every digest equals the uninterrupted run's.
#[test]
fn coordinator_killed_20_times_loses_nothing() {
    let _g = serial();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cache = t.join("cache");
    let exp = experiment(t, "stress.toml", "stress", &smoke_dataset(), "{ from = 1, to = 100 }", 1500, &["random"]);
    let want = reference(&exp, &t.join("ref"), "2");
    assert_eq!(want.len(), 500);

    let out = t.join("out");
    let results = out.join("stress");
    let coord_log = t.join("coord.log");
    let (mut coord, url) = coordinator(&exp, &out, "127.0.0.1:0", &["--lease-timeout", "2"], &coord_log);
    let listen = url.trim_start_matches("http://").to_string();
    let token = results.join("token");
    let journals = [t.join("j1"), t.join("j2")];
    let mut workers: Vec<Proc> = journals
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let j = j.to_string_lossy().to_string();
            worker(
                &url,
                &token,
                &format!("w{i}"),
                &["--slots", "1", "--journal", &j],
                &t.join(format!("w{i}.log")),
                &cache,
            )
        })
        .collect();
    let mut rng = SplitMix(20_260_101);
    let mut kills = 0;
    let mut acked_before: BTreeMap<String, (String, String)> = BTreeMap::new();
    let t0 = Instant::now();
    // 25 kills at seeded random moments, then the study may finish. A moment is
    // tied to progress so that the test means the same on fast and slow
    // machines: after 1–4 more results are stored (or 3 s), plus 0–15 ms.
    while kills < 25 {
        let target = acked_before.len() + rng.range(1, 4) as usize;
        let since = Instant::now();
        while stored_count(&results) < target && since.elapsed() < Duration::from_secs(3) && coord.try_exit().is_none()
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(rng.range(0, 15)));
        if let Some(s) = coord.try_exit() {
            assert!(s.success(), "coordinator failed: {}", coord.log_text());
            break;
        }
        coord.kill9();
        kills += 1;
        // Every result a worker saw acknowledged is in the store, with its digest.
        let store = stored(&results);
        for j in &journals {
            for (run, status, digest, _) in journal(j) {
                let status = match status.as_str() {
                    "RUN_STATUS_OK" => "ok",
                    other => panic!("unexpected status {other}"),
                };
                assert_eq!(
                    store.get(&run),
                    Some(&(status.to_string(), digest.clone())),
                    "acknowledged result of run {run} lost after kill {kills}"
                );
            }
        }
        // Stored results never change.
        for (run, v) in &acked_before {
            assert_eq!(store.get(run), Some(v), "stored result of run {run} changed");
        }
        eprintln!("kill {kills}: {} results stored", store.len());
        acked_before = store;
        assert!(t0.elapsed() < Duration::from_secs(90), "stress test too slow ({kills} kills)");
        if acked_before.len() == want.len() {
            // Everything is stored: what remains is one clean finish.
            eprintln!("the study completed after {kills} kills");
        }
        let (c, _) = coordinator(&exp, &out, &listen, &["--lease-timeout", "2"], &coord_log);
        coord = c;
        if acked_before.len() == want.len() {
            break;
        }
    }
    eprintln!("{} of {} results were stored when the killing stopped", acked_before.len(), want.len());
    assert!(kills >= 20, "only {kills} kills before the study finished: make it longer");
    assert!(coord.wait(Duration::from_secs(30)).success(), "coordinator failed: {}", coord.log_text());
    for w in &mut workers {
        let st = w.wait_or(Duration::from_secs(30));
        assert!(
            st.is_some_and(|s| s.success()),
            "worker failed ({st:?}):\n{}\ncoordinator:\n{}",
            w.log_text(),
            coord.log_text()
        );
    }
    let rows = csv_rows(&results.join("runs.csv"));
    let ids: BTreeSet<&String> = rows.iter().map(|r| &r["run_id"]).collect();
    assert_eq!(ids.len(), rows.len(), "no duplicate rows");
    assert_eq!(digests(&results.join("runs.csv")), want, "digests equal the uninterrupted run's");
    let dets = csv_rows(&results.join("determinism_failures.csv"));
    assert!(dets.is_empty(), "no determinism failures: {dets:?}");
    eprintln!("coordinator killed {kills} times; {} results", rows.len());
}

fn write_cert(dir: &Path) -> (PathBuf, PathBuf) {
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    std::fs::write(&cert, ck.cert.pem()).unwrap();
    std::fs::write(&key, ck.signing_key.serialize_pem()).unwrap();
    (cert, key)
}

/// Acceptance 3: a worker with a missing or wrong token is rejected; a TLS
/// round trip works (and a worker that does not trust the certificate fails).
#[test]
fn token_is_required_and_tls_round_trip_works() {
    let _g = serial();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cache = t.join("cache");
    let exp = experiment(t, "sec.toml", "sec", &smoke_dataset(), "1", 600, &["random"]);
    let (cert, key) = write_cert(t);
    let out = t.join("out");
    let (mut coord, url) = coordinator(
        &exp,
        &out,
        "127.0.0.1:0",
        &["--tls-cert", cert.to_str().unwrap(), "--tls-key", key.to_str().unwrap()],
        &t.join("coord.log"),
    );
    assert!(url.starts_with("https://"), "{url}");
    let token = out.join("sec/token");
    let ca = cert.to_str().unwrap();

    let wrong = t.join("wrong");
    std::fs::write(&wrong, "not-the-token\n").unwrap();
    let mut w = worker(&url, &wrong, "wrong", &["--tls-ca", ca], &t.join("wrong.log"), &cache);
    assert!(!w.wait(Duration::from_secs(20)).success());
    assert!(w.log_text().contains("wrong worker token"), "{}", w.log_text());

    let mut cmd = clowder();
    cmd.args(["worker", "--coordinator", &url, "--tls-ca", ca, "--cache"]).arg(&cache).env_remove("CLOWDER_TOKEN");
    let mut w = Proc::spawn(cmd, t.join("none.log"), "worker without token");
    assert!(!w.wait(Duration::from_secs(20)).success());
    assert!(w.log_text().contains("missing worker token"), "{}", w.log_text());

    // Not trusting the coordinator's certificate: no connection.
    let mut w = worker(&url, &token, "untrusting", &["--reconnect-timeout", "2"], &t.join("untrusting.log"), &cache);
    assert!(!w.wait(Duration::from_secs(30)).success());
    assert!(w.log_text().contains("unreachable"), "{}", w.log_text());

    // Status needs the token too.
    let st = clowder().args(["status", &url, "--once", "--tls-ca", ca, "--token", "nope"]).output().unwrap();
    assert!(!st.status.success());
    let st = clowder()
        .args(["status", &url, "--once", "--json", "--tls-ca", ca, "--token-file"])
        .arg(&token)
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    assert!(String::from_utf8_lossy(&st.stdout).contains("\"total\":5"));

    // Nothing ran so far; a trusted worker with the token completes the study over TLS.
    assert!(stored(&out.join("sec")).is_empty());
    let mut w = worker(&url, &token, "good", &["--tls-ca", ca], &t.join("good.log"), &cache);
    assert!(w.wait(Duration::from_secs(30)).success(), "{}", w.log_text());
    assert!(coord.wait(Duration::from_secs(20)).success(), "{}", coord.log_text());
    let rows = csv_rows(&out.join("sec/runs.csv"));
    assert_eq!(rows.len(), 5);
    assert!(rows.iter().all(|r| r["status"] == "ok"));
}

/// Acceptance 4: a coordinator and three worker processes on different
/// loopback addresses complete the smoke experiment (its projects made endless, so
/// that every worker gets runs); adding seeds afterwards runs only the new runs.
#[test]
fn three_workers_on_loopback_addresses_then_more_seeds() {
    const SPREAD_STEPS: u64 = 2_000_000;
    let _g = serial();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cache = t.join("cache");
    // Runs that use their whole budget: with runs of a few milliseconds, a worker that
    // registers a moment late could find none left. At 20 000 steps the 30 runs were done in
    // about a second, and one test in three left a worker without any (a worker leases about
    // a second of runs at once); at 150 000 steps still one in four; at 1 000 000 steps (round
    // one about ten seconds) once in a loaded `.ci/run` of a debug build. At SPREAD_STEPS
    // round one takes about twice that.
    let smoke = endless_smoke(t);
    let exp3 = experiment(t, "smoke3.toml", "smoke", &smoke, "3", SPREAD_STEPS, &["random", "random-short"]);
    let out = t.join("out");
    let results = out.join("smoke");

    let round = |exp: &Path, tag: &str| -> Vec<(String, String, String, String)> {
        let (mut coord, url) = coordinator(exp, &out, "127.0.0.2:0", &[], &t.join(format!("coord-{tag}.log")));
        assert!(url.starts_with("http://127.0.0.2:"), "{url}");
        let token = results.join("token");
        let mut ws: Vec<(Proc, PathBuf)> = (3..=5)
            .map(|i| {
                let j = t.join(format!("journal-{tag}-{i}"));
                let js = j.to_string_lossy().to_string();
                let bind = format!("127.0.0.{i}");
                let w = worker(
                    &url,
                    &token,
                    &format!("lo{i}"),
                    &["--slots", "1", "--no-pin", "--bind", &bind, "--journal", &js],
                    &t.join(format!("w-{tag}-{i}.log")),
                    &cache,
                );
                (w, j)
            })
            .collect();
        let mut lines = Vec::new();
        // Hang guards, not speed checks: round one takes about 20 s alone, and a loaded
        // two-core `.ci/run` once took a worker past 40 s.
        for (w, j) in &mut ws {
            assert!(w.wait(Duration::from_secs(120)).success(), "{}", w.log_text());
            lines.extend(journal(j));
        }
        assert!(coord.wait(Duration::from_secs(60)).success(), "{}", coord.log_text());
        let log = coord.log_text();
        for i in 3..=5 {
            assert!(log.contains(&format!("registered from 127.0.0.{i}:")), "worker from 127.0.0.{i}: {log}");
        }
        lines
    };

    let first = round(&exp3, "a");
    assert_eq!(first.len(), 30, "each run delivered once");
    let rows_a = csv_rows(&results.join("runs.csv"));
    assert_eq!(rows_a.len(), 30);
    assert!(rows_a.iter().all(|r| r["status"] == "ok"));
    let peers: BTreeSet<String> = csv_rows(&results.join("provenance.csv"))
        .iter()
        .map(|r| r["peer"].rsplit_once(':').map(|x| x.0.to_string()).unwrap_or_default())
        .collect();
    assert_eq!(peers, ["127.0.0.3", "127.0.0.4", "127.0.0.5"].iter().map(|s| s.to_string()).collect());

    // Same study, seeds 1..=5: only the 20 new runs execute.
    let exp5 = experiment(t, "smoke5.toml", "smoke", &smoke, "5", SPREAD_STEPS, &["random", "random-short"]);
    let second = round(&exp5, "b");
    let new_runs: BTreeSet<&String> = second.iter().map(|l| &l.0).collect();
    assert_eq!(second.len(), 20, "only the new runs were executed: {second:?}");
    assert_eq!(new_runs.len(), 20);
    let rows_b = csv_rows(&results.join("runs.csv"));
    assert_eq!(rows_b.len(), 50);
    let old: BTreeSet<&String> = first.iter().map(|l| &l.0).collect();
    assert!(new_runs.is_disjoint(&old));
    // The first 30 rows are untouched (even their timing: they were not re-run).
    let by_id: BTreeMap<&String, &BTreeMap<String, String>> = rows_b.iter().map(|r| (&r["run_id"], r)).collect();
    for r in &rows_a {
        assert_eq!(by_id.get(&r["run_id"]).copied(), Some(r));
    }
    // And they equal what one `clowder run` with 5 seeds computes.
    let want = reference(&exp5, &t.join("ref"), "2");
    assert_eq!(digests(&results.join("runs.csv")), want);
}

/// SIGTERM drains a worker: its running run is stopped and handed back
/// without counting an attempt, and the worker exits cleanly.
#[test]
fn sigterm_drains_and_hands_back_the_running_run() {
    let _g = serial();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cache = t.join("cache");
    let exp = experiment(t, "drain.toml", "drain", &endless_project(t), "1", LONG_STEPS, &["random"]);
    let out = t.join("out");
    let (mut coord, url) = coordinator(&exp, &out, "127.0.0.1:0", &["--lease-timeout", "30"], &t.join("coord.log"));
    let token = out.join("drain/token");
    let mut a = worker(&url, &token, "a", &["--slots", "1", "--drain-timeout", "0"], &t.join("a.log"), &cache);
    wait_until("worker a to start its run", Duration::from_secs(20), || !children_of(a.pid()).is_empty());
    std::thread::sleep(Duration::from_millis(300));
    assert!(Command::new("kill").args(["-TERM", &a.pid().to_string()]).status().unwrap().success());
    assert!(a.wait(Duration::from_secs(10)).success(), "a drained cleanly:\n{}", a.log_text());
    assert!(a.log_text().contains("1 handed back"), "{}", a.log_text());
    // With a 30 s lease timeout, only the hand-back lets b start at once.
    let mut b = worker(&url, &token, "b", &["--slots", "1"], &t.join("b.log"), &cache);
    assert!(b.wait(Duration::from_secs(25)).success(), "{}", b.log_text());
    assert!(coord.wait(Duration::from_secs(20)).success(), "{}", coord.log_text());
    let prov = csv_rows(&out.join("drain/provenance.csv"));
    assert_eq!(prov.len(), 1);
    assert_eq!(prov[0]["attempts"], "1", "a hand-back is not an attempt");
    assert!(prov[0]["worker_id"].ends_with("-b"));
}

fn slurm_up() -> Result<(), String> {
    let out = Command::new("sinfo").args(["-h", "-o", "%t"]).output().map_err(|e| format!("sinfo: {e}"))?;
    let states = String::from_utf8_lossy(&out.stdout).to_string();
    if out.status.success() && states.lines().any(|s| matches!(s.trim(), "idle" | "mix" | "alloc")) {
        Ok(())
    } else {
        Err(format!("no usable node (sinfo: {:?} {})", states.trim(), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// Acceptance 5: SLURM for real. `clowder slurm --submit` starts pilot workers
/// as a job array on the local cluster (scripts/slurm-up.sh), they join the
/// coordinator and complete the smoke study. SKIP when no cluster is up.
#[test]
fn slurm_pilot_workers_complete_the_smoke_study() {
    let _g = serial();
    if let Err(why) = slurm_up() {
        // Straight to stderr: libtest captures eprintln!, and a SKIP must show.
        drop(std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!(
                "SKIP: SLURM is not available ({why}); run scripts/slurm-up.sh as root to start a local cluster\n"
            ),
        ));
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let exp = experiment(t, "slurm.toml", "smoke", &smoke_dataset(), "3", 3000, &["random", "random-short"]);
    let out = t.join("out");
    let (mut coord, _url) = coordinator(&exp, &out, "127.0.0.1:0", &[], &t.join("coord.log"));
    let sub = clowder()
        .arg("slurm")
        .arg(&exp)
        .args(["--output"])
        .arg(&out)
        .args(["--workers", "2", "--cpus-per-worker", "1", "--time", "00:10:00", "--submit"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&sub.stdout).to_string();
    assert!(sub.status.success(), "clowder slurm failed: {stdout}{}", String::from_utf8_lossy(&sub.stderr));
    let job = stdout
        .lines()
        .find_map(|l| l.strip_prefix("submitted job ").and_then(|r| r.split_whitespace().next()))
        .unwrap_or_else(|| panic!("no job id in {stdout}"))
        .to_string();
    let results = out.join("smoke");
    let script = std::fs::read_to_string(results.join("slurm/workers.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-1") && script.contains("#SBATCH --signal=TERM@"), "{script}");
    let finished = coord.wait_or(Duration::from_secs(120));
    if !finished.is_some_and(|s| s.success()) {
        let _ = Command::new("scancel").arg(&job).status();
        let q = Command::new("squeue").args(["-a", "-j", &job]).output().unwrap();
        let mut logs = String::new();
        for e in std::fs::read_dir(results.join("slurm")).unwrap().flatten() {
            logs.push_str(&format!(
                "== {}\n{}\n",
                e.path().display(),
                std::fs::read_to_string(e.path()).unwrap_or_default()
            ));
        }
        panic!(
            "the study did not complete through SLURM ({finished:?}):\n{}\nsqueue:\n{}\n{logs}",
            coord.log_text(),
            String::from_utf8_lossy(&q.stdout)
        );
    }
    let rows = csv_rows(&results.join("runs.csv"));
    assert_eq!(rows.len(), 30);
    assert!(rows.iter().all(|r| r["status"] == "ok"));
    let workers: BTreeSet<String> =
        csv_rows(&results.join("provenance.csv")).iter().map(|r| r["worker_id"].clone()).collect();
    assert!(
        workers.iter().all(|w| w.contains(&format!("slurm-{job}_"))),
        "every run executed by a pilot of job {job}: {workers:?}"
    );
    // The pilots leave the queue on their own once told the study is done.
    wait_until("the job array to finish", Duration::from_secs(60), || {
        let q = Command::new("squeue").args(["-h", "-j", &job]).output().unwrap();
        String::from_utf8_lossy(&q.stdout).trim().is_empty()
    });
    let logs: Vec<String> = std::fs::read_dir(results.join("slurm"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("worker-"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert_eq!(logs.len(), 2, "one log per pilot");
    assert!(logs.iter().all(|l| l.contains("results delivered")), "{logs:?}");
}

/// `clowder verify` re-executes finished runs and catches a changed digest;
/// `clowder export` rewrites the coordinator's exports byte for byte.
#[test]
fn verify_reexecutes_runs_with_the_study_mutation_setting() {
    let _g = serial();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let exp = experiment(t, "m.toml", "m", &smoke_dataset(), "1", 1500, &["random"]);
    // With mutation analysis on, the suite (and so the digest) carries the assertions:
    // verify must re-execute with the same setting to reproduce it.
    let text = std::fs::read_to_string(&exp).unwrap();
    let text =
        text.replacen("budget = { steps = 1500 }\n", "budget = { steps = 1500 }\nmutation = { sample = 2 }\n", 1);
    assert!(text.contains("mutation"), "{text}");
    std::fs::write(&exp, text).unwrap();
    let out = t.join("out");
    reference(&exp, &out, "2");
    let v = clowder().arg("verify").arg(out.join("m")).args(["--runs", "3"]).output().unwrap();
    let text = String::from_utf8_lossy(&v.stdout).to_string();
    assert!(v.status.success(), "{text}{}", String::from_utf8_lossy(&v.stderr));
    assert!(text.contains("verify: 3 reproduced, 0 differ"), "{text}");
}

#[test]
fn verify_reproduces_digests_and_export_rewrites_the_same_files() {
    let _g = serial();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let exp = experiment(t, "v.toml", "v", &smoke_dataset(), "2", 1500, &["random"]);
    let out = t.join("out");
    reference(&exp, &out, "2");
    let results = out.join("v");
    let verify = |n: &str| clowder().arg("verify").arg(&results).args(["--runs", n]).output().unwrap();
    let ok = verify("4");
    let text = String::from_utf8_lossy(&ok.stdout).to_string();
    assert!(ok.status.success(), "{text}{}", String::from_utf8_lossy(&ok.stderr));
    assert!(text.contains("verify: 4 reproduced, 0 differ"), "{text}");

    let before = std::fs::read(results.join("runs.csv")).unwrap();
    let again = t.join("again");
    let st = clowder().arg("export").arg(&results).arg("--out").arg(&again).stdout(Stdio::null()).status().unwrap();
    assert!(st.success());
    assert_eq!(std::fs::read(again.join("runs.csv")).unwrap(), before, "export = the coordinator's runs.csv");
    assert_eq!(
        std::fs::read(again.join("timeline.csv")).unwrap(),
        std::fs::read(results.join("timeline.csv")).unwrap()
    );

    // A tampered digest: every run is checked now, so the tampered one is found.
    let c = rusqlite::Connection::open(results.join("study.sqlite")).unwrap();
    let n = c.execute("UPDATE runs SET digest = 'bad' WHERE run_id = (SELECT MIN(run_id) FROM runs)", []).unwrap();
    assert_eq!(n, 1);
    drop(c);
    let bad = verify("10");
    let text = String::from_utf8_lossy(&bad.stdout).to_string();
    assert!(!bad.status.success(), "{text}");
    assert!(text.contains("DIFF") && text.contains("1 differ"), "{text}");
}

/// The per-run memory limit applies and a run that exceeds it fails with that
/// reason (deterministic, not retried); provenance says which mechanism applied.
#[test]
fn memory_limit_stops_the_run_and_says_so() {
    let _g = serial();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    // The smoke project `counter` with a list of 150 000 items: tens of MiB once
    // loaded, far over a 4 MiB limit.
    let mut p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(smoke_dataset().join("counter.json")).unwrap()).unwrap();
    let items: Vec<String> = (0..150_000).map(|i| format!("item number {i:08}")).collect();
    p["targets"][0]["lists"] = serde_json::json!({ "big": ["big", items] });
    std::fs::create_dir_all(t.join("big")).unwrap();
    std::fs::write(t.join("big/big.json"), serde_json::to_string(&p).unwrap()).unwrap();
    let exp = experiment(t, "m.toml", "m", &t.join("big/big.json"), "1", 1500, &["random"]);
    let mut text = std::fs::read_to_string(&exp).unwrap();
    text.push_str("\n[limits]\nmemory_mb = 4\n");
    std::fs::write(&exp, text).unwrap();
    let out = t.join("out");
    let st = run_quiet(&exp, &out);
    assert!(st.success(), "a failed run still completes the study");
    let rows = csv_rows(&out.join("m/runs.csv"));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["status"], "error", "{:?}", rows[0]);
    assert!(rows[0]["error"].contains("memory limit of 4 MiB"), "{:?}", rows[0]);
    let prov = csv_rows(&out.join("m/provenance.csv"));
    assert!(["cgroup-v1", "rlimit-as"].contains(&prov[0]["memory_limit_kind"].as_str()), "{:?}", prov[0]);
    assert_eq!(prov[0]["memory_limit_bytes"], (4u64 << 20).to_string());
    assert_eq!(prov[0]["attempts"], "1", "not retried");
}

/// The per-run CPU time limit stops a run that would take too long. It is an infrastructure
/// guard (its outcome depends on the machine): the run is tried once more, then recorded as
/// `infra_failure` with a reason that says so, and the study still completes.
#[test]
fn cpu_limit_stops_a_long_run_and_says_so() {
    let _g = serial();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    // The smoke project `counter` plus a branch no test can reach: the search never reaches
    // full coverage and runs to its step budget: 200 million steps, tens of CPU seconds
    // (about 30 s in a debug build), so without the limit the run ends `ok` and this fails.
    let mut p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(smoke_dataset().join("counter.json")).unwrap()).unwrap();
    let b = |opcode: &str, next: Option<&str>, top: bool, inputs: serde_json::Value| {
        serde_json::json!({"opcode": opcode, "next": next, "parent": null, "inputs": inputs, "fields": {},
                           "shadow": false, "topLevel": top, "x": 0, "y": 0})
    };
    let blocks = p["targets"][1]["blocks"].as_object_mut().unwrap();
    blocks.insert("u_hat".into(), b("event_whenflagclicked", Some("u_if"), true, serde_json::json!({})));
    blocks.insert(
        "u_if".into(),
        b("control_if", None, false, serde_json::json!({"CONDITION": [2, "u_eq"], "SUBSTACK": [2, "u_say"]})),
    );
    blocks.insert(
        "u_eq".into(),
        b("operator_equals", None, false, serde_json::json!({"OPERAND1": [1, [10, "1"]], "OPERAND2": [1, [10, "2"]]})),
    );
    blocks.insert("u_say".into(), b("looks_say", None, false, serde_json::json!({"MESSAGE": [1, [10, "never"]]})));
    std::fs::create_dir_all(t.join("long")).unwrap();
    std::fs::write(t.join("long/long.json"), serde_json::to_string(&p).unwrap()).unwrap();
    let exp = experiment(t, "l.toml", "l", &t.join("long/long.json"), "1", 200_000_000, &["random"]);
    let mut text = std::fs::read_to_string(&exp).unwrap();
    text.push_str("\n[limits]\ncpu_seconds = 1\n");
    std::fs::write(&exp, text).unwrap();
    let out = t.join("out");
    let st = run_quiet(&exp, &out);
    assert!(st.success(), "a failed run still completes the study");
    let rows = csv_rows(&out.join("l/runs.csv"));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["status"], "infra_failure", "{:?}", rows[0]);
    assert!(rows[0]["error"].starts_with("CPU time limit of 1 s exceeded"), "{:?}", rows[0]);
    assert!(rows[0]["error"].contains("depends on the machine"), "{:?}", rows[0]);
    assert!(rows[0]["coverage"].is_empty() && rows[0]["digest"].is_empty(), "no result: {:?}", rows[0]);
    let prov = csv_rows(&out.join("l/provenance.csv"));
    assert_eq!(prov[0]["attempts"], "2", "retried once");
    // `verify` does not re-execute it (without the limit that would take the whole budget).
    let v = clowder().arg("verify").arg(out.join("l")).args(["--runs", "5"]).output().unwrap();
    let text = String::from_utf8_lossy(&v.stdout).to_string();
    assert_eq!(v.status.code(), Some(2), "nothing to re-execute: {text}");
    assert!(text.contains("1 stopped by the CPU time limit not eligible"), "{text}");
    // Resumed with a higher limit, the run gets another chance (here it is stopped again, by
    // the new limit); with the same limit it would stay as it is.
    let text = std::fs::read_to_string(&exp).unwrap().replace("cpu_seconds = 1\n", "cpu_seconds = 2\n");
    std::fs::write(&exp, text).unwrap();
    let st = run_quiet(&exp, &out);
    assert!(st.success());
    let rows = csv_rows(&out.join("l/runs.csv"));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["status"], "infra_failure", "{:?}", rows[0]);
    assert!(rows[0]["error"].starts_with("CPU time limit of 2 s exceeded"), "run again: {:?}", rows[0]);
    assert_eq!(csv_rows(&out.join("l/provenance.csv"))[0]["attempts"], "2", "retried once again");
    let before = std::fs::read_to_string(out.join("l/provenance.csv")).unwrap();
    // Resumed with the same limit, the failure stands: nothing runs again.
    let st = run_quiet(&exp, &out);
    assert!(st.success());
    assert_eq!(std::fs::read_to_string(out.join("l/provenance.csv")).unwrap(), before, "not run again");
}

/// The work cap (`budget.work`) ends runs deterministically: `limit` rows with their partial
/// result and reason, identical with one and two workers, final when the study is resumed,
/// re-executed by `verify`, analysed by `mutate-study` and counted by `analyze`.
#[test]
fn work_cap_ends_runs_with_status_limit_the_same_on_one_and_two_workers() {
    let _g = serial();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let exp = experiment(t, "w.toml", "w", &smoke_dataset(), "3", 3000, &["random", "random-short"]);
    // 400 000 work units per phase: the smoke projects' runs do about 65 000 to 1 900 000 in all,
    // so some reach the cap (in the search or in the minimisation) and some do not.
    let text = std::fs::read_to_string(&exp).unwrap().replacen(
        "budget = { steps = 3000 }",
        "budget = { steps = 3000, work = 400000 }",
        1,
    );
    assert!(text.contains("work = 400000"), "{text}");
    std::fs::write(&exp, text).unwrap();
    let (one, two) = (t.join("one"), t.join("two"));
    reference(&exp, &one, "1");
    reference(&exp, &two, "2");
    let results = one.join("w");
    let rows = csv_rows(&results.join("runs.csv"));
    assert_eq!(rows.len(), 30);
    // Everything but the wall-clock column is the same whatever the number of workers.
    let without_time = |rows: &[BTreeMap<String, String>]| -> Vec<BTreeMap<String, String>> {
        rows.iter()
            .cloned()
            .map(|mut r| {
                r.remove("duration_ms");
                r
            })
            .collect()
    };
    assert_eq!(without_time(&rows), without_time(&csv_rows(&two.join("w/runs.csv"))), "1 vs 2 workers");
    assert_eq!(
        std::fs::read(results.join("timeline.csv")).unwrap(),
        std::fs::read(two.join("w/timeline.csv")).unwrap()
    );
    let num = |r: &BTreeMap<String, String>, k: &str| -> u64 {
        r[k].parse().unwrap_or_else(|e| panic!("{k} = {:?}: {e}", r[k]))
    };
    let limit: Vec<&BTreeMap<String, String>> = rows.iter().filter(|r| r["status"] == "limit").collect();
    let ok: Vec<&BTreeMap<String, String>> = rows.iter().filter(|r| r["status"] == "ok").collect();
    assert!(!limit.is_empty() && !ok.is_empty(), "some runs reach the cap, some do not: {rows:?}");
    assert_eq!(limit.len() + ok.len(), rows.len(), "no failures: {rows:?}");
    for r in &limit {
        assert!(
            r["error"].starts_with("work cap of 400000 reached in the ")
                && r["error"].ends_with(" (deterministic; partial result)"),
            "{r:?}"
        );
        // The search may do the cap; minimisation up to 1.25 caps in all, assertions 1.5.
        let least = if r["error"].contains(" the search ") { 400000 } else { 500000 };
        assert!(num(r, "work") >= least, "{r:?}");
        assert!(!r["coverage"].is_empty() && !r["digest"].is_empty(), "a result: {r:?}");
    }
    for r in &ok {
        assert!(r["error"].is_empty() && num(r, "work") > 0, "{r:?}");
    }
    // Runs the cap stopped in the search have partial coverage; others in the minimisation.
    assert!(
        limit.iter().any(|r| r["error"].contains(" the search ") && num(r, "covered") < num(r, "total_targets")),
        "{limit:?}"
    );
    assert!(limit.iter().any(|r| r["error"].contains(" the minimisation ")), "{limit:?}");
    let timeline = csv_rows(&results.join("timeline.csv"));
    for r in &limit {
        assert!(timeline.iter().any(|p| p["run_id"] == r["run_id"] && p["status"] == "limit"), "timeline of {r:?}");
    }

    // Resumed: `limit` is final, nothing runs again; the summary counts those runs on their own.
    let before = std::fs::read_to_string(results.join("provenance.csv")).unwrap();
    let again = clowder().arg("run").arg(&exp).args(["--quiet", "--workers", "1", "--output"]).arg(&one).output();
    let again = again.unwrap();
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(std::fs::read_to_string(results.join("provenance.csv")).unwrap(), before, "nothing ran again");
    let summary = String::from_utf8_lossy(&again.stdout).to_string();
    let header: Vec<&str> = summary.lines().next().unwrap_or("").split_whitespace().take(5).collect();
    assert_eq!(header, ["algorithm", "ok", "limit", "failed", "pending"], "{summary}");
    for alg in ["random", "random-short"] {
        let count = |status: &str| rows.iter().filter(|r| r["algorithm"] == alg && r["status"] == status).count();
        let line = summary.lines().find(|l| l.split_whitespace().next() == Some(alg)).unwrap();
        let cells: Vec<&str> = line.split_whitespace().take(5).collect();
        let want = [alg.to_string(), count("ok").to_string(), count("limit").to_string(), "0".into(), "0".into()];
        assert_eq!(cells, want, "{summary}");
    }

    // `verify` re-executes `limit` runs with the study's cap and gets their digests again.
    let v = clowder().arg("verify").arg(&results).args(["--runs", "30"]).output().unwrap();
    let text = String::from_utf8_lossy(&v.stdout).to_string();
    assert!(v.status.success(), "{text}{}", String::from_utf8_lossy(&v.stderr));
    assert!(text.contains("verify: 30 reproduced, 0 differ"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("ok ") && l.contains(": limit ")), "{text}");

    // `mutate-study` analyses the (partial) suites of `limit` runs too.
    let ms = t.join("ms");
    let m = clowder().arg("mutate-study").arg(&results).args(["--sample", "1", "--out"]).arg(&ms).output().unwrap();
    assert!(m.status.success(), "{}", String::from_utf8_lossy(&m.stderr));
    let mutants = csv_rows(&ms.join("mutants.csv"));
    assert!(limit.iter().any(|r| mutants.iter().any(|m| m["run_id"] == r["run_id"])), "{mutants:?}");

    // The analysis reads the export (with its `work` column) and counts `limit` runs as results.
    let a = clowder().arg("analyze").arg(&results).output().unwrap();
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let table = std::fs::read_to_string(results.join("report/limit_runs.csv")).unwrap();
    for alg in ["random", "random-short"] {
        let n = limit.iter().filter(|r| r["algorithm"] == alg).count();
        assert!(table.contains(&format!("\nsmoke,{alg},{n},15\n")), "{table}");
    }
}

/// `clowder status FOLDER` on a results folder whose coordinator has stopped says so, instead
/// of reading the folder's path as a URL.
#[test]
fn status_of_a_folder_without_a_coordinator_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_clowder")).args(["status", "--once"]).arg(tmp.path()).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no coordinator is serving") && err.contains("coordinator.addr"), "{err}");
}

/// `clowder status --cancel` stops a study: nothing more is handed out, the
/// coordinator exports what it has (the rest `pending`) and exits with code 3;
/// started again, it resumes.
#[test]
fn status_cancel_stops_the_study_and_it_resumes() {
    let _g = serial();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let exp = experiment(t, "c.toml", "c", &smoke_dataset(), "1", 600, &["random"]);
    let out = t.join("out");
    let results = out.join("c");
    let (mut coord, url) = coordinator(&exp, &out, "127.0.0.1:0", &[], &t.join("coord.log"));
    let st = clowder().args(["status", &url, "--once", "--cancel", "--token-file"]).arg(results.join("token")).output();
    let st = st.unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    assert!(String::from_utf8_lossy(&st.stdout).contains("cancelled"), "{}", String::from_utf8_lossy(&st.stdout));
    assert_eq!(coord.wait(Duration::from_secs(20)).code(), Some(3), "{}", coord.log_text());
    let rows = csv_rows(&results.join("runs.csv"));
    assert_eq!(rows.len(), 5);
    assert!(rows.iter().all(|r| r["status"] == "pending" && r["coverage"].is_empty()), "{rows:?}");
    // Resumed: a worker completes it.
    let (mut coord, url) = coordinator(&exp, &out, "127.0.0.1:0", &[], &t.join("coord2.log"));
    let mut w = worker(&url, &results.join("token"), "w", &["--slots", "1"], &t.join("w.log"), &t.join("cache"));
    assert!(w.wait(Duration::from_secs(30)).success(), "{}", w.log_text());
    assert!(coord.wait(Duration::from_secs(20)).success(), "{}", coord.log_text());
    assert!(csv_rows(&results.join("runs.csv")).iter().all(|r| r["status"] == "ok"));
}

/// A study run with its stderr on a pipe (a log, `nohup`): no bar can be drawn there, so the
/// progress comes as plain lines, and the last one says the whole count.
#[test]
fn progress_on_a_log_is_plain_lines() {
    let _g = serial();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let exp = experiment(t, "smoke2.toml", "smoke", &smoke_dataset(), "2", 300, &["random"]);
    let out = clowder().arg("run").arg(&exp).arg("--output").arg(t.join("out")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    let total = csv_rows(&t.join("out/smoke/runs.csv")).len();
    assert!(total > 0);
    let last = format!("{total}/{total} runs (100.0 %)");
    assert!(err.lines().any(|l| l.starts_with(&last) && l.contains(" failed [")), "stderr: {err}");
    // Nothing of a bar's drawing (carriage returns, escapes) reaches the log.
    assert!(!err.contains('\r') && !err.contains('\u{1b}'), "stderr: {err}");
}
