//! Statistics and reports from exported results (`runs.csv`, …).
//!
//! Reads files only; knows nothing about runs in flight.

#![warn(missing_docs)]

use std::path::Path;

use polars::prelude::*;

/// Errors while analysing results.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// The results cannot be read or have the wrong shape.
    #[error("{path}: {msg}")]
    Input {
        /// File concerned.
        path: String,
        /// What is wrong.
        msg: String,
    },
}

/// Mean coverage of one algorithm over its successful runs.
#[derive(Debug, Clone, PartialEq)]
pub struct AlgorithmSummary {
    /// Algorithm entry name.
    pub algorithm: String,
    /// Successful runs.
    pub runs: u32,
    /// Runs with another status.
    pub failed: u32,
    /// Mean coverage (0..1) over successful runs.
    pub mean_coverage: f64,
}

/// Reads `<dir>/runs.csv` and summarises coverage per algorithm (sorted by name).
pub fn summarize(dir: &Path) -> Result<Vec<AlgorithmSummary>, AnalysisError> {
    let path = dir.join("runs.csv");
    let err = |msg: String| AnalysisError::Input { path: path.display().to_string(), msg };
    if !path.is_file() {
        return Err(err("not found (run the experiment first)".into()));
    }
    let pl_path = PlRefPath::new(path.to_string_lossy().to_string());
    let df = LazyCsvReader::new(pl_path)
        .with_has_header(true)
        .finish()
        .map_err(|e| err(e.to_string()))?
        .group_by([col("algorithm")])
        .agg([
            col("coverage").filter(col("status").eq(lit("ok"))).mean().alias("mean_coverage"),
            col("status").eq(lit("ok")).cast(DataType::UInt32).sum().alias("ok"),
            col("status").neq(lit("ok")).cast(DataType::UInt32).sum().alias("failed"),
        ])
        .sort(["algorithm"], SortMultipleOptions::default())
        .collect()
        .map_err(|e| err(e.to_string()))?;
    let algs = df.column("algorithm").and_then(|c| c.str().cloned()).map_err(|e| err(e.to_string()))?;
    let means = df.column("mean_coverage").and_then(|c| c.f64().cloned()).map_err(|e| err(e.to_string()))?;
    let ok = df.column("ok").and_then(|c| c.u32().cloned()).map_err(|e| err(e.to_string()))?;
    let failed = df.column("failed").and_then(|c| c.u32().cloned()).map_err(|e| err(e.to_string()))?;
    let mut out = Vec::new();
    for i in 0..df.height() {
        out.push(AlgorithmSummary {
            algorithm: algs.get(i).unwrap_or_default().to_string(),
            runs: ok.get(i).unwrap_or(0),
            failed: failed.get(i).unwrap_or(0),
            mean_coverage: means.get(i).unwrap_or(f64::NAN),
        });
    }
    Ok(out)
}

/// Formats summaries as a plain-text table.
pub fn format_summary(rows: &[AlgorithmSummary]) -> String {
    let mut s = format!("{:<24} {:>6} {:>7} {:>14}\n", "algorithm", "runs", "failed", "mean coverage");
    for r in rows {
        s.push_str(&format!("{:<24} {:>6} {:>7} {:>13.2}%\n", r.algorithm, r.runs, r.failed, r.mean_coverage * 100.0));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarizes_per_algorithm_ignoring_failures() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("runs.csv"),
            "run_id,project,algorithm,seed,status,coverage\n\
             a,p,mio,1,ok,0.5\n\
             b,p,mio,2,ok,1.0\n\
             c,p,mio,3,error,\n\
             d,p,random,1,ok,0.25\n",
        )
        .unwrap();
        let s = summarize(dir.path()).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].algorithm, "mio");
        assert_eq!(s[0].runs, 2);
        assert_eq!(s[0].failed, 1);
        assert!((s[0].mean_coverage - 0.75).abs() < 1e-12);
        assert_eq!(s[1].algorithm, "random");
        assert!((s[1].mean_coverage - 0.25).abs() < 1e-12);
    }
}
