//! Networks (Whisker's `NetworkChromosome`/`NeatChromosome` minus the NEAT bookkeeping, which
//! lives in [`crate::neat`]) and their activation.
//!
//! Two activation semantics are kept, chosen by [`WhiskerVersion`]:
//! - [`WhiskerVersion::Master`] (v0.8): one layered feed-forward pass per call, layers ordered by
//!   depth; recurrent connections read the previous call's activations; classification nodes are
//!   softmaxed over those that received input; the pass reports a defect network (returns
//!   `false`) when no output node has an incoming connection.
//! - [`WhiskerVersion::V07`] (the ASE 2022 artifact): synchronous timesteps repeated until an
//!   output node is on (activated with a non-zero input sum), at most 19 steps, state carried over
//!   between calls; probabilities are a softmax of the classification node values over the
//!   available events.
//!
//! Deliberate differences from Whisker:
//! - Incoming connections are derived from the enabled flags at every activation; Whisker caches
//!   them in the nodes and only ever appends, so a connection disabled in place (by mutation)
//!   still fed its target until the next clone.
//! - In master mode the activated flags of hidden and output nodes are recomputed at every
//!   activation (Whisker never clears them and even copies them into clones).
//! - `activate` does not add input nodes for unseen features (Whisker's `setUpInputs` does):
//!   call [`Network::update_input_nodes`] first, as Whisker's `NetworkExecutor` does anyway.
//! - In v0.7 mode the recurrent flag is ignored: Whisker v0.7's loader compared the boolean `r`
//!   with the string `"true"`, so every loaded connection was non-recurrent.

mod activation;
mod features;
mod gene;
mod grow;

use std::collections::BTreeMap;

pub use activation::{ActivationFunction, relu, round_trace, sigmoid};
pub use features::{Features, Layout};
pub use gene::{ConnectionGene, Innovation, NodeGene, NodeId, NodeKind, regression_activation};
pub use grow::EventSpec;

use crate::error::NeuroError;

/// A recorded activation trace as saved in JSON (`AT`): step → node identifier → values.
pub type ActivationTraceJson = BTreeMap<String, BTreeMap<String, Vec<f64>>>;

/// Which Whisker's semantics (activation, JSON layout) a network follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WhiskerVersion {
    /// Whisker master (v0.8.x): depths, layered activation.
    #[default]
    Master,
    /// Whisker v0.7 (the paper's artifact): no depths, timestep activation.
    V07,
}

/// How new output nodes are connected to the inputs (`cM`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConnectionMethod {
    /// Every input (and the bias) to every new node.
    Fully,
    /// One hidden node per sprite between its inputs and the new nodes; bias directly.
    #[default]
    FullyHidden,
    /// Bias plus the inputs of one random sprite, more sprites with probability `inputRate`.
    Sparse,
}

impl ConnectionMethod {
    /// JSON name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Fully => "fully",
            Self::FullyHidden => "fullyHidden",
            Self::Sparse => "sparse",
        }
    }

    /// Parses a JSON name.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "fully" => Self::Fully,
            "fullyHidden" => Self::FullyHidden,
            "sparse" => Self::Sparse,
            _ => return None,
        })
    }
}

/// A neural network genome with its activation state.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    /// Network id (JSON `id`, Whisker's `uID`).
    pub id: u64,
    /// Activation function of hidden nodes (JSON `aF`).
    pub activation_function: ActivationFunction,
    /// Input connection method (JSON `cM`).
    pub connection_method: ConnectionMethod,
    /// Target statement of the network (JSON `tf`), if any.
    pub target: Option<String>,
    /// Semantics and JSON layout.
    pub version: WhiskerVersion,
    /// Reference activation trace loaded from JSON (`AT`), kept for the surprise oracle.
    pub activation_trace: Option<ActivationTraceJson>,
    nodes: Vec<NodeGene>,
    connections: Vec<ConnectionGene>,
    index: BTreeMap<NodeId, usize>,
    /// Sprite → hidden node made by the fullyHidden method. Not part of the genome: like
    /// Whisker's `_fullyHiddenPairs` it is empty in clones and loaded networks.
    fully_hidden_pairs: BTreeMap<String, NodeId>,
    /// What activation and growth look up at every step, derived from the genome on first use
    /// and dropped at every change to it (a network plays thousands of steps between changes).
    plan: PlanCell,
    /// Which input node each slot of the last feature layout loaded feeds.
    inputs_seen: InputsSeen,
}

/// The look-ups a [`Network`] derives from its genome.
#[derive(Debug)]
struct Plan {
    /// Per node index: its enabled incoming connections as (weight, source index, recurrent),
    /// in connection order.
    incoming: Vec<Vec<(f64, usize, bool)>>,
    /// Input node indices by sprite and feature (the first in node order).
    inputs: BTreeMap<String, BTreeMap<String, usize>>,
    /// Whether two input nodes share a sprite and feature (only in hand-made files): then
    /// inputs are loaded node by node, since `inputs` names only the first.
    duplicate_inputs: bool,
    /// Classification node index by event (the first in node order).
    classification: BTreeMap<String, usize>,
    /// Master's layers: each distinct depth in ascending order with its node indices.
    layers: Vec<(f64, Vec<usize>)>,
    /// The first classification node of each event, in node order: the softmax's terms.
    softmax: Vec<usize>,
}

impl Plan {
    fn of(n: &Network) -> Plan {
        let mut incoming = vec![Vec::new(); n.nodes.len()];
        for c in n.connections.iter().filter(|c| c.enabled) {
            if let Some(list) = n.index.get(&c.target).and_then(|&t| incoming.get_mut(t)) {
                list.push((c.weight, n.index.get(&c.source).copied().unwrap_or(0), c.recurrent));
            }
        }
        let mut inputs: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
        let mut classification = BTreeMap::new();
        let mut duplicate_inputs = false;
        for (i, node) in n.nodes.iter().enumerate() {
            match &node.kind {
                NodeKind::Input { sprite, feature } => {
                    let group = inputs.entry(sprite.clone()).or_default();
                    duplicate_inputs |= group.contains_key(feature);
                    group.entry(feature.clone()).or_insert(i);
                }
                NodeKind::Classification { event } => {
                    classification.entry(event.clone()).or_insert(i);
                }
                _ => {}
            }
        }
        let mut depths: Vec<f64> = n.nodes.iter().map(|n| n.depth).collect();
        depths.sort_by(f64::total_cmp);
        depths.dedup();
        let layers = depths
            .into_iter()
            .map(|depth| (depth, (0..n.nodes.len()).filter(|&i| n.nodes[i].depth == depth).collect()))
            .collect();
        let mut seen = std::collections::BTreeSet::new();
        let softmax = (0..n.nodes.len())
            .filter(|&i| matches!(&n.nodes[i].kind, NodeKind::Classification { event } if seen.insert(event.as_str())))
            .collect();
        Plan { incoming, inputs, duplicate_inputs, classification, layers, softmax }
    }

    /// For every slot of `layout`, the index of its input node, if any: one merged pass over
    /// both sorted name lists, each sprite looked up once.
    fn input_slots(&self, layout: &Layout) -> Vec<Option<usize>> {
        let mut out = Vec::with_capacity(layout.len());
        let mut current: Option<&str> = None;
        let mut nodes = None::<&BTreeMap<String, usize>>.into_iter().flatten().peekable();
        for (sprite, feature) in layout.names() {
            if current != Some(sprite) {
                current = Some(sprite);
                nodes = self.inputs.get(sprite).into_iter().flatten().peekable();
            }
            while nodes.next_if(|(k, _)| k.as_str() < feature).is_some() {}
            out.push(nodes.peek().filter(|(k, _)| k.as_str() == feature).map(|(_, i)| **i));
        }
        out
    }
}

/// A [`Plan`] once derived. Not part of the genome: networks compare equal whatever their
/// cells hold.
#[derive(Debug, Clone, Default)]
struct PlanCell(std::sync::OnceLock<std::sync::Arc<Plan>>);

impl PartialEq for PlanCell {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// The input slots of the last feature layout a network loaded, with the plan they were derived
/// from (held, so that a new plan cannot be mistaken for it). Not part of the genome.
#[derive(Debug, Clone, Default)]
struct InputsSeen(Option<(std::sync::Arc<Plan>, u64, Vec<Option<usize>>)>);

impl PartialEq for InputsSeen {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Network {
    /// Builds a network; fails on duplicate node ids or connections naming missing nodes.
    /// In master mode the recurrent flags are recomputed from the depths, as Whisker does.
    pub fn new(
        id: u64,
        activation_function: ActivationFunction,
        connection_method: ConnectionMethod,
        version: WhiskerVersion,
        nodes: Vec<NodeGene>,
        connections: Vec<ConnectionGene>,
    ) -> Result<Self, NeuroError> {
        let mut network = Self::empty(id, activation_function, connection_method, version);
        network.nodes = nodes;
        network.connections = connections;
        network.reindex()?;
        for c in &network.connections {
            if !network.index.contains_key(&c.source) || !network.index.contains_key(&c.target) {
                return Err(NeuroError::MissingNode { network: id, source_id: c.source, target: c.target });
            }
        }
        if version == WhiskerVersion::Master {
            for i in 0..network.connections.len() {
                let (s, t) = (network.connections[i].source, network.connections[i].target);
                network.connections[i].recurrent = network.depth_of(s) >= network.depth_of(t);
            }
        }
        network.plan = PlanCell::default();
        Ok(network)
    }

    /// A network without nodes or connections.
    pub fn empty(
        id: u64,
        activation_function: ActivationFunction,
        connection_method: ConnectionMethod,
        version: WhiskerVersion,
    ) -> Self {
        Self {
            id,
            activation_function,
            connection_method,
            target: None,
            version,
            activation_trace: None,
            nodes: Vec::new(),
            connections: Vec::new(),
            index: BTreeMap::new(),
            fully_hidden_pairs: BTreeMap::new(),
            plan: PlanCell::default(),
            inputs_seen: InputsSeen::default(),
        }
    }

    /// Sorts nodes (by depth in master, by type and id in v0.7, both stable) and connections (by
    /// innovation, stable), as Whisker's `generateNetwork`/`sortLayer`, then rebuilds the index.
    fn reindex(&mut self) -> Result<(), NeuroError> {
        self.plan = PlanCell::default();
        match self.version {
            WhiskerVersion::Master => self.nodes.sort_by(|a, b| a.depth.total_cmp(&b.depth)),
            WhiskerVersion::V07 => self.nodes.sort_by_key(|n| (n.kind.type_rank(), n.id)),
        }
        self.connections.sort_by_key(|c| c.innovation);
        self.index.clear();
        for (i, n) in self.nodes.iter().enumerate() {
            if self.index.insert(n.id, i).is_some() {
                return Err(NeuroError::DuplicateNode { network: self.id, id: n.id });
            }
        }
        Ok(())
    }

    /// Re-sorts after a structural change whose ids are known to be unique.
    pub(crate) fn restructure(&mut self) {
        // Ids are unique by construction at every call site; keep the first on a clash.
        if self.reindex().is_err() {
            let mut seen = std::collections::BTreeSet::new();
            self.nodes.retain(|n| seen.insert(n.id));
            let _ = self.reindex();
        }
    }

    /// The network's [`Plan`], derived now if the genome changed since.
    fn plan(&self) -> std::sync::Arc<Plan> {
        self.plan.0.get_or_init(|| std::sync::Arc::new(Plan::of(self))).clone()
    }

    /// The plan and the input node of every slot of `layout`: remembered from the last call
    /// when neither changed (hand them back with [`Network::keep_input_slots`]).
    fn take_input_slots(&mut self, layout: &Layout) -> (std::sync::Arc<Plan>, Vec<Option<usize>>) {
        let plan = self.plan();
        match self.inputs_seen.0.take() {
            Some((seen, id, slots)) if std::sync::Arc::ptr_eq(&seen, &plan) && id == layout.id() => (plan, slots),
            _ => {
                let slots = plan.input_slots(layout);
                (plan, slots)
            }
        }
    }

    fn keep_input_slots(&mut self, plan: std::sync::Arc<Plan>, layout: &Layout, slots: Vec<Option<usize>>) {
        self.inputs_seen.0 = Some((plan, layout.id(), slots));
    }

    /// All nodes, in Whisker's order (`getAllNodes`).
    pub fn nodes(&self) -> &[NodeGene] {
        &self.nodes
    }

    /// All connections, sorted by innovation.
    pub fn connections(&self) -> &[ConnectionGene] {
        &self.connections
    }

    /// Mutable connections (weights, enabled flags). Structural changes go through the NEAT
    /// operators so that innovations stay consistent.
    pub fn connections_mut(&mut self) -> &mut [ConnectionGene] {
        self.plan = PlanCell::default();
        &mut self.connections
    }

    /// The node with this id.
    pub fn node(&self, id: NodeId) -> Option<&NodeGene> {
        self.index.get(&id).and_then(|&i| self.nodes.get(i))
    }

    /// Whether a node with this id exists.
    pub fn has_node(&self, id: NodeId) -> bool {
        self.index.contains_key(&id)
    }

    fn depth_of(&self, id: NodeId) -> f64 {
        self.node(id).map_or(0.0, |n| n.depth)
    }

    /// A copy of the genome with fresh activation state and a new id (Whisker's
    /// `cloneStructure`); the fullyHidden pairs are not copied, as in Whisker.
    pub fn clone_structure(&self, id: u64) -> Self {
        let mut clone = self.clone();
        clone.id = id;
        clone.fully_hidden_pairs.clear();
        clone.activation_trace = None;
        clone.reset_state();
        clone
    }

    /// Clears all activation state (v0.7's `flushNodeValues`, called before each playthrough).
    pub fn reset_state(&mut self) {
        for n in &mut self.nodes {
            n.reset();
        }
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// The input node of a sprite feature.
    pub fn input_node(&self, sprite: &str, feature: &str) -> Option<&NodeGene> {
        let i = self.plan().inputs.get(sprite).and_then(|m| m.get(feature)).copied()?;
        self.nodes.get(i)
    }

    /// The classification node of an event (the first, if a file has several).
    pub fn classification_node(&self, event: &str) -> Option<&NodeGene> {
        let i = self.plan().classification.get(event).copied()?;
        self.nodes.get(i)
    }

    /// Event ids with a classification node, in node order.
    pub fn events(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for n in &self.nodes {
            if let NodeKind::Classification { event } = &n.kind {
                if !out.contains(&event.as_str()) {
                    out.push(event);
                }
            }
        }
        out
    }

    /// Loads inputs into the input nodes (`setUpInputs` without growth): all input flags are
    /// cleared, then set for the features present. Unknown features are ignored.
    pub fn set_up_inputs(&mut self, inputs: &Features) {
        let load = |n: &mut NodeGene, value: f64, version: WhiskerVersion| {
            if version == WhiskerVersion::V07 {
                n.last_activation_value = n.activation_value;
            }
            n.activation_count += 1;
            n.activated = true;
            n.node_value = value;
            n.activation_value = value;
        };
        for n in &mut self.nodes {
            if matches!(n.kind, NodeKind::Input { .. }) {
                n.activated = false;
            }
        }
        let version = self.version;
        if self.plan().duplicate_inputs {
            // Two nodes share a feature (only in hand-made files): load node by node.
            for n in &mut self.nodes {
                let value = match &n.kind {
                    NodeKind::Input { sprite, feature } => inputs.get(sprite, feature),
                    _ => None,
                };
                if let Some(value) = value {
                    load(n, value, version);
                }
            }
            return;
        }
        // Each present feature loads its node (every input node has its own feature).
        let (plan, slots) = self.take_input_slots(inputs.layout());
        for (node, &value) in slots.iter().zip(inputs.values()) {
            if let Some(n) = node.and_then(|i| self.nodes.get_mut(i)) {
                load(n, value, version);
            }
        }
        self.keep_input_slots(plan, inputs.layout(), slots);
    }

    /// Activates the network on `inputs`; `false` means a defect network (no path to an output).
    pub fn activate(&mut self, inputs: &Features) -> bool {
        match self.version {
            WhiskerVersion::Master => self.activate_layered(inputs),
            WhiskerVersion::V07 => self.activate_timesteps(inputs),
        }
    }

    fn activate_layered(&mut self, inputs: &Features) -> bool {
        let plan = self.plan();
        let weights = &plan.incoming;
        // Recurrent inputs read the previous call's activations: all summed before any changes.
        let contributions: Vec<f64> = weights
            .iter()
            .map(|list| {
                list.iter()
                    .filter(|&&(_, _, r)| r)
                    .fold(0.0, |acc, &(w, s, _)| acc + w * self.nodes.get(s).map_or(0.0, |n| n.activation_value))
            })
            .collect();
        for (n, value) in self.nodes.iter_mut().zip(contributions) {
            n.node_value = value;
            if n.kind != NodeKind::Bias {
                n.activation_value = 0.0;
            }
            if !n.kind.is_input_layer() {
                n.activated = false;
            }
        }
        for (depth, layer) in &plan.layers {
            let depth = *depth;
            if depth == 0.0 {
                self.set_up_inputs(inputs);
                continue;
            }
            for &i in layer {
                self.calculate_node_value(i, &weights[i]);
                if depth < 1.0 {
                    let n = &mut self.nodes[i];
                    n.activation_value =
                        if n.activated { hidden_master(n.activation_function, n.node_value) } else { 0.0 };
                }
            }
            if depth < 1.0 {
                continue;
            }
            if layer.iter().all(|&i| !self.nodes[i].activated) {
                return false;
            }
            let denominator: f64 = plan
                .softmax
                .iter()
                .filter_map(|&i| self.nodes.get(i))
                .filter(|n| n.activated)
                .map(|n| n.node_value.exp())
                .sum();
            for &i in layer {
                let n = &mut self.nodes[i];
                n.activation_value = match n.kind {
                    NodeKind::Classification { .. } => match n.activation_function {
                        ActivationFunction::Sigmoid => sigmoid(n.node_value, 1.0),
                        _ => n.node_value.exp() / denominator,
                    },
                    NodeKind::Regression { .. } if n.activated => match n.activation_function {
                        ActivationFunction::Relu => relu(n.node_value),
                        ActivationFunction::None => n.node_value,
                        ActivationFunction::Tanh => n.node_value.tanh(),
                        _ => sigmoid(n.node_value, 1.0),
                    },
                    _ => 0.0,
                };
            }
        }
        true
    }

    /// Whisker's `_calculateNodeValue`: adds the non-recurrent inputs; any enabled incoming
    /// connection (recurrent too) marks the node activated.
    fn calculate_node_value(&mut self, i: usize, incoming: &[(f64, usize, bool)]) {
        let mut sum = 0.0;
        for &(w, s, recurrent) in incoming {
            if !recurrent {
                sum += w * self.nodes.get(s).map_or(0.0, |n| n.activation_value);
            }
        }
        if let Some(n) = self.nodes.get_mut(i) {
            n.node_value += sum;
            n.activated |= !incoming.is_empty();
        }
    }

    fn activate_timesteps(&mut self, inputs: &Features) -> bool {
        self.set_up_inputs(inputs);
        let plan = self.plan();
        let weights = &plan.incoming;
        for n in &mut self.nodes {
            if n.kind.is_output() {
                n.activated = false;
            }
        }
        let mut count = 0;
        while self.outputs_off() {
            count += 1;
            if count == 20 {
                return false;
            }
            for (i, incoming) in weights.iter().enumerate() {
                if self.nodes[i].kind.is_input_layer() {
                    continue;
                }
                let mut value = 0.0;
                let mut activated = false;
                for &(w, s, _) in incoming {
                    let source = &self.nodes[s];
                    let is_input = matches!(source.kind, NodeKind::Input { .. });
                    if is_input && !source.activated {
                        continue;
                    }
                    value += w * source.activation_value;
                    activated |= source.activated;
                }
                let n = &mut self.nodes[i];
                n.node_value = value;
                n.activated = activated;
            }
            for n in &mut self.nodes {
                if matches!(n.kind, NodeKind::Input { .. }) || !n.activated {
                    continue;
                }
                n.last_activation_value = n.activation_value;
                n.activation_value = activate_v07(n);
                n.activation_count += 1;
            }
        }
        true
    }

    /// v0.7's `outputsOff`: every output node is off or has a zero input sum.
    fn outputs_off(&self) -> bool {
        self.nodes.iter().filter(|n| n.kind.is_output()).all(|n| !n.activated || n.node_value == 0.0)
    }

    /// Probabilities of the available events that have an activated classification node, in
    /// the order of `available` (Whisker's `NeuroevolutionUtil.softmaxEvents`). Master reads the
    /// softmax computed during activation (over all activated classification nodes); v0.7
    /// softmaxes the node values over the available events only.
    pub fn classification_probabilities<S: AsRef<str>>(&self, available: &[S]) -> Vec<(usize, f64)> {
        let nodes: Vec<(usize, &NodeGene)> = available
            .iter()
            .enumerate()
            .filter_map(|(i, e)| self.classification_node(e.as_ref()).map(|n| (i, n)))
            .filter(|(_, n)| n.activated)
            .collect();
        match self.version {
            WhiskerVersion::Master => nodes.iter().map(|&(i, n)| (i, n.activation_value)).collect(),
            WhiskerVersion::V07 => {
                let denominator: f64 = nodes.iter().map(|(_, n)| n.node_value.exp()).sum();
                nodes.iter().map(|&(i, n)| (i, n.node_value.exp() / denominator)).collect()
            }
        }
    }

    /// Index into `available` of the most probable event (the first on ties), as
    /// `NetworkExecutor.selectNextEvent`; `None` when no available event has an activated node
    /// (Whisker then waits).
    pub fn select_event<S: AsRef<str>>(&self, available: &[S]) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for (i, p) in self.classification_probabilities(available) {
            if best.is_none_or(|(_, b)| p > b) {
                best = Some((i, p));
            }
        }
        best.map(|(i, _)| i)
    }

    /// Whisker's uncertainty of a step: `1 - Σ p²` over the available events' probabilities;
    /// `None` when there are none.
    pub fn uncertainty<S: AsRef<str>>(&self, available: &[S]) -> Option<f64> {
        let probabilities = self.classification_probabilities(available);
        if probabilities.is_empty() {
            return None;
        }
        Some(1.0 - probabilities.iter().fold(0.0, |acc, (_, p)| acc + p * p))
    }

    /// Regression outputs of an event: `(parameter, value)` in node order (`getArgs`).
    pub fn regression_values(&self, event: &str) -> Vec<(&str, f64)> {
        self.nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Regression { event: e, parameter } if e == event => {
                    Some((parameter.as_str(), n.activation_value))
                }
                _ => None,
            })
            .collect()
    }

    /// The activations Whisker records in an activation trace: activated hidden nodes, in node
    /// order, rounded to three decimals (`ActivationTrace.update`).
    pub fn traced_activations(&self) -> Vec<(NodeId, f64)> {
        self.nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Hidden && n.activated)
            .map(|n| (n.id, round_trace(n.activation_value)))
            .collect()
    }

    /// Random inputs for every input node (`generateDummyInputs`, master: `nextDouble()` each,
    /// in sprite/feature order).
    pub fn dummy_inputs(&self, rng: &mut dyn crate::Random) -> Features {
        let entries: Vec<(String, String, f64)> =
            self.input_features().into_iter().map(|(s, f)| (s, f, rng.next_double())).collect();
        Features::from_entries(&entries)
    }

    /// `(sprite, feature)` of every input node, sorted.
    pub fn input_features(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = self
            .nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Input { sprite, feature } => Some((sprite.clone(), feature.clone())),
                _ => None,
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// Master's `HiddenNode.activate` for an activated node.
fn hidden_master(f: ActivationFunction, x: f64) -> f64 {
    match f {
        ActivationFunction::Sigmoid => sigmoid(x, 1.0),
        ActivationFunction::Tanh => x.tanh(),
        ActivationFunction::Relu => relu(x),
        _ => x,
    }
}

/// v0.7's `activate()` of an activated non-input node. v0.7 hidden and classification nodes
/// know no RELU (identity), and a regression node with SIGMOID or TANH keeps its old value.
fn activate_v07(n: &NodeGene) -> f64 {
    let x = n.node_value;
    match (&n.kind, n.activation_function) {
        (NodeKind::Bias, _) => 1.0,
        (NodeKind::Regression { .. }, ActivationFunction::Relu) => relu(x),
        (NodeKind::Regression { .. }, ActivationFunction::None) => x,
        (NodeKind::Regression { .. }, _) => n.activation_value,
        (_, ActivationFunction::Sigmoid) => sigmoid(x, 1.0),
        (_, ActivationFunction::Tanh) => x.tanh(),
        _ => x,
    }
}

#[cfg(test)]
mod tests;
