//! `Distances::ZeroOnly` (Random search, minimisation, assertion generation) measures a branch
//! distance only as zero or not: execution must be exactly as under `Distances::Exact`, every
//! recorded minimum must be 0 exactly where the exact one is, and the work may only drop (a
//! false `touching color` no longer walks the stage for its distance).
//!
//! Real content with costumes: every project of `whisker-rq1` and `codeclub` that asks
//! `touching color` or `color is touching color`, two VMs side by side with the oracle's
//! generic inputs and the mouse swept over the stage, under the profiles with geometry,
//! compared after every step.

use std::path::PathBuf;
use std::sync::Arc;

use clowder_vm::instrument::{CondStats, Distances};
use clowder_vm::project::{LoadLimits, Project, load};
use clowder_vm::{Profile, Vm, VmOptions};

mod common;
use common::{corpora, generic, skip_note};

/// The oracle's generic inputs, with the mouse moving over the stage (colour games follow it).
fn inputs(vm: &mut Vm, k: u64) {
    generic(vm, k);
    if k % 5 == 0 {
        let t = k as f64 / 5.0;
        vm.mouse_move((t * 37.0) % 480.0 - 240.0, (t * 23.0) % 360.0 - 180.0);
    }
}

/// Whether the zero-only statistics say what the exact ones say about zero: the same counts,
/// and each minimum 0 (or never measured) exactly where the exact one is.
fn same_zeros(exact: &[CondStats], zero: &[CondStats]) -> Option<usize> {
    let agrees = |a: f64, b: f64| (a == 0.0) == (b == 0.0) && a.is_infinite() == b.is_infinite() && b <= a;
    exact.iter().zip(zero).position(|(a, b)| {
        a.true_count != b.true_count
            || a.false_count != b.false_count
            || !agrees(a.min_to_true, b.min_to_true)
            || !agrees(a.min_to_false, b.min_to_false)
    })
}

/// Runs `project` under both modes for `steps` steps; the first difference, and the two works.
fn compare(project: &Arc<Project>, profile: Profile, steps: u64) -> (Option<String>, u64, u64) {
    let opts = |distances| VmOptions { profile, seed: 1, instrument: true, distances, ..VmOptions::default() };
    let mut exact = Vm::new(project.clone(), opts(Distances::Exact));
    let mut zero = Vm::new(project.clone(), opts(Distances::ZeroOnly));
    for k in 0..steps {
        inputs(&mut exact, k);
        inputs(&mut zero, k);
        let (a, b) = (exact.step(), zero.step());
        let (mut ra, mut rb) = (String::new(), String::new());
        exact.write_step_record(k, &mut ra);
        zero.write_step_record(k, &mut rb);
        let conds = |vm: &Vm| vm.instrument().map(|i| i.conditions().to_vec()).unwrap_or_default();
        let diff = if a != b {
            Some(format!("outcome {a:?} against {b:?}"))
        } else if ra != rb {
            Some(format!("state:\n{ra}\n{rb}"))
        } else if exact.executed_bits() != zero.executed_bits() {
            Some("blocks executed".to_string())
        } else {
            let (ce, cz) = (conds(&exact), conds(&zero));
            same_zeros(&ce, &cz).map(|i| format!("condition of block {i}: {:?} against {:?}", ce[i], cz[i]))
        };
        if let Some(d) = diff {
            return (Some(format!("step {k}: {d}")), exact.work(), zero.work());
        }
    }
    (None, exact.work(), zero.work())
}

#[test]
fn zero_only_distances_change_nothing_but_the_work() {
    let Some(root) = corpora() else {
        skip_note("corpora folder not found (set CLOWDER_CORPORA)");
        return;
    };
    let mut files: Vec<PathBuf> = ["whisker-rq1", "codeclub"]
        .iter()
        .filter_map(|d| std::fs::read_dir(root.join(d)).ok())
        .flat_map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())))
        .filter(|p| p.extension().is_some_and(|e| e == "sb3"))
        .collect();
    files.sort();
    let (mut compared, mut dropped) = (0, 0);
    for path in &files {
        let Ok(bytes) = std::fs::read(path) else { continue };
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("project.sb3");
        let Ok(project) = load(&bytes, name, &LoadLimits::default()) else { continue };
        let asks_colour = project
            .blocks
            .iter()
            .any(|b| matches!(b.opcode.as_str(), "sensing_touchingcolor" | "sensing_coloristouchingcolor"));
        if !asks_colour {
            continue;
        }
        let project = Arc::new(project);
        for profile in [Profile::Default, Profile::Whisker] {
            let (diff, work_exact, work_zero) = compare(&project, profile, 300);
            assert_eq!(diff, None, "{} {profile:?}", path.display());
            assert!(work_zero <= work_exact, "{} {profile:?}: {work_zero} > {work_exact}", path.display());
            compared += 1;
            dropped += usize::from(work_zero < work_exact);
        }
    }
    if compared == 0 {
        skip_note("no project of whisker-rq1 or codeclub asks touching color");
        return;
    }
    // Colour games whose sprites do not touch the colour all the time: some walk was saved.
    assert!(dropped > 0, "no run did less work: the zero-only mode measured as much as the exact one");
}
