//! Phases 5 and 6 of the construction, and the analyses on the finished CFG: only what is
//! reachable from `Entry` is kept (renumbered in order), every node is made to reach `Exit`,
//! then immediate post-dominators and control dependences are computed.

use std::collections::BTreeSet;

use super::build::Builder;
use super::{ENTRY, EXIT, Graph, Label, NONE, Node, NodeId};

impl Builder<'_> {
    /// Phases 5 and 6, then post-dominators and the CDG.
    pub(super) fn finish(self) -> Graph {
        let nb = self.block_count();
        let Builder { nodes, succ, event_hats, send_edges, .. } = self;
        // Phase 5: keep what is reachable from Entry (and Exit), renumbered in order.
        let n = nodes.len();
        let mut reach = vec![false; n];
        reach[ENTRY as usize] = true;
        reach[EXIT as usize] = true;
        let mut stack = vec![ENTRY];
        while let Some(x) = stack.pop() {
            for &(y, _) in &succ[x as usize] {
                if !reach[y as usize] {
                    reach[y as usize] = true;
                    stack.push(y);
                }
            }
        }
        let mut renum = vec![NONE; n];
        let mut k = 0;
        for i in 0..n {
            if reach[i] {
                renum[i] = k;
                k += 1;
            }
        }
        let mut g_nodes = Vec::with_capacity(k as usize);
        let mut g_succ = Vec::with_capacity(k as usize);
        let mut g_hats = Vec::with_capacity(k as usize);
        for i in 0..n {
            if !reach[i] {
                continue;
            }
            g_nodes.push(nodes[i].clone());
            g_succ.push(
                succ[i]
                    .iter()
                    .filter(|(y, _)| reach[*y as usize])
                    .map(|(y, l)| (renum[*y as usize], *l))
                    .collect::<Vec<_>>(),
            );
            g_hats.push(event_hats[i].clone());
        }
        let mut g_block_node = vec![NONE; nb];
        for (i, node) in g_nodes.iter().enumerate() {
            if let Node::Block(b) = node {
                g_block_node[*b as usize] = i as NodeId;
            }
        }
        let send_edges: BTreeSet<(NodeId, NodeId)> = send_edges
            .into_iter()
            .filter(|(a, b)| reach[*a as usize] && reach[*b as usize])
            .map(|(a, b)| (renum[a as usize], renum[b as usize]))
            .collect();

        // Phase 6: every node must reach Exit (defensive; the construction guarantees it).
        let k = g_nodes.len();
        let mut pred: Vec<Vec<NodeId>> = vec![Vec::new(); k];
        for (x, ss) in g_succ.iter().enumerate() {
            for &(y, _) in ss {
                pred[y as usize].push(x as NodeId);
            }
        }
        let mut to_exit = vec![false; k];
        to_exit[EXIT as usize] = true;
        let mut stack = vec![EXIT];
        while let Some(x) = stack.pop() {
            for &y in &pred[x as usize] {
                if !to_exit[y as usize] {
                    to_exit[y as usize] = true;
                    stack.push(y);
                }
            }
        }
        for x in 0..k {
            if !to_exit[x] {
                g_succ[x].push((EXIT, Label::True));
                pred[EXIT as usize].push(x as NodeId);
            }
        }

        let ipdom = post_dominators(&g_succ, &pred, &send_edges);
        let (cd_succ, cd_pred) = control_dependences(&g_succ, &ipdom);
        Graph {
            nodes: g_nodes,
            succ: g_succ,
            pred,
            block_node: g_block_node,
            ipdom,
            cd_succ,
            cd_pred,
            event_hats: g_hats,
        }
    }
}

/// Immediate post-dominators (Cooper, Harvey & Kennedy's iterative algorithm on
/// the reversed CFG), ignoring `sender → event` edges so that a broadcast is not
/// a branch for the statement after it.
fn post_dominators(
    succ: &[Vec<(NodeId, Label)>],
    pred: &[Vec<NodeId>],
    ignore: &BTreeSet<(NodeId, NodeId)>,
) -> Vec<NodeId> {
    let n = succ.len();
    // Postorder of the reversed graph from Exit (iterative DFS over predecessors).
    let mut po_num = vec![u32::MAX; n];
    let mut order: Vec<NodeId> = Vec::with_capacity(n);
    let mut visited = vec![false; n];
    let mut stack: Vec<(NodeId, usize)> = vec![(EXIT, 0)];
    visited[EXIT as usize] = true;
    while let Some(&mut (x, ref mut i)) = stack.last_mut() {
        let ps = &pred[x as usize];
        if *i < ps.len() {
            let y = ps[*i];
            *i += 1;
            if !visited[y as usize] && !ignore.contains(&(y, x)) {
                visited[y as usize] = true;
                stack.push((y, 0));
            }
        } else {
            po_num[x as usize] = order.len() as u32;
            order.push(x);
            stack.pop();
        }
    }
    let mut ipdom = vec![NONE; n];
    ipdom[EXIT as usize] = EXIT;
    let intersect = |ipdom: &[NodeId], mut a: NodeId, mut b: NodeId| -> NodeId {
        while a != b {
            while po_num[a as usize] < po_num[b as usize] {
                a = ipdom[a as usize];
            }
            while po_num[b as usize] < po_num[a as usize] {
                b = ipdom[b as usize];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        // Reverse postorder, skipping Exit (the root).
        for &x in order.iter().rev() {
            if x == EXIT {
                continue;
            }
            let mut new = NONE;
            for &(s, _) in &succ[x as usize] {
                if ignore.contains(&(x, s)) || ipdom[s as usize] == NONE || po_num[s as usize] == u32::MAX {
                    continue;
                }
                new = if new == NONE { s } else { intersect(&ipdom, s, new) };
            }
            if new != NONE && ipdom[x as usize] != new {
                ipdom[x as usize] = new;
                changed = true;
            }
        }
    }
    // Nodes only reachable through ignored edges (none in practice) hang off Exit.
    for d in ipdom.iter_mut() {
        if *d == NONE {
            *d = EXIT;
        }
    }
    ipdom
}

type CdEdges = Vec<Vec<(NodeId, Label)>>;

/// Control dependences (Ferrante, Ottenstein & Warren): for each CFG edge
/// `(a, b)` where `b` does not post-dominate `a`, the nodes on the
/// post-dominator-tree path from `b` up to (excluding) the least common
/// ancestor of `a` and `b` depend on `a` (and `a` on itself if that ancestor is `a`).
fn control_dependences(succ: &[Vec<(NodeId, Label)>], ipdom: &[NodeId]) -> (CdEdges, CdEdges) {
    let n = succ.len();
    // Depth in the post-dominator tree (iteratively, memoised).
    let mut depth = vec![u32::MAX; n];
    depth[EXIT as usize] = 0;
    for start in 0..n {
        let mut path = Vec::new();
        let mut x = start as NodeId;
        while depth[x as usize] == u32::MAX {
            path.push(x);
            let up = ipdom[x as usize];
            if up == x || path.len() > n {
                depth[x as usize] = 0;
                path.pop();
                break;
            }
            x = up;
        }
        let mut d = depth[x as usize];
        while let Some(y) = path.pop() {
            d += 1;
            depth[y as usize] = d;
        }
    }
    let lca = |mut a: NodeId, mut b: NodeId| -> NodeId {
        while depth[a as usize] > depth[b as usize] {
            a = ipdom[a as usize];
        }
        while depth[b as usize] > depth[a as usize] {
            b = ipdom[b as usize];
        }
        while a != b {
            a = ipdom[a as usize];
            b = ipdom[b as usize];
        }
        a
    };
    let mut cd_succ: CdEdges = vec![Vec::new(); n];
    // Each node's dependences once, in first-found order; a set, because one node (an event
    // with many scripts) can control many.
    let mut seen: BTreeSet<(NodeId, Label)> = BTreeSet::new();
    for a in 0..n as NodeId {
        seen.clear();
        for &(b, label) in &succ[a as usize] {
            if b == a {
                continue;
            }
            let l = lca(a, b);
            if l == b {
                continue; // b post-dominates a
            }
            let mut x = b;
            while x != l && x != EXIT {
                if seen.insert((x, label)) {
                    cd_succ[a as usize].push((x, label));
                }
                x = ipdom[x as usize];
            }
            if l == a && seen.insert((a, label)) {
                cd_succ[a as usize].push((a, label));
            }
        }
    }
    let mut cd_pred: CdEdges = vec![Vec::new(); n];
    for (a, ds) in cd_succ.iter().enumerate() {
        for &(x, label) in ds {
            cd_pred[x as usize].push((a as NodeId, label));
        }
    }
    (cd_succ, cd_pred)
}
