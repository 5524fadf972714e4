//! The fitness definition target by target, as the Whisker paper states it: walk the
//! target's control-dependence ancestors level by level up to the first reached one, take
//! the branch distances there, and search backwards through the CFG for the CFD. Costs
//! grow with every target's ancestry, so the model evaluates differently
//! ([`super::evaluate`]); this is the oracle its tests compare against, value for value.

use super::{Components, FitnessModel, alpha, label_bit};
use crate::graph::{ENTRY, EXIT, Node, NodeId};
use crate::trace::Trace;

/// A control dependence of a target.
struct Anc {
    node: NodeId,
    level: u32,
    /// Required outcomes: bit 0 = true, bit 1 = false.
    labels: u8,
    /// The nodes one level closer to the target that depend on `node`.
    children: Vec<NodeId>,
}

/// Every target's ancestors with levels, labels and children.
pub(super) struct Reference<'m> {
    m: &'m FitnessModel,
    anc: Vec<Vec<Anc>>,
}

impl<'m> Reference<'m> {
    pub(super) fn new(m: &'m FitnessModel) -> Self {
        let graph = &m.graph;
        let mut level = vec![u32::MAX; graph.len()];
        let anc = m
            .target_node
            .iter()
            .map(|&node| {
                let mut order: Vec<NodeId> = Vec::new();
                let mut frontier: Vec<NodeId> = vec![node];
                let mut lv = 0u32;
                while !frontier.is_empty() {
                    let mut next = Vec::new();
                    for &x in &frontier {
                        for &(a, _) in &graph.cd_pred[x as usize] {
                            if a != node && level[a as usize] == u32::MAX {
                                level[a as usize] = lv;
                                order.push(a);
                                next.push(a);
                            }
                        }
                    }
                    frontier = next;
                    lv += 1;
                }
                let mut anc: Vec<Anc> = order
                    .iter()
                    .map(|&a| {
                        let l = level[a as usize];
                        let mut labels = 0u8;
                        let mut children = Vec::new();
                        for &(c, label) in &graph.cd_succ[a as usize] {
                            let toward = if l == 0 { c == node } else { c != node && level[c as usize] == l - 1 };
                            if toward {
                                labels |= label_bit(label);
                                if !children.contains(&c) {
                                    children.push(c);
                                }
                            }
                        }
                        Anc { node: a, level: l, labels, children }
                    })
                    .collect();
                anc.sort_by_key(|a| (a.level, a.node));
                for a in &order {
                    level[*a as usize] = u32::MAX;
                }
                anc
            })
            .collect();
        Self { m, anc }
    }

    /// Backward breadth-first distance from `sources` to the nearest executed block (0 if none).
    fn cfd(&self, sources: &[NodeId], tr: &Trace) -> u32 {
        let g = &self.m.graph;
        let mut mark = vec![false; g.len()];
        let mut queue: Vec<NodeId> = Vec::new();
        for &x in sources {
            if !mark[x as usize] {
                mark[x as usize] = true;
                queue.push(x);
            }
        }
        let covered = |n: NodeId| matches!(g.nodes[n as usize], Node::Block(b) if tr.executed(b));
        let mut start = 0;
        let mut level = 0u32;
        while start < queue.len() {
            let end = queue.len();
            for qi in start..end {
                let x = queue[qi];
                if covered(x) {
                    return level;
                }
                for &p in &g.pred[x as usize] {
                    if !mark[p as usize] {
                        mark[p as usize] = true;
                        queue.push(p);
                    }
                }
            }
            start = end;
            level += 1;
        }
        0
    }

    /// Fitness components of target `t` for `tr`.
    pub(super) fn components(&self, t: usize, tr: &Trace) -> Components {
        let m = self.m;
        let node = m.target_node[t];
        if tr.executed(m.targets.blocks[t]) {
            return Components::COVERED;
        }
        let anc = &self.anc[t];
        let mut al = u32::MAX;
        let mut bd = f64::INFINITY;
        for a in anc {
            if a.level > al {
                break;
            }
            if m.reached(a.node, tr) {
                al = a.level;
                bd = bd.min(m.dist(a.node, a.labels, tr));
            }
        }
        if al == u32::MAX {
            let f = 2.0 * (m.depth[t] as f64 + 2.0) + 2.0;
            return Components { approach_level: al, branch_distance: bd, cfg_distance: 0, fitness: f };
        }
        let mut cfd = 0;
        let tail = if bd > 0.0 {
            1.0
        } else {
            let mut srcs: Vec<NodeId> = Vec::new();
            if al == 0 {
                srcs.push(node);
            } else {
                for a in anc.iter().filter(|a| a.level == al) {
                    if m.reached(a.node, tr) && m.dist(a.node, a.labels, tr) == 0.0 {
                        srcs.extend(a.children.iter().copied().filter(|c| *c != ENTRY && *c != EXIT));
                    }
                }
            }
            cfd = self.cfd(&srcs, tr);
            alpha(cfd as f64)
        };
        let fitness = 2.0 * al as f64 + alpha(bd) + tail;
        Components { approach_level: al, branch_distance: bd, cfg_distance: cfd, fitness }
    }
}
