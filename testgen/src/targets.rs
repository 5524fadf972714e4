//! Coverage targets: Whisker's "connected, reachable statements".
//!
//! How we count (the one definition used by test generation and by dataset
//! statistics):
//!
//! 1. Scripts start with a hat clowder can trigger or the program triggers
//!    itself ([`crate::graph::is_hat`]: green flag, key, sprite/stage click,
//!    loudness/timer threshold, touching, broadcast received, backdrop switch,
//!    start as clone, procedure definition). Loose stacks and extension hats
//!    (Makey Makey, video sensing, hardware) start nothing.
//! 2. A script's statements are its hat and every block on its `next` chains
//!    and substacks (`SUBSTACK`, `SUBSTACK2`); reporters and menus plugged into
//!    inputs are not statements.
//! 3. A statement counts when it is reachable from `Entry` in the
//!    interprocedural CFG ([`crate::graph`]): user events reach their handlers,
//!    broadcasts reach receivers, `create clone` reaches `when I start as a
//!    clone` of that sprite, backdrop switches reach their handlers, calls reach
//!    procedure definitions. So a `when I receive` without any sender, an unused
//!    procedure or a clone handler of a never-cloned sprite does not count, nor
//!    does anything after a `forever` or `stop all`.
//!
//! Differences to Whisker's counting (its scratch-analysis package, emse22):
//! Whisker drops nodes without predecessors repeatedly, which keeps loops of
//! unreachable scripts; it ignores blocks of categories outside its list
//! (extension statements), which cuts the statements after them off; and it
//! does not handle `while`. We count reachability properly.

use clowder_vm::project::{BlockIdx, Project};

use crate::graph::{BlockKind, Graph, NONE, Node, block_kind, is_hat};

/// The statement blocks (by index, sorted) that are coverage targets.
pub fn statement_targets(project: &Project) -> Vec<BlockIdx> {
    targets_of(&Graph::build(project))
}

fn targets_of(g: &Graph) -> Vec<BlockIdx> {
    let mut out: Vec<BlockIdx> = g
        .nodes
        .iter()
        .filter_map(|n| match n {
            Node::Block(b) => Some(*b),
            _ => None,
        })
        .collect();
    out.sort_unstable();
    out
}

/// The targets of a run, with what the algorithms need to know about them.
#[derive(Debug, Clone)]
pub struct Targets {
    /// Target blocks, sorted by block index; a target's number is its position.
    pub blocks: Vec<BlockIdx>,
    /// Target number of each block (`u32::MAX` for non-targets).
    pub number: Vec<u32>,
    /// MIO's "independent" targets (Whisker's merge nodes), see [`Targets::new`].
    pub independent: Vec<bool>,
}

impl Targets {
    /// The targets of `project` given its graph.
    ///
    /// Independent targets (MIO keeps populations only for these, as Whisker
    /// does to avoid duplicate populations): hats and procedure definitions,
    /// branching blocks (`if`, `if else`, loops, `wait until`), the last
    /// statement of every stack and branch, and the statement after a
    /// time-dependent block. Covering these covers everything before them in
    /// straight-line code.
    pub fn new(project: &Project, graph: &Graph) -> Self {
        let blocks = targets_of(graph);
        let mut number = vec![u32::MAX; project.blocks.len()];
        for (i, &b) in blocks.iter().enumerate() {
            number[b as usize] = i as u32;
        }
        let independent = blocks
            .iter()
            .map(|&b| {
                let block = project.block(b);
                let op = block.opcode.as_str();
                let after_timed = block.parent.is_some_and(|p| {
                    let pb = project.block(p);
                    pb.next == Some(b) && block_kind(&pb.opcode) == BlockKind::Timed
                });
                is_hat(op)
                    || matches!(block_kind(op), BlockKind::Condition | BlockKind::Repeat | BlockKind::Forever)
                    || block.next.is_none_or(|n| graph.block_node.get(n as usize).is_none_or(|x| *x == NONE))
                    || after_timed
            })
            .collect();
        Self { blocks, number, independent }
    }

    /// Number of targets.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// True when the project has no targets.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{Arg, ProjectBuilder};

    #[test]
    fn counts_reachable_statements_only() {
        let mut p = ProjectBuilder::new();
        let s = p.sprite("S");
        let t = p.t(s);
        let flag = t.when_flag();
        let a = t.move_steps(1.0);
        let lonely = t.say(Arg::t("loose"));
        t.script(lonely, &[]);
        t.script(flag, &[a]);
        let h = t.when_receive("never");
        let b = t.move_steps(2.0);
        t.script(h, &[b]);
        let pr = p.load();
        assert_eq!(statement_targets(&pr).len(), 2, "flag hat and move");
    }
}
