//! `NeatMutation`: structural (add node, add connection) or non-structural (toggle, re-enable,
//! weights) mutation of a copy of the parent; population champions either gain a connection or
//! get their weights perturbed.

use crate::Random;
use crate::innovation::Innovations;
use crate::network::{Network, NodeKind, WhiskerVersion};
use crate::params::NeatParams;
use crate::util::{pick_index, random_bool, uniform};

/// Bound on `apply`'s "until something mutated" loop (Whisker loops forever when every
/// probability is zero).
const MAX_ROUNDS: usize = 1000;

/// Returns a mutated copy of `parent` with a new id (`NeatMutation.apply`).
pub fn mutate(
    parent: &Network,
    is_population_champion: bool,
    params: &NeatParams,
    innovations: &mut Innovations,
    rng: &mut dyn Random,
) -> Network {
    let mut mutant = parent.clone_structure(innovations.new_network_id());
    let power = params.perturbation_power;
    for _ in 0..MAX_ROUNDS {
        let mut mutated = false;
        if is_population_champion {
            mutated = true;
            if rng.next_double() <= params.population_champion_connection_mutation {
                mutate_add_connection(&mut mutant, params, innovations, rng);
            } else {
                mutate_weight(&mut mutant, power, rng);
            }
        } else if rng.next_double() < params.mutation_add_node {
            mutated = true;
            mutate_add_node(&mut mutant, innovations, rng);
        } else if rng.next_double() < params.mutation_add_connection {
            mutated = true;
            mutate_add_connection(&mut mutant, params, innovations, rng);
        } else {
            let v07 = params.version == WhiskerVersion::V07;
            if v07 && rng.next_double() < params.mutate_weights {
                mutated = true;
                mutate_weight(&mut mutant, power, rng);
            }
            if rng.next_double() < params.mutate_toggle_enable_connection {
                mutated = true;
                mutate_toggle_enable_connection(&mut mutant, params.toggle_enable_connection_times, v07, rng);
            }
            if rng.next_double() < params.mutate_enable_connection {
                mutated = true;
                mutate_connection_reenable(&mut mutant);
            }
            if !v07 && rng.next_double() < params.mutate_weights {
                mutated = true;
                mutate_weight(&mut mutant, power, rng);
            }
        }
        if mutated {
            break;
        }
    }
    mutant
}

/// Tries up to `addConnectionTries` random node pairs for a new connection; recurrent with
/// probability `recurrentConnection` (a quarter of those self-loops). The weight is
/// `±nextDouble() * perturbationPower`. Returns whether a connection was added.
pub fn mutate_add_connection(
    network: &mut Network,
    params: &NeatParams,
    innovations: &mut Innovations,
    rng: &mut dyn Random,
) -> bool {
    let all: Vec<u32> = network.nodes().iter().map(|n| n.id).collect();
    let targets: Vec<u32> = network.nodes().iter().filter(|n| !n.kind.is_input_layer()).map(|n| n.id).collect();
    let depth = |id: u32| network.node(id).map_or(0.0, |n| n.depth);
    let recurrent = rng.next_double() < params.recurrent_connection;
    let mut found = None;
    let mut rounds = 0;
    while rounds < params.add_connection_tries {
        let pair = if recurrent {
            let self_loop = rng.next_double() < 0.25;
            let Some(a) = pick_index(rng, targets.len()) else { return false };
            let b = if self_loop { Some(a) } else { pick_index(rng, targets.len()) };
            b.map(|b| (targets[a], targets[b]))
        } else {
            let a = pick_index(rng, all.len());
            let b = pick_index(rng, targets.len());
            a.zip(b).map(|(a, b)| (all[a], targets[b]))
        };
        let Some((n1, n2)) = pair else { return false };
        let skip = (!recurrent && n1 == n2)
            || network.connections().iter().any(|c| c.source == n1 && c.target == n2 && c.recurrent == recurrent);
        if !skip && (depth(n1) >= depth(n2)) == recurrent {
            found = Some((n1, n2));
            break;
        }
        rounds += 1;
    }
    let Some((n1, n2)) = found else { return false };
    let sign = if random_bool(rng) { 1.0 } else { -1.0 };
    let weight = sign * rng.next_double() * params.perturbation_power;
    network.add_connection(n1, n2, weight, innovations);
    true
}

/// Splits a random enabled connection that does not leave the bias (20 tries).
pub fn mutate_add_node(network: &mut Network, innovations: &mut Innovations, rng: &mut dyn Random) -> bool {
    for _ in 0..20 {
        let Some(i) = pick_index(rng, network.connections().len()) else { return false };
        let c = &network.connections()[i];
        let from_bias = network.node(c.source).is_some_and(|n| n.kind == NodeKind::Bias);
        if c.enabled && !from_bias {
            return network.add_node_split_connection(i, innovations);
        }
    }
    false
}

/// Perturbs every weight: with probability 0.1 a new uniform weight in `[-power, power)`,
/// otherwise a gaussian around the old weight with standard deviation `power`.
pub fn mutate_weight(network: &mut Network, power: f64, rng: &mut dyn Random) {
    for c in network.connections_mut() {
        c.weight = if rng.next_double() < 0.1 { uniform(rng, -power, power) } else { rng.gaussian(c.weight, power) };
    }
}

/// Flips the enabled flag of `times + 1` random connections (Whisker's loop runs `0..=times`).
/// With `guard` (v0.7) a connection is only disabled if its source keeps another enabled
/// outgoing connection, or if it is recurrent.
pub fn mutate_toggle_enable_connection(network: &mut Network, times: u32, guard: bool, rng: &mut dyn Random) {
    for _ in 0..=times {
        let Some(i) = pick_index(rng, network.connections().len()) else { return };
        let chosen = network.connections()[i].clone();
        let allowed = !chosen.enabled
            || !guard
            || chosen.recurrent
            || network
                .connections()
                .iter()
                .any(|o| o.source == chosen.source && o.enabled && o.innovation != chosen.innovation);
        if allowed {
            network.connections_mut()[i].enabled = !chosen.enabled;
        }
    }
}

/// Enables the first disabled connection.
pub fn mutate_connection_reenable(network: &mut Network) {
    if let Some(c) = network.connections_mut().iter_mut().find(|c| !c.enabled) {
        c.enabled = true;
    }
}
