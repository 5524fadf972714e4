//! Grammatical-evolution encoding (paper §5.1): a test is a list of codons,
//! grouped into an event codon plus a fixed number of parameter codons.
//! Random generation, variable-length mutation and single-point relative
//! crossover work on whole codon groups, as Whisker's `VariableLengthMutation`
//! and `SinglePointRelativeCrossover`.

use crate::config::Params;
use crate::rng::Rng;

/// A random codon in `[codon_min, codon_max)`.
fn codon(rng: &mut Rng, p: &Params) -> u32 {
    rng.next_int(p.codon_min as i64, p.codon_max as i64) as u32
}

/// A random test: `[min_events, max_events)` codon groups of `reserved` codons.
pub fn random_codons(rng: &mut Rng, p: &Params, reserved: usize) -> Vec<u32> {
    let groups = rng.next_int(p.min_events as i64, p.max_events as i64) as usize;
    (0..groups * reserved).map(|_| codon(rng, p)).collect()
}

/// A gaussian change of `value`, wrapped into `[codon_min, codon_max]`.
fn gaussian_codon(rng: &mut Rng, p: &Params, value: u32) -> u32 {
    let g = rng.gaussian(value as f64, p.gaussian_mutation_power).round() as i64;
    let lo = p.codon_min as i64;
    let span = (p.codon_max - p.codon_min) as i64 + 1;
    (lo + (g - lo).rem_euclid(span)) as u32
}

/// Variable-length mutation: every codon group mutates with probability
/// `1/n` (`n` groups); a mutation adds a random group before it (if the test
/// is shorter than `max_length` events), changes its parameter codons, changes
/// all its codons (gaussian around the old values), or deletes it (if more than
/// one group is left), with equal probability.
pub fn mutate(rng: &mut Rng, p: &Params, reserved: usize, codons: &[u32]) -> Vec<u32> {
    let r = reserved.max(1);
    let mut groups: Vec<Vec<u32>> = codons.chunks(r).map(|c| c.to_vec()).collect();
    let n = groups.len().min(codons.len() / r);
    let max_codons = p.max_length as usize * r;
    let mut index: i64 = 0;
    while index < n as i64 {
        if rng.next_double() < 1.0 / n as f64 {
            match rng.next_int(0, 4) {
                0 => {
                    if groups.len() * r < max_codons {
                        let g: Vec<u32> = (0..r).map(|_| codon(rng, p)).collect();
                        groups.insert((index as usize).min(groups.len()), g);
                        index += 1;
                    }
                }
                k @ (1 | 2) => {
                    if index as usize >= groups.len() {
                        index = groups.len() as i64 - 1;
                    }
                    if let Some(g) = groups.get_mut(index.max(0) as usize) {
                        // Change 1 keeps the event codon of parameterised groups.
                        let start = if k == 1 && g.len() > 1 { 1 } else { 0 };
                        for c in g.iter_mut().skip(start) {
                            *c = gaussian_codon(rng, p, *c);
                        }
                    }
                }
                _ => {
                    if groups.len() > 1 && (index as usize) < groups.len() {
                        groups.remove(index as usize);
                        index -= 1;
                    }
                }
            }
        }
        index += 1;
    }
    groups.concat()
}

/// Single-point relative crossover: one relative point in `[0, 1)` is mapped
/// to a group boundary in each parent; the children swap the tails.
pub fn crossover(rng: &mut Rng, reserved: usize, a: &[u32], b: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let r = reserved.max(1);
    let (na, nb) = (a.len().div_ceil(r), b.len().div_ceil(r));
    if na < 2 || nb < 2 {
        return (a.to_vec(), b.to_vec());
    }
    let split = rng.next_double();
    let pa = (((na - 1) as f64 * split).floor() as usize + 1) * r;
    let pb = (((nb - 1) as f64 * split).floor() as usize + 1) * r;
    let (pa, pb) = (pa.min(a.len()), pb.min(b.len()));
    let c1 = [&a[..pa], &b[pb..]].concat();
    let c2 = [&b[..pb], &a[pa..]].concat();
    (c1, c2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Algorithm, AlgorithmConfig};

    fn params() -> Params {
        Params::from_config(&AlgorithmConfig::new(Algorithm::Mio)).expect("defaults")
    }

    #[test]
    fn random_tests_have_whole_groups_in_range() {
        let p = params();
        let mut rng = Rng::new(3, 1);
        for _ in 0..200 {
            let c = random_codons(&mut rng, &p, 3);
            assert_eq!(c.len() % 3, 0);
            assert!((2..20).contains(&(c.len() / 3)));
            assert!(c.iter().all(|x| *x < 480));
        }
    }

    #[test]
    fn mutation_keeps_groups_and_bounds() {
        let p = params();
        let mut rng = Rng::new(5, 1);
        let mut c = random_codons(&mut rng, &p, 2);
        let mut changed = 0;
        for _ in 0..500 {
            let m = mutate(&mut rng, &p, 2, &c);
            assert_eq!(m.len() % 2, 0);
            assert!(!m.is_empty() && m.len() <= 40 && m.iter().all(|x| *x <= 480));
            changed += usize::from(m != c);
            c = m;
        }
        assert!(changed > 250, "about two thirds of mutations change something: {changed}");
    }

    #[test]
    fn crossover_matches_the_papers_example() {
        // T1 = [0 1][2 3][4 5][6 7][8 9], T2 = [10 11][12 13][14 15] cut at
        // ψ1 = 2, ψ2 = 1 (the paper's example). Whisker maps a relative point ψr
        // to group (⌊(n − 1)·ψr⌋ + 1), so any ψr in [0.25, 0.5) gives these cuts.
        let a: Vec<u32> = (0..10).collect();
        let b: Vec<u32> = (10..16).collect();
        let mut rng;
        let mut seed = 0;
        loop {
            let mut r = Rng::new(seed, 9);
            let d = r.next_double();
            if (0.25..0.5).contains(&d) {
                rng = Rng::new(seed, 9);
                break;
            }
            seed += 1;
        }
        let (c1, c2) = crossover(&mut rng, 2, &a, &b);
        assert_eq!(c1, vec![0, 1, 2, 3, 12, 13, 14, 15]);
        assert_eq!(c2, vec![10, 11, 4, 5, 6, 7, 8, 9]);
    }
}
