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
//!   left the block along the required edge, else 1. A dependence's required
//!   outcomes are those of its CDG edges that lie on a shortest path to `s`.
//! * **Control-flow distance (CFD)**: when BD is 0, the number of CFG edges
//!   backwards from `s` (AL 0) or from the next unreached dependences on the way
//!   to `s` (AL > 0) to the nearest executed block.
//!
//! **Cost.** One evaluation computes every target at once, in time linear in the graph
//! and independent of how deep targets sit ([`evaluate`]): a breadth-first search over the
//! CDG from the reached nodes gives every node's approach level; the branch distance and
//! CFD sources of a target depend only on the *frontier* nodes (one CDG edge from a reached
//! node) on its shortest paths, so they are computed once per distinct frontier set and
//! shared by every target behind it. The definition per target (a walk over its ancestors,
//! the Whisker paper's formulation) is kept as the tests' oracle (`reference.rs`): both give
//! bit-identical values.

mod evaluate;
#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;

use clowder_vm::project::{BlockIdx, Project};

use crate::graph::{BlockKind, Graph, Label, Node, NodeId, block_kind};
use crate::targets::Targets;
use crate::trace::Trace;

pub use evaluate::Scratch;

/// `α(x) = x / (1 + x)`.
#[inline]
pub fn alpha(x: f64) -> f64 {
    if x.is_infinite() { 1.0 } else { x / (1.0 + x) }
}

/// The parts of a fitness value (for tests and diagnostics).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Components {
    /// Approach level (`u32::MAX` when no control dependence was reached).
    pub approach_level: u32,
    /// Branch distance (not normalised).
    pub branch_distance: f64,
    /// Control-flow distance (not normalised; 0 when BD > 0 makes it irrelevant).
    pub cfg_distance: u32,
    /// The fitness value.
    pub fitness: f64,
}

impl Components {
    const COVERED: Components = Components { approach_level: 0, branch_distance: 0.0, cfg_distance: 0, fitness: 0.0 };
}

/// Per-project fitness model: the graph, the targets and what evaluation needs of them.
#[derive(Debug, Clone)]
pub struct FitnessModel {
    /// The interprocedural CFG/CDG.
    pub graph: Graph,
    /// The coverage targets.
    pub targets: Targets,
    /// Graph node of each target.
    target_node: Vec<NodeId>,
    /// Block of each node (`u32::MAX` for Entry, Exit and event nodes): reachedness of block
    /// nodes without matching on [`Node`] (every evaluation asks it of every node).
    node_block: Vec<BlockIdx>,
    kind: Vec<BlockKind>,
    /// Measured slot of each node (`u32::MAX` if none).
    slot_of: Vec<u32>,
    measured: Vec<BlockIdx>,
    /// Measured slot of each block, by block index (`u32::MAX` if none).
    measured_slot: Vec<u32>,
    /// Measured slot of each time-based block, by block index (`u32::MAX` if none).
    timed_slot: Vec<u32>,
    /// CDG depth of each target: its deepest ancestor's level.
    depth: Vec<u32>,
    /// Target blocks as a bit set in [`Trace::executed`]'s layout: which targets a change of
    /// the trace covered, without evaluating ([`FitnessModel::covers_new_target`]).
    target_bits: Vec<u64>,
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
        let mut measured_slot = vec![u32::MAX; project.blocks.len()];
        for (i, &b) in measured.iter().enumerate() {
            if let Some(m) = measured_slot.get_mut(b as usize)
                && *m == u32::MAX
            {
                *m = i as u32;
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
        let target_node: Vec<NodeId> = targets.blocks.iter().map(|&b| graph.block_node[b as usize]).collect();
        let depth = cdg_depths(&graph, &target_node);
        let node_block = graph
            .nodes
            .iter()
            .map(|n| match n {
                Node::Block(b) => *b,
                _ => BlockIdx::MAX,
            })
            .collect();
        let mut target_bits = Trace::new(project.blocks.len(), 0);
        for &b in &targets.blocks {
            target_bits.mark(b);
        }
        let target_bits = target_bits.executed;
        Self {
            graph,
            targets,
            target_node,
            node_block,
            kind,
            slot_of,
            measured,
            measured_slot,
            timed_slot,
            depth,
            target_bits,
        }
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

    /// The slot of each block in [`FitnessModel::measured_blocks`], by block index
    /// (`u32::MAX`: not measured).
    pub fn measured_slots(&self) -> &[u32] {
        &self.measured_slot
    }

    /// Number of targets.
    pub fn len(&self) -> usize {
        self.target_node.len()
    }

    /// True without targets.
    pub fn is_empty(&self) -> bool {
        self.target_node.is_empty()
    }

    /// CDG depth of target `t` (deepest ancestor level), for minimisation order.
    pub fn depth(&self, t: usize) -> u32 {
        self.depth[t]
    }

    /// Target number of block `b`, if it is a target.
    pub fn target_of(&self, b: BlockIdx) -> Option<usize> {
        self.targets.number.get(b as usize).filter(|n| **n != u32::MAX).map(|n| *n as usize)
    }

    /// Fitness of target `t` for `tr` (0 = covered), with its components.
    pub fn components(&self, t: usize, tr: &Trace, s: &mut Scratch) -> Components {
        if t >= self.len() || tr.executed(self.targets.blocks[t]) {
            return Components::COVERED;
        }
        s.prepare(self, tr);
        s.components(self, tr, t)
    }

    /// Fitness of target `t` for `tr` (0 = covered).
    #[inline]
    pub fn fitness(&self, t: usize, tr: &Trace, s: &mut Scratch) -> f64 {
        self.components(t, tr, s).fitness
    }

    /// Fitness of every target into `out`. Returns the evaluation's cost in elementary
    /// operations (nodes and edges visited, targets valued): what the run's work meter
    /// charges for it.
    pub fn evaluate_all(&self, tr: &Trace, s: &mut Scratch, out: &mut Vec<f64>) -> u64 {
        out.clear();
        s.prepare(self, tr);
        out.reserve(self.len());
        for t in 0..self.len() {
            let f = if tr.executed(self.targets.blocks[t]) { 0.0 } else { s.components(self, tr, t).fitness };
            out.push(f);
        }
        s.take_ops() + self.len() as u64
    }

    /// Whether `new` executed a target that `old` did not: MIO's improvement tracking counts
    /// that as an improvement without evaluating (the target's value fell to 0; it was above
    /// 0 before except where the CFD fallback values an unexecuted target 0, docs/testgen.md).
    /// Linear in the block count.
    pub fn covers_new_target(&self, old: &Trace, new: &Trace) -> bool {
        new.executed
            .iter()
            .zip(old.executed.iter().chain(std::iter::repeat(&0)))
            .zip(&self.target_bits)
            .any(|((n, o), m)| n & !o & m != 0)
    }

    /// Whether `tr` executed target `t`.
    #[inline]
    pub fn covers(&self, t: usize, tr: &Trace) -> bool {
        tr.executed(self.targets.blocks[t])
    }

    /// Whether node `n` was reached by the execution `tr`.
    fn reached(&self, n: NodeId, tr: &Trace) -> bool {
        let b = self.node_block[n as usize];
        if b != BlockIdx::MAX {
            return tr.executed(b);
        }
        match &self.graph.nodes[n as usize] {
            Node::Entry => true,
            Node::Exit => false,
            Node::Block(b) => tr.executed(*b),
            Node::UserEvent(_) | Node::Event(_) => self.graph.event_hats[n as usize].iter().any(|h| tr.executed(*h)),
        }
    }

    /// Branch distance of reached dependence `a` towards the outcomes `labels`
    /// (bit 0 = true, bit 1 = false).
    fn dist(&self, a: NodeId, labels: u8, tr: &Trace) -> f64 {
        let i = a as usize;
        // Without a measurement: 0 if the execution left `a` along a required
        // edge (its first node there ran), else 1 (Korel's boolean distance).
        let inferred = || {
            let taken =
                self.graph.succ[i].iter().any(|(s, l)| labels & label_bit(*l) != 0 && *s != a && self.reached(*s, tr));
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
                    if labels & 1 != 0 {
                        best = best.min(d[0]);
                    }
                    if labels & 2 != 0 {
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
}

/// The outcome bit of an edge label (bit 0 = true, bit 1 = false).
#[inline]
fn label_bit(l: Label) -> u8 {
    match l {
        Label::True => 1,
        Label::False => 2,
    }
}

/// CDG depth of each target node: the largest breadth-first level among its ancestors
/// (direct dependences are level 0), computed once per project.
fn cdg_depths(graph: &Graph, target_node: &[NodeId]) -> Vec<u32> {
    let mut level = vec![u32::MAX; graph.len()];
    let mut order: Vec<NodeId> = Vec::new();
    let mut frontier: Vec<NodeId> = Vec::new();
    let mut next: Vec<NodeId> = Vec::new();
    target_node
        .iter()
        .map(|&node| {
            order.clear();
            frontier.clear();
            frontier.push(node);
            let mut lv = 0u32;
            let mut deepest = 0u32;
            while !frontier.is_empty() {
                next.clear();
                for &x in &frontier {
                    for &(a, _) in &graph.cd_pred[x as usize] {
                        if a != node && level[a as usize] == u32::MAX {
                            level[a as usize] = lv;
                            deepest = lv;
                            order.push(a);
                            next.push(a);
                        }
                    }
                }
                std::mem::swap(&mut frontier, &mut next);
                lv += 1;
            }
            for a in &order {
                level[*a as usize] = u32::MAX;
            }
            deepest
        })
        .collect()
}
