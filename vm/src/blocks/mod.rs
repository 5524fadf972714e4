//! Block implementations, one module per category (as scratch-vm's
//! `blocks/scratch3_*.js`), and the dispatcher that runs a block.

mod control;
mod data;
mod events;
mod looks;
mod motion;
mod operators;
mod sensing;

use std::sync::Arc;

use crate::project::{BlockIdx, Input, Lit};
use crate::runtime::{TargetId, Vm};
use crate::value::Value;

/// Deepest reporter nesting evaluated; deeper inputs read as empty (hostile projects).
const MAX_EVAL_DEPTH: u32 = 1_000;

/// Executes the command (or hat) block `block` on thread `ti`.
pub(crate) fn execute(vm: &mut Vm, ti: usize, block: BlockIdx) {
    vm.mark_executed(block);
    let project = Arc::clone(&vm.project);
    let b = project.block(block);
    let op = b.opcode.as_str();
    let handled = events::execute(vm, ti, block, op)
        || control::execute(vm, ti, block, op)
        || data::execute(vm, ti, block, op)
        || motion::execute(vm, ti, block, op)
        || looks::execute(vm, ti, block, op)
        || sensing::execute(vm, ti, block, op);
    if !handled {
        // A reporter used as a statement is evaluated for its side effects (none here);
        // unknown opcodes are a counted no-op, never fatal.
        if evaluate_reporter(vm, ti, block, 0).is_none() {
            vm.note_unknown(op);
        }
    }
}

/// Evaluates input `name` of `block` for thread `ti`.
pub(crate) fn input(vm: &mut Vm, ti: usize, block: BlockIdx, name: &str) -> Value {
    input_at(vm, ti, block, name, 0)
}

fn input_at(vm: &mut Vm, ti: usize, block: BlockIdx, name: &str, depth: u32) -> Value {
    let project = Arc::clone(&vm.project);
    match project.block(block).input(name) {
        None | Some(Input::Empty) => Value::empty(),
        Some(Input::Lit(Lit::Num(n))) => Value::Num(*n),
        Some(Input::Lit(Lit::Str(s))) => Value::from(s.as_str()),
        Some(Input::Lit(Lit::Bool(b))) => Value::Bool(*b),
        Some(Input::Lit(Lit::Null)) => Value::from("null"),
        Some(Input::Block(idx)) => {
            if depth >= MAX_EVAL_DEPTH {
                return Value::empty();
            }
            evaluate_reporter(vm, ti, *idx, depth + 1).unwrap_or_else(Value::empty)
        }
        Some(Input::Variable { name, id }) => {
            let target = vm.threads[ti].target;
            vm.variable_value(target, id, name)
        }
        Some(Input::List { name, id }) => {
            let target = vm.threads[ti].target;
            vm.list_contents(target, id, name)
        }
        Some(Input::Broadcast { name, .. }) => Value::from(name.as_str()),
    }
}

/// Evaluates a reporter block. `None` when the opcode is not a known reporter.
pub(crate) fn evaluate_reporter(vm: &mut Vm, ti: usize, block: BlockIdx, depth: u32) -> Option<Value> {
    vm.mark_executed(block);
    let project = Arc::clone(&vm.project);
    let b = project.block(block);
    // Menu shadows (`motion_goto_menu`, `sensing_keyoptions`, …) report their field.
    if b.shadow && b.inputs.is_empty() && b.fields.len() == 1 {
        return Some(Value::from(b.fields[0].value.as_str()));
    }
    let op = b.opcode.as_str();
    let mut ev = Eval { vm, ti, block, depth };
    operators::evaluate(&mut ev, op)
        .or_else(|| data::evaluate(&mut ev, op))
        .or_else(|| motion::evaluate(&mut ev, op))
        .or_else(|| looks::evaluate(&mut ev, op))
        .or_else(|| sensing::evaluate(&mut ev, op))
}

/// Context for evaluating one reporter.
pub(crate) struct Eval<'a> {
    pub vm: &'a mut Vm,
    pub ti: usize,
    pub block: BlockIdx,
    pub depth: u32,
}

impl Eval<'_> {
    /// Evaluates input `name` of the reporter.
    pub fn arg(&mut self, name: &str) -> Value {
        input_at(self.vm, self.ti, self.block, name, self.depth)
    }

    /// The value of field `name`.
    pub fn field(&self, name: &str) -> Option<String> {
        self.vm.project.block(self.block).field(name).map(|f| f.value.clone())
    }

    /// The target the thread runs on.
    pub fn target(&self) -> TargetId {
        self.vm.threads[self.ti].target
    }
}

/// The field `name` of `block` (value, id).
pub(crate) fn field(vm: &Vm, block: BlockIdx, name: &str) -> Option<(String, Option<String>)> {
    vm.project.block(block).field(name).map(|f| (f.value.clone(), f.id.clone()))
}

/// The first block of substack input `name`.
pub(crate) fn substack(vm: &Vm, block: BlockIdx, name: &str) -> Option<BlockIdx> {
    match vm.project.block(block).input(name) {
        Some(Input::Block(b)) => Some(*b),
        _ => None,
    }
}
