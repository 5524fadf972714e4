//! `touching (sprite)`: sprite-against-sprite touching as word-wise ANDs of touching rows,
//! each row cached per drawable while it is unchanged.

use std::cell::Cell;
use std::sync::Arc;

use super::rows::{self, EMPTY, ROWS, Row};
use super::sampler::{Columns, Sampler};
use super::{Accel, Candidates, Info, Levels};
use crate::geometry::Rect;
use crate::geometry::cost;
use crate::geometry::render::Scene;

impl Accel {
    /// Touching row `y` of drawable `pos` at MIP `level`: cached while the drawable is unchanged.
    pub(super) fn row(&mut self, scene: &Scene, pos: usize, level: i32, y: i32) -> Row {
        row_of(&mut self.infos, &mut self.work, scene, pos, level, y)
    }

    /// `isTouchingDrawables(me, candidates)`, as [`Scene::touching_drawables`] with the
    /// candidates listed or, for [`Candidates::Sprite`], every instance of the sprite.
    pub(crate) fn touching_drawables(&mut self, scene: &Scene, me: usize, candidates: Candidates) -> bool {
        self.work += cost::QUERY;
        self.asked.0.clear();
        let Some(mb) = self.infos.get(me).and_then(|i| i.tbounds) else { return false };
        let mut levels = Levels::seeded(scene);
        let me_skin = &scene.drawables[me].skin;
        levels.request(me_skin, self.infos[me].l100);
        let mut list = std::mem::take(&mut self.list);
        list.clear();
        let mut finite = self.infos[me].finite;
        match &candidates {
            Candidates::List(cands) => {
                for &c in cands.iter().rev() {
                    let Some(ci) = self.infos.get(c) else { continue };
                    if c == me || !ci.visible {
                        continue;
                    }
                    levels.request(&scene.drawables[c].skin, ci.own);
                    if mb.intersects(&ci.snapped) {
                        finite &= ci.finite;
                        list.push((c, mb.intersect(&ci.snapped)));
                    }
                }
                self.work += cost::CANDIDATE * cands.len() as u64;
            }
            &Candidates::Sprite(s) => {
                // Every visible drawable of a sprite's skin is an instance of that sprite, so
                // the index's per-skin level is what the candidates ask for.
                let mut near = std::mem::take(&mut self.near);
                self.index.near(&mb, &mut near);
                for &c in &near {
                    let ci = &self.infos[c];
                    if c == me || ci.sprite != Some(s) || !mb.intersects(&ci.snapped) {
                        continue;
                    }
                    let skin = &scene.drawables[c].skin;
                    levels.request(skin, self.index.level(skin, None).unwrap_or(ci.own));
                    finite &= ci.finite;
                    list.push((c, mb.intersect(&ci.snapped)));
                }
                if self.infos[me].sprite == Some(s)
                    && let Some(l) = self.index.level(me_skin, None)
                {
                    levels.request(me_skin, l);
                }
                self.work += cost::CANDIDATE * near.len() as u64;
                self.near = near;
            }
        }
        let answer = if list.is_empty() || !self.infos[me].visible {
            false
        } else if !finite {
            match candidates {
                Candidates::List(cands) => scene.touching_drawables(me, &cands),
                Candidates::Sprite(s) => {
                    let cands: Vec<usize> =
                        (0..self.infos.len()).filter(|&c| self.infos[c].sprite == Some(s)).collect();
                    scene.touching_drawables(me, &cands)
                }
            }
        } else {
            levels.request(me_skin, self.infos[me].own);
            self.rows_meet(scene, me, &levels, &list)
        };
        self.list = list;
        self.asked = levels;
        answer
    }

    /// Whether some pixel of the union of the candidates' boxes is touched by `me` and one of them.
    fn rows_meet(&mut self, scene: &Scene, me: usize, levels: &Levels, list: &[(usize, Rect)]) -> bool {
        let mut u = list[0].1;
        for (_, r) in &list[1..] {
            u = u.union(r);
        }
        let cols = rows::range(u.left as i32, u.right as i32);
        let me_level = levels.of(&scene.drawables[me].skin);
        for y in u.bottom as i32..=u.top as i32 {
            self.work += cost::ROW_VISIT * (1 + list.len() as u64);
            let m = rows::and(&self.row(scene, me, me_level, y), &cols);
            if rows::is_empty(&m) {
                continue;
            }
            for &(c, _) in list {
                let r = self.row(scene, c, levels.of(&scene.drawables[c].skin), y);
                if rows::meet(&m, &r) {
                    return true;
                }
            }
        }
        false
    }
}

/// One drawable's touching rows, with the key each was computed under and what the rows share
/// ([`Columns`]): a whole stage of rows (about 3 250 words) once one is asked for. A clone of
/// the VM shares them (a replay's snapshot of a swarm copied 26 kB per drawable for rows that
/// most snapshots never change); a write into shared rows copies them first.
#[derive(Clone)]
pub(super) struct TouchRows {
    rows: Vec<Row>,
    key: Vec<u64>,
    columns: Columns,
}

impl TouchRows {
    fn new() -> TouchRows {
        TouchRows { rows: vec![EMPTY; ROWS], key: vec![0; ROWS], columns: Columns::default() }
    }

    /// The 8-byte words a copy of them copies.
    fn words(&self) -> u64 {
        let row = (std::mem::size_of::<Row>() as u64).div_ceil(8);
        self.rows.len() as u64 * row + self.key.len() as u64 + self.columns.heap_words()
    }
}

/// A drawable's [`TouchRows`] as kept: shared with the VM's clones.
#[derive(Default)]
pub(super) struct KeptRows {
    rows: Option<Arc<TouchRows>>,
    /// Set on both sides by a clone, cleared by the next write: that write is charged a copy
    /// on each side, whichever of the two actually copies, so that a VM and its clone count
    /// the same work as they go on.
    cloned: Cell<bool>,
}

impl Clone for KeptRows {
    fn clone(&self) -> KeptRows {
        if self.rows.is_some() {
            self.cloned.set(true);
        }
        KeptRows { rows: self.rows.clone(), cloned: Cell::new(self.cloned.get()) }
    }
}

impl KeptRows {
    /// Whether any row is kept (tests).
    #[cfg(test)]
    pub(super) fn any(&self) -> bool {
        self.rows.as_ref().is_some_and(|t| t.key.iter().any(|&k| k != 0))
    }
}

/// Touching row `y` of drawable `pos` at MIP `level` (see [`Accel::row`]).
fn row_of(infos: &mut [Box<Info>], work: &mut u64, scene: &Scene, pos: usize, level: i32, y: i32) -> Row {
    let Some(info) = infos.get_mut(pos) else { return EMPTY };
    let touch = info.touch.rows.get_or_insert_with(|| Arc::new(TouchRows::new()));
    let key = (info.ver << 5 | level as u64 & 31) + 1;
    let r = rows::row_index(y);
    if touch.key[r] == key {
        return touch.rows[r];
    }
    // Rows shared with a clone of the VM are copied before the write (by whichever side
    // writes first): charged here, where the copy is made, on both sides alike.
    if info.touch.cloned.replace(false) {
        *work += cost::CLONE_WORD * touch.words();
    }
    let touch = Arc::make_mut(touch);
    let d = &scene.drawables[pos];
    let s = Sampler::new(d, info.xf, d.skin.mip_ref(level), info.nearest);
    let (out, tested) = s.row(y, &mut touch.columns, key);
    *work += cost::ROW + cost::PIXEL * tested;
    touch.rows[r] = out;
    touch.key[r] = key;
    out
}
