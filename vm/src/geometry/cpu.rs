//! The geometry of the `default` and `whisker` profiles: the CPU renderer
//! ([`render`](super::render)) behind the interpreter's [`Geometry`] trait.
//!
//! Each question builds the renderer's scene from the live targets (stage, then the pen
//! layer once a pen block has used it, then sprites and clones in layer order) and asks
//! it; costumes come from the project's [`CostumeSet`], decoded once per project and
//! shared by every VM and clone. The mode is `approximate` when some costume has no usable
//! pixels (JSON-only projects, broken assets, SVG text), else `exact`.

use std::sync::Arc;

use super::distance;
use super::drawable::{Placement, RotationStyle};
use super::effects::Effects;
use super::pen::{PenAttributes, PenLayer};
use super::render::{Drawable, Scene as RenderScene};
use super::skin::CostumeSet;
use super::{Geometry, Rect, Scene, TargetView};
use crate::project::Project;
use crate::runtime::TargetId;

/// The pixel geometry of one VM: shared costumes, its own pen layer.
pub struct CpuGeometry {
    costumes: Arc<CostumeSet>,
    approximate: bool,
    pen: PenLayer,
    /// scratch-vm creates the pen layer on the first pen block; before that it is no drawable.
    pen_layer: bool,
}

impl CpuGeometry {
    /// The geometry for `project`, reusing the costumes decoded for it by earlier VMs.
    pub fn for_project(project: &Arc<Project>) -> CpuGeometry {
        let costumes = costume_set(project);
        let approximate = costumes.approximate();
        CpuGeometry { costumes, approximate, pen: PenLayer::new(), pen_layer: false }
    }

    fn drawable(&self, t: &TargetView<'_>) -> Option<Drawable> {
        let costume = usize::try_from(t.costume).ok()?;
        let skin = self.costumes.skin(t.sprite, costume)?;
        let placement = if t.is_stage {
            Placement { x: 0.0, y: 0.0, direction: 90.0, scale: [100.0, 100.0] }
        } else {
            Placement::from_target(t.x, t.y, t.direction, t.size, RotationStyle::parse(t.rotation_style))
        };
        Some(Drawable { skin, placement, visible: t.visible, effects: Effects::from_values(t.effects) })
    }

    /// The renderer's scene and, per drawable, the target it shows (`None` for the pen layer).
    fn scene(&mut self, s: &Scene<'_>) -> (RenderScene, Vec<Option<TargetId>>) {
        let order = s.layer_order();
        let mut drawables = Vec::with_capacity(order.len() + 1);
        let mut ids = Vec::with_capacity(order.len() + 1);
        for (k, &id) in order.iter().enumerate() {
            let Some(view) = s.target(id) else { continue };
            if let Some(d) = self.drawable(&view) {
                drawables.push(d);
                ids.push(Some(id));
            }
            if k == 0 && self.pen_layer {
                drawables.push(Drawable {
                    skin: self.pen.skin(),
                    placement: Placement { x: 0.0, y: 0.0, direction: 90.0, scale: [100.0, 100.0] },
                    visible: true,
                    effects: Effects::default(),
                });
                ids.push(None);
            }
        }
        (RenderScene { drawables }, ids)
    }

    fn index(ids: &[Option<TargetId>], id: TargetId) -> Option<usize> {
        ids.iter().position(|&i| i == Some(id))
    }
}

/// The project's costume set, created on first use and kept in the project's cache slot.
pub fn costume_set(project: &Arc<Project>) -> Arc<CostumeSet> {
    let any = project.geometry_data.0.get_or_init(|| CostumeSet::new(project.clone()));
    // Dropping the unwind-safety markers is a plain coercion; `downcast` needs `dyn Any + Send + Sync`.
    let any: Arc<dyn std::any::Any + Send + Sync> = any.clone();
    match any.downcast::<CostumeSet>() {
        // A cloned project shares the slot but not the set's (weak) project link.
        Ok(c) if c.project().is_some_and(|p| Arc::ptr_eq(&p, project)) => c,
        // Someone else's data, or another copy of the project: decode privately.
        _ => CostumeSet::new(project.clone()),
    }
}

fn to_rect(r: super::math::Rect) -> Rect {
    Rect { left: r.left, right: r.right, top: r.top, bottom: r.bottom }
}

impl Geometry for CpuGeometry {
    fn mode(&self) -> &'static str {
        if self.approximate { "approximate" } else { "exact" }
    }

    fn touching_sprite(&mut self, scene: &Scene, me: TargetId, sprite: usize) -> bool {
        let (s, ids) = self.scene(scene);
        let Some(i) = Self::index(&ids, me) else { return false };
        let cands: Vec<usize> = scene.instances_of(sprite).filter_map(|t| Self::index(&ids, t)).collect();
        s.touching_drawables(i, &cands)
    }

    fn touching_edge(&mut self, scene: &Scene, me: TargetId) -> bool {
        let (s, ids) = self.scene(scene);
        Self::index(&ids, me).is_some_and(|i| s.touching_edge(i))
    }

    fn touching_point(&mut self, scene: &Scene, me: TargetId, x: f64, y: f64) -> bool {
        let (s, ids) = self.scene(scene);
        Self::index(&ids, me).is_some_and(|i| s.touching_point(i, x, y))
    }

    fn touching_color(&mut self, scene: &Scene, me: TargetId, rgb: [u8; 3]) -> bool {
        let (s, ids) = self.scene(scene);
        Self::index(&ids, me).is_some_and(|i| s.touching_color(i, rgb, None))
    }

    fn color_touching_color(&mut self, scene: &Scene, me: TargetId, target: [u8; 3], mask: [u8; 3]) -> bool {
        let (s, ids) = self.scene(scene);
        Self::index(&ids, me).is_some_and(|i| s.touching_color(i, target, Some(mask)))
    }

    fn bounds(&mut self, scene: &Scene, me: TargetId) -> Option<Rect> {
        let (s, ids) = self.scene(scene);
        Self::index(&ids, me).map(|i| to_rect(s.bounds(i)))
    }

    fn fences(&self) -> bool {
        true
    }

    fn fenced_position(&mut self, scene: &Scene, me: TargetId, x: f64, y: f64) -> (f64, f64) {
        let (s, ids) = self.scene(scene);
        match Self::index(&ids, me) {
            Some(i) => {
                let [fx, fy] = s.fenced(i, x, y);
                (fx, fy)
            }
            None => (x, y),
        }
    }

    fn costume_size(&self, sprite: usize, costume: i64) -> Option<(f64, f64)> {
        let skin = self.costumes.skin(sprite, usize::try_from(costume).ok()?)?;
        let [w, h] = skin.size();
        Some((w, h))
    }

    fn pick(&mut self, scene: &Scene, x: f64, y: f64) -> Option<TargetId> {
        let (s, ids) = self.scene(scene);
        // The pen layer belongs to no target: a click on it is a click on the stage.
        let stage = scene.layer_order().first().copied();
        s.pick(x, y).and_then(|i| ids.get(i).copied().flatten().or(stage))
    }

    fn sprite_distance(&mut self, scene: &Scene, me: TargetId, sprite: usize) -> Option<f64> {
        if self.touching_sprite(scene, me, sprite) {
            return Some(0.0);
        }
        let m = scene.target(me)?;
        scene
            .instances_of(sprite)
            .filter(|&t| t != me)
            .filter_map(|t| scene.target(t))
            .map(|o| distance::centre_distance(m.x, m.y, o.x, o.y))
            .min_by(f64::total_cmp)
    }

    fn edge_distance(&mut self, scene: &Scene, me: TargetId) -> Option<f64> {
        if self.touching_edge(scene, me) {
            return Some(0.0);
        }
        let m = scene.target(me)?;
        Some(distance::edge_distance(m.x, m.y).max(0.0))
    }

    fn point_distance(&mut self, scene: &Scene, me: TargetId, x: f64, y: f64) -> Option<f64> {
        if self.touching_point(scene, me, x, y) {
            return Some(0.0);
        }
        let m = scene.target(me)?;
        Some(distance::centre_distance(m.x, m.y, x, y))
    }

    fn color_distance(&mut self, scene: &Scene, me: TargetId, rgb: [u8; 3]) -> Option<f64> {
        let (s, ids) = self.scene(scene);
        let i = Self::index(&ids, me)?;
        if s.touching_color(i, rgb, None) {
            return Some(0.0);
        }
        Some(distance::touching_color_distance(&s, i, rgb))
    }

    fn pen_clear(&mut self) {
        self.pen_layer = true;
        self.pen.clear();
    }

    fn pen_point(&mut self, rgba: [f64; 4], size: f64, x: f64, y: f64) {
        self.pen_layer = true;
        self.pen.draw_point(&PenAttributes { color4f: rgba, diameter: size }, x, y);
    }

    fn pen_line(&mut self, rgba: [f64; 4], size: f64, x0: f64, y0: f64, x1: f64, y1: f64) {
        self.pen_layer = true;
        self.pen.draw_line(&PenAttributes { color4f: rgba, diameter: size }, x0, y0, x1, y1);
    }

    fn pen_stamp(&mut self, scene: &Scene, me: TargetId) {
        self.pen_layer = true;
        let (s, ids) = self.scene(scene);
        if let Some(i) = Self::index(&ids, me) {
            self.pen.stamp(&s, i);
        }
    }
}
