//! Sequence coverage of test suites: how many orderings of events a suite exercises
//! (issue #20; Elyasaf et al., "Generalized Coverage Criteria for Combinatorial Sequence
//! Testing", §2.1–2.2 and §4.2.1).
//!
//! # Alphabet
//!
//! Each [`Event`] maps to a [`Symbol`]: *what* is acted on is kept, *how much* is dropped.
//!
//! | event | symbol | kept | dropped |
//! |---|---|---|---|
//! | `KeyPress` | `key:K` | the key | how long it is held |
//! | `ClickSprite` | `click:S` | the sprite | clone number, position, duration |
//! | `ClickStage` | `stage` | | |
//! | `TypeText` | `text:T` | the text | |
//! | `TypeNumber` | `number` | | the number |
//! | `MouseDown` | `mousedown` / `mouseup` | pressed or released | |
//! | `MouseMove` | `mousemove` | | coordinates |
//! | `MouseMoveTo` | `mousemoveto` | | coordinates |
//! | `DragSprite` | `drag:S` | the sprite | clone number, destination |
//! | `Sound` | `sound` | | volume, duration |
//! | `Wait` | `wait` | | duration |
//! | `GreenFlag` | `flag` | | |
//!
//! Why: keys, sprites and texts name different scripts or answers; the extractor offers a
//! small, fixed set of each (texts: `0`, `10`, `Hello`, one random text and the texts the
//! program compares with). Numbers (durations, coordinates, typed numbers, volumes) come
//! from codons and would make almost every event its own symbol. Clone numbers are dropped
//! because clones run their sprite's scripts and their numbers are an artefact of creation
//! order (the same number can be a different clone in another test). Pressing and releasing
//! the mouse are different actions with two values, so both are kept.
//!
//! The green flag that starts every test is not in [`Test::events`](crate::Test) and is not
//! a symbol of any test: it would precede every other symbol and add `|Σ| − 1` pairs that
//! every non-empty test covers. An explicit `GreenFlag` inside a test (only in imported or
//! hand-written suites) restarts the program, a real action, and counts as `flag`.
//! `Wait` counts: whether time passes between two events changes what a Scratch program
//! does.
//!
//! # Criteria
//!
//! Over an alphabet Σ with `k = |Σ|` symbols and for `t` ∈ {2, 3} ([`SequenceCounter`]):
//!
//! * **Kuhn–Higdon t-way sequence coverage** ([`Criterion::KuhnHigdon`]): the share of
//!   ordered t-tuples of *distinct* symbols that occur in some test as a subsequence (in
//!   that order, not necessarily adjacent). Denominator `k·(k−1)·…·(k−t+1)`.
//! * **Consecutive-window coverage Σ\*wΣ\*** ([`Criterion::Window`]): the share of words `w`
//!   of length `t` over Σ (repetitions allowed) that occur contiguously in some test.
//!   Denominator `k^t`.
//!
//! Edge cases: a test shorter than `t` covers nothing; repeated symbols never form a
//! Kuhn–Higdon tuple (a tuple has distinct symbols) but do form windows (`wait wait`); an
//! empty suite covers nothing. When the denominator is 0 (Kuhn–Higdon with `k < t`,
//! windows with `k = 0`) there is nothing to cover and the ratio is **1.0**, as a run's
//! statement coverage is for a project without targets. Events whose symbol is not in Σ
//! are skipped by Kuhn–Higdon and break windows (something happened between their
//! neighbours); with a run's own alphabet this never happens.
//!
//! # The alphabet of a run
//!
//! Which events extraction *could* offer is not known statically (it depends on the
//! states the program reaches), so a run's Σ is the set of symbols of the events of every
//! test the run's search executed (random tests, offspring, mutated tests, extensions): a
//! superset of the symbols of the unminimised suite (the archive), which are a superset of
//! those of the minimised suite (minimisation only removes events). All eight numbers of a
//! run ([`RunOutcome::seq_kh2`](crate::RunOutcome) …) use this one Σ, so the minimised and
//! unminimised values are comparable. Kuhn–Higdon coverage never grows under minimisation
//! (a subsequence of a test has fewer subsequences); window coverage can, since removing
//! an event makes its neighbours adjacent.
//!
//! # Cost
//!
//! Exact counts, no sampling; see [`SequenceCounter`] for the algorithms. One pass per
//! test, `O(n·k/64)` word operations for Kuhn–Higdon t = 2, `O(n·d·k/64)` for t = 3 (`d`
//! distinct symbols seen so far in the test), `O(n)` for windows. With up to a few hundred
//! symbols the covered tuples live in bitsets (at most 4 MiB each); beyond that in sorted
//! sets, in time and memory proportional to what is covered. `cargo bench -p
//! clowder-testgen --bench sequence` times 1 000 tests × 100 events over 50 symbols.
//!
//! [`risk`] holds the paper's Beta–Bernoulli residual-risk model (§2.3, §4.2.3).

mod count;
pub mod risk;

use std::fmt;

pub use count::{Criterion, DENSE_WORDS, SequenceCounter, Strength};

use crate::events::Event;

/// The kind of a [`Symbol`]; declaration order is the alphabet's sort order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SymbolKind {
    /// An explicit green flag inside a test.
    Flag,
    /// A key press (argument: the key).
    Key,
    /// A sprite click (argument: the sprite).
    Click,
    /// A stage click.
    Stage,
    /// A typed text (argument: the text).
    Text,
    /// A typed number.
    Number,
    /// Mouse button pressed.
    MouseDown,
    /// Mouse button released.
    MouseUp,
    /// Mouse moved to a chosen position.
    MouseMove,
    /// Mouse moved onto a sprite.
    MouseMoveTo,
    /// A sprite dragged (argument: the sprite).
    Drag,
    /// A sound.
    Sound,
    /// A wait.
    Wait,
}

impl SymbolKind {
    fn name(self) -> &'static str {
        match self {
            SymbolKind::Flag => "flag",
            SymbolKind::Key => "key",
            SymbolKind::Click => "click",
            SymbolKind::Stage => "stage",
            SymbolKind::Text => "text",
            SymbolKind::Number => "number",
            SymbolKind::MouseDown => "mousedown",
            SymbolKind::MouseUp => "mouseup",
            SymbolKind::MouseMove => "mousemove",
            SymbolKind::MouseMoveTo => "mousemoveto",
            SymbolKind::Drag => "drag",
            SymbolKind::Sound => "sound",
            SymbolKind::Wait => "wait",
        }
    }
}

/// An event with its numeric parameters abstracted away (see the module docs).
/// Displays as `key:space`, `click:Cat`, `wait`, ….
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Symbol {
    /// What kind of event.
    pub kind: SymbolKind,
    /// The key, sprite or text; empty for kinds without one.
    pub arg: String,
}

impl Symbol {
    /// The symbol of `ev`.
    pub fn of(ev: &Event) -> Symbol {
        let (kind, arg) = key(ev);
        Symbol { kind, arg: arg.to_string() }
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            SymbolKind::Key | SymbolKind::Click | SymbolKind::Text | SymbolKind::Drag => {
                write!(f, "{}:{}", self.kind.name(), self.arg)
            }
            k => f.write_str(k.name()),
        }
    }
}

/// The symbol of `ev` without allocating (sorts as [`Symbol`]).
fn key(ev: &Event) -> (SymbolKind, &str) {
    match ev {
        Event::GreenFlag => (SymbolKind::Flag, ""),
        Event::KeyPress { key, .. } => (SymbolKind::Key, key),
        Event::ClickSprite { sprite, .. } => (SymbolKind::Click, sprite),
        Event::ClickStage => (SymbolKind::Stage, ""),
        Event::TypeText { text } => (SymbolKind::Text, text),
        Event::TypeNumber { .. } => (SymbolKind::Number, ""),
        Event::MouseDown { down: true } => (SymbolKind::MouseDown, ""),
        Event::MouseDown { down: false } => (SymbolKind::MouseUp, ""),
        Event::MouseMove { .. } => (SymbolKind::MouseMove, ""),
        Event::MouseMoveTo { .. } => (SymbolKind::MouseMoveTo, ""),
        Event::DragSprite { sprite, .. } => (SymbolKind::Drag, sprite),
        Event::Sound { .. } => (SymbolKind::Sound, ""),
        Event::Wait { .. } => (SymbolKind::Wait, ""),
    }
}

/// An alphabet Σ: a sorted set of symbols, each with its index `0..len()`.
///
/// Indices follow the sort order, so they depend only on the set, never on the order in
/// which symbols were added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Alphabet {
    symbols: Vec<Symbol>,
}

impl Alphabet {
    /// The empty alphabet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The symbols of every event of `tests`.
    pub fn from_tests<'a>(tests: impl IntoIterator<Item = &'a [Event]>) -> Self {
        let mut a = Self::new();
        for t in tests {
            a.extend(t);
        }
        a
    }

    /// Adds the symbols of `events` (allocates only for symbols not yet present).
    pub fn extend(&mut self, events: &[Event]) {
        for ev in events {
            let k = key(ev);
            if let Err(at) = self.find(k) {
                self.symbols.insert(at, Symbol { kind: k.0, arg: k.1.to_string() });
            }
        }
    }

    fn find(&self, k: (SymbolKind, &str)) -> Result<usize, usize> {
        self.symbols.binary_search_by(|s| (s.kind, s.arg.as_str()).cmp(&k))
    }

    /// `|Σ|`.
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// True for the empty alphabet.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The symbols in index order.
    pub fn symbols(&self) -> &[Symbol] {
        &self.symbols
    }

    /// The index of `ev`'s symbol, if it is in the alphabet.
    pub fn index_of(&self, ev: &Event) -> Option<u32> {
        self.find(key(ev)).ok().map(|i| i as u32)
    }

    /// `events` as symbol indices into `out` (cleared first); events outside the alphabet
    /// become [`SequenceCounter::OUTSIDE`].
    pub fn encode(&self, events: &[Event], out: &mut Vec<u32>) {
        out.clear();
        out.extend(events.iter().map(|e| self.index_of(e).unwrap_or(SequenceCounter::OUTSIDE)));
    }
}

/// Covered and total items of one criterion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Covered {
    /// Items (tuples or words) covered.
    pub covered: u64,
    /// Items over the alphabet (the denominator).
    pub total: u128,
}

impl Covered {
    /// `covered / total`; 1.0 when there is nothing to cover.
    pub fn ratio(&self) -> f64 {
        if self.total == 0 { 1.0 } else { self.covered as f64 / self.total as f64 }
    }
}

/// Kuhn–Higdon and window coverage of one suite for t = 2 and 3 over one alphabet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SuiteCoverage {
    /// `|Σ|`.
    pub alphabet: u32,
    /// Kuhn–Higdon, t = 2.
    pub kh2: Covered,
    /// Kuhn–Higdon, t = 3.
    pub kh3: Covered,
    /// Windows, t = 2.
    pub win2: Covered,
    /// Windows, t = 3.
    pub win3: Covered,
}

/// The sequence coverage of `tests` (event lists) over `alphabet`.
pub fn suite_coverage<'a>(alphabet: &Alphabet, tests: impl IntoIterator<Item = &'a [Event]>) -> SuiteCoverage {
    let k = alphabet.len();
    let mut counters = [
        SequenceCounter::new(Criterion::KuhnHigdon, k, Strength::Two),
        SequenceCounter::new(Criterion::KuhnHigdon, k, Strength::Three),
        SequenceCounter::new(Criterion::Window, k, Strength::Two),
        SequenceCounter::new(Criterion::Window, k, Strength::Three),
    ];
    let mut buf = Vec::new();
    for t in tests {
        alphabet.encode(t, &mut buf);
        for c in &mut counters {
            c.add(&buf);
        }
    }
    let [kh2, kh3, win2, win3] = counters.map(|c| c.count());
    SuiteCoverage { alphabet: u32::try_from(k).unwrap_or(u32::MAX), kh2, kh3, win2, win3 }
}

#[cfg(test)]
mod tests;
