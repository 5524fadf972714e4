//! Load arbitrary bytes as project.json and, when that works, run the project:
//! green flag, 30 steps with a small operation budget per step, a few inputs.
//! The VM must never panic and every step must end (the budget bounds it).
#![no_main]

use std::sync::Arc;

use clowder_vm::project::{LoadLimits, load};
use clowder_vm::{Vm, VmOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.starts_with(b"PK") {
        return;
    }
    let limits = LoadLimits { max_json_bytes: 1 << 20, max_blocks: 20_000, ..LoadLimits::default() };
    let Ok(project) = load(data, "fuzz.json", &limits) else { return };
    let sprites: Vec<String> = project.targets.iter().filter(|t| !t.is_stage).map(|t| t.name.clone()).collect();
    let opts = VmOptions { seed: data.len() as u64, max_ops_per_step: 20_000, ..VmOptions::default() };
    let mut vm = Vm::new(Arc::new(project), opts);
    vm.green_flag();
    for k in 0..30u32 {
        match k {
            3 => vm.key_down("space"),
            5 => vm.key_up("space"),
            7 => vm.answer_text("7"),
            9 => vm.mouse_move(30.0, -20.0),
            11 => vm.click_stage(),
            13 => {
                if let Some(id) = sprites.first().and_then(|n| vm.find_target(n, 0)) {
                    vm.click_target(id);
                }
            }
            _ => {}
        }
        vm.step();
    }
});
