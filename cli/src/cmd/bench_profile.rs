//! `clowder bench vm --op-profile FILE`: where the interpreter's time goes, per opcode, on the
//! projects of the benchmark (issue 36). Needs a build with the `op-profile` feature, which
//! times every block and reporter; its times are shares, not speeds.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use clowder_vm::Project;
use clowder_vm::trace::TraceInput;

/// (kind, opcode).
type Key = (String, String);
/// (count, self ns).
type Total = (u64, f64);

/// Rows of every profiled project, then the totals over them all.
#[derive(Default)]
pub struct OpProfiles {
    rows: Vec<String>,
    /// Over every project.
    total: std::collections::BTreeMap<Key, Total>,
    steps: u64,
}

/// Whether this build can profile (so a missing feature is reported before any work).
pub fn check_available() -> anyhow::Result<()> {
    if cfg!(feature = "op-profile") {
        Ok(())
    } else {
        anyhow::bail!(
            "--op-profile needs a profiling build: cargo build --release -p clowder-cli --features op-profile --target-dir target/op-profile \
             (it times every block, so it is never the study binary)"
        )
    }
}

impl OpProfiles {
    /// Runs `project` once more under the profile and keeps its rows.
    #[cfg(feature = "op-profile")]
    pub fn profile(&mut self, name: &str, project: &Arc<Project>, inputs: &[TraceInput], steps: u64, seed: u64) {
        // The same run unprofiled first: the profile's measuring cost is scaled to match it.
        let (plain, _, _) = super::bench::run_ours(project, inputs, steps, seed);
        clowder_vm::op_profile::reset();
        let _ = super::bench::run_ours(project, inputs, steps, seed);
        let rows = clowder_vm::op_profile::take(project, Some(plain.as_secs_f64() * 1e9));
        self.steps += steps;
        let timed: f64 = rows.iter().map(|r| r.self_ns).sum();
        for r in rows {
            self.rows.push(row(name, r.kind, &r.name, r.count, steps, r.self_ns, timed));
            let e = self.total.entry((r.kind.to_string(), r.name)).or_insert((0, 0.0));
            e.0 += r.count;
            e.1 += r.self_ns;
        }
    }

    /// Without the feature there is nothing to run ([`check_available`] said so).
    #[cfg(not(feature = "op-profile"))]
    pub fn profile(&mut self, _: &str, _: &Arc<Project>, _: &[TraceInput], _: u64, _: u64) {}

    /// Writes the table (per project, then `ALL`) and prints the largest totals.
    pub fn write(&self, out: &Path) -> anyhow::Result<()> {
        let timed: f64 = self.total.values().map(|v| v.1).sum();
        let mut total: Vec<(&Key, &Total)> = self.total.iter().collect();
        total.sort_by(|a, b| b.1.1.total_cmp(&a.1.1).then_with(|| a.0.cmp(b.0)));
        let mut text = String::from("project\tkind\topcode\tcount\tper_step\tself_ms\tns_each\tshare\n");
        for r in &self.rows {
            text.push_str(r);
        }
        for ((kind, name), (count, ns)) in &total {
            text.push_str(&row("ALL", kind, name, *count, self.steps, *ns, timed));
        }
        std::fs::write(out, text).with_context(|| format!("writing {}", out.display()))?;
        println!("# op profile (self time, measuring cost taken out; every project's steps together), top 20:");
        for ((kind, name), (count, ns)) in total.iter().filter(|(k, _)| k.0 != "event").take(20) {
            // The scheduler's bucket has no executions: no count and no time per execution.
            let each = if *count > 0 {
                format!(
                    "{:>8.1} per step  {:>6.1} ns each",
                    *count as f64 / self.steps.max(1) as f64,
                    ns / *count as f64
                )
            } else {
                String::new()
            };
            println!("#   {:>5.1} %  {kind:<8} {name:<24} {each}", 100.0 * ns / timed.max(1.0));
        }
        println!("# the whole table: {}", out.display());
        Ok(())
    }
}

fn row(project: &str, kind: &str, name: &str, count: u64, steps: u64, ns: f64, timed: f64) -> String {
    let each = if count > 0 && kind != "event" { format!("{:.2}", ns / count as f64) } else { String::new() };
    format!(
        "{project}\t{kind}\t{name}\t{count}\t{:.2}\t{:.3}\t{each}\t{:.4}\n",
        count as f64 / steps.max(1) as f64,
        ns / 1e6,
        ns / timed.max(1.0),
    )
}
