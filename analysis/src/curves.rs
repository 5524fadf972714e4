//! Coverage over time on a common grid, from the exact change points.
//!
//! A run's coverage at grid time t is its covered count at the last change point with
//! step ≤ t (0 before the first point), divided by its total targets; after the run's last
//! point the final value carries forward (early stop by full coverage or budget). A project's
//! curve is the mean over its successful runs; an algorithm's curve is the mean over projects
//! with a 95 % confidence band (Student t over projects — projects, not runs, are the
//! independent units).

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::load::{Results, Timeline};

/// 30 VM steps are one Scratch second.
pub const STEPS_PER_SECOND: u64 = 30;

/// Unit of the time axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GridUnit {
    /// Scratch seconds (30 steps).
    #[default]
    Seconds,
    /// VM steps.
    Steps,
}

/// The common grid: points every `step` VM steps, shown in `unit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    /// Axis unit.
    pub unit: GridUnit,
    /// Distance between grid points in VM steps (≥ 1).
    pub step: u64,
}

impl Default for Grid {
    fn default() -> Self {
        Self { unit: GridUnit::Seconds, step: STEPS_PER_SECOND }
    }
}

impl Grid {
    /// Number of grid points 0, step, 2·step, … covering `end` steps.
    pub fn len(&self, end: u64) -> usize {
        (end.div_ceil(self.step.max(1)) + 1) as usize
    }
    /// Whether a grid would be empty (never: point 0 always exists).
    pub fn is_empty(&self) -> bool {
        false
    }
    /// Axis value of a step count in the grid's unit.
    pub fn axis(&self, steps: u64) -> f64 {
        match self.unit {
            GridUnit::Seconds => steps as f64 / STEPS_PER_SECOND as f64,
            GridUnit::Steps => steps as f64,
        }
    }
    /// Axis label.
    pub fn axis_label(&self) -> &'static str {
        match self.unit {
            GridUnit::Seconds => "time (Scratch seconds, 30 steps each)",
            GridUnit::Steps => "time (VM steps)",
        }
    }
}

/// One grid point of an algorithm's curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    /// Grid time in steps.
    pub steps: u64,
    /// Mean coverage over projects (0..1).
    pub mean: f64,
    /// Lower end of the 95 % confidence interval (NaN with fewer than 2 projects).
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
}

/// Mean coverage over time of one algorithm on one dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// Algorithm.
    pub algorithm: String,
    /// Projects contributing.
    pub projects: usize,
    /// Runs contributing.
    pub runs: usize,
    /// Grid points.
    pub points: Vec<CurvePoint>,
}

/// The grid's end: the largest step budget, or the largest step any successful run reached.
pub fn grid_end(res: &Results) -> u64 {
    let Some(tl) = &res.timeline else { return 0 };
    let mut end = 0;
    for (i, r) in res.runs.iter().enumerate() {
        if !r.has_result() || !tl.has(i) {
            continue;
        }
        if r.budget_unit.as_deref() == Some("steps") {
            end = end.max(r.budget.unwrap_or(0));
        }
        end = end.max(r.steps.unwrap_or(0));
        end = end.max(tl.steps[tl.offsets[i + 1] - 1]);
    }
    end
}

/// Total targets of run `i` (runs column first, else the timeline's).
pub fn total_of(res: &Results, tl: &Timeline, i: usize) -> Option<u64> {
    res.runs[i].total_targets.or_else(|| tl.total.get(tl.offsets[i]).map(|&t| t as u64)).filter(|&t| t > 0)
}

/// Coverage of run `i` at every grid point (fractions), written into `out` (len = grid points).
pub fn run_on_grid(tl: &Timeline, i: usize, total: u64, grid: Grid, out: &mut [f64]) {
    let mut k = 0usize;
    let mut value = 0.0;
    for (s, c) in tl.points(i) {
        let idx = s.div_ceil(grid.step) as usize; // first grid point at or after s
        while k < idx.min(out.len()) {
            out[k] = value;
            k += 1;
        }
        value = c as f64 / total as f64;
    }
    while k < out.len() {
        out[k] = value;
        k += 1;
    }
}

/// The curve of one algorithm from its projects' successful runs (`project_runs[p]` are the
/// run indices of project p). `None` when no run has a usable timeline.
pub fn curve(
    res: &Results,
    tl: &Timeline,
    algorithm: &str,
    project_runs: &[Vec<usize>],
    grid: Grid,
    end: u64,
) -> Option<Curve> {
    let len = grid.len(end);
    // Welford accumulators per grid point over projects (stable, one pass, fixed order).
    let mut mean = vec![0.0f64; len];
    let mut m2 = vec![0.0f64; len];
    let mut n_projects = 0usize;
    let mut n_runs = 0usize;
    let mut sum_counts = vec![0i64; len + 1];
    let mut run_vals = vec![0.0f64; len];
    let mut proj = vec![0.0f64; len];
    for runs in project_runs {
        let usable: Vec<(usize, u64)> = runs.iter().filter_map(|&i| total_of(res, tl, i).map(|t| (i, t))).collect();
        if usable.is_empty() {
            continue;
        }
        let r = usable.len();
        if usable.iter().all(|&(_, t)| t == usable[0].1) {
            // Same total for all runs (the normal case): sum covered counts exactly in
            // integers with a difference array, O(points) per run.
            let total = usable[0].1;
            sum_counts.iter_mut().for_each(|x| *x = 0);
            for &(i, _) in &usable {
                let mut prev = 0i64;
                for (s, c) in tl.points(i) {
                    let idx = s.div_ceil(grid.step) as usize;
                    if idx < len {
                        sum_counts[idx] += c as i64 - prev;
                    }
                    prev = c as i64;
                }
            }
            let denom = (r as u64 * total) as f64;
            let mut acc = 0i64;
            for k in 0..len {
                acc += sum_counts[k];
                proj[k] = acc as f64 / denom;
            }
        } else {
            proj.iter_mut().for_each(|x| *x = 0.0);
            for &(i, t) in &usable {
                run_on_grid(tl, i, t, grid, &mut run_vals);
                for k in 0..len {
                    proj[k] += run_vals[k];
                }
            }
            proj.iter_mut().for_each(|x| *x /= r as f64);
        }
        n_projects += 1;
        n_runs += r;
        let n = n_projects as f64;
        for k in 0..len {
            let d = proj[k] - mean[k];
            mean[k] += d / n;
            m2[k] += d * (proj[k] - mean[k]);
        }
    }
    if n_projects == 0 {
        return None;
    }
    let t = if n_projects >= 2 {
        StudentsT::new(0.0, 1.0, (n_projects - 1) as f64).map(|d| d.inverse_cdf(0.975)).unwrap_or(f64::NAN)
    } else {
        f64::NAN
    };
    let points = (0..len)
        .map(|k| {
            let (lo, hi) = if n_projects >= 2 {
                let sd = (m2[k].max(0.0) / (n_projects - 1) as f64).sqrt();
                let half = t * sd / (n_projects as f64).sqrt();
                (mean[k] - half, mean[k] + half)
            } else {
                (f64::NAN, f64::NAN)
            };
            CurvePoint { steps: k as u64 * grid.step, mean: mean[k], lo, hi }
        })
        .collect();
    Some(Curve { algorithm: algorithm.to_string(), projects: n_projects, runs: n_runs, points })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeline(runs: &[&[(u64, u32)]]) -> Timeline {
        let mut tl = Timeline { offsets: vec![0], ..Default::default() };
        for pts in runs {
            for &(s, c) in *pts {
                tl.steps.push(s);
                tl.covered.push(c);
                tl.total.push(10);
            }
            tl.offsets.push(tl.steps.len());
        }
        tl
    }

    #[test]
    fn run_values_follow_change_points_and_carry_forward() {
        let tl = timeline(&[&[(0, 0), (1, 2), (30, 5), (61, 10)]]);
        let mut out = vec![0.0; 5];
        run_on_grid(&tl, 0, 10, Grid::default(), &mut out);
        // t=0: 0; t=30: points at 1 and 30 → 5; t=60: still 5; t=90: 10 (61 ≤ 90); t=120: carried.
        assert_eq!(out, vec![0.0, 0.5, 0.5, 1.0, 1.0]);
        let mut steps = vec![0.0; 3];
        run_on_grid(&tl, 0, 10, Grid { unit: GridUnit::Steps, step: 1 }, &mut steps);
        assert_eq!(steps, vec![0.0, 0.2, 0.2]);
    }

    #[test]
    fn grid_length_covers_the_end() {
        let g = Grid::default();
        assert_eq!(g.len(0), 1);
        assert_eq!(g.len(30), 2);
        assert_eq!(g.len(31), 3);
        assert_eq!(g.axis(45), 1.5);
    }
}
