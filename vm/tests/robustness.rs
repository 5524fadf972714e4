//! Robustness over the shared corpora (issue 3, acceptance 3): every file under
//! `$CLOWDER_CORPORA` (default `../shared/corpora` from the repository root;
//! a visible `SKIP` line when absent) either loads or is rejected with a clear
//! error, and every loaded project runs 1 000 steps (green flag at step 0)
//! within its operation budget: no panic, no hang.
//!
//! All ~1 960 files are checked (a few seconds in the dev profile, where the
//! VM is built with opt-level 2). Each project runs on a worker thread under
//! `catch_unwind`, so all failures are reported together; a panic is still a
//! failure. A watchdog declares a project hung when it has no result after
//! `PROJECT_TIMEOUT`. The per-step operation budget is lowered to
//! `OPS_PER_STEP` so that a project that spins every step costs at most 1 000
//! times that here: the budget guard is what is tested, not the study budget.
//! Real-project folders (`conformance`, `random-sample`, `whisker-*`) must
//! load; the rest (LitterBox fixtures, configs, tables) may be rejected.
//!
//! ```sh
//! CLOWDER_CORPORA=/work/shared/corpora cargo test -p clowder-vm --test robustness -- --nocapture
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clowder_vm::project::{LoadLimits, load};
use clowder_vm::{StepOutcome, Vm, VmOptions};

const STEPS: u64 = 1_000;
const OPS_PER_STEP: u64 = 200_000;
const PROJECT_TIMEOUT: Duration = Duration::from_secs(120);

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

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// What happened to one file.
#[derive(Debug)]
enum Outcome {
    Ran { hang_steps: u64 },
    Rejected { kind: &'static str, msg: String },
    Failed(String),
}

/// Loads one file and (unless `load_only`) runs it; an unclear error is a failure too.
fn check(path: &Path, load_only: bool) -> Outcome {
    let name = path.display().to_string();
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return Outcome::Failed(format!("cannot read: {e}")),
    };
    let project = match load(&bytes, &name, &LoadLimits::default()) {
        Ok(p) => p,
        Err(e) => {
            let text = e.to_string();
            if !text.starts_with(&name) || e.msg.trim().is_empty() {
                return Outcome::Failed(format!("unclear error: {text:?}"));
            }
            return Outcome::Rejected { kind: e.kind.as_str(), msg: text };
        }
    };
    if load_only {
        return Outcome::Ran { hang_steps: 0 };
    }
    let opts = VmOptions { seed: 1, max_ops_per_step: OPS_PER_STEP, ..VmOptions::default() };
    let mut vm = Vm::new(Arc::new(project), opts);
    vm.green_flag();
    let mut hang_steps = 0;
    for _ in 0..STEPS {
        if vm.step() == StepOutcome::Hang {
            hang_steps += 1;
        }
    }
    Outcome::Ran { hang_steps }
}

/// What a worker is doing: (file index, start time), or idle.
type Running = Option<(usize, Instant)>;

/// Runs `check` over `files` on worker threads with a watchdog.
fn run_all(files: Vec<PathBuf>, load_only: bool) -> Vec<(PathBuf, Outcome)> {
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
                let outcome = std::panic::catch_unwind(|| check(path, load_only)).unwrap_or_else(|p| {
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
    let mut stuck: Vec<usize> = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok((i, o)) => {
                results.insert(i, o);
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        // A worker stuck on one project is reported and abandoned (the thread
        // dies with the test process).
        if let Ok(r) = running.lock() {
            for &(i, started) in r.iter().flatten() {
                if started.elapsed() > PROJECT_TIMEOUT && !stuck.contains(&i) {
                    stuck.push(i);
                }
            }
        }
        if results.len() + stuck.len() >= files.len() {
            break;
        }
    }
    for i in stuck {
        results.insert(i, Outcome::Failed(format!("hung: no result after {PROJECT_TIMEOUT:?}")));
    }
    results.into_iter().map(|(i, o)| (files[i].clone(), o)).collect()
}

/// Folders of real projects that must all load.
const PROJECT_FOLDERS: [&str; 4] = ["conformance", "random-sample", "whisker-rq1", "whisker-integration"];

fn is_project_file(root: &Path, p: &Path) -> bool {
    let rel = p.strip_prefix(root).unwrap_or(p);
    let top = rel.components().next().map(|c| c.as_os_str().to_string_lossy().into_owned()).unwrap_or_default();
    let ext = p.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
    PROJECT_FOLDERS.contains(&top.as_str()) && (ext == "sb3" || ext == "json")
}

fn report_and_assert(root: &Path, results: &[(PathBuf, Outcome)], started: Instant, load_only: bool) {
    let mut loaded = 0;
    let mut with_hangs = 0;
    let mut rejected: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for (path, o) in results {
        match o {
            Outcome::Ran { hang_steps } => {
                loaded += 1;
                if *hang_steps > 0 {
                    with_hangs += 1;
                    eprintln!("note: {} exceeded the operation budget in {hang_steps} steps", path.display());
                }
            }
            Outcome::Rejected { kind, msg } => {
                *rejected.entry(kind).or_default() += 1;
                if load_only {
                    eprintln!("rejected ({kind}): {msg}");
                }
                if is_project_file(root, path) {
                    failures.push(format!("{}: a real project was rejected ({kind})", path.display()));
                }
            }
            Outcome::Failed(msg) => failures.push(format!("{}: {msg}", path.display())),
        }
    }
    let ran = if load_only { String::new() } else { format!(" and ran {STEPS} steps") };
    eprintln!(
        "robustness: {} files in {:.1} s: {loaded} loaded{ran} ({with_hangs} hit the per-step operation \
         budget), rejected by reason {rejected:?}, {} failures",
        results.len(),
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(failures.is_empty(), "robustness failures:\n{}", failures.join("\n"));
}

fn sweep(load_only: bool) {
    let Some(root) = corpora() else { return };
    let started = Instant::now();
    let mut files = Vec::new();
    files_under(&root, &mut files);
    assert!(!files.is_empty(), "the corpora folder {} has no files", root.display());
    let results = run_all(files, load_only);
    report_and_assert(&root, &results, started, load_only);
}

#[test]
fn corpora_files_load_or_are_rejected_clearly() {
    sweep(true);
}

#[test]
fn corpora_projects_run_1000_steps_without_panic_or_hang() {
    sweep(false);
}

/// Real projects nest reporters deeply (`large/big-block.sb3`: 740 levels of inputs, which the
/// old limit of 500 rejected, and compilation cut at 400 levels): a `say` of a `join` chain
/// nested to the default limit loads, evaluates completely and runs on a thread with a 1 MiB
/// stack, half of a spawned thread's default (compilation and evaluation recurse per level).
#[test]
fn reporters_nested_to_the_default_limit_run_on_a_small_stack() {
    let depth = LoadLimits::default().max_block_depth - 2;
    let mut blocks = serde_json::Map::new();
    blocks.insert(
        "hat".into(),
        serde_json::json!({"opcode": "event_whenflagclicked", "next": "say", "parent": null, "inputs": {},
            "fields": {}, "shadow": false, "topLevel": true, "x": 0, "y": 0}),
    );
    blocks.insert(
        "say".into(),
        serde_json::json!({"opcode": "looks_say", "next": null, "parent": "hat",
            "inputs": {"MESSAGE": [3, "j0", [10, "x"]]}, "fields": {}, "shadow": false, "topLevel": false}),
    );
    for i in 0..depth {
        let mut inputs = serde_json::json!({"STRING1": [1, [10, "a"]]});
        inputs["STRING2"] = if i + 1 < depth {
            serde_json::json!([3, format!("j{}", i + 1), [10, "b"]])
        } else {
            serde_json::json!([1, [10, "b"]])
        };
        let parent = if i == 0 { "say".to_string() } else { format!("j{}", i - 1) };
        blocks.insert(
            format!("j{i}"),
            serde_json::json!({"opcode": "operator_join", "next": null, "parent": parent, "inputs": inputs,
                "fields": {}, "shadow": false, "topLevel": false}),
        );
    }
    let costume = serde_json::json!([{"name": "c", "assetId": "78000000000000000000000000000000", "md5ext": "78000000000000000000000000000000.svg", "dataFormat": "svg",
        "rotationCenterX": 0, "rotationCenterY": 0}]);
    let project = serde_json::json!({"targets": [
        {"isStage": true, "name": "Stage", "variables": {}, "lists": {}, "broadcasts": {}, "blocks": {},
         "currentCostume": 0, "costumes": costume, "sounds": [], "volume": 100, "layerOrder": 0},
        {"isStage": false, "name": "S", "variables": {}, "lists": {}, "broadcasts": {}, "blocks": blocks,
         "currentCostume": 0, "costumes": costume, "sounds": [], "volume": 100, "layerOrder": 1, "visible": true,
         "x": 0, "y": 0, "size": 100, "direction": 90, "draggable": false, "rotationStyle": "all around"}],
        "meta": {"semver": "3.0.0"}});
    let bytes = project.to_string().into_bytes();
    let said = std::thread::Builder::new()
        .stack_size(1024 << 10)
        .spawn(move || {
            let p = load(&bytes, "deep.json", &LoadLimits::default()).expect("nested to the limit: loads");
            let mut vm = Vm::new(Arc::new(p), VmOptions { record_say: true, ..VmOptions::default() });
            vm.green_flag();
            vm.step();
            vm.take_say_events().into_iter().map(|e| e.text).next()
        })
        .expect("thread")
        .join()
        .expect("no stack overflow");
    assert_eq!(said, Some("a".repeat(depth) + "b"), "the whole chain was evaluated");
}
