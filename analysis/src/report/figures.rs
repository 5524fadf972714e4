//! The report's plots of one dataset: coverage over time, coverage and Â12 box plots,
//! mutation score per operator, project sizes (PNG + SVG through [`crate::plots`]).

use std::path::Path;

use super::comparison::comparison_label;
use crate::compute::{Analysis, DatasetAnalysis};
use crate::error::AnalysisError;
use crate::load::OPERATORS;
use crate::plots::{self, BarPlot, BoxPlot, Histogram, LinePlot, Series};

/// Draws the plots of one dataset; returns (section, caption, file stem) per plot.
pub(crate) fn draw_dataset(
    an: &Analysis,
    d: &DatasetAnalysis,
    dir: &Path,
    stem: &str,
) -> Result<Vec<(String, String, String)>, AnalysisError> {
    let mut out = Vec::new();
    let grid = an.options.grid;
    if !d.curves.is_empty() {
        let x_end = grid.axis(an.grid_end);
        let series = d
            .curves
            .iter()
            .map(|c| Series {
                name: c.algorithm.clone(),
                points: c.points.iter().map(|p| (grid.axis(p.steps), p.mean * 100.0)).collect(),
                band: c
                    .points
                    .iter()
                    .filter(|p| p.lo.is_finite())
                    .map(|p| (grid.axis(p.steps), (p.lo * 100.0).max(0.0), (p.hi * 100.0).min(100.0)))
                    .collect(),
            })
            .collect();
        let plot = LinePlot {
            title: format!("Mean coverage over time — {}", d.name),
            x_label: grid.axis_label().into(),
            y_label: "coverage (%), band: 95 % CI over projects".into(),
            x_range: (0.0, x_end),
            y_range: (0.0, 100.0),
            series,
        };
        let s = format!("coverage_over_time_{stem}");
        plots::render(&plot, &dir.join(&s))?;
        out.push(("time".into(), format!("Coverage over time, {}", d.name), s));
    }
    if d.coverage.iter().any(|c| !c.per_project.is_empty()) {
        let plot = BoxPlot {
            title: format!("Coverage per project — {}", d.name),
            x_label: "algorithm".into(),
            y_label: "mean coverage per project (%)".into(),
            // Zoom to the data (in steps of 10 %) so small differences near 100 % stay visible.
            y_range: {
                let min = d.coverage.iter().flat_map(|c| &c.per_project).fold(1.0f64, |a, &b| a.min(b)) * 100.0;
                (((min - 5.0) / 10.0).floor().max(0.0) * 10.0, 101.0)
            },
            boxes: d
                .coverage
                .iter()
                .map(|c| (c.algorithm.clone(), c.per_project.iter().map(|v| v * 100.0).collect()))
                .collect(),
            reference: None,
        };
        let s = format!("coverage_boxplot_{stem}");
        plots::render(&plot, &dir.join(&s))?;
        out.push(("coverage".into(), format!("Coverage per project, {}", d.name), s));
    }
    if d.comparisons.iter().any(|c| !c.projects.is_empty()) {
        let plot = BoxPlot {
            title: format!("Â12 per project — {}", d.name),
            x_label: "comparison (A vs B; Â12 > 0.5: A better)".into(),
            y_label: "Â12".into(),
            y_range: (0.0, 1.0),
            boxes: d
                .comparisons
                .iter()
                .map(|c| (comparison_label(c), c.projects.iter().map(|p| p.counts.a12()).collect()))
                .collect(),
            reference: Some(0.5),
        };
        let s = format!("a12_{stem}");
        plots::render(&plot, &dir.join(&s))?;
        out.push(("a12".into(), format!("Â12 distribution, {}", d.name), s));
    }
    if !d.operators.is_empty() {
        let mut ops: Vec<String> = Vec::new();
        for r in &d.operators {
            if !ops.contains(&r.operator) {
                ops.push(r.operator.clone());
            }
        }
        // Keep the report order of operators (rows come per algorithm in that order).
        ops.sort_by_key(|o| (OPERATORS.iter().position(|x| x == o).unwrap_or(OPERATORS.len()), o.clone()));
        let series = d
            .algorithms
            .iter()
            .map(|a| {
                let vals = ops
                    .iter()
                    .map(|o| {
                        d.operators
                            .iter()
                            .find(|r| &r.algorithm == a && &r.operator == o)
                            .and_then(|r| r.verdicts.score())
                            .map(|s| s * 100.0)
                    })
                    .collect();
                (a.clone(), vals)
            })
            .collect();
        let plot = BarPlot {
            title: format!("Mutation score per operator — {}", d.name),
            x_label: "mutation operator".into(),
            y_label: "killed / (generated − excluded) (%)".into(),
            y_range: (0.0, 105.0),
            categories: ops,
            series,
        };
        let s = format!("mutation_operators_{stem}");
        plots::render(&plot, &dir.join(&s))?;
        out.push(("mutation".into(), format!("Mutation score per operator, {}", d.name), s));
    }
    if !d.sizes.is_empty() {
        let values: Vec<f64> = d.sizes.iter().map(|(_, t)| *t as f64).collect();
        let plot = Histogram::from_values(
            &format!("Project size — {}", d.name),
            "targets (statements) per project",
            &values,
            20,
        );
        let s = format!("project_sizes_{stem}");
        plots::render(&plot, &dir.join(&s))?;
        out.push(("size".into(), format!("Project sizes, {}", d.name), s));
    }
    Ok(out)
}
