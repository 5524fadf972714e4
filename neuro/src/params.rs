//! NEAT hyper-parameters (Whisker's `NeuroevolutionTestGenerationParameter`, read from a
//! `config/Neuroevolution/*.json` file as `WhiskerSearchConfiguration` does).
//!
//! Defaults are the paper's configuration (v0.7 `config/Neuroevolution/neatest.json`): 300
//! networks, 10 target species, TANH hidden nodes, fullyHidden inputs. Master's neatest.json
//! differs in `populationSize` 150, `numberOfSpecies` 5, RELU, `addConnectionTries` 10,
//! `mutateWeights` 0.8, `switchTargetCount` 10; pass it to [`NeatParams::from_config`].

use serde_json::Value;

use crate::error::NeuroError;
use crate::network::{ActivationFunction, ConnectionMethod, WhiskerVersion};

/// NEAT hyper-parameters; field docs give the config key.
#[derive(Debug, Clone, PartialEq)]
pub struct NeatParams {
    /// `populationSize`.
    pub population_size: usize,
    /// `numberOfSpecies`: target number of species for the adaptive threshold.
    pub number_of_species: usize,
    /// `parentsPerSpecies`: fraction of each species allowed to reproduce.
    pub parents_per_species: f64,
    /// `penalizingAge`: generations without improvement before a species is penalised.
    pub penalizing_age: u64,
    /// `ageSignificance`: fitness boost of species up to 10 generations old.
    pub age_significance: f64,
    /// `chromosome.activationFunction`: hidden-node activation.
    pub activation_function: ActivationFunction,
    /// `chromosome.inputConnectionMethod`.
    pub connection_method: ConnectionMethod,
    /// Probability of adding further sprites in the sparse method (Whisker's `inputRate`, 0.3).
    pub input_rate: f64,
    /// `crossover.crossoverWithoutMutation`.
    pub crossover_without_mutation: f64,
    /// `crossover.interspeciesRate`.
    pub interspecies_mating: f64,
    /// `crossover.weightAverageRate`.
    pub weight_average_rate: f64,
    /// `mutation.mutationWithoutCrossover`.
    pub mutation_without_crossover: f64,
    /// `mutation.mutationAddConnection`.
    pub mutation_add_connection: f64,
    /// `mutation.recurrentConnection`.
    pub recurrent_connection: f64,
    /// `mutation.addConnectionTries`.
    pub add_connection_tries: u32,
    /// `mutation.populationChampionNumberOffspring`.
    pub population_champion_number_offspring: u32,
    /// `mutation.populationChampionNumberClones`.
    pub population_champion_number_clones: u32,
    /// `mutation.populationChampionConnectionMutation`.
    pub population_champion_connection_mutation: f64,
    /// `mutation.mutationAddNode`.
    pub mutation_add_node: f64,
    /// `mutation.mutateWeights`.
    pub mutate_weights: f64,
    /// `mutation.perturbationPower`.
    pub perturbation_power: f64,
    /// `mutation.mutateToggleEnableConnection`.
    pub mutate_toggle_enable_connection: f64,
    /// `mutation.toggleEnableConnectionTimes`.
    pub toggle_enable_connection_times: u32,
    /// `mutation.mutateEnableConnection`.
    pub mutate_enable_connection: f64,
    /// `compatibility.distanceThreshold`: initial speciation threshold.
    pub compatibility_distance_threshold: f64,
    /// `compatibility.disjointCoefficient`.
    pub disjoint_coefficient: f64,
    /// `compatibility.excessCoefficient`.
    pub excess_coefficient: f64,
    /// `compatibility.weightCoefficient`.
    pub weight_coefficient: f64,
    /// Which Whisker's NEAT details to follow (see [`crate::neat`]).
    pub version: WhiskerVersion,
}

impl Default for NeatParams {
    fn default() -> Self {
        Self {
            population_size: 300,
            number_of_species: 10,
            parents_per_species: 0.2,
            penalizing_age: 15,
            age_significance: 1.0,
            activation_function: ActivationFunction::Tanh,
            connection_method: ConnectionMethod::FullyHidden,
            input_rate: 0.3,
            crossover_without_mutation: 0.25,
            interspecies_mating: 0.001,
            weight_average_rate: 0.4,
            mutation_without_crossover: 0.25,
            mutation_add_connection: 0.05,
            recurrent_connection: 0.1,
            add_connection_tries: 50,
            population_champion_number_offspring: 3,
            population_champion_number_clones: 1,
            population_champion_connection_mutation: 0.3,
            mutation_add_node: 0.03,
            mutate_weights: 0.5,
            perturbation_power: 1.0,
            mutate_toggle_enable_connection: 0.1,
            toggle_enable_connection_times: 3,
            mutate_enable_connection: 0.03,
            compatibility_distance_threshold: 3.0,
            disjoint_coefficient: 1.0,
            excess_coefficient: 1.0,
            weight_coefficient: 0.5,
            version: WhiskerVersion::Master,
        }
    }
}

impl NeatParams {
    /// Reads a Whisker neuroevolution config; missing keys keep their defaults, present keys of
    /// the wrong type are errors.
    pub fn from_config(config: &Value, version: WhiskerVersion) -> Result<Self, NeuroError> {
        let mut p = Self { version, ..Self::default() };
        let num = |path: &[&str]| -> Result<Option<f64>, NeuroError> {
            let mut v = config;
            for key in path {
                match v.get(key) {
                    Some(next) => v = next,
                    None => return Ok(None),
                }
            }
            v.as_f64()
                .filter(|x| x.is_finite())
                .map(Some)
                .ok_or_else(|| NeuroError::format(path.join("/"), "not a finite number"))
        };
        let count = |path: &[&str]| -> Result<Option<u64>, NeuroError> {
            match num(path)? {
                Some(x) if x >= 0.0 && x.fract() == 0.0 && x <= 1.0e9 => Ok(Some(x as u64)),
                Some(_) => Err(NeuroError::format(path.join("/"), "not a small non-negative integer")),
                None => Ok(None),
            }
        };
        macro_rules! set {
            ($field:ident, $getter:ident, $($key:literal)/+) => {
                if let Some(v) = $getter(&[$($key),+])? {
                    p.$field = v.try_into().map_err(|_| NeuroError::format(stringify!($field), "out of range"))?;
                }
            };
        }
        set!(population_size, count, "populationSize");
        set!(number_of_species, count, "numberOfSpecies");
        set!(parents_per_species, num, "parentsPerSpecies");
        set!(penalizing_age, count, "penalizingAge");
        set!(age_significance, num, "ageSignificance");
        set!(crossover_without_mutation, num, "crossover" / "crossoverWithoutMutation");
        set!(interspecies_mating, num, "crossover" / "interspeciesRate");
        set!(weight_average_rate, num, "crossover" / "weightAverageRate");
        set!(mutation_without_crossover, num, "mutation" / "mutationWithoutCrossover");
        set!(mutation_add_connection, num, "mutation" / "mutationAddConnection");
        set!(recurrent_connection, num, "mutation" / "recurrentConnection");
        set!(add_connection_tries, count, "mutation" / "addConnectionTries");
        set!(population_champion_number_offspring, count, "mutation" / "populationChampionNumberOffspring");
        set!(population_champion_number_clones, count, "mutation" / "populationChampionNumberClones");
        set!(population_champion_connection_mutation, num, "mutation" / "populationChampionConnectionMutation");
        set!(mutation_add_node, num, "mutation" / "mutationAddNode");
        set!(mutate_weights, num, "mutation" / "mutateWeights");
        set!(perturbation_power, num, "mutation" / "perturbationPower");
        set!(mutate_toggle_enable_connection, num, "mutation" / "mutateToggleEnableConnection");
        set!(toggle_enable_connection_times, count, "mutation" / "toggleEnableConnectionTimes");
        set!(mutate_enable_connection, num, "mutation" / "mutateEnableConnection");
        set!(compatibility_distance_threshold, num, "compatibility" / "distanceThreshold");
        set!(disjoint_coefficient, num, "compatibility" / "disjointCoefficient");
        set!(excess_coefficient, num, "compatibility" / "excessCoefficient");
        set!(weight_coefficient, num, "compatibility" / "weightCoefficient");
        if let Some(chromosome) = config.get("chromosome") {
            if let Some(af) = chromosome.get("activationFunction") {
                p.activation_function = af
                    .as_str()
                    .and_then(ActivationFunction::from_name)
                    .ok_or_else(|| NeuroError::format("chromosome/activationFunction", "unknown"))?;
            }
            if let Some(cm) = chromosome.get("inputConnectionMethod") {
                p.connection_method = cm
                    .as_str()
                    .and_then(ConnectionMethod::from_name)
                    .ok_or_else(|| NeuroError::format("chromosome/inputConnectionMethod", "unknown"))?;
            }
        }
        if p.population_size == 0 || p.population_size > crate::json::MAX_ITEMS {
            return Err(NeuroError::format("populationSize", "must be in 1..=100000"));
        }
        Ok(p)
    }
}
