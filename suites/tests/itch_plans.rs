//! Itch's own VPW-2017 test plans (scratch-ed/itch, `packages/test-utils/test/assets`) on
//! their projects, with the statuses Itch's `vpw2017.test.js` expects, and a plan written
//! for clowder on the witch-hunt project with one edit per submission. The plans and
//! projects are read from `CLOWDER_ITCH` (a folder they were extracted to, outside the
//! repository: Itch's licence keeps them out of it); the tests skip visibly without it.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use clowder_suites::Limits;
use clowder_suites::itch::{ItchPlan, ItchResult, run_plan};
use clowder_vm::{LoadLimits, Project};
use serde_json::Value as J;

fn dir() -> Option<PathBuf> {
    let d = PathBuf::from(std::env::var_os("CLOWDER_ITCH")?);
    d.is_dir().then_some(d)
}

fn load(path: &std::path::Path) -> Arc<Project> {
    Arc::new(Project::load_path(path, &LoadLimits::default()).expect("project loads"))
}

fn run(plan: &ItchPlan, template: &Arc<Project>, submission: &Arc<Project>) -> ItchResult {
    run_plan(plan, template, submission, 1, &Limits::default(), None)
}

/// (plan, project, correct, other tests): Itch's `exactStatuses('correct', n)`; the others
/// are the `wrong` tests of Itch's snapshot (three in 07_heksenjacht).
const VPW: [(&str, &str, usize, usize); 8] = [
    ("01_mad_hatter_test.js", "01_mad_hatter.sb3", 26, 0),
    ("04_teken_een_driehoek_test.js", "04_teken_een_driehoek.sb3", 2, 0),
    ("06_voetballende_kat_test.js", "06_voetballende_kat.sb3", 2, 0),
    ("07_heksenjacht_test.js", "07_heksenjacht.sb3", 4, 3),
    ("07_heksenjacht_eenvoudig_test.js", "07_heksenjacht.sb3", 6, 0),
    ("08_op_bezoek_bij_devin_test.js", "08_op_bezoek_bij_devin.sb3", 4, 0),
    ("09_flauw_mopje_test.js", "09_flauw_mopje.sb3", 10, 0),
    ("13_cijfersom_test.js", "13_cijfersom.sb3", 3, 0),
];

#[test]
fn vpw2017_plans_give_itchs_statuses_twice() {
    let Some(d) = dir() else {
        eprintln!("SKIP: set CLOWDER_ITCH to a folder with Itch's VPW-2017 plans and projects to run them");
        return;
    };
    for (plan, project, correct, others) in VPW {
        let p = ItchPlan::load(&d.join(plan)).expect("plan loads");
        let sb3 = load(&d.join(project));
        let a = run(&p, &sb3, &sb3);
        let b = run(&p, &sb3, &sb3);
        assert_eq!(a.updates, b.updates, "{plan}: two runs differ");
        let listed: Vec<_> = a.tests.iter().map(|t| (t.name.as_str(), t.status.as_str())).collect();
        assert_eq!(a.count("correct"), correct, "{plan}: {listed:?}");
        assert_eq!(a.tests.len(), correct + others, "{plan}: {listed:?}");
        eprintln!("{plan}: correct {correct} of {} ({} steps)", a.tests.len(), a.steps);
    }
    let p = ItchPlan::load(&d.join("anything-order.js")).expect("plan loads");
    let sb3 = load(&d.join("anything-empty-stack.sb3"));
    assert_eq!(run(&p, &sb3, &sb3).count("correct"), 1);
}

/// A plan for the witch hunt (written for clowder): the witch's click script may be
/// extended; it must loop forever over "go to a random position" and "wait 1" in any
/// order; she must move on the click and every second after it; the loop must repeat.
const HEKS_PLAN: &str = r#"
function beforeExecution(e) {
  const { script, whenSpriteClicked, forever, anything, goTo, wait, checkBlocks, anyOrder } = B;
  Itch.checkPredefinedBlocks({ spriteConfig: { Heks: script(whenSpriteClicked()) } }, e);
  e.out.group('Code of the witch', () => {
    const sprite = e.log.submission.findSprite('Heks');
    const click = sprite && sprite.findScript(whenSpriteClicked());
    e.out.test('Loop').feedback({ wrong: 'Use a forever loop after the click.' })
      .expect(click).toMatchSubtree(script(whenSpriteClicked(), forever(anything())));
    const loop = click ? click.next : null;
    const body = loop && loop.opcode === 'control_forever' ? loop.inputs.SUBSTACK : loop;
    checkBlocks(e, body, [anyOrder([
      { name: 'Random position', pattern: goTo('_random_'), feedback: { wrong: 'Go to a random position.' } },
      { name: 'Wait a second', pattern: wait(1), feedback: { wrong: 'Wait one second.' } },
    ])]);
  });
}
function duringExecution(e) {
  e.actionTimeout = 7000;
  e.enableAdvancedProfiler();
  let pos = null;
  const moved = () => {
    const h = e.log.last.sprite('Heks');
    const m = pos === null || h.x !== pos.x || h.y !== pos.y;
    pos = { x: h.x, y: h.y };
    return m;
  };
  e.scheduler.log(() => moved())
    .wait(500).log(() => e.out.test('Still before the click').acceptIf(!moved()))
    .clickSprite('Heks', false)
    .wait(100).log(() => e.out.test('Moves on the click').acceptIf(moved()))
    .wait(1000).log(() => e.out.test('Moves again a second later').acceptIf(moved()))
    .wait(1000).log(() => e.out.test('And again').acceptIf(moved()))
    .end();
}
function afterExecution(e) {
  const loops = e.log.events.filter((x) => x.type === 'block_execution' && x.data.block().opcode === 'control_forever');
  e.out.test('The loop repeats').feedback({ wrong: 'The loop ran fewer than two times.' }).acceptIf(loops.length >= 2);
}
"#;

/// The witch-hunt project with its `project.json` changed by `edit`.
fn edited(sb3: &[u8], edit: impl Fn(&mut serde_json::Map<String, J>)) -> Arc<Project> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(sb3)).expect("zip");
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).expect("entry");
        let name = f.name().expect("entry name").to_string();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).expect("read");
        if name == "project.json" {
            let mut p: J = serde_json::from_slice(&bytes).expect("json");
            let heks = p["targets"].as_array_mut().and_then(|ts| ts.iter_mut().find(|t| t["name"] == "Heks"));
            if let Some(J::Object(blocks)) = heks.map(|t| &mut t["blocks"]) {
                edit(blocks);
            }
            bytes = serde_json::to_vec(&p).expect("json");
        }
        out.start_file(name, opts).expect("start");
        out.write_all(&bytes).expect("write");
    }
    let bytes = out.finish().expect("zip").into_inner();
    Arc::new(clowder_vm::project::load(&bytes, "edited.sb3", &LoadLimits::default()).expect("edited project loads"))
}

fn id_of(blocks: &serde_json::Map<String, J>, opcode: &str) -> String {
    blocks.iter().find(|(_, b)| b["opcode"] == opcode).map(|(k, _)| k.clone()).expect("block")
}

#[test]
fn one_edit_per_submission_fails_the_tests_a_teacher_expects() {
    let Some(d) = dir() else {
        eprintln!("SKIP: set CLOWDER_ITCH to a folder with Itch's VPW-2017 projects to run the edited submissions");
        return;
    };
    let sb3 = std::fs::read(d.join("07_heksenjacht.sb3")).expect("project");
    let plan = ItchPlan::from_source("heks_plan.js", HEKS_PLAN).expect("plan");
    let solution = load(&d.join("07_heksenjacht.sb3"));
    // The template students start from: the click hat alone.
    let drop_loop = |b: &mut serde_json::Map<String, J>| {
        let hat = id_of(b, "event_whenthisspriteclicked");
        b.retain(|k, _| *k == hat);
        b[&hat]["next"] = J::Null;
    };
    let template = edited(&sb3, drop_loop);
    let removed_script = edited(&sb3, |b| b.clear());
    let changed_block = edited(&sb3, |b| {
        let wait = id_of(b, "control_wait");
        b[&wait]["inputs"]["DURATION"] = serde_json::json!([1, [5, "2"]]);
    });
    let missing_loop = edited(&sb3, |b| {
        let (hat, forever, goto) =
            (id_of(b, "event_whenthisspriteclicked"), id_of(b, "control_forever"), id_of(b, "motion_goto"));
        b.remove(&forever);
        b[&hat]["next"] = J::String(goto.clone());
        b[&goto]["parent"] = J::String(hat);
    });
    let wrong = |s: &Arc<Project>| -> Vec<String> {
        let r = run(&plan, &template, s);
        assert_eq!(r.updates, run(&plan, &template, s).updates);
        r.tests.iter().filter(|t| t.status != "correct").map(|t| t.name.clone()).collect()
    };
    let none: [&str; 0] = [];
    assert_eq!(wrong(&solution), none);
    assert_eq!(
        wrong(&template),
        [
            "Loop",
            "Random position",
            "Wait a second",
            "Moves on the click",
            "Moves again a second later",
            "And again",
            "The loop repeats"
        ]
    );
    assert_eq!(
        wrong(&removed_script),
        [
            "Existing scripts",
            "Loop",
            "Random position",
            "Wait a second",
            "Moves on the click",
            "Moves again a second later",
            "And again",
            "The loop repeats"
        ]
    );
    assert_eq!(wrong(&changed_block), ["Wait a second", "Moves again a second later"]);
    assert_eq!(wrong(&missing_loop), ["Loop", "Moves again a second later", "And again", "The loop repeats"]);
}
