//! Whisker's JSON format for networks and dynamic test suites, master and v0.7 layouts.
//!
//! A suite is `{"Configs": {...}, "Networks": {"Network 0": network, ...}}`; a network is
//! `{"id", "aF", "cM", "tf"?, "Nodes": {"Node 0": node, ...}, "Cons": {"Con 0": connection, ...},
//! "AT"?}`; nodes are `{"id", "t": "I"|"B"|"H"|"C"|"R", "aF", "sprite"+"feature" | "event" |
//! "event"+"eventP", "d"?}` and connections `{"s", "t", "w", "e", "i", "r"}`. Master writes the
//! depth `d` on every node; v0.7 writes none. Loading follows Whisker's `NetworkLoader`: the
//! depth of non-hidden nodes, the saved `aF` of classification and regression nodes (master
//! derives the regression one from the event, v0.7 uses `NONE`) and, in master, the saved `r`
//! (recomputed from depths) are ignored; connections naming missing nodes are dropped.
//!
//! Differences from Whisker: entries are read in the numeric order of their `"Node i"` /
//! `"Con i"` / `"Network i"` suffixes (Whisker uses file order, which is the same for the files
//! it writes); classification/regression nodes are kept even if the program does not offer
//! their event (Whisker's loader drops those; it knows the program's events, we do not); bad
//! input is an error instead of a crash or `undefined`; files are limited to
//! [`MAX_ITEMS`] nodes, connections or networks.

use serde_json::{Map, Value};

use crate::error::NeuroError;
use crate::network::{
    ActivationFunction, ActivationTraceJson, ConnectionGene, ConnectionMethod, Network, NodeGene, NodeKind,
    WhiskerVersion, regression_activation,
};

/// Most nodes, connections (per network) or networks (per suite) a file may hold.
pub const MAX_ITEMS: usize = 100_000;

/// Largest JSON text accepted, in bytes.
pub const MAX_TEXT: usize = 512 * 1024 * 1024;

/// Which layout to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VersionHint {
    /// v0.7 if some hidden node has no depth (suite-wide), else master.
    #[default]
    Auto,
    /// Force one version.
    Exactly(WhiskerVersion),
}

/// A dynamic test suite: the execution configuration and the test networks.
#[derive(Debug, Clone, PartialEq)]
pub struct DynamicSuite {
    /// `Configs` as saved (`testSuiteType`, `timeout`, `eventSelection`, `durations`, …).
    pub configs: Value,
    /// The networks, in `"Network i"` order.
    pub networks: Vec<Network>,
}

/// The `durations` block of a suite's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Durations {
    /// `waitStepUpperBound`.
    pub wait_step_upper_bound: Option<f64>,
    /// `pressDurationUpperBound`.
    pub press_duration_upper_bound: Option<f64>,
    /// `soundDuration`.
    pub sound_duration: Option<f64>,
    /// `clickDuration`.
    pub click_duration: Option<f64>,
}

impl DynamicSuite {
    /// Parses a suite file.
    pub fn from_json(text: &str, hint: VersionHint) -> Result<Self, NeuroError> {
        let root = parse(text)?;
        let obj = root.as_object().ok_or_else(|| NeuroError::format("$", "suite is not an object"))?;
        let configs = obj.get("Configs").cloned().unwrap_or_else(|| Value::Object(Map::new()));
        if !configs.is_object() {
            return Err(NeuroError::format("Configs", "not an object"));
        }
        let networks = obj.get("Networks").ok_or_else(|| NeuroError::format("Networks", "missing"))?;
        Ok(Self { configs, networks: networks_from_value(networks, "Networks", hint)? })
    }

    /// Writes the suite in its networks' layout (4-space indentation, as Whisker).
    pub fn to_json(&self) -> String {
        let networks =
            self.networks.iter().enumerate().map(|(i, n)| (format!("Network {i}"), network_to_json(n))).collect();
        let root =
            J::Obj(vec![("Configs".to_owned(), J::from(&self.configs)), ("Networks".to_owned(), J::Obj(networks))]);
        let mut out = String::new();
        root.write(0, &mut out);
        out
    }

    /// `Configs.timeout` in milliseconds.
    pub fn timeout(&self) -> Option<f64> {
        self.configs.get("timeout").and_then(Value::as_f64)
    }

    /// `Configs.eventSelection` (`activation` or `random`).
    pub fn event_selection(&self) -> Option<&str> {
        self.configs.get("eventSelection").and_then(Value::as_str)
    }

    /// `Configs.durations`.
    pub fn durations(&self) -> Durations {
        let d = self.configs.get("durations");
        let get = |k: &str| d.and_then(|d| d.get(k)).and_then(Value::as_f64);
        Durations {
            wait_step_upper_bound: get("waitStepUpperBound"),
            press_duration_upper_bound: get("pressDurationUpperBound"),
            sound_duration: get("soundDuration"),
            click_duration: get("clickDuration"),
        }
    }
}

fn parse(text: &str) -> Result<Value, NeuroError> {
    if text.len() > MAX_TEXT {
        return Err(NeuroError::TooLarge { what: "JSON text (bytes)", count: text.len(), limit: MAX_TEXT });
    }
    serde_json::from_str(text).map_err(|e| NeuroError::Json(e.to_string()))
}

/// Parses a record of networks (`{"Network 0": ..., ...}`, as `networkToLoad.json`).
pub fn networks_from_json(text: &str, hint: VersionHint) -> Result<Vec<Network>, NeuroError> {
    networks_from_value(&parse(text)?, "$", hint)
}

/// Parses one network object.
pub fn network_from_json(text: &str, hint: VersionHint) -> Result<Network, NeuroError> {
    let value = parse(text)?;
    let version = match hint {
        VersionHint::Exactly(v) => v,
        VersionHint::Auto => detect(&value),
    };
    network_from_value(&value, "$", version)
}

/// Serialises one network.
pub fn network_to_string(network: &Network) -> String {
    let mut out = String::new();
    network_to_json(network).write(0, &mut out);
    out
}

fn networks_from_value(value: &Value, at: &str, hint: VersionHint) -> Result<Vec<Network>, NeuroError> {
    let entries = ordered_entries(value, at)?;
    let version = match hint {
        VersionHint::Exactly(v) => v,
        VersionHint::Auto if entries.iter().any(|(_, v)| detect(v) == WhiskerVersion::V07) => WhiskerVersion::V07,
        VersionHint::Auto => WhiskerVersion::Master,
    };
    entries.iter().map(|(k, v)| network_from_value(v, &format!("{at}/{k}"), version)).collect()
}

/// v0.7 when a hidden node lacks `d`.
fn detect(network: &Value) -> WhiskerVersion {
    let nodes = network.get("Nodes").and_then(Value::as_object);
    let v07 = nodes.is_some_and(|nodes| {
        nodes.values().any(|n| n.get("t").and_then(Value::as_str) == Some("H") && n.get("d").is_none())
    });
    if v07 { WhiskerVersion::V07 } else { WhiskerVersion::Master }
}

/// Object entries sorted by the number after the last space of their keys (others last).
fn ordered_entries<'a>(value: &'a Value, at: &str) -> Result<Vec<(&'a String, &'a Value)>, NeuroError> {
    let obj = value.as_object().ok_or_else(|| NeuroError::format(at, "not an object"))?;
    if obj.len() > MAX_ITEMS {
        return Err(NeuroError::TooLarge { what: "entries", count: obj.len(), limit: MAX_ITEMS });
    }
    let mut entries: Vec<(&String, &Value)> = obj.iter().collect();
    let index = |k: &str| k.rsplit(' ').next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(u64::MAX);
    entries.sort_by(|a, b| index(a.0).cmp(&index(b.0)).then_with(|| a.0.cmp(b.0)));
    Ok(entries)
}

fn field<'a>(obj: &'a Value, key: &str, at: &str) -> Result<&'a Value, NeuroError> {
    obj.get(key).ok_or_else(|| NeuroError::format(format!("{at}/{key}"), "missing"))
}

fn string(obj: &Value, key: &str, at: &str) -> Result<String, NeuroError> {
    field(obj, key, at)?
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| NeuroError::format(format!("{at}/{key}"), "not a string"))
}

fn unsigned(obj: &Value, key: &str, at: &str) -> Result<u64, NeuroError> {
    let v = field(obj, key, at)?;
    v.as_u64()
        .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9.0e15).map(|f| f as u64))
        .ok_or_else(|| NeuroError::format(format!("{at}/{key}"), "not a non-negative integer"))
}

fn node_id(obj: &Value, key: &str, at: &str) -> Result<u32, NeuroError> {
    u32::try_from(unsigned(obj, key, at)?).map_err(|_| NeuroError::format(format!("{at}/{key}"), "id too large"))
}

fn activation(obj: &Value, at: &str) -> Result<ActivationFunction, NeuroError> {
    match obj.get("aF") {
        None | Some(Value::Null) => Ok(ActivationFunction::None),
        Some(v) => v
            .as_str()
            .and_then(ActivationFunction::from_name)
            .ok_or_else(|| NeuroError::format(format!("{at}/aF"), format!("unknown activation function {v}"))),
    }
}

fn network_from_value(value: &Value, at: &str, version: WhiskerVersion) -> Result<Network, NeuroError> {
    let id = unsigned(value, "id", at)?;
    let activation_function = activation(value, at)?;
    let cm = string(value, "cM", at)?;
    let connection_method = ConnectionMethod::from_name(&cm)
        .ok_or_else(|| NeuroError::format(format!("{at}/cM"), format!("unknown connection method {cm:?}")))?;
    let target = match value.get("tf") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    };
    let nodes_at = format!("{at}/Nodes");
    let mut nodes = Vec::new();
    for (key, node) in ordered_entries(field(value, "Nodes", at)?, &nodes_at)? {
        nodes.push(node_from_value(node, &format!("{nodes_at}/{key}"), version)?);
    }
    let cons_at = format!("{at}/Cons");
    let mut connections = Vec::new();
    for (key, con) in ordered_entries(field(value, "Cons", at)?, &cons_at)? {
        let c = connection_from_value(con, &format!("{cons_at}/{key}"))?;
        // Whisker's loader silently skips connections whose nodes it did not create.
        if nodes.iter().any(|n| n.id == c.source) && nodes.iter().any(|n| n.id == c.target) {
            connections.push(c);
        }
    }
    let mut network = Network::new(id, activation_function, connection_method, version, nodes, connections)?;
    network.target = target;
    if let Some(at_value) = value.get("AT").filter(|v| !v.is_null()) {
        network.activation_trace = Some(trace_from_value(at_value, &format!("{at}/AT"))?);
    }
    Ok(network)
}

fn node_from_value(node: &Value, at: &str, version: WhiskerVersion) -> Result<NodeGene, NeuroError> {
    let id = node_id(node, "id", at)?;
    let kind = string(node, "t", at)?;
    Ok(match kind.as_str() {
        "I" => NodeGene::input(id, &string(node, "sprite", at)?, &string(node, "feature", at)?),
        "B" => NodeGene::bias(id),
        "H" => {
            let depth = match (node.get("d"), version) {
                (Some(d), _) => d
                    .as_f64()
                    .filter(|d| *d > 0.0 && *d < 1.0)
                    .ok_or_else(|| NeuroError::format(format!("{at}/d"), "hidden depth must be in (0, 1)"))?,
                (None, WhiskerVersion::V07) => 0.5,
                (None, WhiskerVersion::Master) => return Err(NeuroError::format(format!("{at}/d"), "missing")),
            };
            NodeGene::hidden(id, depth, activation(node, at)?)
        }
        "C" => NodeGene::classification(id, &string(node, "event", at)?),
        "R" => {
            let event = string(node, "event", at)?;
            let mut n = NodeGene::regression(id, &event, &string(node, "eventP", at)?);
            n.activation_function = match version {
                WhiskerVersion::Master => regression_activation(&event),
                WhiskerVersion::V07 => ActivationFunction::None,
            };
            n
        }
        other => return Err(NeuroError::format(format!("{at}/t"), format!("unknown node type {other:?}"))),
    })
}

fn connection_from_value(con: &Value, at: &str) -> Result<ConnectionGene, NeuroError> {
    let weight = field(con, "w", at)?
        .as_f64()
        .filter(|w| w.is_finite())
        .ok_or_else(|| NeuroError::format(format!("{at}/w"), "not a finite number"))?;
    let flag = |key: &str, default: Option<bool>| -> Result<bool, NeuroError> {
        match (con.get(key), default) {
            (Some(Value::Bool(b)), _) => Ok(*b),
            (None, Some(d)) => Ok(d),
            _ => Err(NeuroError::format(format!("{at}/{key}"), "not a boolean")),
        }
    };
    Ok(ConnectionGene {
        source: node_id(con, "s", at)?,
        target: node_id(con, "t", at)?,
        weight,
        enabled: flag("e", None)?,
        innovation: unsigned(con, "i", at)?,
        recurrent: flag("r", Some(false))?,
    })
}

fn trace_from_value(value: &Value, at: &str) -> Result<ActivationTraceJson, NeuroError> {
    let bad = || NeuroError::format(at, "activation trace must map steps to node ids to number arrays");
    let mut trace = ActivationTraceJson::new();
    for (step, nodes) in value.as_object().ok_or_else(bad)? {
        let mut step_trace = std::collections::BTreeMap::new();
        for (node, values) in nodes.as_object().ok_or_else(bad)? {
            let values: Option<Vec<f64>> = values.as_array().ok_or_else(bad)?.iter().map(Value::as_f64).collect();
            step_trace.insert(node.clone(), values.ok_or_else(bad)?);
        }
        trace.insert(step.clone(), step_trace);
    }
    Ok(trace)
}

/// JS `Number(x.toFixed(5))`: round half away from zero at the fifth decimal.
pub fn round5(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    // Exact ties need x to be a multiple of 1/64; then x * 1e5 is exact and toFixed picks the
    // larger magnitude, where Rust's formatting would round half to even.
    let scaled = x.abs() * 1e5;
    if (x * 64.0).fract() == 0.0 && scaled.fract() == 0.5 {
        return (scaled.ceil() / 1e5).copysign(x);
    }
    format!("{x:.5}").parse().unwrap_or(x)
}

fn network_to_json(n: &Network) -> J {
    let mut fields = vec![
        ("id".to_owned(), J::num(n.id as f64)),
        ("aF".to_owned(), J::str(n.activation_function.name())),
        ("cM".to_owned(), J::str(n.connection_method.name())),
    ];
    if let Some(tf) = &n.target {
        fields.push(("tf".to_owned(), J::str(tf)));
    }
    let nodes = n.nodes().iter().enumerate().map(|(i, node)| (format!("Node {i}"), node_to_json(node, n.version)));
    fields.push(("Nodes".to_owned(), J::Obj(nodes.collect())));
    let cons = n.connections().iter().enumerate().map(|(i, c)| {
        let con = J::Obj(vec![
            ("s".to_owned(), J::num(f64::from(c.source))),
            ("t".to_owned(), J::num(f64::from(c.target))),
            ("w".to_owned(), J::num(round5(c.weight))),
            ("e".to_owned(), J::Leaf(Value::Bool(c.enabled))),
            ("i".to_owned(), J::num(c.innovation as f64)),
            ("r".to_owned(), J::Leaf(Value::Bool(c.recurrent))),
        ]);
        (format!("Con {i}"), con)
    });
    fields.push(("Cons".to_owned(), J::Obj(cons.collect())));
    if let Some(trace) = &n.activation_trace {
        let steps = trace.iter().map(|(step, nodes)| {
            let nodes = nodes.iter().map(|(k, v)| (k.clone(), J::Arr(v.iter().map(|x| J::num(*x)).collect())));
            (step.clone(), J::Obj(nodes.collect()))
        });
        fields.push(("AT".to_owned(), J::Obj(steps.collect())));
    }
    J::Obj(fields)
}

fn node_to_json(node: &NodeGene, version: WhiskerVersion) -> J {
    let mut f = vec![
        ("id".to_owned(), J::num(f64::from(node.id))),
        ("t".to_owned(), J::str(node.kind.letter())),
        ("aF".to_owned(), J::str(node.activation_function.name())),
    ];
    match &node.kind {
        NodeKind::Input { sprite, feature } => {
            f.push(("sprite".to_owned(), J::str(sprite)));
            f.push(("feature".to_owned(), J::str(feature)));
        }
        NodeKind::Classification { event } => f.push(("event".to_owned(), J::str(event))),
        NodeKind::Regression { event, parameter } => {
            f.push(("event".to_owned(), J::str(event)));
            f.push(("eventP".to_owned(), J::str(parameter)));
        }
        NodeKind::Bias | NodeKind::Hidden => {}
    }
    if version == WhiskerVersion::Master {
        f.push(("d".to_owned(), J::num(node.depth)));
    }
    J::Obj(f)
}

/// JSON with ordered object keys (serde_json's map sorts them; Whisker's files keep
/// `"Node 2"` before `"Node 10"`).
enum J {
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
    Leaf(Value),
}

impl J {
    fn str(s: &str) -> Self {
        Self::Leaf(Value::String(s.to_owned()))
    }

    /// Integral values as integers, as JavaScript prints them.
    fn num(x: f64) -> Self {
        if x.fract() == 0.0 && x.abs() < 9.0e15 {
            Self::Leaf(Value::from(x as i64))
        } else {
            Self::Leaf(serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number))
        }
    }

    fn from(v: &Value) -> Self {
        match v {
            Value::Object(m) => Self::Obj(m.iter().map(|(k, v)| (k.clone(), Self::from(v))).collect()),
            Value::Array(a) => Self::Arr(a.iter().map(Self::from).collect()),
            other => Self::Leaf(other.clone()),
        }
    }

    fn write(&self, depth: usize, out: &mut String) {
        let pad = |d: usize, out: &mut String| out.extend(std::iter::repeat_n("    ", d));
        match self {
            Self::Leaf(v) => out.push_str(&v.to_string()),
            Self::Obj(fields) if fields.is_empty() => out.push_str("{}"),
            Self::Arr(items) if items.is_empty() => out.push_str("[]"),
            Self::Obj(fields) => {
                out.push_str("{\n");
                for (i, (k, v)) in fields.iter().enumerate() {
                    pad(depth + 1, out);
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push_str(": ");
                    v.write(depth + 1, out);
                    out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
                }
                pad(depth, out);
                out.push('}');
            }
            Self::Arr(items) => {
                out.push_str("[\n");
                for (i, v) in items.iter().enumerate() {
                    pad(depth + 1, out);
                    v.write(depth + 1, out);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                pad(depth, out);
                out.push(']');
            }
        }
    }
}
