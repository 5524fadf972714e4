//! The search algorithms (paper §5.3): random search (Algorithm 7), MOSA
//! (Algorithm 8) and MIO (Algorithm 9), the latter two with extension and
//! reduction local search, following Whisker's emse22 implementation
//! (`MOSA.ts`, `MIO.ts`, `LocalSearch/*.ts`).
//!
//! Known, deliberate differences to Whisker:
//! * MIO's parameter schedule runs over a fixed horizon of `schedule_steps`
//!   VM steps instead of the fraction of the run's budget, so no decision
//!   depends on the budget (a shorter run is a prefix of a longer one).
//! * MOSA mutates the crossover offspring (the paper); Whisker's code mutates
//!   the parents and so discards crossover results when the mutation
//!   probability is 1 (`mutate_parents_after_crossover = true` restores that).
//! * Stopping conditions are also checked inside MIO's mutation loop and
//!   before local search, so no test starts after the budget is used up.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use crate::config::Params;
use crate::encoding::{crossover, mutate, random_codons};
use crate::execution::{Evaluated, Executor};
use crate::rng::Rng;
use crate::work::{Kind, cost};
use clowder_vm::value::js_round;

type Test = Rc<Evaluated>;

/// State shared by all algorithms of one run.
pub(crate) struct Search<'e, 'a> {
    pub exec: &'e mut Executor<'a>,
    pub rng: Rng,
    pub p: Params,
    pub reserved: usize,
    extended: BTreeSet<u64>,
    targets: usize,
}

/// Tests per target covering it, shortest first-come (Whisker's archive).
struct Archive {
    best: Vec<Option<Test>>,
}

impl Archive {
    fn new(n: usize) -> Self {
        Self { best: vec![None; n] }
    }

    /// Returns the target values looked at (the work meter's measure).
    fn update(&mut self, e: &Test) -> u64 {
        for (t, slot) in self.best.iter_mut().enumerate() {
            if e.fitness[t] == 0.0 && slot.as_ref().is_none_or(|b| e.len() < b.len()) {
                *slot = Some(Rc::clone(e));
            }
        }
        self.best.len() as u64
    }

    fn has(&self, t: usize) -> bool {
        self.best[t].is_some()
    }
}

/// The distinct tests of an archive, in target order.
fn distinct(slots: &[Option<Test>]) -> Vec<Test> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for e in slots.iter().flatten() {
        if seen.insert(e.id) {
            out.push(Rc::clone(e));
        }
    }
    out
}

impl<'e, 'a> Search<'e, 'a> {
    pub fn new(exec: &'e mut Executor<'a>, rng: Rng, p: Params, reserved: usize) -> Self {
        let targets = exec.ctx().model.len();
        Self { exec, rng, p, reserved, extended: BTreeSet::new(), targets }
    }

    /// Charges `values` target values looked at by the algorithm's bookkeeping.
    fn charge(&mut self, values: u64) {
        self.exec.charge(Kind::Search, cost::TARGET.saturating_mul(values));
    }

    fn random_test(&mut self) -> Test {
        let c = random_codons(&mut self.rng, &self.p, self.reserved);
        Rc::new(self.exec.execute(c))
    }

    fn run(&mut self, codons: Vec<u32>) -> Test {
        Rc::new(self.exec.execute(codons))
    }

    fn extension_applicable(&self, e: &Evaluated) -> bool {
        e.len() < self.p.max_length as usize * self.reserved
            && !self.extended.contains(&e.id)
            && e.covered < self.targets
    }

    fn reduction_applicable(e: &Evaluated) -> bool {
        e.len() > 1 && e.last_improved_codon.is_some_and(|c| e.len() > c) && e.last_improved.is_some()
    }

    fn extend(&mut self, e: &Test) -> Test {
        self.extended.insert(e.id);
        let out = self.exec.extend(e, &mut self.rng);
        Rc::new(out)
    }

    // ------------------------------------------------------------- random

    /// Random search: random tests until the budget is used up.
    pub fn random(&mut self) -> Vec<Test> {
        let mut archive = Archive::new(self.targets);
        while !self.exec.finished() {
            let e = self.random_test();
            let n = archive.update(&e);
            self.charge(n);
        }
        distinct(&archive.best)
    }

    // --------------------------------------------------------------- MOSA

    /// MOSA with preference sorting, sub-vector-dominance ordering of fronts
    /// (as Whisker's emse22 code; the paper names crowding distance), rank
    /// selection and local search on each new parent population.
    pub fn mosa(&mut self) -> Vec<Test> {
        let n = self.p.population_size as usize;
        let mut archive = Archive::new(self.targets);
        let mut genomes = Vec::new();
        for _ in 0..n {
            if self.exec.finished() {
                break;
            }
            genomes.push(random_codons(&mut self.rng, &self.p, self.reserved));
        }
        let mut parents = self.evaluate_population(genomes, &mut archive);
        self.mosa_local_search(&mut parents, &mut archive);
        let mut iterations = 0u64;
        while !self.exec.finished() && !parents.is_empty() {
            let offspring_genomes = self.offspring(&parents, iterations > 0);
            let offspring = self.evaluate_population(offspring_genomes, &mut archive);
            let open: Vec<usize> = (0..self.targets).filter(|t| !archive.has(*t)).collect();
            let mut all = parents;
            all.extend(offspring);
            let fronts = preference_sorting(&all, &open, n);
            // Preference sorting compares every test on every open target, the non-dominated
            // sorting every pair of the rest.
            let (k, o) = (all.len() as u64, open.len() as u64);
            self.charge(o.saturating_mul(k).saturating_add(k.saturating_mul(k).saturating_mul(o)));
            let mut next: Vec<Test> = Vec::new();
            for front in fronts {
                let f = front.len() as u64;
                self.charge(f.saturating_mul(f).saturating_mul(self.targets as u64));
                let sorted = sub_vector_dominance_sort(&all, front);
                if next.len() + sorted.len() <= n {
                    next.extend(sorted.iter().map(|&i| Rc::clone(&all[i])));
                } else {
                    let k = n - next.len();
                    next.extend(sorted.iter().take(k).map(|&i| Rc::clone(&all[i])));
                    break;
                }
            }
            // Ascending quality, as rank selection expects.
            next.reverse();
            parents = next;
            self.mosa_local_search(&mut parents, &mut archive);
            iterations += 1;
        }
        distinct(&archive.best)
    }

    fn evaluate_population(&mut self, genomes: Vec<Vec<u32>>, archive: &mut Archive) -> Vec<Test> {
        let mut out = Vec::with_capacity(genomes.len());
        for g in genomes {
            if self.exec.finished() {
                break;
            }
            let e = self.run(g);
            let n = archive.update(&e);
            self.charge(n);
            out.push(e);
        }
        out
    }

    fn select<'t>(&mut self, pop: &'t [Test], rank: bool) -> &'t Test {
        if !rank {
            return &pop[self.rng.below(pop.len())];
        }
        // Linear rank selection over a population sorted by ascending quality.
        let n = pop.len();
        if n == 1 {
            return &pop[0];
        }
        let c = 2.0 * n as f64 / (n as f64 + 1.0);
        let r = self.rng.next_double();
        let mut acc = 0.0;
        for (i, t) in pop.iter().enumerate() {
            acc += (1.0 / n as f64) * (2.0 - c + 2.0 * (c - 1.0) * i as f64 / (n as f64 - 1.0));
            if r < acc {
                return t;
            }
        }
        &pop[n - 1]
    }

    fn offspring(&mut self, parents: &[Test], rank: bool) -> Vec<Vec<u32>> {
        let mut out: Vec<Vec<u32>> = Vec::with_capacity(parents.len());
        while out.len() < parents.len() {
            let p1 = Rc::clone(self.select(parents, rank));
            let p2 = Rc::clone(self.select(parents, rank));
            let (mut c1, mut c2) = (None, None);
            if self.rng.next_double() < self.p.crossover_probability {
                let (a, b) = crossover(&mut self.rng, self.reserved, &p1.codons, &p2.codons);
                c1 = Some(a);
                c2 = Some(b);
            }
            let quirk = self.p.mutate_parents_after_crossover;
            if self.rng.next_double() < self.p.mutation_probability {
                let base = if quirk { p1.codons.clone() } else { c1.take().unwrap_or_else(|| p1.codons.clone()) };
                c1 = Some(mutate(&mut self.rng, &self.p, self.reserved, &base));
            }
            if self.rng.next_double() < self.p.mutation_probability {
                let base = if quirk { p2.codons.clone() } else { c2.take().unwrap_or_else(|| p2.codons.clone()) };
                c2 = Some(mutate(&mut self.rng, &self.p, self.reserved, &base));
            }
            out.push(c1.unwrap_or_else(|| p1.codons.clone()));
            if out.len() < parents.len() {
                out.push(c2.unwrap_or_else(|| p2.codons.clone()));
            }
        }
        out
    }

    fn mosa_local_search(&mut self, pop: &mut [Test], archive: &mut Archive) {
        for slot in pop.iter_mut() {
            // Extension, then reduction (on the possibly extended test).
            if self.extension_applicable(slot)
                && !self.exec.finished()
                && self.rng.next_double() < self.p.extension_probability
            {
                let m = self.extend(slot);
                if m.covered > slot.covered {
                    let n = archive.update(&m);
                    self.charge(n);
                    *slot = m;
                }
            }
            if Self::reduction_applicable(slot)
                && !self.exec.finished()
                && self.rng.next_double() < self.p.reduction_probability
                && let Some(m) = self.exec.reduce(slot)
            {
                let m = Rc::new(m);
                if m.len() < slot.len() {
                    let n = archive.update(&m);
                    self.charge(n);
                    *slot = m;
                }
            }
        }
    }

    // ---------------------------------------------------------------- MIO

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

/// MOSA's preference sorting: the best test per open target forms the first
/// front (ties: fewer codons), the rest is sorted non-dominated over the open
/// targets (or forms one front when the first is larger than the population).
fn preference_sorting(all: &[Test], open: &[usize], n: usize) -> Vec<Vec<usize>> {
    let mut best_front: Vec<usize> = Vec::new();
    for &t in open {
        let mut best = 0;
        for (i, c) in all.iter().enumerate().skip(1) {
            let (fc, fb) = (c.fitness[t], all[best].fitness[t]);
            if fc < fb || (fc == fb && c.len() < all[best].len()) {
                best = i;
            }
        }
        if !all.is_empty() && !best_front.contains(&best) {
            best_front.push(best);
        }
    }
    let rest: Vec<usize> = (0..all.len()).filter(|i| !best_front.contains(i)).collect();
    let mut fronts = Vec::new();
    let big = best_front.len() > n;
    if !best_front.is_empty() {
        fronts.push(best_front);
    }
    if big {
        fronts.push(rest);
    } else {
        fronts.extend(non_dominated_sorting(all, &rest, open));
    }
    fronts
}

fn dominates(a: &Evaluated, b: &Evaluated, open: &[usize]) -> bool {
    let mut strictly = false;
    for &t in open {
        if a.fitness[t] > b.fitness[t] {
            return false;
        }
        if a.fitness[t] < b.fitness[t] {
            strictly = true;
        }
    }
    strictly
}

/// Fast non-dominated sorting (Deb et al.) of `idx` over the open targets.
fn non_dominated_sorting(all: &[Test], idx: &[usize], open: &[usize]) -> Vec<Vec<usize>> {
    let k = idx.len();
    let mut dominated: Vec<Vec<usize>> = vec![Vec::new(); k];
    let mut count = vec![0usize; k];
    let mut front: Vec<usize> = Vec::new();
    for a in 0..k {
        for b in 0..k {
            if a == b {
                continue;
            }
            if dominates(&all[idx[a]], &all[idx[b]], open) {
                dominated[a].push(b);
            } else if dominates(&all[idx[b]], &all[idx[a]], open) {
                count[a] += 1;
            }
        }
        if count[a] == 0 {
            front.push(a);
        }
    }
    let mut fronts = Vec::new();
    while !front.is_empty() {
        let mut next = Vec::new();
        for &a in &front {
            for &b in &dominated[a] {
                count[b] -= 1;
                if count[b] == 0 {
                    next.push(b);
                }
            }
        }
        fronts.push(front.iter().map(|&a| idx[a]).collect());
        front = next;
    }
    fronts
}

/// Orders a front by sub-vector dominance (Whisker's MOSA): a test's distance
/// is the most targets any other test of the front is better on; ascending.
fn sub_vector_dominance_sort(all: &[Test], front: Vec<usize>) -> Vec<usize> {
    let mut dist: Vec<(usize, usize)> = front
        .iter()
        .map(|&a| {
            let mut d = 0;
            for &b in &front {
                if a != b {
                    let svd = all[a].fitness.iter().zip(&all[b].fitness).filter(|(x, y)| y < x).count();
                    d = d.max(svd);
                }
            }
            (d, a)
        })
        .collect();
    dist.sort_by_key(|(d, _)| *d);
    dist.into_iter().map(|(_, a)| a).collect()
}
