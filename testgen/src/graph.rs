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

use std::collections::{BTreeMap, BTreeSet};

use clowder_vm::project::{BlockIdx, Input, Project};

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// A successor while building: a node, or "the end of the script".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cont {
    Node(NodeId),
    End,
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
        let p = project;
        let nb = p.blocks.len();
        let mut nodes = vec![Node::Entry, Node::Exit];
        let mut block_node = vec![NONE; nb];
        // Script top (hat) of every node; NONE for artificial nodes.
        let mut script_of: Vec<BlockIdx> = vec![BlockIdx::MAX, BlockIdx::MAX];
        let ok = |b: BlockIdx| (b as usize) < nb;

        // Phase 1: statement nodes, structurally (next links and substacks from hats).
        let mut tops: Vec<BlockIdx> = Vec::new();
        for t in &p.targets {
            for &top in &t.scripts {
                if ok(top) && is_hat(&p.block(top).opcode) && !tops.contains(&top) {
                    tops.push(top);
                }
            }
        }
        for &top in &tops {
            let mut stacks = vec![top];
            while let Some(first) = stacks.pop() {
                let mut cur = Some(first);
                while let Some(b) = cur {
                    if !ok(b) || block_node[b as usize] != NONE {
                        break;
                    }
                    block_node[b as usize] = nodes.len() as NodeId;
                    nodes.push(Node::Block(b));
                    script_of.push(top);
                    let block = p.block(b);
                    for (name, input) in block.inputs.iter().rev() {
                        if let Input::Block(s) = input
                            && name.starts_with("SUBSTACK")
                        {
                            stacks.push(*s);
                        }
                    }
                    cur = block.next;
                }
            }
        }

        // Phase 2: intraprocedural edges.
        let mut succ: Vec<Vec<(NodeId, Label)>> = vec![Vec::new(); nodes.len()];
        let mut end_edges: Vec<(NodeId, Label)> = Vec::new();
        let mut call_conts: BTreeMap<NodeId, Vec<Cont>> = BTreeMap::new();
        let mut done = vec![false; nodes.len()];
        let add = |succ: &mut Vec<Vec<(NodeId, Label)>>,
                   end_edges: &mut Vec<(NodeId, Label)>,
                   from: NodeId,
                   to: Cont,
                   label: Label| match to {
            Cont::Node(t) => {
                let s = &mut succ[from as usize];
                if !s.iter().any(|(x, _)| *x == t) {
                    s.push((t, label));
                }
            }
            Cont::End => {
                if !end_edges.iter().any(|(x, _)| *x == from) {
                    end_edges.push((from, label));
                }
            }
        };
        for &top in &tops {
            let mut work: Vec<(BlockIdx, Vec<Cont>)> = vec![(top, vec![Cont::End])];
            while let Some((first, cont)) = work.pop() {
                let mut cur = Some(first);
                while let Some(b) = cur {
                    if !ok(b) {
                        break;
                    }
                    let id = block_node[b as usize];
                    if id == NONE || done[id as usize] {
                        break;
                    }
                    done[id as usize] = true;
                    let block = p.block(b);
                    let next_node =
                        block.next.filter(|n| ok(*n)).map(|n| block_node[n as usize]).filter(|n| *n != NONE);
                    let follow: Vec<Cont> = match next_node {
                        Some(n) => vec![Cont::Node(n)],
                        None => cont.clone(),
                    };
                    let to_follow = |label: Label, succ: &mut Vec<Vec<(NodeId, Label)>>, ee: &mut Vec<_>| {
                        for c in &follow {
                            add(succ, ee, id, *c, label);
                        }
                    };
                    let sub = |name: &str| substack(p, b, name).filter(|s| block_node[*s as usize] != NONE);
                    match block.opcode.as_str() {
                        "control_if" => {
                            if let Some(s) = sub("SUBSTACK") {
                                add(&mut succ, &mut end_edges, id, Cont::Node(block_node[s as usize]), Label::True);
                                work.push((s, follow.clone()));
                            }
                            to_follow(Label::False, &mut succ, &mut end_edges);
                        }
                        "control_if_else" => {
                            match sub("SUBSTACK") {
                                Some(s) => {
                                    add(&mut succ, &mut end_edges, id, Cont::Node(block_node[s as usize]), Label::True);
                                    work.push((s, follow.clone()));
                                }
                                None => to_follow(Label::True, &mut succ, &mut end_edges),
                            }
                            match sub("SUBSTACK2") {
                                Some(s) => {
                                    add(
                                        &mut succ,
                                        &mut end_edges,
                                        id,
                                        Cont::Node(block_node[s as usize]),
                                        Label::False,
                                    );
                                    work.push((s, follow.clone()));
                                }
                                None => to_follow(Label::False, &mut succ, &mut end_edges),
                            }
                        }
                        op @ ("control_repeat" | "control_while" | "control_for_each" | "control_repeat_until") => {
                            let (body, leave) = if op == "control_repeat_until" {
                                (Label::False, Label::True)
                            } else {
                                (Label::True, Label::False)
                            };
                            if let Some(s) = sub("SUBSTACK") {
                                add(&mut succ, &mut end_edges, id, Cont::Node(block_node[s as usize]), body);
                                work.push((s, vec![Cont::Node(id)]));
                            }
                            to_follow(leave, &mut succ, &mut end_edges);
                            add(&mut succ, &mut end_edges, id, Cont::Node(EXIT), leave);
                        }
                        "control_forever" => {
                            if let Some(s) = sub("SUBSTACK") {
                                add(&mut succ, &mut end_edges, id, Cont::Node(block_node[s as usize]), Label::True);
                                work.push((s, vec![Cont::Node(id)]));
                            }
                            add(&mut succ, &mut end_edges, id, Cont::Node(EXIT), Label::False);
                        }
                        "control_wait_until" => {
                            to_follow(Label::True, &mut succ, &mut end_edges);
                            add(&mut succ, &mut end_edges, id, Cont::Node(EXIT), Label::False);
                        }
                        "control_stop" => {
                            match block.field("STOP_OPTION").map(|f| f.value.as_str()).unwrap_or("all") {
                                "other scripts in sprite" | "other scripts in stage" => {
                                    to_follow(Label::True, &mut succ, &mut end_edges)
                                }
                                // In a procedure this returns to the caller (see build's phase 4).
                                "this script" => add(&mut succ, &mut end_edges, id, Cont::End, Label::True),
                                _ => add(&mut succ, &mut end_edges, id, Cont::Node(EXIT), Label::True),
                            }
                        }
                        "control_delete_this_clone" => {
                            add(&mut succ, &mut end_edges, id, Cont::Node(EXIT), Label::True)
                        }
                        "procedures_call" => {
                            call_conts.insert(id, follow.clone());
                        }
                        op => {
                            to_follow(Label::True, &mut succ, &mut end_edges);
                            if TIMED_OPCODES.contains(&op) {
                                add(&mut succ, &mut end_edges, id, Cont::Node(EXIT), Label::False);
                            }
                        }
                    }
                    cur = if next_node.is_some() { block.next } else { None };
                }
            }
        }

        // Phase 3: events.
        let mut event_hats: Vec<Vec<BlockIdx>> = vec![Vec::new(); nodes.len()];
        let new_node = |nodes: &mut Vec<Node>,
                        succ: &mut Vec<Vec<(NodeId, Label)>>,
                        script_of: &mut Vec<BlockIdx>,
                        event_hats: &mut Vec<Vec<BlockIdx>>,
                        n: Node| {
            nodes.push(n);
            succ.push(Vec::new());
            script_of.push(BlockIdx::MAX);
            event_hats.push(Vec::new());
            (nodes.len() - 1) as NodeId
        };
        let mut user_events: BTreeMap<String, NodeId> = BTreeMap::new();
        let mut receivers: BTreeMap<String, Vec<BlockIdx>> = BTreeMap::new();
        let stage = p.targets.iter().find(|t| t.is_stage);
        let backdrop_exists = |name: &str| stage.is_some_and(|s| s.costumes.iter().any(|c| c.name == name));
        for &top in &tops {
            let b = p.block(top);
            let tname = p.targets.get(b.target as usize).map(|t| t.name.as_str()).unwrap_or("");
            let field = |f: &str| b.field(f).map(|x| x.value.clone()).unwrap_or_default();
            let user_key = match b.opcode.as_str() {
                "event_whenflagclicked" => Some("flag".to_string()),
                "event_whenkeypressed" => Some(format!("key:{}", field("KEY_OPTION"))),
                "event_whenthisspriteclicked" => Some(format!("click:{tname}")),
                "event_whenstageclicked" => Some("stage".to_string()),
                "event_whengreaterthan" => Some(format!("greaterthan:{}", field("WHENGREATERTHANMENU"))),
                "event_whentouchingobject" => {
                    Some(format!("touching:{tname}:{}", menu_value(p, top, "TOUCHINGOBJECTMENU").unwrap_or_default()))
                }
                _ => None,
            };
            if let Some(key) = user_key {
                let u = match user_events.get(&key) {
                    Some(u) => *u,
                    None => {
                        let u = new_node(
                            &mut nodes,
                            &mut succ,
                            &mut script_of,
                            &mut event_hats,
                            Node::UserEvent(key.clone()),
                        );
                        user_events.insert(key, u);
                        add(&mut succ, &mut end_edges, ENTRY, Cont::Node(u), Label::True);
                        add(&mut succ, &mut end_edges, u, Cont::Node(EXIT), Label::False);
                        u
                    }
                };
                add(&mut succ, &mut end_edges, u, Cont::Node(block_node[top as usize]), Label::True);
                event_hats[u as usize].push(top);
                continue;
            }
            let recv_key = match b.opcode.as_str() {
                "event_whenbroadcastreceived" => {
                    Some(format!("broadcast:{}", field("BROADCAST_OPTION").to_lowercase()))
                }
                "control_start_as_clone" if !p.targets.get(b.target as usize).is_some_and(|t| t.is_stage) => {
                    Some(format!("clone:{tname}"))
                }
                "event_whenbackdropswitchesto" => {
                    let name = field("BACKDROP");
                    backdrop_exists(&name).then(|| format!("backdrop:{name}"))
                }
                _ => None,
            };
            if let Some(key) = recv_key {
                receivers.entry(key).or_default().push(top);
            }
        }
        let all_with_prefix =
            |prefix: &str| -> Vec<String> { receivers.keys().filter(|k| k.starts_with(prefix)).cloned().collect() };
        let mut event_nodes: BTreeMap<String, NodeId> = BTreeMap::new();
        let mut send_edges: BTreeSet<(NodeId, NodeId)> = BTreeSet::new();
        let block_nodes: Vec<(NodeId, BlockIdx)> = nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| match n {
                Node::Block(b) => Some((i as NodeId, *b)),
                _ => None,
            })
            .collect();
        for &(id, b) in &block_nodes {
            let block = p.block(b);
            let keys: Vec<String> = match block.opcode.as_str() {
                "event_broadcast" | "event_broadcastandwait" => match menu_value(p, b, "BROADCAST_INPUT") {
                    Some(name) => vec![format!("broadcast:{}", name.to_lowercase())],
                    None => all_with_prefix("broadcast:"),
                },
                "control_create_clone_of" => match menu_value(p, b, "CLONE_OPTION") {
                    Some(name) if name == "_myself_" => {
                        let own = p.targets.get(block.target as usize).map(|t| t.name.clone()).unwrap_or_default();
                        vec![format!("clone:{own}")]
                    }
                    Some(name) => vec![format!("clone:{name}")],
                    None => all_with_prefix("clone:"),
                },
                "looks_switchbackdropto" | "looks_switchbackdroptoandwait" => match menu_value(p, b, "BACKDROP") {
                    Some(name) if backdrop_exists(&name) => vec![format!("backdrop:{name}")],
                    Some(name)
                        if !matches!(name.as_str(), "next backdrop" | "previous backdrop" | "random backdrop") =>
                    {
                        Vec::new()
                    }
                    _ => all_with_prefix("backdrop:"),
                },
                "looks_nextbackdrop" => all_with_prefix("backdrop:"),
                _ => Vec::new(),
            };
            for key in keys {
                let Some(recv) = receivers.get(&key) else { continue };
                let e = match event_nodes.get(&key) {
                    Some(e) => *e,
                    None => {
                        let e =
                            new_node(&mut nodes, &mut succ, &mut script_of, &mut event_hats, Node::Event(key.clone()));
                        event_nodes.insert(key.clone(), e);
                        add(&mut succ, &mut end_edges, e, Cont::Node(EXIT), Label::False);
                        for &h in recv {
                            add(&mut succ, &mut end_edges, e, Cont::Node(block_node[h as usize]), Label::True);
                        }
                        event_hats[e as usize] = recv.clone();
                        e
                    }
                };
                add(&mut succ, &mut end_edges, id, Cont::Node(e), Label::True);
                send_edges.insert((id, e));
            }
        }

        // Phase 4: procedure calls and returns.
        let mut defs: BTreeMap<(u32, String), Vec<NodeId>> = BTreeMap::new();
        for &top in &tops {
            if p.block(top).opcode == "procedures_definition"
                && let Some(code) = definition_proccode(p, top)
            {
                defs.entry((p.block(top).target, code)).or_default().push(block_node[top as usize]);
            }
        }
        let def_of_script = |top: BlockIdx| -> Option<NodeId> {
            (top != BlockIdx::MAX && p.block(top).opcode == "procedures_definition").then(|| block_node[top as usize])
        };
        let callee = |c: NodeId| -> Vec<NodeId> {
            let Node::Block(b) = nodes[c as usize] else { return Vec::new() };
            let block = p.block(b);
            let code = block.mutation.as_ref().map(|m| m.proccode.clone()).unwrap_or_default();
            defs.get(&(block.target, code)).cloned().unwrap_or_default()
        };
        let mut returns: BTreeMap<NodeId, BTreeSet<NodeId>> = BTreeMap::new();
        loop {
            let mut changed = false;
            for (&c, conts) in &call_conts {
                for d in callee(c) {
                    let mut add_set: Vec<NodeId> = Vec::new();
                    for cont in conts {
                        match cont {
                            Cont::Node(x) => add_set.push(*x),
                            Cont::End => match def_of_script(script_of[c as usize]) {
                                Some(caller_def) => {
                                    add_set.extend(returns.get(&caller_def).into_iter().flatten().copied())
                                }
                                None => add_set.push(EXIT),
                            },
                        }
                    }
                    let set = returns.entry(d).or_default();
                    for x in add_set {
                        changed |= set.insert(x);
                    }
                }
            }
            if !changed {
                break;
            }
        }
        for (&c, conts) in &call_conts {
            let ds = callee(c);
            if ds.is_empty() {
                // Calling an undefined procedure does nothing.
                for cont in conts {
                    add(&mut succ, &mut end_edges, c, *cont, Label::True);
                }
            }
            for d in ds {
                add(&mut succ, &mut end_edges, c, Cont::Node(d), Label::True);
            }
        }
        for &(n, label) in &end_edges {
            match def_of_script(script_of[n as usize]) {
                Some(d) => {
                    let targets: Vec<NodeId> = returns.get(&d).map(|s| s.iter().copied().collect()).unwrap_or_default();
                    if targets.is_empty() {
                        add(&mut succ, &mut Vec::new(), n, Cont::Node(EXIT), label);
                    }
                    for t in targets {
                        add(&mut succ, &mut Vec::new(), n, Cont::Node(t), label);
                    }
                }
                None => add(&mut succ, &mut Vec::new(), n, Cont::Node(EXIT), label),
            }
        }
        add(&mut succ, &mut end_edges, ENTRY, Cont::Node(EXIT), Label::False);

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

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when the graph has no nodes besides Entry and Exit.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() <= 2
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
    for a in 0..n as NodeId {
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
                if !cd_succ[a as usize].contains(&(x, label)) {
                    cd_succ[a as usize].push((x, label));
                }
                x = ipdom[x as usize];
            }
            if l == a && !cd_succ[a as usize].contains(&(a, label)) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{Arg, ProjectBuilder};

    /// The paper's Figure 8: cat and bear.
    pub(crate) fn cat_and_bear() -> (ProjectBuilder, Vec<String>) {
        let mut p = ProjectBuilder::new();
        p.message("answer cat");
        let cat = p.sprite("Cat");
        let bear = p.sprite("Bear");
        let c = p.t(cat);
        let h1 = c.when_clicked();
        let s1 = c.say_for(Arg::t("Hello bear!"), 2.0);
        let b1 = c.broadcast("answer cat");
        c.script(h1.clone(), &[s1.clone(), b1.clone()]);
        let b = p.t(bear);
        let h2 = b.when_receive("answer cat");
        let s2 = b.say_for(Arg::t("Hello cat!"), 2.0);
        let k = b.key_pressed("space");
        let sw = b.switch_costume("smiling bear");
        let iff = b.if_(&k, std::slice::from_ref(&sw));
        let fe = b.forever(std::slice::from_ref(&iff));
        b.script(h2.clone(), &[s2.clone(), fe.clone()]);
        (p, vec![h1, s1, b1, h2, s2, fe, iff, sw])
    }

    fn node_of(g: &Graph, p: &clowder_vm::Project, t: usize, id: &str) -> NodeId {
        let b = p.blocks.iter().position(|b| b.id == id && b.target as usize == t).expect("block") as BlockIdx;
        g.block_node[b as usize]
    }

    #[test]
    fn cat_and_bear_dependences() {
        let (pb, ids) = cat_and_bear();
        let p = pb.load();
        let g = Graph::build(&p);
        let n = |t: usize, i: usize| node_of(&g, &p, t, &ids[i]);
        let (h1, s1, b1) = (n(1, 0), n(1, 1), n(1, 2));
        let (h2, s2, fe, iff, sw) = (n(2, 3), n(2, 4), n(2, 5), n(2, 6), n(2, 7));
        for x in [h1, s1, b1, h2, s2, fe, iff, sw] {
            assert_ne!(x, NONE, "all eight statements are reachable");
        }
        let deps = |x: NodeId| -> Vec<NodeId> { g.cd_pred[x as usize].iter().map(|(a, _)| *a).collect() };
        let click =
            g.nodes.iter().position(|n| *n == Node::UserEvent("click:Cat".into())).expect("click node") as NodeId;
        let msg = g.nodes.iter().position(|n| *n == Node::Event("broadcast:answer cat".into())).expect("event node")
            as NodeId;
        assert_eq!(deps(h1), vec![click]);
        assert_eq!(deps(s1), vec![click]);
        assert_eq!(deps(b1), vec![s1], "after a timed block, statements depend on it");
        assert_eq!(deps(msg), vec![b1], "the message event depends on its sender");
        assert_eq!(deps(h2), vec![msg]);
        assert_eq!(deps(s2), vec![msg]);
        assert_eq!(deps(fe), vec![s2, fe], "a loop head depends on itself");
        let mut d_if = deps(iff);
        d_if.sort_unstable();
        assert_eq!(d_if, vec![fe], "the if depends on the forever loop");
        assert_eq!(g.cd_pred[sw as usize], vec![(iff, Label::True)]);
        assert_eq!(deps(click), vec![ENTRY]);
    }

    #[test]
    fn unreachable_scripts_are_not_nodes() {
        let mut p = ProjectBuilder::new();
        let s = p.sprite("S");
        let t = p.t(s);
        // A receiver without sender, a procedure without call, a loose block.
        let h = t.when_receive("nobody");
        let a = t.move_steps(1.0);
        let f = t.forever(&[a]);
        t.script(h, &[f]);
        let d = t.define("lonely");
        let m = t.move_steps(2.0);
        t.script(d, &[m]);
        let loose = t.move_steps(3.0);
        t.script(loose, &[]);
        let flag = t.when_flag();
        let m2 = t.move_steps(4.0);
        t.script(flag, &[m2]);
        let g = Graph::build(&p.load());
        let blocks: Vec<_> = g.nodes.iter().filter(|n| matches!(n, Node::Block(_))).collect();
        assert_eq!(blocks.len(), 2, "only the green-flag script counts: {:?}", g.nodes);
    }

    #[test]
    fn procedure_returns_link_to_call_successors() {
        let mut p = ProjectBuilder::new();
        let s = p.sprite("S");
        let t = p.t(s);
        let d = t.define("jump");
        let w = t.wait(1.0);
        let m = t.move_steps(2.0);
        t.script(d.clone(), &[w, m.clone()]);
        let flag = t.when_flag();
        let c = t.call("jump");
        let after = t.say(Arg::t("done"));
        t.script(flag, &[c.clone(), after.clone()]);
        let pr = p.load();
        let g = Graph::build(&pr);
        let (dn, mn, cn, an) =
            (node_of(&g, &pr, 1, &d), node_of(&g, &pr, 1, &m), node_of(&g, &pr, 1, &c), node_of(&g, &pr, 1, &after));
        assert_eq!(g.succ[cn as usize].iter().map(|e| e.0).collect::<Vec<_>>(), vec![dn]);
        assert!(g.succ[mn as usize].iter().any(|e| e.0 == an), "return edge to the statement after the call");
        // The statement after the call waits for the procedure's wait block.
        assert_eq!(g.cd_pred[an as usize].len(), 1);
    }
}
