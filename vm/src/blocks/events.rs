//! Events: hats, broadcasts (scratch-vm `scratch3_event.js`).

use super::{input, substack};
use crate::project::BlockIdx;
use crate::runtime::{Status, Vm};

pub(super) fn execute(vm: &mut Vm, ti: usize, block: BlockIdx, op: &str) -> bool {
    match op {
        // Event hats do nothing when they run: starting the script was the event.
        "event_whenflagclicked"
        | "event_whenkeypressed"
        | "event_whenthisspriteclicked"
        | "event_whenstageclicked"
        | "event_whenbroadcastreceived"
        | "event_whenbackdropswitchesto"
        | "control_start_as_clone" => {}
        "event_broadcast" => {
            let name = input(vm, ti, block, "BROADCAST_INPUT").to_js_string();
            vm.start_hats("event_whenbroadcastreceived", Some(("BROADCAST_OPTION", &name)), None);
        }
        "event_broadcastandwait" => broadcast_and_wait(vm, ti, block),
        _ => return false,
    }
    let _ = substack;
    true
}

fn broadcast_and_wait(vm: &mut Vm, ti: usize, block: BlockIdx) {
    let started = match vm.threads[ti].stack.last().and_then(|f| f.waiting_for.clone()) {
        Some(s) => s,
        None => {
            let name = input(vm, ti, block, "BROADCAST_INPUT").to_js_string();
            let s = vm.start_hats("event_whenbroadcastreceived", Some(("BROADCAST_OPTION", &name)), None);
            if s.is_empty() {
                return;
            }
            if let Some(f) = vm.threads[ti].stack.last_mut() {
                f.waiting_for = Some(s.clone());
            }
            s
        }
    };
    // Still waiting while any started thread is in the thread list.
    let waiting = vm.threads.iter().any(|t| started.contains(&t.id));
    if waiting {
        let all_waiting =
            vm.threads.iter().filter(|t| started.contains(&t.id)).all(|t| t.status == Status::PromiseWait);
        vm.threads[ti].status = if all_waiting { Status::YieldTick } else { Status::Yield };
    }
}
