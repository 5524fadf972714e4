//! The rearrangements a sync from the change log makes in place (new clones appended,
//! deleted ones taken out, one drawable moved between layers), each recorded for the
//! accelerated data as a full sync would.

use super::{CpuGeometry, Key};
use crate::geometry::Scene;
use crate::geometry::cost;
use crate::geometry::render;

impl CpuGeometry {
    /// Appends the drawables of live targets the kept scene does not show (new clones) at its
    /// end, for a query that does not depend on the order.
    pub(super) fn append_new(&mut self, s: &Scene<'_>) {
        for &id in s.layer_order() {
            if self.index(id).is_some() {
                continue;
            }
            let Some(key) = s.raw(id).and_then(Key::of) else { continue };
            let Some(d) = s.target(id).and_then(|view| self.drawable(&view, &key)) else { continue };
            let pos = self.scene.drawables.len();
            self.put(pos, d, Some(key), Some(id));
            let slot = id.slot as usize;
            if slot >= self.slot_pos.len() {
                self.slot_pos.resize(slot + 1, None);
            }
            self.slot_pos[slot] = Some((id.gn, pos));
        }
    }

    /// Takes the drawables of deleted targets out of the kept scene, each hole filled by the
    /// last drawable, for a query that does not depend on the order; records the arrangement
    /// for the accelerated data (drawables it has not seen, appended or rebuilt since the
    /// last sync, are rebuilt there).
    pub(super) fn remove_gone(&mut self, s: &Scene<'_>) {
        let mut gone = std::mem::take(&mut self.spare.seq);
        gone.clear();
        gone.extend(self.ids.iter().enumerate().filter_map(|(p, id)| id.filter(|&id| s.raw(id).is_none()).map(|_| p)));
        if gone.is_empty() {
            self.spare.seq = gone;
            return;
        }
        let seen = self.accel.len();
        let mut from = std::mem::take(&mut self.spare.from);
        from.clear();
        from.extend((0..self.scene.drawables.len()).map(Some));
        // Highest first: the last drawable is then never one still to be taken out.
        for &p in gone.iter().rev() {
            if let Some(Some(id)) = self.ids.get(p)
                && let Some(sp) = self.slot_pos.get_mut(id.slot as usize)
                && *sp == Some((id.gn, p))
            {
                *sp = None;
            }
            self.scene.swap_remove(p);
            self.keys.swap_remove(p);
            self.ids.swap_remove(p);
            from.swap_remove(p);
            if let Some(Some(id)) = self.ids.get(p)
                && let Some(sp) = self.slot_pos.get_mut(id.slot as usize)
            {
                *sp = Some((id.gn, p));
            }
        }
        self.spare.seq = gone;
        // Appended or rebuilt since the last sync: new to the accelerated data.
        let rebuilt = std::mem::take(&mut self.changed);
        for (p, f) in from.iter_mut().enumerate() {
            if f.is_some_and(|o| o >= seen || rebuilt.contains(&o)) {
                *f = None;
            }
            if f.is_none() {
                self.changed.push(p);
            }
        }
        self.rearranged = Some(from);
    }

    /// How the live targets that have drawables are ordered, in layer order, against the
    /// kept scene: `Some(None)` as kept, `Some(Some((a, b)))` as kept but for the drawable at
    /// `a`, now at `b`; `None` otherwise (a new clone, a deleted one, several moves). A kept
    /// target losing its drawable shows in the change log, which
    /// [`CpuGeometry::sync_changes`] checks.
    pub(super) fn layer_move(&mut self, s: &Scene<'_>) -> Option<Option<(usize, usize)>> {
        let mut seq = std::mem::take(&mut self.spare.seq);
        seq.clear();
        for &id in s.layer_order() {
            match self.index(id) {
                Some(o) => seq.push(o),
                // Not in the kept scene: fine unless it should be (a new clone).
                None if s.raw(id).and_then(Key::of).is_some() => {
                    self.spare.seq = seq;
                    return None;
                }
                None => {}
            }
        }
        // Kept order: every position but the pen layer's, ascending.
        let pen = self.pen_pos;
        let kept = |k: usize| if pen.is_some_and(|p| k >= p) { k + 1 } else { k };
        let n = self.ids.len() - usize::from(pen.is_some());
        let differ = |k: &usize| seq.get(*k) != Some(&kept(*k));
        let answer = match ((0..n).find(differ), (0..n).rev().find(differ)) {
            _ if seq.len() != n => None,
            (None, _) | (_, None) => Some(None),
            (Some(i), Some(j)) => {
                let (lo, hi) = (kept(i), kept(j));
                // One drawable moved up from `lo` to `hi`, or down from `hi` to `lo`; the others
                // in between kept their order (and the pen layer is not among them).
                let contiguous = hi - lo == j - i;
                let up = seq[j] == lo && (i..j).all(|k| seq[k] == kept(k + 1));
                let down = seq[i] == hi && (i + 1..=j).all(|k| seq[k] == kept(k - 1));
                match (contiguous, up, down) {
                    (true, true, _) => Some(Some((lo, hi))),
                    (true, _, true) => Some(Some((hi, lo))),
                    _ => None,
                }
            }
        };
        self.spare.seq = seq;
        answer
    }

    /// Moves the drawable at `a` to `b` (the ones in between shift by one place towards `a`),
    /// with its inputs and target, and records the arrangement for the accelerated data, as a
    /// full sync would: a drawable rebuilt at its old place is rebuilt at its new one.
    pub(super) fn move_drawable(&mut self, a: usize, b: usize) {
        let (lo, hi) = (a.min(b), a.max(b));
        let len = self.scene.drawables.len();
        if hi >= len || self.keys.len() != len || self.ids.len() != len {
            return;
        }
        render::move_item(&mut self.keys, a, b);
        render::move_item(&mut self.ids, a, b);
        self.scene.move_drawable(a, b);
        // Where each position's drawable was.
        let mut from = std::mem::take(&mut self.spare.from);
        from.clear();
        from.extend((0..len).map(Some));
        for (p, f) in from.iter_mut().enumerate().take(hi + 1).skip(lo) {
            *f = Some(match (p == b, a < b) {
                (true, _) => a,
                (false, true) => p + 1,
                (false, false) => p - 1,
            });
        }
        for c in &mut self.changed {
            let p = match *c {
                o if o == a => b,
                o if (lo..=hi).contains(&o) && a < b => o - 1,
                o if (lo..=hi).contains(&o) => o + 1,
                o => o,
            };
            from[p] = None;
            *c = p;
        }
        for p in lo..=hi {
            if let Some(Some(id)) = self.ids.get(p)
                && let Some(sp) = self.slot_pos.get_mut(id.slot as usize)
            {
                *sp = Some((id.gn, p));
            }
        }
        // Charged as the full sync this replaces is (`sync`): the same work, whichever path.
        self.work += cost::MOVE * len as u64;
        self.rearranged = Some(from);
    }
}
