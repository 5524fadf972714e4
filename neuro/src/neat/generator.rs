//! Initial networks (`NeatChromosomeGenerator.get`): one input node per feature, a bias, one
//! classification node per event and one regression node per event parameter, numbered from 0
//! in that order, then the outputs connected with the configured method.

use crate::Random;
use crate::innovation::Innovations;
use crate::network::{EventSpec, Features, Network, NodeGene, NodeId, WhiskerVersion};
use crate::params::NeatParams;

/// Generates one initial network. The generator's ids are registered in `innovations` so that
/// later growth agrees with them (Whisker's generator numbers them without registering).
pub fn generate_network(
    features: &Features,
    events: &[EventSpec],
    params: &NeatParams,
    innovations: &mut Innovations,
    rng: &mut dyn Random,
) -> Network {
    let mut nodes = Vec::new();
    let mut next: NodeId = 0;
    let add = |node: NodeGene, innovations: &mut Innovations, nodes: &mut Vec<NodeGene>| {
        innovations.register_node_id(&node.identifier(), node.id);
        nodes.push(node);
    };
    for (sprite, feature) in features.layout().names() {
        add(NodeGene::input(next, sprite, feature), innovations, &mut nodes);
        next += 1;
    }
    innovations.observe_node(next);
    nodes.push(NodeGene::bias(next));
    next += 1;
    for event in events {
        add(NodeGene::classification(next, &event.id), innovations, &mut nodes);
        next += 1;
    }
    for event in events {
        for parameter in &event.parameters {
            add(NodeGene::regression(next, &event.id, parameter), innovations, &mut nodes);
            next += 1;
        }
    }
    let outputs: Vec<NodeId> = nodes.iter().filter(|n| n.kind.is_output()).map(|n| n.id).collect();
    let id = innovations.new_network_id();
    let mut network = Network::empty(id, params.activation_function, params.connection_method, params.version);
    network.push_nodes(nodes);
    network.connect_nodes_to_input_layer(&outputs, params.connection_method, params.input_rate, innovations, rng);
    if params.version == WhiskerVersion::V07 {
        // v0.7 connects with weight 0 and then randomises all weights with power 1.
        for c in network.connections_mut() {
            c.weight = 0.0;
        }
        super::mutation::mutate_weight(&mut network, 1.0, rng);
    }
    network
}
