//! Keeping the per-drawable data in step with the scene after drawables were rebuilt in place
//! (or the scene grew or shrank): each rebuilt one is measured again and entered in the index,
//! and the composites forget the pixels it and its predecessor covered.

use super::index::{SceneIndex, Visible};
use super::{Accel, Info, PenChange, STAGE};
use crate::geometry::Rect;
use crate::geometry::cost;
use crate::geometry::effects::bit;
use crate::geometry::render::{Drawable, Scene};

impl Accel {
    /// Brings the kept data up to date after the drawables at `changed` were rebuilt (the
    /// scene may also have shrunk or grown). `pen` describes a pen-layer-only change.
    /// `sprite_of` tells which sprite the drawable at a position is an instance of.
    pub(crate) fn refresh(
        &mut self,
        scene: &Scene,
        changed: &[usize],
        pen: Option<PenChange>,
        sprite_of: &dyn Fn(usize) -> Option<u32>,
    ) {
        let n = scene.drawables.len();
        while self.infos.len() > n {
            if let Some(old) = self.infos.pop() {
                self.index.remove(self.infos.len());
                self.comps.iter_mut().for_each(|c| c.invalidate(&old.sbox));
            }
        }
        let mut fresh: Vec<usize> = changed.to_vec();
        fresh.extend(self.infos.len()..n);
        for pos in fresh {
            let old = self.infos.get(pos).map(|i| (i.sbox, i.pen));
            let Some(info) = self.rebuild(scene, pos, old, pen.as_ref(), sprite_of) else { continue };
            match self.infos.get_mut(pos) {
                Some(slot) => {
                    // Keep the row buffers; a new version makes their contents stale, the
                    // old one (same shape) keeps them.
                    let mut info = info;
                    if slot.same_shape(&info) {
                        info.ver = slot.ver;
                    }
                    let old = std::mem::replace(&mut **slot, info);
                    slot.touch = old.touch;
                    slot.mask = old.mask;
                }
                None => self.infos.push(Box::new(info)),
            }
        }
    }

    /// The data of the drawable now at `pos`, entered in the index, its pixels forgotten by
    /// the composites; `old` is the box and pen flag of the drawable it replaces there.
    pub(super) fn rebuild(
        &mut self,
        scene: &Scene,
        pos: usize,
        old: Option<(Rect, bool)>,
        pen: Option<&PenChange>,
        sprite_of: &dyn Fn(usize) -> Option<u32>,
    ) -> Option<Info> {
        let d = scene.drawables.get(pos)?;
        let xf = scene.xform(pos)?;
        self.work += cost::REFRESH;
        self.next_ver += 1;
        let pen_only = pen.filter(|p| p.pos == pos).and_then(|p| p.dirty.as_deref());
        let was_pen = old.is_some_and(|(_, p)| p);
        let is_pen = pen.is_some_and(|p| p.pos == pos);
        let backdrop = pos == 0 && d.placement == STAGE;
        let info = Info::new(d, xf, self.next_ver, is_pen, backdrop, sprite_of(pos));
        enter(&mut self.index, pos, d, &info);
        for c in &mut self.comps {
            match (was_pen && is_pen, pen_only) {
                // Only pixels of the pen layer changed, and we know where.
                (true, Some(dirty)) => dirty.iter().for_each(|b| c.invalidate(b)),
                // A composite leaving this position out does not depend on it.
                _ if c.exclude() == Some(pos) => {}
                _ => {
                    if let Some((b, _)) = &old {
                        c.invalidate(b);
                    }
                    c.invalidate(&info.sbox);
                }
            }
        }
        Some(info)
    }
}

/// Enters drawable `d` at `pos` into the index if it is visible, else takes it out.
fn enter(index: &mut SceneIndex, pos: usize, d: &Drawable, info: &Info) {
    if info.visible {
        let colour_effects = d.effects.enabled & (bit::COLOR | bit::BRIGHTNESS | bit::GHOST) != 0;
        let v =
            Visible { snapped: &info.snapped, skin: &d.skin, level: info.own, nonfinite: !info.finite, colour_effects };
        index.insert(pos, v);
    } else {
        index.remove(pos);
    }
}
