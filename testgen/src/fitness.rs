//! Statement fitness (Whisker paper §5.2): for target `s` and a trace,
//! `2·AL + α(BD) + (BD > 0 ? 1 : α(CFD))` with `α(x) = x / (1 + x)`; 0 when
//! the trace executed `s`.
//!
//! * **Approach level (AL)**: the smallest CDG distance from `s` to a control
//!   dependence the execution reached (direct dependences are level 0).
//!   Block nodes are reached when executed; event nodes when one of their hats
//!   ran (the event occurred); `Entry` always.
//! * **Branch distance (BD)**: at the reached dependences of that level, how
//!   far the execution was from taking the edge towards `s`: the VM's measured
//!   minimum distance for conditions (Korel's rules, sensing distances),
//!   `repeat` (remaining iterations) and time-dependent blocks (remaining time
//!   as a fraction of the duration); event occurrence is 0/1; plain blocks
//!   (senders, calls, hats) and `forever` are 0. Without a measurement (a VM
//!   without instrumentation) the distance is inferred: 0 when the execution
//!   left the block along the required edge, else 1.
//! * **Control-flow distance (CFD)**: when BD is 0, the number of CFG edges
//!   backwards from `s` (AL 0) or from the next unreached dependence on the way
//!   to `s` (AL > 0) to the nearest executed block.
//!
//! Everything static (CDG ancestors with levels and required outcomes) is
//! computed once per project; evaluating a target walks only its few
//! ancestors, plus a bounded breadth-first search for the CFD.

use clowder_vm::project::{BlockIdx, Project};

use crate::graph::{BlockKind, ENTRY, EXIT, Graph, Label, Node, NodeId, block_kind};
use crate::targets::Targets;
use crate::trace::Trace;

/// `α(x) = x / (1 + x)`.
#[inline]
pub fn alpha(x: f64) -> f64 {
    if x.is_infinite() { 1.0 } else { x / (1.0 + x) }
}

/// A control dependence of a target.
#[derive(Debug, Clone)]
struct Anc {
    node: NodeId,
    level: u32,
    /// Required outcomes: bit 0 = true, bit 1 = false.
    labels: u8,
    /// The nodes one level closer to the target that depend on `node`.
    children: Vec<NodeId>,
}

#[derive(Debug, Clone)]
struct TargetInfo {
    block: BlockIdx,
    node: NodeId,
    /// Sorted by level.
    anc: Vec<Anc>,
}

/// The parts of a fitness value (for tests and diagnostics).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Components {
    /// Approach level.
    pub approach_level: u32,
    /// Branch distance (not normalised).
    pub branch_distance: f64,
    /// Control-flow distance (not normalised; 0 when BD > 0 makes it irrelevant).
    pub cfg_distance: u32,
    /// The fitness value.
    pub fitness: f64,
}

/// Per-project fitness model: the graph, the targets and their ancestors.
#[derive(Debug, Clone)]
pub struct FitnessModel {
    /// The interprocedural CFG/CDG.
    pub graph: Graph,
    /// The coverage targets.
    pub targets: Targets,
    info: Vec<TargetInfo>,
    kind: Vec<BlockKind>,
    /// Measured slot of each node (`u32::MAX` if none).
    slot_of: Vec<u32>,
    measured: Vec<BlockIdx>,
    /// Measured slot of each time-based block, by block index (`u32::MAX` if none).
    timed_slot: Vec<u32>,
    depth: Vec<u32>,
}

/// Reusable buffers for evaluations (breadth-first search).
#[derive(Debug, Default, Clone)]
pub struct Scratch {
    mark: Vec<u32>,
    epoch: u32,
    queue: Vec<NodeId>,
    /// Forward distance of every node from the nearest executed block (`u32::MAX`: none).
    fwd: Vec<u32>,
}

impl FitnessModel {
    /// Builds the model for `project`.
    pub fn new(project: &Project) -> Self {
        let graph = Graph::build(project);
        let targets = Targets::new(project, &graph);
        let kind: Vec<BlockKind> = graph
            .nodes
            .iter()
            .map(|n| match n {
                Node::Block(b) => block_kind(&project.block(*b).opcode),
                _ => BlockKind::Plain,
            })
            .collect();
        let mut slot_of = vec![u32::MAX; graph.len()];
        let mut measured = Vec::new();
        for (i, n) in graph.nodes.iter().enumerate() {
            if let Node::Block(b) = n
                && matches!(kind[i], BlockKind::Condition | BlockKind::Repeat | BlockKind::Timed)
            {
                slot_of[i] = measured.len() as u32;
                measured.push(*b);
            }
        }
        let mut timed_slot = vec![u32::MAX; project.blocks.len()];
        for (i, n) in graph.nodes.iter().enumerate() {
            if let Node::Block(b) = n
                && kind[i] == BlockKind::Timed
                && let Some(t) = timed_slot.get_mut(*b as usize)
            {
                *t = slot_of[i];
            }
        }
        let mut info = Vec::with_capacity(targets.len());
        let mut depth = Vec::with_capacity(targets.len());
        let mut level = vec![u32::MAX; graph.len()];
        for &b in &targets.blocks {
            let node = graph.block_node[b as usize];
            // Breadth-first over CDG predecessors: direct dependences are level 0.
            let mut order: Vec<NodeId> = Vec::new();
            let mut frontier: Vec<NodeId> = vec![node];
            let mut lv = 0u32;
            let mut seen_target = false;
            while !frontier.is_empty() {
                let mut next = Vec::new();
                for &x in &frontier {
                    for &(a, _) in &graph.cd_pred[x as usize] {
                        if a == node {
                            seen_target = true;
                            continue;
                        }
                        if level[a as usize] == u32::MAX {
                            level[a as usize] = lv;
                            order.push(a);
                            next.push(a);
                        }
                    }
                }
                frontier = next;
                lv += 1;
            }
            let _ = seen_target;
            let mut anc: Vec<Anc> = order
                .iter()
                .map(|&a| {
                    let l = level[a as usize];
                    let mut labels = 0u8;
                    let mut children = Vec::new();
                    for &(c, label) in &graph.cd_succ[a as usize] {
                        let toward = if l == 0 { c == node } else { c != node && level[c as usize] == l - 1 };
                        if toward {
                            labels |= match label {
                                Label::True => 1,
                                Label::False => 2,
                            };
                            if !children.contains(&c) {
                                children.push(c);
                            }
                        }
                    }
                    Anc { node: a, level: l, labels, children }
                })
                .collect();
            anc.sort_by_key(|a| (a.level, a.node));
            depth.push(anc.last().map_or(0, |a| a.level));
            for a in &order {
                level[*a as usize] = u32::MAX;
            }
            info.push(TargetInfo { block: b, node, anc });
        }
        Self { graph, targets, info, kind, slot_of, measured, timed_slot, depth }
    }

    /// Measured slot of every time-based block by block index (`u32::MAX`:
    /// not a measured time-based block), for tracking remaining wait times.
    pub fn timed_slots(&self) -> &[u32] {
        &self.timed_slot
    }

    /// Blocks whose distances the VM should measure, in slot order:
    /// conditions, `repeat` and time-dependent blocks.
    pub fn measured_blocks(&self) -> &[BlockIdx] {
        &self.measured
    }

    /// Number of targets.
    pub fn len(&self) -> usize {
        self.info.len()
    }

    /// True without targets.
    pub fn is_empty(&self) -> bool {
        self.info.is_empty()
    }

    /// CDG depth of target `t` (deepest ancestor level), for minimisation order.
    pub fn depth(&self, t: usize) -> u32 {
        self.depth[t]
    }

    /// Target number of block `b`, if it is a target.
    pub fn target_of(&self, b: BlockIdx) -> Option<usize> {
        self.targets.number.get(b as usize).filter(|n| **n != u32::MAX).map(|n| *n as usize)
    }

    fn reached(&self, n: NodeId, tr: &Trace) -> bool {
        match &self.graph.nodes[n as usize] {
            Node::Entry => true,
            Node::Exit => false,
            Node::Block(b) => tr.executed(*b),
            Node::UserEvent(_) | Node::Event(_) => self.graph.event_hats[n as usize].iter().any(|h| tr.executed(*h)),
        }
    }

    fn dist(&self, a: &Anc, tr: &Trace) -> f64 {
        let i = a.node as usize;
        // Without a measurement: 0 if the execution left `a` along a required
        // edge (its first node there ran), else 1 (Korel's boolean distance).
        let inferred = || {
            let taken = self.graph.succ[i].iter().any(|(s, l)| {
                let bit = match l {
                    Label::True => 1,
                    Label::False => 2,
                };
                a.labels & bit != 0 && *s != a.node && self.reached(*s, tr)
            });
            if taken { 0.0 } else { 1.0 }
        };
        match self.graph.nodes[i] {
            // Reached events occurred; Entry's branch is which event occurs.
            Node::UserEvent(_) | Node::Event(_) => 0.0,
            Node::Entry => inferred(),
            Node::Exit => 1.0,
            Node::Block(_) => match self.kind[i] {
                BlockKind::Plain | BlockKind::Forever => 0.0,
                BlockKind::Condition | BlockKind::Repeat | BlockKind::Timed => {
                    let d = tr.dist.get(self.slot_of[i] as usize).copied().unwrap_or([f64::INFINITY; 2]);
                    let mut best = f64::INFINITY;
                    if a.labels & 1 != 0 {
                        best = best.min(d[0]);
                    }
                    if a.labels & 2 != 0 {
                        best = best.min(d[1]);
                    }
                    if !best.is_finite() {
                        inferred()
                    } else if self.kind[i] == BlockKind::Timed {
                        // A time-based block in a loop can wait again after it
                        // completed once: the edge was taken then.
                        best.max(0.0).min(inferred())
                    } else {
                        best.max(0.0)
                    }
                }
            },
        }
    }

    /// Backward breadth-first distance from `sources` to the nearest executed block (0 if none).
    fn cfd(&self, sources: &[NodeId], tr: &Trace, s: &mut Scratch) -> u32 {
        if s.mark.len() != self.graph.len() {
            s.mark = vec![0; self.graph.len()];
            s.epoch = 0;
        }
        s.epoch = s.epoch.wrapping_add(1);
        if s.epoch == 0 {
            s.mark.iter_mut().for_each(|m| *m = 0);
            s.epoch = 1;
        }
        let ep = s.epoch;
        s.queue.clear();
        for &x in sources {
            if s.mark[x as usize] != ep {
                s.mark[x as usize] = ep;
                s.queue.push(x);
            }
        }
        let covered = |n: NodeId| matches!(self.graph.nodes[n as usize], Node::Block(b) if tr.executed(b));
        let mut start = 0;
        let mut level = 0u32;
        while start < s.queue.len() {
            let end = s.queue.len();
            for qi in start..end {
                let x = s.queue[qi];
                if covered(x) {
                    return level;
                }
                for &p in &self.graph.pred[x as usize] {
                    if s.mark[p as usize] != ep {
                        s.mark[p as usize] = ep;
                        s.queue.push(p);
                    }
                }
            }
            start = end;
            level += 1;
        }
        0
    }

    /// Fitness of target `t` for `tr` (0 = covered), with its components.
    pub fn components(&self, t: usize, tr: &Trace, s: &mut Scratch) -> Components {
        self.components_with(t, tr, s, false)
    }

    /// Distances from the executed blocks to every node, by one forward
    /// breadth-first search (the CFD of a node is its entry here).
    fn forward_distances(&self, tr: &Trace, s: &mut Scratch) {
        let n = self.graph.len();
        s.fwd.clear();
        s.fwd.resize(n, u32::MAX);
        s.queue.clear();
        for (i, node) in self.graph.nodes.iter().enumerate() {
            if let Node::Block(b) = node
                && tr.executed(*b)
            {
                s.fwd[i] = 0;
                s.queue.push(i as NodeId);
            }
        }
        let mut head = 0;
        while head < s.queue.len() {
            let x = s.queue[head];
            head += 1;
            let d = s.fwd[x as usize] + 1;
            for &(y, _) in &self.graph.succ[x as usize] {
                if s.fwd[y as usize] == u32::MAX {
                    s.fwd[y as usize] = d;
                    s.queue.push(y);
                }
            }
        }
    }

    fn components_with(&self, t: usize, tr: &Trace, s: &mut Scratch, use_fwd: bool) -> Components {
        let ti = &self.info[t];
        if tr.executed(ti.block) {
            return Components { approach_level: 0, branch_distance: 0.0, cfg_distance: 0, fitness: 0.0 };
        }
        let mut al = u32::MAX;
        let mut bd = f64::INFINITY;
        for a in &ti.anc {
            if a.level > al {
                break;
            }
            if self.reached(a.node, tr) {
                al = a.level;
                bd = bd.min(self.dist(a, tr));
            }
        }
        if al == u32::MAX {
            // Unreachable in this model (Entry is always an ancestor); a large, finite value.
            let f = 2.0 * (self.depth[t] as f64 + 2.0) + 2.0;
            return Components { approach_level: al, branch_distance: bd, cfg_distance: 0, fitness: f };
        }
        let mut cfd = 0;
        let tail = if bd > 0.0 {
            1.0
        } else {
            let mut srcs: Vec<NodeId> = Vec::new();
            if al == 0 {
                srcs.push(ti.node);
            } else {
                for a in ti.anc.iter().filter(|a| a.level == al) {
                    if self.reached(a.node, tr) && self.dist(a, tr) == 0.0 {
                        srcs.extend(a.children.iter().copied().filter(|c| *c != ENTRY && *c != EXIT));
                    }
                }
            }
            cfd = if use_fwd {
                // No executed block leads to the sources: 0, as Whisker's search.
                srcs.iter().map(|x| s.fwd[*x as usize]).min().filter(|d| *d != u32::MAX).unwrap_or(0)
            } else {
                self.cfd(&srcs, tr, s)
            };
            alpha(cfd as f64)
        };
        let fitness = 2.0 * al as f64 + alpha(bd) + tail;
        Components { approach_level: al, branch_distance: bd, cfg_distance: cfd, fitness }
    }

    /// Fitness of target `t` for `tr` (0 = covered).
    #[inline]
    pub fn fitness(&self, t: usize, tr: &Trace, s: &mut Scratch) -> f64 {
        self.components(t, tr, s).fitness
    }

    /// Fitness of every target into `out`.
    pub fn evaluate_all(&self, tr: &Trace, s: &mut Scratch, out: &mut Vec<f64>) {
        out.clear();
        self.forward_distances(tr, s);
        for t in 0..self.info.len() {
            out.push(self.components_with(t, tr, s, true).fitness);
        }
    }

    /// Whether `tr` executed target `t`.
    #[inline]
    pub fn covers(&self, t: usize, tr: &Trace) -> bool {
        tr.executed(self.info[t].block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{Arg, ProjectBuilder};

    /// The all-targets evaluation (one forward search) agrees with the
    /// per-target one (a backward search per target) on partial traces.
    #[test]
    fn evaluate_all_matches_single_evaluations() {
        let mut p = ProjectBuilder::new();
        p.global_var("x");
        let s = p.sprite("S");
        let t = p.t(s);
        let flag = t.when_flag();
        let w = t.wait(1.0);
        let moves: Vec<String> = (0..5).map(|i| t.move_steps(i as f64)).collect();
        let x = t.var("x");
        let c = t.gt(Arg::b(&x), Arg::n(3.0));
        let say = t.say(Arg::t("a"));
        let iff = t.if_else(&c, &[say], &moves[3..]);
        let mut body = vec![w];
        body.extend(moves[..3].iter().cloned());
        body.push(iff);
        t.script(flag, &body);
        let k = t.when_key("space");
        let ch = t.change_var("x", Arg::n(1.0));
        t.script(k, &[ch]);
        let project = p.load();
        let m = FitnessModel::new(&project);
        let mut sc = Scratch::default();
        // Every prefix of the statements executed, in block order.
        let blocks: Vec<u32> = m.targets.blocks.clone();
        for k in 0..=blocks.len() {
            let mut tr = Trace::new(project.blocks.len(), m.measured_blocks().len());
            for b in &blocks[..k] {
                tr.mark(*b);
            }
            let mut all = Vec::new();
            m.evaluate_all(&tr, &mut sc, &mut all);
            for (t, f) in all.iter().enumerate() {
                assert_eq!(*f, m.fitness(t, &tr, &mut sc), "target {t} after {k} blocks");
            }
        }
    }
}
