//! `clowder vm trace`: the same project, seed and inputs give byte-identical
//! traces across processes (issue 3, acceptance 4).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A small project of our own: random numbers, clones, lists, a broadcast, a say bubble.
const PROJECT: &str = r#"{"targets":[
 {"isStage":true,"name":"Stage","variables":{"v1":["n",0]},"lists":{"l1":["log",[]]},"broadcasts":{"b1":"go"},
  "blocks":{},"costumes":[{"name":"backdrop1","assetId":"cd21514d0531fdffb22204e0ec5ed84a","md5ext":"cd21514d0531fdffb22204e0ec5ed84a.svg","dataFormat":"svg","rotationCenterX":0,"rotationCenterY":0}],
  "sounds":[],"currentCostume":0,"volume":100,"layerOrder":0,"tempo":60},
 {"isStage":false,"name":"Cat","variables":{"v2":["mine",1]},"lists":{},"broadcasts":{},
  "blocks":{
   "h":{"opcode":"event_whenflagclicked","next":"r","parent":null,"inputs":{},"fields":{},"shadow":false,"topLevel":true,"x":0,"y":0},
   "r":{"opcode":"control_repeat","next":"b","parent":"h","inputs":{"TIMES":[1,[6,"5"]],"SUBSTACK":[2,"s"]},"fields":{},"shadow":false,"topLevel":false},
   "s":{"opcode":"data_setvariableto","next":"a","parent":"r","inputs":{"VALUE":[3,"rnd",[10,""]]},"fields":{"VARIABLE":["n","v1"]},"shadow":false,"topLevel":false},
   "rnd":{"opcode":"operator_random","next":null,"parent":"s","inputs":{"FROM":[1,[4,"1"]],"TO":[1,[4,"100"]]},"fields":{},"shadow":false,"topLevel":false},
   "a":{"opcode":"data_addtolist","next":"c","parent":"s","inputs":{"ITEM":[3,[12,"n","v1"],[10,"x"]]},"fields":{"LIST":["log","l1"]},"shadow":false,"topLevel":false},
   "c":{"opcode":"control_create_clone_of","next":null,"parent":"a","inputs":{"CLONE_OPTION":[1,"cm"]},"fields":{},"shadow":false,"topLevel":false},
   "cm":{"opcode":"control_create_clone_of_menu","next":null,"parent":"c","inputs":{},"fields":{"CLONE_OPTION":["_myself_",null]},"shadow":true,"topLevel":false},
   "b":{"opcode":"event_broadcast","next":null,"parent":"r","inputs":{"BROADCAST_INPUT":[1,[11,"go","b1"]]},"fields":{},"shadow":false,"topLevel":false},
   "h2":{"opcode":"event_whenbroadcastreceived","next":"m","parent":null,"inputs":{},"fields":{"BROADCAST_OPTION":["go","b1"]},"shadow":false,"topLevel":true,"x":0,"y":0},
   "m":{"opcode":"motion_movesteps","next":"say","parent":"h2","inputs":{"STEPS":[1,[4,"10"]]},"fields":{},"shadow":false,"topLevel":false},
   "say":{"opcode":"looks_sayforsecs","next":null,"parent":"m","inputs":{"MESSAGE":[1,[10,"Hello!"]],"SECS":[1,[4,"1"]]},"fields":{},"shadow":false,"topLevel":false}
  },
  "costumes":[{"name":"costume1","assetId":"b7853f557e4426412e64bb3da6531a99","md5ext":"b7853f557e4426412e64bb3da6531a99.svg","dataFormat":"svg","rotationCenterX":0,"rotationCenterY":0}],
  "sounds":[],"currentCostume":0,"volume":100,"layerOrder":1,"visible":true,"x":0,"y":0,"size":100,"direction":90,
  "draggable":false,"rotationStyle":"all around"}
],"monitors":[],"extensions":[],"meta":{"semver":"3.0.0"}}"#;

const INPUTS: &str = r#"[{"step":0,"kind":"greenflag"},{"step":3,"kind":"key_down","key":"space"},
 {"step":5,"kind":"key_up","key":"space"},{"step":7,"kind":"click_sprite","sprite":"Cat"},
 {"step":9,"kind":"answer","text":"42"},{"step":11,"kind":"mouse_move","x":30,"y":-20}]"#;

fn trace(project: &Path, inputs: &Path, seed: &str) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .args(["vm", "trace"])
        .arg(project)
        .args(["--steps", "120", "--seed", seed, "--inputs"])
        .arg(inputs)
        .output()
        .expect("running clowder vm trace");
    assert!(out.status.success(), "clowder vm trace failed: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn traces_are_byte_identical_across_processes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().join("own.project.json");
    let inputs = dir.path().join("inputs.json");
    std::fs::write(&project, PROJECT).expect("write project");
    std::fs::write(&inputs, INPUTS).expect("write inputs");
    let mut projects = vec![project];
    let corpora = std::env::var_os("CLOWDER_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora"));
    for p in ["whisker-rq1/Pong.sb3", "whisker-rq1/FruitCatching.sb3"] {
        let path = corpora.join(p);
        if path.is_file() {
            projects.push(path);
        } else {
            // Straight to stderr: libtest captures eprintln!, and a SKIP must show.
            drop(std::io::Write::write_fmt(
                &mut std::io::stderr(),
                format_args!("SKIP: {} not found (set CLOWDER_CORPORA)\n", path.display()),
            ));
        }
    }
    for p in &projects {
        let a = trace(p, &inputs, "7");
        let b = trace(p, &inputs, "7");
        let text = String::from_utf8_lossy(&a);
        assert!(text.lines().count() > 10, "{}: trace too short:\n{text}", p.display());
        assert!(text.lines().last().is_some_and(|l| l.contains("\"end\":true")), "{}: no end record", p.display());
        assert_eq!(a, b, "{}: two runs differ", p.display());
    }
    // The seed matters: our project draws random numbers.
    let own = &projects[0];
    assert_ne!(trace(own, &inputs, "7"), trace(own, &inputs, "8"));
}

/// `--whisker-maths` names the browser's maths library: `atan` of 4.4 is one of the arguments
/// where fdlibm (Node, Chromium 148) and glibc (Chromium 156) differ in the last bit.
#[test]
fn whisker_maths_picks_the_library_and_needs_the_whisker_profile() {
    const ATAN: &str = r#"{"targets":[{"isStage":true,"name":"Stage","variables":{"v1":["a",0]},"lists":{},"broadcasts":{},
 "blocks":{"h":{"opcode":"event_whenflagclicked","next":"s","parent":null,"inputs":{},"fields":{},"shadow":false,"topLevel":true,"x":0,"y":0},
  "s":{"opcode":"data_setvariableto","next":null,"parent":"h","inputs":{"VALUE":[3,"m",[10,""]]},"fields":{"VARIABLE":["a","v1"]},"shadow":false,"topLevel":false},
  "m":{"opcode":"operator_mathop","next":null,"parent":"s","inputs":{"NUM":[1,[4,"4.4"]]},"fields":{"OPERATOR":["atan",null]},"shadow":false,"topLevel":false}},
 "costumes":[{"name":"backdrop1","assetId":"cd21514d0531fdffb22204e0ec5ed84a","md5ext":"cd21514d0531fdffb22204e0ec5ed84a.svg","dataFormat":"svg","rotationCenterX":0,"rotationCenterY":0}],
 "sounds":[],"currentCostume":0,"volume":100,"layerOrder":0,"tempo":60}],"monitors":[],"extensions":[],"meta":{"semver":"3.0.0"}}"#;
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().join("atan.project.json");
    std::fs::write(&project, ATAN).expect("write project");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_clowder"))
            .args(["vm", "trace"])
            .arg(&project)
            .args(["--steps", "3"])
            .args(extra)
            .output()
            .expect("clowder runs")
    };
    let value = |extra: &[&str]| {
        let out = run(extra);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.split("\"a\":")
            .nth(1)
            .map(|s| s.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect::<String>())
    };
    let fdlibm = Some("77.19573393471325".to_string());
    assert_eq!(value(&["--profile", "whisker"]), fdlibm, "the default: Chromium 148");
    assert_eq!(value(&["--profile", "whisker", "--whisker-maths", "node"]), fdlibm);
    assert_eq!(value(&["--profile", "whisker", "--whisker-maths", "glibc"]), Some("77.19573393471326".to_string()));
    let plain = run(&["--whisker-maths", "glibc"]);
    assert!(!plain.status.success());
    assert!(String::from_utf8_lossy(&plain.stderr).contains("need --profile whisker"));
    let unknown = run(&["--profile", "whisker", "--whisker-maths", "v8"]);
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("known: chromium, glibc, node"));
}
