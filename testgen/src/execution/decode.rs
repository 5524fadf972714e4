//! Tests from codons: decode-and-execute (Algorithm 4) with Whisker's last-improved-codon
//! bookkeeping, extension local search (Algorithm 10) and reduction local search.

use std::rc::Rc;

use super::{Evaluated, Executor, Improved, Live};
use crate::events::{Cand, Event, decode_wait};
use crate::rng::Rng;
use crate::trace::Trace;
use crate::work::{Kind, cost};

impl Executor<'_> {
    /// Decodes `codons` against the events available in each state and sends
    /// them (one decision per codon group), tracking improvements if enabled.
    fn decode(&mut self, live: &mut Live, codons: &[u32], events: &mut Vec<Event>, track: bool) -> Improved {
        let r = self.ctx.info.reserved;
        let mut improved = Improved::default();
        let mut reference: Option<(Trace, Option<Vec<f64>>)> = None;
        let mut i = 0;
        let mut cands = std::mem::take(&mut self.cands);
        while i < codons.len() && !live.cut {
            self.extract(live, &mut cands);
            if cands.is_empty() || !(live.running || cands.iter().any(|c| *c != Cand::Wait)) {
                break;
            }
            let cand = &cands[codons[i] as usize % cands.len()];
            let pc: Vec<u32> = (0..cand.params()).map(|k| codons[(i + 1 + k) % codons.len()]).collect();
            let ev = cand.realize(&pc, self.ctx.params, &self.ctx.project, &mut live.sut);
            self.apply(live, &ev);
            events.push(ev);
            i += r;
            if track {
                self.track(live, &mut reference, &mut improved, i, events.len());
            }
        }
        self.cands = cands;
        improved
    }

    /// Whisker's last-improved-codon bookkeeping: after each event, whether any target's
    /// fitness fell below its value after the previous event. A newly executed target
    /// decides it without evaluating ([`FitnessModel::covers_new_target`]); the reference
    /// values are computed only when a comparison needs them, so an event that covers
    /// something new costs a bit-set comparison, not an evaluation of every target.
    fn track(
        &mut self,
        live: &Live,
        reference: &mut Option<(Trace, Option<Vec<f64>>)>,
        improved: &mut Improved,
        codon: usize,
        n_events: usize,
    ) {
        let tr = self.trace_of(live);
        let Some((old_tr, old_f)) = reference.take() else {
            *reference = Some((tr, None));
            return;
        };
        if old_tr == tr {
            *reference = Some((old_tr, old_f));
            return; // nothing changed, nothing improved
        }
        self.add_work(Kind::Fitness, cost::TRACE_WORD.saturating_mul(tr.executed.len() as u64));
        if self.ctx.model.covers_new_target(&old_tr, &tr) {
            improved.codon = Some(codon);
            improved.snapshot = Some(Rc::new((tr.clone(), n_events)));
            *reference = Some((tr, None));
            return;
        }
        let old_f = match old_f {
            Some(f) => f,
            None => {
                let mut f = Vec::new();
                self.evaluate(&old_tr, &mut f);
                f
            }
        };
        let mut f = Vec::new();
        self.evaluate(&tr, &mut f);
        self.charge_targets(1);
        if f.iter().zip(old_f.iter()).any(|(n, o)| n < o) {
            improved.codon = Some(codon);
            improved.snapshot = Some(Rc::new((tr.clone(), n_events)));
        }
        *reference = Some((tr, Some(f)));
    }

    /// Decode-and-execute `codons` as one test of the search.
    pub fn execute(&mut self, codons: Vec<u32>) -> Evaluated {
        let mut live = self.start(true);
        let mut events = Vec::new();
        let track = self.track_improvement;
        let improved = self.decode(&mut live, &codons, &mut events, track);
        self.executions += 1;
        self.evaluations += 1;
        self.end(&live);
        self.finish(&live, codons, events, improved)
    }

    /// Decode-and-execute `codons` outside the search's budget, as [`Executor::execute`]
    /// otherwise: the test is never cut short by the step budget or by full coverage (only
    /// a work cap ends it), counts no execution and adds no timeline point. For pools of
    /// independent random tests ([`crate::selection`]), where every test must run to its end
    /// whatever the tests before it covered.
    pub fn execute_outside_budget(&mut self, codons: Vec<u32>) -> Evaluated {
        let mut live = self.start(false);
        let mut events = Vec::new();
        let improved = self.decode(&mut live, &codons, &mut events, false);
        self.end(&live);
        self.finish(&live, codons, events, improved)
    }

    /// Extension local search (Algorithm 10): re-executes `orig`, then keeps
    /// appending — an answer if a question waits, a newly available event with
    /// probability `extension_new_event_probability`, otherwise a long wait
    /// (extended while it helps) — while fitness improves, the program runs and
    /// the test is shorter than `max_length` events.
    pub fn extend(&mut self, orig: &Evaluated, rng: &mut Rng) -> Evaluated {
        let p = self.ctx.params;
        let r = self.ctx.info.reserved;
        let max_codons = p.max_length as usize * r;
        let mut live = self.start(true);
        let mut events = Vec::new();
        self.decode(&mut live, &orig.codons, &mut events, false);
        let mut codons = orig.codons.clone();
        let mut values = orig.fitness.clone();
        let mut improved = Improved { codon: orig.last_improved_codon, snapshot: orig.last_improved.clone() };
        let mut extend_wait = false;
        let mut previous: Vec<Cand> = Vec::new();
        let mut avail: Vec<Cand> = Vec::new();
        while codons.len() < max_codons && live.running && !live.cut {
            self.evaluations += 1;
            self.extract(&mut live, &mut avail);
            if avail.is_empty() {
                break;
            }
            let index_of = |c: &Cand| avail.iter().position(|a| a.same(c)).unwrap_or(0) as u32;
            let typing: Vec<&Cand> = avail.iter().filter(|c| c.is_typing()).collect();
            let fresh: Vec<&Cand> = avail.iter().filter(|c| !previous.iter().any(|q| q.same(c))).collect();
            if !typing.is_empty() {
                let c = typing[rng.below(typing.len())].clone();
                let params: Vec<u32> =
                    (1..r).map(|_| rng.next_int(p.codon_min as i64, p.codon_max as i64) as u32).collect();
                codons.push(index_of(&c));
                codons.extend(&params);
                let ev = c.realize(&params, p, &self.ctx.project, &mut live.sut);
                self.apply(&mut live, &ev);
                events.push(ev);
                extend_wait = false;
            } else if !previous.is_empty() && !fresh.is_empty() && rng.next_double() < p.extension_new_event_probability
            {
                let c = fresh[rng.below(fresh.len())].clone();
                let params: Vec<u32> =
                    (1..r).map(|_| rng.next_int(p.codon_min as i64, p.codon_max as i64 + 1) as u32).collect();
                codons.push(index_of(&c));
                codons.extend(&params);
                let ev = c.realize(&params, p, &self.ctx.project, &mut live.sut);
                self.apply(&mut live, &ev);
                events.push(ev);
                extend_wait = false;
            } else if extend_wait {
                // Lengthen the wait just added: its duration codon grows by the bound.
                let pos = codons.len() - (r - 1);
                let mut extra = p.wait_upper_bound;
                let mut dur = codons[pos] + p.wait_upper_bound;
                if dur > p.codon_max {
                    extra -= dur - p.codon_max;
                    dur = p.codon_max;
                    extend_wait = false;
                }
                codons[pos] = dur;
                if let Some(Event::Wait { steps }) = events.last_mut() {
                    *steps = decode_wait(dur, p);
                }
                self.run_steps(&mut live, extra as u64);
            } else {
                codons.push(index_of(&Cand::Wait));
                codons.push(p.wait_upper_bound);
                for _ in 2..r {
                    codons.push(rng.next_int(p.codon_min as i64, p.codon_max as i64 + 1) as u32);
                }
                let ev = Event::Wait { steps: p.wait_upper_bound };
                self.apply(&mut live, &ev);
                events.push(ev);
                extend_wait = true;
            }
            previous = avail.clone();
            let tr = self.trace_of(&live);
            let mut f = Vec::new();
            self.evaluate(&tr, &mut f);
            self.charge_targets(2);
            if f.iter().zip(values.iter()).any(|(n, o)| n < o) {
                improved.codon = Some(codons.len());
                improved.snapshot = Some(Rc::new((tr, events.len())));
            } else {
                break;
            }
            if f.iter().all(|x| *x == 0.0) {
                break;
            }
            values = f;
        }
        self.executions += 1;
        self.end(&live);
        self.finish(&live, codons, events, improved)
    }

    /// The test of reduction local search: `orig` cut after its last improving
    /// codon, with the trace recorded at that point (no execution).
    pub fn reduce(&mut self, orig: &Evaluated) -> Option<Evaluated> {
        let codon = orig.last_improved_codon?;
        let snap = orig.last_improved.as_ref()?;
        let (trace, n_events) = (&snap.0, snap.1);
        let mut fitness = Vec::new();
        self.evaluate(trace, &mut fitness);
        self.charge_targets(1);
        let covered = fitness.iter().filter(|f| **f == 0.0).count();
        let heuristic_sum = fitness.iter().map(|f| 1.0 / (1.0 + f)).sum();
        Some(Evaluated {
            id: self.next_id(),
            codons: orig.codons[..codon.min(orig.codons.len())].to_vec(),
            events: orig.events[..n_events.min(orig.events.len())].to_vec(),
            trace: trace.clone(),
            fitness,
            covered,
            heuristic_sum,
            last_improved_codon: Some(codon),
            last_improved: None,
        })
    }
}
