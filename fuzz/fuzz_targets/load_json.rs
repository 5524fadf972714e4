//! Arbitrary bytes as a bare project.json: the loader must return a project or
//! a `LoadError`, never panic, and stay within its limits.
#![no_main]

use clowder_vm::project::{Input, LoadLimits, load};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Bytes that start like a zip take the container path; the `load_zip`
    // target covers that, this one the JSON and model layers.
    if data.starts_with(b"PK") {
        return;
    }
    if let Ok(p) = load(data, "fuzz.json", &LoadLimits::default()) {
        // Invariants the interpreter relies on.
        assert!(p.targets.first().is_some_and(|t| t.is_stage));
        for t in &p.targets {
            assert!(t.current_costume < t.costumes.len());
            for &s in &t.scripts {
                assert!((s as usize) < p.blocks.len());
            }
        }
        // The block graph is a forest: every child names its one parent.
        for (i, b) in p.blocks.iter().enumerate() {
            let children = b.next.into_iter().chain(b.inputs.iter().filter_map(|(_, inp)| match inp {
                Input::Block(c) => Some(*c),
                _ => None,
            }));
            for c in children {
                assert_eq!(p.block(c).parent, Some(i as u32));
            }
        }
    }
});
