//! `clowder dataset …` through the real binary: scan, stats (table, CSV, PNG),
//! sample and ids on the smoke projects, and stats on the random-sample corpus.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn clowder(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_clowder")).args(args).output().expect("start clowder");
    assert!(
        out.status.success(),
        "clowder {args:?} failed\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn scan_stats_sample_and_ids_on_the_smoke_projects() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("ds");
    std::fs::create_dir(&ds).unwrap();
    for e in std::fs::read_dir(repo().join("datasets/smoke")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            std::fs::copy(&p, ds.join(p.file_name().unwrap())).unwrap();
        }
    }
    let out = clowder(&["dataset", "scan", s(&ds)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("5 projects (5 added"), "{text}");
    assert!(ds.join("dataset.toml").exists());

    let png = tmp.path().join("h.png");
    let csv = tmp.path().join("s.csv");
    let out = clowder(&["dataset", "stats", s(&ds), "--png", s(&png), "--csv", s(&csv)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("5 projects, 5 loaded, 0 failed to load"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("statements")), "{text}");
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    assert_eq!(std::fs::read_to_string(&csv).unwrap().lines().count(), 6);

    let split = tmp.path().join("split");
    let rest = tmp.path().join("rest");
    let out =
        clowder(&["dataset", "sample", s(&ds), "--n", "2", "--seed", "9", "--out", s(&split), "--rest", s(&rest)]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("sampled 2 of 5"));
    let count = |d: &Path| {
        std::fs::read_dir(d)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "json"))
            .count()
    };
    assert_eq!((count(&split), count(&rest)), (2, 3));

    let ids = tmp.path().join("ids.txt");
    clowder(&[
        "dataset",
        "ids",
        "--range",
        "1000-2000",
        "--batches",
        "3",
        "--batch-size",
        "10",
        "--seed",
        "1",
        "--out",
        s(&ids),
    ]);
    let text = std::fs::read_to_string(&ids).unwrap();
    assert!(text.starts_with("# clowder dataset ids"));
    let parsed = clowder_dataset_tools::fetch::parse_ids(&text).unwrap();
    assert!(!parsed.is_empty() && parsed.len() <= 30 && parsed.iter().all(|i| (1000..2000).contains(i)));
}

#[test]
fn fetch_reports_failures_and_exits_cleanly_without_a_server() {
    // Nothing listens on this port: every project is a transient network failure,
    // reported per project, and the command says to re-run.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let tmp = tempfile::tempdir().unwrap();
    let ids = tmp.path().join("ids.txt");
    std::fs::write(&ids, "123\n456\n").unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let out = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .args(["dataset", "fetch", "--quiet", "--attempts", "1", "--ids", s(&ids), "--out"])
        .arg(tmp.path().join("out"))
        .args(["--api-base", &base, "--projects-base", &base, "--assets-base", &base])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("2 projects failed transiently (network)") && err.contains("again"), "{err}");
    let report = std::fs::read_to_string(tmp.path().join("out/fetch-report.csv")).unwrap();
    assert_eq!(report.lines().count(), 3);
    assert!(report.lines().nth(1).unwrap().starts_with("123,network,"), "{report}");
}

#[test]
fn stats_on_the_random_sample_corpus() {
    let corpora =
        std::env::var_os("CLOWDER_CORPORA").map(PathBuf::from).unwrap_or_else(|| repo().join("../shared/corpora"));
    let rs = corpora.join("random-sample");
    if !rs.exists() {
        // Straight to stderr: libtest captures eprintln!, and a SKIP must show.
        drop(std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("SKIP: {} is absent\n", rs.display())));
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let png = tmp.path().join("rs.png");
    let out = clowder(&["dataset", "stats", s(&rs), "--png", s(&png)]);
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    let header = text.lines().next().unwrap();
    let n: usize = header.split(": ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(n >= 800, "{header}");
    let statements = text.lines().find(|l| l.starts_with("statements")).unwrap();
    let cols: Vec<&str> = statements.split_whitespace().collect();
    // statements n min p10 p25 median mean p75 p90 max
    let median: f64 = cols[5].parse().unwrap();
    let max: f64 = cols[9].parse().unwrap();
    assert!(median > 0.0 && median < max, "{statements}");
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
}
