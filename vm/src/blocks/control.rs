//! Control: waits, loops, conditionals, stop, clones (scratch-vm `scratch3_control.js`).

use super::{field, input, substack};
use crate::project::BlockIdx;
use crate::runtime::{Status, Vm};

pub(super) fn execute(vm: &mut Vm, ti: usize, block: BlockIdx, op: &str) -> bool {
    match op {
        "control_wait" => {
            let now = vm.current_msecs;
            let timer = vm.threads[ti].stack.last().and_then(|f| f.timer);
            match timer {
                None => {
                    let d = (1000.0 * input(vm, ti, block, "DURATION").to_number()).max(0.0);
                    if let Some(f) = vm.threads[ti].stack.last_mut() {
                        f.timer = Some((now, d));
                    }
                    vm.threads[ti].status = Status::Yield;
                }
                Some((start, d)) => {
                    if now - start < d {
                        vm.threads[ti].status = Status::Yield;
                    }
                }
            }
        }
        "control_repeat" => {
            let counter = match vm.threads[ti].stack.last().and_then(|f| f.loop_counter) {
                Some(c) => c,
                None => {
                    let times = input(vm, ti, block, "TIMES").to_number().round();
                    // Saturating conversion: huge or infinite counts loop "forever".
                    times as i64
                }
            };
            let counter = counter - 1;
            if let Some(f) = vm.threads[ti].stack.last_mut() {
                f.loop_counter = Some(counter);
            }
            if counter >= 0 {
                let first = substack(vm, block, "SUBSTACK");
                vm.start_branch(ti, first, true);
            }
        }
        "control_forever" => {
            let first = substack(vm, block, "SUBSTACK");
            vm.start_branch(ti, first, true);
        }
        "control_repeat_until" => {
            if !input(vm, ti, block, "CONDITION").to_bool() {
                let first = substack(vm, block, "SUBSTACK");
                vm.start_branch(ti, first, true);
            }
        }
        "control_while" => {
            if input(vm, ti, block, "CONDITION").to_bool() {
                let first = substack(vm, block, "SUBSTACK");
                vm.start_branch(ti, first, true);
            }
        }
        "control_wait_until" => {
            if !input(vm, ti, block, "CONDITION").to_bool() {
                vm.threads[ti].status = Status::Yield;
            }
        }
        "control_if" => {
            if input(vm, ti, block, "CONDITION").to_bool() {
                let first = substack(vm, block, "SUBSTACK");
                vm.start_branch(ti, first, false);
            }
        }
        "control_if_else" => {
            let name = if input(vm, ti, block, "CONDITION").to_bool() { "SUBSTACK" } else { "SUBSTACK2" };
            let first = substack(vm, block, name);
            vm.start_branch(ti, first, false);
        }
        "control_stop" => {
            let option = field(vm, block, "STOP_OPTION").map(|f| f.0).unwrap_or_default();
            match option.as_str() {
                "all" => vm.stop_all(),
                "other scripts in sprite" | "other scripts in stage" => {
                    let target = vm.threads[ti].target;
                    let me = vm.threads[ti].id;
                    for t in &mut vm.threads {
                        if t.target == target && t.id != me {
                            t.status = Status::Done;
                        }
                    }
                }
                _ => vm.threads[ti].status = Status::Done,
            }
        }
        "control_create_clone_of" => {
            let which = input(vm, ti, block, "CLONE_OPTION").to_js_string();
            let me = vm.threads[ti].target;
            let src = if &*which == "_myself_" { Some(me) } else { vm.find_target(&which, 0) };
            if let Some(src) = src
                && let Some(clone) = vm.create_clone(src)
            {
                // "when I start as a clone" scripts start during the create block.
                vm.start_hats("control_start_as_clone", None, Some(clone));
            }
        }
        "control_delete_this_clone" => {
            let me = vm.threads[ti].target;
            if vm.target(me).is_some_and(|t| t.clone_index != 0) {
                vm.delete_target(me);
                vm.threads[ti].status = Status::Done;
            }
        }
        _ => return false,
    }
    true
}
