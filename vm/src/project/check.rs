//! Checks of the block graph: at most one execution parent per block, no cycles, bounded
//! input nesting; and the index of procedure definitions and prototypes.

use std::collections::HashSet;

use super::loader::Bad;
use super::{Block, BlockIdx, Input, LoadErrorKind};

/// The first `procedures_definition` / `procedures_prototype` per proccode, in
/// block order, each sorted by proccode for lookup.
pub(super) type ProcIndex = Vec<(String, BlockIdx)>;

pub(super) fn procedure_index(blocks: &[Block], base: usize) -> (ProcIndex, ProcIndex) {
    let mut defs: ProcIndex = Vec::new();
    let mut protos: ProcIndex = Vec::new();
    let mut seen_defs: HashSet<&str> = HashSet::new();
    let mut seen_protos: HashSet<&str> = HashSet::new();
    for (i, b) in blocks.iter().enumerate().skip(base) {
        match b.opcode.as_str() {
            "procedures_definition" => {
                if let Some(Input::Block(p)) = b.input("custom_block")
                    && let Some(m) = &blocks[*p as usize].mutation
                    && seen_defs.insert(&m.proccode)
                {
                    defs.push((m.proccode.clone(), i as BlockIdx));
                }
            }
            "procedures_prototype" => {
                if let Some(m) = &b.mutation
                    && seen_protos.insert(&m.proccode)
                {
                    protos.push((m.proccode.clone(), i as BlockIdx));
                }
            }
            _ => {}
        }
    }
    defs.sort_by(|a, b| a.0.cmp(&b.0));
    protos.sort_by(|a, b| a.0.cmp(&b.0));
    (defs, protos)
}

/// How a block links to a child.
pub(super) fn link_name(parent: &Block, child: BlockIdx) -> String {
    if parent.next == Some(child) {
        return "next".to_string();
    }
    match parent.inputs.iter().find(|(_, i)| *i == Input::Block(child)) {
        Some((name, _)) => format!("input {name}"),
        None => "link".to_string(),
    }
}

/// Checks that the blocks `base..` of one target form a forest through
/// `next` and input links (one parent each, no cycles), sets `parent`, and
/// bounds the input nesting depth. A block held in more than one reporter slot is allowed
/// (its `parent` is the first holder) and returned: scratch-vm runs such files.
pub(super) fn check_tree(
    blocks: &mut [Block],
    base: usize,
    tname: &str,
    max_depth: usize,
) -> Result<Vec<BlockIdx>, Bad> {
    let n = blocks.len() - base;
    let mut parent: Vec<Option<BlockIdx>> = vec![None; n];
    // Whether the block's (first) link is a reporter slot: an input other than a substack or
    // a procedure's prototype. A block held in two such slots is shared, as scratch-vm runs it.
    let mut in_slot = vec![false; n];
    let mut shared = vec![false; n];
    let mut children: Vec<(BlockIdx, bool)> = Vec::new();
    for local in 0..n {
        let b = &blocks[base + local];
        let me = (base + local) as BlockIdx;
        children.clear();
        children.extend(b.next.map(|c| (c, false)));
        children.extend(b.inputs.iter().filter_map(|(name, i)| match i {
            Input::Block(c) => Some((*c, !name.starts_with("SUBSTACK") && name != "custom_block")),
            _ => None,
        }));
        for &(c, slot) in &children {
            let cl = c as usize - base;
            if c == me {
                return Err(Bad::at_block(
                    LoadErrorKind::BlockGraph,
                    tname,
                    &b.id,
                    format!("its {} is itself (a cycle)", link_name(b, c)),
                ));
            }
            if parent[cl].is_some() && slot && in_slot[cl] {
                // Held in a second reporter slot: the parent stays the first holder.
                shared[cl] = true;
                continue;
            }
            if let Some(p) = parent[cl] {
                let first = &blocks[p as usize];
                return Err(Bad::at_block(
                    LoadErrorKind::BlockGraph,
                    tname,
                    &blocks[c as usize].id,
                    format!(
                        "is linked from two places: {} of block {:?} and {} of block {:?}",
                        link_name(first, c),
                        first.id,
                        link_name(b, c),
                        b.id
                    ),
                ));
            }
            parent[cl] = Some(me);
            in_slot[cl] = slot;
        }
    }
    let shared: Vec<BlockIdx> = (0..n).filter(|&l| shared[l]).map(|l| (base + l) as BlockIdx).collect();
    if !shared.is_empty()
        && let Some(l) = on_cycle(blocks, base)
    {
        return Err(Bad::at_block(
            LoadErrorKind::BlockGraph,
            tname,
            &blocks[base + l].id,
            "is part of a cycle of next/input links (a stack or reporter that contains itself)",
        ));
    }
    // Walk down from the roots; whatever is not reached hangs on a cycle.
    let mut depth = vec![usize::MAX; n];
    let mut stack: Vec<usize> = (0..n).filter(|&l| parent[l].is_none()).collect();
    for &r in &stack {
        depth[r] = 0;
    }
    while let Some(l) = stack.pop() {
        let b = &blocks[base + l];
        let d = depth[l];
        let next = b.next.map(|c| (c, d));
        let ins = b.inputs.iter().filter_map(|(_, i)| match i {
            Input::Block(c) => Some((*c, d + 1)),
            _ => None,
        });
        for (c, cd) in next.into_iter().chain(ins) {
            if cd > max_depth {
                return Err(Bad::at_block(
                    LoadErrorKind::Limit,
                    tname,
                    &blocks[c as usize].id,
                    format!("is nested more than {max_depth} input levels deep"),
                ));
            }
            let cl = c as usize - base;
            // A shared block is reached once per holder: walk it again only deeper than
            // before, so the walk is bounded by blocks × depth limit.
            if depth[cl] != usize::MAX && depth[cl] >= cd {
                continue;
            }
            depth[cl] = cd;
            stack.push(cl);
        }
    }
    if let Some(start) = depth.iter().position(|&d| d == usize::MAX) {
        // Follow parents until one repeats: that block is on the cycle.
        let mut seen = vec![false; n];
        let mut l = start;
        while !seen[l] {
            seen[l] = true;
            match parent[l] {
                Some(p) => l = p as usize - base,
                None => break,
            }
        }
        let b = &blocks[base + l];
        return Err(Bad::at_block(
            LoadErrorKind::BlockGraph,
            tname,
            &b.id,
            "is part of a cycle of next/input links (a stack or reporter that contains itself)",
        ));
    }
    for (l, p) in parent.into_iter().enumerate() {
        blocks[base + l].parent = p;
    }
    Ok(shared)
}

/// Links of `b`: its `next`, then its input blocks in input order.
fn links(b: &Block) -> impl Iterator<Item = BlockIdx> + '_ {
    b.next.into_iter().chain(b.inputs.iter().filter_map(|(_, i)| match i {
        Input::Block(c) => Some(*c),
        _ => None,
    }))
}

/// A block (local index) on a cycle of the links of blocks `base..`, if there is one: with
/// shared blocks, "not reachable from a root" no longer finds every cycle.
fn on_cycle(blocks: &[Block], base: usize) -> Option<usize> {
    let n = blocks.len() - base;
    // 0: not seen, 1: on the current path, 2: done.
    let mut state = vec![0u8; n];
    let mut stack: Vec<(usize, Vec<BlockIdx>)> = Vec::new();
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        state[start] = 1;
        stack.push((start, links(&blocks[base + start]).collect()));
        while let Some((l, todo)) = stack.last_mut() {
            let l = *l;
            match todo.pop() {
                Some(c) => {
                    let cl = c as usize - base;
                    match state[cl] {
                        1 => return Some(cl),
                        0 => {
                            state[cl] = 1;
                            stack.push((cl, links(&blocks[c as usize]).collect()));
                        }
                        _ => {}
                    }
                }
                None => {
                    state[l] = 2;
                    stack.pop();
                }
            }
        }
    }
    None
}
