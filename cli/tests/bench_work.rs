//! `clowder bench work --report`: the report of saved measurements, and its split of MIO's CPU
//! per step against Random's into the program's own work and the CPU per unit of it
//! (issue 31).

use std::process::Command;

const HEAD: &str = "set\tproject\talgorithm\tstatus\tcpu_s\tsteps\twork\ts_per_1e9\tvm\teval\tgeometry\tscheduler\tstart\tstep\textraction\tfitness\tsearch\tobserve\tmutants\n";

/// A row with `program` units of VM work and 1 000 units of the test generator's own.
fn row(project: &str, alg: &str, cpu_s: f64, program: u64) -> String {
    let work = program + 1_000;
    format!(
        "random-sample\t{project}\t{alg}\tok\t{cpu_s}\t1000\t{work}\t{:.3}\t{program}\t0\t0\t0\t1000\t0\t0\t0\t0\t0\t0\n",
        cpu_s / (work as f64 / 1e9)
    )
}

fn report(tsv: &str) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.tsv");
    std::fs::write(&path, tsv).unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_clowder")).args(["bench", "work", "--report"]).arg(&path).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn mio_above_random_per_step_is_split_into_program_work_and_cpu_per_unit() {
    // `heavy`: MIO's tests make the program do 4× the work per step, at 3× the CPU per step
    // (0.75× per unit). `light`: 1.2× per step, not listed. `early`: listed apart.
    let tsv = [
        HEAD.to_string(),
        row("heavy.json", "random", 0.010, 1_000_000),
        row("heavy.json", "mio", 0.030, 4_000_000),
        row("light.json", "random", 0.010, 1_000_000),
        row("light.json", "mio", 0.012, 1_000_000),
        // `early`: MIO covered everything in a tenth of the steps, at 2× the CPU per step.
        row("early.json", "random", 0.010, 1_000_000),
        row("early.json", "mio", 0.002, 100_000).replace("\t1000\t", "\t100\t"),
    ]
    .concat();
    let (ok, stdout, stderr) = report(&tsv);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("runs: 6"), "{stdout}");
    assert!(stdout.contains("mio/random CPU per step: 3 projects"), "{stdout}");
    assert!(
        stdout.contains(
            "with fewer or more steps (a search ended by full coverage): 1 projects, mio's whole CPU 0.20–0.20×"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("mio/random above 1.5× CPU per step, both with the whole budget: 1 projects"), "{stdout}");
    // The rest of MIO's units (1 000 of 4 001 000, VM starts) are the test generator's own.
    assert!(
        stdout.contains(
            "program work per step  4.00×, CPU per unit  0.75×, test generator's own units  0.0% of mio's  random-sample/heavy.json"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("CPU per unit  1.20×"), "a project below 1.5× is not listed: {stdout}");
}

#[test]
fn a_broken_report_file_says_where() {
    let tsv = [HEAD.to_string(), row("a.json", "random", 0.01, 5).replace("\t1000\t", "\tmany\t")].concat();
    let (ok, _, stderr) = report(&tsv);
    assert!(!ok);
    assert!(stderr.contains("row 2: `steps` is not a number"), "{stderr}");
    let (ok, _, stderr) = report("set\tproject\n");
    assert!(!ok);
    assert!(stderr.contains("no column `algorithm`"), "{stderr}");
}
