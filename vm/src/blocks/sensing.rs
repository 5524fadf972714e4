//! Sensing (scratch-vm `scratch3_sensing.js`).

use super::Eval;
use crate::project::BlockIdx;
use crate::runtime::{Vm, normalize_key};
use crate::value::Value;

pub(super) fn execute(vm: &mut Vm, _ti: usize, _block: BlockIdx, op: &str) -> bool {
    match op {
        "sensing_resettimer" => vm.timer_start = vm.current_msecs,
        _ => return false,
    }
    true
}

pub(super) fn evaluate(ev: &mut Eval<'_>, op: &str) -> Option<Value> {
    let v = match op {
        "sensing_keypressed" => {
            let key = ev.arg("KEY_OPTION").to_js_string();
            if &*key == "any" {
                Value::Bool(!ev.vm.keys_down.is_empty())
            } else {
                Value::Bool(ev.vm.keys_down.contains(&normalize_key(&key)))
            }
        }
        "sensing_mousedown" => Value::Bool(ev.vm.mouse.2),
        "sensing_mousex" => Value::Num(ev.vm.mouse.0),
        "sensing_mousey" => Value::Num(ev.vm.mouse.1),
        "sensing_timer" => Value::Num(ev.vm.timer_secs()),
        "sensing_answer" => Value::from(ev.vm.answer.as_str()),
        "sensing_loudness" => Value::Num(ev.vm.loudness),
        "sensing_username" => Value::empty(),
        // No renderer in this profile: nothing ever touches.
        "sensing_touchingobject" | "sensing_touchingcolor" | "sensing_coloristouchingcolor" => Value::Bool(false),
        _ => return None,
    };
    Some(v)
}
