//! Rearrangements: after a layer change (or a full sync that moved drawables) the kept data
//! moves with its drawables instead of being rebuilt, and the composites forget only the
//! boxes whose stacking order changed.

use super::{Accel, Info};
use crate::geometry::cost;
use crate::geometry::render::Scene;

/// Scratch lists of [`Accel::rearrange`], kept so that a rearrangement allocates nothing.
#[derive(Default)]
pub(super) struct Moves {
    /// Per old position, the new one.
    to: Vec<Option<usize>>,
    /// The old positions of the kept drawables in their new order.
    seq: Vec<usize>,
    /// The old data, taken one by one.
    #[allow(clippy::vec_box)] // the boxes of `Accel::infos`, moved, not reallocated
    old: Vec<Option<Box<Info>>>,
    /// The range's data in its new order.
    #[allow(clippy::vec_box)] // as above
    placed: Vec<Box<Info>>,
}

/// Scratch space: a copy starts empty.
impl Clone for Moves {
    fn clone(&self) -> Self {
        Moves::default()
    }
}

impl Accel {
    /// Brings the kept data up to date after the scene was rearranged: the drawable now at
    /// position `p` is the unchanged one that was at `from[p]`, or (`None`) a new one. A
    /// layer change shifts every drawable above it by one place; moving their data (boxes,
    /// transforms, touching rows) is far cheaper than rebuilding it. Only the places from the
    /// first that changed on are visited (to the last that changed, when the scene kept its
    /// length): everything before and after keeps its place and data.
    pub(crate) fn rearrange(
        &mut self,
        scene: &Scene,
        from: &[Option<usize>],
        sprite_of: &dyn Fn(usize) -> Option<u32>,
    ) {
        let old_len = self.infos.len();
        let changed = |p: &usize| from.get(*p) != Some(&Some(*p));
        let lo = (0..old_len.min(from.len())).find(changed).unwrap_or(old_len.min(from.len()));
        // Old places `lo..old_end` become new places `lo..new_end`.
        let (old_end, new_end) = match from.len() == old_len {
            true => {
                let end = (lo..old_len).rev().find(changed).map_or(lo, |hi| hi + 1);
                (end, end)
            }
            false => (old_len, from.len()),
        };
        let Some(sub) = from.get(lo..new_end) else { return };
        let mut moves = std::mem::take(&mut self.moves);
        // Per old place in the range, the new one (the kept drawables of `sub` come from the
        // range: the places outside it are taken).
        let to = &mut moves.to;
        to.clear();
        to.resize(old_end - lo, None);
        for (k, f) in sub.iter().enumerate() {
            if let Some(t) = f.and_then(|o| o.checked_sub(lo)).and_then(|i| to.get_mut(i)) {
                *t = Some(lo + k);
            }
        }
        // Drawables that are gone (deleted, or rebuilt elsewhere) leave the index, and their
        // pixels are forgotten by every composite that shows them.
        for (i, t) in to.iter().enumerate() {
            if t.is_none() {
                self.index.remove(lo + i);
                self.forget_place(lo + i);
            }
        }
        // A pixel's colour depends on the order of the drawables over it. The kept drawables
        // in the longest run that kept its order still have it among themselves, so every pair
        // whose order flipped has one of the others in it: forgetting those boxes is enough.
        // The places around the range are before or after every drawable in it, so the
        // range's longest run is the scene's.
        for o in out_of_order(sub, &mut moves.seq) {
            self.forget_place(o);
        }
        // A composite follows the drawable it leaves out; one whose drawable is gone shows the
        // whole scene.
        for c in &mut self.comps {
            match c.exclude() {
                Some(e) if e >= old_len => c.forget_all(),
                Some(e) if (lo..old_end).contains(&e) => match to[e - lo] {
                    Some(p) => c.follow(p),
                    None => c.forget_all(),
                },
                _ => {}
            }
        }
        self.work += cost::MOVE * old_len as u64;
        self.index.permute(lo, to, from.len());
        let old = &mut moves.old;
        old.clear();
        old.extend(self.infos.drain(lo..old_end).map(Some));
        let mut placed = std::mem::take(&mut moves.placed);
        placed.clear();
        for (k, f) in sub.iter().enumerate() {
            let info = match f.and_then(|o| o.checked_sub(lo)).and_then(|i| old.get_mut(i).and_then(Option::take)) {
                Some(info) => Some(info),
                None => self.rebuild(scene, lo + k, None, None, sprite_of).map(Box::new),
            };
            // Every position of the scene has data (a drawable without a transform cannot
            // exist: `xform` fails only past the end).
            if let Some(info) = info {
                placed.push(info);
            }
        }
        self.infos.splice(lo..lo, placed.drain(..));
        // Data of deleted drawables goes now, not at the next rearrangement.
        old.clear();
        moves.placed = placed;
        self.moves = moves;
    }

    /// Every composite showing the drawable at `o` forgets its box (it left or moved past
    /// others), charged as one move.
    fn forget_place(&mut self, o: usize) {
        self.work += cost::MOVE;
        let b = self.infos[o].sbox;
        self.comps.iter_mut().filter(|c| c.exclude() != Some(o)).for_each(|c| c.invalidate(&b));
    }
}

/// The old positions of the kept drawables outside a longest run whose order is unchanged:
/// `from[p]` is where the drawable now at `p` was (`None`: new). A scene rearranged by one
/// layer change, clone or deletion (nearly every full sync) is answered in one pass; else
/// patience sorting, O(n log n), which gives the same answer where both apply.
/// `seq` is scratch space.
fn out_of_order(from: &[Option<usize>], seq: &mut Vec<usize>) -> Vec<usize> {
    seq.clear();
    seq.extend(from.iter().flatten());
    if let Some(moved) = one_out_of_order(seq) {
        debug_assert_eq!(moved, longest_run_leaves(seq), "one-pass answer of {seq:?}");
        return moved;
    }
    longest_run_leaves(seq)
}

/// [`out_of_order`] of `seq` when leaving out at most one element sorts it, else `None`. Of
/// an adjacent pair that swapped, the earlier (larger) one is left out, as patience sorting does.
fn one_out_of_order(seq: &[usize]) -> Option<Vec<usize>> {
    let Some(i) = seq.windows(2).position(|w| w[0] > w[1]) else { return Some(Vec::new()) };
    let sorted_without = |k: usize| {
        let mut last: Option<usize> = None;
        seq.iter().enumerate().filter(|&(j, _)| j != k).all(|(_, &v)| {
            let ok = last.is_none_or(|l| l < v);
            last = Some(v);
            ok
        })
    };
    [i, i + 1].into_iter().find(|&k| sorted_without(k)).map(|k| vec![seq[k]])
}

/// Patience sorting: the elements of `seq` outside the longest increasing run it finds.
fn longest_run_leaves(seq: &[usize]) -> Vec<usize> {
    // tails[k]: index into `seq` of the smallest tail of an increasing run of length k + 1;
    // prev[i]: the element before seq[i] in its run.
    let mut tails: Vec<usize> = Vec::new();
    let mut prev: Vec<Option<usize>> = vec![None; seq.len()];
    for (i, &v) in seq.iter().enumerate() {
        let k = tails.partition_point(|&t| seq[t] < v);
        prev[i] = k.checked_sub(1).map(|k| tails[k]);
        if k == tails.len() {
            tails.push(i);
        } else {
            tails[k] = i;
        }
    }
    let mut in_run = vec![false; seq.len()];
    let mut at = tails.last().copied();
    while let Some(i) = at {
        in_run[i] = true;
        at = prev[i];
    }
    seq.iter().zip(&in_run).filter(|(_, r)| !**r).map(|(&v, _)| v).collect()
}

#[cfg(test)]
mod tests {
    use crate::rng::SplitMix64;

    #[test]
    fn out_of_order_leaves_a_longest_ordered_run() {
        use super::out_of_order;
        let s = |v: &[usize]| v.iter().map(|&x| Some(x)).collect::<Vec<_>>();
        let out_of_order = |from: &[Option<usize>]| out_of_order(from, &mut Vec::new());
        assert_eq!(out_of_order(&s(&[0, 1, 2, 3])), Vec::<usize>::new());
        assert_eq!(out_of_order(&s(&[0, 2, 3, 1])), vec![1]);
        assert_eq!(out_of_order(&s(&[0, 3, 1, 2])), vec![3]);
        assert_eq!(out_of_order(&[Some(0), None, Some(2), Some(1)]).len(), 1);
        let mut moved = out_of_order(&s(&[3, 2, 1, 0]));
        moved.sort();
        assert_eq!(moved.len(), 3);
    }

    /// The one-pass answer for a scene changed by one move, insertion, deletion or swap is the
    /// one patience sorting gives (the kept composites forget the same boxes either way).
    #[test]
    fn one_pass_out_of_order_equals_patience_sorting() {
        use super::{longest_run_leaves, one_out_of_order};
        let mut rng = SplitMix64::new(7);
        let mut answered = 0;
        for _ in 0..4000 {
            let n = 1 + rng.below(12) as usize;
            let mut seq: Vec<usize> = (0..n).collect();
            for _ in 0..rng.below(3) {
                if seq.is_empty() {
                    break;
                }
                let len = seq.len() as u64;
                let (a, b) = (rng.below(len) as usize, rng.below(len) as usize);
                match rng.below(3) {
                    0 => {
                        let v = seq.remove(a);
                        seq.insert(b.min(seq.len()), v);
                    }
                    1 => {
                        seq.remove(a);
                    }
                    _ => seq.swap(a, (a + 1).min(len as usize - 1)),
                }
            }
            if let Some(moved) = one_out_of_order(&seq) {
                answered += 1;
                assert_eq!(moved, longest_run_leaves(&seq), "{seq:?}");
            } else {
                assert!(longest_run_leaves(&seq).len() > 1, "{seq:?}");
            }
        }
        assert!(answered > 2000, "one-pass answers: {answered}");
    }
}
