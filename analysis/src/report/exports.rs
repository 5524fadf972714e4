//! The report's data exports besides the tables: coverage over time on the grid, project
//! sizes, and the per-run timelines in Whisker's and Pynguin's layouts.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::compute::Analysis;
use crate::curves::{self, Grid, GridUnit, STEPS_PER_SECOND};
use crate::error::AnalysisError;
use crate::load::Results;
use crate::table::{csv_quote, float_csv};

/// `coverage_over_time.csv`: every curve point of every dataset and algorithm.
pub(crate) fn coverage_over_time_csv(an: &Analysis) -> String {
    let mut s = String::from("dataset,algorithm,steps,seconds,mean,ci_low,ci_high,projects,runs\n");
    for d in &an.datasets {
        for c in &d.curves {
            for p in &c.points {
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{},{},{},{}",
                    csv_quote(&d.name),
                    csv_quote(&c.algorithm),
                    p.steps,
                    float_csv(p.steps as f64 / STEPS_PER_SECOND as f64),
                    float_csv(p.mean),
                    float_csv(p.lo),
                    float_csv(p.hi),
                    c.projects,
                    c.runs
                );
            }
        }
    }
    s
}

/// `project_sizes.csv`: total targets per project.
pub(crate) fn project_sizes_csv(an: &Analysis) -> String {
    let mut s = String::from("dataset,project,total_targets\n");
    for d in &an.datasets {
        for (p, t) in &d.sizes {
            let _ = writeln!(s, "{},{},{t}", csv_quote(&d.name), csv_quote(p));
        }
    }
    s
}

/// Whisker-style (`0,1000,2000,…` ms columns, one per Scratch second) and Pynguin-style
/// (`CoverageTimeline_T1..Tn`, one per grid interval) per-run coverage timelines, streamed.
pub(crate) fn per_run_timelines(
    an: &Analysis,
    res: &Results,
    out: &Path,
) -> Result<Option<Vec<PathBuf>>, AnalysisError> {
    let Some(tl) = &res.timeline else { return Ok(None) };
    let end = an.grid_end;
    let per_second = Grid { unit: GridUnit::Seconds, step: STEPS_PER_SECOND };
    let seconds = per_second.len(end);
    let grid = an.options.grid;
    let intervals = grid.len(end) - 1;
    let ioerr =
        |p: &Path, e: std::io::Error| AnalysisError::Output { path: p.display().to_string(), msg: e.to_string() };
    let wpath = out.join("timeline_whisker.csv");
    let ppath = out.join("timeline_pynguin.csv");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&wpath).map_err(|e| ioerr(&wpath, e))?);
    let mut p = std::io::BufWriter::new(std::fs::File::create(&ppath).map_err(|e| ioerr(&ppath, e))?);
    let mut head = String::from(
        "projectName,configName,seed,dataset,fitnessFunctionCount,coveredFitnessFunctionCount,bestCoverage,\
         minimizedTests,minimizedEvents,timeToReachFullCoverage",
    );
    for k in 0..seconds {
        let _ = write!(head, ",{}", k * 1000);
    }
    head.push('\n');
    w.write_all(head.as_bytes()).map_err(|e| ioerr(&wpath, e))?;
    let mut head = String::from("TargetModule,ConfigurationId,RandomSeed,Dataset,Coverage");
    for k in 1..=intervals {
        let _ = write!(head, ",CoverageTimeline_T{k}");
    }
    head.push('\n');
    p.write_all(head.as_bytes()).map_err(|e| ioerr(&ppath, e))?;
    let mut sec_vals = vec![0.0; seconds];
    let mut grid_vals = vec![0.0; intervals + 1];
    let opt = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
    for (i, r) in res.runs.iter().enumerate() {
        if !r.has_result() || !tl.has(i) {
            continue;
        }
        let Some(total) = curves::total_of(res, tl, i) else { continue };
        curves::run_on_grid(tl, i, total, per_second, &mut sec_vals);
        curves::run_on_grid(tl, i, total, grid, &mut grid_vals);
        let (proj, alg, ds) = (
            &res.projects[r.project as usize],
            &res.algorithms[r.algorithm as usize],
            &res.datasets[r.dataset as usize],
        );
        let full_ms = tl
            .points(i)
            .find(|&(_, c)| c as u64 >= total)
            .map(|(s, _)| float_csv(s as f64 * 1000.0 / STEPS_PER_SECOND as f64))
            .unwrap_or_default();
        let mut line = format!(
            "{},{},{},{},{},{},{},{},{},{}",
            csv_quote(proj),
            csv_quote(alg),
            r.seed,
            csv_quote(ds),
            total,
            opt(r.covered),
            r.coverage.map(float_csv).unwrap_or_default(),
            opt(r.tests_after_min),
            opt(r.events_after_min),
            full_ms
        );
        for v in &sec_vals {
            line.push(',');
            line.push_str(&float_csv(*v));
        }
        line.push('\n');
        w.write_all(line.as_bytes()).map_err(|e| ioerr(&wpath, e))?;
        let mut line = format!(
            "{},{},{},{},{}",
            csv_quote(proj),
            csv_quote(alg),
            r.seed,
            csv_quote(ds),
            r.coverage.map(float_csv).unwrap_or_default()
        );
        for v in &grid_vals[1..] {
            line.push(',');
            line.push_str(&float_csv(*v));
        }
        line.push('\n');
        p.write_all(line.as_bytes()).map_err(|e| ioerr(&ppath, e))?;
    }
    w.flush().map_err(|e| ioerr(&wpath, e))?;
    p.flush().map_err(|e| ioerr(&ppath, e))?;
    Ok(Some(vec!["timeline_pynguin.csv".into(), "timeline_whisker.csv".into()]))
}
