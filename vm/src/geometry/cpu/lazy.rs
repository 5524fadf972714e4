//! Lazy answers: queries that read only the asker's own drawable (touching the edge or a
//! point, bounds, fencing) answered from a stand-in or a loose transform instead of a sync
//! of the whole scene, rationed against what syncs cost.

use super::{CpuGeometry, Key, LAZY_SYNCS, OwnStandIn, placement_of};
use crate::engine::TargetId;
use crate::geometry::cost;
use crate::geometry::drawable::Xform;
use crate::geometry::render::{self, Scene as RenderScene};
use crate::geometry::{Rect, Scene};

impl CpuGeometry {
    /// Answers a query that reads nothing but the asker's own drawable (touching the edge or
    /// a point, bounds, fencing a new clone), mostly without bringing the rest of the scene up
    /// to date: `kept(self, position)` where the kept scene shows the asker as it is now, else
    /// `fresh(scene, position)` on the kept scene with the asker's drawable as it is now
    /// standing in for the query alone. A clone swarm whose members each move and then ask
    /// `touching edge?` would otherwise rebuild the changed drawables and their accelerated
    /// data before every question, and the whole scene after every clone created or deleted
    /// (`402092991`). Lazy answers are rationed ([`CpuGeometry::lazy`]): where questions
    /// come faster than changes (many targets asking after one step), one sync is cheaper.
    /// `None` where a synced scene would show no drawable for the asker.
    pub(super) fn own_query<R: PartialEq + std::fmt::Debug>(
        &mut self,
        s: &Scene<'_>,
        me: TargetId,
        kept: impl Fn(&mut Self, usize) -> R,
        fresh: impl FnOnce(&RenderScene, usize) -> R,
    ) -> Option<R> {
        let pos = self.index(me);
        if self.kept_is_current(s) {
            self.work += cost::QUERY;
            return pos.map(|i| kept(self, i));
        }
        let answer = self.own_query_changed(s, me, pos, &kept, fresh);
        if cfg!(debug_assertions) {
            // Test builds check the answer against a copy that brings the whole scene up to date.
            let mut synced = self.clone();
            let expected = synced.scene_with(s, me).map(|i| kept(&mut synced, i));
            assert_eq!(answer, expected, "a query on {me:?}'s own drawable differs from one after a sync");
        }
        answer
    }

    /// [`CpuGeometry::own_query`] when the VM changed something since the last sync.
    fn own_query_changed<R>(
        &mut self,
        s: &Scene<'_>,
        me: TargetId,
        pos: Option<usize>,
        kept: &impl Fn(&mut Self, usize) -> R,
        fresh: impl FnOnce(&RenderScene, usize) -> R,
    ) -> Option<R> {
        // A sync shows no drawable for a target without a key or a costume skin.
        let Some(key) = s.raw(me).and_then(Key::of) else { return self.scene_with(s, me).map(|i| kept(self, i)) };
        if let Some(i) = pos
            && self.keys.get(i) == Some(&Some(key))
        {
            self.work += cost::QUERY;
            return Some(kept(self, i));
        }
        // With the same targets as at the last sync, a sync only rebuilds the changed drawables
        // (and a `touching color` after `if on edge, bounce` would do it anyway).
        let same_targets = matches!((s.changes(), self.synced), (Some(c), Some(last)) if c.targets == last.targets);
        if same_targets {
            return self.scene_with(s, me).map(|i| kept(self, i));
        }
        // The same target asking again, unchanged, finds its stand-in ready.
        if !matches!(&self.stand_in, Some(o) if o.me == me && o.key == key) {
            let d = match self.lazy() {
                true => s.target(me).and_then(|view| self.drawable(&view, &key)),
                false => None,
            };
            let Some(d) = d else { return self.scene_with(s, me).map(|i| kept(self, i)) };
            let like = self.stand_in.as_ref().map(|l| &l.standing);
            let standing = self.scene.stand_in(pos.unwrap_or(usize::MAX), d, like);
            self.stand_in = Some(OwnStandIn { me, key, standing });
        }
        let own = self.stand_in.as_mut()?;
        self.work += cost::QUERY;
        Some(self.scene.with_stand_in(pos.unwrap_or(usize::MAX), &mut own.standing, fresh))
    }

    /// Whether to answer one more question lazily (a stand-in, a loose transform) instead of
    /// bringing the kept scene up to date: each is charged as a rebuilt drawable, until the
    /// lazy answers since the last sync cost [`LAZY_SYNCS`] times what that sync (or a full
    /// sync of the scene) did. Static clones asking every frame, each a stand-in until a sync,
    /// then get one sync; a swarm that changes between its questions gets one per few
    /// scenes' worth of questions.
    fn lazy(&mut self) -> bool {
        let full = cost::MOVE * self.scene.drawables.len() as u64 + cost::REFRESH;
        if self.lazy_work >= LAZY_SYNCS * full.max(self.sync_work) {
            return false;
        }
        self.lazy_work += cost::REFRESH;
        self.work += cost::REFRESH;
        true
    }

    /// The bounds of the drawable at `i`, kept with the accelerated data.
    pub(super) fn kept_bounds(&mut self, i: usize) -> Rect {
        let b = self.accel.bounds(&self.scene, i);
        if cfg!(debug_assertions) {
            assert_eq!(b, self.scene.bounds(i), "bounds of {i}");
        }
        b
    }

    /// [`Geometry::fenced_position`] of a mover the kept scene does not show (a new clone):
    /// from its transform alone while [`CpuGeometry::lazy`] allows, else after a sync.
    ///
    /// [`Geometry::fenced_position`]: crate::geometry::Geometry::fenced_position
    pub(super) fn fenced_loose(&mut self, scene: &Scene<'_>, me: TargetId, x: f64, y: f64) -> (f64, f64) {
        let Some(key) = scene.raw(me).and_then(Key::of) else { return self.fenced_after_sync(scene, me, x, y) };
        if !self.lazy() {
            return self.fenced_after_sync(scene, me, x, y);
        }
        let Some(xf) = self.current_xform(scene, me, &key, None) else {
            return self.fenced_after_sync(scene, me, x, y);
        };
        self.work += cost::QUERY;
        let [fx, fy] = render::fence(&xf, x, y);
        (fx, fy)
    }

    /// The transform target `me` (with inputs `key`) has now, moved from the one kept at `at`
    /// (or, for a target the kept scene does not show, from the last loose one) when only its
    /// position changed; `None` without a costume skin.
    pub(super) fn current_xform(
        &mut self,
        scene: &Scene<'_>,
        me: TargetId,
        key: &Key,
        at: Option<usize>,
    ) -> Option<Xform> {
        let (view, skin) = (scene.target(me)?, self.costumes.skin_ref(key.sprite, key.costume)?);
        if skin.approximate().is_some() {
            self.approximate.set(true);
        }
        let p = placement_of(&view, key);
        let xf = match at {
            Some(i) => self.scene.xform_at(i, &p, skin),
            None => self.scene.loose_xform(&p, skin, &mut self.loose),
        };
        if cfg!(debug_assertions) {
            // Test builds check the transform against one computed from scratch.
            let fresh = Xform::new(&p, skin.size(), skin.rotation_center());
            assert_eq!(format!("{xf:?}"), format!("{fresh:?}"), "fencing {me:?}");
        }
        Some(xf)
    }

    /// [`Geometry::fenced_position`] with the whole scene brought up to date first (a mover
    /// the kept scene does not show yet).
    ///
    /// [`Geometry::fenced_position`]: crate::geometry::Geometry::fenced_position
    pub(super) fn fenced_after_sync(&mut self, scene: &Scene<'_>, me: TargetId, x: f64, y: f64) -> (f64, f64) {
        match self.scene_with(scene, me) {
            Some(i) => {
                let [fx, fy] = self.scene.fenced(i, x, y);
                (fx, fy)
            }
            None => (x, y),
        }
    }
}
