//! The selection study's plots: the residual risk of the GA's best suite, and the variance of
//! its estimate, over the generations.

use std::path::Path;

use super::study::{Project, StudyOptions, mean};
use crate::error::AnalysisError;
use crate::plots::{LinePlot, Series, render};

/// `risk_mean` and `risk_variance` plots: the GA's best suite's residual risk per generation,
/// mean over projects, one line per sequence ranking, at the middle suite size.
pub fn risk_plots(outs: &[Project], opts: &StudyOptions, out: &Path) -> Result<(), AnalysisError> {
    let n = opts.sizes.get(opts.sizes.len() / 2).copied().unwrap_or(0);
    let mut mean_series = Vec::new();
    let mut var_series = Vec::new();
    let mut last_gen = 1.0f64;
    for &r in opts.rankings.iter().filter(|r| r.sequence().is_some()) {
        // Per project: (risk, variance / variance at generation 0) per generation.
        let per: Vec<Vec<(f64, f64)>> = outs
            .iter()
            .map(|o| {
                let pts: Vec<_> = o.risk.iter().filter(|p| p.ranking == r && p.n == n).collect();
                let v0 = pts.first().map_or(0.0, |p| p.variance);
                pts.iter().map(|p| (p.risk, if v0 > 0.0 { p.variance / v0 } else { 1.0 })).collect()
            })
            .filter(|v: &Vec<(f64, f64)>| !v.is_empty())
            .collect();
        let gens = per.iter().map(Vec::len).max().unwrap_or(0);
        if gens == 0 {
            continue;
        }
        last_gen = last_gen.max((gens - 1) as f64);
        let at = |g: usize, k: usize| -> f64 {
            let v: Vec<f64> = per.iter().filter_map(|p| p.get(g).or(p.last())).map(|x| [x.0, x.1][k]).collect();
            mean(&v).unwrap_or(0.0)
        };
        let name = r.name().to_string();
        mean_series.push(Series {
            name: name.clone(),
            points: (0..gens).map(|g| (g as f64, at(g, 0))).collect(),
            band: Vec::new(),
        });
        var_series.push(Series { name, points: (0..gens).map(|g| (g as f64, at(g, 1))).collect(), band: Vec::new() });
    }
    if mean_series.is_empty() {
        return Ok(());
    }
    let plot = |title: &str, y: &str, series: Vec<Series>, y_max: f64| LinePlot {
        title: title.into(),
        x_label: "GA generation".into(),
        y_label: y.into(),
        x_range: (0.0, last_gen),
        y_range: (0.0, y_max),
        series,
    };
    let top = mean_series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0f64, f64::max);
    render(
        &plot(&format!("Residual risk of the GA's best suite (n = {n})"), "mean residual risk", mean_series, top * 1.1),
        &out.join("risk_mean"),
    )?;
    render(
        &plot(
            &format!("Variance of the risk estimate (n = {n})"),
            "variance / variance at generation 0",
            var_series,
            1.05,
        ),
        &out.join("risk_variance"),
    )?;
    Ok(())
}
