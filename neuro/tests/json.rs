//! Whisker JSON: loading, saving, round trips, errors.

use std::process::Command;

use clowder_neuro::json::{self, round5};
use clowder_neuro::{DynamicSuite, Features, NeuroError, NodeKind, VersionHint, WhiskerVersion};

/// The content of Whisker's `test/whisker/whiskerNet/NetworkGenerators/networkToLoad.json`
/// (master), reproduced for `NetworkLoader.test.ts`' expectations.
const NETWORK_TO_LOAD: &str = r#"{
 "Network 0": {"id": 0, "aF": "TANH", "cM": "fullyHidden", "tf": "u*;kMNBI!JQ!TOk8u1{~-Stage",
  "Nodes": {
   "Node 0": {"id": 0, "t": "I", "aF": "NONE", "sprite": "Sprite1", "feature": "A"},
   "Node 1": {"id": 1, "t": "I", "aF": "NONE", "sprite": "Sprite2", "feature": "A"},
   "Node 2": {"id": 2, "t": "I", "aF": "NONE", "sprite": "Sprite2", "feature": "B"},
   "Node 3": {"id": 3, "t": "B", "aF": "NONE"},
   "Node 4": {"id": 4, "t": "H", "aF": "TANH", "d": 0.5},
   "Node 5": {"id": 5, "t": "H", "aF": "TANH", "d": 0.5},
   "Node 6": {"id": 6, "t": "C", "aF": "NONE", "event": "WaitEvent"},
   "Node 7": {"id": 7, "t": "R", "aF": "NONE", "event": "WaitEvent", "eventP": "Duration"}},
  "Cons": {
   "Con 0": {"s": 0, "t": 4, "w": 1, "e": true, "i": 0, "r": false},
   "Con 1": {"s": 1, "t": 5, "w": -1, "e": true, "i": 1, "r": false},
   "Con 2": {"s": 2, "t": 5, "w": -1, "e": true, "i": 1, "r": false},
   "Con 3": {"s": 3, "t": 5, "w": 1, "e": true, "i": 1, "r": false},
   "Con 4": {"s": 4, "t": 6, "w": -0.5, "e": true, "i": 1, "r": false},
   "Con 5": {"s": 4, "t": 7, "w": -0.5, "e": true, "i": 1, "r": false},
   "Con 6": {"s": 5, "t": 6, "w": 0.5, "e": true, "i": 1, "r": false},
   "Con 7": {"s": 5, "t": 7, "w": 0.5, "e": true, "i": 1, "r": false}},
  "AT": {"1": {"H4": [0.1, 0.1, 0.12, 0.08, 0.11], "H5": [-0.5, -0.4, -0.3, -0.2, -0.55]},
         "5": {"H4": [1, 1.1, 1.2, 0.9, 0.8], "H5": [-1, -1, 1, 1, -0.5]}}},
 "Network 1": {"id": 0, "aF": "TANH", "cM": "fullyHidden", "tf": "u*;kMNBI!JQ!TOk8u1{~-Stage",
  "Nodes": {
   "Node 0": {"id": 0, "t": "I", "aF": "NONE", "sprite": "Sprite1", "feature": "A"},
   "Node 1": {"id": 1, "t": "I", "aF": "NONE", "sprite": "Sprite2", "feature": "A"},
   "Node 2": {"id": 2, "t": "I", "aF": "NONE", "sprite": "Sprite2", "feature": "B"},
   "Node 6": {"id": 6, "t": "C", "aF": "NONE", "event": "WaitEvent"},
   "Node 7": {"id": 7, "t": "R", "aF": "NONE", "event": "WaitEvent", "eventP": "Duration"}},
  "Cons": {
   "Con 0": {"s": 0, "t": 6, "w": 1, "e": true, "i": 0, "r": false},
   "Con 1": {"s": 0, "t": 7, "w": -1, "e": true, "i": 1, "r": false},
   "Con 2": {"s": 1, "t": 6, "w": -1, "e": true, "i": 1, "r": false},
   "Con 3": {"s": 1, "t": 7, "w": 1, "e": true, "i": 1, "r": false},
   "Con 4": {"s": 2, "t": 6, "w": -0.5, "e": true, "i": 1, "r": false},
   "Con 5": {"s": 2, "t": 7, "w": -0.5, "e": true, "i": 1, "r": false}}}
}"#;

/// `NetworkLoader.test.ts` "Load Networks".
#[test]
fn load_network_to_load() {
    let networks = json::networks_from_json(NETWORK_TO_LOAD, VersionHint::Auto).unwrap();
    assert_eq!(networks.len(), 2);
    let n = &networks[0];
    assert_eq!(n.version, WhiskerVersion::Master);
    assert_eq!(n.id, 0);
    assert_eq!(n.activation_function.name(), "TANH");
    assert_eq!(n.connection_method.name(), "fullyHidden");
    assert_eq!(n.num_nodes(), 8);
    assert_eq!(n.connections().len(), 8);
    assert_eq!(n.nodes().iter().filter(|x| x.depth == 0.0).count(), 4);
    assert_eq!(n.nodes().iter().filter(|x| x.kind == NodeKind::Bias).count(), 1);
    assert_eq!(n.nodes().iter().filter(|x| x.depth == 0.5).count(), 2);
    assert_eq!(n.nodes().iter().filter(|x| x.depth == 1.0).count(), 2);
    let trace = n.activation_trace.as_ref().unwrap();
    assert_eq!(trace.len(), 2);
    assert_eq!(trace["5"].len(), 2);
    assert_eq!(trace["1"]["H4"][2], 0.12);
    let c = n.classification_node("WaitEvent").unwrap();
    assert_eq!(n.connections().iter().filter(|x| x.enabled && x.target == c.id).count(), 2);
    assert_eq!(n.regression_values("WaitEvent").len(), 1);
    assert_eq!(n.regression_values("WaitEvent")[0].0, "Duration");
    // Network 1 has no hidden nodes and no bias; it still activates.
    let mut m = networks[1].clone();
    let f = Features::from_entries(&[("Sprite1", "A", 1.0)]);
    assert!(m.activate(&f));
    assert_eq!(m.select_event(&["WaitEvent"]), Some(0));
}

#[test]
fn round_trip_master() {
    let networks = json::networks_from_json(NETWORK_TO_LOAD, VersionHint::Auto).unwrap();
    let suite =
        DynamicSuite { configs: serde_json::json!({"timeout": 10000, "eventSelection": "activation"}), networks };
    let text = suite.to_json();
    let again = DynamicSuite::from_json(&text, VersionHint::Auto).unwrap();
    assert_eq!(again, suite);
    assert_eq!(again.to_json(), text);
    assert_eq!(again.timeout(), Some(10000.0));
    assert_eq!(again.event_selection(), Some("activation"));
    // Integral numbers are written as JavaScript writes them.
    assert!(text.contains("\"w\": -1,") && text.contains("\"d\": 0.5"));
}

#[test]
fn v07_detected_and_round_trips() {
    let v07 = NETWORK_TO_LOAD.replace(", \"d\": 0.5", "");
    let networks = json::networks_from_json(&v07, VersionHint::Auto).unwrap();
    assert!(networks.iter().all(|n| n.version == WhiskerVersion::V07));
    let suite = DynamicSuite { configs: serde_json::json!({}), networks };
    let text = suite.to_json();
    assert!(!text.contains("\"d\""));
    assert_eq!(DynamicSuite::from_json(&text, VersionHint::Auto).unwrap(), suite);
}

#[test]
fn errors_not_panics() {
    let bad = |text: &str| json::networks_from_json(text, VersionHint::Auto).unwrap_err();
    assert!(matches!(bad("{"), NeuroError::Json(_)));
    assert!(matches!(bad("[]"), NeuroError::Format { .. }));
    let base = r#"{"N": {"id": 1, "aF": "RELU", "cM": "fully", "Nodes": {NODES}, "Cons": {}}}"#;
    let with = |nodes: &str| base.replace("NODES", nodes);
    assert!(matches!(bad(&with(r#""a": {"id": 1, "t": "X"}"#)), NeuroError::Format { .. }));
    assert!(matches!(bad(&with(r#""a": {"t": "B"}"#)), NeuroError::Format { .. }));
    assert!(matches!(bad(&with(r#""a": {"id": -1, "t": "B"}"#)), NeuroError::Format { .. }));
    assert!(matches!(bad(&with(r#""a": {"id": 1, "t": "H", "d": 1.5}"#)), NeuroError::Format { .. }));
    assert!(matches!(
        bad(&with(r#""a": {"id": 1, "t": "B"}, "b": {"id": 1, "t": "B"}"#)),
        NeuroError::DuplicateNode { id: 1, .. }
    ));
    assert!(matches!(bad(&with(r#""a": {"id": 1, "t": "H", "d": 0.5, "aF": "FOO"}"#)), NeuroError::Format { .. }));
    let bad_cm = base.replace("\"fully\"", "\"magic\"").replace("NODES", "");
    assert!(matches!(bad(&bad_cm), NeuroError::Format { .. }));
    assert!(DynamicSuite::from_json("{\"Configs\": {}}", VersionHint::Auto).is_err());
}

#[test]
fn rounding_like_to_fixed() {
    assert_eq!(round5(0.015625), 0.01563);
    assert_eq!(round5(-0.015625), -0.01563);
    assert_eq!(round5(1.234_564_9), 1.23456);
    assert_eq!(round5(-0.355_894_4), -0.35589);
}

fn git_show(spec: &str) -> Option<String> {
    let out = Command::new("git").args(["-C", "/work/.mirror/se2p+whisker/repo", "show", spec]).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whisker's own dynamic suites (FruitCatchingDynamic.json, master and v0.7), if the mirror is
/// present.
#[test]
fn whisker_suites_if_available() {
    let path = "whisker-web/test/integration/networkSuites/FruitCatchingDynamic.json";
    let (Some(master), Some(v07)) = (git_show(&format!("master:{path}")), git_show(&format!("v0.7:{path}"))) else {
        println!("SKIP: Whisker mirror not available");
        return;
    };
    let suite = DynamicSuite::from_json(&master, VersionHint::Auto).unwrap();
    assert_eq!(suite.networks.len(), 1);
    let n = &suite.networks[0];
    assert_eq!((n.id, n.num_nodes(), n.connections().len()), (4638, 30, 32));
    assert_eq!(n.version, WhiskerVersion::Master);
    assert_eq!(suite.durations().wait_step_upper_bound, Some(100.0));
    assert_eq!(DynamicSuite::from_json(&suite.to_json(), VersionHint::Auto).unwrap(), suite);

    let old = DynamicSuite::from_json(&v07, VersionHint::Auto).unwrap();
    assert_eq!(old.networks.len(), 5);
    assert!(old.networks.iter().all(|n| n.version == WhiskerVersion::V07));
    assert_eq!(DynamicSuite::from_json(&old.to_json(), VersionHint::Auto).unwrap(), old);

    // Both activate on a FruitCatching-like state and pick an available event.
    let f =
        Features::from_entries(&[("Bowl", "X", 0.2), ("Bowl", "Y", -0.8), ("Apple", "X", -0.3), ("Apple", "Y", 0.9)]);
    let events = ["KeyPressEvent-right arrow", "KeyPressEvent-left arrow", "WaitEvent"];
    for mut n in suite.networks.into_iter().chain(old.networks) {
        if n.activate(&f) {
            assert!(n.select_event(&events).is_some());
        }
    }
}
