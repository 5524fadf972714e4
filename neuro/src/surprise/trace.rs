//! Activation traces: per Scratch step, per traced node, the activation values observed — one per
//! run, so a trace recorded over many seeds holds the reference samples of each (step, node).
//!
//! Mirrors Whisker's `Misc/ActivationTrace.ts` and its JSON form (the `"AT"` key of a saved
//! network): `{"<step>": {"H:<node id>": [values…]}}`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Prefix of a hidden node's identifier in Whisker (`HiddenNode.identifier()` is `H:<uID>`);
/// only hidden nodes are traced, so every node key of a saved trace carries it.
pub const HIDDEN_NODE_PREFIX: &str = "H:";

/// Whether Whisker records the trace (and the uncertainty) after `step`: step 1, which reflects
/// the initialisation, and every fifth step; never step 0, which only reflects loading
/// (`NetworkExecutor.recordActivationTrace`).
pub fn is_trace_step(step: u32) -> bool {
    step > 0 && (step % 5 == 0 || step == 1)
}

/// Rounds an activation to three decimals as Whisker does before storing it
/// (`Math.round(v * 1000) / 1000`): halves round towards +∞ (`-0.0625` → `-0.062`), unlike
/// [`f64::round`]. A negative zero comes back as `0`, which `JSON.stringify` would print anyway.
pub fn round_activation(value: f64) -> f64 {
    let scaled = value * 1000.0;
    // JavaScript's Math.round: the nearest integer, ties towards +∞. `ceil - 0.5` is exact for
    // every non-integral double, so the comparison picks the right neighbour.
    let ceil = scaled.ceil();
    let rounded = if ceil - 0.5 > scaled { ceil - 1.0 } else { ceil };
    let result = rounded / 1000.0;
    if result == 0.0 { 0.0 } else { result }
}

/// Activation values per step and node, plus the set of traced node ids.
///
/// Steps and nodes are kept in ascending order (`BTreeMap`), so iteration — and with it every
/// analysis and the JSON output — is deterministic.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActivationTrace {
    steps: BTreeMap<u32, BTreeMap<u32, Vec<f64>>>,
    /// Whisker's `tracedNodes`: the hidden nodes the trace was created for plus every node
    /// recorded since. Only its size is used: it is the surprise count of a missing test trace.
    traced_nodes: BTreeSet<u32>,
}

impl ActivationTrace {
    /// An empty trace with no traced nodes.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty trace for the given nodes (Whisker passes a network's hidden nodes), so that they
    /// count as traced even before they are activated.
    pub fn with_traced_nodes(nodes: impl IntoIterator<Item = u32>) -> Self {
        Self { steps: BTreeMap::new(), traced_nodes: nodes.into_iter().collect() }
    }

    /// Adds nodes to the traced set without recording values (e.g. a loaded network's hidden
    /// nodes, as Whisker's loader does).
    pub fn add_traced_nodes(&mut self, nodes: impl IntoIterator<Item = u32>) {
        self.traced_nodes.extend(nodes);
    }

    /// Records one step of one run (Whisker's `update`): every `(node, activation)` pair — pass
    /// only the activated hidden nodes — is rounded with [`round_activation`] and appended to
    /// that node's values. The step is created even when `activations` is empty; an empty step
    /// in a reference trace ends a surprise analysis there, as in Whisker.
    pub fn record_step(&mut self, step: u32, activations: &[(u32, f64)]) {
        let step_trace = self.steps.entry(step).or_default();
        for &(node, value) in activations {
            self.traced_nodes.insert(node);
            step_trace.entry(node).or_default().push(round_activation(value));
        }
    }

    /// Records a single activation (rounded like [`record_step`](Self::record_step)).
    pub fn push(&mut self, step: u32, node: u32, value: f64) {
        self.record_step(step, &[(node, value)]);
    }

    /// Replaces the values of one (step, node) verbatim, without rounding — as Whisker's loader
    /// and its tests set trace entries directly.
    pub fn set_samples(&mut self, step: u32, node: u32, values: Vec<f64>) {
        self.traced_nodes.insert(node);
        self.steps.entry(step).or_default().insert(node, values);
    }

    /// Appends all values of `other` (another run or set of runs) to this trace: the reference
    /// trace of several seeds is the merge of their traces, which is what Whisker gets by
    /// recording all repetitions into one trace.
    pub fn merge(&mut self, other: &ActivationTrace) {
        for (&step, nodes) in &other.steps {
            let step_trace = self.steps.entry(step).or_default();
            for (&node, values) in nodes {
                step_trace.entry(node).or_default().extend_from_slice(values);
            }
        }
        self.traced_nodes.extend(other.traced_nodes.iter().copied());
    }

    /// Merges the traces of several runs into one reference trace.
    pub fn merged<'a>(traces: impl IntoIterator<Item = &'a ActivationTrace>) -> Self {
        let mut merged = Self::new();
        for trace in traces {
            merged.merge(trace);
        }
        merged
    }

    /// The recorded steps, ascending.
    pub fn steps(&self) -> impl Iterator<Item = u32> + '_ {
        self.steps.keys().copied()
    }

    /// Number of recorded steps.
    pub fn step_count(&self) -> usize {
        self.steps.len()
    }

    /// Whether no step was recorded.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The values of every node at `step`, by ascending node id.
    pub fn step(&self, step: u32) -> Option<&BTreeMap<u32, Vec<f64>>> {
        self.steps.get(&step)
    }

    /// The values of `node` at `step`.
    pub fn samples(&self, step: u32, node: u32) -> Option<&[f64]> {
        self.steps.get(&step)?.get(&node).map(Vec::as_slice)
    }

    /// Every step with its nodes' values, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &BTreeMap<u32, Vec<f64>>)> + '_ {
        self.steps.iter().map(|(&step, nodes)| (step, nodes))
    }

    /// The traced node ids (see [`with_traced_nodes`](Self::with_traced_nodes)).
    pub fn traced_nodes(&self) -> &BTreeSet<u32> {
        &self.traced_nodes
    }

    /// Removes a step, returning its values.
    pub fn remove_step(&mut self, step: u32) -> Option<BTreeMap<u32, Vec<f64>>> {
        self.steps.remove(&step)
    }
}

/// Serialises as Whisker's `ActivationTrace.toJSON`: steps ascending as string keys, nodes as
/// `"H:<id>"`. A `NaN` value becomes `null`, as `JSON.stringify` writes it.
impl Serialize for ActivationTrace {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// One step's node map with Whisker's node keys.
        struct StepJson<'a>(&'a BTreeMap<u32, Vec<f64>>);
        impl Serialize for StepJson<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(self.0.len()))?;
                for (node, values) in self.0 {
                    map.serialize_entry(&format!("{HIDDEN_NODE_PREFIX}{node}"), values)?;
                }
                map.end()
            }
        }
        let mut map = serializer.serialize_map(Some(self.steps.len()))?;
        for (step, nodes) in &self.steps {
            map.serialize_entry(&step.to_string(), &StepJson(nodes))?;
        }
        map.end()
    }
}

/// A node key that is neither `H:<u32>` nor a bare `u32`.
#[derive(Debug)]
struct BadKey<'a>(&'a str, &'a str);

impl fmt::Display for BadKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "activation trace: {} key {:?} is not an unsigned integer", self.0, self.1)
    }
}

/// Reads Whisker's JSON form (as `NetworkLoader.loadActivationTrace`): node keys `"H:<id>"` or a
/// bare `"<id>"`; `null` values read as `NaN`. Values are kept verbatim (no rounding) and every
/// node found counts as traced.
impl<'de> Deserialize<'de> for ActivationTrace {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = BTreeMap::<String, BTreeMap<String, Vec<Option<f64>>>>::deserialize(deserializer)?;
        let mut trace = ActivationTrace::new();
        for (step_key, nodes) in raw {
            let step: u32 = step_key.parse().map_err(|_| D::Error::custom(BadKey("step", &step_key)))?;
            let step_trace = trace.steps.entry(step).or_default();
            for (node_key, values) in nodes {
                let digits = node_key.strip_prefix(HIDDEN_NODE_PREFIX).unwrap_or(&node_key);
                let node: u32 = digits.parse().map_err(|_| D::Error::custom(BadKey("node", &node_key)))?;
                trace.traced_nodes.insert(node);
                step_trace.entry(node).or_default().extend(values.into_iter().map(|v| v.unwrap_or(f64::NAN)));
            }
        }
        Ok(trace)
    }
}
