//! The accelerated queries equal the reference renderer's on random scenes, also after the
//! scene changes between queries (the kept rows, composites and walks must follow).

use std::sync::Arc;

use super::{Accel, Candidates, PenChange};
use crate::geometry::Rect;
use crate::geometry::distance::touching_color_distance;
use crate::geometry::drawable::{Placement, RotationStyle};
use crate::geometry::effects::Effects;
use crate::geometry::pen::{PenAttributes, PenLayer};
use crate::geometry::render::{Drawable, Scene, match_rects};
use crate::geometry::silhouette::color_key;
use crate::geometry::skin::Skin;
use crate::rng::SplitMix64;

const COLOURS: [[u8; 3]; 5] = [[255, 0, 0], [0, 160, 255], [20, 200, 40], [128, 128, 128], [250, 250, 250]];

/// A bitmap skin: solid, with holes, or with soft (half-transparent) edges.
fn bitmap(rng: &mut SplitMix64) -> Arc<Skin> {
    let (w, h) = (1 + rng.below(60) as u32, 1 + rng.below(60) as u32);
    let c = COLOURS[rng.below(5) as usize];
    let kind = rng.below(3);
    let mut rgba = Vec::with_capacity((w * h * 4) as usize);
    for y in 0..h {
        for x in 0..w {
            let edge = x == 0 || y == 0 || x + 1 == w || y + 1 == h;
            let a = match kind {
                0 => 255,
                1 if (x * 3 + y * 5) % 7 == 0 => 0,
                2 if edge => 100,
                _ => 255,
            };
            rgba.extend_from_slice(&[c[0], c[1], c[2], a]);
        }
    }
    Arc::new(Skin::from_rgba_res2(w, h, rgba, None))
}

/// An SVG skin (anti-aliased edges; MIP levels depend on the drawable's size).
fn svg(rng: &mut SplitMix64) -> Arc<Skin> {
    ellipse_svg(rng, &COLOURS)
}

/// An anti-aliased SVG ellipse of random size in one of `colours` (also the radial colour
/// search's tests use it).
pub(crate) fn ellipse_svg(rng: &mut SplitMix64, colours: &[[u8; 3]; 5]) -> Arc<Skin> {
    let (w, h) = (4 + rng.below(50), 4 + rng.below(50));
    let c = colours[rng.below(5) as usize];
    let text = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}"><ellipse cx="{}" cy="{}" rx="{}" ry="{}" fill="rgb({},{},{})"/></svg>"##,
        w as f64 / 2.0,
        h as f64 / 2.0,
        w as f64 / 2.0 - 0.7,
        h as f64 / 2.5,
        c[0],
        c[1],
        c[2]
    );
    Arc::new(Skin::from_svg(text.as_bytes(), None).expect("valid svg"))
}

fn effects(rng: &mut SplitMix64) -> Effects {
    let mut fx = [0.0; 7];
    match rng.below(10) {
        0 => fx[0] = 25.0,
        1 => fx[6] = 50.0,
        2 => fx[1] = 30.0,
        3 => fx[2] = 90.0,
        4 => fx[4] = 20.0,
        5 => fx[5] = -40.0,
        // Fully ghosted: shows nothing, touches all the same.
        6 => fx[6] = 100.0,
        _ => {}
    }
    Effects::from_values(fx)
}

fn placement(rng: &mut SplitMix64) -> Placement {
    let xy = |r: &mut SplitMix64, half: u64| r.below(2 * half) as f64 - half as f64 + if r.coin(4) { 0.5 } else { 0.0 };
    let direction = match rng.below(4) {
        0 => 90.0,
        1 => -90.0,
        _ => rng.below(360) as f64 - 179.0,
    };
    let size = match rng.below(4) {
        0 => 100.0,
        1 => 50.0,
        _ => 20.0 + rng.below(300) as f64,
    };
    let style = [RotationStyle::AllAround, RotationStyle::LeftRight, RotationStyle::DontRotate][rng.below(3) as usize];
    // Mostly near the centre, so that sprites overlap often; sometimes off the stage.
    let (hx, hy) = if rng.coin(4) { (260, 200) } else { (60, 45) };
    Placement::from_target(xy(rng, hx), xy(rng, hy), direction, size, style)
}

/// A stage backdrop, then sprites; some sprites share skins (clones at other sizes).
fn random_scene(rng: &mut SplitMix64) -> Scene {
    let stage_colour = COLOURS[rng.below(5) as usize];
    // Half the scenes have a real backdrop (480 × 360 at resolution 2, drawn where the stage
    // is, so its colours come from the per-project plane), half a scaled-up small bitmap.
    let (w, h, scale) = if rng.coin(2) { (960, 720, 100.0) } else { (96, 72, 500.0) };
    let stage = Drawable {
        skin: Arc::new(Skin::from_rgba_res2(
            w,
            h,
            (0..w * h)
                .flat_map(|i| {
                    if i % 97 == 0 { [0, 0, 0, 255] } else { [stage_colour[0], stage_colour[1], stage_colour[2], 255] }
                })
                .collect(),
            None,
        )),
        placement: Placement { x: 0.0, y: 0.0, direction: 90.0, scale: [scale, scale] },
        visible: !rng.coin(3),
        effects: if rng.coin(4) {
            Effects::from_values([30.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
        } else {
            Effects::default()
        },
    };
    let mut drawables = vec![stage];
    let mut skins: Vec<Arc<Skin>> = Vec::new();
    for _ in 0..2 + rng.below(7) {
        let skin = if !skins.is_empty() && rng.coin(3) {
            skins[rng.below(skins.len() as u64) as usize].clone()
        } else if rng.coin(3) {
            svg(rng)
        } else {
            bitmap(rng)
        };
        skins.push(skin.clone());
        drawables.push(Drawable { skin, placement: placement(rng), visible: !rng.coin(6), effects: effects(rng) });
    }
    Scene::new(drawables)
}

fn probe_colours(scene: &Scene, rng: &mut SplitMix64) -> Vec<[u8; 3]> {
    let mut c: Vec<[u8; 3]> = COLOURS.to_vec();
    c.extend([[255, 255, 255], [0, 0, 0]]);
    for _ in 0..4 {
        c.push(scene.sample_color(rng.below(480) as f64 - 240.0, rng.below(360) as f64 - 180.0, None));
    }
    c
}

/// The "sprite" of a drawable in these scenes: its skin, numbered in order of first use (the
/// stage is none), as every instance of a Scratch sprite shares its sprite's skins. Like a
/// sprite, it stays with the drawable when the scene is rearranged.
fn sprite_of(scene: &Scene, pos: usize) -> Option<u32> {
    thread_local! {
        static SKINS: std::cell::RefCell<Vec<Arc<Skin>>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let skin = &scene.drawables.get(pos)?.skin;
    if skin.sampling() == crate::geometry::render::Sampling::Pen || pos == 0 {
        return None;
    }
    SKINS.with(|s| {
        let mut s = s.borrow_mut();
        let i = s.iter().position(|k| Arc::ptr_eq(k, skin)).unwrap_or_else(|| {
            s.push(skin.clone());
            s.len() - 1
        });
        Some(i as u32)
    })
}

fn check_all(scene: &Scene, accel: &mut Accel, rng: &mut SplitMix64, counts: &mut [usize; 4]) {
    let n = scene.drawables.len();
    let all: Vec<usize> = (0..n).collect();
    let colours = probe_colours(scene, rng);
    for me in 1..n {
        let cands: Vec<usize> = all.iter().copied().filter(|&c| c != 0 && (c + me) % 3 != 0).collect();
        let want = scene.touching_drawables(me, &cands);
        assert_eq!(
            accel.touching_drawables(scene, me, Candidates::List(cands.clone())),
            want,
            "touching {me} {cands:?}"
        );
        counts[0] += usize::from(want);
        // By sprite, through the index: a sprite is the drawables sharing a skin.
        let sprite = sprite_of(scene, me.max(1) - 1 + (me % 2));
        let instances: Vec<usize> = (0..n).filter(|&c| sprite_of(scene, c) == sprite).collect();
        if let Some(s) = sprite {
            let want = scene.touching_drawables(me, &instances);
            assert_eq!(
                accel.touching_drawables(scene, me, Candidates::Sprite(s)),
                want,
                "touching sprite {s} from {me}"
            );
            counts[0] += usize::from(want);
        }
        assert_eq!(accel.bounds(scene, me), scene.bounds(me), "bounds {me}");
        for &c in &colours {
            let want = scene.touching_color(me, c, None);
            assert_eq!(accel.touching_color(scene, me, c, None), want, "touching colour {c:?} from {me}");
            counts[1] += usize::from(want);
            let m = colours[rng.below(colours.len() as u64) as usize];
            let want = scene.touching_color(me, c, Some(m));
            assert_eq!(accel.touching_color(scene, me, c, Some(m)), want, "colour {m:?} touching {c:?} from {me}");
            counts[2] += usize::from(want);
            let want = touching_color_distance(scene, me, c);
            let got = accel.color_distance(scene, me, c, f64::INFINITY);
            assert_eq!(got.to_bits(), want.to_bits(), "colour distance {c:?} from {me}: {got} vs {want}");
            // Bounded searches stop early and answer min(distance, bound): bounds just below,
            // at and above the answer, and anywhere on the stage's scale.
            let near = [want * 0.999, want, want * 1.001, rng.below(1000) as f64 / 1000.0];
            for below in near.into_iter().chain([0.0, 0.004, 0.02]) {
                let got = accel.color_distance(scene, me, c, below);
                assert_eq!(got.to_bits(), want.min(below).to_bits(), "colour distance {c:?} from {me} below {below}");
            }
            counts[3] += usize::from(want < 1.0);
        }
    }
}

#[test]
fn accelerated_queries_equal_the_reference() {
    let mut rng = SplitMix64::new(11);
    let mut counts = [0usize; 4];
    for round in 0..40 {
        let mut scene = random_scene(&mut rng);
        let mut accel = Accel::default();
        accel.refresh(&scene, &[], None, &|p| sprite_of(&scene, p));
        check_all(&scene, &mut accel, &mut rng, &mut counts);
        // Change a few drawables (move, resize, hide, restyle) and check again with the kept data.
        for _ in 0..3 {
            let mut changed = Vec::new();
            for i in 1..scene.drawables.len() {
                if rng.coin(2) {
                    let d = &mut scene.drawables[i];
                    match rng.below(4) {
                        0 => d.placement = placement(&mut rng),
                        1 => d.visible = !d.visible,
                        2 => d.effects = effects(&mut rng),
                        _ => {
                            d.placement.x += 1.0;
                            d.placement.y -= 2.0;
                        }
                    }
                    changed.push(i);
                }
            }
            if round % 5 == 0 {
                // The scene shrinks (a clone deleted): the last drawable goes.
                scene.drawables.pop();
            }
            scene.refresh_transforms_of(&changed);
            accel.refresh(&scene, &changed, None, &|p| sprite_of(&scene, p));
            check_all(&scene, &mut accel, &mut rng, &mut counts);
        }
    }
    // Every kind of answer occurred both ways.
    assert!(counts.iter().all(|&c| c > 20), "positive answers per kind: {counts:?}");
}

/// With the MIPs a live renderer keeps (the `whisker` profile): floors raised between queries,
/// by hand and by what the queries asked, with the drawables unchanged or changed. The kept
/// rows, composites and bounds must follow the silhouettes' levels.
#[test]
fn accelerated_queries_follow_kept_mips() {
    let mut rng = SplitMix64::new(31);
    let mut counts = [0usize; 4];
    let mut raised = 0;
    for _ in 0..30 {
        let mut scene = random_scene(&mut rng);
        let mut accel = Accel::default();
        accel.refresh(&scene, &[], None, &|p| sprite_of(&scene, p));
        check_all(&scene, &mut accel, &mut rng, &mut counts);
        for _ in 0..4 {
            let before = scene.floors.clone();
            // What the last query created stays; some skins were drawn larger in between.
            let asked = accel.asked().entries().to_vec();
            scene.floors.raise_all(&asked);
            for i in 1..scene.drawables.len() {
                let skin = scene.drawables[i].skin.clone();
                if rng.coin(3) {
                    let level = skin.mip_level(scene.drawables[i].placement.render_scale()) + rng.below(3) as i32;
                    scene.floors.raise(&skin, level);
                }
            }
            raised += usize::from(scene.floors != before);
            let mut changed = Vec::new();
            if rng.coin(2) {
                let i = 1 + rng.below(scene.drawables.len() as u64 - 1) as usize;
                scene.drawables[i].placement = placement(&mut rng);
                changed.push(i);
            }
            scene.refresh_transforms_of(&changed);
            accel.refresh(&scene, &changed, None, &|p| sprite_of(&scene, p));
            check_all(&scene, &mut accel, &mut rng, &mut counts);
        }
    }
    assert!(raised > 20, "floors raised in {raised} rounds");
    assert!(counts.iter().all(|&c| c > 20), "positive answers per kind: {counts:?}");
}

/// Layer changes between queries (a drawable to the front or back, two swapped, one deleted or
/// added in the middle): the kept data moves with the drawables and the composites forget only
/// the boxes whose order changed.
#[test]
fn accelerated_queries_follow_rearrangements() {
    let mut rng = SplitMix64::new(23);
    let mut counts = [0usize; 4];
    for _ in 0..30 {
        let mut scene = random_scene(&mut rng);
        let mut accel = Accel::default();
        accel.refresh(&scene, &[], None, &|p| sprite_of(&scene, p));
        check_all(&scene, &mut accel, &mut rng, &mut counts);
        for _ in 0..4 {
            let n = scene.drawables.len();
            // The stage stays at 0; `order` lists old positions (None: a new drawable).
            let mut order: Vec<Option<usize>> = (0..n).map(Some).collect();
            let pick = |rng: &mut SplitMix64| 1 + rng.below(n as u64 - 1) as usize;
            match rng.below(5) {
                0 => {
                    let d = order.remove(pick(&mut rng));
                    order.push(d);
                }
                1 => {
                    let d = order.remove(pick(&mut rng));
                    order.insert(1, d);
                }
                2 => {
                    let (a, b) = (pick(&mut rng), pick(&mut rng));
                    order.swap(a, b);
                }
                3 if n > 2 => {
                    order.remove(pick(&mut rng));
                }
                _ => order.insert(pick(&mut rng), None),
            }
            let drawables: Vec<Drawable> = order
                .iter()
                .map(|o| match o {
                    Some(o) => scene.drawables[*o].clone(),
                    None => Drawable {
                        skin: bitmap(&mut rng),
                        placement: placement(&mut rng),
                        visible: true,
                        effects: effects(&mut rng),
                    },
                })
                .collect();
            scene.rearrange(drawables, &order);
            let fresh: Vec<usize> = (0..order.len()).filter(|&p| order[p].is_none()).collect();
            scene.refresh_transforms_of(&fresh);
            accel.rearrange(&scene, &order, &|p| sprite_of(&scene, p));
            check_all(&scene, &mut accel, &mut rng, &mut counts);
        }
    }
    assert!(counts.iter().all(|&c| c > 20), "positive answers per kind: {counts:?}");
}

/// Deferred drawing (records replayed when read, dropped by a clear) leaves what drawing at
/// once does: the pixels and changed boxes every read sees, and what every clear finds inked.
#[test]
fn deferred_drawing_equals_drawing_at_once() {
    let mut rng = SplitMix64::new(43);
    let (mut reads, mut dropped) = (0, 0);
    for round in 0..60 {
        let scene = random_scene(&mut rng);
        let (mut lazy, mut eager) = (PenLayer::new(), PenLayer::new());
        for op in 0..40 {
            match rng.below(10) {
                0..=3 => {
                    let i = rng.below(scene.drawables.len() as u64) as usize;
                    lazy.stamp(&scene, i);
                    eager.stamp(&scene, i);
                }
                4..=6 => {
                    let mut r2 = rng.clone();
                    draw(&mut lazy, &mut rng);
                    draw(&mut eager, &mut r2);
                }
                7 => {
                    let (found, want) = (lazy.settled_ink(), eager.settled_ink());
                    assert_eq!(found, want, "round {round}, op {op}: what the clear finds inked");
                    dropped += usize::from(found.0);
                    lazy.clear();
                    eager.clear();
                }
                _ => {
                    reads += 1;
                    assert_eq!(lazy.take_changes(), eager.take_changes(), "round {round}, op {op}: changes");
                    assert!(lazy.rgba() == eager.rgba(), "round {round}, op {op}: pixels");
                }
            }
            // Drawing at once: nothing stays recorded.
            let _ = eager.rgba();
        }
    }
    assert!(reads > 200 && dropped > 100, "reads {reads}, clears of ink {dropped}");
    // More records than are kept: the oldest are drawn on the way, the read sees them all.
    let scene = random_scene(&mut rng);
    let (mut lazy, mut eager) = (PenLayer::new(), PenLayer::new());
    for k in 0..crate::geometry::pen::MAX_PENDING + 300 {
        if k % 3 == 0 {
            let i = rng.below(scene.drawables.len() as u64) as usize;
            lazy.stamp(&scene, i);
            eager.stamp(&scene, i);
        } else {
            let mut r2 = rng.clone();
            draw(&mut lazy, &mut rng);
            draw(&mut eager, &mut r2);
        }
        let _ = eager.rgba();
    }
    assert_eq!(lazy.take_changes(), eager.take_changes(), "changes after many records");
    assert!(lazy.rgba() == eager.rgba(), "pixels after many records");
}

/// A pen skin built in the buffer of an older one, copied only where the pixels changed since
/// that one was built, shows what the layer holds, through stamps, lines and clears; where
/// something still holds the older skin (a snapshot), the pixels are copied whole.
#[test]
fn pen_skins_in_reused_buffers_show_the_layer() {
    let mut rng = SplitMix64::new(47);
    let (mut built, mut reused) = (0, 0);
    for round in 0..30 {
        let scene = random_scene(&mut rng);
        let mut pen = PenLayer::new();
        // What the scene (the newest skin) and now and then a snapshot (an older one) hold.
        let mut held: Vec<Arc<Skin>> = Vec::new();
        let (mut newest, mut before): (Option<usize>, Option<usize>) = (None, None);
        for op in 0..60 {
            match rng.below(8) {
                0..=1 => pen.stamp(&scene, rng.below(scene.drawables.len() as u64) as usize),
                2..=4 => draw(&mut pen, &mut rng),
                5 => pen.clear(),
                _ => {
                    let skin = pen.skin();
                    let buf = skin.mip_ref(0).silhouette.rgba().as_ptr() as usize;
                    if newest != Some(buf) {
                        built += 1;
                        reused += usize::from(before == Some(buf));
                        (before, newest) = (newest, Some(buf));
                    }
                    assert!(skin.mip_ref(0).silhouette.rgba() == pen.rgba(), "round {round}, op {op}");
                    held.push(skin);
                    let keep = if rng.below(5) == 0 { 2 } else { 1 };
                    while held.len() > keep {
                        held.remove(0);
                    }
                }
            }
        }
    }
    assert!(reused > 100 && reused + 50 < built, "skins built {built}, in reused buffers {reused}");
}

/// A random pen line (thick or thin, any colour, partly transparent).
fn draw(pen: &mut PenLayer, rng: &mut SplitMix64) {
    let c = COLOURS[rng.below(5) as usize];
    let attrs = PenAttributes {
        color4f: [c[0] as f64 / 255.0, c[1] as f64 / 255.0, c[2] as f64 / 255.0, if rng.coin(3) { 0.5 } else { 1.0 }],
        diameter: 1.0 + rng.below(20) as f64,
    };
    let xy = |r: &mut SplitMix64| (r.below(520) as f64 - 260.0, r.below(400) as f64 - 200.0);
    let ((x0, y0), (x1, y1)) = (xy(rng), xy(rng));
    pen.draw_line(&attrs, x0, y0, x1, y1);
}

/// Every stage pixel where the pen layer shows anything lies inside its match boxes (the boxes
/// of what it drew since its last clear), and they are far from covering the stage: colour
/// queries look at the pen only there.
#[test]
fn pen_match_boxes_hold_all_its_ink() {
    let mut rng = SplitMix64::new(31);
    let mut small = 0;
    for _ in 0..30 {
        let mut pen = PenLayer::new();
        for _ in 0..1 + rng.below(5) {
            if rng.coin(4) {
                pen.clear();
            }
            draw(&mut pen, &mut rng);
        }
        let placement = Placement { x: 0.0, y: 0.0, direction: 90.0, scale: [100.0, 100.0] };
        let d = Drawable { skin: pen.skin(), placement, visible: true, effects: Effects::default() };
        let mut scene = Scene::new(vec![d]);
        scene.refresh_transforms();
        let Some(xf) = scene.xform(0) else { panic!("the pen layer has a transform") };
        let mut rects = Vec::new();
        let mip = scene.drawables[0].skin.mip_ref(0);
        match_rects(&Effects::default(), &xf, mip, Rect::UNBOUNDED, color_key([255, 0, 0]), &mut rects);
        let inside = |x: f64, y: f64| rects.iter().any(|r| r.left <= x && x <= r.right && r.bottom <= y && y <= r.top);
        for y in -180..=180 {
            for x in -240..=240 {
                let (fx, fy) = (f64::from(x), f64::from(y));
                if scene.sample_color(fx, fy, None) != [255, 255, 255] {
                    assert!(inside(fx, fy), "pen ink at ({x}, {y}) outside {rects:?}");
                }
            }
        }
        let area: f64 = rects.iter().map(|r| r.width() * r.height()).sum();
        small += usize::from(area < 0.5 * 480.0 * 360.0);
    }
    assert!(small > 10, "the boxes cover most of the stage in {} of 30 layers", 30 - small);
}

/// The composite's memo of colours under effects gives what transforming each colour does,
/// also for colours that share a slot (thousands of colours in 256 slots, asked in turn).
#[test]
fn effect_memo_equals_transforming_every_colour() {
    let mut rng = SplitMix64::new(41);
    for fx in [
        [25.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0, 0.0, -40.0, 30.0],
        [70.0, 0.0, 0.0, 0.0, 0.0, 20.0, 50.0],
    ] {
        let e = Effects::from_values(fx);
        assert!(e.enabled != 0);
        let mut memo = crate::geometry::render::ColorMemo::for_effects(&e);
        let colours: Vec<[u8; 4]> = (0..3000).map(|_| std::array::from_fn(|_| rng.below(256) as u8)).collect();
        for _ in 0..2 {
            for &c in &colours {
                assert_eq!(memo.transform(&e, c), e.transform_color(c, !0), "{c:?} under {fx:?}");
            }
        }
    }
}

/// With a pen layer that changes between queries (lines drawn, the layer cleared), the kept
/// composites follow the boxes the pen layer reports.
#[test]
fn accelerated_colours_follow_the_pen_layer() {
    let mut rng = SplitMix64::new(23);
    let mut counts = [0usize; 4];
    for _ in 0..12 {
        let mut scene = random_scene(&mut rng);
        let mut pen = PenLayer::new();
        for _ in 0..3 {
            draw(&mut pen, &mut rng);
        }
        let _ = pen.take_changes();
        let stage_placement = Placement { x: 0.0, y: 0.0, direction: 90.0, scale: [100.0, 100.0] };
        let layer = |pen: &mut PenLayer| Drawable {
            skin: pen.skin(),
            placement: stage_placement,
            visible: true,
            effects: Effects::default(),
        };
        scene.drawables.insert(1, layer(&mut pen));
        scene.refresh_transforms();
        let mut accel = Accel::default();
        accel.refresh(&scene, &[], Some(PenChange { pos: 1, dirty: None }), &|p| sprite_of(&scene, p));
        check_all(&scene, &mut accel, &mut rng, &mut counts);
        for k in 0..4 {
            if k == 2 {
                pen.clear();
            }
            draw(&mut pen, &mut rng);
            let dirty = pen.take_changes().stage_boxes();
            scene.drawables[1] = layer(&mut pen);
            scene.refresh_transforms_of(&[1]);
            accel.refresh(&scene, &[1], Some(PenChange { pos: 1, dirty }), &|p| sprite_of(&scene, p));
            check_all(&scene, &mut accel, &mut rng, &mut counts);
        }
    }
    assert!(counts[1] > 20 && counts[3] > 20, "positive colour answers: {counts:?}");
}

/// The colour sampler (drawables fetched once, transparent and opaque texels short-cut)
/// composites what the reference's per-point `sampleColor3b` does, at stage pixels and at the
/// fractional points of Neatest's radial searches, with and without excluded drawables.
#[test]
fn color_sampler_equals_the_per_point_reference() {
    let mut rng = SplitMix64::new(23);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..60 {
        let scene = random_scene(&mut rng);
        let n = scene.drawables.len();
        for exclude in [None, Some(rng.below(n as u64) as usize)] {
            let mut s = scene.color_sampler(exclude);
            for k in 0..2_000 {
                let (x, y) = if k % 2 == 0 {
                    (rng.below(481) as f64 - 240.0, rng.below(361) as f64 - 180.0)
                } else {
                    (rng.below(4_810_000) as f64 / 10_000.0 - 240.5, rng.below(3_610_000) as f64 / 10_000.0 - 180.5)
                };
                let want = s.sample_reference(x, y);
                assert_eq!(s.sample(x, y), want, "at ({x}, {y}), excluding {exclude:?}");
                seen.insert(want);
            }
        }
    }
    // Blends, effects and white all occurred.
    assert!(seen.len() > 50, "only {} distinct colours", seen.len());
}

/// Stamping row spans (only where the costume can be, rows and columns found without rounding
/// each pixel) gives exactly the pixels and changed box of stamping the whole box pixel by
/// pixel, over earlier stamps, with every effect, size and turn the random scenes hold.
#[test]
fn stamps_equal_stamping_every_pixel_of_the_box() {
    let mut rng = SplitMix64::new(41);
    let mut drawn = 0;
    for round in 0..120 {
        let scene = random_scene(&mut rng);
        let (mut fast, mut reference) = (PenLayer::new(), PenLayer::new());
        // Twice over: the second pass blends over the first and reuses its colour memos.
        for i in (0..scene.drawables.len()).chain(0..scene.drawables.len()) {
            fast.stamp(&scene, i);
            reference.stamp_reference(&scene, i);
            assert!(fast.rgba() == reference.rgba(), "round {round}: stamp of drawable {i}");
            assert_eq!(fast.take_changes(), reference.take_changes(), "round {round}: changes of drawable {i}");
        }
        drawn += fast.rgba().chunks(4).filter(|p| p[3] > 0).count();
    }
    assert!(drawn > 1_000_000, "pixels stamped: {drawn}");
}

/// A `color is touching color` query asked again of an unchanged scene answers from kept
/// mask rows: the same answer as the reference renderer, charged a cached row read per kept
/// row instead of the pixels it took to find (engine `+sem56`); and a change of the asker's
/// colour effects is a new key, never a stale row.
#[test]
fn kept_mask_rows_answer_as_before_and_cost_a_row_read() {
    let mut rng = SplitMix64::new(41);
    let (mut kept, mut cheaper) = (0, 0);
    for _ in 0..30 {
        let mut scene = random_scene(&mut rng);
        let mut accel = Accel::default();
        accel.refresh(&scene, &[], None, &|p| sprite_of(&scene, p));
        let colours = probe_colours(&scene, &mut rng);
        for me in 1..scene.drawables.len() {
            let (c, m) = (colours[rng.below(colours.len() as u64) as usize], colours[0]);
            let charged = |accel: &mut Accel, scene: &Scene| {
                let before = accel.work;
                let answer = accel.touching_color(scene, me, c, Some(m));
                (answer, accel.work - before)
            };
            let first = charged(&mut accel, &scene);
            let rows_kept = accel.infos[me].mask.kept_rows();
            let second = charged(&mut accel, &scene);
            assert_eq!(first.0, second.0, "{me}: answer, first and kept");
            assert_eq!(first.0, scene.touching_color(me, c, Some(m)), "{me}: against the reference");
            assert!(second.1 <= first.1, "{me}: a kept row costs no more than finding it");
            kept += rows_kept;
            cheaper += usize::from(second.1 < first.1);
            // New colour effects on the asker: answered afresh, as the reference answers.
            scene.drawables[me].effects = effects(&mut rng);
            scene.refresh_transforms_of(&[me]);
            accel.refresh(&scene, &[me], None, &|p| sprite_of(&scene, p));
            let third = charged(&mut accel, &scene);
            assert_eq!(third.0, scene.touching_color(me, c, Some(m)), "{me}: after new effects");
        }
    }
    assert!(kept > 1_000, "rows kept between the two queries: {kept}");
    assert!(cheaper > 20, "queries cheaper the second time: {cheaper}");
}

/// A clone of the VM shares the touching rows the queries kept instead of copying them (its
/// charged words do not grow with them); the first row either side writes afterwards copies
/// them, is charged a copy, and leaves the other side's rows as they were (`+sem57`).
#[test]
fn touching_rows_are_shared_by_a_clone_until_a_write_copies_them() {
    let mut rng = SplitMix64::new(43);
    let words = (std::mem::size_of::<super::rows::Row>() as u64).div_ceil(8) * super::rows::ROWS as u64;
    let (mut shared, mut copied) = (0, 0);
    for _ in 0..80 {
        let mut scene = random_scene(&mut rng);
        let n = scene.drawables.len();
        let ask = |accel: &mut Accel, scene: &Scene, me: usize| {
            let all: Vec<usize> = (1..n).collect();
            let answer = accel.touching_drawables(scene, me, Candidates::List(all.clone()));
            assert_eq!(answer, scene.touching_drawables(me, &all), "touching from {me}");
        };
        // Two caches asked the same: one is cloned, the other (`solo`) never is.
        let (mut accel, mut solo) = (Accel::default(), Accel::default());
        for a in [&mut accel, &mut solo] {
            a.refresh(&scene, &[], None, &|p| sprite_of(&scene, p));
            for me in 1..n {
                ask(a, &scene, me);
            }
        }
        let holding: Vec<usize> = (0..n).filter(|&p| accel.infos[p].touch.any()).collect();
        let before = accel.heap_words();
        let mut copy = accel.clone();
        assert_eq!(copy.heap_words(), before, "a clone's words");
        // Move every drawable that holds rows: its next query writes new rows into shared ones.
        let old_scene = Scene::new(scene.drawables.clone());
        for &p in &holding {
            scene.drawables[p].placement.x += 3.0;
        }
        scene.refresh_transforms_of(&holding);
        let (w0, s0) = (accel.work, solo.work);
        for a in [&mut accel, &mut solo] {
            a.refresh(&scene, &holding, None, &|p| sprite_of(&scene, p));
            for &me in &holding {
                ask(a, &scene, me);
            }
        }
        // The same queries; the shared cache did the copies besides, each a stage of rows.
        let extra = (accel.work - w0) - (solo.work - s0);
        assert!(extra == 0 || extra >= words, "charged for copies: {extra}");
        copied += usize::from(extra > 0);
        // The copy still answers for the scene it was made in, from its own rows.
        for me in 1..n {
            ask(&mut copy, &old_scene, me);
        }
        shared += holding.len();
    }
    assert!(shared > 20, "drawables holding touching rows: {shared}");
    assert!(copied > 10, "scenes where a write copied shared rows: {copied}");
}
