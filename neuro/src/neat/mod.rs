//! NEAT as Whisker's Neatest runs it: initial networks ([`generator`]), mutation
//! ([`mutation`]), crossover ([`crossover`]), compatibility distance and speciation
//! ([`species`]) and the generational step ([`population`]).
//!
//! The NEAT details follow Whisker master unless [`crate::NeatParams::version`] is
//! [`crate::WhiskerVersion::V07`], which switches to the paper artifact's variants where they
//! differ: gene-aligned crossover with the 75 % disabled-gene rule and a repair step (master
//! clones the fitter parent and only mixes weights), un-normalised compatibility distance (master
//! divides excess and disjoint counts by the larger genome size), threshold floor 1 (master 0.1),
//! first member as species representative (master picks the offspring closest to the previous
//! representative), at least one parent per species, the inverted interspecies-mating test
//! (`nextDouble() < interspeciesRate` mates *within* the species), weight mutation before the
//! other non-structural mutations, the toggle mutation's "keep another outgoing connection"
//! guard, no re-breeding of defect children, and trimming the population to its size.
//!
//! Not ported from v0.7: its own fullyHidden/sparse layouts (one hidden node per sprite *and*
//! one for the bias, local hidden ids) and `isRecurrentPath`; recurrence is decided by depth in
//! both versions. Gradient descent (master's `neatestBackprop`) is not ported.
//!
//! Deliberate differences from Whisker: loops that could spin forever in Whisker (a mutation
//! whose probabilities are all zero, a species whose children are all defect) stop after a
//! bounded number of attempts; children are reset after the defect check so their evaluation
//! does not start from the dummy activation's state.

pub mod crossover;
pub mod generator;
pub mod mutation;
pub mod population;
pub mod species;

pub use crossover::crossover;
pub use generator::generate_network;
pub use mutation::mutate;
pub use population::{Member, NeatPopulation};
pub use species::{Species, compatibility_distance};
