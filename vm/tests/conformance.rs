//! scratch-vm's own conformance projects (say protocol: `pass`, `fail`,
//! `plan N`, `end`) under the oracle's deterministic settings: seed 0, green
//! flag at step 0, up to 3000 steps, stop after the step in which `end` was said
//! or that leaves no live thread. Every project whose verdict in `RESULTS.tsv`
//! (the real scratch-vm under the same semantics) is PASS must pass here, and
//! the others must get the same verdict as scratch-vm.

use std::path::PathBuf;
use std::sync::Arc;

use clowder_vm::{LoadLimits, Project, Vm, VmOptions};

fn corpora() -> Option<PathBuf> {
    let dir = std::env::var_os("CLOWDER_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora"));
    dir.is_dir().then_some(dir)
}

#[derive(Default)]
struct SayProtocol {
    passes: u32,
    fails: Vec<String>,
    plans: Vec<f64>,
    ended: bool,
    after_end: u32,
}

impl SayProtocol {
    fn on_say(&mut self, text: &str) {
        let t = text.trim_start_matches(|c: char| c.is_whitespace());
        let leading_ws = t.len() != text.len();
        // JS: text.split(/\s+/, 1)[0] is "" when the text starts with whitespace.
        let command =
            if leading_ws { String::new() } else { t.split(char::is_whitespace).next().unwrap_or("").to_lowercase() };
        let rest = text[command.len().min(text.len())..].trim();
        if !matches!(command.as_str(), "pass" | "fail" | "plan" | "end") {
            return;
        }
        if self.ended {
            self.after_end += 1;
            return;
        }
        match command.as_str() {
            "pass" => self.passes += 1,
            "fail" => self.fails.push(rest.to_string()),
            "plan" => self.plans.push(clowder_vm::value::js_string_to_number(rest)),
            _ => self.ended = true,
        }
    }

    fn verdict(&self, timed_out: bool) -> &'static str {
        let asserts = self.passes as f64 + self.fails.len() as f64;
        if !self.fails.is_empty() || self.plans.len() > 1 || self.after_end > 0 {
            return "FAIL";
        }
        if !self.ended {
            return if timed_out { "TIMEOUT" } else { "NO_END" };
        }
        if self.plans.len() == 1 && self.plans[0] != asserts {
            return "PLAN_MISMATCH";
        }
        "PASS"
    }
}

fn run(path: &std::path::Path) -> Result<(&'static str, String), String> {
    let project = Project::load_path(path, &LoadLimits::default()).map_err(|e| e.to_string())?;
    let mut vm = Vm::new(Arc::new(project), VmOptions { seed: 0, record_say: true, ..VmOptions::default() });
    let mut proto = SayProtocol::default();
    vm.green_flag();
    let mut timed_out = false;
    loop {
        if vm.steps() >= 3000 {
            timed_out = true;
            break;
        }
        if vm.step() == clowder_vm::StepOutcome::Hang {
            return Ok(("HANG", format!("hang in step {}", vm.steps() - 1)));
        }
        for e in vm.take_say_events() {
            proto.on_say(&e.text);
        }
        if proto.ended || vm.live_threads() == 0 {
            break;
        }
    }
    let detail = format!(
        "pass={} fail={} plan={:?} steps={} fails={:?}",
        proto.passes,
        proto.fails.len(),
        proto.plans,
        vm.steps(),
        proto.fails
    );
    Ok((proto.verdict(timed_out), detail))
}

#[test]
fn conformance_projects_match_scratch_vm() {
    let Some(dir) = corpora() else {
        // Straight to stderr: libtest captures eprintln!, and a SKIP must show.
        drop(std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("SKIP: corpora folder not found (set CLOWDER_CORPORA)\n"),
        ));
        return;
    };
    let dir = dir.join("conformance");
    let Ok(results) = std::fs::read_to_string(dir.join("RESULTS.tsv")) else {
        // Straight to stderr: libtest captures eprintln!, and a SKIP must show.
        drop(std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("SKIP: {} has no RESULTS.tsv\n", dir.display()),
        ));
        return;
    };
    let mut expected_pass = 0;
    let mut passed = 0;
    let mut wrong = Vec::new();
    for line in results.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (Some(file), Some(want)) = (cols.first(), cols.get(1)) else { continue };
        let got = run(&dir.join(file));
        let (verdict, detail) = match &got {
            Ok((v, d)) => (*v, d.clone()),
            Err(e) => ("ERROR", e.clone()),
        };
        if *want == "PASS" {
            expected_pass += 1;
            if verdict == "PASS" {
                passed += 1;
            }
        }
        if verdict != *want {
            wrong.push(format!("{file}: ours {verdict}, scratch-vm {want} ({detail})"));
        }
    }
    eprintln!(
        "conformance: {passed}/{expected_pass} of the projects scratch-vm passes under the deterministic semantics pass"
    );
    assert!(wrong.is_empty(), "verdicts differing from scratch-vm:\n{}", wrong.join("\n"));
    assert_eq!(expected_pass, 58, "RESULTS.tsv should list 58 PASS projects");
}
