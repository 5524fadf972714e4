//! Building the CFG, phase by phase: statement nodes, intraprocedural edges, event nodes and
//! their edges, procedure calls and returns. [`Builder::finish`] (in [`super::dominance`])
//! keeps what is reachable and computes post-dominators and control dependences.

use std::collections::{BTreeMap, BTreeSet};

use clowder_vm::project::{BlockIdx, Input, Project};

use super::{ENTRY, EXIT, Label, NONE, Node, NodeId, TIMED_OPCODES, definition_proccode, is_hat, menu_value, substack};

/// A successor while building: a node, or "the end of the script".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cont {
    Node(NodeId),
    End,
}

/// The graph under construction.
pub(super) struct Builder<'p> {
    p: &'p Project,
    pub(super) nodes: Vec<Node>,
    /// Node of each block (`NONE` for blocks that are not statements of a hat script).
    block_node: Vec<NodeId>,
    /// Script top (hat) of every node; `BlockIdx::MAX` for artificial nodes.
    script_of: Vec<BlockIdx>,
    /// Hat blocks of all scripts, in target and script order.
    tops: Vec<BlockIdx>,
    pub(super) succ: Vec<Vec<(NodeId, Label)>>,
    /// Edges that leave a script at its end, resolved once procedure returns are known.
    end_edges: Vec<(NodeId, Label)>,
    /// The edges in `succ` and the sources in `end_edges`, so that a node with many
    /// successors (an event with many scripts) is built in linear time.
    edge_set: BTreeSet<(NodeId, NodeId)>,
    end_set: BTreeSet<NodeId>,
    /// Procedure call nodes with their continuations.
    call_conts: BTreeMap<NodeId, Vec<Cont>>,
    pub(super) event_hats: Vec<Vec<BlockIdx>>,
    /// `sender → event` edges (ignored by the post-dominators).
    pub(super) send_edges: BTreeSet<(NodeId, NodeId)>,
}

impl<'p> Builder<'p> {
    /// Phase 1: statement nodes, structurally (next links and substacks from hats).
    pub(super) fn new(p: &'p Project) -> Self {
        let nb = p.blocks.len();
        let ok = |b: BlockIdx| (b as usize) < nb;
        let mut nodes = vec![Node::Entry, Node::Exit];
        let mut block_node = vec![NONE; nb];
        let mut script_of: Vec<BlockIdx> = vec![BlockIdx::MAX, BlockIdx::MAX];
        let mut tops: Vec<BlockIdx> = Vec::new();
        let mut is_top = vec![false; nb];
        for t in &p.targets {
            for &top in &t.scripts {
                if ok(top) && is_hat(&p.block(top).opcode) && !is_top[top as usize] {
                    is_top[top as usize] = true;
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
        let n = nodes.len();
        Builder {
            p,
            nodes,
            block_node,
            script_of,
            tops,
            succ: vec![Vec::new(); n],
            end_edges: Vec::new(),
            edge_set: BTreeSet::new(),
            end_set: BTreeSet::new(),
            call_conts: BTreeMap::new(),
            event_hats: vec![Vec::new(); n],
            send_edges: BTreeSet::new(),
        }
    }

    /// Blocks in the project.
    pub(super) fn block_count(&self) -> usize {
        self.p.blocks.len()
    }

    fn ok(&self, b: BlockIdx) -> bool {
        (b as usize) < self.p.blocks.len()
    }

    /// Adds the edge `from → to` once (`End`: remembered until returns are known).
    fn add(&mut self, from: NodeId, to: Cont, label: Label) {
        match to {
            Cont::Node(t) => {
                if self.edge_set.insert((from, t)) {
                    self.succ[from as usize].push((t, label));
                }
            }
            Cont::End => {
                if self.end_set.insert(from) {
                    self.end_edges.push((from, label));
                }
            }
        }
    }

    /// Edges from `from` to every continuation in `follow`.
    fn add_all(&mut self, from: NodeId, follow: &[Cont], label: Label) {
        for c in follow {
            self.add(from, *c, label);
        }
    }

    /// A new artificial node (no block, no script).
    fn new_node(&mut self, n: Node) -> NodeId {
        self.nodes.push(n);
        self.succ.push(Vec::new());
        self.script_of.push(BlockIdx::MAX);
        self.event_hats.push(Vec::new());
        (self.nodes.len() - 1) as NodeId
    }

    /// Phase 2: intraprocedural edges, walking each script with its continuations.
    pub(super) fn intraprocedural_edges(&mut self) {
        let mut done = vec![false; self.nodes.len()];
        for top in self.tops.clone() {
            let mut work: Vec<(BlockIdx, Vec<Cont>)> = vec![(top, vec![Cont::End])];
            while let Some((first, cont)) = work.pop() {
                let mut cur = Some(first);
                while let Some(b) = cur {
                    if !self.ok(b) {
                        break;
                    }
                    let id = self.block_node[b as usize];
                    if id == NONE || done[id as usize] {
                        break;
                    }
                    done[id as usize] = true;
                    let block = self.p.block(b);
                    let next_node =
                        block.next.filter(|n| self.ok(*n)).map(|n| self.block_node[n as usize]).filter(|n| *n != NONE);
                    let follow: Vec<Cont> = match next_node {
                        Some(n) => vec![Cont::Node(n)],
                        None => cont.clone(),
                    };
                    self.statement_edges(b, id, &follow, &mut work);
                    cur = if next_node.is_some() { block.next } else { None };
                }
            }
        }
    }

    /// The edges of statement `b` (node `id`) whose successor is `follow`; substacks to walk
    /// are pushed onto `work` with their continuations.
    fn statement_edges(&mut self, b: BlockIdx, id: NodeId, follow: &[Cont], work: &mut Vec<(BlockIdx, Vec<Cont>)>) {
        let block = self.p.block(b);
        let sub = |this: &Self, name: &str| substack(this.p, b, name).filter(|s| this.block_node[*s as usize] != NONE);
        match block.opcode.as_str() {
            "control_if" => {
                if let Some(s) = sub(self, "SUBSTACK") {
                    self.add(id, Cont::Node(self.block_node[s as usize]), Label::True);
                    work.push((s, follow.to_vec()));
                }
                self.add_all(id, follow, Label::False);
            }
            "control_if_else" => {
                match sub(self, "SUBSTACK") {
                    Some(s) => {
                        self.add(id, Cont::Node(self.block_node[s as usize]), Label::True);
                        work.push((s, follow.to_vec()));
                    }
                    None => self.add_all(id, follow, Label::True),
                }
                match sub(self, "SUBSTACK2") {
                    Some(s) => {
                        self.add(id, Cont::Node(self.block_node[s as usize]), Label::False);
                        work.push((s, follow.to_vec()));
                    }
                    None => self.add_all(id, follow, Label::False),
                }
            }
            op @ ("control_repeat" | "control_while" | "control_for_each" | "control_repeat_until") => {
                let (body, leave) = if op == "control_repeat_until" {
                    (Label::False, Label::True)
                } else {
                    (Label::True, Label::False)
                };
                if let Some(s) = sub(self, "SUBSTACK") {
                    self.add(id, Cont::Node(self.block_node[s as usize]), body);
                    work.push((s, vec![Cont::Node(id)]));
                }
                self.add_all(id, follow, leave);
                self.add(id, Cont::Node(EXIT), leave);
            }
            "control_forever" => {
                if let Some(s) = sub(self, "SUBSTACK") {
                    self.add(id, Cont::Node(self.block_node[s as usize]), Label::True);
                    work.push((s, vec![Cont::Node(id)]));
                }
                self.add(id, Cont::Node(EXIT), Label::False);
            }
            "control_wait_until" => {
                self.add_all(id, follow, Label::True);
                self.add(id, Cont::Node(EXIT), Label::False);
            }
            "control_stop" => match block.field("STOP_OPTION").map(|f| f.value.as_str()).unwrap_or("all") {
                "other scripts in sprite" | "other scripts in stage" => self.add_all(id, follow, Label::True),
                // In a procedure this returns to the caller (see `procedure_edges`).
                "this script" => self.add(id, Cont::End, Label::True),
                _ => self.add(id, Cont::Node(EXIT), Label::True),
            },
            "control_delete_this_clone" => self.add(id, Cont::Node(EXIT), Label::True),
            "procedures_call" => {
                self.call_conts.insert(id, follow.to_vec());
            }
            op => {
                self.add_all(id, follow, Label::True);
                if TIMED_OPCODES.contains(&op) {
                    self.add(id, Cont::Node(EXIT), Label::False);
                }
            }
        }
    }

    /// Phase 3: user events (`Entry → event → hat`) and program events (`sender → event →
    /// receiver hats`).
    pub(super) fn event_edges(&mut self) {
        let receivers = self.user_events();
        self.program_events(&receivers);
    }

    fn backdrop_exists(&self, name: &str) -> bool {
        self.p.targets.iter().find(|t| t.is_stage).is_some_and(|s| s.costumes.iter().any(|c| c.name == name))
    }

    /// One node per user-triggered event, edges to its hats; returns the receiver hats of
    /// program events by event key (`broadcast:msg`, `clone:Cat`, `backdrop:Night`).
    fn user_events(&mut self) -> BTreeMap<String, Vec<BlockIdx>> {
        let p = self.p;
        let mut user_events: BTreeMap<String, NodeId> = BTreeMap::new();
        let mut receivers: BTreeMap<String, Vec<BlockIdx>> = BTreeMap::new();
        for top in self.tops.clone() {
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
                        let u = self.new_node(Node::UserEvent(key.clone()));
                        user_events.insert(key, u);
                        self.add(ENTRY, Cont::Node(u), Label::True);
                        self.add(u, Cont::Node(EXIT), Label::False);
                        u
                    }
                };
                self.add(u, Cont::Node(self.block_node[top as usize]), Label::True);
                self.event_hats[u as usize].push(top);
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
                    self.backdrop_exists(&name).then(|| format!("backdrop:{name}"))
                }
                _ => None,
            };
            if let Some(key) = recv_key {
                receivers.entry(key).or_default().push(top);
            }
        }
        receivers
    }

    /// One node per program event that some block sends and some script receives.
    fn program_events(&mut self, receivers: &BTreeMap<String, Vec<BlockIdx>>) {
        let p = self.p;
        let all_with_prefix =
            |prefix: &str| -> Vec<String> { receivers.keys().filter(|k| k.starts_with(prefix)).cloned().collect() };
        let mut event_nodes: BTreeMap<String, NodeId> = BTreeMap::new();
        let block_nodes: Vec<(NodeId, BlockIdx)> = self
            .nodes
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
                    Some(name) if self.backdrop_exists(&name) => vec![format!("backdrop:{name}")],
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
                        let e = self.new_node(Node::Event(key.clone()));
                        event_nodes.insert(key.clone(), e);
                        self.add(e, Cont::Node(EXIT), Label::False);
                        for &h in recv {
                            self.add(e, Cont::Node(self.block_node[h as usize]), Label::True);
                        }
                        self.event_hats[e as usize] = recv.clone();
                        e
                    }
                };
                self.add(id, Cont::Node(e), Label::True);
                self.send_edges.insert((id, e));
            }
        }
    }

    /// Phase 4: procedure calls (`call → definition`) and returns (the end of a procedure, and
    /// `stop this script` in it, to the successor of every call site), computed to a fixed
    /// point because a procedure's end may return into another procedure's end.
    pub(super) fn procedure_edges(&mut self) {
        let p = self.p;
        let mut defs: BTreeMap<(u32, String), Vec<NodeId>> = BTreeMap::new();
        for &top in &self.tops {
            if p.block(top).opcode == "procedures_definition"
                && let Some(code) = definition_proccode(p, top)
            {
                defs.entry((p.block(top).target, code)).or_default().push(self.block_node[top as usize]);
            }
        }
        let mut returns: BTreeMap<NodeId, BTreeSet<NodeId>> = BTreeMap::new();
        loop {
            let mut changed = false;
            for (&c, conts) in &self.call_conts {
                for d in self.callees(&defs, c) {
                    let mut add_set: Vec<NodeId> = Vec::new();
                    for cont in conts {
                        match cont {
                            Cont::Node(x) => add_set.push(*x),
                            Cont::End => match self.definition_of_script(self.script_of[c as usize]) {
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
        for (c, conts) in self.call_conts.clone() {
            let ds = self.callees(&defs, c);
            if ds.is_empty() {
                // Calling an undefined procedure does nothing.
                for cont in conts {
                    self.add(c, cont, Label::True);
                }
            }
            for d in ds {
                self.add(c, Cont::Node(d), Label::True);
            }
        }
        for (n, label) in self.end_edges.clone() {
            match self.definition_of_script(self.script_of[n as usize]) {
                Some(d) => {
                    let targets: Vec<NodeId> = returns.get(&d).map(|s| s.iter().copied().collect()).unwrap_or_default();
                    if targets.is_empty() {
                        self.add(n, Cont::Node(EXIT), label);
                    }
                    for t in targets {
                        self.add(n, Cont::Node(t), label);
                    }
                }
                None => self.add(n, Cont::Node(EXIT), label),
            }
        }
        self.add(ENTRY, Cont::Node(EXIT), Label::False);
    }

    /// The definition node of a script whose hat is `top`, when it is a procedure.
    fn definition_of_script(&self, top: BlockIdx) -> Option<NodeId> {
        (top != BlockIdx::MAX && self.p.block(top).opcode == "procedures_definition")
            .then(|| self.block_node[top as usize])
    }

    /// The definitions a call node calls (none for an undefined procedure).
    fn callees(&self, defs: &BTreeMap<(u32, String), Vec<NodeId>>, c: NodeId) -> Vec<NodeId> {
        let Node::Block(b) = self.nodes[c as usize] else { return Vec::new() };
        let block = self.p.block(b);
        let code = block.mutation.as_ref().map(|m| m.proccode.clone()).unwrap_or_default();
        defs.get(&(block.target, code)).cloned().unwrap_or_default()
    }
}
