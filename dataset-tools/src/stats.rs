//! Dataset statistics: size distributions like the Whisker paper's Figure 11,
//! as a text table, a per-project CSV and a PNG histogram.
//!
//! Quantiles interpolate linearly between order statistics (R's type 7,
//! numpy's default): the median of 1, 2, 3, 4 is 2.5.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use rayon::prelude::*;

use clowder_datasets::metrics::{self, Metrics};
use clowder_datasets::{DatasetError, discover, read_project_bytes};

/// One project's measurement.
#[derive(Debug, Clone)]
pub struct ProjectStats {
    /// Project name (as in results).
    pub name: String,
    /// File path.
    pub path: std::path::PathBuf,
    /// The metrics, or why the project does not load.
    pub metrics: Result<Metrics, String>,
}

/// Measurements of every project of a dataset (as [`discover`] lists them).
#[derive(Debug, Clone)]
pub struct DatasetStats {
    /// The dataset path.
    pub dataset: String,
    /// Per project, in discovery order.
    pub projects: Vec<ProjectStats>,
}

/// Summary of one metric over the projects that load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Distribution {
    /// Projects measured.
    pub n: usize,
    /// Smallest value.
    pub min: f64,
    /// 10th percentile.
    pub p10: f64,
    /// First quartile.
    pub p25: f64,
    /// Median.
    pub median: f64,
    /// Mean.
    pub mean: f64,
    /// Third quartile.
    pub p75: f64,
    /// 90th percentile.
    pub p90: f64,
    /// Largest value.
    pub max: f64,
}

/// Quantile `q` in [0, 1] of sorted values, type 7 (linear interpolation).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

impl Distribution {
    /// The distribution of `values` (any order).
    pub fn of(values: &[u64]) -> Self {
        let mut v: Vec<f64> = values.iter().map(|&x| x as f64).collect();
        v.sort_by(f64::total_cmp);
        let mean = if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 };
        Self {
            n: v.len(),
            min: quantile(&v, 0.0),
            p10: quantile(&v, 0.1),
            p25: quantile(&v, 0.25),
            median: quantile(&v, 0.5),
            mean,
            p75: quantile(&v, 0.75),
            p90: quantile(&v, 0.9),
            max: quantile(&v, 1.0),
        }
    }
}

/// Reads one metric of a project.
pub type Accessor = fn(&Metrics) -> u64;

/// The metrics shown in the table: (label, accessor).
pub const METRICS: &[(&str, Accessor)] = &[
    ("statements", |m| m.statements),
    ("blocks", |m| m.blocks),
    ("sprites", |m| m.sprites),
    ("scripts", |m| m.scripts),
    ("loose scripts", |m| m.loose_scripts),
    ("extensions", |m| m.extensions.len() as u64),
    ("assets", |m| m.assets),
    ("assets missing", |m| m.assets_missing),
    ("costumes", |m| m.costumes),
    ("touching scr.", |m| m.touching_scripts),
    ("colour scr.", |m| m.color_scripts),
    ("clone scr.", |m| m.clone_scripts),
];

fn num(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

impl DatasetStats {
    /// Measures every project of the dataset at `path` (folder, manifest or file).
    /// Projects that fail to load are kept with their error.
    pub fn collect(path: &Path) -> Result<Self, DatasetError> {
        let files = discover(path)?;
        let projects = files
            .par_iter()
            .map(|p| {
                let file_name = p.path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
                let metrics = read_project_bytes(&p.path).and_then(|b| metrics::measure(&b, &file_name));
                ProjectStats { name: p.name.clone(), path: p.path.clone(), metrics }
            })
            .collect();
        Ok(Self { dataset: path.display().to_string(), projects })
    }

    /// Metrics of the projects that load.
    pub fn loaded(&self) -> impl Iterator<Item = &Metrics> {
        self.projects.iter().filter_map(|p| p.metrics.as_ref().ok())
    }

    /// (name, error) of the projects that do not load.
    pub fn failures(&self) -> Vec<(&str, &str)> {
        self.projects.iter().filter_map(|p| p.metrics.as_ref().err().map(|e| (p.name.as_str(), e.as_str()))).collect()
    }

    /// Distribution of one metric over the projects that load.
    pub fn distribution(&self, f: fn(&Metrics) -> u64) -> Distribution {
        Distribution::of(&self.loaded().map(f).collect::<Vec<_>>())
    }

    /// Projects using each extension.
    pub fn extension_counts(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for m in self.loaded() {
            for e in &m.extensions {
                *out.entry(e.clone()).or_insert(0) += 1;
            }
        }
        out
    }

    /// The statistics as a plain-text report.
    pub fn table(&self) -> String {
        let loaded = self.loaded().count();
        let failures = self.failures();
        let mut s = String::new();
        let _ = writeln!(
            s,
            "dataset {}: {} projects, {loaded} loaded, {} failed to load",
            self.dataset,
            self.projects.len(),
            failures.len()
        );
        let _ = writeln!(s, "(quantiles interpolate between order statistics; statements = connected, reachable");
        let _ = writeln!(s, " statement blocks, i.e. the generator's coverage targets, hats included)\n");
        let _ = writeln!(
            s,
            "{:<15} {:>6} {:>7} {:>7} {:>7} {:>7} {:>8} {:>7} {:>7} {:>7}",
            "metric", "n", "min", "p10", "p25", "median", "mean", "p75", "p90", "max"
        );
        for (label, f) in METRICS {
            let d = self.distribution(*f);
            let _ = writeln!(
                s,
                "{:<15} {:>6} {:>7} {:>7} {:>7} {:>7} {:>8.1} {:>7} {:>7} {:>7}",
                label,
                d.n,
                num(d.min),
                num(d.p10),
                num(d.p25),
                num(d.median),
                d.mean,
                num(d.p75),
                num(d.p90),
                num(d.max)
            );
        }
        let scripts: u64 = self.loaded().map(|m| m.scripts).sum();
        let share = |f: fn(&Metrics) -> u64| {
            let n: u64 = self.loaded().map(f).sum();
            let projects = self.loaded().filter(|m| f(m) > 0).count();
            let pct = if scripts == 0 { 0.0 } else { 100.0 * n as f64 / scripts as f64 };
            let ppct = if loaded == 0 { 0.0 } else { 100.0 * projects as f64 / loaded as f64 };
            format!("{pct:.1} % of scripts, {projects} projects ({ppct:.0} %)")
        };
        let _ = writeln!(
            s,
            "\nsensing: touching (sprite/edge/mouse) {}; colour {}; clones {}",
            share(|m| m.touching_scripts),
            share(|m| m.color_scripts),
            share(|m| m.clone_scripts)
        );
        let with_assets = self.loaded().filter(|m| m.assets > 0).count();
        let complete = self.loaded().filter(|m| m.assets > 0 && m.assets_missing == 0).count();
        let none = self.loaded().filter(|m| m.assets > 0 && m.assets_missing == m.assets).count();
        let _ = writeln!(
            s,
            "\nassets: {complete} projects have all their assets, {} some, {none} none (geometry falls back to an approximation)",
            with_assets - complete - none
        );
        let ext = self.extension_counts();
        if ext.is_empty() {
            let _ = writeln!(s, "extensions: none used");
        } else {
            let mut by_use: Vec<(&String, &usize)> = ext.iter().collect();
            by_use.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let parts: Vec<String> = by_use
                .iter()
                .map(|(e, n)| format!("{e} {n} ({:.1} %)", 100.0 * **n as f64 / loaded.max(1) as f64))
                .collect();
            let _ = writeln!(s, "extensions (projects using each): {}", parts.join(", "));
        }
        if !failures.is_empty() {
            let _ = writeln!(s, "\nfailed to load:");
            for (name, err) in failures {
                let _ = writeln!(s, "  {name}: {err}");
            }
        }
        s
    }

    /// One row per project: `project, file, status, error` and every metric.
    pub fn write_csv(&self, out: &Path) -> Result<(), String> {
        let mut w = csv::Writer::from_path(out).map_err(|e| format!("{}: {e}", out.display()))?;
        let mut header = vec!["project", "file", "status", "error"];
        header.extend(["statements", "blocks", "sprites", "scripts", "loose_scripts", "extensions"]);
        header.extend(["assets", "assets_missing"]);
        w.write_record(&header).map_err(|e| e.to_string())?;
        for p in &self.projects {
            let file = p.path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
            let row: Vec<String> = match &p.metrics {
                Ok(m) => {
                    let mut r = vec![p.name.clone(), file, "ok".into(), String::new()];
                    r.extend([m.statements, m.blocks, m.sprites, m.scripts, m.loose_scripts].map(|x| x.to_string()));
                    r.push(m.extensions.join(";"));
                    r.extend([m.assets, m.assets_missing].map(|x| x.to_string()));
                    r
                }
                Err(e) => {
                    let mut r = vec![p.name.clone(), file, "load_error".into(), e.clone()];
                    r.extend(std::iter::repeat_n(String::new(), 8));
                    r
                }
            };
            w.write_record(&row).map_err(|e| e.to_string())?;
        }
        w.flush().map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate() {
        let d = Distribution::of(&[4, 1, 3, 2]);
        assert_eq!((d.min, d.median, d.max, d.mean), (1.0, 2.5, 4.0, 2.5));
        assert!((d.p90 - 3.7).abs() < 1e-12);
        let one = Distribution::of(&[7]);
        assert_eq!((one.min, one.p10, one.median, one.p90), (7.0, 7.0, 7.0, 7.0));
        assert!(Distribution::of(&[]).median.is_nan());
    }

    #[test]
    fn smoke_stats_table_and_csv() {
        let smoke = Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/smoke");
        let st = DatasetStats::collect(&smoke).unwrap();
        assert_eq!(st.projects.len(), 5);
        assert!(st.failures().is_empty());
        let t = st.table();
        assert!(t.contains("5 projects, 5 loaded, 0 failed"), "{t}");
        assert!(t.lines().any(|l| l.starts_with("statements")), "{t}");
        let dir = tempfile::tempdir().unwrap();
        st.write_csv(&dir.path().join("s.csv")).unwrap();
        let csv = std::fs::read_to_string(dir.path().join("s.csv")).unwrap();
        assert_eq!(csv.lines().count(), 6);
        assert!(csv.starts_with("project,file,status,error,statements"));
    }
}
