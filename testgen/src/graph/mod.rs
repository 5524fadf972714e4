//! The interprocedural control-flow graph (CFG) and control-dependence graph
//! (CDG) of a Scratch program, after the Whisker paper §5.2.1.
//!
//! Nodes are the statement blocks of scripts that start with a hat, plus
//! artificial nodes: one `Entry` and one `Exit`, one *user event* node per
//! user-triggered event (green flag, a key, a sprite click, the stage click, a
//! loudness/timer threshold, touching), and one *event* node per broadcast
//! message, clone target and backdrop that some block sends and some script
//! receives. Edges:
//!
//! * `Entry → user event → hat` and `user event → Exit`: the occurrence of an
//!   event is a branch, so handler scripts are control dependent on it;
//! * `sender → event → receiver hat`, `event → Exit` for broadcasts (and
//!   broadcast-and-wait), `create clone of`, and backdrop switches (`next
//!   backdrop`, computed menus and `random/previous backdrop` reach every
//!   backdrop handler); a sender is not a branch for its own successor: the
//!   post-dominators ignore `sender → event` edges, as Whisker's analysis does;
//! * procedure calls: `call → definition`, and return edges from the end of
//!   the procedure (and `stop this script` inside it) to the successor of every
//!   call site (the paper's model; Whisker's code omits the return edges);
//! * control statements as in Whisker: branches of `if`/`if else`, loop bodies
//!   back to their head, `forever` without fall-through, and artificial edges to
//!   `Exit` from loop heads (`repeat`, `repeat until`, `while`), `wait until`
//!   and time-dependent blocks (waits, say/think for secs, glides, play until
//!   done, speak), so that what follows them is control dependent on them;
//!   `stop all` and `delete this clone` end in `Exit`.
//!
//! Only nodes reachable from `Entry` are kept: they are the coverage targets
//! ("connected, reachable statements", see [`crate::targets`]).
//!
//! Everything is built iteratively with explicit work lists (hostile projects
//! may nest blocks arbitrarily deep) and in block-index order (deterministic).

mod build;
mod dominance;

use clowder_vm::project::{BlockIdx, Input, Project};

use build::Builder;

/// Index of a node in [`Graph::nodes`].
pub type NodeId = u32;

/// What a CFG node stands for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Node {
    /// The program entry.
    Entry,
    /// The program exit.
    Exit,
    /// A statement block (hats included).
    Block(BlockIdx),
    /// A user-triggered event (`flag`, `key:space`, `click:Cat`, `stage`, …).
    UserEvent(String),
    /// A program-internal event (`broadcast:msg`, `clone:Cat`, `backdrop:Night`).
    Event(String),
}

/// Which way a branch goes along an edge (for branch distances).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Label {
    /// The condition holds / the loop body is entered / the event occurs /
    /// the time-dependent block completes.
    True,
    /// The condition fails / the loop is left / the else branch.
    False,
}

/// Kind of a statement block as far as the fitness function cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// A boolean condition decides the branch (`if`, `if else`, `repeat until`,
    /// `while`, `wait until`).
    Condition,
    /// `repeat N`: remaining iterations.
    Repeat,
    /// `forever`.
    Forever,
    /// Time-dependent: waits, say/think for secs, glides, play until done, speak.
    Timed,
    /// Anything else.
    Plain,
}

/// Opcodes of time-dependent (execution-halting) blocks.
pub const TIMED_OPCODES: &[&str] = &[
    "control_wait",
    "looks_thinkforsecs",
    "looks_sayforsecs",
    "motion_glidesecstoxy",
    "motion_glideto",
    "sound_playuntildone",
    "text2speech_speakAndWait",
];

/// Hats that start scripts clowder can trigger or that the program triggers itself.
pub fn is_hat(opcode: &str) -> bool {
    matches!(
        opcode,
        "event_whenflagclicked"
            | "event_whenkeypressed"
            | "event_whenthisspriteclicked"
            | "event_whenstageclicked"
            | "event_whenbroadcastreceived"
            | "event_whenbackdropswitchesto"
            | "event_whengreaterthan"
            | "event_whentouchingobject"
            | "control_start_as_clone"
            | "procedures_definition"
    )
}

/// Kind of a block by opcode.
pub fn block_kind(opcode: &str) -> BlockKind {
    match opcode {
        "control_if" | "control_if_else" | "control_repeat_until" | "control_while" | "control_wait_until" => {
            BlockKind::Condition
        }
        "control_repeat" => BlockKind::Repeat,
        "control_forever" => BlockKind::Forever,
        op if TIMED_OPCODES.contains(&op) => BlockKind::Timed,
        _ => BlockKind::Plain,
    }
}

/// The value of a menu-like input (dropdown shadow, literal or broadcast
/// primitive); `None` when a reporter computes it at run time.
pub fn menu_value(project: &Project, block: BlockIdx, input: &str) -> Option<String> {
    match project.block(block).input(input)? {
        Input::Lit(l) => Some(l.to_js_string()),
        Input::Broadcast { name, .. } => Some(name.clone()),
        Input::Block(m) => {
            let mb = project.blocks.get(*m as usize)?;
            (mb.shadow && mb.inputs.is_empty() && mb.fields.len() == 1).then(|| mb.fields[0].value.clone())
        }
        _ => None,
    }
}

/// First block of a substack input.
pub fn substack(project: &Project, block: BlockIdx, name: &str) -> Option<BlockIdx> {
    match project.block(block).input(name) {
        Some(Input::Block(b)) if (*b as usize) < project.blocks.len() => Some(*b),
        _ => None,
    }
}

/// The proccode a `procedures_definition` defines (through its prototype).
pub fn definition_proccode(project: &Project, def: BlockIdx) -> Option<String> {
    match project.block(def).input("custom_block") {
        Some(Input::Block(p)) => project.blocks.get(*p as usize)?.mutation.as_ref().map(|m| m.proccode.clone()),
        _ => None,
    }
}

/// The interprocedural CFG with its post-dominator tree and CDG.
#[derive(Debug, Clone)]
pub struct Graph {
    /// Nodes: reachable from `Entry`, plus `Exit`; `Entry` is node 0, `Exit` node 1.
    pub nodes: Vec<Node>,
    /// Successors with edge labels.
    pub succ: Vec<Vec<(NodeId, Label)>>,
    /// Predecessors.
    pub pred: Vec<Vec<NodeId>>,
    /// Node of each block ([`NONE`] when the block is not a reachable statement).
    pub block_node: Vec<NodeId>,
    /// Immediate post-dominator of every node (`Exit` for `Exit`).
    pub ipdom: Vec<NodeId>,
    /// CDG: `node → [(node control dependent on it, label of the deciding edge)]`.
    pub cd_succ: Vec<Vec<(NodeId, Label)>>,
    /// CDG predecessors: the nodes each node is control dependent on.
    pub cd_pred: Vec<Vec<(NodeId, Label)>>,
    /// For event and user-event nodes: the hats that run when the event occurs.
    pub event_hats: Vec<Vec<BlockIdx>>,
}

/// No node.
pub const NONE: NodeId = u32::MAX;
/// The entry node.
pub const ENTRY: NodeId = 0;
/// The exit node.
pub const EXIT: NodeId = 1;

impl Graph {
    /// Builds the graphs of `project`.
    pub fn build(project: &Project) -> Graph {
        let mut b = Builder::new(project);
        b.intraprocedural_edges();
        b.event_edges();
        b.procedure_edges();
        b.finish()
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when the graph has no nodes besides Entry and Exit.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() <= 2
    }
}

#[cfg(test)]
mod tests;
