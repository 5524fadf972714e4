//! The report folder: `report.md` with tables and images, CSV and LaTeX tables, plots, and
//! the coverage-over-time exports.
//!
//! Presentation only: it reads an [`Analysis`] (and the loaded [`Results`] for the inputs and
//! the per-run timelines) and computes nothing the tables show. Tables are built in `tables`,
//! `report.md` in `markdown`, plots in `figures`, the other CSV exports in `exports`.

mod comparison;
mod exports;
mod figures;
mod markdown;
mod options;
pub(crate) mod sequence;
mod tables;

use std::path::{Path, PathBuf};

use crate::compute::Analysis;
use crate::error::AnalysisError;
use crate::load::Results;

pub use markdown::headline;
pub use options::WriteOptions;
pub use tables::{Tables, tables};

/// File-name-safe version of a dataset name (unique within the analysis).
fn file_stems(an: &Analysis) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, d) in an.datasets.iter().enumerate() {
        let mut s: String = d
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_' { c } else { '_' })
            .take(60)
            .collect();
        if s.is_empty() || out.contains(&s) {
            s = format!("{s}-{i}");
        }
        out.push(s);
    }
    out
}

fn write_file(path: &Path, content: &[u8]) -> Result<(), AnalysisError> {
    std::fs::write(path, content)
        .map_err(|e| AnalysisError::Output { path: path.display().to_string(), msg: e.to_string() })
}

/// Writes the report folder; returns the files written (relative to `out`), sorted.
pub fn write(an: &Analysis, res: &Results, out: &Path, wo: &WriteOptions) -> Result<Vec<PathBuf>, AnalysisError> {
    let mk = |p: &Path| {
        std::fs::create_dir_all(p)
            .map_err(|e| AnalysisError::Output { path: p.display().to_string(), msg: e.to_string() })
    };
    mk(out)?;
    let mut written: Vec<PathBuf> = Vec::new();
    let t = tables(an);
    let mut csv_tables = vec![
        &t.coverage,
        &t.table6,
        &t.pairs,
        &t.excluded,
        &t.full_coverage,
        &t.suite_size,
        &t.suite_size_a12,
        &t.mutation,
        &t.mutation_operators,
        &t.mutation_operators_wide,
        &t.size_correlation,
    ];
    // Only studies with capped runs get this file, so other reports keep their file list.
    if !t.limit_runs.rows.is_empty() {
        csv_tables.push(&t.limit_runs);
    }
    // Likewise only studies whose runs carry sequence coverage get its tables.
    let seq = &t.sequence;
    let has_seq = !seq.coverage.rows.is_empty();
    if has_seq {
        csv_tables.extend([&seq.coverage, &seq.table6, &seq.correlation]);
    }
    for table in csv_tables {
        let name = format!("{}.csv", table.name);
        write_file(&out.join(&name), table.csv().as_bytes())?;
        written.push(name.into());
    }
    let mut tex_tables =
        vec![&t.coverage, &t.table6, &t.full_coverage, &t.suite_size, &t.mutation, &t.mutation_operators_wide];
    if has_seq {
        tex_tables.extend([&seq.coverage, &seq.table6]);
    }
    for table in tex_tables {
        let name = format!("{}.tex", table.name);
        write_file(&out.join(&name), table.latex().as_bytes())?;
        written.push(name.into());
    }
    if an.datasets.iter().any(|d| !d.curves.is_empty()) {
        write_file(&out.join("coverage_over_time.csv"), exports::coverage_over_time_csv(an).as_bytes())?;
        written.push("coverage_over_time.csv".into());
    }
    let sizes = exports::project_sizes_csv(an);
    write_file(&out.join("project_sizes.csv"), sizes.as_bytes())?;
    written.push("project_sizes.csv".into());
    if wo.per_run_timelines {
        if let Some(files) = exports::per_run_timelines(an, res, out)? {
            written.extend(files);
        }
    }
    let stems = file_stems(an);
    let mut images: Vec<Vec<(String, String)>> = vec![Vec::new(); an.datasets.len()];
    if wo.plots {
        mk(&out.join("img"))?;
        for (i, d) in an.datasets.iter().enumerate() {
            for (kind, caption, stem) in figures::draw_dataset(an, d, &out.join("img"), &stems[i])? {
                written.push(format!("img/{stem}.png").into());
                written.push(format!("img/{stem}.svg").into());
                images[i].push((kind, format!("![{caption}](img/{stem}.png)")));
            }
        }
    }
    let md = markdown::markdown(an, res, &t, &images, wo);
    write_file(&out.join("report.md"), md.as_bytes())?;
    written.push("report.md".into());
    written.sort();
    Ok(written)
}
