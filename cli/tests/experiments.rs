//! Every experiment file in `experiments/` parses and validates, and expands
//! into runs over its dataset (skipped, visibly, when the corpora are absent);
//! `tuning.toml` expands to the expected grid.

use std::path::{Path, PathBuf};
use std::sync::Once;

use clowder_coordinator::experiment::{Experiment, Mutation, expand};
use clowder_datasets::manifest::Manifest;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `$CLOWDER_CORPORA`, defaulting to `../shared/corpora` from the repository
/// root. Exported to the process once (experiment files expand it), before any
/// test reads it.
fn corpora() -> PathBuf {
    static SET: Once = Once::new();
    SET.call_once(|| {
        if std::env::var_os("CLOWDER_CORPORA").is_none() {
            let default = repo().join("../shared/corpora");
            // SAFETY: every test in this binary calls `corpora()` before reading the
            // environment, and `Once` makes the others wait until this write is done.
            unsafe { std::env::set_var("CLOWDER_CORPORA", default) };
        }
    });
    PathBuf::from(std::env::var_os("CLOWDER_CORPORA").unwrap_or_default())
}

fn experiment_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("experiments"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_experiment_file_parses_and_expands() {
    corpora();
    let files = experiment_files();
    let names: Vec<String> = files.iter().map(|p| p.file_stem().unwrap().to_string_lossy().to_string()).collect();
    for expected in ["random-sample", "rq1", "smoke", "top1000", "tuning"] {
        assert!(names.iter().any(|n| n == expected), "experiments/{expected}.toml is missing: {names:?}");
    }
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        // Test experiments read Whisker's suites from outside the repository.
        if text.contains("$CLOWDER_WHISKER_EXAMPLES") && std::env::var_os("CLOWDER_WHISKER_EXAMPLES").is_none() {
            drop(std::io::Write::write_fmt(
                &mut std::io::stderr(),
                format_args!("SKIP: {}: set CLOWDER_WHISKER_EXAMPLES to load its suites\n", f.display()),
            ));
            continue;
        }
        let exp = Experiment::load(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let stem = f.file_stem().unwrap().to_string_lossy();
        assert_eq!(exp.spec.name, stem, "{}: name should match the file name", f.display());
        assert!(text.starts_with('#'), "{}: starts with a comment header saying what it reproduces", f.display());
        // A split's manifest may be committed while the files it references are absent.
        let files_dir = match Manifest::read(&exp.dataset_path) {
            Ok(Some(m)) => m.files_dir(&exp.dataset_path),
            _ => exp.dataset_path.clone(),
        };
        if !files_dir.exists() {
            // Straight to stderr: libtest captures eprintln!, and a SKIP must show.
            drop(std::io::Write::write_fmt(
                &mut std::io::stderr(),
                format_args!("SKIP: {} expansion: dataset files {} are absent\n", f.display(), files_dir.display()),
            ));
            continue;
        }
        let projects = match clowder_datasets::discover(&exp.dataset_path) {
            Ok(p) => p,
            Err(e) => panic!("{}: {e}", f.display()),
        };
        let runs = expand(&exp, &projects);
        assert!(!projects.is_empty(), "{}: no projects", f.display());
        // A test experiment runs each suite on its projects (every one must match a project).
        let entries: usize = if exp.suites.is_empty() {
            projects.len() * exp.configuration_count()
        } else {
            exp.suites
                .iter()
                .map(|s| {
                    let n = projects.iter().filter(|p| s.applies_to(&p.name)).count();
                    let named = s.projects.as_ref().map_or(n, |p| p.len());
                    assert!(n > 0 && n == named, "{}: suite {} runs on {n} projects", f.display(), s.name);
                    assert!(s.exclude.iter().all(|x| projects.iter().any(|p| &p.name == x)), "{}", f.display());
                    n
                })
                .sum()
        };
        assert_eq!(runs.len(), entries * exp.seeds.len(), "{}", f.display());
        let mut ids: Vec<&str> = runs.iter().map(|r| r.run_id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), runs.len(), "{}: run identities are unique", f.display());
        eprintln!("{}: {} projects -> {} runs", f.display(), projects.len(), runs.len());
    }
}

#[test]
fn study_files_use_the_papers_setup() {
    corpora();
    for name in ["random-sample", "top1000", "rq1"] {
        let exp = Experiment::load(&repo().join(format!("experiments/{name}.toml"))).unwrap();
        let algos: Vec<&str> = exp.algorithms.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(algos, ["random", "mosa", "mio"], "{name}");
        assert_eq!(exp.seeds, (1..=20).collect::<Vec<u64>>(), "{name}: 20 repetitions");
        assert_eq!(exp.budget, clowder_testgen::Budget::Steps(180_000), "{name}: 6 000 000 ms of Scratch time");
        assert_eq!(exp.mutation(), Mutation::All, "{name}: mutation analysis on");
    }
}

/// The tuning split is committed as a manifest that references
/// `$CLOWDER_CORPORA/random-sample` (no copies): 40 projects.
const TUNING_PROJECTS: usize = 40;
/// 3 population sizes × 3 crossover probabilities (MOSA) + 2 start probabilities (MIO).
const TUNING_CONFIGS: usize = 11;
const TUNING_SEEDS: usize = 10;

#[test]
fn tuning_expands_to_the_grid() {
    let corpora = corpora();
    let exp = Experiment::load(&repo().join("experiments/tuning.toml")).unwrap();
    let labels: Vec<&str> = exp.algorithms.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(labels.len(), TUNING_CONFIGS, "{labels:?}");
    assert_eq!(labels[0], "mosa[crossover_probability=0.5,population_size=10]");
    assert!(labels.contains(&"mosa[crossover_probability=0.9,population_size=50]"), "{labels:?}");
    assert!(labels.contains(&"mio[random_selection_probability_start=0.5]"), "{labels:?}");
    assert_eq!(exp.seeds.len(), TUNING_SEEDS);
    let split = Manifest::read(&exp.dataset_path).unwrap().expect("the tuning split's manifest is committed");
    assert_eq!(split.dataset.root.as_deref(), Some("$CLOWDER_CORPORA/random-sample"));
    assert_eq!(split.projects.len(), TUNING_PROJECTS);
    assert!(split.projects.iter().all(|e| e.load_error.is_empty()), "the split holds loadable projects only");
    if !corpora.join("random-sample").exists() {
        // Straight to stderr: libtest captures eprintln!, and a SKIP must show.
        drop(std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("SKIP: tuning expansion: {} is absent\n", corpora.join("random-sample").display()),
        ));
        return;
    }
    let projects = clowder_datasets::discover(&exp.dataset_path).unwrap();
    assert_eq!(expand(&exp, &projects).len(), 4400, "40 projects × 11 configurations × 10 seeds");
    assert_eq!(4400, TUNING_PROJECTS * TUNING_CONFIGS * TUNING_SEEDS);
}

#[test]
fn the_documented_command_rebuilds_the_tuning_split() {
    let corpora = corpora();
    let source = corpora.join("random-sample");
    if !source.exists() {
        // Straight to stderr: libtest captures eprintln!, and a SKIP must show.
        drop(std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("SKIP: tuning split rebuild: {} is absent\n", source.display()),
        ));
        return;
    }
    // experiments/tuning.toml documents: clowder dataset sample '$CLOWDER_CORPORA/random-sample'
    //   --n 40 --seed 2022 --exclude-unloadable --reference --out datasets/tuning
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tuning");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_clowder"))
        .env("CLOWDER_CORPORA", &corpora)
        .args(["dataset", "sample", "$CLOWDER_CORPORA/random-sample", "--n", "40", "--seed", "2022"])
        .args(["--exclude-unloadable", "--reference", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let rebuilt = Manifest::read(&out).unwrap().unwrap();
    let committed = Manifest::read(&repo().join("datasets/tuning")).unwrap().unwrap();
    let files = |m: &Manifest| m.projects.iter().map(|e| (e.file.clone(), e.hash.clone())).collect::<Vec<_>>();
    assert_eq!(files(&rebuilt), files(&committed));
}
