//! The population-wide registries Whisker keeps in static fields of `NeatPopulation`
//! (`nodeToId`, `highestNodeId`, `innovations`, the innovation counter) and
//! `NetworkChromosome._uIDCounter`, as one explicit value the population owns.
//!
//! Differences from Whisker: lookups use ordered maps instead of a linear search of a list (same
//! answers); [`Innovations::observe`] also moves the innovation counter past a loaded network's
//! innovations so new genes never reuse a number Whisker's loader left behind.

use std::collections::BTreeMap;

use crate::network::{Innovation, Network, NodeId};

/// Node ids, innovation numbers and network ids shared by all networks of a population.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Innovations {
    node_ids: BTreeMap<String, NodeId>,
    highest_node_id: NodeId,
    connections: BTreeMap<(NodeId, NodeId, bool), Innovation>,
    splits: BTreeMap<(NodeId, NodeId, Innovation), SplitInnovation>,
    next_innovation: Innovation,
    next_network_id: u64,
}

/// What an add-node mutation created the first time it split a given connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitInnovation {
    /// Innovation of the connection into the new node.
    pub first: Innovation,
    /// Innovation of the connection out of the new node.
    pub second: Innovation,
    /// Id of the new hidden node.
    pub node: NodeId,
}

impl Innovations {
    /// Empty registries.
    pub fn new() -> Self {
        Self::default()
    }

    /// The highest node id seen so far (`NeatPopulation.highestNodeId`).
    pub fn highest_node_id(&self) -> NodeId {
        self.highest_node_id
    }

    /// Records that a node with this id exists (Whisker's `NodeGene` constructor does this).
    pub fn observe_node(&mut self, id: NodeId) {
        self.highest_node_id = self.highest_node_id.max(id);
    }

    /// Records every node, innovation and the id of an existing (e.g. loaded) network.
    pub fn observe(&mut self, network: &Network) {
        for node in network.nodes() {
            self.observe_node(node.id);
        }
        if let Some(max) = network.connections().iter().map(|c| c.innovation).max() {
            self.next_innovation = self.next_innovation.max(max.saturating_add(1));
        }
        self.next_network_id = self.next_network_id.max(network.id.saturating_add(1));
    }

    /// Id of a non-hidden node by its identifier (`getNonHiddenNodeId`): the same feature or
    /// event gets the same id in every network.
    pub fn non_hidden_node_id(&mut self, identifier: &str) -> NodeId {
        if let Some(&id) = self.node_ids.get(identifier) {
            return id;
        }
        let id = self.highest_node_id.saturating_add(1);
        self.node_ids.insert(identifier.to_owned(), id);
        self.highest_node_id = id;
        id
    }

    /// Registers an id the generator assigned itself, so later growth agrees with it.
    pub fn register_node_id(&mut self, identifier: &str, id: NodeId) {
        self.node_ids.entry(identifier.to_owned()).or_insert(id);
        self.observe_node(id);
    }

    /// Number of identifiers in the node-id map (`nodeToId.size`).
    pub fn node_id_count(&self) -> usize {
        self.node_ids.len()
    }

    /// A fresh hidden-node id (`++highestNodeId`).
    pub fn new_hidden_node_id(&mut self) -> NodeId {
        self.highest_node_id = self.highest_node_id.saturating_add(1);
        self.highest_node_id
    }

    /// The next unused innovation number (`getAvailableInnovationNumber`).
    pub fn new_innovation(&mut self) -> Innovation {
        let n = self.next_innovation;
        self.next_innovation += 1;
        n
    }

    /// The innovation of an add-connection between two nodes, new if never seen.
    pub fn connection(&mut self, source: NodeId, target: NodeId, recurrent: bool) -> Innovation {
        if let Some(&n) = self.connections.get(&(source, target, recurrent)) {
            return n;
        }
        let n = self.new_innovation();
        self.connections.insert((source, target, recurrent), n);
        n
    }

    /// The innovation of splitting connection `split` (from `source` to `target`), new if never
    /// seen.
    pub fn split(&mut self, source: NodeId, target: NodeId, split: Innovation) -> SplitInnovation {
        if let Some(&s) = self.splits.get(&(source, target, split)) {
            return s;
        }
        let node = self.new_hidden_node_id();
        let first = self.new_innovation();
        let second = self.new_innovation();
        let s = SplitInnovation { first, second, node };
        self.splits.insert((source, target, split), s);
        s
    }

    /// A fresh network id (`NetworkChromosome._uIDCounter++`).
    pub fn new_network_id(&mut self) -> u64 {
        let id = self.next_network_id;
        self.next_network_id += 1;
        id
    }
}
