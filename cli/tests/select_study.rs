//! `clowder select-study` end to end on two of the repository's smoke projects: every output but
//! the times is byte-identical on a second run (issue 20, acceptance 5), and the GA's suites rank
//! at least as high as unranked ones on the ranking they maximise.

use std::path::Path;
use std::process::Command;

fn run(out: &Path) {
    let smoke = Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/smoke");
    let status = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .arg("select-study")
        .arg(smoke.join("arrows.json"))
        .arg(smoke.join("guess.json"))
        .args(["--pool", "40", "--sizes", "3,5", "--repetitions", "6", "--best-of", "50", "--jobs", "2", "--out"])
        .arg(out)
        .status()
        .expect("start clowder");
    assert!(status.success(), "clowder select-study failed: {status}");
}

fn rows(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().expect("header").iter().map(str::to_string).collect();
    let mut out = vec![header];
    out.extend(r.records().map(|rec| rec.expect("valid CSV").iter().map(str::to_string).collect()));
    out
}

#[test]
fn the_selection_study_is_reproducible_and_the_ga_ranks_higher() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    run(a.path());
    run(b.path());
    let mut deterministic = Vec::new();
    for entry in std::fs::read_dir(a.path()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.contains("time") {
            continue; // wall-clock times, the only output allowed to differ
        }
        let (x, y) = (std::fs::read(a.path().join(&name)).unwrap(), std::fs::read(b.path().join(&name)).unwrap());
        assert!(x == y, "{name} differs between two runs with the same arguments");
        deterministic.push(name);
    }
    for f in ["tables.md", "cells.csv", "summary.csv", "pools.csv", "caught.csv", "risk.csv", "risk_variance.png"] {
        assert!(deterministic.iter().any(|d| d == f), "{f} written: {deterministic:?}");
    }
    let tables = std::fs::read_to_string(a.path().join("tables.md")).unwrap();
    assert!(tables.contains("Table III analogue") && tables.contains("Table IV analogue"));

    let cells = rows(&a.path().join("cells.csv"));
    let col = |n: &str| cells[0].iter().position(|c| c == n).unwrap_or_else(|| panic!("no column {n}"));
    let (project, ranking, method, n, rank) =
        (col("project"), col("ranking"), col("method"), col("n"), col("rank_mean"));
    // 2 projects × 2 sizes × 5 rankings × 3 methods.
    assert_eq!(cells.len() - 1, 60);
    for ga in cells[1..].iter().filter(|r| r[method] == "ga") {
        let unranked = cells[1..]
            .iter()
            .find(|r| {
                r[method] == "unranked" && r[project] == ga[project] && r[ranking] == ga[ranking] && r[n] == ga[n]
            })
            .expect("unranked cell");
        let (g, u): (f64, f64) = (ga[rank].parse().unwrap(), unranked[rank].parse().unwrap());
        assert!(g >= u, "{ga:?}: GA rank {g} below unranked {u}");
    }
    let pools = rows(&a.path().join("pools.csv"));
    assert_eq!(pools.len(), 3, "one row per project");
}
