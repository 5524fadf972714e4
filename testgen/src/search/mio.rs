//! MIO (paper Algorithm 9) as Whisker's emse22 `MIO.ts`: per-target archives for the
//! independent targets, a parameter schedule towards a focused phase, local search.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use super::{Search, Test, distinct};
use crate::config::Params;
use crate::encoding::mutate;
use crate::execution::Evaluated;
use clowder_vm::value::js_round;

impl Search<'_, '_> {
    /// MIO with per-target archives for the independent targets, a focused
    /// phase and local search.
    pub fn mio(&mut self) -> Vec<Test> {
        let independent: Vec<bool> = self.exec.ctx().model.targets.independent.clone();
        let mut m = Mio {
            covered: vec![None; self.targets],
            uncovered: BTreeMap::new(),
            sampling: vec![0; self.targets],
            open_independent: (0..self.targets).filter(|t| independent[*t]).collect(),
            rand_prob: 0.0,
            archive_size: 0,
            max_mut: 0,
        };
        m.update_parameters(&self.p, self.exec.progress(), true);
        while !self.exec.finished() {
            let empty = m.uncovered.is_empty() && m.covered.iter().all(Option::is_none);
            if empty || m.max_mut == 0 || self.rng.next_double() < m.rand_prob {
                let e = self.random_test();
                let n = m.update(&e);
                self.charge(n);
                self.mio_local_search(&e, &mut m);
            } else {
                let any_uncovered = !m.uncovered.is_empty();
                let key = if any_uncovered {
                    min_by_sampling(m.uncovered.keys().copied(), &m.sampling)
                } else {
                    min_by_sampling((0..self.targets).filter(|t| m.covered[*t].is_some()), &m.sampling)
                };
                let Some(key) = key else { break };
                m.sampling[key] += 1;
                let mut chrom = if any_uncovered {
                    let tuples = &m.uncovered[&key];
                    Rc::clone(&tuples[self.rng.below(tuples.len())].0)
                } else {
                    match &m.covered[key] {
                        Some(c) => Rc::clone(c),
                        None => break,
                    }
                };
                let mut cur_h = heuristic(&chrom, key);
                let mut count = 0;
                while count < m.max_mut && m.covered[key].is_none() && !self.exec.finished() {
                    let mutant = mutate(&mut self.rng, &self.p, self.reserved, &chrom.codons);
                    let mutant = self.run(mutant);
                    let n = m.update(&mutant);
                    self.charge(n);
                    let h = heuristic(&mutant, key);
                    if cur_h <= h {
                        chrom = mutant;
                        cur_h = h;
                    }
                    count += 1;
                }
                self.mio_local_search(&chrom, &mut m);
            }
            if !m.focused(&self.p) {
                m.update_parameters(&self.p, self.exec.progress(), false);
            }
        }
        distinct(&m.covered)
    }

    fn mio_local_search(&mut self, e: &Test, m: &mut Mio) {
        if self.exec.finished() {
            return;
        }
        if self.extension_applicable(e) && self.rng.next_double() < self.p.extension_probability {
            let x = self.extend(e);
            let n = m.update(&x);
            self.charge(n);
        }
        if !self.exec.finished()
            && Self::reduction_applicable(e)
            && self.rng.next_double() < self.p.reduction_probability
            && let Some(x) = self.exec.reduce(e)
        {
            let n = m.update(&Rc::new(x));
            self.charge(n);
        }
    }
}
fn heuristic(e: &Evaluated, t: usize) -> f64 {
    1.0 / (1.0 + e.fitness[t])
}

fn min_by_sampling(keys: impl Iterator<Item = usize>, sampling: &[u64]) -> Option<usize> {
    let mut best: Option<(u64, usize)> = None;
    for k in keys {
        if best.is_none_or(|(c, _)| sampling[k] < c) {
            best = Some((sampling[k], k));
        }
    }
    best.map(|(_, k)| k)
}

struct Mio {
    covered: Vec<Option<Test>>,
    uncovered: BTreeMap<usize, Vec<(Test, f64)>>,
    sampling: Vec<u64>,
    open_independent: BTreeSet<usize>,
    rand_prob: f64,
    archive_size: usize,
    max_mut: u32,
}

impl Mio {
    /// Returns the target values looked at (the work meter's measure).
    fn update(&mut self, e: &Test) -> u64 {
        let mut looked = self.covered.len() as u64;
        for t in 0..self.covered.len() {
            if e.fitness[t] != 0.0 {
                continue;
            }
            match &self.covered[t] {
                Some(old) => {
                    if old.len() > e.len() || e.heuristic_sum > old.heuristic_sum {
                        self.covered[t] = Some(Rc::clone(e));
                        self.sampling[t] = 0;
                    }
                }
                None => {
                    self.uncovered.remove(&t);
                    self.open_independent.remove(&t);
                    self.covered[t] = Some(Rc::clone(e));
                    self.sampling[t] = 0;
                }
            }
        }
        let open: Vec<usize> = self.open_independent.iter().copied().collect();
        for t in open {
            looked += 1 + self.uncovered.get(&t).map_or(0, |v| v.len() as u64);
            let h = heuristic(e, t);
            if h <= 0.0 || self.covered[t].is_some() {
                continue;
            }
            let tuples = self.uncovered.entry(t).or_default();
            if tuples.iter().any(|(c, _)| c.codons == e.codons) {
                continue;
            }
            if tuples.len() < self.archive_size {
                tuples.push((Rc::clone(e), h));
            } else if let Some(w) = worst(tuples) {
                let (wc, wh) = (&tuples[w].0, tuples[w].1);
                if wh < h || (wh == h && e.heuristic_sum - wc.heuristic_sum >= 0.0) {
                    tuples.remove(w);
                    tuples.push((Rc::clone(e), h));
                    self.sampling[t] = 0;
                }
            }
        }
        looked
    }

    fn focused(&self, p: &Params) -> bool {
        self.rand_prob == p.random_selection_probability_focused
            && self.archive_size == p.archive_size_focused as usize
            && self.max_mut == p.max_mutation_count_focused
    }

    fn update_parameters(&mut self, p: &Params, progress: f64, first: bool) {
        let f = if p.start_of_focused_phase > 0.0 { progress / p.start_of_focused_phase } else { 1.0 };
        let previous = self.archive_size;
        if f >= 1.0 {
            self.rand_prob = p.random_selection_probability_focused;
            self.archive_size = p.archive_size_focused as usize;
            self.max_mut = p.max_mutation_count_focused;
        } else {
            let lerp = |a: f64, b: f64| a + (b - a) * f;
            self.rand_prob = lerp(p.random_selection_probability_start, p.random_selection_probability_focused);
            self.archive_size =
                js_round(lerp(p.archive_size_start as f64, p.archive_size_focused as f64)).max(1.0) as usize;
            self.max_mut =
                js_round(lerp(p.max_mutation_count_start as f64, p.max_mutation_count_focused as f64)).max(0.0) as u32;
        }
        if !first && previous > self.archive_size {
            for tuples in self.uncovered.values_mut() {
                while tuples.len() > self.archive_size {
                    match worst(tuples) {
                        Some(w) => {
                            tuples.remove(w);
                        }
                        None => break,
                    }
                }
            }
        }
    }
}

/// The worst tuple: lowest heuristic, ties broken by the lower heuristic sum.
fn worst(tuples: &[(Test, f64)]) -> Option<usize> {
    let mut w: Option<usize> = None;
    for (i, (c, h)) in tuples.iter().enumerate() {
        match w {
            None => w = Some(i),
            Some(j) => {
                let (wc, wh) = (&tuples[j].0, tuples[j].1);
                if *h < wh || (*h == wh && wc.heuristic_sum - c.heuristic_sum > 0.0) {
                    w = Some(i);
                }
            }
        }
    }
    w
}
