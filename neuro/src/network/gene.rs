//! Node and connection genes (Whisker's `NetworkComponents`).

use super::activation::ActivationFunction;

/// Identifier of a node; Whisker's `uID`, shared by all networks of a population for the same
/// input feature / event (see [`crate::innovation::Innovations`]).
pub type NodeId = u32;

/// What a node stands for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum NodeKind {
    /// An input feature of a sprite (`t: "I"`).
    Input {
        /// Sprite (or `Stage`) name.
        sprite: String,
        /// Feature name, e.g. `X`, `VARscore`.
        feature: String,
    },
    /// The constant 1 (`t: "B"`).
    Bias,
    /// A hidden node (`t: "H"`).
    Hidden,
    /// One output per event, softmaxed (`t: "C"`).
    Classification {
        /// Event identifier (Whisker's `stringIdentifier()`), e.g. `KeyPressEvent-right arrow`.
        event: String,
    },
    /// One output per event parameter (`t: "R"`).
    Regression {
        /// Event identifier.
        event: String,
        /// Parameter name, e.g. `Steps`, `Duration`.
        parameter: String,
    },
}

impl NodeKind {
    /// Rank of Whisker's `NodeType` enum (INPUT, BIAS, HIDDEN, OUTPUT); v0.7 sorts nodes by it.
    pub fn type_rank(&self) -> u8 {
        match self {
            Self::Input { .. } => 0,
            Self::Bias => 1,
            Self::Hidden => 2,
            Self::Classification { .. } | Self::Regression { .. } => 3,
        }
    }

    /// Input or bias: the nodes new connections never point to.
    pub fn is_input_layer(&self) -> bool {
        matches!(self, Self::Input { .. } | Self::Bias)
    }

    /// Classification or regression node.
    pub fn is_output(&self) -> bool {
        matches!(self, Self::Classification { .. } | Self::Regression { .. })
    }

    /// The JSON type letter (`t`).
    pub fn letter(&self) -> &'static str {
        match self {
            Self::Input { .. } => "I",
            Self::Bias => "B",
            Self::Hidden => "H",
            Self::Classification { .. } => "C",
            Self::Regression { .. } => "R",
        }
    }
}

/// The activation function Whisker (master) gives a regression node: chosen from the event's
/// class name (the identifier up to the first `-`), whatever the saved `aF` says.
pub fn regression_activation(event: &str) -> ActivationFunction {
    let class = event.split('-').next().unwrap_or(event);
    match class {
        "WaitEvent" | "KeyPressEvent" | "MouseDownForStepsEvent" => ActivationFunction::Sigmoid,
        "MouseMoveEvent" => ActivationFunction::Tanh,
        _ => ActivationFunction::None,
    }
}

/// A node gene plus its activation state.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeGene {
    /// Unique id (JSON `id`).
    pub id: NodeId,
    /// Kind and payload.
    pub kind: NodeKind,
    /// Activation function (JSON `aF`).
    pub activation_function: ActivationFunction,
    /// Depth in `[0, 1]`: 0 for inputs and bias, 1 for outputs, in between for hidden nodes.
    /// v0.7 networks have no depths; their hidden nodes get 0.5 (only the layered mode reads it).
    pub depth: f64,
    /// Weighted input sum of the last activation.
    pub node_value: f64,
    /// Output of the last activation.
    pub activation_value: f64,
    /// Activation value one timestep earlier (v0.7 timestep mode).
    pub last_activation_value: f64,
    /// Whisker's `activatedFlag`: the node took part in the last activation.
    pub activated: bool,
    /// How often the node has been activated.
    pub activation_count: u64,
}

impl NodeGene {
    /// A node with fresh state; bias nodes start at 1 as in Whisker.
    pub fn new(id: NodeId, kind: NodeKind, activation_function: ActivationFunction, depth: f64) -> Self {
        let bias = kind == NodeKind::Bias;
        let one = if bias { 1.0 } else { 0.0 };
        Self {
            id,
            kind,
            activation_function,
            depth,
            node_value: one,
            activation_value: one,
            last_activation_value: one,
            activated: bias,
            activation_count: u64::from(bias),
        }
    }

    /// An input node (depth 0, `NONE`).
    pub fn input(id: NodeId, sprite: &str, feature: &str) -> Self {
        let kind = NodeKind::Input { sprite: sprite.to_owned(), feature: feature.to_owned() };
        Self::new(id, kind, ActivationFunction::None, 0.0)
    }

    /// The bias node.
    pub fn bias(id: NodeId) -> Self {
        Self::new(id, NodeKind::Bias, ActivationFunction::None, 0.0)
    }

    /// A hidden node at `depth`.
    pub fn hidden(id: NodeId, depth: f64, activation_function: ActivationFunction) -> Self {
        Self::new(id, NodeKind::Hidden, activation_function, depth)
    }

    /// A classification node; Whisker creates them with `NONE`, which means softmax.
    pub fn classification(id: NodeId, event: &str) -> Self {
        Self::new(id, NodeKind::Classification { event: event.to_owned() }, ActivationFunction::None, 1.0)
    }

    /// A regression node with the activation function master derives from the event.
    pub fn regression(id: NodeId, event: &str, parameter: &str) -> Self {
        let kind = NodeKind::Regression { event: event.to_owned(), parameter: parameter.to_owned() };
        Self::new(id, kind, regression_activation(event), 1.0)
    }

    /// Whisker's `identifier()`: `I:sprite-feature`, `B`, `H:id`, `C:event`, `R:event-parameter`.
    /// It keys the population-wide node-id map and activation traces.
    pub fn identifier(&self) -> String {
        match &self.kind {
            NodeKind::Input { sprite, feature } => format!("I:{sprite}-{feature}"),
            NodeKind::Bias => "B".to_owned(),
            NodeKind::Hidden => format!("H:{}", self.id),
            NodeKind::Classification { event } => format!("C:{event}"),
            NodeKind::Regression { event, parameter } => format!("R:{event}-{parameter}"),
        }
    }

    /// Clears the activation state (Whisker's `reset()`, v0.7's `flushNodeValues`).
    pub fn reset(&mut self) {
        let fresh = Self::new(self.id, self.kind.clone(), self.activation_function, self.depth);
        *self = fresh;
    }
}

/// Innovation number of a connection gene.
pub type Innovation = u64;

/// A connection gene.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionGene {
    /// Source node id (JSON `s`).
    pub source: NodeId,
    /// Target node id (JSON `t`).
    pub target: NodeId,
    /// Weight (JSON `w`).
    pub weight: f64,
    /// Enabled (JSON `e`).
    pub enabled: bool,
    /// Innovation number (JSON `i`); not necessarily unique in hand-written files.
    pub innovation: Innovation,
    /// Recurrent (JSON `r`): master derives it from the depths, `source.depth >= target.depth`.
    pub recurrent: bool,
}
