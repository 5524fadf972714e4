//! Decoding codons against dynamically extracted events: the paper's worked
//! example (§5.1) on the cat-and-bear program of its Figure 8.

use std::sync::Arc;

use clowder_testgen::events::Event;
use clowder_testgen::execution::decode_once;
use clowder_testgen::fitness::FitnessModel;
use clowder_testgen::testkit::{Arg, ProjectBuilder};
use clowder_testgen::{Algorithm, AlgorithmConfig, Params};

/// Figure 8: the cat greets the bear when clicked and broadcasts "answer cat";
/// the bear answers and then, forever, switches costume while space is pressed.
/// The worked example ignores the two-second durations of the greetings (it has
/// the bear's loop running right after the click), so the says here do not wait.
fn cat_and_bear() -> ProjectBuilder {
    let mut p = ProjectBuilder::new();
    p.message("answer cat");
    let cat = p.sprite("Cat");
    let bear = p.sprite("Bear");
    let c = p.t(cat);
    let h = c.when_clicked();
    let s = c.say(Arg::t("Hello bear!"));
    let b = c.broadcast("answer cat");
    c.script(h, &[s, b]);
    let b = p.t(bear);
    let h = b.when_receive("answer cat");
    let s = b.say(Arg::t("Hello cat!"));
    let k = b.key_pressed("space");
    let sw = b.switch_costume("smiling bear");
    let iff = b.if_(&k, &[sw]);
    let fe = b.forever(&[iff]);
    b.script(h, &[s, fe]);
    p
}

#[test]
fn papers_worked_example() {
    let project = Arc::new(cat_and_bear().load());
    let model = FitnessModel::new(&project);
    // np = 1 (Wait and KeyPress take one parameter codon each). The paper's
    // press duration 9 needs a press-duration bound above 9.
    let mut cfg = AlgorithmConfig::new(Algorithm::Mio);
    cfg.params.insert("press_duration".into(), serde_json::json!(10));
    let params = Params::from_config(&cfg).expect("valid");
    let (events, trace) = decode_once(Arc::clone(&project), &model, &params, 1, &[4, 3, 5, 8, 2, 9]);
    // ⟨Wait, ClickSprite(Cat)⟩: 4 mod 2 = 0 → Wait for 3 steps; 5 mod 2 = 1 →
    // click the cat (8 is skipped); then ⟨Wait, ClickSprite(Cat), KeyPress(Space)⟩:
    // 2 mod 3 = 2 → press space for 9 steps.
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events[0], Event::Wait { steps: 3 });
    assert!(matches!(&events[1], Event::ClickSprite { sprite, clone: 0, .. } if sprite == "Cat"), "{events:?}");
    assert_eq!(events[2], Event::KeyPress { key: "space".into(), steps: 9 });
    // The press reached the costume switch: every statement is covered.
    let mut s = clowder_testgen::fitness::Scratch::default();
    for t in 0..model.len() {
        assert_eq!(model.fitness(t, &trace, &mut s), 0.0, "target {t} covered");
    }
}

#[test]
fn codon_groups_have_the_projects_width() {
    let project = cat_and_bear().load();
    let info = clowder_testgen::events::EventInfo::new(&project, 1);
    assert_eq!(info.reserved, 2, "event codon + one parameter codon");
    let mut p = ProjectBuilder::new();
    let s = p.sprite("S");
    let t = p.t(s);
    let h = t.when_flag();
    let mx = t.mouse_x();
    let say = t.say(Arg::b(&mx));
    t.script(h, &[say]);
    let info = clowder_testgen::events::EventInfo::new(&p.load(), 1);
    assert_eq!(info.reserved, 3, "MouseMove needs x and y codons");
}

/// Whisker's green flag starts the hats at once: the first event of a test is chosen
/// among the events of the green-flag scripts, before any step has run (a game that is
/// lost within a few steps without input needs its first input at once).
#[test]
fn the_first_event_sees_the_green_flag_scripts() {
    let mut p = ProjectBuilder::new();
    let s = p.sprite("S");
    let t = p.t(s);
    let h = t.when_flag();
    let k = t.key_pressed("space");
    let sw = t.switch_costume("other");
    let iff = t.if_(&k, &[sw]);
    let fe = t.forever(&[iff]);
    t.script(h, &[fe]);
    let project = Arc::new(p.load());
    let model = FitnessModel::new(&project);
    let params = Params::from_config(&AlgorithmConfig::new(Algorithm::Mio)).expect("valid");
    // ⟨Wait, KeyPress(space)⟩ from the start: 1 mod 2 = 1 → press space.
    let (events, _) = decode_once(Arc::clone(&project), &model, &params, 1, &[1, 3]);
    assert!(matches!(&events[0], Event::KeyPress { key, .. } if key == "space"), "{events:?}");
}
