//! `clowder test`: a suite on several projects writes TAP, tests.csv and feedback; the same
//! bytes for any --workers; a broken project fails its tests, a broken suite is rejected.

use std::path::Path;
use std::process::Command;

use clowder_testgen::testkit::{Arg, ProjectBuilder};

const SUITE: &str = "module.exports = [
  {name: 'moves right', categories: ['motion'], test: async t => {
      const cat = t.getSprite('Cat');
      t.assume.ok(cat !== undefined, 'Could not find sprite Cat.');
      await t.runForTime(1000);
      t.assert.greater(cat.x, 10, 'Cat must move right.');
  }},
  {name: 'stays visible', test: async t => {
      const cat = t.getSprite('Cat');
      t.assume.ok(cat !== undefined, 'Could not find sprite Cat.');
      await t.runForSteps(5);
      t.assert.ok(cat.visible, 'Cat must stay visible.');
  }}];";

fn write_projects(dir: &Path) -> Vec<String> {
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
    let empty = ProjectBuilder::new();
    let other = dir.join("no-cat.json");
    std::fs::write(&other, empty.bytes()).expect("write project");
    paths.push(other.display().to_string());
    paths
}

fn clowder_test(suite: &Path, projects: &[String], out: &Path, workers: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_clowder"))
        .arg("test")
        .arg(suite)
        .args(projects)
        .args(["--seed", "3", "--workers", workers, "--out"])
        .arg(out)
        .output()
        .expect("start clowder")
}

#[test]
fn suites_grade_projects_the_same_for_any_worker_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    let suite = dir.path().join("CatTest.js");
    std::fs::write(&suite, SUITE).expect("write suite");
    let projects = write_projects(dir.path());
    let one = clowder_test(&suite, &projects, &dir.path().join("w1"), "1");
    assert!(one.status.success(), "{}", String::from_utf8_lossy(&one.stderr));
    let two = clowder_test(&suite, &projects, &dir.path().join("w2"), "2");
    assert!(two.status.success());
    assert_eq!(one.stdout, two.stdout, "the TAP printed does not depend on --workers");
    let csv = std::fs::read_to_string(dir.path().join("w1/tests.csv")).expect("tests.csv");
    assert_eq!(csv, std::fs::read_to_string(dir.path().join("w2/tests.csv")).expect("tests.csv"));
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "project,test,status,message,steps");
    assert_eq!(rows[1], "fast,moves right,pass,,30");
    assert_eq!(rows[3], "still,moves right,fail,Cat must move right.,30");
    assert!(rows[5].starts_with("broken,moves right,fail,the project could not be loaded:"), "{}", rows[5]);
    assert_eq!(rows[7], "no-cat,moves right,skip,Could not find sprite Cat.,0");
    for name in ["fast", "still", "broken", "no-cat"] {
        let tap = std::fs::read_to_string(dir.path().join(format!("w1/tap/{name}.tap"))).expect("tap");
        assert!(tap.starts_with("TAP version 13\n"), "{tap}");
        let json = std::fs::read_to_string(dir.path().join(format!("w1/feedback/{name}.json"))).expect("json");
        let v: serde_json::Value = serde_json::from_str(&json).expect("feedback is JSON");
        assert_eq!(v["judgement"]["project"], name);
    }
}

#[test]
fn a_broken_suite_is_rejected_with_its_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let suite = dir.path().join("Bad.js");
    std::fs::write(&suite, "module.exports = [\n  {test: async t => { await t.runForTime(; }}];").expect("write");
    let projects = write_projects(dir.path());
    let out = clowder_test(&suite, &projects[..1], &dir.path().join("o"), "1");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("SyntaxError") && err.contains("Bad.js:2"), "{err}");
}
