//! Neatest (Feldmeier & Fraser, ASE 2022; Whisker's `Neatest.ts`): one NEAT population of
//! networks per target statement, evolved until a network covers the target reliably.
//!
//! * **Targets** are chosen over the control-dependence graph: among the uncovered statements
//!   whose CDG parent is covered (or is not a statement), the green-flag hat first, then the
//!   statements networks reached most often without targeting them (not yet switched away
//!   from), else one at random.
//! * **Fitness** (`ReliableStatementFitness`): a network plays the game once; if it misses the
//!   target its fitness is 1 / (the target's fitness value: approach level + normalised
//!   branch distance); if it covers it, it plays again on `stable_count − 1` further seeds,
//!   gaining 1 per seed on which it covers the target again and 1 / distance otherwise.
//!   Every statement counts the seeds it was covered on; it is covered (archived) once that
//!   count reaches `stable_count`.
//! * **Populations** of a new target start from the archive's networks (`global_solutions`):
//!   clones of them, a `random_fraction` of fresh networks, mutants of them for the rest.
//!   A population gives up its target when its best fitness has not improved for
//!   `switch_target_count` generations, or when its networks reached another untargeted
//!   statement but never the target (switch to the easier one) — only to one the next target
//!   choice can take (one whose CDG parent is covered): Whisker switches for any reached
//!   statement, and on a game where a reached statement's parent is not yet covered it then
//!   draws a new population for every single evaluation.
//!
//! The playthroughs of the run seed of the archived networks are the static suite (minimised,
//! with assertions, as every algorithm's); the networks themselves are the dynamic suite.
//! Differences to Whisker: budgets are steps, not wall-clock time (a playthrough ends after
//! `play_steps`); the generator's initial inputs are the features after the green flag and the
//! events the program handles; gradient descent and peer-to-peer sharing are not built.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use clowder_neuro::network::Features;
use clowder_neuro::{EventSpec, Innovations, NeatParams, NeatPopulation, Network, WhiskerVersion};

use super::{Search, Test};
use crate::execution::{Durations, PlayOptions};
use crate::graph::ENTRY;
use crate::neatest::features::FeatureInfo;
use crate::neatest::{EventSelection, NetworkPolicy};
use crate::work::Kind;

/// A covered statement: the network and its playthrough on the run seed.
struct Covered {
    network: Network,
    test: Test,
}

/// The dynamic suite of a Neatest run: the distinct networks of its archive.
pub(crate) struct NeatestOutcome {
    /// Static tests (the archived networks' playthroughs on the run seed).
    pub tests: Vec<Test>,
    /// The networks, in target order, distinct.
    pub networks: Vec<Network>,
    /// Statements covered on `stable_count` seeds.
    pub reliable: u32,
}

impl Search<'_, '_> {
    /// Neatest until the budget is used up or every statement is covered reliably.
    pub(crate) fn neatest(&mut self) -> NeatestOutcome {
        let p = self.p.clone();
        let mut neat = NeatParams {
            population_size: p.population_size as usize,
            number_of_species: p.number_of_species as usize,
            ..NeatParams::default()
        };
        neat.version = if p.whisker_v07 { WhiskerVersion::V07 } else { WhiskerVersion::Master };
        let selection = if p.random_event_selection { EventSelection::Random } else { EventSelection::Activation };
        let project = std::sync::Arc::clone(&self.exec.ctx().project);
        let model = self.exec.ctx().model;
        let info = FeatureInfo::new(&project);
        let durations = Durations {
            wait: f64::from(p.wait_upper_bound),
            press: f64::from(p.press_duration),
            click: f64::from(p.click_duration),
            sound: f64::from(p.sound_duration),
        };
        let n = model.len();
        let (features, events) = self.exec.initial_view(&info, p.drag_events);
        let specs: Vec<EventSpec> = events
            .iter()
            .map(|e| EventSpec { id: e.id.clone(), parameters: e.params().iter().map(|s| s.to_string()).collect() })
            .collect();
        let mut innovations = Innovations::new();
        let mut archive: BTreeMap<usize, Covered> = BTreeMap::new();
        // Statements reached by some network (the most seeds any network covered them on).
        let mut promising: BTreeMap<usize, u32> = (0..n).map(|t| (t, 0)).collect();
        let mut switched: BTreeSet<usize> = BTreeSet::new();
        let mut current: Option<usize> = None;
        let is_flag =
            |t: usize| model.targets.blocks.get(t).is_some_and(|&b| project.block(b).opcode == "event_whenflagclicked");

        while archive.len() < n && !self.exec.finished() {
            let Some(target) = self.next_target(&archive, &promising, &switched, current, &is_flag) else { break };
            current = Some(target);
            let starting: Vec<Network> = distinct_networks(&archive);
            let mut population = self.target_population(&neat, &features, &specs, &starting, &mut innovations);
            self.charge_population(&population);
            let mut switch_easier = false;
            while !self.exec.finished() {
                // Evaluate every network on the target.
                let ids: Vec<usize> = (0..population.members().len()).collect();
                for i in ids {
                    let Some(member) = population.members().get(i) else { break };
                    let mut network = member.network.clone();
                    let (fitness, counts, test) = self.reliable_fitness(
                        &mut network,
                        &mut population.innovations,
                        target,
                        &info,
                        &durations,
                        selection,
                    );
                    if let Some(m) = population.members_mut().get_mut(i) {
                        m.fitness = fitness;
                        m.network = network.clone();
                    }
                    // Archive statements covered on enough seeds; remember promising ones.
                    for (t, &c) in counts.iter().enumerate() {
                        if c == 0 || archive.contains_key(&t) {
                            continue;
                        }
                        if c >= p.stable_count {
                            archive.insert(t, Covered { network: network.clone(), test: Rc::clone(&test) });
                            promising.remove(&t);
                        } else if let Some(v) = promising.get_mut(&t)
                            && c > *v
                        {
                            *v = c;
                        }
                    }
                    self.charge(n as u64);
                    if promising.get(&target).is_some_and(|v| *v < 1) {
                        // Only to a target the next choice can take (Whisker counts every
                        // reached statement, and then keeps switching to targets it cannot
                        // choose, one evaluation per fresh population).
                        let nearest = self.nearest_uncovered(&archive);
                        let easier = promising
                            .iter()
                            .any(|(t, v)| *v > 0 && *t != target && !switched.contains(t) && nearest.contains(t));
                        if easier {
                            switch_easier = true;
                            break;
                        }
                    }
                    if archive.contains_key(&target) || self.exec.finished() {
                        break;
                    }
                }
                if archive.contains_key(&target) || switch_easier || self.exec.finished() {
                    break;
                }
                population.update_population_statistics();
                let untouched = (0..n).any(|t| !archive.contains_key(&t) && !switched.contains(&t));
                if population.highest_fitness_last_changed() >= u64::from(p.switch_target_count) && untouched {
                    switched.insert(target);
                    break;
                }
                population.reproduce(&mut self.rng);
                self.exec
                    .charge(Kind::Search, crate::work::cost::TARGET.saturating_mul(population.members().len() as u64));
            }
            innovations = population.innovations.clone();
        }
        let mut tests: Vec<Test> = Vec::new();
        let mut seen = BTreeSet::new();
        for c in archive.values() {
            if seen.insert(c.test.id) {
                tests.push(Rc::clone(&c.test));
            }
        }
        NeatestOutcome { tests, networks: distinct_networks(&archive), reliable: archive.len() as u32 }
    }

    /// NEAT's own work (generating, speciating, breeding a population) on the run's work
    /// meter: proportional to the genes of the population.
    fn charge_population(&mut self, population: &NeatPopulation) {
        let genes: u64 =
            population.members().iter().map(|m| (m.network.nodes().len() + m.network.connections().len()) as u64).sum();
        self.exec.charge(Kind::Search, crate::work::cost::TARGET.saturating_mul(genes.max(1)));
    }

    /// Uncovered statements one of whose CDG parents is covered, is no statement, or is the
    /// statement itself (`getNearestUncoveredStatements`); every uncovered one if none is.
    fn nearest_uncovered(&self, archive: &BTreeMap<usize, Covered>) -> Vec<usize> {
        let model = self.exec.ctx().model;
        let graph = &model.graph;
        let node_target: BTreeMap<u32, usize> = model
            .targets
            .blocks
            .iter()
            .enumerate()
            .filter_map(|(t, &b)| graph.block_node.get(b as usize).map(|&nd| (nd, t)))
            .collect();
        let uncovered: Vec<usize> = (0..model.len()).filter(|t| !archive.contains_key(t)).collect();
        let mut nearest: Vec<usize> = Vec::new();
        for &t in &uncovered {
            let Some(&b) = model.targets.blocks.get(t) else { continue };
            let Some(&nd) = graph.block_node.get(b as usize) else { continue };
            let parents = graph.cd_pred.get(nd as usize).map(Vec::as_slice).unwrap_or(&[]);
            let reachable = parents.iter().any(|&(par, _)| match node_target.get(&par) {
                Some(&pt) => pt == t || archive.contains_key(&pt),
                None => true,
            }) || parents.is_empty() && nd != ENTRY;
            if reachable {
                nearest.push(t);
            }
        }
        if nearest.is_empty() { uncovered } else { nearest }
    }

    /// Whisker's `setNextGoal`.
    fn next_target(
        &mut self,
        archive: &BTreeMap<usize, Covered>,
        promising: &BTreeMap<usize, u32>,
        switched: &BTreeSet<usize>,
        current: Option<usize>,
        is_flag: &dyn Fn(usize) -> bool,
    ) -> Option<usize> {
        let nearest = self.nearest_uncovered(archive);
        if let Some(&t) = nearest.iter().find(|&&t| is_flag(t)) {
            return Some(t);
        }
        let untouched: Vec<usize> = nearest.iter().copied().filter(|t| !switched.contains(t)).collect();
        let pool = if untouched.is_empty() { nearest.clone() } else { untouched };
        let mut best: Vec<usize> = Vec::new();
        let mut best_value = 0;
        for &t in &pool {
            if Some(t) == current {
                continue;
            }
            let v = promising.get(&t).copied().unwrap_or(0);
            if v > best_value {
                best_value = v;
                best = vec![t];
            } else if v > 0 && v == best_value {
                best.push(t);
            }
        }
        if !best.is_empty() {
            return best.get(self.rng.below(best.len())).copied();
        }
        pool.get(self.rng.below(pool.len())).copied()
    }

    /// `TargetStatementPopulation.generatePopulation` (strategy `global_solutions`).
    fn target_population(
        &mut self,
        neat: &NeatParams,
        features: &Features,
        specs: &[EventSpec],
        starting: &[Network],
        innovations: &mut Innovations,
    ) -> NeatPopulation {
        if starting.is_empty() {
            return NeatPopulation::new(neat.clone(), features, specs, innovations.clone(), &mut self.rng);
        }
        let mut population = NeatPopulation::empty(neat.clone(), innovations.clone());
        let size = neat.population_size;
        for net in starting.iter().take(size) {
            let id = population.innovations.new_network_id();
            population.insert(net.clone_structure(id));
        }
        let fresh = (self.p.random_fraction * size as f64).floor() as usize;
        for _ in 0..fresh {
            if population.members().len() >= size {
                break;
            }
            let net = clowder_neuro::neat::generate_network(
                features,
                specs,
                &population.params,
                &mut population.innovations,
                &mut self.rng,
            );
            population.insert(net);
        }
        let mut i = 0;
        while population.members().len() < size {
            let Some(parent) = starting.get(i % starting.len()) else { break };
            let params = population.params.clone();
            let mutant =
                clowder_neuro::neat::mutate(parent, false, &params, &mut population.innovations, &mut self.rng);
            population.insert(mutant);
            i += 1;
        }
        population
    }

    /// `ReliableStatementFitness.getFitness`: the network's fitness for `target`, how many
    /// seeds each statement was covered on, and the run-seed playthrough.
    fn reliable_fitness(
        &mut self,
        network: &mut Network,
        innovations: &mut Innovations,
        target: usize,
        info: &FeatureInfo,
        durations: &Durations,
        selection: EventSelection,
    ) -> (f64, Vec<u32>, Test) {
        let steps = u64::from(self.p.play_steps);
        let mut opts = PlayOptions {
            max_steps: steps,
            durations: *durations,
            stop_at: None,
            vm_seed: None,
            drags: self.p.drag_events,
        };
        let (first, _) = {
            let mut policy = NetworkPolicy::new(network, innovations, &mut self.rng, selection, 0.3, false);
            self.exec.play(&mut policy, info, &opts, true)
        };
        let first = Rc::new(first);
        let mut counts: Vec<u32> = first.fitness.iter().map(|f| u32::from(*f == 0.0)).collect();
        let f = first.fitness.get(target).copied().unwrap_or(f64::INFINITY);
        if f > 0.0 {
            let fitness = if f.is_finite() { 1.0 / f } else { 0.0 };
            return (fitness, counts, first);
        }
        let mut fitness = 1.0;
        for _ in 1..self.p.stable_count {
            if self.exec.finished() {
                break;
            }
            opts.vm_seed = Some(self.rng.next_int(0, i64::MAX) as u64);
            let (again, _) = {
                let mut policy = NetworkPolicy::new(network, innovations, &mut self.rng, selection, 0.3, false);
                self.exec.play(&mut policy, info, &opts, true)
            };
            for (c, f) in counts.iter_mut().zip(&again.fitness) {
                *c += u32::from(*f == 0.0);
            }
            match again.fitness.get(target) {
                Some(&0.0) => fitness += 1.0,
                Some(&f) if f.is_finite() && f > 0.0 => fitness += 1.0 / f,
                _ => {}
            }
        }
        (fitness, counts, first)
    }
}

/// The archive's distinct networks (by id), in target order.
fn distinct_networks(archive: &BTreeMap<usize, Covered>) -> Vec<Network> {
    let mut seen = BTreeSet::new();
    archive.values().filter(|c| seen.insert(c.network.id)).map(|c| c.network.clone()).collect()
}
