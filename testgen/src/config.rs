//! Algorithm configuration: which search, its parameters and the budget.
//!
//! Parameter defaults are the Whisker study's configuration files (branch
//! `emse22`: `mio.json`, `mosa.json`, `randomSearch.json`); see
//! [`crate::whisker_config`] for reading those files directly.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The search algorithms clowder implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// Random search: random tests; the archive keeps the shortest test per target.
    Random,
    /// MOSA: many-objective sorting algorithm (Panichella et al.), memetic.
    Mosa,
    /// MIO: many independent objectives (Arcuri), memetic.
    Mio,
    /// Neatest (Feldmeier & Fraser, ASE 2022): neuroevolution of networks that play the game,
    /// one NEAT population per target statement; the suite is the networks (dynamic) and the
    /// event sequences they played (static).
    Neatest,
}

impl Algorithm {
    /// Parses an algorithm name as written in experiment files.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name.to_ascii_lowercase().as_str() {
            "random" | "randomsearch" | "random_search" => Ok(Algorithm::Random),
            "mosa" => Ok(Algorithm::Mosa),
            "mio" => Ok(Algorithm::Mio),
            "neatest" => Ok(Algorithm::Neatest),
            other => Err(format!("unknown algorithm {other:?} (known: random, mosa, mio, neatest)")),
        }
    }

    /// Canonical lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Random => "random",
            Algorithm::Mosa => "mosa",
            Algorithm::Mio => "mio",
            Algorithm::Neatest => "neatest",
        }
    }
}

/// Parameters every algorithm accepts (Whisker's `chromosome`, `durations`,
/// `integerRange`, `mutation`, `localSearch` settings and clowder's own).
pub const COMMON_PARAMS: &[&str] = &[
    "min_events",
    "max_events",
    "max_length",
    "wait_upper_bound",
    "press_duration",
    "click_duration",
    "sound_duration",
    "codon_min",
    "codon_max",
    "gaussian_mutation_power",
    "extension_probability",
    "extension_new_event_probability",
    "reduction_probability",
    "minimize",
    "assertions",
    "dynamic_extraction",
    "schedule_steps",
    "whisker_vm",
    "whisker_offline_speech",
    "whisker_maths",
];

/// Parameters whose value is a name, not a number or boolean.
pub const NAME_PARAMS: &[&str] = &["whisker_maths"];

/// Parameters of MOSA.
pub const MOSA_PARAMS: &[&str] =
    &["population_size", "crossover_probability", "mutation_probability", "mutate_parents_after_crossover"];

/// Parameters of Neatest (defaults: the paper's configuration, Whisker v0.7 `neatest.json`).
pub const NEATEST_PARAMS: &[&str] = &[
    "population_size",
    "number_of_species",
    "switch_target_count",
    "stable_count",
    "random_fraction",
    "play_steps",
    "random_event_selection",
    "whisker_v07",
    "drag_events",
];

/// Parameters of MIO.
pub const MIO_PARAMS: &[&str] = &[
    "archive_size_start",
    "archive_size_focused",
    "random_selection_probability_start",
    "random_selection_probability_focused",
    "start_of_focused_phase",
    "max_mutation_count_start",
    "max_mutation_count_focused",
];

/// An algorithm with its parameters (anything not given takes the Whisker
/// study's default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlgorithmConfig {
    /// The search algorithm.
    pub algorithm: Algorithm,
    /// Parameters by name; values are JSON scalars.
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
}

impl AlgorithmConfig {
    /// A configuration with default parameters.
    pub fn new(algorithm: Algorithm) -> Self {
        Self { algorithm, params: BTreeMap::new() }
    }

    /// Normalised JSON (sorted keys, no whitespace): part of a run's identity.
    pub fn normalized_json(&self) -> String {
        // BTreeMap keeps keys sorted, so this is canonical.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Integer parameter `key`, or `default`.
    pub fn int(&self, key: &str, default: u64) -> Result<u64, String> {
        match self.params.get(key) {
            None => Ok(default),
            Some(v) => v.as_u64().ok_or_else(|| format!("parameter {key:?} must be a non-negative integer, got {v}")),
        }
    }

    /// Number parameter `key`, or `default`.
    pub fn num(&self, key: &str, default: f64) -> Result<f64, String> {
        match self.params.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_f64()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("parameter {key:?} must be a finite number, got {v}")),
        }
    }

    /// Boolean parameter `key`, or `default`.
    pub fn flag(&self, key: &str, default: bool) -> Result<bool, String> {
        match self.params.get(key) {
            None => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| format!("parameter {key:?} must be true or false, got {v}")),
        }
    }

    /// Name parameter `key` (one of [`NAME_PARAMS`]), if given.
    pub fn text(&self, key: &str) -> Result<Option<&str>, String> {
        match self.params.get(key) {
            None => Ok(None),
            Some(v) => v.as_str().map(Some).ok_or_else(|| format!("parameter {key:?} must be a name, got {v}")),
        }
    }

    /// Checks that every parameter is known and in range.
    pub fn validate(&self) -> Result<(), String> {
        let specific: &[&str] = match self.algorithm {
            Algorithm::Random => &[],
            Algorithm::Mosa => MOSA_PARAMS,
            Algorithm::Mio => MIO_PARAMS,
            Algorithm::Neatest => NEATEST_PARAMS,
        };
        for k in self.params.keys() {
            if !COMMON_PARAMS.contains(&k.as_str()) && !specific.contains(&k.as_str()) {
                let mut known: Vec<&str> = COMMON_PARAMS.iter().chain(specific).copied().collect();
                known.sort_unstable();
                return Err(format!(
                    "unknown parameter {k:?} for algorithm {} (known: {})",
                    self.algorithm.name(),
                    known.join(", ")
                ));
            }
        }
        for (k, v) in &self.params {
            if NAME_PARAMS.contains(&k.as_str()) {
                continue; // checked by `Params::from_config`
            }
            if !(v.is_number() || v.is_boolean()) {
                return Err(format!("parameter {k:?} must be a number or boolean, got {v}"));
            }
        }
        Params::from_config(self).map(|_| ())
    }
}

/// Resolved, typed parameters of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// Shortest initial test, in events (Whisker `chromosome.minSampleLength`).
    pub min_events: u32,
    /// Initial test lengths are drawn from `[min_events, max_events)` events
    /// (Whisker `chromosome.maxSampleLength`, exclusive as in Whisker).
    pub max_events: u32,
    /// Longest test mutation and extension may produce, in events
    /// (Whisker `chromosome.maxLength`).
    pub max_length: u32,
    /// Upper bound of wait durations in steps (`durations.waitStepUpperBound`).
    pub wait_upper_bound: u32,
    /// Upper bound of key-press durations in steps (`durations.pressDuration`).
    pub press_duration: u32,
    /// Click duration in steps (`durations.clickDuration`).
    pub click_duration: u32,
    /// Sound duration in steps (`durations.soundDuration`).
    pub sound_duration: u32,
    /// Smallest codon value (`integerRange.min`).
    pub codon_min: u32,
    /// Codons are drawn from `[codon_min, codon_max)`; mutation wraps into `[codon_min, codon_max]`.
    pub codon_max: u32,
    /// Standard deviation of the gaussian codon change (`mutation.gaussianMutationPower`).
    pub gaussian_mutation_power: f64,
    /// Probability of extension local search.
    pub extension_probability: f64,
    /// Probability of choosing a newly available event during extension.
    pub extension_new_event_probability: f64,
    /// Probability of reduction local search.
    pub reduction_probability: f64,
    /// 1-minimise the final suite.
    pub minimize: bool,
    /// Dynamic event extraction (false: static, all handled events always offered).
    pub dynamic_extraction: bool,
    /// Steps over which MIO's parameters move from their start to their
    /// focused values. Whisker uses the fraction of its time budget; clowder
    /// uses this fixed horizon (default: the study's 180 000 steps) so that no
    /// decision depends on the budget of the run.
    pub schedule_steps: u64,
    /// The VM profile tests run in: `whisker` (Whisker's scratch-vm: its random stream,
    /// time counted in steps; the default, so exported suites replay in Whisker) or, with
    /// `whisker_vm = false`, `default` (scratch-vm under the fidelity oracle's rules).
    pub profile: clowder_vm::Profile,
    /// Profile `whisker` only: `speak` as Whisker runs it without access to Scratch's
    /// synthesis service, never ending (`clowder_vm::VmOptions::whisker_offline_speech`), for
    /// suites checked in a Whisker that is offline; default `false`.
    pub whisker_offline_speech: bool,
    /// Profile `whisker` only: the browser's maths library (`clowder_vm::VmOptions::whisker_maths`),
    /// key `whisker_maths` (`chromium`, `glibc` or `node`, as `clowder test --whisker-maths`);
    /// `None`, the profile's default. Dynamic-suite replays set it from `--whisker-maths`.
    pub whisker_maths: Option<clowder_vm::util::mathlib::MathLib>,
    /// MOSA population size.
    pub population_size: u32,
    /// MOSA crossover probability.
    pub crossover_probability: f64,
    /// MOSA mutation probability.
    pub mutation_probability: f64,
    /// MOSA: mutate the parents instead of the crossover offspring, discarding
    /// the offspring, as Whisker's emse22 code does (the paper mutates offspring).
    pub mutate_parents_after_crossover: bool,
    /// MIO archive size per target at the start.
    pub archive_size_start: u32,
    /// MIO archive size per target in the focused phase.
    pub archive_size_focused: u32,
    /// MIO probability of sampling a new test at the start.
    pub random_selection_probability_start: f64,
    /// MIO probability of sampling a new test in the focused phase.
    pub random_selection_probability_focused: f64,
    /// MIO start of the focused phase as a fraction of `schedule_steps`.
    pub start_of_focused_phase: f64,
    /// MIO mutations per selected test at the start.
    pub max_mutation_count_start: u32,
    /// MIO mutations per selected test in the focused phase.
    pub max_mutation_count_focused: u32,
    /// Neatest: target number of species (`numberOfSpecies`).
    pub number_of_species: u32,
    /// Neatest: generations without a better network before the target changes
    /// (`switchTargetCount`).
    pub switch_target_count: u32,
    /// Neatest: seeds a statement must be covered on to count (`networkFitness.stableCount`).
    pub stable_count: u32,
    /// Neatest: share of fresh networks in a new target's population
    /// (`population.randomFraction`).
    pub random_fraction: f64,
    /// Neatest: steps of one playthrough (`networkFitness.timeout` × acceleration × 30:
    /// 10 s at acceleration 10 is 3000).
    pub play_steps: u32,
    /// Neatest: networks choose events at random (`eventSelection: random`) instead of by
    /// their outputs.
    pub random_event_selection: bool,
    /// Neatest: Whisker v0.7's network semantics and NEAT variants (the paper's version)
    /// instead of master's.
    pub whisker_v07: bool,
    /// Neatest: networks may also drag sprites, as the other algorithms' tests do (clowder's
    /// extension, off by default: Whisker's neuroevolution offers no drags).
    pub drag_events: bool,
}

impl Params {
    /// Parameters of `cfg` with the Whisker study's defaults for missing ones.
    pub fn from_config(cfg: &AlgorithmConfig) -> Result<Params, String> {
        let neat = cfg.algorithm == Algorithm::Neatest;
        let ls = if matches!(cfg.algorithm, Algorithm::Random | Algorithm::Neatest) { 0.0 } else { 0.3 };
        let u32p = |k: &str, d: u32| -> Result<u32, String> {
            let v = cfg.int(k, d as u64)?;
            u32::try_from(v).map_err(|_| format!("parameter {k:?} is too large: {v}"))
        };
        let prob = |k: &str, d: f64| -> Result<f64, String> {
            let v = cfg.num(k, d)?;
            if (0.0..=1.0).contains(&v) { Ok(v) } else { Err(format!("parameter {k:?} must be in [0, 1], got {v}")) }
        };
        let p = Params {
            min_events: u32p("min_events", 2)?,
            max_events: u32p("max_events", 20)?,
            max_length: u32p("max_length", 20)?,
            wait_upper_bound: u32p("wait_upper_bound", 100)?,
            press_duration: u32p("press_duration", if neat { 30 } else { 5 })?,
            click_duration: u32p("click_duration", if neat { 30 } else { 1 })?,
            sound_duration: u32p("sound_duration", if neat { 10 } else { 1 })?,
            codon_min: u32p("codon_min", 0)?,
            codon_max: u32p("codon_max", 480)?,
            gaussian_mutation_power: cfg.num("gaussian_mutation_power", 5.0)?,
            extension_probability: prob("extension_probability", ls)?,
            extension_new_event_probability: prob("extension_new_event_probability", 0.5)?,
            reduction_probability: prob("reduction_probability", ls)?,
            minimize: cfg.flag("minimize", true)?,
            dynamic_extraction: cfg.flag("dynamic_extraction", true)?,
            schedule_steps: cfg.int("schedule_steps", 180_000)?,
            whisker_offline_speech: cfg.flag("whisker_offline_speech", false)?,
            whisker_maths: match cfg.text("whisker_maths")? {
                None => None,
                Some(n) => Some(
                    clowder_vm::util::mathlib::MathLib::parse_name(n)
                        .map_err(|e| format!("parameter \"whisker_maths\": {e}"))?,
                ),
            },
            profile: if cfg.flag("whisker_vm", true)? {
                clowder_vm::Profile::Whisker
            } else {
                clowder_vm::Profile::Default
            },
            population_size: u32p("population_size", if neat { 300 } else { 30 })?,
            crossover_probability: prob("crossover_probability", 0.7)?,
            mutation_probability: prob("mutation_probability", 1.0)?,
            mutate_parents_after_crossover: cfg.flag("mutate_parents_after_crossover", false)?,
            archive_size_start: u32p("archive_size_start", 15)?,
            archive_size_focused: u32p("archive_size_focused", 5)?,
            random_selection_probability_start: prob("random_selection_probability_start", 0.9)?,
            random_selection_probability_focused: prob("random_selection_probability_focused", 0.5)?,
            start_of_focused_phase: prob("start_of_focused_phase", 1.0)?,
            max_mutation_count_start: u32p("max_mutation_count_start", 0)?,
            max_mutation_count_focused: u32p("max_mutation_count_focused", 3)?,
            number_of_species: u32p("number_of_species", 10)?,
            switch_target_count: u32p("switch_target_count", 5)?,
            stable_count: u32p("stable_count", 10)?,
            random_fraction: prob("random_fraction", 0.3)?,
            play_steps: u32p("play_steps", 3000)?,
            random_event_selection: cfg.flag("random_event_selection", false)?,
            whisker_v07: cfg.flag("whisker_v07", false)?,
            drag_events: cfg.flag("drag_events", false)?,
        };
        // Read by `generate` (regression assertions, default on); checked here.
        let _ = cfg.flag("assertions", true)?;
        if p.min_events == 0 || p.min_events >= p.max_events {
            return Err(format!(
                "need 0 < min_events < max_events (initial lengths are drawn from [min, max)), got {} and {}",
                p.min_events, p.max_events
            ));
        }
        if p.max_events > 10_000 || p.max_length == 0 || p.max_length > 10_000 {
            return Err("max_events and max_length must be in 1..=10000".into());
        }
        if p.codon_max <= p.codon_min || p.codon_max > 1_000_000 {
            return Err(format!("need codon_min < codon_max <= 1000000, got {} and {}", p.codon_min, p.codon_max));
        }
        if p.wait_upper_bound == 0 || p.press_duration == 0 {
            return Err("wait_upper_bound and press_duration must be positive".into());
        }
        if p.wait_upper_bound > 100_000 || p.press_duration > 100_000 || p.click_duration > 100_000 {
            return Err("durations must be at most 100000 steps".into());
        }
        if !(0.0..=1000.0).contains(&p.gaussian_mutation_power) {
            return Err("gaussian_mutation_power must be in [0, 1000]".into());
        }
        if cfg.algorithm == Algorithm::Mosa && !(2..=10_000).contains(&p.population_size) {
            return Err(format!("population_size must be in 2..=10000, got {}", p.population_size));
        }
        if neat
            && (!(2..=10_000).contains(&p.population_size)
                || p.number_of_species == 0
                || p.stable_count == 0
                || p.stable_count > 1000
                || p.play_steps == 0)
        {
            return Err(format!(
                "Neatest needs population_size in 2..=10000 and positive number_of_species, stable_count (at \
                 most 1000) and play_steps, got {}, {}, {} and {}",
                p.population_size, p.number_of_species, p.stable_count, p.play_steps
            ));
        }
        if cfg.algorithm == Algorithm::Mio && (p.archive_size_start == 0 || p.archive_size_focused == 0) {
            return Err("MIO archive sizes must be positive".into());
        }
        if p.archive_size_start > 10_000 || p.archive_size_focused > 10_000 {
            return Err("MIO archive sizes must be at most 10000".into());
        }
        if p.schedule_steps == 0 {
            return Err("schedule_steps must be positive".into());
        }
        if p.profile != clowder_vm::Profile::Whisker && (p.whisker_maths.is_some() || p.whisker_offline_speech) {
            // The other profiles are scratch-vm under Node: they have no Whisker machine to model.
            return Err("whisker_maths and whisker_offline_speech model Whisker's machine: they need whisker_vm".into());
        }
        Ok(p)
    }
}

/// How the budget of a run is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Budget {
    /// VM steps (deterministic; the default). 30 steps are one Scratch second.
    Steps(u64),
    /// Test executions (deterministic).
    Executions(u64),
    /// Fitness evaluations (deterministic).
    Evaluations(u64),
    /// Wall-clock seconds: not reproducible, for comparison with published numbers.
    Seconds(u64),
}

impl Budget {
    /// Short name of the unit (`steps`, `executions`, `evaluations`, `seconds`).
    pub fn unit(&self) -> &'static str {
        match self {
            Budget::Steps(_) => "steps",
            Budget::Executions(_) => "executions",
            Budget::Evaluations(_) => "evaluations",
            Budget::Seconds(_) => "seconds",
        }
    }

    /// The amount in its unit.
    pub fn amount(&self) -> u64 {
        match self {
            Budget::Steps(n) | Budget::Executions(n) | Budget::Evaluations(n) | Budget::Seconds(n) => *n,
        }
    }

    /// Whether runs with this budget are reproducible (all but wall-clock budgets).
    pub fn reproducible(&self) -> bool {
        !matches!(self, Budget::Seconds(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_study_configuration() {
        let p = Params::from_config(&AlgorithmConfig::new(Algorithm::Mio)).expect("defaults valid");
        assert_eq!((p.min_events, p.max_events, p.max_length), (2, 20, 20));
        assert_eq!((p.wait_upper_bound, p.press_duration, p.codon_max), (100, 5, 480));
        assert_eq!((p.archive_size_start, p.archive_size_focused), (15, 5));
        assert_eq!((p.random_selection_probability_start, p.random_selection_probability_focused), (0.9, 0.5));
        assert_eq!((p.max_mutation_count_start, p.max_mutation_count_focused), (0, 3));
        assert_eq!((p.extension_probability, p.reduction_probability), (0.3, 0.3));
        let r = Params::from_config(&AlgorithmConfig::new(Algorithm::Random)).expect("valid");
        assert_eq!((r.extension_probability, r.reduction_probability), (0.0, 0.0));
        assert!(!p.whisker_offline_speech, "speak ends by default");
        let mut offline = AlgorithmConfig::new(Algorithm::Mio);
        offline.params.insert("whisker_offline_speech".into(), serde_json::json!(true));
        assert!(Params::from_config(&offline).expect("valid").whisker_offline_speech);
        let mut maths = AlgorithmConfig::new(Algorithm::Mio);
        assert_eq!(p.whisker_maths, None, "the profile's library by default");
        maths.params.insert("whisker_maths".into(), serde_json::json!("glibc"));
        maths.validate().expect("a known library");
        let got = Params::from_config(&maths).expect("valid").whisker_maths;
        assert_eq!(got, Some(clowder_vm::util::mathlib::MathLib::Glibc));
    }

    #[test]
    fn bad_parameters_are_rejected_with_their_name() {
        let mut c = AlgorithmConfig::new(Algorithm::Mosa);
        c.params.insert("population_size".into(), serde_json::json!(1));
        assert!(c.validate().unwrap_err().contains("population_size"));
        let mut c = AlgorithmConfig::new(Algorithm::Mio);
        c.params.insert("crossover_probability".into(), serde_json::json!(0.5));
        assert!(c.validate().unwrap_err().contains("unknown parameter"));
        let mut c = AlgorithmConfig::new(Algorithm::Random);
        c.params.insert("extension_probability".into(), serde_json::json!(1.5));
        assert!(c.validate().unwrap_err().contains("[0, 1]"));
        let mut c = AlgorithmConfig::new(Algorithm::Random);
        c.params.insert("whisker_maths".into(), serde_json::json!("v8"));
        assert!(c.validate().unwrap_err().contains("known: chromium, glibc, node"));
        c.params.insert("whisker_maths".into(), serde_json::json!(1));
        assert!(c.validate().unwrap_err().contains("must be a name"));
        c.params.insert("whisker_maths".into(), serde_json::json!("node"));
        c.params.insert("whisker_vm".into(), serde_json::json!(false));
        assert!(c.validate().unwrap_err().contains("need whisker_vm"));
        let mut c = AlgorithmConfig::new(Algorithm::Random);
        c.params.insert("max_events".into(), serde_json::json!("20"));
        assert!(c.validate().unwrap_err().contains("number or boolean"), "names only for name parameters");
    }
}
