//! `clowder test PLAN.js`: an Itch test plan (written for clowder) on submissions against a
//! template writes the partial stream, the full format, Dodona's format, tests.csv and TAP;
//! the same bytes for any --workers; a broken submission is a wrong judgement.

use std::path::Path;
use std::process::Command;

use clowder_testgen::testkit::{Arg, ProjectBuilder};

const PLAN: &str = "function beforeExecution(e) {
  Itch.checkPredefinedBlocks({ spriteConfig: { Cat: B.script(B.greenFlag()) } }, e);
}
function duringExecution(e) {
  e.scheduler.greenFlag(false).wait(1000).end();
}
function afterExecution(e) {
  e.out.group('Moving', () => {
    e.out.test('moves right').feedback({ wrong: 'The cat must move right.' })
      .acceptIf(e.log.last.sprite('Cat').x > 10);
  });
}";

/// `name.json`: a cat moving `speed` px per step after the flag; `template.json` has the
/// flag hat alone.
fn write_projects(dir: &Path) -> (String, Vec<String>) {
    let mut paths = Vec::new();
    for (name, speed) in [("fast", 1.0), ("still", 0.0)] {
        let mut p = ProjectBuilder::new();
        let cat = p.sprite("Cat");
        let hat = p.t(cat).when_flag();
        let step = p.t(cat).change_x(Arg::n(speed));
        let forever = p.t(cat).forever(&[step]);
        p.t(cat).script(hat, &[forever]);
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, p.bytes()).expect("write project");
        paths.push(path.display().to_string());
    }
    let broken = dir.join("broken.sb3");
    std::fs::write(&broken, b"not a zip").expect("write broken");
    paths.push(broken.display().to_string());
    let mut t = ProjectBuilder::new();
    let cat = t.sprite("Cat");
    let hat = t.t(cat).when_flag();
    t.t(cat).script(hat, &[]);
    let template = dir.join("template.json");
    std::fs::write(&template, t.bytes()).expect("write template");
    (template.display().to_string(), paths)
}

fn clowder_test(plan: &Path, template: &str, projects: &[String], out: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_clowder"))
        .arg("test")
        .arg(plan)
        .args(projects)
        .args(["--template", template, "--summary", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .expect("start clowder")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn itch_plans_write_every_format_the_same_for_any_worker_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("cat_plan.js");
    std::fs::write(&plan, PLAN).expect("write plan");
    let (template, projects) = write_projects(dir.path());
    let (a, b, c) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("c"));
    let out = clowder_test(&plan, &template, &projects, &a, &["--workers", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("fast: correct (correct 7;"), "{stdout}");
    assert!(stdout.contains("still: wrong (correct 6, wrong 1;"), "{stdout}");
    assert!(stdout.contains("broken: wrong ("), "{stdout}");
    let out = clowder_test(&plan, &template, &projects, &b, &["--workers", "3"]);
    assert!(out.status.success());
    for f in ["tests.csv", "feedback/fast.ndjson", "feedback/still.json", "feedback/broken.ndjson", "tap/still.tap"] {
        assert_eq!(read(&a.join(f)), read(&b.join(f)), "{f} differs between --workers 1 and 3");
    }
    let stream = read(&a.join("feedback/still.ndjson"));
    let first = stream.lines().next().unwrap_or_default();
    assert_eq!(first, r#"{"command":"start-judgement","version":2}"#);
    assert!(stream.contains(r#""status":"wrong","feedback":"The cat must move right."}"#), "{stream}");
    assert!(stream.trim_end().ends_with(r#"{"command":"close-judgement"}"#));
    let full: serde_json::Value = serde_json::from_str(&read(&a.join("feedback/still.json"))).expect("full JSON");
    assert_eq!(full["meta"], serde_json::json!({"totalTests": 7, "correctTests": 6}));
    let csv = read(&a.join("tests.csv"));
    assert!(csv.contains("still,moves right,fail,The cat must move right."), "{csv}");
    assert!(csv.contains("broken,judgement,fail,wrong: the project could not be loaded"), "{csv}");
    // Dodona's partial format: tabs, contexts, testcases and {enum, human} statuses.
    let out = clowder_test(&plan, &template, &projects[1..2], &c, &["--format", "dodona"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dodona = read(&c.join("feedback/still.ndjson"));
    assert!(dodona.contains(r#""command":"start-tab""#), "{dodona}");
    assert!(dodona.contains(r#""status":{"enum":"wrong","human":"Wrong"}"#), "{dodona}");
}

#[test]
fn an_itch_plan_refuses_the_flags_that_model_whiskers_machine() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("cat_plan.js");
    std::fs::write(&plan, PLAN).expect("write plan");
    let (template, projects) = write_projects(dir.path());
    let out_dir = dir.path().join("out");
    for flags in [&["--whisker-wall-ms", "5"][..], &["--whisker-maths", "glibc"], &["--fresh-tests"]] {
        let out = clowder_test(&plan, &template, &projects[..1], &out_dir, flags);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(flags[0]) && err.contains("Itch"), "{flags:?}: {err}");
    }
}
