//! The pruned radial colour search (Neatest's colour features: [`ColorSampler::match_boxes`] +
//! [`radial_find_color_in`]) returns exactly what the plain search returns when it samples every
//! point with every drawable, on scenes built from real projects' costumes (rotated, scaled,
//! flipped, with and without effects) and on random synthetic scenes, for colours drawn in the
//! costumes, absent ones and white. Needs the corpora (`CLOWDER_CORPORA`, default
//! `../shared/corpora`) for the real projects; prints `SKIP` without them.

use std::path::PathBuf;
use std::sync::Arc;

use crate::geometry::distance::{radial_find_color, radial_find_color_among, radial_find_color_in};
use crate::geometry::drawable::{Placement, RotationStyle};
use crate::geometry::effects::Effects;
use crate::geometry::query::clamp_size;
use crate::geometry::render::{Drawable, Scene};
use crate::geometry::skin::{CostumeSet, Skin};
use crate::rng::SplitMix64;
use crate::{LoadLimits, Project};

fn corpora() -> PathBuf {
    std::env::var_os("CLOWDER_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora")))
}

const PROJECTS: [&str; 8] = [
    "whisker-rq1/FruitCatching.sb3",
    "whisker-rq1/Labyrinth.sb3",
    "whisker-rq1/Pong.sb3",
    "whisker-rq1/Geisterwald.sb3",
    "codeclub/archery--Archery.sb3",
    "codeclub/boat-race--BoatRace-Finished.sb3",
    "codeclub/dont-fall-in--Dont-fall-in-the-custard.sb3",
    "codeclub/lost-in-space--lost-in-space-solution.sb3",
];

fn effects(rng: &mut SplitMix64) -> Effects {
    let mut fx = [0.0; 7];
    match rng.below(12) {
        0 => fx[0] = 25.0 + rng.below(100) as f64,
        1 => fx[1] = 30.0,
        2 => fx[2] = 90.0,
        3 => fx[3] = 20.0,
        4 => fx[4] = 20.0,
        5 => fx[5] = -40.0,
        6 => fx[6] = 50.0,
        7 => fx[6] = 100.0,
        _ => {}
    }
    Effects::from_values(fx)
}

/// Colours to look for: the ones drawn at random stage points and in random opaque texels
/// of the drawables' costumes (present), a few fixed ones, white, and random ones.
fn colours(scene: &Scene, rng: &mut SplitMix64) -> Vec<[u8; 3]> {
    let mut out = vec![[255, 255, 255], [0, 0, 0], [255, 0, 0], [0, 0, 255], [250, 250, 250]];
    for _ in 0..4 {
        out.push(scene.sample_color(rng.below(480) as f64 - 240.0, rng.below(360) as f64 - 180.0, None));
    }
    for d in &scene.drawables {
        let sil = &d.skin.mip_ref(d.skin.mip_level(d.placement.render_scale())).silhouette;
        let px = sil.rgba();
        for _ in 0..3 {
            if px.len() >= 4 {
                let o = rng.below((px.len() / 4) as u64) as usize * 4;
                if px[o + 3] == 255 {
                    out.push([px[o], px[o + 1], px[o + 2]]);
                }
            }
        }
    }
    for _ in 0..2 {
        out.push([rng.below(256) as u8, rng.below(256) as u8, rng.below(256) as u8]);
    }
    out
}

thread_local! {
    /// Over a test's searches with cells: areas that had cells, points counted, points sampled.
    static CELLED: std::cell::RefCell<(u64, u64, u64)> = const { std::cell::RefCell::new((0, 0, 0)) };
}

/// The cells used and the points they spared (see [`CELLED`]), checked to be some.
fn assert_cells_spared_samples(label: &str) {
    let (areas, counted, sampled) = CELLED.with(|k| *k.borrow());
    eprintln!("{label}: {areas} areas with cells; {counted} points counted, {sampled} sampled");
    assert!(areas > 0 && sampled < counted, "{label}: cells were used and spared samples");
}

/// Compares the pruned and plain searches on `scene`; returns (queries, plain samples, pruned samples).
fn check_scene(scene: &Scene, rng: &mut SplitMix64, label: &str) -> (u64, u64, u64) {
    let (mut queries, mut plain_work, mut pruned_work) = (0, 0, 0);
    let cols = colours(scene, rng);
    let n = scene.drawables.len();
    let mut starts: Vec<(f64, f64)> = scene.drawables.iter().skip(1).map(|d| (d.placement.x, d.placement.y)).collect();
    for _ in 0..3 {
        starts.push((rng.next_f64() * 560.0 - 280.0, rng.next_f64() * 440.0 - 220.0));
    }
    for (si, &start) in starts.iter().enumerate() {
        let exclude = if n > 1 && rng.coin(4) { Some(1 + rng.below(n as u64 - 1) as usize) } else { None };
        let (resolution, max_radius) = match si % 3 {
            0 => (5.0, 600.0),
            1 => (3.0 + rng.next_f64() * 4.0, 100.0 + rng.next_f64() * 500.0),
            _ => (1.5, 120.0),
        };
        for &c in &cols {
            let mut reference = scene.color_sampler(exclude).without_boxes();
            let (want, w0) = radial_find_color(start, resolution, max_radius, c, |x, y| reference.sample(x, y));
            let mut pruned = scene.color_sampler(exclude);
            let boxes = pruned.match_boxes(c);
            let (got, w1) =
                radial_find_color_in(start, resolution, max_radius, c, boxes.as_deref(), |x, y| pruned.sample(x, y));
            assert_eq!(
                got.map(|(x, y)| (x.to_bits(), y.to_bits())),
                want.map(|(x, y)| (x.to_bits(), y.to_bits())),
                "{label}: start {start:?} colour {c:?} exclude {exclude:?} res {resolution} max {max_radius}: \
                 pruned {got:?}, plain {want:?}, boxes {boxes:?}"
            );
            assert!(w1 <= w0, "{label}: the pruned search samples no more points");
            // With the cells of every large drawable (asked for until they are built): the same
            // answer and the same work, fewer points sampled.
            let mut celled = scene.color_sampler(exclude);
            let mut areas = None;
            for _ in 0..4 {
                areas = celled.match_areas(c);
            }
            let mut visited = 0u64;
            let (got_cells, w2) =
                radial_find_color_among(start, resolution, max_radius, c, areas.as_deref(), |x, y| {
                    visited += 1;
                    celled.sample(x, y)
                });
            assert_eq!(
                got_cells.map(|(x, y)| (x.to_bits(), y.to_bits())),
                want.map(|(x, y)| (x.to_bits(), y.to_bits())),
                "{label}: start {start:?} colour {c:?} exclude {exclude:?} res {resolution} max {max_radius}: \
                 with cells {got_cells:?}, plain {want:?}"
            );
            assert_eq!(w2, w1, "{label}: cells change which points are sampled, not the work");
            CELLED.with(|k| {
                let mut k = k.borrow_mut();
                k.0 += areas.iter().flatten().filter(|a| a.cells.is_some()).count() as u64;
                k.1 += w1;
                k.2 += visited;
            });
            queries += 1;
            plain_work += w0;
            pruned_work += w1;
        }
    }
    (queries, plain_work, pruned_work)
}

fn placement(rng: &mut SplitMix64, skin: &Skin, style: RotationStyle) -> Placement {
    let direction = match rng.below(4) {
        0 => 90.0,
        1 => -90.0,
        _ => rng.next_f64() * 360.0 - 179.0,
    };
    let size = match rng.below(4) {
        0 => 100.0,
        _ => clamp_size(10.0 + rng.next_f64() * 250.0, skin.size()),
    };
    let style = if rng.coin(3) { RotationStyle::AllAround } else { style };
    Placement::from_target(rng.next_f64() * 520.0 - 260.0, rng.next_f64() * 400.0 - 200.0, direction, size, style)
}

#[test]
fn pruned_radial_search_equals_the_plain_one_on_real_projects() {
    let mut checked = 0;
    let (mut queries, mut plain, mut pruned) = (0, 0, 0);
    for name in PROJECTS {
        let path = corpora().join(name);
        if !path.exists() {
            drop(std::io::Write::write_fmt(
                &mut std::io::stderr(),
                format_args!("SKIP: {} not found (set CLOWDER_CORPORA)\n", path.display()),
            ));
            continue;
        }
        let project = Arc::new(Project::load_path(&path, &LoadLimits::default()).expect("corpus project loads"));
        let costumes = CostumeSet::new(project.clone());
        let stage_def = project.targets.iter().position(|t| t.is_stage).unwrap_or(0);
        let sprites: Vec<usize> = (0..project.targets.len())
            .filter(|&i| !project.targets[i].is_stage && !project.targets[i].costumes.is_empty())
            .collect();
        let mut rng = SplitMix64::new(7);
        for scene_no in 0..4 {
            let backdrops = project.targets[stage_def].costumes.len().max(1);
            let backdrop = if scene_no == 0 {
                project.targets[stage_def].current_costume
            } else {
                rng.below(backdrops as u64) as usize
            };
            let Some(stage_skin) = costumes.skin(stage_def, backdrop) else { continue };
            let mut drawables = vec![Drawable {
                skin: stage_skin,
                placement: Placement { x: 0.0, y: 0.0, direction: 90.0, scale: [100.0, 100.0] },
                visible: scene_no != 3,
                effects: if scene_no == 2 { effects(&mut rng) } else { Effects::default() },
            }];
            for &def in &sprites {
                let t = &project.targets[def];
                for _ in 0..1 + rng.below(2) {
                    let costume = rng.below(t.costumes.len() as u64) as usize;
                    let Some(skin) = costumes.skin(def, costume) else { continue };
                    let placement = placement(&mut rng, &skin, RotationStyle::parse(&t.rotation_style));
                    let fx = if rng.coin(3) { effects(&mut rng) } else { Effects::default() };
                    drawables.push(Drawable { skin, placement, visible: !rng.coin(8), effects: fx });
                }
            }
            let scene = Scene::new(drawables);
            let (q, a, b) = check_scene(&scene, &mut rng, &format!("{name} scene {scene_no}"));
            queries += q;
            plain += a;
            pruned += b;
        }
        checked += 1;
    }
    eprintln!("{checked} projects, {queries} searches: {plain} points sampled plainly, {pruned} pruned");
    if checked > 0 {
        assert_cells_spared_samples("real projects");
    }
}

/// Synthetic scenes: binary and soft-edged bitmaps (some one texel wide or high), SVGs, and
/// backdrops with a few texels of other colours, so that texel boxes are small and their edges
/// matter.
#[test]
fn pruned_radial_search_equals_the_plain_one_on_random_scenes() {
    let mut rng = SplitMix64::new(11);
    let colours: [[u8; 3]; 5] = [[255, 0, 0], [0, 160, 255], [20, 200, 40], [128, 128, 128], [0, 0, 0]];
    for scene_no in 0..40 {
        let mut drawables = Vec::new();
        let bg = colours[rng.below(5) as usize];
        let (w, h) = if rng.coin(2) { (960, 720) } else { (96, 72) };
        let mut rgba = Vec::with_capacity(w * h * 4);
        for i in 0..w * h {
            let c = if i % 9973 == 0 { [255, 0, 0] } else { bg };
            rgba.extend_from_slice(&[c[0], c[1], c[2], 255]);
        }
        let scale = if w == 960 { 100.0 } else { 500.0 };
        drawables.push(Drawable {
            skin: Arc::new(Skin::from_rgba_res2(w as u32, h as u32, rgba, None)),
            placement: Placement { x: 0.0, y: 0.0, direction: 90.0, scale: [scale, scale] },
            visible: !rng.coin(4),
            effects: if rng.coin(5) { effects(&mut rng) } else { Effects::default() },
        });
        for _ in 0..2 + rng.below(6) {
            let skin = if rng.coin(4) {
                crate::geometry::accel::tests::ellipse_svg(&mut rng, &colours)
            } else {
                let (bw, bh) = (1 + rng.below(40) as u32, 1 + rng.below(40) as u32);
                let (c, spot) = (colours[rng.below(5) as usize], colours[rng.below(5) as usize]);
                let (sx, sy) = (rng.below(bw as u64) as u32, rng.below(bh as u64) as u32);
                let kind = rng.below(3);
                let mut px = Vec::new();
                for y in 0..bh {
                    for x in 0..bw {
                        let a = match kind {
                            1 if (x * 3 + y * 5) % 7 == 0 => 0,
                            2 if x == 0 || y + 1 == bh => 100,
                            _ => 255,
                        };
                        let c = if (x, y) == (sx, sy) { spot } else { c };
                        px.extend_from_slice(&[c[0], c[1], c[2], a]);
                    }
                }
                Arc::new(Skin::from_rgba_res2(bw, bh, px, None))
            };
            let placement = placement(&mut rng, &skin, RotationStyle::AllAround);
            let fx = if rng.coin(4) { effects(&mut rng) } else { Effects::default() };
            drawables.push(Drawable { skin, placement, visible: !rng.coin(8), effects: fx });
        }
        let scene = Scene::new(drawables);
        check_scene(&scene, &mut rng, &format!("random scene {scene_no}"));
    }
    assert_cells_spared_samples("random scenes");
}
