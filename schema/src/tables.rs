//! The tables of `docs/exports.md`, column by column (the one definition: keep the document
//! in step when a column changes).

use crate::Kind::{Bool, F64, Str, U32, U64};
use crate::{Table, col, opt};

/// The run identity and context that `runs`, `timeline` and `mutants` rows all carry, in the
/// order `timeline` and `mutants` begin with.
pub const CONTEXT: [&str; 6] = ["run_id", "dataset", "project", "algorithm", "seed", "status"];

/// `runs.csv` / `runs.parquet`: one row per run.
pub const RUNS: Table = Table {
    name: "runs",
    columns: &[
        col("run_id", Str),
        col("dataset", Str),
        col("project", Str),
        col("project_hash", Str),
        col("algorithm", Str),
        col("config", Str),
        col("seed", U64),
        col("budget_unit", Str),
        col("budget", U64),
        col("status", Str),
        col("error", Str),
        opt("coverage", F64),
        opt("covered", U32),
        opt("total_targets", U32),
        opt("steps", U64),
        opt("executions", U64),
        opt("evaluations", U64),
        opt("work", U64),
        opt("tests_before_min", U32),
        opt("tests_after_min", U32),
        opt("events_before_min", U32),
        opt("events_after_min", U32),
        opt("full_coverage", Bool),
        opt("steps_to_full_coverage", U64),
        opt("mutants", U32),
        opt("mutants_killed", U32),
        opt("mutants_excluded", U32),
        opt("mutants_timeout", U32),
        opt("mutation_score", F64),
        // Neatest's reliable coverage (docs/neatest.md): empty for the other algorithms.
        opt("reliable_covered", U32),
        // Sequence coverage (issue 20, docs/testgen.md): empty in results stored before it.
        opt("seq_alphabet", U32),
        opt("seq_kh2", F64),
        opt("seq_kh3", F64),
        opt("seq_win2", F64),
        opt("seq_win3", F64),
        opt("seq_kh2_unmin", F64),
        opt("seq_kh3_unmin", F64),
        opt("seq_win2_unmin", F64),
        opt("seq_win3_unmin", F64),
        opt("geometry", Str),
        opt("reproducible", Bool),
        opt("digest", Str),
        opt("duration_ms", U64),
    ],
};

/// `timeline.csv` / `timeline.parquet`: one row per coverage change point.
pub const TIMELINE: Table = Table {
    name: "timeline",
    columns: &[
        col("run_id", Str),
        col("dataset", Str),
        col("project", Str),
        col("algorithm", Str),
        col("seed", U64),
        col("status", Str),
        col("steps", U64),
        col("executions", U64),
        col("covered", U32),
        col("total_targets", U32),
    ],
};

/// `mutants.csv` / `mutants.parquet`: one row per mutant verdict.
pub const MUTANTS: Table = Table {
    name: "mutants",
    columns: &[
        col("run_id", Str),
        col("dataset", Str),
        col("project", Str),
        col("algorithm", Str),
        col("seed", U64),
        col("status", Str),
        col("mutant_id", Str),
        col("operator", Str),
        col("block_id", Str),
        col("verdict", Str),
        col("stratum_size", U32),
    ],
};

/// `tests.csv` / `tests.parquet`: one row per test of a test run (experiment kind `test`,
/// docs/testing.md); `algorithm` is the suite entry's name, `status` the run's, `verdict` the
/// test's (`pass`, `fail`, `error`, `skip`).
pub const TESTS: Table = Table {
    name: "tests",
    columns: &[
        col("run_id", Str),
        col("dataset", Str),
        col("project", Str),
        col("algorithm", Str),
        col("seed", U64),
        col("status", Str),
        col("suite", Str),
        col("index", U32),
        col("test", Str),
        col("verdict", Str),
        col("message", Str),
        col("steps", U64),
    ],
};

/// `provenance.csv` / `provenance.parquet`: one row per finished run (differs between
/// identical studies by nature).
pub const PROVENANCE: Table = Table {
    name: "provenance",
    columns: &[
        col("run_id", Str),
        col("host", Str),
        col("worker_id", Str),
        opt("core", U32),
        col("pinned", Bool),
        col("engine_version", Str),
        col("memory_limit_bytes", U64),
        col("memory_limit_kind", Str),
        col("attempts", U32),
        col("duration_ms", U64),
        col("memory_peak_bytes", U64),
        col("cpu_ms", U64),
        col("isolation", Str),
        col("peer", Str),
        col("clowder_version", Str),
    ],
};

/// `determinism_failures.csv` / `.parquet`: second completions of a run whose status or
/// digest differed from the stored (first) one.
pub const DETERMINISM_FAILURES: Table = Table {
    name: "determinism_failures",
    columns: &[
        col("run_id", Str),
        col("project", Str),
        col("algorithm", Str),
        col("seed", U64),
        col("stored_status", Str),
        col("stored_digest", Str),
        col("reported_status", Str),
        col("reported_digest", Str),
        col("reported_host", Str),
        col("reported_worker_id", Str),
    ],
};

/// `mutation_failures.csv` / `.parquet` (`clowder mutate-study`): runs whose follow-up
/// mutation analysis failed, with the reason.
pub const MUTATION_FAILURES: Table =
    Table { name: "mutation_failures", columns: &[col("run_id", Str), col("error", Str)] };

/// `clowder replay-study`'s CSV (the Neatest paper's Table 4): one row per run, replay seed
/// and suite kind (`static`: the stored event sequences; `dynamic`: Neatest's networks).
/// Written by that command only, as CSV; not one of a study's exports.
pub const REPLAYS: Table = Table {
    name: "replays",
    columns: &[
        col("run_id", Str),
        col("project", Str),
        col("algorithm", Str),
        col("seed", U64),
        col("replay_seed", U64),
        col("suite", Str),
        col("covered", U32),
        col("total", U32),
    ],
};

/// `clowder judge-study`'s CSV (the Neatest paper's Table 5): one row per Neatest run,
/// judging seed and program (`original` or a mutant id) with the networks' verdict (`fail`
/// when any network fails). Written by that command only, as CSV.
pub const JUDGED: Table = Table {
    name: "judged",
    columns: &[
        col("run_id", Str),
        col("project", Str),
        col("seed", U64),
        col("judge_seed", U64),
        col("program", Str),
        col("operator", Str),
        col("verdict", Str),
        col("failing_networks", U32),
        col("networks", U32),
    ],
};

/// Every table, for checks that go over all of them.
pub const ALL: [Table; 7] = [RUNS, TIMELINE, MUTANTS, TESTS, PROVENANCE, DETERMINISM_FAILURES, MUTATION_FAILURES];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_within_each_table() {
        for t in ALL {
            let mut names: Vec<&str> = t.columns.iter().map(|c| c.name).collect();
            names.sort_unstable();
            let n = names.len();
            names.dedup();
            assert_eq!(names.len(), n, "{} repeats a column", t.name);
        }
    }

    #[test]
    fn context_columns_lead_timeline_and_mutants_and_are_in_runs() {
        for t in [TIMELINE, MUTANTS, TESTS] {
            let lead: Vec<&str> = t.columns.iter().take(CONTEXT.len()).map(|c| c.name).collect();
            assert_eq!(lead, CONTEXT, "{}", t.name);
        }
        for name in CONTEXT {
            let (r, t) = (RUNS.column(name).unwrap(), TIMELINE.column(name).unwrap());
            assert_eq!((r.kind, r.nullable), (t.kind, t.nullable), "{name}");
        }
    }
}
