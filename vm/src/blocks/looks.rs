//! Looks (scratch-vm `scratch3_looks.js`).

use super::{Eval, input};
use crate::project::BlockIdx;
use crate::runtime::{Bubble, Vm};
use crate::value::Value;

impl Vm {
    /// scratch-vm `setCostume` with a menu value: a name first, then a number.
    pub(crate) fn switch_costume(&mut self, target: u32, v: &Value) {
        let Some(t) = self.targets.get(target as usize) else { return };
        let costumes = &self.project.targets[t.def as usize].costumes;
        let n = costumes.len();
        if n == 0 {
            return;
        }
        let name = v.to_js_string();
        let idx = if let Some(i) = costumes.iter().position(|c| *c.name == *name) {
            Some(i)
        } else if &*name == "next costume" {
            Some((t.costume + 1) % n)
        } else if &*name == "previous costume" {
            Some((t.costume + n - 1) % n)
        } else {
            let num = v.js_number();
            if num.is_finite() && !(matches!(v, Value::Str(s) if s.trim().is_empty())) {
                let i = (num.round() - 1.0).rem_euclid(n as f64);
                Some(i as usize)
            } else {
                None
            }
        };
        if let (Some(i), Some(t)) = (idx, self.targets.get_mut(target as usize)) {
            t.costume = i;
        }
    }
}

pub(super) fn execute(vm: &mut Vm, ti: usize, block: BlockIdx, op: &str) -> bool {
    let target = vm.threads[ti].target;
    match op {
        "looks_say" | "looks_think" => {
            let msg = input(vm, ti, block, "MESSAGE");
            let kind = if op == "looks_say" { "say" } else { "think" };
            let text = msg.to_js_string().to_string();
            if let Some(t) = vm.targets.get_mut(target as usize) {
                t.bubble = if text.is_empty() { None } else { Some(Bubble { kind, text }) };
            }
        }
        "looks_show" | "looks_hide" => {
            if let Some(t) = vm.targets.get_mut(target as usize)
                && !t.is_stage
            {
                t.visible = op == "looks_show";
            }
        }
        "looks_switchcostumeto" => {
            let v = input(vm, ti, block, "COSTUME");
            vm.switch_costume(target, &v);
        }
        "looks_nextcostume" => vm.switch_costume(target, &Value::from("next costume")),
        "looks_changesizeby" => {
            let d = input(vm, ti, block, "CHANGE").to_number();
            if let Some(t) = vm.targets.get_mut(target as usize) {
                t.size += d;
            }
        }
        "looks_setsizeto" => {
            let s = input(vm, ti, block, "SIZE").to_number();
            if let Some(t) = vm.targets.get_mut(target as usize) {
                t.size = s;
            }
        }
        _ => return false,
    }
    true
}

pub(super) fn evaluate(ev: &mut Eval<'_>, op: &str) -> Option<Value> {
    let t = ev.vm.target(ev.target())?;
    let v = match op {
        "looks_size" => Value::Num(t.size.round()),
        "looks_costumenumbername" => {
            let costumes = &ev.vm.project.targets[t.def as usize].costumes;
            match ev.field("NUMBER_NAME").as_deref() {
                Some("name") => Value::from(costumes.get(t.costume).map(|c| c.name.as_str()).unwrap_or("")),
                _ => Value::Num(t.costume as f64 + 1.0),
            }
        }
        _ => return None,
    };
    Some(v)
}
