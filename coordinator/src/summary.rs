//! The per-algorithm summary printed at the end of a study.

use std::collections::BTreeMap;

use crate::table::{RunState, RunTable};

/// Formats run counts, mean coverage and mean steps per algorithm entry. Runs ended by the
/// work cap (`limit`) are counted on their own and, like the analysis does, their (partial,
/// deterministic) results count in the means.
pub fn format(table: &RunTable) -> String {
    #[derive(Default)]
    struct Acc {
        ok: u64,
        limit: u64,
        failed: u64,
        pending: u64,
        coverage: f64,
        steps: u64,
    }
    let mut by_alg: BTreeMap<&str, Acc> = BTreeMap::new();
    for e in table.entries() {
        let a = by_alg.entry(e.run.algorithm.as_str()).or_default();
        match &e.state {
            RunState::Finished(r) if r.status == "ok" || r.status == "limit" => {
                if r.status == "ok" {
                    a.ok += 1;
                } else {
                    a.limit += 1;
                }
                a.coverage += r.coverage;
                a.steps += r.steps;
            }
            RunState::Finished(_) => a.failed += 1,
            _ => a.pending += 1,
        }
    }
    let mut s = format!(
        "{:<24} {:>6} {:>6} {:>7} {:>8} {:>14} {:>12}\n",
        "algorithm", "ok", "limit", "failed", "pending", "mean coverage", "mean steps"
    );
    for (name, a) in by_alg {
        let n = (a.ok + a.limit).max(1) as f64;
        s.push_str(&format!(
            "{:<24} {:>6} {:>6} {:>7} {:>8} {:>13.2}% {:>12.0}\n",
            name,
            a.ok,
            a.limit,
            a.failed,
            a.pending,
            100.0 * a.coverage / n,
            a.steps as f64 / n
        ));
    }
    s
}
