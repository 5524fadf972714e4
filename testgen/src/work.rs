//! The work meter: everything a run does, counted in one deterministic unit.
//!
//! The VM counts its own work (block executions, reporter evaluations, geometry:
//! `clowder_vm::geometry::cost`); this meter adds what test generation does around it —
//! starting fresh VMs, the per-step bookkeeping of coverage, event extraction, fitness
//! evaluation, the algorithms' archives and populations, state observations for
//! assertions and mutation verdicts, building mutants. The unit is the VM's: about a
//! nanosecond of one core of a 2020s machine, so a run's work is both a fair budget and
//! a bound on its CPU time (`clowder bench work` measures CPU-seconds per 10⁹ units over
//! the corpora). The counts are of operations, never of time: the same run counts the same
//! work on every machine. Changing a constant changes which runs reach a work cap, so it
//! bumps `ENGINE_VERSION`.

/// What the meter charges per operation (units, about nanoseconds).
pub mod cost {
    /// A run's fixed cost: the executor, event information, the digest and the result.
    pub const RUN: u64 = 2_000;
    /// A fresh VM for a test execution or replay (allocation, the green flag) …
    pub const VM_START: u64 = 8_000;
    /// … plus this per 64 blocks of the project (per-block state: executed bits,
    /// instrumentation) …
    pub const VM_START_WORD: u64 = 160;
    /// … plus this per target definition (sprites and the stage).
    pub const VM_START_TARGET: u64 = 600;
    /// The executor's bookkeeping of one VM step (budget, cap, live threads) …
    pub const STEP: u64 = 30;
    /// … plus this per 64 blocks of coverage bits compared after the step.
    pub const STEP_WORD: u64 = 2;
    /// One event extraction (the candidates' list) …
    pub const EXTRACT: u64 = 1_000;
    /// … plus this per script of a live target looked at.
    pub const EXTRACT_SCRIPT: u64 = 60;
    /// A trace copied out of the VM, per 64 blocks and per measured block.
    pub const TRACE_WORD: u64 = 3;
    /// A node, edge or target visited by a fitness evaluation.
    pub const FITNESS_OP: u64 = 1;
    /// A target's value looked at by an algorithm's bookkeeping (archives, coverage counts,
    /// dominance comparisons).
    pub const TARGET: u64 = 5;
    /// A target's value compared in one of MOSA's sorting scans (preference sorting, dominance,
    /// sub-vector dominance): a tight loop over two fitness vectors. Charged as [`TARGET`]
    /// until engine `+sem36`, MOSA on small projects was charged over three times its CPU
    /// at 10 000 steps (its fronts are sorted every generation, over every target).
    pub const TARGET_SCAN: u64 = 1;
    /// One property observed or checked on a running program (assertions, mutant verdicts).
    pub const OBSERVE: u64 = 300;
    /// A mutant built from the project, per block copied and compiled.
    pub const MUTANT_BLOCK: u64 = 150;
}

/// The kinds of work a run does, for the meter's breakdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// The VM's own count of block executions.
    Vm,
    /// The VM's own count of reporter evaluations.
    Eval,
    /// The VM's own count of geometry work (touching, colours, pen, rendering) that the
    /// program asked for.
    Geometry,
    /// The VM's own count of its scheduler: steps and thread resumptions.
    Scheduler,
    /// Fresh VMs for test executions and replays.
    Start,
    /// Per-step bookkeeping of the executor.
    Step,
    /// Event extraction.
    Extraction,
    /// Traces and fitness evaluations, with the geometry's work for the branch distances the
    /// VM measured for them (colour walks, sprite distances).
    Fitness,
    /// The algorithms' archives, populations and the minimisation's target scans.
    Search,
    /// Observations of program state (assertions, mutant verdicts).
    Observe,
    /// Building mutants.
    Mutants,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 11] = [
        Kind::Vm,
        Kind::Eval,
        Kind::Geometry,
        Kind::Scheduler,
        Kind::Start,
        Kind::Step,
        Kind::Extraction,
        Kind::Fitness,
        Kind::Search,
        Kind::Observe,
        Kind::Mutants,
    ];

    /// The kind's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Vm => "vm",
            Kind::Eval => "eval",
            Kind::Geometry => "geometry",
            Kind::Scheduler => "scheduler",
            Kind::Start => "start",
            Kind::Step => "step",
            Kind::Extraction => "extraction",
            Kind::Fitness => "fitness",
            Kind::Search => "search",
            Kind::Observe => "observe",
            Kind::Mutants => "mutants",
        }
    }
}

/// Units of work by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Meter {
    units: [u64; 11],
}

impl Meter {
    /// Adds `units` of work of `kind`.
    #[inline]
    pub fn add(&mut self, kind: Kind, units: u64) {
        let u = &mut self.units[kind as usize];
        *u = u.saturating_add(units);
    }

    /// Adds everything `other` counted.
    pub fn absorb(&mut self, other: &Meter) {
        for k in Kind::ALL {
            self.add(k, other.get(k));
        }
    }

    /// The units of `kind`.
    pub fn get(&self, kind: Kind) -> u64 {
        self.units[kind as usize]
    }

    /// All units.
    pub fn total(&self) -> u64 {
        self.units.iter().fold(0u64, |a, b| a.saturating_add(*b))
    }

    /// `(kind name, units)` of every kind, in report order.
    pub fn by_kind(&self) -> Vec<(String, u64)> {
        Kind::ALL.iter().map(|k| (k.name().to_string(), self.get(*k))).collect()
    }
}

/// The cost of a fresh VM for a project with `blocks` blocks and `defs` target definitions.
pub fn vm_start(blocks: usize, defs: usize) -> u64 {
    cost::VM_START + cost::VM_START_WORD * blocks.div_ceil(64) as u64 + cost::VM_START_TARGET * defs as u64
}
