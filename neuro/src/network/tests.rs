//! Activation tests; values from Whisker's own tests (cited per test).

use super::*;

fn features(pairs: &[(&str, &str, f64)]) -> Features {
    Features::from_entries(pairs)
}

fn con(source: NodeId, target: NodeId, weight: f64, enabled: bool, innovation: u64) -> ConnectionGene {
    ConnectionGene { source, target, weight, enabled, innovation, recurrent: false }
}

/// `getSampleNetwork()` of Whisker's `Networks/NeatChromosome.test.ts` (master): three inputs of
/// Sprite1, bias, two classification nodes (WaitEvent, ClickStageEvent) and two regression
/// nodes (WaitEvent/Duration → sigmoid, MouseMoveEvent/X → tanh).
fn sample_network() -> Network {
    let nodes = vec![
        NodeGene::input(0, "Sprite1", "X-Position"),
        NodeGene::input(1, "Sprite1", "Y-Position"),
        NodeGene::input(2, "Sprite1", "Costume"),
        NodeGene::bias(3),
        NodeGene::classification(4, "WaitEvent"),
        NodeGene::classification(5, "ClickStageEvent"),
        NodeGene::regression(6, "WaitEvent", "Duration"),
        NodeGene::regression(7, "MouseMoveEvent", "X"),
    ];
    let cons = vec![
        con(0, 4, 0.1, true, 1),
        con(0, 5, 0.2, true, 1),
        con(1, 4, 0.3, false, 1),
        con(1, 5, 0.4, false, 1),
        con(3, 4, 0.5, true, 1),
        con(3, 5, 0.6, false, 1),
        con(0, 6, 0.7, true, 1),
        con(0, 7, 0.8, true, 1),
        con(1, 6, 0.9, false, 1),
        con(1, 7, 1.0, true, 1),
    ];
    Network::new(0, ActivationFunction::Sigmoid, ConnectionMethod::Fully, WhiskerVersion::Master, nodes, cons).unwrap()
}

fn node_value(n: &Network, id: NodeId) -> f64 {
    n.node(id).unwrap().node_value
}

fn r3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// "Network activation without hidden layer": node values 0.6, 0.2, 0.7, 2.8; softmax
/// [0.599, 0.401].
#[test]
fn activation_without_hidden_layer() {
    let mut n = sample_network();
    assert!(n.activate(&features(&[("Sprite1", "X-Position", 1.0), ("Sprite1", "Y-Position", 2.0)])));
    assert_eq!([node_value(&n, 0), node_value(&n, 1), node_value(&n, 2)], [1.0, 2.0, 0.0]);
    assert_eq!(r3(node_value(&n, 4)), 0.6);
    assert_eq!(node_value(&n, 5), 0.2);
    assert_eq!(node_value(&n, 6), 0.7);
    assert_eq!(node_value(&n, 7), 2.8);
    let p = n.classification_probabilities(&["WaitEvent", "ClickStageEvent"]);
    assert_eq!(p.iter().map(|(_, p)| r3(*p)).collect::<Vec<_>>(), [0.599, 0.401]);
    assert_eq!(n.select_event(&["ClickStageEvent", "WaitEvent"]), Some(1));
    // WaitEvent regression uses the sigmoid, MouseMoveEvent the tanh (master's RegressionNode).
    assert_eq!(n.regression_values("WaitEvent"), [("Duration", sigmoid(0.7, 1.0))]);
    assert_eq!(n.regression_values("MouseMoveEvent"), [("X", 2.8f64.tanh())]);
}

fn with_hidden(recurrent_back: bool) -> Network {
    let base = sample_network();
    let mut nodes = base.nodes().to_vec();
    nodes.push(NodeGene::hidden(101, 0.5, ActivationFunction::Sigmoid));
    let mut cons = base.connections().to_vec();
    cons.push(con(0, 101, 1.1, true, 121));
    cons.push(con(1, 101, 1.2, true, 123));
    cons.push(con(101, 4, 1.3, true, 123));
    if recurrent_back {
        cons.push(con(4, 101, 1.4, true, 123));
    }
    Network::new(0, ActivationFunction::Sigmoid, ConnectionMethod::Fully, WhiskerVersion::Master, nodes, cons).unwrap()
}

/// "Network activation with hidden layer": hidden 3.5 → 0.97, output 1.86, softmax
/// [0.840, 0.160].
#[test]
fn activation_with_hidden_layer() {
    let mut n = with_hidden(false);
    n.activate(&features(&[("Sprite1", "X-Position", 1.0), ("Sprite1", "Y-Position", 2.0)]));
    assert_eq!(node_value(&n, 101), 3.5);
    assert_eq!(r2(n.node(101).unwrap().activation_value), 0.97);
    assert_eq!(r2(node_value(&n, 4)), 1.86);
    let p = n.classification_probabilities(&["WaitEvent", "ClickStageEvent"]);
    assert_eq!(p.iter().map(|(_, p)| r3(*p)).collect::<Vec<_>>(), [0.840, 0.160]);
    assert_eq!(n.traced_activations(), [(101, 0.971)]);
}

/// "Network activation with recurrent connection from classification to hidden node": the
/// second activation reads the first one's output: hidden 4.68 → 0.99, output 1.89, softmax
/// [0.844, 0.156].
#[test]
fn activation_with_recurrent_connection() {
    let mut n = with_hidden(true);
    assert!(n.connections().iter().any(|c| c.source == 4 && c.target == 101 && c.recurrent));
    let inputs = features(&[("Sprite1", "X-Position", 1.0), ("Sprite1", "Y-Position", 2.0)]);
    n.activate(&inputs);
    assert_eq!(node_value(&n, 101), 3.5);
    assert_eq!(r2(node_value(&n, 4)), 1.86);
    n.activate(&inputs);
    assert_eq!(r2(node_value(&n, 101)), 4.68);
    assert_eq!(r2(n.node(101).unwrap().activation_value), 0.99);
    assert_eq!(r2(node_value(&n, 4)), 1.89);
    let p = n.classification_probabilities(&["WaitEvent", "ClickStageEvent"]);
    assert_eq!(p.iter().map(|(_, p)| r3(*p)).collect::<Vec<_>>(), [0.844, 0.156]);
}

/// "Network Activation with example network" (theneuralblog forward pass): regression outputs
/// 0.735 and 0.780.
#[test]
fn activation_example_network() {
    let nodes = vec![
        NodeGene::input(0, "Input", "A"),
        NodeGene::input(1, "Input", "B"),
        NodeGene::bias(2),
        NodeGene::hidden(3, 0.5, ActivationFunction::Sigmoid),
        NodeGene::hidden(4, 0.5, ActivationFunction::Sigmoid),
        NodeGene::regression(5, "WaitEvent", "Duration"),
        NodeGene::regression(6, "WaitEvent", "X"),
    ];
    let w = [(0, 3, 0.1), (0, 4, 0.2), (1, 3, 0.3), (1, 4, 0.4), (2, 3, 0.25), (2, 4, 0.25)];
    let w2 = [(3, 5, 0.5), (3, 6, 0.7), (4, 5, 0.6), (4, 6, 0.8), (2, 5, 0.35), (2, 6, 0.35)];
    let cons = w.iter().chain(&w2).map(|&(s, t, w)| con(s, t, w, true, 1)).collect();
    let mut n =
        Network::new(0, ActivationFunction::Sigmoid, ConnectionMethod::Fully, WhiskerVersion::Master, nodes, cons)
            .unwrap();
    n.activate(&features(&[("Input", "A", 0.1), ("Input", "B", 0.5)]));
    let r = n.regression_values("WaitEvent");
    assert_eq!(r3(r[0].1), 0.735);
    assert_eq!(r3(r[1].1), 0.780);
}

/// "Network activation without path from input to output" returns false (defect network).
#[test]
fn defect_network() {
    let nodes = vec![NodeGene::input(0, "Sprite1", "X-Position"), NodeGene::classification(4, "WaitEvent")];
    let mut n = Network::new(
        0,
        ActivationFunction::Relu,
        ConnectionMethod::Fully,
        WhiskerVersion::Master,
        nodes,
        vec![con(0, 4, 1.0, false, 0)],
    )
    .unwrap();
    assert!(!n.activate(&features(&[("Sprite1", "X-Position", 1.0)])));
}

/// v0.7 timestep activation: a two-step path needs two timesteps; probabilities are the softmax
/// of node values over the available events.
#[test]
fn timestep_activation() {
    let nodes = vec![
        NodeGene::input(0, "S", "x"),
        NodeGene::bias(1),
        NodeGene::hidden(2, 0.5, ActivationFunction::Tanh),
        NodeGene::classification(3, "A"),
        NodeGene::classification(4, "B"),
    ];
    let cons = vec![con(0, 2, 1.0, true, 0), con(2, 3, 2.0, true, 1), con(1, 4, 0.5, true, 2)];
    let mut n =
        Network::new(0, ActivationFunction::Tanh, ConnectionMethod::Fully, WhiskerVersion::V07, nodes, cons).unwrap();
    assert!(n.activate(&features(&[("S", "x", 0.5)])));
    // Step 1 is synchronous: hidden = tanh(0.5) but A still reads the hidden node's old value 0
    // (A is activated, its source was); B = 0.5 from the bias is on, so the loop stops.
    assert_eq!(n.node(2).unwrap().activation_value, 0.5f64.tanh());
    assert_eq!(node_value(&n, 4), 0.5);
    assert!(n.node(3).unwrap().activated);
    assert_eq!(node_value(&n, 3), 0.0);
    let p = n.classification_probabilities(&["A", "B"]);
    let e = 0.5f64.exp();
    assert_eq!(p, [(0, 1.0 / (1.0 + e)), (1, e / (1.0 + e))]);
    assert_eq!(n.classification_probabilities(&["B"]), [(0, 1.0)]);
    // Second call: A now reads the hidden node of the previous step.
    n.activate(&features(&[("S", "x", 0.5)]));
    assert_eq!(node_value(&n, 3), 2.0 * 0.5f64.tanh());
    let p = n.classification_probabilities(&["A", "B"]);
    let (ea, eb) = ((2.0 * 0.5f64.tanh()).exp(), 0.5f64.exp());
    assert_eq!(p, [(0, ea / (ea + eb)), (1, eb / (ea + eb))]);
    // Inputs that are missing switch their connections off: only the bias path remains.
    n.reset_state();
    n.activate(&Features::new());
    assert!(!n.node(2).unwrap().activated);
}

/// Loading inputs by one merged pass over the sorted features and input nodes gives every node
/// what looking each node's feature up gives (sprites and features missing on either side,
/// names that are prefixes of others, a file with two nodes for one feature), and growth adds
/// exactly the features no node has, in feature order; loading the same names again uses the
/// input slots remembered for them, also after growth.
#[test]
fn merged_input_loading_equals_looking_each_node_up() {
    // Every input node holds what looking its feature up gives.
    let loaded_as_looked_up = |n: &Network, f: &Features, label: &str| {
        for node in n.nodes() {
            if let NodeKind::Input { sprite, feature } = &node.kind {
                let want = f.get(sprite, feature);
                assert_eq!(node.activated, want.is_some(), "{label}, node {}", node.id);
                if let Some(v) = want {
                    assert_eq!(node.node_value, v, "{label}, node {}", node.id);
                }
            }
        }
    };
    let names = ["A", "AB", "B", "Ball", "BallClone1", "Stage", "Z"];
    let keys = ["X", "Y", "DISTBallX", "DIST#ff0000", "VARscore", "Size"];
    let mut seed = 11u64;
    let mut next = move |m: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % m
    };
    for case in 0..200 {
        let mut nodes = Vec::new();
        for (i, s) in names.iter().enumerate() {
            for (j, k) in keys.iter().enumerate() {
                if next(3) == 0 {
                    nodes.push(NodeGene::input((10_000 + i * 10 + j) as NodeId, s, k));
                }
            }
        }
        if case % 4 == 0
            && let Some(NodeKind::Input { sprite, feature }) = nodes.first().map(|n| n.kind.clone())
        {
            nodes.push(NodeGene::input(20_000, &sprite, &feature));
        }
        nodes.push(NodeGene::classification(30_000, "WaitEvent"));
        let mut n =
            Network::new(0, ActivationFunction::Sigmoid, ConnectionMethod::Fully, WhiskerVersion::V07, nodes, vec![])
                .unwrap();
        let mut pairs = Vec::new();
        for s in names {
            for k in keys {
                if next(2) == 0 {
                    pairs.push((s, k, next(1000) as f64 / 7.0));
                }
            }
        }
        let f = features(&pairs);
        n.set_up_inputs(&f);
        loaded_as_looked_up(&n, &f, &format!("case {case}"));
        let missing: Vec<(String, String)> = f
            .iter()
            .map(|(s, k, _)| (s.to_owned(), k.to_owned()))
            .filter(|(s, k)| n.input_node(s, k).is_none())
            .collect();
        let old_ids: Vec<NodeId> = n.nodes().iter().map(|node| node.id).collect();
        n.update_input_nodes(&f, &mut crate::innovation::Innovations::new());
        // Growth may reorder the node list; new ids are handed out in the order of creation.
        let mut added: Vec<(NodeId, String, String)> = n
            .nodes()
            .iter()
            .filter(|node| !old_ids.contains(&node.id))
            .filter_map(|node| match &node.kind {
                NodeKind::Input { sprite, feature } => Some((node.id, sprite.clone(), feature.clone())),
                _ => None,
            })
            .collect();
        added.sort();
        let added: Vec<(String, String)> = added.into_iter().map(|(_, s, k)| (s, k)).collect();
        assert_eq!(added, missing, "case {case}");
        // The same layout again with other values, twice: the first after growth changed the
        // network (its remembered slots no longer apply), the second reusing them.
        for round in 0..2 {
            let slots: Vec<u32> = (0..f.len() as u32).collect();
            let values: Vec<f64> = (0..f.len()).map(|i| (i * 3 + round + case) as f64 / 11.0).collect();
            let mut g = f.clone();
            g.assign(f.layout(), &slots, &values);
            n.set_up_inputs(&g);
            loaded_as_looked_up(&n, &g, &format!("case {case}, round {round}"));
        }
    }
}
