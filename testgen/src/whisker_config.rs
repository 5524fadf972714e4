//! Reading Whisker's JSON configuration files (`mio.json`, `mosa.json`,
//! `randomSearch.json` of the emse22 study, and `neatest.json` of v0.7 / master) into an
//! [`AlgorithmConfig`].
//!
//! Only parameters that differ from clowder's defaults (the study's values)
//! are kept, so importing the study's own files gives the plain default
//! configurations (and the same run identities). Settings clowder does not
//! implement (other algorithms, event selectors, extractors, fitness
//! functions) are errors; logging and assertion switches are ignored.

use serde_json::Value;

use crate::config::{Algorithm, AlgorithmConfig, Params};

/// A Whisker configuration mapped onto clowder's.
#[derive(Debug, Clone, PartialEq)]
pub struct WhiskerConfig {
    /// The configuration.
    pub config: AlgorithmConfig,
    /// The budget of the `fixedTime` stopping condition in VM steps (Scratch
    /// milliseconds × 30 / 1000), if there is one: the study's 6 000 000 ms
    /// are 180 000 steps.
    pub budget_steps: Option<u64>,
}

fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    Some(cur)
}

/// Parses a Whisker configuration file's text.
pub fn parse(text: &str) -> Result<WhiskerConfig, String> {
    if text.len() > 1 << 20 {
        return Err("Whisker configuration larger than 1 MiB".into());
    }
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let alg_name = get(&v, &["algorithm"]).and_then(Value::as_str).ok_or("no \"algorithm\"")?;
    let algorithm = match alg_name {
        "random" => Algorithm::Random,
        "mosa" => Algorithm::Mosa,
        "mio" => Algorithm::Mio,
        "neatest" => return parse_neatest(&v),
        other => return Err(format!("algorithm {other:?} is not supported (random, mosa, mio, neatest)")),
    };
    if let Some(x) = get(&v, &["extractor"]).and_then(Value::as_str)
        && !matches!(x, "dynamic" | "static")
    {
        return Err(format!("extractor {x:?} is not supported (dynamic, static)"));
    }
    if let Some(x) = get(&v, &["eventSelector"]).and_then(Value::as_str)
        && x != "interleaving"
    {
        return Err(format!("eventSelector {x:?} is not supported (interleaving)"));
    }
    if let Some(x) = get(&v, &["fitnessFunction", "type"]).and_then(Value::as_str)
        && x != "statement"
    {
        return Err(format!("fitness function {x:?} is not supported (statement)"));
    }
    if let Some(x) = get(&v, &["chromosome", "type"]).and_then(Value::as_str)
        && x != "variableLengthTest"
    {
        return Err(format!("chromosome type {x:?} is not supported (variableLengthTest)"));
    }
    if let Some(x) = get(&v, &["mutation", "operator"]).and_then(Value::as_str)
        && x != "variableLength"
    {
        return Err(format!("mutation operator {x:?} is not supported (variableLength)"));
    }
    if let Some(x) = get(&v, &["crossover", "operator"]).and_then(Value::as_str)
        && x != "singlePointRelative"
    {
        return Err(format!("crossover operator {x:?} is not supported (singlePointRelative)"));
    }
    let mut cfg = AlgorithmConfig::new(algorithm);
    let mut set = |key: &str, val: Option<&Value>| {
        if let Some(val) = val
            && (val.is_number() || val.is_boolean())
        {
            cfg.params.insert(key.to_string(), val.clone());
        }
    };
    set("min_events", get(&v, &["chromosome", "minSampleLength"]));
    set("max_events", get(&v, &["chromosome", "maxSampleLength"]));
    set("max_length", get(&v, &["chromosome", "maxLength"]));
    set("gaussian_mutation_power", get(&v, &["mutation", "gaussianMutationPower"]));
    set("wait_upper_bound", get(&v, &["durations", "waitStepUpperBound"]));
    set("press_duration", get(&v, &["durations", "pressDuration"]));
    set("click_duration", get(&v, &["durations", "clickDuration"]));
    set("sound_duration", get(&v, &["durations", "soundDuration"]));
    set("codon_min", get(&v, &["integerRange", "min"]));
    set("codon_max", get(&v, &["integerRange", "max"]));
    set("minimize", get(&v, &["minimize"]));
    if algorithm == Algorithm::Mosa {
        set("population_size", get(&v, &["populationSize"]));
        set("crossover_probability", get(&v, &["crossover", "probability"]));
        set("mutation_probability", get(&v, &["mutation", "probability"]));
    }
    if algorithm == Algorithm::Mio {
        set("start_of_focused_phase", get(&v, &["startOfFocusedPhase"]));
        set("max_mutation_count_start", get(&v, &["mutation", "maxMutationCountStart"]));
        set("max_mutation_count_focused", get(&v, &["mutation", "maxMutationCountFocusedPhase"]));
        set("random_selection_probability_start", get(&v, &["selection", "randomSelectionProbabilityStart"]));
        set("random_selection_probability_focused", get(&v, &["selection", "randomSelectionProbabilityFocusedPhase"]));
        set("archive_size_start", get(&v, &["archive", "maxArchiveSizeStart"]));
        set("archive_size_focused", get(&v, &["archive", "maxArchiveSizeFocusedPhase"]));
    }
    if let Some(x) = get(&v, &["extractor"]).and_then(Value::as_str) {
        cfg.params.insert("dynamic_extraction".into(), Value::Bool(x == "dynamic"));
    }
    // Local search: absent means none.
    let (mut ext, mut new_ev, mut red) = (0.0, 0.5, 0.0);
    if let Some(Value::Array(ops)) = get(&v, &["localSearch"]) {
        for op in ops {
            match op.get("type").and_then(Value::as_str) {
                Some("Extension") => {
                    ext = op.get("probability").and_then(Value::as_f64).unwrap_or(0.0);
                    new_ev = op.get("newEventProbability").and_then(Value::as_f64).unwrap_or(0.5);
                }
                Some("Reduction") => red = op.get("probability").and_then(Value::as_f64).unwrap_or(0.0),
                other => return Err(format!("local search {other:?} is not supported (Extension, Reduction)")),
            }
        }
    }
    cfg.params.insert("extension_probability".into(), serde_json::json!(ext));
    cfg.params.insert("extension_new_event_probability".into(), serde_json::json!(new_ev));
    cfg.params.insert("reduction_probability".into(), serde_json::json!(red));
    let budget_steps = fixed_time_steps(&v);
    if let Some(steps) = budget_steps {
        cfg.params.insert("schedule_steps".into(), serde_json::json!(steps));
    }
    finish(cfg, budget_steps)
}

/// The fixed-time stopping condition (Scratch-time milliseconds) as steps.
fn fixed_time_steps(v: &Value) -> Option<u64> {
    let mut budget_steps = None;
    let mut stack = vec![get(v, &["stoppingCondition"])];
    while let Some(Some(sc)) = stack.pop() {
        match sc.get("type").and_then(Value::as_str) {
            Some("fixedTime") => {
                if let Some(ms) = sc.get("duration").and_then(Value::as_f64)
                    && ms.is_finite()
                    && ms > 0.0
                {
                    budget_steps = Some((ms * 30.0 / 1000.0).round() as u64);
                }
            }
            Some("combined") => {
                if let Some(Value::Array(cs)) = sc.get("conditions") {
                    stack.extend(cs.iter().map(Some));
                }
            }
            _ => {}
        }
    }
    budget_steps
}

/// Keeps only the parameters that differ from the defaults and validates.
fn finish(mut cfg: AlgorithmConfig, budget_steps: Option<u64>) -> Result<WhiskerConfig, String> {
    let algorithm = cfg.algorithm;
    let defaults = Params::from_config(&AlgorithmConfig::new(algorithm))?;
    let keys: Vec<String> = cfg.params.keys().cloned().collect();
    for k in keys {
        let mut one = AlgorithmConfig::new(algorithm);
        one.params.insert(k.clone(), cfg.params[&k].clone());
        if Params::from_config(&one).is_ok_and(|p| p == defaults) {
            cfg.params.remove(&k);
        }
    }
    cfg.validate()?;
    Ok(WhiskerConfig { config: cfg, budget_steps })
}

/// A Neatest configuration (`config/Neuroevolution/neatest.json` of v0.7 or master). The
/// playthrough timeout becomes steps at acceleration 10; NEAT's own rates are the paper's
/// (clowder does not read them from the file: a file that changes them is not reproduced).
fn parse_neatest(v: &Value) -> Result<WhiskerConfig, String> {
    let require = |path: &[&str], allowed: &[&str]| -> Result<(), String> {
        match get(v, path).and_then(Value::as_str) {
            Some(x) if !allowed.contains(&x) => {
                Err(format!("{} {x:?} is not supported ({})", path.join("."), allowed.join(", ")))
            }
            _ => Ok(()),
        }
    };
    require(&["extractor"], &["neuroevolution"])?;
    require(&["chromosome", "type"], &["neatChromosome"])?;
    require(&["networkFitness", "type"], &["reliableStatement"])?;
    require(&["fitnessFunction", "type"], &["statement"])?;
    require(&["population", "strategy"], &["global_solutions"])?;
    let mut cfg = AlgorithmConfig::new(Algorithm::Neatest);
    let mut set = |key: &str, val: Option<&Value>| {
        if let Some(val) = val
            && (val.is_number() || val.is_boolean())
        {
            cfg.params.insert(key.to_string(), val.clone());
        }
    };
    set("population_size", get(v, &["populationSize"]));
    set("number_of_species", get(v, &["numberOfSpecies"]));
    set("switch_target_count", get(v, &["switchTargetCount"]));
    set("stable_count", get(v, &["networkFitness", "stableCount"]));
    set("random_fraction", get(v, &["population", "randomFraction"]));
    set("wait_upper_bound", get(v, &["durations", "waitStepUpperBound"]));
    set("press_duration", get(v, &["durations", "pressDuration"]));
    set("click_duration", get(v, &["durations", "clickDuration"]));
    set("sound_duration", get(v, &["durations", "soundDuration"]));
    if let Some(ms) = get(v, &["networkFitness", "timeout"]).and_then(Value::as_f64)
        && ms.is_finite()
        && ms > 0.0
    {
        // Wall-clock milliseconds at acceleration 10, 30 steps per game second.
        cfg.params.insert("play_steps".into(), serde_json::json!((ms * 10.0 * 30.0 / 1000.0).round() as u64));
    }
    if let Some(x) = get(v, &["eventSelection"]).and_then(Value::as_str) {
        cfg.params.insert("random_event_selection".into(), Value::Bool(x == "random"));
    }
    finish(cfg, fixed_time_steps(v))
}

/// Reads a Whisker configuration file.
pub fn load(path: &std::path::Path) -> Result<WhiskerConfig, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.len() > 1 << 20 {
        return Err(format!("{}: larger than 1 MiB", path.display()));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neatest_configurations_map_onto_the_paper_defaults() {
        // The keys of v0.7's config/Neuroevolution/neatest.json (the paper's values).
        let paper = r#"{"algorithm": "neatest", "eventSelection": "activation", "populationSize": 300,
            "numberOfSpecies": 10, "switchTargetCount": 5, "extractor": "neuroevolution",
            "chromosome": {"type": "neatChromosome", "activationFunction": "TANH"},
            "networkFitness": {"type": "reliableStatement", "timeout": 10000, "stableCount": 10},
            "stoppingCondition": {"type": "combined", "conditions": [{"type": "optimal"},
                {"type": "fixedTime", "duration": 828000000}]},
            "durations": {"waitStepUpperBound": 100, "clickDuration": 30, "pressDuration": 30}}"#;
        let w = parse(paper).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(w.config.algorithm, Algorithm::Neatest);
        assert!(w.config.params.is_empty(), "the paper's values are the defaults: {:?}", w.config.params);
        // 828 000 000 Scratch milliseconds (23 h at acceleration 10) as steps.
        assert_eq!(w.budget_steps, Some(24_840_000));
        // master's smaller population and longer patience.
        let master = paper.replace("300", "150").replace("\"numberOfSpecies\": 10", "\"numberOfSpecies\": 5");
        let w = parse(&master).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(w.config.params.get("population_size"), Some(&serde_json::json!(150)));
        assert_eq!(w.config.params.get("number_of_species"), Some(&serde_json::json!(5)));
        assert!(parse(&paper.replace("neuroevolution", "dynamic")).is_err());
    }

    #[test]
    fn the_study_files_are_the_defaults() {
        let dir = std::env::var("CLOWDER_CORPORA")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|_| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora"))
            .join("whisker-configs");
        if !dir.is_dir() {
            // Straight to stderr: libtest captures eprintln!, and a SKIP must show.
            drop(std::io::Write::write_fmt(
                &mut std::io::stderr(),
                format_args!("SKIP: {} not found (set CLOWDER_CORPORA)\n", dir.display()),
            ));
            return;
        }
        for (file, alg) in
            [("mio.json", Algorithm::Mio), ("mosa.json", Algorithm::Mosa), ("randomSearch.json", Algorithm::Random)]
        {
            let w = load(&dir.join(file)).expect("loads");
            assert_eq!(w.config, AlgorithmConfig::new(alg), "{file}");
            assert_eq!(w.budget_steps, Some(180_000), "{file}: 6 000 000 ms of Scratch time");
        }
        assert!(load(&dir.join("oneplusone.json")).unwrap_err().contains("onePlusOne"));
    }

    #[test]
    fn values_map_onto_parameters() {
        let w = parse(
            r#"{"algorithm": "mio", "chromosome": {"type": "variableLengthTest", "maxLength": 30},
                "mutation": {"operator": "variableLength", "maxMutationCountFocusedPhase": 5},
                "archive": {"maxArchiveSizeStart": 10}, "durations": {"waitStepUpperBound": 50},
                "localSearch": [{"type": "Extension", "probability": 0.1, "newEventProbability": 0.5}],
                "stoppingCondition": {"type": "combined", "conditions": [{"type": "fixedTime", "duration": 60000},
                                      {"type": "optimal"}]}}"#,
        )
        .expect("parses");
        let p = &w.config.params;
        assert_eq!(p["max_length"], serde_json::json!(30));
        assert_eq!(p["max_mutation_count_focused"], serde_json::json!(5));
        assert_eq!(p["archive_size_start"], serde_json::json!(10));
        assert_eq!(p["wait_upper_bound"], serde_json::json!(50));
        assert_eq!(p["extension_probability"], serde_json::json!(0.1));
        assert_eq!(p["reduction_probability"], serde_json::json!(0.0));
        assert_eq!(w.budget_steps, Some(1800));
        assert!(parse(r#"{"algorithm": "mio", "eventSelector": "clustering"}"#).is_err());
        assert!(parse("[]").is_err());
    }
}
