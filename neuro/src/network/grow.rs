//! Structural changes of a network: growing input and output nodes during a playthrough
//! (`updateInputNodes`, `updateOutputNodes`), the input connection methods, and the two NEAT
//! structural mutations' bookkeeping (`addConnection`, `addNodeSplitConnection`).
//!
//! Differences from Whisker: the MouseMoveToEvent coordinate update of `updateOutputNodes` is
//! left to the caller (events are opaque strings here); splitting a connection whose recorded
//! split node already exists in the network is refused instead of adding a duplicate node; a
//! network without a bias node or without sprites gets no bias / sprite connections instead of
//! crashing.

use super::{ConnectionGene, ConnectionMethod, Features, Innovation, Network, NodeGene, NodeId, NodeKind};
use crate::Random;
use crate::innovation::Innovations;
use crate::util::{pick_index, uniform};

/// An event offered by the program: its identifier and the names of its search parameters.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct EventSpec {
    /// Event identifier, e.g. `KeyPressEvent-right arrow`.
    pub id: String,
    /// Parameter names, e.g. `["Steps"]`; empty for parameterless events.
    pub parameters: Vec<String>,
}

impl EventSpec {
    /// Convenience constructor.
    pub fn new(id: &str, parameters: &[&str]) -> Self {
        Self { id: id.to_owned(), parameters: parameters.iter().map(|p| (*p).to_owned()).collect() }
    }
}

impl Network {
    /// Adds input nodes for features not seen before (unconnected, as in Whisker); returns
    /// whether anything was added.
    pub fn update_input_nodes(&mut self, features: &Features, innovations: &mut Innovations) -> bool {
        let (plan, slots) = self.take_input_slots(features.layout());
        let mut added = Vec::new();
        for ((sprite, feature), node) in features.layout().names().zip(&slots) {
            if node.is_none() {
                let id = innovations.non_hidden_node_id(&format!("I:{sprite}-{feature}"));
                added.push(NodeGene::input(id, sprite, feature));
            }
        }
        self.keep_input_slots(plan, features.layout(), slots);
        let updated = !added.is_empty();
        self.push_nodes(added);
        updated
    }

    /// Adds classification and regression nodes for events not seen before and connects each
    /// with the network's connection method; returns whether anything was added.
    pub fn update_output_nodes(
        &mut self,
        events: &[EventSpec],
        input_rate: f64,
        innovations: &mut Innovations,
        rng: &mut dyn Random,
    ) -> bool {
        let mut updated = false;
        for event in events {
            if self.classification_node(&event.id).is_none() {
                updated = true;
                let id = innovations.non_hidden_node_id(&format!("C:{}", event.id));
                self.push_nodes(vec![NodeGene::classification(id, &event.id)]);
                self.connect_nodes_to_input_layer(&[id], self.connection_method, input_rate, innovations, rng);
            }
            let has_regression =
                self.nodes.iter().any(|n| matches!(&n.kind, NodeKind::Regression { event: e, .. } if *e == event.id));
            if !has_regression {
                for parameter in &event.parameters {
                    updated = true;
                    let id = innovations.non_hidden_node_id(&format!("R:{}-{parameter}", event.id));
                    self.push_nodes(vec![NodeGene::regression(id, &event.id, parameter)]);
                    self.connect_nodes_to_input_layer(&[id], self.connection_method, input_rate, innovations, rng);
                }
            }
        }
        updated
    }

    /// Appends a gene as it is (innovation and recurrent flag kept), if both nodes exist.
    pub(crate) fn push_connection(&mut self, gene: ConnectionGene) {
        if self.has_node(gene.source) && self.has_node(gene.target) {
            self.connections.push(gene);
            self.restructure();
        }
    }

    pub(crate) fn push_nodes(&mut self, nodes: Vec<NodeGene>) {
        if nodes.is_empty() {
            return;
        }
        self.nodes.extend(nodes);
        self.restructure();
    }

    /// Sprites of the input nodes in order of first appearance (Whisker's `inputNodes` map).
    fn sprites(&self) -> Vec<(String, Vec<NodeId>)> {
        let mut out: Vec<(String, Vec<NodeId>)> = Vec::new();
        for n in &self.nodes {
            if let NodeKind::Input { sprite, .. } = &n.kind {
                match out.iter_mut().find(|(s, _)| s == sprite) {
                    Some((_, ids)) => ids.push(n.id),
                    None => out.push((sprite.clone(), vec![n.id])),
                }
            }
        }
        out
    }

    fn bias_id(&self) -> Option<NodeId> {
        self.nodes.iter().find(|n| n.kind == NodeKind::Bias).map(|n| n.id)
    }

    /// Connects `targets` to the input layer (`connectNodesToInputLayer`); weights are uniform
    /// in `[-1, 1)`.
    pub fn connect_nodes_to_input_layer(
        &mut self,
        targets: &[NodeId],
        method: ConnectionMethod,
        input_rate: f64,
        innovations: &mut Innovations,
        rng: &mut dyn Random,
    ) {
        match method {
            ConnectionMethod::Fully => {
                let sources: Vec<NodeId> = self.nodes.iter().filter(|n| n.depth == 0.0).map(|n| n.id).collect();
                for s in sources {
                    for &t in targets {
                        let w = uniform(rng, -1.0, 1.0);
                        self.add_connection(s, t, w, innovations);
                    }
                }
            }
            ConnectionMethod::FullyHidden => self.connect_fully_hidden(targets, innovations, rng),
            ConnectionMethod::Sparse => {
                if let Some(bias) = self.bias_id() {
                    for &t in targets {
                        let w = uniform(rng, -1.0, 1.0);
                        self.add_connection(bias, t, w, innovations);
                    }
                }
                let mut sprites = self.sprites();
                while let Some(i) = pick_index(rng, sprites.len()) {
                    let (_, inputs) = sprites.remove(i);
                    for s in inputs {
                        for &t in targets {
                            let w = uniform(rng, -1.0, 1.0);
                            self.add_connection(s, t, w, innovations);
                        }
                    }
                    if rng.next_double() >= input_rate || sprites.is_empty() {
                        break;
                    }
                }
            }
        }
    }

    fn connect_fully_hidden(&mut self, targets: &[NodeId], innovations: &mut Innovations, rng: &mut dyn Random) {
        let min_depth = targets.iter().filter_map(|&t| self.node(t)).map(|n| n.depth).fold(f64::INFINITY, f64::min);
        for (sprite, inputs) in self.sprites() {
            let hidden = match self.fully_hidden_pairs.get(&sprite) {
                Some(&h) if self.has_node(h) => h,
                _ => {
                    let h = innovations.new_hidden_node_id();
                    self.push_nodes(vec![NodeGene::hidden(h, min_depth / 2.0, self.activation_function)]);
                    self.fully_hidden_pairs.insert(sprite.clone(), h);
                    h
                }
            };
            let connected: Vec<NodeId> =
                self.connections.iter().filter(|c| c.enabled && c.target == hidden).map(|c| c.source).collect();
            for s in inputs {
                if !connected.contains(&s) {
                    let w = uniform(rng, -1.0, 1.0);
                    self.add_connection(s, hidden, w, innovations);
                }
            }
            for &t in targets {
                let w = uniform(rng, -1.0, 1.0);
                self.add_connection(hidden, t, w, innovations);
            }
        }
        if let Some(bias) = self.bias_id() {
            for &t in targets {
                let w = uniform(rng, -1.0, 1.0);
                self.add_connection(bias, t, w, innovations);
            }
        }
    }

    /// Adds an enabled connection with the population-wide innovation number of its
    /// `(source, target, recurrent)` triple (`NeatChromosome.addConnection`); recurrent means
    /// `source.depth >= target.depth`.
    pub fn add_connection(
        &mut self,
        source: NodeId,
        target: NodeId,
        weight: f64,
        innovations: &mut Innovations,
    ) -> Innovation {
        let recurrent = self.depth_of(source) >= self.depth_of(target);
        let innovation = innovations.connection(source, target, recurrent);
        self.connections.push(ConnectionGene { source, target, weight, enabled: true, innovation, recurrent });
        self.restructure();
        innovation
    }

    /// Splits the connection at `index` with a new hidden node (`addNodeSplitConnection`): the
    /// old connection is disabled, the new node sits halfway between the depths, the incoming
    /// connection has weight 1 and the outgoing one the old weight. Returns whether it split.
    pub fn add_node_split_connection(&mut self, index: usize, innovations: &mut Innovations) -> bool {
        let Some(split) = self.connections.get(index).cloned() else { return false };
        let (source, target) = (split.source, split.target);
        let depth = (self.depth_of(source) + self.depth_of(target)) / 2.0;
        let created = innovations.split(source, target, split.innovation);
        if self.has_node(created.node) {
            return false;
        }
        if let Some(c) = self.connections.get_mut(index) {
            c.enabled = false;
        }
        self.nodes.push(NodeGene::hidden(created.node, depth, self.activation_function));
        self.restructure();
        let rec1 = self.depth_of(source) >= depth;
        let rec2 = depth >= self.depth_of(target);
        self.connections.push(ConnectionGene {
            source,
            target: created.node,
            weight: 1.0,
            enabled: true,
            innovation: created.first,
            recurrent: rec1,
        });
        self.connections.push(ConnectionGene {
            source: created.node,
            target,
            weight: split.weight,
            enabled: true,
            innovation: created.second,
            recurrent: rec2,
        });
        self.restructure();
        true
    }
}
