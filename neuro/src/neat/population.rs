//! `NeatPopulation`: speciation with an adaptive threshold, fitness sharing, offspring
//! allocation, champions, stagnation handling and the generational step.
//!
//! Usage: [`NeatPopulation::new`] generates and speciates the initial networks; then, per
//! generation, evaluate every [`Member`] and set its `fitness`, and call
//! [`NeatPopulation::evolve`] (Whisker's `updatePopulationStatistics()` followed by `evolve()`).

use std::collections::BTreeMap;

use super::crossover::crossover;
use super::generator::generate_network;
use super::mutation::mutate;
use super::species::{Species, UNDEFINED_DISTANCE, compatibility_distance};
use crate::Random;
use crate::innovation::Innovations;
use crate::network::{EventSpec, Features, Network, WhiskerVersion};
use crate::params::NeatParams;
use crate::util::pick_index;

/// Consecutive defect children after which a species accepts one anyway (Whisker retries
/// forever).
const MAX_DEFECT_RETRIES: usize = 100;

/// A network of the population with its NEAT bookkeeping.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// The network; `network.id` identifies the member.
    pub network: Network,
    /// Raw fitness, set by the caller after evaluation.
    pub fitness: f64,
    /// Fitness shared within the species.
    pub shared_fitness: f64,
    /// Id of the member's species.
    pub species: u64,
    /// May reproduce this generation.
    pub is_parent: bool,
    /// Best of its species.
    pub is_species_champion: bool,
    /// Best of the population.
    pub is_population_champion: bool,
    /// Expected number of offspring (`sharedFitness / averageSharedFitness`).
    pub expected_offspring: f64,
    /// Offspring reserved for the population champion (`numberOffspringPopulationChamp`).
    pub champion_offspring: u64,
}

impl Member {
    fn new(network: Network) -> Self {
        Self {
            network,
            fitness: 0.0,
            shared_fitness: 0.0,
            species: 0,
            is_parent: false,
            is_species_champion: false,
            is_population_champion: false,
            expected_offspring: 0.0,
            champion_offspring: 0,
        }
    }
}

/// A NEAT population.
#[derive(Debug, Clone)]
pub struct NeatPopulation {
    /// Hyper-parameters.
    pub params: NeatParams,
    /// Node ids and innovations shared by the members.
    pub innovations: Innovations,
    members: Vec<Member>,
    species: Vec<Species>,
    compatibility_threshold: f64,
    species_count: u64,
    generation: u64,
    best_fitness: f64,
    highest_fitness_last_changed: u64,
    average_fitness: f64,
    average_shared_fitness: f64,
    champion: Option<u64>,
}

impl NeatPopulation {
    /// Generates `populationSize` networks for the given input features and events and
    /// speciates them (`generatePopulation`).
    pub fn new(
        params: NeatParams,
        features: &Features,
        events: &[EventSpec],
        innovations: Innovations,
        rng: &mut dyn Random,
    ) -> Self {
        let mut population = Self::empty(params, innovations);
        while population.members.len() < population.params.population_size {
            let network = generate_network(features, events, &population.params, &mut population.innovations, rng);
            population.insert(network);
        }
        population
    }

    /// A population without members.
    pub fn empty(params: NeatParams, innovations: Innovations) -> Self {
        let compatibility_threshold = params.compatibility_distance_threshold;
        Self {
            params,
            innovations,
            members: Vec::new(),
            species: Vec::new(),
            compatibility_threshold,
            species_count: 0,
            generation: 0,
            best_fitness: 0.0,
            highest_fitness_last_changed: 0,
            average_fitness: 0.0,
            average_shared_fitness: 0.0,
            champion: None,
        }
    }

    /// Adds a network (e.g. a loaded one) and speciates it.
    pub fn insert(&mut self, network: Network) {
        self.innovations.observe(&network);
        let mut member = Member::new(network);
        let members = std::mem::take(&mut self.members);
        let lookup = |id: u64| members.iter().find(|m| m.network.id == id).map(|m| &m.network);
        member.species = self.speciate(&member.network, &lookup);
        self.members = members;
        self.members.push(member);
    }

    /// Generations since the best fitness last improved (Whisker's
    /// `highestFitnessLastChanged`).
    pub fn highest_fitness_last_changed(&self) -> u64 {
        self.highest_fitness_last_changed
    }

    /// Members in population order.
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// Members, to set fitness values.
    pub fn members_mut(&mut self) -> &mut [Member] {
        &mut self.members
    }

    /// Species in their current order.
    pub fn species(&self) -> &[Species] {
        &self.species
    }

    /// Completed generations.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The current speciation threshold.
    pub fn compatibility_threshold(&self) -> f64 {
        self.compatibility_threshold
    }

    /// Best fitness seen so far.
    pub fn best_fitness(&self) -> f64 {
        self.best_fitness
    }

    /// Average raw fitness of the last evaluated generation.
    pub fn average_fitness(&self) -> f64 {
        self.average_fitness
    }

    /// Id of the last population champion.
    pub fn champion(&self) -> Option<u64> {
        self.champion
    }

    /// Number of species ever created.
    pub fn species_count(&self) -> u64 {
        self.species_count
    }

    /// The compatibility distance with this population's coefficients.
    pub fn compatibility_distance(&self, a: &Network, b: &Network) -> f64 {
        compatibility_distance(a, b, &self.params)
    }

    /// Assigns a network to the first compatible species or a new one; returns the species
    /// id. `networks` names which member ids exist (v0.7 compares with a species' first member).
    fn speciate<'a>(&mut self, network: &Network, networks: &dyn Fn(u64) -> Option<&'a Network>) -> u64 {
        let mut found = None;
        for (si, s) in self.species.iter().enumerate() {
            let distance = match self.params.version {
                WhiskerVersion::Master => {
                    if s.members.is_empty() {
                        continue;
                    }
                    s.representative.as_ref().map_or(UNDEFINED_DISTANCE, |r| self.compatibility_distance(network, r))
                }
                WhiskerVersion::V07 => match s.members.first().and_then(|&id| networks(id)) {
                    Some(r) => self.compatibility_distance(network, r),
                    None => continue,
                },
            };
            if distance < self.compatibility_threshold {
                found = Some(si);
                break;
            }
        }
        let si = found.unwrap_or_else(|| {
            let mut s = Species::new(self.species_count, true);
            self.species_count += 1;
            s.representative = Some(network.clone());
            self.species.push(s);
            self.species.len() - 1
        });
        self.species[si].members.push(network.id);
        self.species[si].id
    }

    /// Whisker's `updatePopulationStatistics` followed by `evolve`: the caller has set every
    /// member's fitness.
    pub fn evolve(&mut self, rng: &mut dyn Random) {
        if self.members.is_empty() {
            return;
        }
        self.update_population_statistics();
        self.reproduce(rng);
    }

    /// Threshold adaptation, fitness sharing, parent marking and offspring allocation.
    pub fn update_population_statistics(&mut self) {
        if self.members.is_empty() {
            return;
        }
        self.update_compatibility_threshold();
        let params = self.params.clone();
        let fitness: BTreeMap<u64, f64> = self.members.iter().map(|m| (m.network.id, m.fitness)).collect();
        let mut shared: BTreeMap<u64, f64> = BTreeMap::new();
        let mut flags: BTreeMap<u64, (bool, bool)> = BTreeMap::new();
        for s in &mut self.species {
            s.members.retain(|id| fitness.contains_key(id));
            for id in &s.members {
                shared.insert(*id, s.shared_fitness(fitness[id], &params));
            }
            // markParents: best first (stable), champion, improvement, parents.
            s.members.sort_by(|a, b| fitness[b].total_cmp(&fitness[a]));
            if let Some(&champion) = s.members.first() {
                s.champion = Some(champion);
                s.current_best_fitness = fitness[&champion];
                if fitness[&champion] > s.all_time_best_fitness {
                    s.age_of_last_improvement = s.age;
                    s.all_time_best_fitness = fitness[&champion];
                }
                let parents = Species::number_of_parents(s.members.len(), &params);
                for (i, id) in s.members.iter().enumerate() {
                    flags.insert(*id, (i == 0, i < parents));
                }
            }
            let n = s.members.len().max(1) as f64;
            s.average_fitness = s.members.iter().map(|id| fitness[id]).sum::<f64>() / n;
        }
        for m in &mut self.members {
            m.shared_fitness = shared.get(&m.network.id).copied().unwrap_or(m.shared_fitness);
            if let Some(&(champion, parent)) = flags.get(&m.network.id) {
                m.is_species_champion |= champion;
                m.is_parent |= parent;
            }
        }
        let n = self.members.len() as f64;
        self.average_shared_fitness = self.members.iter().map(|m| m.shared_fitness).sum::<f64>() / n;
        for m in &mut self.members {
            m.expected_offspring = m.shared_fitness / self.average_shared_fitness;
        }
        let expected: BTreeMap<u64, f64> = self.members.iter().map(|m| (m.network.id, m.expected_offspring)).collect();
        let mut left_over = 0.0;
        let mut total = 0.0;
        for s in &mut self.species {
            let e: Vec<f64> = s.members.iter().map(|id| expected[id]).collect();
            s.average_shared_fitness =
                s.members.iter().map(|id| shared[id]).sum::<f64>() / s.members.len().max(1) as f64;
            left_over = s.offspring_neat(&e, left_over);
            total += s.expected_offspring;
        }
        self.members.sort_by(|a, b| b.fitness.total_cmp(&a.fitness));
        self.species.sort_by(|a, b| b.expected_offspring.total_cmp(&a.expected_offspring));
        let size = params.population_size as f64;
        let champion = &mut self.members[0];
        champion.is_population_champion = true;
        champion.champion_offspring = u64::from(params.population_champion_number_offspring);
        let (champion_id, champion_species, champion_fitness) =
            (champion.network.id, champion.species, champion.fitness);
        self.champion = Some(champion_id);
        if total < size {
            if let Some(s) = self.species.iter_mut().find(|s| s.id == champion_species) {
                s.expected_offspring += size - total;
            }
        }
        if champion_fitness > self.best_fitness {
            self.best_fitness = champion_fitness;
            self.highest_fitness_last_changed = 0;
        } else {
            self.highest_fitness_last_changed += 1;
        }
        if self.highest_fitness_last_changed > params.penalizing_age + 5 {
            self.refocus(size);
        }
        self.average_fitness = self.members.iter().map(|m| m.fitness).sum::<f64>() / n;
    }

    /// Stagnating population: only the best one or two species (by average fitness) breed.
    fn refocus(&mut self, size: f64) {
        self.highest_fitness_last_changed = 0;
        let mut reserve = Vec::new();
        if self.species.len() == 1 {
            let s = &mut self.species[0];
            s.expected_offspring = size;
            s.age_of_last_improvement = s.age;
            reserve.extend(s.members.first().map(|&id| (id, size.floor())));
        } else {
            self.species.sort_by(|a, b| b.average_fitness.total_cmp(&a.average_fitness));
            for (i, s) in self.species.iter_mut().enumerate() {
                if i <= 1 {
                    s.expected_offspring = size / 2.0;
                    s.age_of_last_improvement = s.age;
                    reserve.extend(s.members.first().map(|&id| (id, (size / 2.0).floor())));
                } else {
                    s.expected_offspring = 0.0;
                    s.members.clear();
                }
            }
        }
        for (id, n) in reserve {
            if let Some(m) = self.members.iter_mut().find(|m| m.network.id == id) {
                m.champion_offspring = n as u64;
            }
        }
    }

    fn update_compatibility_threshold(&mut self) {
        if self.generation == 0 {
            return;
        }
        let target = self.params.number_of_species;
        if self.species.len() < target {
            self.compatibility_threshold -= 0.3;
        } else if self.species.len() > target {
            self.compatibility_threshold += 0.3;
        }
        let floor = match self.params.version {
            WhiskerVersion::Master => 0.1,
            WhiskerVersion::V07 => 1.0,
        };
        self.compatibility_threshold = self.compatibility_threshold.max(floor);
    }

    /// Whisker's `evolve`: non-parents die, every species breeds its share, offspring are
    /// speciated, parents die, empty species vanish and the others age.
    pub fn reproduce(&mut self, rng: &mut dyn Random) {
        let params = self.params.clone();
        let parents: BTreeMap<u64, Member> =
            self.members.drain(..).filter(|m| m.is_parent).map(|m| (m.network.id, m)).collect();
        for s in &mut self.species {
            s.members.retain(|id| parents.contains_key(id));
        }
        let mut offspring: Vec<Network> = Vec::new();
        let mut champion_offspring: BTreeMap<u64, u64> = BTreeMap::new();
        for si in 0..self.species.len() {
            let children = self.breed_species(si, &parents, &mut champion_offspring, rng);
            offspring.extend(children);
        }
        if params.version == WhiskerVersion::Master {
            for si in 0..self.species.len() {
                let closest = match &self.species[si].representative {
                    Some(r) => {
                        let mut best: Option<(f64, usize)> = None;
                        for (i, child) in offspring.iter().enumerate() {
                            let d = self.compatibility_distance(r, child);
                            if best.is_none_or(|(b, _)| d < b) {
                                best = Some((d, i));
                            }
                        }
                        best.map(|(_, i)| i)
                    }
                    None => None,
                };
                self.species[si].representative = closest
                    .or(if offspring.is_empty() { None } else { Some(0) })
                    .and_then(|i| offspring.get(i).cloned());
            }
        }
        let mut arena: BTreeMap<u64, Member> = parents;
        let old: Vec<u64> = arena.keys().copied().collect();
        for child in offspring {
            let mut member = Member::new(child);
            let lookup = |id: u64| arena.get(&id).map(|m| &m.network);
            member.species = self.speciate(&member.network, &lookup);
            arena.insert(member.network.id, member);
        }
        for s in &mut self.species {
            s.members.retain(|id| !old.contains(id));
        }
        for id in &old {
            arena.remove(id);
        }
        self.species.retain(|s| !s.members.is_empty());
        for s in &mut self.species {
            if s.is_novel {
                s.is_novel = false;
            } else {
                s.age += 1;
            }
            for id in &s.members {
                if let Some(m) = arena.remove(id) {
                    self.members.push(m);
                }
            }
        }
        self.generation += 1;
        if params.version == WhiskerVersion::V07 {
            self.members.truncate(params.population_size);
        }
    }

    /// `Species.evolve`: the species' children.
    fn breed_species(
        &mut self,
        si: usize,
        parents: &BTreeMap<u64, Member>,
        champion_offspring: &mut BTreeMap<u64, u64>,
        rng: &mut dyn Random,
    ) -> Vec<Network> {
        let params = self.params.clone();
        let fitness = |id: &u64| parents.get(id).map_or(f64::NEG_INFINITY, |m| m.fitness);
        self.species[si].members.sort_by(|a, b| fitness(b).total_cmp(&fitness(a)));
        let s = self.species[si].clone();
        let mut children = Vec::new();
        let Some(champion) = s.members.first().and_then(|id| parents.get(id)) else { return children };
        self.species[si].champion = Some(champion.network.id);
        let reserved = champion_offspring.entry(champion.network.id).or_insert(champion.champion_offspring);
        let mut cloned = 0u32;
        let mut failures = 0;
        while (children.len() as f64) < s.expected_offspring {
            let mut child = if champion.is_population_champion && *reserved > 0 {
                *reserved -= 1;
                if cloned < params.population_champion_number_clones {
                    cloned += 1;
                    champion.network.clone_structure(self.innovations.new_network_id())
                } else {
                    mutate(&champion.network, true, &params, &mut self.innovations, rng)
                }
            } else if cloned < 1 {
                cloned += 1;
                champion.network.clone_structure(self.innovations.new_network_id())
            } else if rng.next_double() <= params.mutation_without_crossover || s.members.len() == 1 {
                let parent = pick(&s.members, parents, rng).unwrap_or(champion);
                mutate(&parent.network, parent.is_population_champion, &params, &mut self.innovations, rng)
            } else {
                self.breed_crossover(&s, parents, rng).unwrap_or_else(|| champion.network.clone())
            };
            if params.version == WhiskerVersion::Master {
                let inputs = child.dummy_inputs(rng);
                let defect = !child.activate(&inputs);
                child.reset_state();
                if defect && failures < MAX_DEFECT_RETRIES {
                    failures += 1;
                    continue;
                }
            }
            failures = 0;
            children.push(child);
        }
        children
    }

    fn breed_crossover(
        &mut self,
        s: &Species,
        parents: &BTreeMap<u64, Member>,
        rng: &mut dyn Random,
    ) -> Option<Network> {
        let params = self.params.clone();
        let p1 = pick(&s.members, parents, rng)?;
        let draw = rng.next_double();
        let within = match params.version {
            WhiskerVersion::Master => draw > params.interspecies_mating,
            WhiskerVersion::V07 => draw < params.interspecies_mating,
        };
        let p2 = if within || self.species.len() < 2 {
            pick(&s.members, parents, rng)?
        } else {
            let candidates: Vec<&Species> =
                self.species.iter().filter(|o| o.id != s.id && !o.members.is_empty()).collect();
            match pick_index(rng, candidates.len()) {
                Some(i) => candidates[i].members.first().and_then(|id| parents.get(id)).unwrap_or(p1),
                None => pick(&s.members, parents, rng)?,
            }
        };
        let child =
            crossover((&p1.network, p1.fitness), (&p2.network, p2.fitness), &params, &mut self.innovations, rng);
        let distance = self.compatibility_distance(&p1.network, &p2.network);
        if rng.next_double() < 1.0 - params.crossover_without_mutation || distance == 0.0 {
            return Some(mutate(&child, false, &params, &mut self.innovations, rng));
        }
        Some(child)
    }
}

fn pick<'a>(ids: &[u64], members: &'a BTreeMap<u64, Member>, rng: &mut dyn Random) -> Option<&'a Member> {
    let i = pick_index(rng, ids.len())?;
    members.get(&ids[i])
}
