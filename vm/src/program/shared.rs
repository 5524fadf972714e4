//! Reporters held in more than one input slot ([`crate::project::Project::shared`]), as
//! scratch-vm runs them.
//!
//! scratch-vm keeps one cached form per block id (`BlocksExecuteCache`), built when a block
//! is first executed, together with the cached forms of its inputs. A shared reporter has one
//! cached form, whose `_parentValues` point at the input slot of the holder that was built
//! **last**: every holder still runs the reporter (its operations are copied into each
//! holder's list), but the value goes to that one slot. Any other holder reads what its own
//! slot holds: `undefined`, or a value written while it was the last one built.
//!
//! The compiler wraps each such input in a `Rep::Shared` reporter naming the reporter's
//! group and the slot; [`SharedInfo`] says, per block, what building its cached form binds.
//! The run-time half is `engine::shared`.

use super::model::SharedInfo;
use super::opcodes::rep_of_opcode;
use crate::project::{BlockIdx, Input, Project};

/// Groups, slots and the build table of `project`; `None` without shared reporters (every
/// other program pays nothing). Only reporters with an implementation form groups:
/// shadow-like blocks (menus, literals) give every holder their value when it is built, and
/// blocks without an implementation report nothing, so sharing them changes nothing.
pub(super) fn analyse(project: &Project) -> Option<SharedInfo> {
    let reports = |b: &BlockIdx| project.blocks.get(*b as usize).is_some_and(|k| rep_of_opcode(&k.opcode).is_some());
    let groups: Vec<BlockIdx> = project.shared.iter().copied().filter(reports).collect();
    if groups.is_empty() {
        return None;
    }
    let n = project.blocks.len();
    let mut kids: Vec<Box<[(u32, u32, u32)]>> = Vec::with_capacity(n);
    let mut slots = 0u32;
    for blk in &project.blocks {
        let mut list = Vec::new();
        for (name, inp) in &blk.inputs {
            if name.starts_with("SUBSTACK") || name == "custom_block" {
                continue;
            }
            let Input::Block(c) = inp else { continue };
            match groups.binary_search(c) {
                Ok(g) => {
                    list.push((*c, g as u32, slots));
                    slots += 1;
                }
                Err(_) => list.push((*c, u32::MAX, u32::MAX)),
            }
        }
        kids.push(list.into_boxed_slice());
    }
    // A block is relevant when building it binds something: a shared reporter in its inputs,
    // at any depth. The loader checked the links for cycles, so the order below terminates:
    // children before holders, by an explicit post-order walk.
    let mut relevant = vec![0u64; n.div_ceil(64)];
    let mut state = vec![0u8; n];
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        state[start] = 1;
        while let Some(&mut (b, ref mut i)) = stack.last_mut() {
            let list = &kids[b];
            if let Some(&(c, g, _)) = list.get(*i) {
                *i += 1;
                let cu = c as usize;
                if g != u32::MAX {
                    relevant[b / 64] |= 1 << (b % 64);
                }
                if cu < n && state[cu] == 0 {
                    state[cu] = 1;
                    stack.push((cu, 0));
                }
                continue;
            }
            if list.iter().any(|&(c, _, _)| (c as usize) < n && relevant[c as usize / 64] & (1 << (c % 64)) != 0) {
                relevant[b / 64] |= 1 << (b % 64);
            }
            state[b] = 2;
            stack.pop();
        }
    }
    Some(SharedInfo { groups: groups.len() as u32, slots, kids, relevant })
}
