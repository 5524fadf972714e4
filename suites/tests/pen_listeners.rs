//! Whisker's wrappers and the pen. Whisker's `Sprites.wrapTarget` calls
//! `target.removeAllListeners()` the first time a test wraps a target (every `getSprite`,
//! `getSprites`, and every clone as it is made): the pen extension's `_onTargetMoved` goes with
//! it, so a sprite whose pen is down stops drawing, and a clone of a sprite whose pen is down
//! never draws. Read in the real Whisker (emse22): Labyrinth's pen trail is not on its pen
//! layer after the first step a test looks at, and in the project below the clone's trail is
//! missing while the original's is there.

use std::sync::Arc;

use clowder_suites::{Limits, Status, Suite};
use clowder_testgen::testkit::{Arg, ProjectBuilder};
use serde_json::json;

/// `P` draws with the default pen (blue, size 5) from (−100, 0) to (0, 0) in 20 steps and
/// makes a clone at once, which moves up 50 and then right the same way. The probes `Q1` and
/// `Q2` (10 × 10 squares, red like every costume) sit on the two trails at x −50.
fn project() -> Arc<clowder_vm::Project> {
    let mut p = ProjectBuilder::new();
    let pen = p.sprite("P");
    let t = p.t(pen);
    let hat = t.when_flag();
    let up = t.block("pen_penUp", json!({}), json!({}));
    let go = t.goto_xy(Arg::n(-100.0), Arg::n(0.0));
    let clear = t.block("pen_clear", json!({}), json!({}));
    let size = t.block("pen_setPenSizeTo", json!({"SIZE": [1, [4, "5"]]}), json!({}));
    let down = t.block("pen_penDown", json!({}), json!({}));
    let clone = t.create_clone("_myself_");
    let step = t.change_x(Arg::n(5.0));
    let walk = t.repeat(Arg::n(20.0), &[step]);
    t.script(hat, &[up, go, clear, size, down, clone, walk]);
    let hat = t.when_clone();
    let rise = t.block("motion_changeyby", json!({"DY": [1, [4, "50"]]}), json!({}));
    let step = t.change_x(Arg::n(5.0));
    let walk = t.repeat(Arg::n(20.0), &[step]);
    t.script(hat, &[rise, walk]);
    for (name, y) in [("Q1", 1.0), ("Q2", 51.0)] {
        let q = p.sprite(name);
        p.t(q).xy = (-50.0, y);
    }
    // Every costume is the builder's one costume file: a red square below and right of its centre.
    let square = r##"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" viewBox="0 0 10 10"><rect width="10" height="10" fill="#f00"/></svg>"##;
    let bytes = zip(&[("project.json", &p.bytes()), (clowder_testgen::testkit::COSTUME_FILE, square.as_bytes())]);
    Arc::new(clowder_vm::project::load(&bytes, "pen.sb3", &clowder_vm::LoadLimits::default()).expect("loads"))
}

fn zip(files: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, data) in files {
        zip.start_file(*name, zip::write::SimpleFileOptions::default()).expect("zip");
        zip.write_all(data).expect("zip");
    }
    zip.finish().expect("zip").into_inner()
}

const BLUE: &str = "[0, 0, 255]";

#[test]
fn whisker_wrappers_take_the_pens_listener_away() {
    // Without Whisker's wrappers (the VM as the studies run it), both trails are drawn.
    let mut vm = clowder_vm::Vm::new(
        project(),
        clowder_vm::VmOptions { profile: clowder_vm::Profile::Whisker, seed: 1, ..Default::default() },
    );
    vm.green_flag();
    for _ in 0..30 {
        vm.step();
    }
    for probe in ["Q1", "Q2"] {
        let q = vm.find_target(probe, 0).expect("the probe");
        assert!(vm.touching_color(q, [0, 0, 255]), "{probe}: no trail without Whisker's wrappers");
    }

    // Test 1 looks at nothing until the end: the original draws, the clone (wrapped as it was
    // made) does not. Test 2 looks after the first step: the original's pen is still down but
    // draws no more (its `pen up`, `pen down` at the next green flag attach it again).
    let src = format!(
        "module.exports = [
          {{name: 'clone', test: async function (t) {{
            await t.runForSteps(30);
            t.assert.ok(t.getSprite('Q1').isTouchingColor({BLUE}), 'the original draws');
            t.assert.not(t.getSprite('Q2').isTouchingColor({BLUE}), 'the clone does not');
          }}}},
          {{name: 'looked', test: async function (t) {{
            await t.runForSteps(1);
            t.getSprites();
            await t.runForSteps(29);
            t.assert.not(t.getSprite('Q1').isTouchingColor({BLUE}), 'the original stopped drawing');
          }}}}];"
    );
    let suite = Suite::from_source("pen.js", &src).expect("suite loads");
    let r = clowder_suites::run_project(&suite, &project(), "pen", 1, &Limits::default());
    for row in &r.rows {
        assert_eq!(row.status, Status::Pass, "{}: {}", row.test, row.message);
    }
}
