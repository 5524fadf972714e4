//! NEAT: generator, operators, distance, species, population.

mod common;

use clowder_neuro::neat::{compatibility_distance, crossover, generate_network, mutate, mutation};
use clowder_neuro::{
    ActivationFunction, ConnectionGene, ConnectionMethod, EventSpec, Features, Innovations, NeatParams, NeatPopulation,
    Network, NodeGene, NodeKind, Species, WhiskerVersion,
};
use common::TestRng;

fn inputs() -> Features {
    Features::from_entries(&input_entries())
}

fn input_entries() -> Vec<(&'static str, &'static str, f64)> {
    vec![("Sprite1", "X-Position", 1.0), ("Sprite1", "Y-Position", 1.0), ("Sprite2", "X-Position", 1.0)]
}

fn events() -> Vec<EventSpec> {
    vec![
        EventSpec::new("WaitEvent", &["Duration"]),
        EventSpec::new("KeyPressEvent-left arrow", &["Steps"]),
        EventSpec::new("MouseMoveEvent", &["X", "Y"]),
    ]
}

fn params(method: ConnectionMethod) -> NeatParams {
    NeatParams { connection_method: method, activation_function: ActivationFunction::Sigmoid, ..NeatParams::default() }
}

fn two_node_network(connections: Vec<ConnectionGene>) -> Network {
    let nodes = vec![
        NodeGene::input(1, "Sprite1", "X-Position"),
        NodeGene::input(2, "Sprite2", "Y-Position"),
        NodeGene::classification(3, "WaitEvent"),
    ];
    Network::new(0, ActivationFunction::Relu, ConnectionMethod::Fully, WhiskerVersion::Master, nodes, connections)
        .unwrap()
}

fn gene(source: u32, target: u32, weight: f64, innovation: u64) -> ConnectionGene {
    ConnectionGene { source, target, weight, enabled: true, innovation, recurrent: false }
}

/// `NeatPopulation.test.ts`: compatibility distances with coefficients 1, 1, 0.5.
#[test]
fn compatibility_distances_from_whisker_tests() {
    let p = NeatParams {
        disjoint_coefficient: 1.0,
        excess_coefficient: 1.0,
        weight_coefficient: 0.5,
        ..Default::default()
    };
    let a = two_node_network(vec![gene(1, 3, 1.0, 0)]);
    let b = two_node_network(vec![gene(2, 3, 0.5, 1)]);
    // "with disjoint connections" and "... switched": 1.
    assert_eq!(compatibility_distance(&a, &b, &p), 1.0);
    assert_eq!(compatibility_distance(&b, &a, &p), 1.0);
    // "same connections but different weights": 0.5 * 0.5 / 1.
    let c = two_node_network(vec![gene(1, 3, 0.5, 0)]);
    assert_eq!(compatibility_distance(&a, &c, &p), 0.25);
    // "of clones": 0; "with excess connections": 1 / |larger genome|.
    let mut rng = TestRng(1);
    let mut inn = Innovations::new();
    let g = generate_network(&inputs(), &events(), &params(ConnectionMethod::Fully), &mut inn, &mut rng);
    let clone = g.clone_structure(99);
    assert_eq!(compatibility_distance(&g, &clone, &p), 0.0);
    let mut bigger = clone.clone();
    bigger.add_connection(0, 5, 1.0, &mut inn);
    let expected = 1.0 / bigger.connections().len() as f64;
    assert_eq!(compatibility_distance(&g, &bigger, &p), expected);
    // v0.7 does not normalise.
    let v07 = NeatParams { version: WhiskerVersion::V07, ..p };
    assert_eq!(compatibility_distance(&g, &bigger, &v07), 1.0);
}

/// `Species.test.ts`: shared fitness `fitness * ageSignificance / n`; stagnant species ×0.01;
/// non-positive fitness becomes 0.0001 before sharing.
#[test]
fn shared_fitness() {
    let p = NeatParams { penalizing_age: 10, age_significance: 1.0, ..Default::default() };
    let mut s = Species::new(0, false);
    s.members = (0..10).collect();
    assert_eq!(s.shared_fitness(10.0, &p), 1.0);
    let shared = s.shared_fitness(-1.0, &p);
    assert!(shared > 0.0 && shared < 1.0);
    s.age = 10;
    s.age_of_last_improvement = 1;
    assert!(s.is_stagnant(&p));
    assert_eq!(s.shared_fitness(10.0, &p), 10.0 * 0.01 / 10.0);
    // Parents: floor(0.2 * n) + 1.
    assert_eq!(Species::number_of_parents(10, &p), 3);
    assert_eq!(Species::number_of_parents(2, &p), 1);
    assert_eq!(Species::number_of_parents(2, &NeatParams { version: WhiskerVersion::V07, ..p }), 2);
    // Offspring: integer parts plus carried fractions.
    let left = s.offspring_neat(&[1.5, 0.7, 0.9], 0.0);
    assert_eq!(s.expected_offspring, 3.0);
    assert!((left - 0.1).abs() < 1e-12);
}

#[test]
fn generator_fully_and_fully_hidden() {
    let mut rng = TestRng(7);
    let mut inn = Innovations::new();
    let n = generate_network(&inputs(), &events(), &params(ConnectionMethod::Fully), &mut inn, &mut rng);
    // 3 inputs + bias + 3 classification + 4 regression nodes, every input to every output.
    assert_eq!(n.num_nodes(), 11);
    assert_eq!(n.connections().len(), 4 * 7);
    let m = generate_network(&inputs(), &events(), &params(ConnectionMethod::Fully), &mut inn, &mut rng);
    let innovations = |n: &Network| n.connections().iter().map(|c| c.innovation).collect::<Vec<_>>();
    assert_eq!(innovations(&n), innovations(&m));
    assert_ne!(n.id, m.id);

    let mut inn = Innovations::new();
    let h = generate_network(&inputs(), &events(), &params(ConnectionMethod::FullyHidden), &mut inn, &mut rng);
    let hidden: Vec<&NodeGene> = h.nodes().iter().filter(|n| n.kind == NodeKind::Hidden).collect();
    assert_eq!(hidden.len(), 2);
    assert!(hidden.iter().all(|n| n.depth == 0.5));
    // inputs→hidden 3, hidden→outputs 2·7, bias→outputs 7.
    assert_eq!(h.connections().len(), 3 + 14 + 7);
    let mut h = h;
    assert!(h.activate(&inputs()));
    assert_eq!(h.traced_activations().len(), 2);
}

/// `NeatChromosome.test.ts` "updateOutputNodes"/"novel inputs": the same new event or feature
/// gets the same node id in every network, different ones get different ids.
#[test]
fn growing_shares_ids() {
    let mut rng = TestRng(3);
    let mut inn = Innovations::new();
    let p = params(ConnectionMethod::FullyHidden);
    let waits = [EventSpec::new("WaitEvent", &["Duration"])];
    let mut a = generate_network(&inputs(), &waits, &p, &mut inn, &mut rng);
    let mut b = generate_network(&inputs(), &waits, &p, &mut inn, &mut rng);
    let mut c = generate_network(&inputs(), &waits, &p, &mut inn, &mut rng);
    let before = (a.num_nodes(), a.connections().len(), inn.node_id_count());
    let mouse = [EventSpec::new("MouseMoveEvent", &["X", "Y"])];
    assert!(a.update_output_nodes(&mouse, 0.3, &mut inn, &mut rng));
    assert!(b.update_output_nodes(&mouse, 0.3, &mut inn, &mut rng));
    assert!(c.update_output_nodes(&[EventSpec::new("KeyPressEvent-up arrow", &[])], 0.3, &mut inn, &mut rng));
    assert!(!a.update_output_nodes(&mouse, 0.3, &mut inn, &mut rng));
    assert_eq!(inn.node_id_count(), before.2 + 4);
    assert!(a.num_nodes() > before.0 && a.connections().len() > before.1);
    let id = |n: &Network, e: &str| n.classification_node(e).unwrap().id;
    assert_eq!(id(&a, "MouseMoveEvent"), id(&b, "MouseMoveEvent"));
    assert_ne!(id(&a, "MouseMoveEvent"), id(&c, "KeyPressEvent-up arrow"));
    // Clones forget the fullyHidden pairs, as in Whisker: growing a clone adds hidden nodes.
    let hidden = |n: &Network| n.nodes().iter().filter(|x| x.kind == NodeKind::Hidden).count();
    let mut clone = a.clone_structure(500);
    clone.update_output_nodes(&[EventSpec::new("ClickStageEvent", &[])], 0.3, &mut inn, &mut rng);
    assert_eq!(hidden(&clone), hidden(&a) + 2);
    // New input features: unconnected input nodes with shared ids.
    let mut entries = input_entries();
    entries.push(("Sprite3", "Size", 2.0));
    let f = Features::from_entries(&entries);
    assert!(a.update_input_nodes(&f, &mut inn));
    assert!(b.update_input_nodes(&f, &mut inn));
    assert_eq!(a.input_node("Sprite3", "Size").unwrap().id, b.input_node("Sprite3", "Size").unwrap().id);
    assert!(!a.update_input_nodes(&f, &mut inn));
    assert!(a.activate(&f));
}

#[test]
fn structural_mutations_share_innovations() {
    let mut rng = TestRng(11);
    let mut inn = Innovations::new();
    let p = params(ConnectionMethod::Fully);
    let mut a = generate_network(&inputs(), &events(), &p, &mut inn, &mut rng);
    let mut b = a.clone_structure(77);
    let (w, innovation) = (a.connections()[0].weight, a.connections()[0].innovation);
    assert!(a.add_node_split_connection(0, &mut inn));
    let i = b.connections().iter().position(|c| c.innovation == innovation).unwrap();
    assert!(b.add_node_split_connection(i, &mut inn));
    let split = |n: &Network| {
        let old = n.connections().iter().find(|c| c.innovation == innovation).unwrap();
        assert!(!old.enabled);
        let h = n.nodes().iter().find(|x| x.kind == NodeKind::Hidden).unwrap();
        assert_eq!(h.depth, 0.5);
        let into = n.connections().iter().find(|c| c.target == h.id).unwrap();
        let out = n.connections().iter().find(|c| c.source == h.id).unwrap();
        assert_eq!((into.weight, out.weight), (1.0, w));
        (h.id, into.innovation, out.innovation)
    };
    assert_eq!(split(&a), split(&b));
    let before = a.connections().len();
    let pp = NeatParams { recurrent_connection: 0.0, add_connection_tries: 100, ..p.clone() };
    if mutation::mutate_add_connection(&mut a, &pp, &mut inn, &mut rng) {
        assert_eq!(a.connections().len(), before + 1);
    }
    // toggle flips times + 1 connections (some maybe twice).
    let mut t = b.clone();
    mutation::mutate_toggle_enable_connection(&mut t, 0, false, &mut rng);
    let changed = t.connections().iter().zip(b.connections()).filter(|(x, y)| x.enabled != y.enabled).count();
    assert_eq!(changed, 1);
    mutation::mutate_connection_reenable(&mut t);
    // A mutant is a different network with a new id.
    let m = mutate(&a, false, &p, &mut inn, &mut rng);
    assert_ne!(m.id, a.id);
}

#[test]
fn crossover_invariants() {
    let mut rng = TestRng(5);
    let mut inn = Innovations::new();
    let p = params(ConnectionMethod::Fully);
    let a = generate_network(&inputs(), &events(), &p, &mut inn, &mut rng);
    let mut b = mutate(&a, false, &p, &mut inn, &mut rng);
    b.add_node_split_connection(3, &mut inn);
    for version in [WhiskerVersion::Master, WhiskerVersion::V07] {
        let pv = NeatParams { version, ..p.clone() };
        for _ in 0..20 {
            let child = crossover((&a, 1.0), (&b, 5.0), &pv, &mut inn, &mut rng);
            // The fitter parent (b) provides the structure.
            let inns = |n: &Network| n.connections().iter().map(|c| c.innovation).collect::<Vec<_>>();
            assert_eq!(inns(&child), inns(&b));
            for c in child.connections() {
                let wa = a.connections().iter().find(|x| x.innovation == c.innovation).map(|x| x.weight);
                let wb = b.connections().iter().find(|x| x.innovation == c.innovation).unwrap().weight;
                let ok = c.weight == wb || Some(c.weight) == wa || wa.is_some_and(|wa| c.weight == (wa + wb) / 2.0);
                assert!(ok);
            }
        }
    }
    // v0.7: a gene disabled in one parent is disabled in the child about 75 % of the time.
    let mut c = a.clone_structure(1000);
    c.connections_mut()[0].enabled = false;
    let pv = NeatParams { version: WhiskerVersion::V07, ..p };
    let innovation = c.connections()[0].innovation;
    let disabled = (0..400)
        .filter(|_| {
            let child = crossover((&a, 1.0), (&c, 1.0), &pv, &mut inn, &mut rng);
            !child.connections().iter().find(|x| x.innovation == innovation).unwrap().enabled
        })
        .count();
    assert!((250..350).contains(&disabled), "{disabled}");
}

fn run(seed: u64, version: WhiskerVersion) -> (NeatPopulation, String) {
    let mut rng = TestRng(seed);
    let p = NeatParams {
        population_size: 10,
        number_of_species: 5,
        penalizing_age: 10,
        mutation_add_connection: 0.5,
        mutation_add_node: 0.3,
        mutate_weights: 0.6,
        perturbation_power: 2.5,
        interspecies_mating: 0.1,
        mutation_without_crossover: 0.3,
        population_champion_number_offspring: 10,
        population_champion_number_clones: 5,
        version,
        ..params(ConnectionMethod::Fully)
    };
    let mut pop = NeatPopulation::new(p, &inputs(), &events(), Innovations::new(), &mut rng);
    let mut log = String::new();
    for _ in 0..5 {
        for m in pop.members_mut() {
            m.fitness = rng.next_int(1, 50) as f64;
        }
        pop.evolve(&mut rng);
        let weights: f64 = pop.members().iter().flat_map(|m| m.network.connections()).map(|c| c.weight).sum();
        log.push_str(&format!("{} {} {:.9}\n", pop.members().len(), pop.species().len(), weights));
    }
    (pop, log)
}

use clowder_neuro::Random;

/// `NeatPopulation.test.ts` "Test evolution": five generations keep the population size.
#[test]
fn population_evolves_deterministically() {
    for version in [WhiskerVersion::Master, WhiskerVersion::V07] {
        let (pop, log) = run(42, version);
        assert_eq!(pop.generation(), 5);
        assert_eq!(pop.members().len(), 10, "{version:?}\n{log}");
        assert!(!pop.species().is_empty());
        assert!(pop.species().iter().all(|s| !s.members.is_empty()));
        let members: usize = pop.species().iter().map(|s| s.members.len()).sum();
        assert_eq!(members, 10);
        assert!(pop.compatibility_threshold() >= 0.1);
        assert_eq!(run(42, version).1, log);
    }
}

/// "Test evolution stagnant population with only one species": a refocus keeps it alive.
#[test]
fn stagnant_population_refocuses() {
    let mut rng = TestRng(9);
    let p = NeatParams { population_size: 10, penalizing_age: 1, ..params(ConnectionMethod::Fully) };
    let mut pop = NeatPopulation::new(p, &inputs(), &events(), Innovations::new(), &mut rng);
    for _ in 0..12 {
        for m in pop.members_mut() {
            m.fitness = 1.0;
        }
        pop.evolve(&mut rng);
        assert!(!pop.species().is_empty());
        assert!(!pop.members().is_empty());
    }
}
