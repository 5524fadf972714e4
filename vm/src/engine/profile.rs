//! Where an interpreter's time goes, per opcode (issue 36): built only with the
//! `op-profile` feature, never in a study binary.
//!
//! Every executed block and every evaluated reporter is a node. A node's *self* time is the
//! time between entering and leaving it minus the time of the nodes it entered (its inputs),
//! read from the time-stamp counter; time with no node open (the scheduler, hats, inputs,
//! redraws) is its own bucket. Reading the counter costs more than a cheap node (about 25 ns
//! per node against 8–16 ns of work): [`reset`] measures what one enter/leave pair leaves in
//! the node and in the node around it, and [`take`] takes that out, scaled so that the total
//! equals an unprofiled run's time when the caller has one. Counts are exact; the self times
//! of the cheapest nodes (constants, variables) are the least exact. The profile is off
//! outside [`reset`]..[`take`], lives in a thread-local of its own, and the VM never reads
//! it: nothing here feeds a result.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Instant;

use crate::program::{ExprId, Program};

/// Nodes of reporters are numbered after a tag bit, so one stack holds both kinds.
const EXPR: u32 = 1 << 31;

/// Events counted outside the opcode table.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event {
    /// A run-time string converted to a number (`Cast.toNumber` of a joined or asked string).
    StrToNum,
    /// A number formatted as a string (`Cast.toString`, `join`, list items, `say`).
    NumToStr,
    /// A variable or list reference resolved by name or id at run time.
    DynLookup,
}

const EVENT_NAMES: [&str; 3] =
    ["string parsed as number", "number formatted as string", "variable looked up at run time"];

#[derive(Default)]
struct Prof {
    /// Between [`reset`] and [`take`].
    on: bool,
    last: u64,
    stack: Vec<u32>,
    /// By block index.
    blocks: Vec<Cell>,
    /// By reporter index.
    exprs: Vec<Cell>,
    outside: u64,
    /// Nodes entered with no node open.
    outside_children: u64,
    events: [u64; 3],
    started: Option<(Instant, u64)>,
    /// Ticks that entering and leaving a node add to the node itself and to the node around it.
    inner_ticks: f64,
    outer_ticks: f64,
}

/// One node's totals.
#[derive(Debug, Clone, Copy, Default)]
struct Cell {
    count: u64,
    ticks: u64,
    /// Nodes entered while this one was innermost (each left its measuring cost here).
    children: u64,
}

impl Cell {
    /// Self time in ticks, the measuring cost taken out.
    fn net(&self, inner: f64, outer: f64) -> f64 {
        (self.ticks as f64 - inner * self.count as f64 - outer * self.children as f64).max(0.0)
    }
}

thread_local! {
    static PROF: RefCell<Prof> = RefCell::new(Prof::default());
}

#[inline(always)]
fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` exists on every x86-64 processor and has no preconditions.
        unsafe { std::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        thread_local!(static ORIGIN: Instant = Instant::now());
        ORIGIN.with(|o| o.elapsed().as_nanos() as u64)
    }
}

impl Prof {
    /// The innermost open node's cell.
    fn top(&mut self) -> Option<&mut Cell> {
        match self.stack.last() {
            Some(&n) if n & EXPR != 0 => self.exprs.get_mut((n & !EXPR) as usize),
            Some(&n) => self.blocks.get_mut(n as usize),
            None => None,
        }
    }

    #[inline(always)]
    fn charge(&mut self, now: u64) {
        let d = now.wrapping_sub(self.last);
        self.last = now;
        if self.stack.is_empty() {
            self.outside += d;
        } else if let Some(c) = self.top() {
            c.ticks += d;
        }
    }

    fn enter(&mut self, node: u32) -> bool {
        // `eval_num` falls back to `eval` of the same reporter: one node, not two.
        if !self.on || self.stack.last() == Some(&node) {
            return false;
        }
        self.charge(ticks());
        if self.stack.is_empty() {
            self.outside_children += 1;
        } else if let Some(c) = self.top() {
            c.children += 1;
        }
        let (table, i) = if node & EXPR != 0 { (&mut self.exprs, node & !EXPR) } else { (&mut self.blocks, node) };
        let i = i as usize;
        if table.len() <= i {
            table.resize(i + 1, Cell::default());
        }
        if let Some(c) = table.get_mut(i) {
            c.count += 1;
        }
        self.stack.push(node);
        true
    }

    fn leave(&mut self) {
        self.charge(ticks());
        self.stack.pop();
    }
}

/// An open node; leaving it (dropping the guard) charges its time, on every return path.
pub(crate) struct Guard(bool);

impl Guard {
    /// Enters the block with this index.
    #[inline(always)]
    pub(crate) fn block(b: u32) -> Guard {
        Guard(PROF.with_borrow_mut(|p| p.enter(b & !EXPR)))
    }

    /// Enters the reporter with this index.
    #[inline(always)]
    pub(crate) fn expr(e: ExprId) -> Guard {
        Guard(PROF.with_borrow_mut(|p| p.enter(e | EXPR)))
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        if self.0 {
            PROF.with_borrow_mut(Prof::leave);
        }
    }
}

/// Counts one event.
#[inline(always)]
pub(crate) fn count(e: Event) {
    PROF.with_borrow_mut(|p| {
        if let Some(c) = p.events.get_mut(e as usize).filter(|_| p.on) {
            *c += 1;
        }
    });
}

/// Clears the profile of this thread and starts its clock.
pub fn reset() {
    // What entering and leaving an empty node costs it and the node around it, measured here
    // (block 0 around block 1 in a scratch table, then discarded); the median of a few rounds,
    // so one interrupt does not set it.
    const PAIRS: u64 = 10_000;
    let mut rounds: Vec<(f64, f64)> = (0..7)
        .map(|_| {
            PROF.with_borrow_mut(|p| {
                *p = Prof { on: true, ..Prof::default() };
                p.blocks.resize(2, Cell::default());
                p.stack.push(0);
                p.last = ticks();
                for _ in 0..PAIRS {
                    if p.enter(1) {
                        p.leave();
                    }
                }
                p.charge(ticks());
                let (outer, inner) = (p.blocks.first().map_or(0, |c| c.ticks), p.blocks.get(1).map_or(0, |c| c.ticks));
                (inner as f64 / PAIRS as f64, outer as f64 / PAIRS as f64)
            })
        })
        .collect();
    rounds.sort_by(|a, b| (a.0 + a.1).total_cmp(&(b.0 + b.1)));
    let (inner_ticks, outer_ticks) = rounds.get(rounds.len() / 2).copied().unwrap_or((0.0, 0.0));
    PROF.with_borrow_mut(|p| {
        *p = Prof { on: true, inner_ticks, outer_ticks, ..Prof::default() };
        p.last = ticks();
        p.started = Some((Instant::now(), p.last));
    });
}

/// One line of a profile: an opcode (or a bucket, or an event) with its count and self time.
#[derive(Debug, Clone, PartialEq)]
pub struct OpRow {
    /// `command`, `reporter`, `outside` (time with no block open) or `event` (counts only).
    pub kind: &'static str,
    /// The opcode's name in clowder's IR (e.g. `SetVar`, `ItemOfList`, `Add`).
    pub name: String,
    /// Executions (or events).
    pub count: u64,
    /// Self time in nanoseconds, the measuring cost taken out (0 for events).
    pub self_ns: f64,
}

/// The variant name of an IR node's `Debug` form (`SetVar(Own(3))` → `SetVar`).
fn variant(debug: String) -> String {
    let end = debug.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(debug.len());
    debug[..end].to_string()
}

/// The profile of this thread since [`reset`], by opcode of `project`, largest self time first,
/// and turns it off. `unprofiled_ns`: the same run's time without the profile, if known; the
/// measuring cost taken out is then scaled so that the rows add up to it.
pub fn take(project: &crate::Project, unprofiled_ns: Option<f64>) -> Vec<OpRow> {
    let prog: std::sync::Arc<Program> = crate::vm::program_of(project);
    PROF.with_borrow_mut(|p| {
        p.charge(ticks());
        let ns_per_tick = match p.started {
            Some((t0, k0)) => t0.elapsed().as_nanos() as f64 / (p.last.wrapping_sub(k0)).max(1) as f64,
            None => 0.0,
        };
        let cells = || p.blocks.iter().chain(&p.exprs);
        let measured = cells().map(|c| c.ticks).sum::<u64>() + p.outside;
        let cost = cells().map(|c| p.inner_ticks * c.count as f64 + p.outer_ticks * c.children as f64).sum::<f64>()
            + p.outer_ticks * p.outside_children as f64;
        let scale = match unprofiled_ns {
            Some(ns) if ns_per_tick > 0.0 && cost > 0.0 => ((measured as f64 - ns / ns_per_tick) / cost).max(0.0),
            _ => 1.0,
        };
        let (inner, outer) = (p.inner_ticks * scale, p.outer_ticks * scale);
        let mut by: BTreeMap<(&'static str, String), (u64, f64)> = BTreeMap::new();
        let mut add = |kind: &'static str, name: String, c: &Cell| {
            let e = by.entry((kind, name)).or_insert((0, 0.0));
            e.0 += c.count;
            e.1 += c.net(inner, outer) * ns_per_tick;
        };
        for (i, c) in p.blocks.iter().enumerate().filter(|(_, c)| c.count > 0) {
            let name = prog.blocks.get(i).map_or_else(|| "?".to_string(), |b| variant(format!("{:?}", b.cmd)));
            add("command", name, c);
        }
        for (i, c) in p.exprs.iter().enumerate().filter(|(_, c)| c.count > 0) {
            let name = prog.exprs.get(i).map_or_else(|| "?".to_string(), |x| variant(format!("{:?}", x.rep)));
            add("reporter", name, c);
        }
        let outside = (p.outside as f64 - outer * p.outside_children as f64).max(0.0);
        let mut rows: Vec<OpRow> =
            by.into_iter().map(|((kind, name), (count, self_ns))| OpRow { kind, name, count, self_ns }).collect();
        rows.push(OpRow {
            kind: "outside",
            name: "scheduler, hats, inputs".to_string(),
            count: 0,
            self_ns: outside * ns_per_tick,
        });
        rows.sort_by(|a, b| b.self_ns.total_cmp(&a.self_ns).then_with(|| a.name.cmp(&b.name)));
        for (name, &n) in EVENT_NAMES.iter().zip(&p.events) {
            rows.push(OpRow { kind: "event", name: (*name).to_string(), count: n, self_ns: 0.0 });
        }
        *p = Prof::default();
        rows
    })
}
