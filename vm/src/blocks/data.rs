//! Data: variables and lists (scratch-vm `scratch3_data.js`).

use std::collections::BTreeMap;

use super::{Eval, field, input};
use crate::project::BlockIdx;
use crate::runtime::{TargetId, Vm};
use crate::value::Value;

/// Most items a list may hold (scratch-vm's limit).
pub const MAX_LIST_ITEMS: usize = 200_000;

impl Vm {
    /// Finds a variable by id (then by name) on `target`, then on the stage.
    fn find_var(&self, target: TargetId, id: &str, name: &str, lists: bool) -> Option<(TargetId, usize)> {
        let stage = self.stage_id();
        for t in [target, stage] {
            let Some(tg) = self.targets.get(t as usize) else { continue };
            let defs = &self.project.targets[tg.def as usize];
            let vars = if lists { &defs.lists } else { &defs.variables };
            if let Some(i) = vars.iter().position(|v| v.id == id) {
                return Some((t, i));
            }
        }
        for t in [target, stage] {
            let Some(tg) = self.targets.get(t as usize) else { continue };
            let defs = &self.project.targets[tg.def as usize];
            let vars = if lists { &defs.lists } else { &defs.variables };
            if let Some(i) = vars.iter().position(|v| v.name == name) {
                return Some((t, i));
            }
        }
        None
    }

    /// The value of a variable as seen from `target` (0 if it does not exist).
    pub fn variable_value(&self, target: TargetId, id: &str, name: &str) -> Value {
        match self.find_var(target, id, name, false) {
            Some((t, i)) => self.targets[t as usize].variables[i].clone(),
            None => Value::Num(0.0),
        }
    }

    pub(crate) fn set_variable(&mut self, target: TargetId, id: &str, name: &str, v: Value) {
        if let Some((t, i)) = self.find_var(target, id, name, false) {
            self.targets[t as usize].variables[i] = v;
        }
    }

    fn list_mut(&mut self, target: TargetId, id: &str, name: &str) -> Option<&mut Vec<Value>> {
        let (t, i) = self.find_var(target, id, name, true)?;
        Some(&mut self.targets[t as usize].lists[i])
    }

    /// `(list)` reporter: items joined by spaces, or without separator when all are single characters.
    pub fn list_contents(&self, target: TargetId, id: &str, name: &str) -> Value {
        let Some((t, i)) = self.find_var(target, id, name, true) else { return Value::empty() };
        let items = &self.targets[t as usize].lists[i];
        let strs: Vec<String> = items.iter().map(|v| v.to_js_string().to_string()).collect();
        let all_single = strs.iter().all(|s| s.chars().count() == 1);
        Value::from(if all_single { strs.concat() } else { strs.join(" ") })
    }

    pub(crate) fn note_unknown(&mut self, opcode: &str) {
        *self.unknown_opcodes.entry(opcode.to_string()).or_insert(0) += 1;
    }

    /// Opcodes executed that the VM does not implement, with counts.
    pub fn unknown_opcodes(&self) -> &BTreeMap<String, u64> {
        &self.unknown_opcodes
    }
}

fn var_field(vm: &Vm, block: BlockIdx, name: &str) -> (String, String) {
    let (n, id) = field(vm, block, name).unwrap_or_default();
    (id.unwrap_or_default(), n)
}

pub(super) fn execute(vm: &mut Vm, ti: usize, block: BlockIdx, op: &str) -> bool {
    let target = vm.threads[ti].target;
    match op {
        "data_setvariableto" => {
            let v = input(vm, ti, block, "VALUE");
            let (id, name) = var_field(vm, block, "VARIABLE");
            vm.set_variable(target, &id, &name, v);
        }
        "data_changevariableby" => {
            let (id, name) = var_field(vm, block, "VARIABLE");
            let old = vm.variable_value(target, &id, &name).to_number();
            let by = input(vm, ti, block, "VALUE").to_number();
            vm.set_variable(target, &id, &name, Value::Num(old + by));
        }
        "data_showvariable" | "data_hidevariable" | "data_showlist" | "data_hidelist" => {}
        "data_addtolist" => {
            let item = input(vm, ti, block, "ITEM");
            let (id, name) = var_field(vm, block, "LIST");
            if let Some(l) = vm.list_mut(target, &id, &name)
                && l.len() < MAX_LIST_ITEMS
            {
                l.push(item);
            }
        }
        "data_deletealloflist" => {
            let (id, name) = var_field(vm, block, "LIST");
            if let Some(l) = vm.list_mut(target, &id, &name) {
                l.clear();
            }
        }
        _ => return false,
    }
    true
}

pub(super) fn evaluate(ev: &mut Eval<'_>, op: &str) -> Option<Value> {
    let target = ev.target();
    let v = match op {
        "data_variable" => {
            let (id, name) = var_field(ev.vm, ev.block, "VARIABLE");
            ev.vm.variable_value(target, &id, &name)
        }
        "data_listcontents" => {
            let (id, name) = var_field(ev.vm, ev.block, "LIST");
            ev.vm.list_contents(target, &id, &name)
        }
        "data_lengthoflist" => {
            let (id, name) = var_field(ev.vm, ev.block, "LIST");
            let n = ev.vm.list_mut(target, &id, &name).map_or(0, |l| l.len());
            Value::Num(n as f64)
        }
        _ => return None,
    };
    Some(v)
}
