//! A test experiment end to end through the real binary (`experiments/grading-smoke.toml`:
//! the repository's own suite on datasets/smoke): coordinator, workers fetching the suite by
//! hash, `tests.csv`. The same study twice, and with another worker count, gives the same
//! rows; the verdicts are the ones the suite and projects call for.

use std::path::Path;
use std::process::Command;

fn run(out: &Path, workers: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let status = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .current_dir(&root)
        .args(["run", "experiments/grading-smoke.toml", "--quiet", "--workers", workers, "--output"])
        .arg(out)
        .status()
        .expect("start clowder");
    assert!(status.success(), "clowder run failed: {status}");
}

fn rows(path: &Path) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new().has_headers(false).from_path(path).expect("CSV written");
    r.records().map(|rec| rec.expect("valid CSV").iter().map(str::to_string).collect()).collect()
}

/// Rows without the timing column.
fn runs_without_timing(dir: &Path) -> Vec<Vec<String>> {
    let mut rows = rows(&dir.join("grading-smoke/runs.csv"));
    let col = rows[0].iter().position(|c| c == "duration_ms").expect("duration_ms column");
    rows.iter_mut().for_each(|r| drop(r.remove(col)));
    rows
}

#[test]
fn a_test_experiment_grades_every_project_the_same_for_any_worker_count() {
    let (a, b, c) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    run(a.path(), "2");
    run(b.path(), "2");
    run(c.path(), "1");
    let tests_a = std::fs::read(a.path().join("grading-smoke/tests.csv")).expect("tests.csv");
    for other in [&b, &c] {
        let t = std::fs::read(other.path().join("grading-smoke/tests.csv")).expect("tests.csv");
        assert!(t == tests_a, "tests.csv differs between identical studies");
        assert_eq!(runs_without_timing(other.path()), runs_without_timing(a.path()));
    }
    let runs = runs_without_timing(a.path());
    assert_eq!(runs.len(), 1 + 5 * 2, "one run per (project, seed)");
    let status = runs[0].iter().position(|c| c == "status").unwrap();
    assert!(runs[1..].iter().all(|r| r[status] == "ok"), "verdicts are data, runs are ok: {runs:?}");

    let tests = rows(&a.path().join("grading-smoke/tests.csv"));
    let col = |name: &str| tests[0].iter().position(|c| c == name).unwrap_or_else(|| panic!("column {name}"));
    let (project, seed, suite, test, verdict, message) =
        (col("project"), col("seed"), col("suite"), col("test"), col("verdict"), col("message"));
    assert_eq!(tests.len(), 1 + 5 * 2 * 4, "one row per (project, seed, test)");
    assert!(tests[1..].iter().all(|r| r[suite] == "SmokeTest.js" && r[col("algorithm")] == "smoke-suite"));
    let verdicts = |p: &str, s: &str| -> Vec<(String, String)> {
        tests[1..]
            .iter()
            .filter(|r| r[project] == p && r[seed] == s)
            .map(|r| (r[test].clone(), r[verdict].clone()))
            .collect()
    };
    let expect = |v: [(&str, &str); 4]| v.map(|(t, s)| (t.to_string(), s.to_string())).to_vec();
    for s in ["1", "2"] {
        assert_eq!(
            verdicts("arrows", s),
            expect([
                ("moves right", "pass"),
                ("says right side", "pass"),
                ("counts space", "skip"),
                ("says many", "skip")
            ])
        );
        assert_eq!(
            verdicts("counter", s),
            expect([
                ("moves right", "skip"),
                ("says right side", "skip"),
                ("counts space", "pass"),
                ("says many", "fail")
            ])
        );
        for p in ["clicker", "guess", "relay"] {
            assert!(verdicts(p, s).iter().all(|(_, v)| v == "skip"), "{p}: no Player, no Cat");
        }
    }
    let failed = tests[1..].iter().find(|r| r[verdict] == "fail").expect("a failing test");
    assert!(failed[message].contains("many"), "the assertion's message: {failed:?}");
    let skipped = tests[1..].iter().find(|r| r[project] == "relay").expect("relay rows");
    assert!(skipped[message].contains("Could not find sprite"), "the assumption's message: {skipped:?}");
}

/// Runs `clowder ARGS…` in `dir`; (success, stdout, stderr).
fn clowder(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_clowder")).current_dir(dir).args(args).output().expect("start clowder");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A suite whose second verdict depends on `fresh_tests`: the first test brings the cat to the
/// front, which Whisker's reset between tests keeps (`suites/tests/between_tests.rs`).
const LAYERS: &str =
    "const front = async function (t) { t.getSprite('Cat')._target.goToFront(); await t.runForSteps(1); };
const behind = async function (t) {
    t.assert.ok(t.getSprite('Cat').layerOrder < t.getSprite('Dog').layerOrder, 'the cat is in front');
};
module.exports = [{name: 'to the front', test: front}, {name: 'cat behind', test: behind}];";

/// A `[[suites]]` entry takes `clowder test`'s options (here `fresh_tests`, beside an entry
/// without them on the same file): each run gives what `clowder test` with the flags gives, the
/// options are part of the run's identity, and what a test experiment cannot run is refused
/// before the study starts, with the suite's name.
#[test]
fn a_suite_entry_takes_clowder_tests_options_and_bad_entries_are_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../suites/tests/data/BetweenTests.sb3");
    std::fs::write(dir.path().join("Layers.js"), LAYERS).unwrap();
    let exp = format!(
        "name = \"opts\"\nkind = \"test\"\ndataset = {:?}\nseeds = 1\nbudget = {{ steps = 300 }}\n\n\
         [[suites]]\nname = \"whisker\"\nfile = \"Layers.js\"\n\n\
         [[suites]]\nname = \"fresh\"\nfile = \"Layers.js\"\nfresh_tests = true\nwhisker_maths = \"glibc\"\n",
        project.display().to_string()
    );
    std::fs::write(dir.path().join("opts.toml"), &exp).unwrap();
    let (ok, _, err) = clowder(dir.path(), &["run", "opts.toml", "--quiet", "--workers", "1", "--output", "out"]);
    assert!(ok, "{err}");
    let tests = rows(&dir.path().join("out/opts/tests.csv"));
    let col = |name: &str| tests[0].iter().position(|c| c == name).unwrap_or_else(|| panic!("column {name}"));
    let verdicts: Vec<(String, String, String)> = tests[1..]
        .iter()
        .map(|r| (r[col("algorithm")].clone(), r[col("test")].clone(), r[col("verdict")].clone()))
        .collect();
    let want = |a: &str, t: &str, v: &str| (a.to_string(), t.to_string(), v.to_string());
    assert!(verdicts.contains(&want("whisker", "cat behind", "fail")), "{verdicts:?}");
    assert!(verdicts.contains(&want("fresh", "cat behind", "pass")), "{verdicts:?}");
    let runs = rows(&dir.path().join("out/opts/runs.csv"));
    let cfg = runs[0].iter().position(|c| c == "config").expect("config column");
    assert!(
        runs[1..]
            .iter()
            .any(|r| r[cfg].contains("\"fresh_tests\":true,") && r[cfg].contains("\"whisker_maths\":\"glibc\""))
    );
    assert!(runs[1..].iter().any(|r| !r[cfg].contains("fresh_tests")), "an entry without options keeps its identity");
    // `clowder analyze` lists the test whose verdict depends on the entry.
    let (ok, out, err) = clowder(dir.path(), &["analyze", "out/opts", "--out", "report", "--no-plots"]);
    assert!(ok, "{err}");
    assert!(out.contains("1 of 2 verdicts differ"), "{out}");
    let table = std::fs::read_to_string(dir.path().join("report/entry_differences.csv")).unwrap();
    assert!(table.contains("Layers.js,whisker,fresh,2,cat behind,1,1,BetweenTests seed 1: pass -> fail"), "{table}");
    // The same verdicts as `clowder test` with the flags.
    let sb3 = project.display().to_string();
    let (_, fresh, _) = clowder(
        dir.path(),
        &["test", "Layers.js", &sb3, "--max-steps", "300", "--fresh-tests", "--whisker-maths", "glibc"],
    );
    assert!(fresh.contains("ok 2 - cat behind") && !fresh.contains("not ok 2"), "{fresh}");
    let (_, plain, _) = clowder(dir.path(), &["test", "Layers.js", &sb3, "--max-steps", "300"]);
    assert!(plain.contains("not ok 2 - cat behind"), "{plain}");

    // Refused before any run, naming the suite.
    let bad = |extra: &str, file: &str, text: &str| -> String {
        std::fs::write(dir.path().join(file), text).unwrap();
        let e = exp.replace("file = \"Layers.js\"\nfresh_tests", &format!("file = {file:?}\n{extra}\nfresh_tests"));
        std::fs::write(dir.path().join("bad.toml"), e).unwrap();
        let (ok, _, err) = clowder(dir.path(), &["run", "bad.toml", "--quiet", "--workers", "1", "--output", "bad"]);
        assert!(!ok, "{file} {extra}: ran");
        assert!(err.contains("suite \"fresh\""), "{err}");
        err
    };
    let plan = "function duringExecution(e) { }\n";
    assert!(
        bad("", "Plan.js", plan)
            .contains("an Itch plan (it runs in Itch's judge) does not take whisker_maths, fresh_tests")
    );
    assert!(bad("whisker_wall_ms = 0.0", "Layers2.js", LAYERS).contains("whisker_wall_ms must be between"));
    assert!(bad("js_memory_mb = 1", "Layers3.js", LAYERS).contains("js_memory_mb must be between 16"));
    assert!(bad("", "Suite.json", "{}").contains("is no dynamic suite"));
    assert!(bad("", "Broken.js", "module.exports = [{name: 'a', test: ").contains("Broken.js"));
    assert!(!dir.path().join("bad").exists(), "nothing started");
    // What the real Whisker's servant would not load is said once, as `clowder test` says it.
    let servant = "module.exports = [{name: 'a', test: async t => { await t.runForSteps(1); }}];";
    std::fs::write(dir.path().join("Layers.js"), servant).unwrap();
    let (ok, _, err) = clowder(dir.path(), &["run", "opts.toml", "--quiet", "--workers", "1", "--output", "again"]);
    assert!(ok, "{err}");
    assert!(
        err.contains("warning: suite \"whisker\" (Layers.js):") && err.contains("servant cannot load this file"),
        "{err}"
    );
}

/// A Neatest dynamic suite in a test experiment: each run replays it on its project and seed as
/// `clowder test SUITE.json PROJECT --seeds SEED` does (one verdict per network, the statements
/// it covered), and the options of JavaScript suites are refused for it.
#[test]
fn a_dynamic_suite_in_a_test_experiment_replays_as_clowder_test_does() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let project = root.join("datasets/smoke/arrows.json");
    let sb = project.display().to_string();
    let (ok, _, err) = clowder(
        dir.path(),
        &[
            "gen",
            &sb,
            "--algorithm",
            "neatest",
            "--budget-steps",
            "6000",
            "--param",
            "population_size=6",
            "--param",
            "number_of_species=2",
            "--param",
            "play_steps=300",
            "--out",
            "gen",
        ],
    );
    assert!(ok, "{err}");
    assert!(dir.path().join("gen/suite.json").is_file(), "Neatest writes its dynamic suite");
    let exp = format!(
        "name = \"dyn\"\nkind = \"test\"\ndataset = {sb:?}\nseeds = 2\n\n\
         [[suites]]\nname = \"networks\"\nfile = \"gen/suite.json\"\nwhisker_wall_ms = 10.0\n"
    );
    std::fs::write(dir.path().join("dyn.toml"), &exp).unwrap();
    let (ok, _, err) = clowder(dir.path(), &["run", "dyn.toml", "--quiet", "--workers", "1", "--output", "out"]);
    assert!(ok, "{err}");
    // The header does not promise steps per test that dynamic suites do not use.
    assert!(err.contains("each network to its suite's timeout") && !err.contains("per test"), "{err}");
    let tests = rows(&dir.path().join("out/dyn/tests.csv"));
    let col = |name: &str| tests[0].iter().position(|c| c == name).unwrap_or_else(|| panic!("column {name}"));
    assert!(tests.len() > 1, "one row per network and seed");
    // `clowder test` prints per network: "arrows network N seed S: C/T statements, E events in X steps, …".
    let (ok, out, err) =
        clowder(dir.path(), &["test", "gen/suite.json", &sb, "--seeds", "1-2", "--whisker-wall-ms", "10"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), tests.len() - 1, "{out}");
    for (line, row) in lines.iter().zip(&tests[1..]) {
        let covered = row[col("message")].split(' ').nth(1).unwrap_or("").to_string();
        let total = row[col("message")].split(' ').nth(3).unwrap_or("").to_string();
        assert!(line.contains(&format!("seed {}:", row[col("seed")])), "{line} / {row:?}");
        assert!(line.contains(&format!(": {covered}/{total} statements")), "{line} / {row:?}");
        assert!(line.contains(&format!("in {} steps", row[col("steps")])), "{line} / {row:?}");
        assert_eq!(row[col("verdict")], "pass");
    }
    let runs = rows(&dir.path().join("out/dyn/runs.csv"));
    let status = runs[0].iter().position(|c| c == "status").unwrap();
    assert!(runs[1..].iter().all(|r| r[status] == "ok"), "{runs:?}");
    // The options of JavaScript suites are refused up front.
    std::fs::write(dir.path().join("bad.toml"), exp.replace("whisker_wall_ms = 10.0", "fresh_tests = true")).unwrap();
    let (ok, _, err) = clowder(dir.path(), &["run", "bad.toml", "--quiet", "--workers", "1", "--output", "bad"]);
    assert!(!ok && err.contains("a dynamic suite (.json) does not take fresh_tests"), "{err}");
    std::fs::write(dir.path().join("gen/broken.json"), "{\"networks\": 3}").unwrap();
    std::fs::write(dir.path().join("bad.toml"), exp.replace("gen/suite.json", "gen/broken.json")).unwrap();
    let (ok, _, err) = clowder(dir.path(), &["run", "bad.toml", "--quiet", "--workers", "1", "--output", "bad"]);
    assert!(!ok && err.contains("is no dynamic suite"), "{err}");
}
