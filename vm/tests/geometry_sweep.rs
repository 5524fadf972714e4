//! Every project of the corpora runs in the `default` profile — pixel geometry on, costumes
//! decoded (or approximated when the project has no assets) — without panic or hang
//! (issue 7, acceptance 3).
//!
//! Each loadable project gets a green flag and 1 000 steps of seeded inputs that exercise
//! the geometry: the mouse pointer moving over the stage, the button going down and up,
//! arrow and space keys, clicks on sprites. Projects run on worker threads under
//! `catch_unwind`; one that gives no result within `PROJECT_TIMEOUT` counts as hung. It
//! takes a few minutes on two cores (~1 950 files), so it is ignored by default:
//!
//! ```sh
//! CLOWDER_CORPORA=/work/shared/corpora cargo test -p clowder-vm --test geometry_sweep -- --ignored --nocapture
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use clowder_vm::project::{LoadLimits, load};
use clowder_vm::rng::SplitMix64;
use clowder_vm::{Profile, StepOutcome, Vm, VmOptions};

const STEPS: u64 = 1_000;
const OPS_PER_STEP: u64 = 200_000;
const PROJECT_TIMEOUT: Duration = Duration::from_secs(120);
const KEYS: [&str; 5] = ["space", "left arrow", "right arrow", "up arrow", "down arrow"];

fn corpora() -> Option<PathBuf> {
    let root = std::env::var_os("CLOWDER_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora"));
    if root.is_dir() {
        Some(root)
    } else {
        // Straight to stderr: libtest captures eprintln!, and a SKIP must show.
        drop(std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("SKIP: corpora folder {} not found (set CLOWDER_CORPORA)\n", root.display()),
        ));
        None
    }
}

fn project_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            project_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "sb3" || e == "json" || e == "sb2") {
            out.push(p);
        }
    }
}

#[derive(Debug)]
enum Outcome {
    /// Ran all steps: geometry mode, steps over the operation budget.
    Ran {
        mode: &'static str,
        hang_steps: u64,
    },
    /// Not a loadable project (rejected with an error, which the loader's own tests check).
    NotLoaded,
    Failed(String),
}

fn run_one(path: &Path) -> Outcome {
    let Ok(bytes) = std::fs::read(path) else { return Outcome::NotLoaded };
    let Ok(project) = load(&bytes, &path.display().to_string(), &LoadLimits::default()) else {
        return Outcome::NotLoaded;
    };
    let opts = VmOptions { profile: Profile::Default, seed: 1, max_ops_per_step: OPS_PER_STEP, ..VmOptions::default() };
    let mut vm = Vm::new(Arc::new(project), opts);
    let mode = vm.geometry_mode();
    let sprites: Vec<String> = vm
        .targets_in_execution_order()
        .filter(|(_, t)| !t.is_stage)
        .filter_map(|(id, _)| vm.target_name(id).map(str::to_string))
        .collect();
    let mut rng = SplitMix64::new(7);
    vm.green_flag();
    let mut hang_steps = 0;
    for k in 0..STEPS {
        match k % 10 {
            0 => vm.mouse_move(rng.next_f64() * 520.0 - 260.0, rng.next_f64() * 400.0 - 200.0),
            3 => vm.mouse_button(rng.next_f64() < 0.5),
            5 => vm.key_down(KEYS[(rng.next_u64() % KEYS.len() as u64) as usize]),
            6 => vm.key_up(KEYS[(rng.next_u64() % KEYS.len() as u64) as usize]),
            8 if !sprites.is_empty() => {
                let name = &sprites[(rng.next_u64() % sprites.len() as u64) as usize];
                vm.click_sprite(name, 0);
            }
            _ => {}
        }
        if vm.step() == StepOutcome::Hang {
            hang_steps += 1;
        }
    }
    Outcome::Ran { mode, hang_steps }
}

type Running = Option<(usize, Instant)>;

#[test]
#[ignore = "a few minutes over all corpora; run: cargo test -p clowder-vm --test geometry_sweep -- --ignored"]
fn every_corpus_project_runs_with_geometry_without_panic_or_hang() {
    let Some(root) = corpora() else { return };
    let started = Instant::now();
    let mut files = Vec::new();
    project_files(&root, &mut files);
    assert!(!files.is_empty(), "no project files under {}", root.display());
    let files = Arc::new(files);
    let next = Arc::new(AtomicUsize::new(0));
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    let running: Arc<Mutex<Vec<Running>>> = Arc::new(Mutex::new(vec![None; workers]));
    let (tx, rx) = mpsc::channel::<(usize, Outcome)>();
    for w in 0..workers {
        let (files, next, running, tx) = (files.clone(), next.clone(), running.clone(), tx.clone());
        std::thread::spawn(move || {
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(path) = files.get(i) else { break };
                if let Ok(mut r) = running.lock() {
                    r[w] = Some((i, Instant::now()));
                }
                let outcome = std::panic::catch_unwind(|| run_one(path)).unwrap_or_else(|p| {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    Outcome::Failed(format!("panicked: {msg}"))
                });
                if let Ok(mut r) = running.lock() {
                    r[w] = None;
                }
                if tx.send((i, outcome)).is_err() {
                    break;
                }
            }
        });
    }
    drop(tx);
    let mut results: BTreeMap<usize, Outcome> = BTreeMap::new();
    loop {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok((i, o)) => {
                results.insert(i, o);
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let stuck: Vec<usize> = running
            .lock()
            .map(|r| r.iter().flatten().filter(|(_, t)| t.elapsed() > PROJECT_TIMEOUT).map(|(i, _)| *i).collect())
            .unwrap_or_default();
        for i in stuck {
            results.entry(i).or_insert_with(|| Outcome::Failed(format!("hung: no result after {PROJECT_TIMEOUT:?}")));
        }
        if results.len() >= files.len() {
            break;
        }
    }
    let mut modes: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut not_loaded, mut over_budget) = (0, 0);
    let mut failures = Vec::new();
    for (i, o) in &results {
        match o {
            Outcome::Ran { mode, hang_steps } => {
                *modes.entry(mode).or_default() += 1;
                if *hang_steps > 0 {
                    over_budget += 1;
                }
            }
            Outcome::NotLoaded => not_loaded += 1,
            Outcome::Failed(msg) => failures.push(format!("{}: {msg}", files[*i].display())),
        }
    }
    eprintln!(
        "geometry sweep: {} files in {:.1} s: ran by geometry mode {modes:?} ({over_budget} hit the per-step \
         operation budget), {not_loaded} not loadable, {} failures",
        files.len(),
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}
