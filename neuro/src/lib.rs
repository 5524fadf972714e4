//! Neuroevolution for test generation, as Whisker's `whiskerNet` (Neatest, Feldmeier & Fraser,
//! ASE 2022): networks and their genome, NEAT (speciation, crossover, mutation), Whisker's JSON
//! format for networks and dynamic test suites, and surprise adequacy of node activations.
//!
//! Nothing here knows Scratch: inputs are named `(sprite, feature)` values and outputs are event
//! identifiers (strings); `clowder-testgen` connects them to the VM. Every random draw goes
//! through [`Random`], so a run is a function of its seed.

pub mod error;
pub mod innovation;
pub mod json;
pub mod neat;
pub mod network;
pub mod params;
pub mod surprise;
mod util;

pub use error::NeuroError;
pub use innovation::Innovations;
pub use json::{DynamicSuite, VersionHint};
pub use neat::{Member, NeatPopulation, Species};
pub use network::{
    ActivationFunction, ConnectionGene, ConnectionMethod, EventSpec, Features, Network, NodeGene, NodeId, NodeKind,
    WhiskerVersion,
};
pub use params::NeatParams;

/// The random draws NEAT needs; `clowder-testgen`'s seeded stream implements it.
pub trait Random {
    /// A double in `[0, 1)`.
    fn next_double(&mut self) -> f64;
    /// An integer in `[min, max)` (`min` when the range is empty).
    fn next_int(&mut self, min: i64, max: i64) -> i64;
    /// A gaussian sample.
    fn gaussian(&mut self, mean: f64, std: f64) -> f64;
}
