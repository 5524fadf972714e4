//! `NeatCrossover`: one child from two parents; the fitter parent (ties: the one with fewer
//! connections) provides the disjoint and excess genes; matching genes get the average weight
//! (with probability `weightAverageRate`, decided once per crossover) or a random parent's.
//! Master keeps the fitter parent's structure and enabled flags; v0.7 rebuilds the genome gene
//! by gene and disables a matching gene with probability 0.75 when either parent has it
//! disabled (then re-enables those one by one while the child is defect).

use std::collections::BTreeMap;

use crate::Random;
use crate::innovation::Innovations;
use crate::network::{ConnectionGene, Features, Network, NodeGene, WhiskerVersion};
use crate::params::NeatParams;
use crate::util::random_bool;

/// A crossover child of `(parent1, fitness1)` and `(parent2, fitness2)` with a new id.
pub fn crossover(
    parent1: (&Network, f64),
    parent2: (&Network, f64),
    params: &NeatParams,
    innovations: &mut Innovations,
    rng: &mut dyn Random,
) -> Network {
    let average = rng.next_double() < params.weight_average_rate;
    let id = innovations.new_network_id();
    match params.version {
        WhiskerVersion::Master => crossover_master(parent1, parent2, average, id, rng),
        WhiskerVersion::V07 => crossover_v07(parent1, parent2, average, id, rng),
    }
}

fn crossover_master(p1: (&Network, f64), p2: (&Network, f64), average: bool, id: u64, rng: &mut dyn Random) -> Network {
    let (fitter, other) = if p1.1 > p2.1 {
        (p1.0, p2.0)
    } else if p1.1 < p2.1 {
        (p2.0, p1.0)
    } else if p1.0.connections().len() < p2.0.connections().len() {
        (p1.0, p2.0)
    } else {
        (p2.0, p1.0)
    };
    let mut child = fitter.clone_structure(id);
    // Later duplicates win, as with Whisker's Map.
    let other_weights: BTreeMap<u64, f64> = other.connections().iter().map(|c| (c.innovation, c.weight)).collect();
    for c in child.connections_mut() {
        if let Some(&w) = other_weights.get(&c.innovation) {
            if average {
                c.weight = (c.weight + w) / 2.0;
            } else if random_bool(rng) {
                c.weight = w;
            }
        }
    }
    child
}

fn crossover_v07(p1: (&Network, f64), p2: (&Network, f64), average: bool, id: u64, rng: &mut dyn Random) -> Network {
    let (a, b) = (p1.0, p2.0);
    let (ca, cb) = (a.connections(), b.connections());
    let p1_better = p1.1 > p2.1 || (p1.1 == p2.1 && ca.len() < cb.len());
    let mut nodes: Vec<NodeGene> =
        a.nodes().iter().filter(|n| !matches!(n.kind, crate::NodeKind::Hidden)).cloned().collect();
    let mut connections: Vec<ConnectionGene> = Vec::new();
    let mut disabled: Vec<u64> = Vec::new();
    let (mut i1, mut i2) = (0, 0);
    while i1 < ca.len() || i2 < cb.len() {
        let mut average_weight = None;
        let mut disable = false;
        let (gene, owner, skip) = if i1 >= ca.len() {
            i2 += 1;
            (&cb[i2 - 1], b, p1_better)
        } else if i2 >= cb.len() {
            i1 += 1;
            (&ca[i1 - 1], a, !p1_better)
        } else if ca[i1].innovation == cb[i2].innovation {
            let (g1, g2) = (&ca[i1], &cb[i2]);
            let pick = if random_bool(rng) { (g1, a) } else { (g2, b) };
            if average {
                average_weight = Some((g1.weight + g2.weight) / 2.0);
            }
            if (!g1.enabled || !g2.enabled) && rng.next_double() < 0.75 {
                disable = true;
            }
            i1 += 1;
            i2 += 1;
            (pick.0, pick.1, false)
        } else if ca[i1].innovation < cb[i2].innovation {
            i1 += 1;
            (&ca[i1 - 1], a, !p1_better)
        } else {
            i2 += 1;
            (&cb[i2 - 1], b, p1_better)
        };
        if skip {
            continue;
        }
        for id in [gene.source, gene.target] {
            if !nodes.iter().any(|n| n.id == id) {
                if let Some(n) = owner.node(id) {
                    nodes.push(n.clone());
                }
            }
        }
        let mut new = gene.clone();
        new.enabled = !disable;
        // Whisker tests `if (avgWeight)`, so an average of exactly 0 is not applied.
        if let Some(w) = average_weight.filter(|w| *w != 0.0) {
            new.weight = w;
        }
        if disable {
            disabled.push(new.innovation);
        }
        connections.push(new);
    }
    for n in &mut nodes {
        n.reset();
    }
    let mut child = Network::empty(id, a.activation_function, a.connection_method, a.version);
    child.push_nodes(nodes);
    for c in connections {
        child.push_connection(c);
    }
    // Repair a defect child with v0.7's dummy inputs (all 1).
    let ones: Vec<(String, String, f64)> = child.input_features().into_iter().map(|(s, f)| (s, f, 1.0)).collect();
    let dummy = Features::from_entries(&ones);
    let mut next = disabled.into_iter();
    while !child.activate(&dummy) {
        let Some(innovation) = next.next() else { break };
        if let Some(c) = child.connections_mut().iter_mut().find(|c| c.innovation == innovation && !c.enabled) {
            c.enabled = true;
        }
    }
    child.reset_state();
    child
}
