//! A mutant written as a `project.json` (`mutation::json`, what `clowder mutate
//! --write-mutants` gives other tools) is the model's mutant: loaded back, it runs exactly as
//! the mutant analysis runs it (same trace, step by step, under inputs that press keys, click
//! sprites and answer questions), for every operator, on real projects.

use std::path::Path;
use std::sync::Arc;

use clowder_testgen::mutation::{self, MutationMode, Operator};
use clowder_testgen::testkit::corpora;
use clowder_vm::project::{Project, document};
use clowder_vm::trace::{InputKind, TraceInput, TraceOptions, write_trace};
use clowder_vm::{LoadLimits, Profile};

const STEPS: u64 = 240;

/// Keys, answers, clicks on the first sprites and the stage (as the oracle's generic inputs).
fn inputs(project: &Project) -> Vec<TraceInput> {
    let mut ev = vec![(0, InputKind::GreenFlag)];
    for (key, down, up) in
        [("space", 30, 36), ("right arrow", 60, 90), ("left arrow", 100, 130), ("up arrow", 140, 150), ("a", 170, 172)]
    {
        ev.push((down, InputKind::KeyDown(key.into())));
        ev.push((up, InputKind::KeyUp(key.into())));
    }
    ev.push((45, InputKind::Answer("42".into())));
    ev.push((190, InputKind::ClickStage));
    for (i, t) in project.targets.iter().filter(|t| !t.is_stage).take(3).enumerate() {
        ev.push((200 + 10 * i as u64, InputKind::ClickSprite(t.name.clone(), 0)));
    }
    ev.sort_by_key(|(k, _)| *k);
    ev.into_iter().map(|(step, kind)| TraceInput { step, kind }).collect()
}

fn trace(project: Project, profile: Profile) -> String {
    let opts = TraceOptions {
        steps: STEPS,
        seed: 7,
        inputs: Some(inputs(&project)),
        run_all: true,
        profile,
        ..TraceOptions::default()
    };
    let mut out = Vec::new();
    write_trace(Arc::new(project), &opts, &mut out).expect("trace writes to memory");
    String::from_utf8_lossy(&out).into_owned()
}

/// Every sampled mutant of `json`: written, loaded back, traced like the model's mutant.
/// Returns the number of mutants compared per operator.
fn check(name: &str, json: &[u8], sample: u32) -> [usize; 8] {
    let limits = LoadLimits::default();
    let project = clowder_vm::project::load(json, name, &limits).expect("the project loads");
    let all = mutation::enumerate(&project);
    let chosen = mutation::select(&all, MutationMode::SamplePerOperator(sample), 1);
    let mut per_op = [0usize; 8];
    for m in &chosen {
        let Ok(model) = mutation::mutate(&project, m) else { continue };
        let mut doc = document(json, &limits).expect("the document parses");
        mutation::json::apply_edit_to_document(&mut doc, &project, &m.edit)
            .unwrap_or_else(|e| panic!("{name} {}: {}", m.id, e.0));
        let text = serde_json::to_vec(&doc).expect("the document serialises");
        let written = clowder_vm::project::load(&text, name, &limits)
            .unwrap_or_else(|e| panic!("{name} {}: the written mutant does not load: {e}", m.id));
        let (a, b) = (trace(model, Profile::Headless), trace(written, Profile::Headless));
        if a != b {
            let line = a.lines().zip(b.lines()).position(|(x, y)| x != y).unwrap_or(0);
            panic!(
                "{name} {} ({}): the written mutant runs differently from step record {line}:\n model: {}\n file:  {}",
                m.id,
                m.detail,
                a.lines().nth(line).unwrap_or(""),
                b.lines().nth(line).unwrap_or("")
            );
        }
        per_op[Operator::ALL.iter().position(|&o| o == m.operator).unwrap_or(0)] += 1;
    }
    per_op
}

fn json_of(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).expect("readable");
    if bytes.starts_with(b"PK") {
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip");
        let mut f = zip.by_name("project.json").expect("project.json");
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut out).expect("readable");
        out
    } else {
        bytes
    }
}

#[test]
fn written_mutants_run_as_the_models_mutants_on_real_projects() {
    let Some(root) = corpora() else {
        eprintln!("SKIP: corpora folder not found (set CLOWDER_CORPORA)");
        return;
    };
    let mut total = [0usize; 8];
    let mut projects = 0;
    let games = ["Pong", "FruitCatching", "Snake", "BoatRace", "Labyrinth", "TicTacToe", "Papagei", "Winter"];
    let mut paths: Vec<_> = games.iter().map(|g| root.join("whisker-rq1").join(format!("{g}.sb3"))).collect();
    // A slice of the random sample: every 25th project (their key hats, variables, lists).
    if let Ok(rd) = std::fs::read_dir(root.join("random-sample")) {
        let mut rs: Vec<_> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
        rs.sort();
        paths.extend(rs.into_iter().step_by(25).map(|d| if d.is_dir() { d.join("project.json") } else { d }));
    }
    for path in paths.iter().filter(|p| p.is_file()) {
        let n = check(&path.display().to_string(), &json_of(path), 3);
        for (t, c) in total.iter_mut().zip(n) {
            *t += c;
        }
        projects += 1;
    }
    eprintln!("{projects} projects; mutants compared per operator (KRM … VRM): {total:?}");
    assert!(projects >= 8);
    for (op, n) in Operator::ALL.iter().zip(total) {
        assert!(n > 0, "no {op:?} mutant was compared");
    }
}

/// The whisker profile too: a few games, every mutant of one operator each.
#[test]
fn written_mutants_of_a_game_run_as_the_models_mutants_under_the_whisker_profile() {
    let Some(root) = corpora() else {
        eprintln!("SKIP: corpora folder not found (set CLOWDER_CORPORA)");
        return;
    };
    let json = json_of(&root.join("whisker-rq1/FruitCatching.sb3"));
    let limits = LoadLimits::default();
    let project = clowder_vm::project::load(&json, "FruitCatching", &limits).expect("loads");
    let mut compared = 0;
    for m in mutation::enumerate(&project).iter().step_by(7) {
        let Ok(model) = mutation::mutate(&project, m) else { continue };
        let mut doc = document(&json, &limits).expect("parses");
        mutation::json::apply_edit_to_document(&mut doc, &project, &m.edit).expect("applies");
        let written = clowder_vm::project::load(&serde_json::to_vec(&doc).expect("serialises"), "m", &limits)
            .expect("loads back");
        assert_eq!(trace(model, Profile::Whisker), trace(written, Profile::Whisker), "{} ({})", m.id, m.detail);
        compared += 1;
    }
    assert!(compared > 5);
}
