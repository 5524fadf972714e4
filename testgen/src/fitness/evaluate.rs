//! Evaluating every target of a trace in one pass over the graph.
//!
//! Let `R` be the reached nodes and `D(x)` the CDG distance from `R` to node `x`
//! (a breadth-first search along CDG edges from all of `R` at once). A target `t` that did
//! not execute has approach level `D(t) − 1`: its nearest reached ancestors are the reached
//! nodes at distance `D(t)`. Every shortest path from `R` to `t` leaves `R` through a
//! *frontier* node `c` (`D(c) = 1`); call `F(t)` the frontier nodes on such paths
//! (`F(t) = {t}` when `D(t) = 1`, else the union of `F(p)` over the CDG predecessors `p` of
//! `t` with `D(p) = D(t) − 1`). The reached ancestors at the approach level are exactly the
//! reached CDG parents of `F(t)`'s nodes, and the outcomes required of each are the labels of
//! its edges into `F(t)` (its children on shortest paths to `t`). So branch distance and
//! CFD sources are functions of `F(t)` alone: computed once per distinct set, shared by every
//! target behind it.

use super::{FitnessModel, alpha, label_bit};
use crate::graph::{ENTRY, EXIT, NodeId};
use crate::trace::Trace;

use super::Components;

const NONE: u32 = u32::MAX;

/// Reusable buffers of evaluations (one per executor; evaluations of different traces
/// reuse them).
#[derive(Debug, Default, Clone)]
pub struct Scratch {
    /// Per node: reached by the trace being evaluated.
    reached: Vec<bool>,
    /// Per node: CDG distance from the reached nodes (`NONE`: no reached ancestor).
    dist: Vec<u32>,
    /// Breadth-first order of the CDG search (by nondecreasing `dist`).
    queue: Vec<NodeId>,
    /// Per node with `dist ≥ 1`: its frontier set.
    set_of: Vec<u32>,
    /// Frontier sets: sorted node lists, stored one after the other.
    set_items: Vec<NodeId>,
    /// `(start, end)` of each set in `set_items`.
    set_span: Vec<(u32, u32)>,
    /// Branch distance and CFD of each set, once computed.
    values: Vec<Option<(f64, u32)>>,
    /// Unions already built: sorted member set ids → set id.
    unions: std::collections::BTreeMap<Vec<u32>, u32>,
    ids: Vec<u32>,
    parents: Vec<NodeId>,
    srcs: Vec<NodeId>,
    /// Forward CFG distance of every node from the nearest executed block (`NONE`: none),
    /// computed when a target first needs a CFD.
    fwd: Vec<u32>,
    fwd_ready: bool,
    /// Graph size and executed blocks of the trace the structures above were built for:
    /// everything but the per-set values depends on them alone, so a trace that only
    /// lowered distances (a wait running down, a loop counting) reuses them.
    prepared_for: Option<(usize, Vec<u64>)>,
    /// Elementary operations of the evaluations since the last [`Scratch::take_ops`].
    ops: u64,
}

impl Scratch {
    /// The elementary operations (nodes, edges and targets visited) of the evaluations
    /// since the last call: what a run's work meter charges for them.
    pub fn take_ops(&mut self) -> u64 {
        std::mem::take(&mut self.ops)
    }

    /// Reached nodes, CDG distances and frontier sets of `tr`. A [`Scratch`] serves one
    /// model: when `tr` executed the same blocks as the trace prepared last, only the
    /// per-set values (which read distances) are cleared.
    pub(super) fn prepare(&mut self, m: &FitnessModel, tr: &Trace) {
        let g = &m.graph;
        let n = g.len();
        self.ops += tr.executed.len() as u64;
        if self.prepared_for.as_ref().is_some_and(|(len, ex)| *len == n && *ex == tr.executed) {
            self.ops += self.values.len() as u64;
            self.values.iter_mut().for_each(|v| *v = None);
            return;
        }
        match &mut self.prepared_for {
            Some((len, ex)) => {
                *len = n;
                ex.clone_from(&tr.executed);
            }
            None => self.prepared_for = Some((n, tr.executed.clone())),
        }
        self.reached.clear();
        self.reached.extend((0..n).map(|i| m.reached(i as NodeId, tr)));
        self.dist.clear();
        self.dist.resize(n, NONE);
        self.set_of.clear();
        self.set_of.resize(n, NONE);
        self.set_items.clear();
        self.set_span.clear();
        self.values.clear();
        self.unions.clear();
        self.fwd_ready = false;
        self.queue.clear();
        for (i, r) in self.reached.iter().enumerate() {
            if *r {
                self.dist[i] = 0;
                self.queue.push(i as NodeId);
            }
        }
        let mut ops = n as u64;
        let mut head = 0;
        while head < self.queue.len() {
            let x = self.queue[head];
            head += 1;
            let dx = self.dist[x as usize];
            let succ = &g.cd_succ[x as usize];
            ops += succ.len() as u64;
            for &(c, _) in succ {
                if self.dist[c as usize] == NONE {
                    self.dist[c as usize] = dx + 1;
                    self.queue.push(c);
                }
            }
        }
        // Frontier sets in breadth-first order: a node's predecessors one level closer
        // have theirs already.
        for qi in 0..self.queue.len() {
            let x = self.queue[qi];
            let dx = self.dist[x as usize];
            if dx == 0 {
                continue;
            }
            if dx == 1 {
                self.set_of[x as usize] = self.new_set(&[x]);
                ops += 1;
                continue;
            }
            self.ids.clear();
            let pred = &g.cd_pred[x as usize];
            ops += pred.len() as u64;
            for &(p, _) in pred {
                if self.dist[p as usize] == dx - 1 {
                    self.ids.push(self.set_of[p as usize]);
                }
            }
            self.ids.sort_unstable();
            self.ids.dedup();
            let id = match self.ids.as_slice() {
                [one] => *one,
                _ => match self.unions.get(&self.ids) {
                    Some(id) => *id,
                    None => {
                        let mut items: Vec<NodeId> = Vec::new();
                        for &s in &self.ids {
                            let (a, b) = self.set_span[s as usize];
                            items.extend_from_slice(&self.set_items[a as usize..b as usize]);
                        }
                        items.sort_unstable();
                        items.dedup();
                        ops += items.len() as u64;
                        let id = self.new_set(&items);
                        self.unions.insert(self.ids.clone(), id);
                        id
                    }
                },
            };
            self.set_of[x as usize] = id;
        }
        self.ops += ops;
    }

    fn new_set(&mut self, items: &[NodeId]) -> u32 {
        let start = self.set_items.len() as u32;
        self.set_items.extend_from_slice(items);
        self.set_span.push((start, self.set_items.len() as u32));
        self.values.push(None);
        (self.set_span.len() - 1) as u32
    }

    /// Components of target `t`, which did not execute, after [`Scratch::prepare`].
    pub(super) fn components(&mut self, m: &FitnessModel, tr: &Trace, t: usize) -> Components {
        let node = m.target_node[t] as usize;
        let d = self.dist[node];
        if d == NONE || d == 0 {
            // Unreachable in this model (Entry is always an ancestor); a large, finite value.
            // (`d == 0` would be a reached target, which executed: the caller checks first.)
            let f = 2.0 * (m.depth[t] as f64 + 2.0) + 2.0;
            return Components {
                approach_level: u32::MAX,
                branch_distance: f64::INFINITY,
                cfg_distance: 0,
                fitness: f,
            };
        }
        let al = d - 1;
        let (bd, cfd) = self.value_of_set(m, tr, self.set_of[node]);
        let (tail, cfd) = if bd > 0.0 { (1.0, 0) } else { (alpha(cfd as f64), cfd) };
        let fitness = 2.0 * al as f64 + alpha(bd) + tail;
        Components { approach_level: al, branch_distance: bd, cfg_distance: cfd, fitness }
    }

    /// Branch distance and CFD shared by the targets whose frontier set is `sid`.
    fn value_of_set(&mut self, m: &FitnessModel, tr: &Trace, sid: u32) -> (f64, u32) {
        if let Some(v) = self.values.get(sid as usize).copied().flatten() {
            return v;
        }
        let g = &m.graph;
        let (a0, b0) = self.set_span[sid as usize];
        let members = &self.set_items[a0 as usize..b0 as usize];
        // The reached parents of the frontier nodes: the reached ancestors at the approach level.
        self.parents.clear();
        for &c in members {
            let pred = &g.cd_pred[c as usize];
            self.ops += pred.len() as u64;
            self.parents.extend(pred.iter().filter(|(a, _)| self.reached[*a as usize]).map(|(a, _)| *a));
        }
        self.parents.sort_unstable();
        self.parents.dedup();
        // Each parent's required outcomes: its edges into the set.
        let mut bd = f64::INFINITY;
        let mut zero: Vec<NodeId> = Vec::new();
        for &a in &self.parents {
            let succ = &g.cd_succ[a as usize];
            self.ops += succ.len() as u64;
            let labels =
                succ.iter().filter(|(c, _)| members.binary_search(c).is_ok()).fold(0u8, |l, (_, x)| l | label_bit(*x));
            let da = m.dist(a, labels, tr);
            bd = bd.min(da);
            if da == 0.0 {
                zero.push(a);
            }
        }
        let mut cfd = 0;
        if bd <= 0.0 {
            // The CFD sources: the children towards the target of the dependences whose
            // branch distance is 0 (the target itself at approach level 0, where the set is it).
            self.srcs.clear();
            for &a in &zero {
                for (c, _) in &g.cd_succ[a as usize] {
                    if *c != ENTRY && *c != EXIT && members.binary_search(c).is_ok() {
                        self.srcs.push(*c);
                    }
                }
            }
            self.forward_distances(m, tr);
            // No executed block leads to the sources: 0, as Whisker's search.
            cfd = self.srcs.iter().map(|x| self.fwd[*x as usize]).min().filter(|d| *d != NONE).unwrap_or(0);
        }
        if let Some(v) = self.values.get_mut(sid as usize) {
            *v = Some((bd, cfd));
        }
        (bd, cfd)
    }

    /// Distances from the executed blocks to every node, by one forward breadth-first
    /// search (the CFD of a node is its entry here); once per evaluation.
    fn forward_distances(&mut self, m: &FitnessModel, tr: &Trace) {
        if self.fwd_ready {
            return;
        }
        self.fwd_ready = true;
        let g = &m.graph;
        let n = g.len();
        self.fwd.clear();
        self.fwd.resize(n, NONE);
        let mut queue: Vec<NodeId> = Vec::new();
        for (i, &b) in m.node_block.iter().enumerate() {
            if b != u32::MAX && tr.executed(b) {
                self.fwd[i] = 0;
                queue.push(i as NodeId);
            }
        }
        let mut ops = n as u64;
        let mut head = 0;
        while head < queue.len() {
            let x = queue[head];
            head += 1;
            let d = self.fwd[x as usize] + 1;
            let succ = &g.succ[x as usize];
            ops += succ.len() as u64;
            for &(y, _) in succ {
                if self.fwd[y as usize] == NONE {
                    self.fwd[y as usize] = d;
                    queue.push(y);
                }
            }
        }
        self.ops += ops;
    }
}
