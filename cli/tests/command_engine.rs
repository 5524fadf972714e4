//! Engine kind `command` (docs/engines.md) with real processes: a small fake tool (a Python
//! script the tests write) that finishes, hangs, allocates without bound, fails, writes half a
//! statistics file, or is running when its worker is killed with SIGKILL. Every case must end
//! in exactly one row with the right status and reason. Limits are short: seconds per test.

mod harness;

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness::*;

/// The fake tool: `tool.py MODE SUBJECT SEED OUT`.
const TOOL: &str = r#"#!/usr/bin/env python3
import json, os, sys, time
mode, subject, seed, out = sys.argv[1:5]
assert open(subject).read().startswith("def "), "the subject is in place"
stats = '"TargetModule","Coverage","CoverageTimeline_T1","CoverageTimeline_T2"\n'
if mode == "ok":
    print("searching", os.path.basename(subject), "with seed", seed)
    print(json.dumps({"coverage": 0.75, "covered": 3, "total": 4, "timeline": [[0.5, 0.25], [1.0, 0.75]]}))
elif mode == "hang":
    print(json.dumps({"coverage": 0.25, "covered": 1, "total": 4, "timeline": [[0.5, 0.25]]}), flush=True)
    time.sleep(600)
elif mode == "alloc":
    hog = []
    while True:
        hog.append(bytearray(16 << 20))
elif mode == "exit3":
    sys.stderr.write("fake tool: cannot import the module under test\n")
    sys.exit(3)
elif mode == "stats":
    open(os.path.join(out, "statistics.csv"), "w").write(stats + '"m","0.5","0.25","0.5"\n')
elif mode == "halfstats":
    open(os.path.join(out, "statistics.csv"), "w").write(stats + '"m","0.5"')
elif mode == "slow":
    time.sleep(3)
    print(json.dumps({"coverage": 1.0}))
"#;

/// A temp folder with the tool and one subject module; returns (tool, subject).
fn setup(t: &Path) -> (PathBuf, PathBuf) {
    let tool = t.join("tool.py");
    std::fs::write(&tool, TOOL).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::create_dir_all(t.join("subjects")).unwrap();
    let subject = t.join("subjects/m.py");
    std::fs::write(&subject, "def f(x):\n    return 1 if x > 0 else 2\n").unwrap();
    (tool, subject)
}

/// An experiment of the fake tool with one configuration per mode. Its wall limit ends the
/// `hang` mode; 6 s leaves the cgroup's OOM killer time to stop `alloc` on a loaded machine
/// (with 2 s, one CI run saw `alloc` reach the wall limit first).
fn experiment(t: &Path, name: &str, subject: &Path, parser: &str, modes: &[&str], extra: &str) -> PathBuf {
    let mut s = format!(
        "name = \"{name}\"\ndataset = \"{}\"\nseeds = 1\nbudget = {{ seconds = 1 }}\n\n[engine]\nkind = \"command\"\n\
         tool = \"fake 1\"\ncommand = [\"{}\", \"{{mode}}\", \"{{subject}}\", \"{{seed}}\", \"{{out}}\"]\n\
         parser = \"{parser}\"\nwall_seconds = 6\n{extra}\n",
        subject.display(),
        t.join("tool.py").display()
    );
    for m in modes {
        s.push_str(&format!("\n[[algorithms]]\nname = \"{m}\"\nparams = {{ mode = \"{m}\" }}\n"));
    }
    let p = t.join(format!("{name}.toml"));
    std::fs::write(&p, s).unwrap();
    p
}

/// Runs of the study by algorithm (mode) name.
fn rows_by_mode(csv: &Path) -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>> {
    csv_rows(csv).into_iter().map(|r| (r["algorithm"].clone(), r)).collect()
}

#[test]
fn limits_failures_and_results_of_a_command_each_give_one_row() {
    let _g = serial();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (_, subject) = setup(t);
    let modes = ["ok", "hang", "alloc", "exit3"];
    let exp = experiment(t, "faults", &subject, "json-last-line", &modes, "\n[limits]\nmemory_mb = 200\n");
    let out = t.join("out");
    assert!(run_quiet(&exp, &out).success(), "failed runs still complete the study");
    let results = out.join("faults");
    let rows = rows_by_mode(&results.join("runs.csv"));
    assert_eq!(rows.len(), 4, "one row per run: {rows:?}");

    let ok = &rows["ok"];
    assert_eq!((ok["status"].as_str(), ok["coverage"].as_str()), ("ok", "0.75"), "{ok:?}");
    assert_eq!((ok["covered"].as_str(), ok["total_targets"].as_str()), ("3", "4"));
    assert_eq!(ok["reproducible"], "false", "not declared deterministic");
    // The timeline is on the exports' axis (30 steps per second), change points only.
    let tl: Vec<(String, String)> = csv_rows(&results.join("timeline.csv"))
        .into_iter()
        .filter(|r| r["algorithm"] == "ok")
        .map(|r| (r["steps"].clone(), r["covered"].clone()))
        .collect();
    let want = [("0", "0"), ("15", "1"), ("30", "3")].map(|(a, b)| (a.to_string(), b.to_string()));
    assert_eq!(tl, want);
    // The tool's output is kept on disk, in a folder of its own per run.
    let stdout = std::fs::read_to_string(results.join("work").join(&ok["run_id"]).join("stdout.txt")).unwrap();
    assert!(stdout.starts_with("searching m.py with seed 1"), "{stdout}");

    let hang = &rows["hang"];
    assert_eq!(hang["status"], "limit", "{hang:?}");
    assert!(hang["error"].starts_with("wall-time limit of 6 s reached"), "{hang:?}");
    assert_eq!(hang["coverage"], "0.25", "the partial result the tool printed before it hung: {hang:?}");

    let alloc = &rows["alloc"];
    assert_eq!(alloc["status"], "limit", "{alloc:?}");
    assert!(alloc["error"].starts_with("memory limit of 200 MiB exceeded"), "{alloc:?}");
    assert!(alloc["error"].contains("no partial result"), "it printed nothing: {alloc:?}");

    let exit3 = &rows["exit3"];
    assert_eq!(exit3["status"], "error", "{exit3:?}");
    assert!(exit3["error"].contains("exited with code 3"), "{exit3:?}");
    assert!(exit3["error"].contains("fake tool: cannot import the module under test"), "stderr tail: {exit3:?}");

    let prov = csv_rows(&results.join("provenance.csv"));
    assert!(prov.iter().all(|p| p["attempts"] == "1"), "limits and errors are final: {prov:?}");
    assert!(prov.iter().all(|p| p["memory_limit_bytes"] == (200u64 << 20).to_string()), "{prov:?}");
}

#[test]
fn pynguin_statistics_and_half_a_csv() {
    let _g = serial();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (_, subject) = setup(t);
    let exp = experiment(t, "csv", &subject, "pynguin", &["stats", "halfstats"], "");
    let out = t.join("out");
    assert!(run_quiet(&exp, &out).success());
    let rows = rows_by_mode(&out.join("csv/runs.csv"));
    let stats = &rows["stats"];
    assert_eq!((stats["status"].as_str(), stats["coverage"].as_str()), ("ok", "0.5"), "{stats:?}");
    let half = &rows["halfstats"];
    assert_eq!(half["status"], "error", "{half:?}");
    assert!(half["error"].contains("statistics.csv: row 1 has 2 fields but the header has 4"), "{half:?}");
    assert!(half["error"].contains("truncated"), "{half:?}");
}

/// kill -9 of the worker while the tool runs: the tool dies with it, the lease expires, another
/// worker runs it again, and the study has exactly one row.
#[test]
fn killed_worker_tool_run_is_leased_again_once() {
    let _g = serial();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (_, subject) = setup(t);
    let exp = experiment(t, "kill", &subject, "json-last-line", &["slow"], "");
    let text = std::fs::read_to_string(&exp).unwrap().replace("wall_seconds = 6", "wall_seconds = 20");
    std::fs::write(&exp, text).unwrap();
    let out = t.join("out");
    let (mut coord, url) = coordinator(&exp, &out, "127.0.0.1:0", &["--lease-timeout", "1"], &t.join("coord.log"));
    let token = out.join("kill/token");
    let cache = t.join("cache");
    let mut a = worker(&url, &token, "a", &["--slots", "1"], &t.join("a.log"), &cache);
    wait_until("worker a to start the tool", Duration::from_secs(20), || !children_of(a.pid()).is_empty());
    std::thread::sleep(Duration::from_millis(300));
    let tools = children_of(a.pid());
    a.kill9();
    wait_until("the tool to die with its worker", Duration::from_secs(5), || tools.iter().all(|&p| !alive(p)));
    let mut b = worker(&url, &token, "b", &["--slots", "1"], &t.join("b.log"), &cache);
    assert!(b.wait(Duration::from_secs(40)).success(), "worker b failed:\n{}", b.log_text());
    assert!(coord.wait(Duration::from_secs(20)).success(), "coordinator failed:\n{}", coord.log_text());
    let rows = csv_rows(&out.join("kill/runs.csv"));
    assert_eq!(rows.len(), 1, "exactly one row: {rows:?}");
    assert_eq!((rows[0]["status"].as_str(), rows[0]["coverage"].as_str()), ("ok", "1.0"), "{:?}", rows[0]);
    let prov = csv_rows(&out.join("kill/provenance.csv"));
    assert_eq!(prov[0]["attempts"], "2", "leased again");
    assert!(prov[0]["worker_id"].ends_with("-b"), "{:?}", prov[0]);
}
