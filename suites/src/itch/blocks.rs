//! Block executions as Itch's "advanced profiler" sees them (one event per primitive call,
//! named by the stack block that runs), reconstructed after each step because clowder's VM
//! has no per-execution hook. From the VM's public observations:
//!
//! * a command's first execution: its coverage bit turned on in the step;
//! * every further evaluation of a counted condition (`if`, `if else`, `repeat`, `repeat
//!   until`, `while`, `wait until`; the instrumentation's true/false counts), and the body the
//!   outcome ran (the direct commands of the loop's or branch's stack, once per run);
//! * one event per step for each thread waiting in a timed block (scratch-vm re-runs that
//!   primitive every tick), and when a thread enters an already executed timed block again,
//!   another iteration of every enclosing `forever` (the loop and its direct commands);
//! * a live script whose top-level `forever` (without a timed block being waited in) already
//!   ran: one iteration per step, as scratch-vm yields at the end of each iteration.
//!
//! What this misses (documented in docs/testing.md): the exact order inside a step, commands
//! nested below a second loop level without a condition of their own, and loops whose thread
//! is blocked elsewhere (`broadcast and wait`, `ask`).

use std::collections::BTreeSet;

use clowder_vm::project::{Block, Input, Project};
use clowder_vm::{TargetId, Vm};

/// Opcodes whose executions the instrumentation counts (conditions and `repeat`).
fn counted(opcode: &str) -> bool {
    matches!(
        opcode,
        "control_if"
            | "control_if_else"
            | "control_repeat"
            | "control_repeat_until"
            | "control_while"
            | "control_wait_until"
    )
}

/// Hats that have no primitive in scratch-vm, so Itch's profiler never sees them.
fn has_primitive(opcode: &str) -> bool {
    !matches!(
        opcode,
        "event_whenflagclicked"
            | "event_whenkeypressed"
            | "event_whenthisspriteclicked"
            | "event_whenstageclicked"
            | "event_whenbroadcastreceived"
            | "event_whenbackdropswitchesto"
            | "control_start_as_clone"
            | "procedures_definition"
            | "procedures_prototype"
    )
}

/// The commands of the stack in input `name` of `b`, in order (at most 10 000).
fn stack(project: &Project, b: &Block, name: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let mut next = match b.input(name) {
        Some(Input::Block(x)) => Some(*x),
        _ => None,
    };
    while let Some(i) = next {
        if out.len() >= 10_000 || out.contains(&i) {
            break;
        }
        out.push(i);
        next = project.blocks.get(i as usize).and_then(|x| x.next);
    }
    out
}

/// Whether block `inner` lies inside block `outer` (following parents).
fn inside(project: &Project, inner: u32, outer: u32) -> bool {
    let mut up = project.blocks.get(inner as usize).and_then(|b| b.parent);
    let mut guard = 0;
    while let Some(p) = up {
        if p == outer {
            return true;
        }
        guard += 1;
        if guard > 10_000 {
            return false;
        }
        up = project.blocks.get(p as usize).and_then(|b| b.parent);
    }
    false
}

/// See the module documentation.
#[derive(Debug, Default)]
pub(crate) struct BlockTracker {
    /// Whether events are wanted (`enableAdvancedProfiler`).
    pub on: bool,
    /// Only these sprites (`None`: all).
    pub only: Option<Vec<String>>,
    bits: Vec<u64>,
    trues: Vec<u64>,
    falses: Vec<u64>,
    waits: Vec<(TargetId, u32, f64)>,
}

impl BlockTracker {
    /// The events of the last step: `(target name, block id)`.
    pub(crate) fn events(&mut self, vm: &Vm) -> Vec<(String, String)> {
        let project = vm.project();
        let mut out: Vec<u32> = Vec::new();
        let bits = vm.executed_bits();
        self.bits.resize(bits.len(), 0);
        let before: Vec<u64> = self.bits.clone();
        let mut fresh = BTreeSet::new();
        for (w, (&now, prev)) in bits.iter().zip(self.bits.iter_mut()).enumerate() {
            let mut new = now & !*prev;
            *prev = now;
            while new != 0 {
                let b = new.trailing_zeros();
                new &= new - 1;
                let idx = (w as u32) * 64 + b;
                fresh.insert(idx);
                out.push(idx);
            }
        }
        let covered_before =
            |i: u32| before.get(i as usize / 64).is_some_and(|w| w & (1u64 << (i % 64)) != 0) && !fresh.contains(&i);
        // Runs `runs` times of a stack's direct commands (those counted elsewhere excluded).
        let body = |out: &mut Vec<u32>, cmds: &[u32], runs: u64, except: Option<u32>| {
            for &c in cmds.iter().filter(|&&c| Some(c) != except) {
                let Some(b) = project.blocks.get(c as usize) else { continue };
                if counted(&b.opcode) || b.opcode == "control_forever" {
                    continue;
                }
                let n = runs.saturating_sub(u64::from(fresh.contains(&c))).min(10_000);
                out.extend(std::iter::repeat_n(c, n as usize));
            }
        };
        if let Some(ins) = vm.instrument() {
            let conds = ins.conditions();
            self.trues.resize(conds.len(), 0);
            self.falses.resize(conds.len(), 0);
            for (i, c) in conds.iter().enumerate() {
                let (Some(pt), Some(pf)) = (self.trues.get_mut(i), self.falses.get_mut(i)) else { continue };
                let dt = c.true_count.saturating_sub(*pt);
                let df = c.false_count.saturating_sub(*pf);
                (*pt, *pf) = (c.true_count, c.false_count);
                if dt + df == 0 {
                    continue;
                }
                let idx = i as u32;
                let Some(b) = project.blocks.get(i) else { continue };
                let own = (dt + df).saturating_sub(u64::from(fresh.contains(&idx))).min(10_000);
                out.extend(std::iter::repeat_n(idx, own as usize));
                match b.opcode.as_str() {
                    "control_repeat" | "control_while" | "control_if" => {
                        body(&mut out, &stack(project, b, "SUBSTACK"), dt, None)
                    }
                    "control_repeat_until" => body(&mut out, &stack(project, b, "SUBSTACK"), df, None),
                    "control_if_else" => {
                        body(&mut out, &stack(project, b, "SUBSTACK"), dt, None);
                        body(&mut out, &stack(project, b, "SUBSTACK2"), df, None);
                    }
                    _ => {}
                }
            }
        }
        let waits: Vec<(TargetId, u32, f64)> =
            vm.waiting_blocks().into_iter().map(|w| (w.target, w.block, w.remaining_ms)).collect();
        for &(t, b, remaining) in &waits {
            if fresh.contains(&b) || project.blocks.get(b as usize).is_none() {
                continue;
            }
            out.push(b);
            let again = match self.waits.iter().find(|(pt, pb, _)| *pt == t && *pb == b) {
                Some(&(_, _, before)) => remaining > before,
                None => true,
            };
            if again {
                let mut up = project.blocks.get(b as usize).and_then(|x| x.parent);
                let mut guard = 0;
                while let Some(p) = up {
                    let Some(pb) = project.blocks.get(p as usize) else { break };
                    if pb.opcode == "control_forever" && inside(project, b, p) {
                        out.push(p);
                        body(&mut out, &stack(project, pb, "SUBSTACK"), 1, Some(b));
                    }
                    guard += 1;
                    if guard > 10_000 {
                        break;
                    }
                    up = pb.parent;
                }
            }
        }
        // Scripts looping in a top-level `forever` without a timed block: one iteration a step.
        for (t, top) in vm.active_scripts() {
            let mut next = project.blocks.get(top as usize).and_then(|b| b.next);
            let mut guard = 0;
            while let Some(i) = next {
                let Some(b) = project.blocks.get(i as usize) else { break };
                if b.opcode == "control_forever" {
                    let waiting = waits.iter().any(|&(wt, wb, _)| wt == t && inside(project, wb, i));
                    if covered_before(i) && !waiting {
                        out.push(i);
                        body(&mut out, &stack(project, b, "SUBSTACK"), 1, None);
                    }
                    break;
                }
                guard += 1;
                if guard > 10_000 {
                    break;
                }
                next = b.next;
            }
        }
        self.waits = waits;
        let names: Vec<&str> = project.targets.iter().map(|t| t.name.as_str()).collect();
        out.into_iter()
            .filter_map(|b| {
                let block = project.blocks.get(b as usize)?;
                let name = names.get(block.target as usize)?;
                let wanted = self.only.as_ref().is_none_or(|o| o.iter().any(|n| n == name));
                (wanted && has_primitive(&block.opcode) && !block.shadow).then(|| (name.to_string(), block.id.clone()))
            })
            .collect()
    }
}
