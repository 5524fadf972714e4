//! MOSA (paper Algorithm 8) as Whisker's emse22 `MOSA.ts`: preference sorting,
//! sub-vector-dominance ordering of fronts, rank selection, local search on each new
//! parent population.

use std::rc::Rc;

use super::{Archive, Search, Test, distinct};
use crate::encoding::{crossover, mutate, random_codons};
use crate::execution::Evaluated;

impl Search<'_, '_> {
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
            self.charge_scan(o.saturating_mul(k).saturating_add(k.saturating_mul(k).saturating_mul(o)));
            let mut next: Vec<Test> = Vec::new();
            for front in fronts {
                let f = front.len() as u64;
                self.charge_scan(f.saturating_mul(f).saturating_mul(self.targets as u64));
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
