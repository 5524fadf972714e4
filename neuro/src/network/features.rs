//! Input features of one game state (Whisker's `InputFeatures`: sprite → feature → value).
//!
//! A playthrough extracts features every step, and the names hardly ever change between steps
//! (a clone appears, a sprite hides). So the names live apart from the values: a [`Layout`] is
//! the sorted list of `(sprite, feature)` names, shared between steps and tagged with an id
//! that no other layout in the process carries; a network remembers which of its input nodes
//! each slot of the last layout it saw feeds, and loads the next step's values without comparing
//! a single name.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Ids handed to layouts; 0 is the empty layout's. Ids only tell layouts apart (a cache key):
/// no result depends on their values.
static NEXT_LAYOUT_ID: AtomicU64 = AtomicU64::new(1);

/// The names of a set of features: `(sprite, feature)` pairs, sorted and unique, as the keys
/// of Whisker's nested maps iterate here (byte order of the names, sprite first).
#[derive(Debug, PartialEq, Eq)]
pub struct Layout {
    id: u64,
    keys: Vec<(Box<str>, Box<str>)>,
}

impl Layout {
    /// The empty layout.
    fn empty() -> Arc<Layout> {
        Arc::new(Layout { id: 0, keys: Vec::new() })
    }

    /// The layout of features named `names` in the order they are set, where a name set again
    /// keeps the last value (a map's `set`), and for each position of `names` the slot of the
    /// layout its value goes to.
    pub fn of_names<S: AsRef<str>, F: AsRef<str>>(names: &[(S, F)]) -> (Arc<Layout>, Vec<u32>) {
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_by(|&a, &b| {
            let (sa, fa) = (&names[a].0, &names[a].1);
            let (sb, fb) = (&names[b].0, &names[b].1);
            sa.as_ref().cmp(sb.as_ref()).then_with(|| fa.as_ref().cmp(fb.as_ref()))
        });
        let mut keys: Vec<(Box<str>, Box<str>)> = Vec::with_capacity(names.len());
        let mut slots = vec![0u32; names.len()];
        for &i in &order {
            let (s, f) = (names[i].0.as_ref(), names[i].1.as_ref());
            if keys.last().is_none_or(|(ls, lf)| (&**ls, &**lf) != (s, f)) {
                keys.push((s.into(), f.into()));
            }
            slots[i] = (keys.len() - 1) as u32;
        }
        let id = if keys.is_empty() { 0 } else { NEXT_LAYOUT_ID.fetch_add(1, Ordering::Relaxed) };
        (Arc::new(Layout { id, keys }), slots)
    }

    /// Number of features.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are no features.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The layout's id: two layouts with the same id are the same layout.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// `(sprite, feature)` of every slot, in order.
    pub fn names(&self) -> impl Iterator<Item = (&str, &str)> {
        self.keys.iter().map(|(s, f)| (&**s, &**f))
    }
}

/// Input features of one state: a value per `(sprite, feature)` of a [`Layout`], iterated in
/// sorted order.
#[derive(Debug, Clone)]
pub struct Features {
    layout: Arc<Layout>,
    values: Vec<f64>,
}

impl Default for Features {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for Features {
    /// Same names with bitwise-equal values (NaN equals NaN: a feature can be NaN, as in JS).
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self.iter().zip(other.iter()).all(|(a, b)| (a.0, a.1) == (b.0, b.1) && a.2.to_bits() == b.2.to_bits())
    }
}

impl Features {
    /// No features.
    pub fn new() -> Self {
        Self { layout: Layout::empty(), values: Vec::new() }
    }

    /// Features set in the order given, the last value of a name set twice kept.
    pub fn from_entries<S: AsRef<str>, F: AsRef<str>>(entries: &[(S, F, f64)]) -> Self {
        let names: Vec<(&str, &str)> = entries.iter().map(|(s, f, _)| (s.as_ref(), f.as_ref())).collect();
        let (layout, slots) = Layout::of_names(&names);
        let values: Vec<f64> = entries.iter().map(|e| e.2).collect();
        let mut out = Self::new();
        out.assign(&layout, &slots, &values);
        out
    }

    /// Replaces the features by `values` set in order into `slots` of `layout` (the pair
    /// [`Layout::of_names`] returned), keeping this value's allocation.
    pub fn assign(&mut self, layout: &Arc<Layout>, slots: &[u32], values: &[f64]) {
        if !Arc::ptr_eq(&self.layout, layout) {
            self.layout = Arc::clone(layout);
        }
        self.values.clear();
        self.values.resize(layout.len(), 0.0);
        for (&slot, &value) in slots.iter().zip(values) {
            if let Some(v) = self.values.get_mut(slot as usize) {
                *v = value;
            }
        }
    }

    /// The layout of the names.
    pub fn layout(&self) -> &Arc<Layout> {
        &self.layout
    }

    /// The values, one per slot of [`Features::layout`].
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Number of features.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `(sprite, feature, value)` in sorted order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, f64)> {
        self.layout.names().zip(&self.values).map(|((s, f), &v)| (s, f, v))
    }

    /// The value of one feature.
    pub fn get(&self, sprite: &str, feature: &str) -> Option<f64> {
        let i = self.layout.keys.binary_search_by(|(s, f)| (&**s, &**f).cmp(&(sprite, feature))).ok()?;
        self.values.get(i).copied()
    }
}
