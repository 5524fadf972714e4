//! The `whisker` profile against the real Whisker (emse22, seed 1, acceleration 10).
//!
//! `data/whisker_semantics.json` has one sprite with five green-flag scripts, in this order:
//! A: `r1 := pick random 1 to 1000000; create clone of myself; r2 := pick random …;
//!    say "hi"; r3 := pick random …`;
//! C: `k := 0; forever { change k by 1 }` (a step counter);
//! B: `wait 1; w1 := k; wait 0.7; w2 := k; wait 2; tm := timer`;
//! D: `think "hm" for 0.5 secs; s1 := k; r4 := pick random …`;
//! E: `go to 0, 0; glide 1 secs to 90, 30; g1 := k`.
//!
//! The expected values were read in Whisker itself: the project (with a costume) run by the
//! whisker-oracle's run.sh with a test that logs the stage variables after every step.
//! They pin down `seed-random` keyed by the seed, the 20 draws of every `uid()` (a clone, a
//! say, the end of a think), waits, thinks and glides counted in steps at acceleration 10
//! (`wait 0.7` is 20.999999999999996 steps, so 21), a think bubble cleared in the tick its
//! timer ends, and the step timer (111 additions of 0.075).

use std::sync::Arc;

use clowder_vm::project::{LoadLimits, load};
use clowder_vm::{Profile, Value, Vm, VmOptions};

fn vm(profile: Profile) -> Vm {
    let json = include_str!("data/whisker_semantics.json");
    let p = load(json.as_bytes(), "whisker_semantics.json", &LoadLimits::default()).expect("the test project loads");
    let mut vm = Vm::new(Arc::new(p), VmOptions { profile, seed: 1, ..VmOptions::default() });
    vm.green_flag();
    vm
}

fn var(vm: &Vm, name: &str) -> f64 {
    match vm.variable(vm.stage_id(), name) {
        Some(Value::Num(n)) => n,
        other => panic!("{name} = {other:?}"),
    }
}

/// What Whisker's probe read after some steps.
struct Seen {
    steps: u64,
    /// k, w1, w2, s1, g1.
    vars: (f64, f64, f64, f64, f64),
    xy: (f64, f64),
    bubble: &'static str,
}

const fn seen(steps: u64, vars: (f64, f64, f64, f64, f64), xy: (f64, f64), bubble: &'static str) -> Seen {
    Seen { steps, vars, xy, bubble }
}

#[test]
fn whisker_profile_matches_the_real_whisker() {
    let mut vm = vm(Profile::Whisker);
    let sprite = vm.find_target("S", 0).expect("the sprite");
    // Whisker's probe reads the state after every step.
    let seen = [
        seen(1, (1.0, 0.0, 0.0, 0.0, 0.0), (0.0, 0.0), "hm"),
        seen(2, (2.0, 0.0, 0.0, 0.0, 0.0), (3.0, 1.0), "hm"),
        seen(15, (15.0, 0.0, 0.0, 0.0, 0.0), (42.0, 14.0), "hm"),
        seen(16, (16.0, 0.0, 0.0, 16.0, 0.0), (45.0, 15.0), ""),
        seen(22, (22.0, 0.0, 0.0, 16.0, 0.0), (62.99999999999999, 21.0), ""),
        seen(31, (31.0, 31.0, 0.0, 16.0, 31.0), (90.0, 30.0), ""),
        seen(52, (52.0, 31.0, 52.0, 16.0, 31.0), (90.0, 30.0), ""),
    ];
    for s in seen {
        while vm.steps() < s.steps {
            vm.step();
        }
        let got = (var(&vm, "k"), var(&vm, "w1"), var(&vm, "w2"), var(&vm, "s1"), var(&vm, "g1"));
        assert_eq!(got, s.vars, "k, w1, w2, s1, g1 after {} steps", s.steps);
        let t = vm.target(sprite).expect("the sprite is alive");
        assert_eq!((t.x, t.y), s.xy, "position after {} steps", s.steps);
        let text = vm.bubble(sprite).map_or(String::new(), |(_, b)| b.to_string());
        assert_eq!(text, s.bubble, "bubble after {} steps", s.steps);
    }
    // seed-random(1): draw 0, then 20 for the clone's id, draw 21; 20 for the say, draw 42;
    // 20 each for the think and its end, draw 83.
    assert_eq!(
        (var(&vm, "r1"), var(&vm, "r2"), var(&vm, "r3"), var(&vm, "r4")),
        (177635.0, 825462.0, 76006.0, 972529.0)
    );
    while vm.steps() < 111 {
        vm.step();
    }
    assert_eq!(var(&vm, "tm"), 0.0, "wait 2 after step 52 ends in step 112");
    vm.step();
    assert_eq!(var(&vm, "tm"), 8.32500000000001, "the step timer after 111 steps");
}

#[test]
fn default_profile_keeps_the_oracle_semantics() {
    // The same project under scratch-vm's rules: SplitMix64 without internal draws (r2 is
    // the second draw), the virtual clock for the timer.
    let mut vm = vm(Profile::Default);
    while vm.steps() < 112 {
        vm.step();
    }
    let mut r = clowder_vm::rng::SplitMix64::new(1);
    let draws: Vec<f64> = (0..2).map(|_| 1.0 + (r.next_f64() * 1_000_000.0).floor()).collect();
    assert_eq!((var(&vm, "r1"), var(&vm, "r2")), (draws[0], draws[1]));
    assert_eq!(var(&vm, "tm"), Vm::now(111) / 1000.0, "the timer is the virtual clock");
}

/// `data/whisker_layers.json`: sprites A, B, C (back to front) and the pen extension.
/// A: `pen clear; say "hi"; wait 0.3; hide; wait 0.1; show`; B: `wait 0.1; go to front
/// layer; say "ho"`; C: `wait 0.2; go backward 1 layers`. Whisker's `layerOrder` is the
/// renderer's draw-list index: the stage and the pen layer come first, bubbles are drawables
/// created on top, and relative moves count them. Read in Whisker after every step.
#[test]
fn whisker_layers_count_the_pen_layer_and_bubbles() {
    let json = include_str!("data/whisker_layers.json");
    let p = load(json.as_bytes(), "whisker_layers.json", &LoadLimits::default()).expect("the test project loads");
    let mut vm = Vm::new(Arc::new(p), VmOptions { profile: Profile::Whisker, seed: 1, ..VmOptions::default() });
    let ids: Vec<_> = ["A", "B", "C"].iter().map(|n| vm.find_target(n, 0).expect("sprite")).collect();
    vm.green_flag();
    let whisker: [[usize; 3]; 16] = [
        [2, 3, 4],
        [2, 3, 4],
        [2, 3, 4],
        [2, 3, 4],
        [2, 5, 3],
        [2, 5, 3],
        [2, 5, 3],
        [3, 5, 2],
        [3, 5, 2],
        [3, 5, 2],
        [3, 4, 2],
        [3, 4, 2],
        [3, 4, 2],
        [3, 4, 2],
        [3, 4, 2],
        [3, 4, 2],
    ];
    for (step, want) in whisker.iter().enumerate() {
        let got: Vec<usize> = ids.iter().map(|&id| vm.layer(id).expect("a layer")).collect();
        assert_eq!(got, want, "layers after {step} steps");
        vm.step();
    }
}
