//! Neatest in a study, end to end through the real binary: runs of the smoke projects export
//! reliable coverage and their dynamic suites, `clowder replay-study` replays the static
//! and dynamic suites on new seeds, and `clowder judge-study` judges the original and its
//! mutants with the dynamic suites.

use std::path::Path;
use std::process::Command;

fn read_csv(path: &Path) -> Vec<csv::StringRecord> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(text.as_bytes());
    r.records().map(|rec| rec.unwrap_or_else(|e| panic!("{}: {e}", path.display()))).collect()
}

fn col(rows: &[csv::StringRecord], name: &str) -> usize {
    rows[0].iter().position(|c| c == name).unwrap_or_else(|| panic!("no column {name}"))
}

#[test]
fn a_neatest_study_exports_dynamic_suites_that_replay_on_new_seeds() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let exp = dir.path().join("neat.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"neat\"\ndataset = {:?}\nseeds = 1\nbudget = {{ steps = 3000 }}\n\
             [[algorithms]]\nname = \"neatest\"\n\
             params = {{ population_size = 6, number_of_species = 2, stable_count = 2, play_steps = 200 }}\n",
            root.join("datasets/smoke").display().to_string()
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let st = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .args(["run", "--quiet", "--workers", "1", "--output"])
        .arg(dir.path().join("out"))
        .arg(&exp)
        .status()
        .unwrap_or_else(|e| panic!("start clowder: {e}"));
    assert!(st.success(), "clowder run failed: {st}");
    let study = dir.path().join("out/neat");
    let runs = read_csv(&study.join("runs.csv"));
    let (status, reliable, id) = (col(&runs, "status"), col(&runs, "reliable_covered"), col(&runs, "run_id"));
    let ok: Vec<&csv::StringRecord> = runs[1..].iter().filter(|r| &r[status] == "ok").collect();
    assert!(!ok.is_empty(), "some run finished: {runs:?}");
    for r in &ok {
        assert!(r[reliable].parse::<u32>().is_ok(), "reliable coverage exported: {r:?}");
        assert!(study.join("dynamic").join(format!("{}.json", &r[id])).is_file(), "dynamic suite of {}", &r[id]);
    }
    let out = dir.path().join("replays.csv");
    let st = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .args(["replay-study", "--seeds", "7-8", "--jobs", "1", "--out"])
        .arg(&out)
        .arg(&study)
        .status()
        .unwrap_or_else(|e| panic!("start clowder: {e}"));
    assert!(st.success(), "clowder replay-study failed: {st}");
    let first = std::fs::read(&out).unwrap_or_else(|e| panic!("{e}"));
    // Again: every run is in the journal, nothing is replayed, the same file is written.
    let again = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .args(["replay-study", "--seeds", "7-8", "--jobs", "1", "--out"])
        .arg(&out)
        .arg(&study)
        .output()
        .unwrap_or_else(|e| panic!("start clowder: {e}"));
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success() && err.contains(&format!("{} of them done earlier", ok.len())), "{err}");
    assert_eq!(std::fs::read(&out).unwrap_or_default(), first, "the same file from the journal");
    let rows = read_csv(&out);
    let (suite, covered, total) = (col(&rows, "suite"), col(&rows, "covered"), col(&rows, "total"));
    // Every finished run: a static and a dynamic row per seed.
    assert_eq!(rows.len() - 1, ok.len() * 2 * 2);
    for r in &rows[1..] {
        assert!(["static", "dynamic"].contains(&&r[suite]));
        let (c, t): (u32, u32) = (r[covered].parse().unwrap_or(u32::MAX), r[total].parse().unwrap_or(0));
        assert!(c <= t, "{r:?}");
    }
    // Table 5's instrument: per finished run, the original and one mutant per operator (the
    // seeded sample the study's own analysis would take), each judged by the networks.
    let judged = dir.path().join("judged.csv");
    let st = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .args(["judge-study", "--seeds", "7", "--sample", "1", "--trace-seeds", "3", "--jobs", "1", "--out"])
        .arg(&judged)
        .arg(&study)
        .status()
        .unwrap_or_else(|e| panic!("start clowder: {e}"));
    assert!(st.success(), "clowder judge-study failed: {st}");
    // Stopped after its first suite, with the second cut short: the call resumes and writes
    // the file a call without stops wrote.
    let first = std::fs::read(&judged).unwrap_or_else(|e| panic!("{e}"));
    let journal = dir.path().join("judged.csv.journal");
    let text = std::fs::read_to_string(&journal).unwrap_or_else(|e| panic!("{e}"));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + ok.len(), "a header and a line per suite: {text}");
    let cut = format!("{}\n{}\n{}", lines[0], lines[1], lines.get(2).and_then(|l| l.get(..l.len() / 2)).unwrap_or(""));
    std::fs::write(&journal, cut).unwrap_or_else(|e| panic!("{e}"));
    let st = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .args(["judge-study", "--seeds", "7", "--sample", "1", "--trace-seeds", "3", "--jobs", "2", "--out"])
        .arg(&judged)
        .arg(&study)
        .status()
        .unwrap_or_else(|e| panic!("start clowder: {e}"));
    assert!(st.success(), "clowder judge-study (resumed) failed: {st}");
    assert_eq!(std::fs::read(&judged).unwrap_or_default(), first, "the same file after a resume");
    // Other options are refused, not mixed into the journal.
    let other = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .args(["judge-study", "--seeds", "7", "--sample", "2", "--trace-seeds", "3", "--out"])
        .arg(&judged)
        .arg(&study)
        .output()
        .unwrap_or_else(|e| panic!("start clowder: {e}"));
    assert!(!other.status.success(), "a journal of other options must be refused");
    let rows = read_csv(&judged);
    let (run, program, operator, verdict) =
        (col(&rows, "run_id"), col(&rows, "program"), col(&rows, "operator"), col(&rows, "verdict"));
    let (failing, networks) = (col(&rows, "failing_networks"), col(&rows, "networks"));
    for r in &ok {
        let mine: Vec<&csv::StringRecord> = rows[1..].iter().filter(|x| x[run] == r[id]).collect();
        assert_eq!(mine.first().map(|x| &x[program]), Some("original"), "the original first: {mine:?}");
        let mutants = &mine[1..];
        assert!(!mutants.is_empty() && mutants.len() <= 8, "one mutant per operator at most: {mine:?}");
        for m in mutants {
            assert!(m[program].starts_with(&m[operator]), "a mutant's id names its operator: {m:?}");
        }
        for x in &mine {
            assert!(["pass", "fail"].contains(&&x[verdict]), "{x:?}");
            let (f, n): (usize, usize) = (x[failing].parse().unwrap_or(usize::MAX), x[networks].parse().unwrap_or(0));
            assert!(n > 0 && f <= n && (f > 0) == (&x[verdict] == "fail"), "{x:?}");
        }
    }
    // The paper's tables from the three files: counts and means as the rows above give them.
    let report = dir.path().join("report");
    let st = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .args(["neatest-tables", "--replays"])
        .arg(&out)
        .arg("--judged")
        .arg(&judged)
        .arg("--out")
        .arg(&report)
        .arg(&study)
        .status()
        .unwrap_or_else(|e| panic!("start clowder: {e}"));
    assert!(st.success(), "clowder neatest-tables failed: {st}");
    assert!(report.join("neatest.md").is_file());
    let oracle = read_csv(&report.join("neatest_oracle.csv"));
    let all = oracle.last().unwrap_or_else(|| panic!("no rows"));
    assert_eq!(&all[col(&oracle, "project")], "all");
    let mutant_rows: Vec<&csv::StringRecord> = rows[1..].iter().filter(|x| &x[program] != "original").collect();
    let killed = mutant_rows.iter().filter(|x| &x[verdict] == "fail").count();
    assert_eq!(all[col(&oracle, "mutant_judgements")].parse::<usize>().ok(), Some(mutant_rows.len()), "{all:?}");
    assert_eq!(all[col(&oracle, "killed")].parse::<usize>().ok(), Some(killed), "{all:?}");
    assert_eq!(all[col(&oracle, "original_judgements")].parse::<usize>().ok(), Some(ok.len()), "{all:?}");
    // One run per project here: its dynamic column is the mean of its dynamic replays.
    let replays = read_csv(&out);
    let table4 = read_csv(&report.join("neatest_replays.csv"));
    let (project_col, run_col) = (col(&runs, "project"), col(&replays, "run_id"));
    for r in &ok {
        let dynamic: Vec<f64> = replays[1..]
            .iter()
            .filter(|x| x[run_col] == r[id] && &x[col(&replays, "suite")] == "dynamic")
            .map(|x| {
                let (c, t): (f64, f64) = (x[covered].parse().unwrap_or(f64::NAN), x[total].parse().unwrap_or(f64::NAN));
                if t == 0.0 { 1.0 } else { c / t }
            })
            .collect();
        let row = table4[1..]
            .iter()
            .find(|x| x[col(&table4, "project")] == r[project_col])
            .unwrap_or_else(|| panic!("no Table 4 row for {}", &r[project_col]));
        let got: f64 = row[col(&table4, "neatest_dynamic")].parse().unwrap_or(f64::NAN);
        let want = dynamic.iter().sum::<f64>() / dynamic.len() as f64;
        assert!((got - want).abs() < 1e-12, "{}: {got} vs {want}", &r[project_col]);
    }
    // `clowder analyze` reports Neatest's reliable coverage beside its coverage: one run per
    // project here, so the mean over projects is the mean of the runs' fractions.
    let st = Command::new(env!("CARGO_BIN_EXE_clowder"))
        .args(["analyze", "--no-plots"])
        .arg(&study)
        .status()
        .unwrap_or_else(|e| panic!("start clowder: {e}"));
    assert!(st.success(), "clowder analyze failed: {st}");
    let coverage = read_csv(&study.join("report/coverage.csv"));
    let total_col = col(&runs, "total_targets");
    let fractions: Vec<f64> = ok
        .iter()
        .map(|r| r[reliable].parse::<f64>().unwrap_or(f64::NAN) / r[total_col].parse::<f64>().unwrap_or(f64::NAN))
        .collect();
    let want = fractions.iter().sum::<f64>() / fractions.len() as f64;
    let got: f64 = coverage[1][col(&coverage, "reliable_mean_coverage")].parse().unwrap_or(f64::NAN);
    assert!((got - want).abs() < 1e-9, "reliable coverage {got} vs {want}");
}

#[test]
fn a_dynamic_suite_refuses_the_flags_of_javascript_suites_instead_of_ignoring_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let project = root.join("datasets/smoke");
    for flags in [&["--max-steps", "5"][..], &["--fresh-tests"], &["--js-memory-mb", "64"], &["--format", "dodona"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_clowder"))
            .args(["test", "suite.json"])
            .arg(&project)
            .args(flags)
            .output()
            .unwrap_or_else(|e| panic!("running clowder: {e}"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flags:?} accepted");
        assert!(err.contains(flags[0]) && err.contains("dynamic suite"), "{flags:?}: {err}");
    }
}
