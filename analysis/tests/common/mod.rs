//! Helpers shared by the integration tests that check against the fixtures of
//! `scripts/stats_fixtures.py`.

// Each test crate includes this module and uses only some of it.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;

/// A fixture CSV (no quoted fields) as one map from column to text per row.
pub fn read_csv(path: &Path) -> Vec<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).expect("fixture");
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().expect("header").split(',').map(str::to_string).collect();
    lines.map(|l| header.iter().cloned().zip(l.split(',').map(str::to_string)).collect()).collect()
}

/// Relative error of `got` against a reference value (0 when equal).
pub fn rel_err(got: f64, want: f64) -> f64 {
    if got == want { 0.0 } else { (got - want).abs() / want.abs().max(f64::MIN_POSITIVE) }
}
