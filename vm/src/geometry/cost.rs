//! What the VM's work count ([`crate::Vm::work`]) charges per operation: roughly nanoseconds
//! of one core of a 2020s machine, so that a run's work cap bounds its time whatever the run
//! spends it on (interpreting blocks, testing pixels, compositing colours, drawing with the
//! pen). The count is deterministic: the same run counts the same work on every machine.
//! Changing a constant changes which runs reach the cap, so it bumps `ENGINE_VERSION`.

/// One block execution (with its share of the scheduler: thread switches, yields, the
/// frame's hat checks; `clowder bench work` fits these over the corpora).
pub const BLOCK: u64 = 23;
/// One reporter evaluation (an input of a block, nested or not: value conversions, strings,
/// sensing, look-ups by name) other than a light one or a constant.
pub const EVAL: u64 = 25;
/// One evaluation of a light reporter (`program::Rep::is_light`: a variable, a parameter, a
/// list's item or length, arithmetic, a comparison, `and`/`or`/`not`): no allocation, no
/// geometry. Charged as [`EVAL`] until engine `+sem35`, scripts that compute (warp procedures
/// of vector maths over lists, `400011212`) were charged 2.7× their CPU against the corpora's
/// median.
pub const EVAL_LIGHT: u64 = 10;
/// One evaluation of a constant (a literal input or a menu): a copy, charged apart from
/// [`EVAL`] so that tight loops of constant-argument blocks are not overcharged (issue 31's
/// calibration: `402153740`'s warp loop was charged four times its CPU).
pub const CONST: u64 = 3;
/// One step of the scheduler (timers, inputs, the frame's hat checks) …
pub const STEP: u64 = 20;
/// … plus this per thread it resumes.
pub const RESUME: u64 = 5;
/// One draw from the project's random stream (`pick random`, random positions; under the
/// `whisker` profile also the 20 draws of every id scratch-vm makes, e.g. for each clone).
pub const RANDOM: u64 = 25;
/// The fixed cost of a geometry query.
pub const QUERY: u64 = 20;
/// A candidate drawable looked at (from the index or a list).
pub const CANDIDATE: u64 = 2;
/// A drawable's touching row computed (the span search).
pub const ROW: u64 = 40;
/// A cached row read, or a row of a query visited.
pub const ROW_VISIT: u64 = 2;
/// One pixel tested against a silhouette (touching, or a drawable's own colour).
pub const PIXEL: u64 = 3;
/// One pixel's colour read from a silhouette (nearest texel, effects), as `color is
/// touching color` reads the sprite's own pixels.
pub const COLOR_PIXEL: u64 = 12;
/// One composite pixel computed …
pub const FILL: u64 = 4;
/// … plus this per layer it may look at.
pub const LAYER: u64 = 2;
/// A row of cached composite colours forgotten.
pub const FORGET_ROW: u64 = 2;
/// A drawable brought up to date in the kept scene (its transform, index cells and the
/// composites it may change).
pub const REFRESH: u64 = 100;
/// A drawable moved to another place in the kept scene (a layer change), or a target
/// looked at by a full sync (measured: a full sync of a 55-drawable scene that moves a few
/// of them takes about 6 µs, about 115 of these).
pub const MOVE: u64 = 50;
/// A colour-search point visited (an order kept per stage position).
pub const WALK: u64 = 3;
/// A grid step of a colour walk marked as one where the colour may show.
pub const MASK_CELL: u64 = 1;
/// A point of a colour search that walks Whisker's grid itself (its visited set), before
/// the sample (100 until `+sem25`, 80 until `+sem26`: the walk and its sampler got faster).
pub const WALK_POINT: u64 = 60;

/// A point of an uncached colour walk sampling `layers` drawables composited.
pub const fn sample_walk(layers: usize) -> u64 {
    WALK_POINT + FILL + LAYER * layers as u64
}
/// A stage pixel of a texel map computed (once per pen transform).
pub const MAP_PIXEL: u64 = 5;
/// A pen pixel visited while drawing a line.
pub const PEN_PIXEL: u64 = 6;
/// A pen pixel in the fully covered core of an opaque line, filled without computing its
/// coverage (a store, where a visited pixel computes a distance and maybe blends).
pub const PEN_FILL: u64 = 1;
/// A pen pixel visited while stamping (the drawable's colour under its effects, then the
/// blend).
pub const STAMP_PIXEL: u64 = 20;
/// Recording a line or a stamp (drawn only when the pixels are read: `pen::deferred`).
pub const PEN_DEFER: u64 = 30;
/// The pen layer's pixels copied into a skin for queries that read them (after drawing).
pub const PEN_SKIN: u64 = 40_000;
/// Clearing a pen layer that has ink.
pub const PEN_CLEAR: u64 = 30_000;

/// A VM cloned (snapshots of a test's replay): the fixed part … (an estimate from sizes:
/// measured 0.13–2.1 ns per unit over 13 corpus projects, Paper Minecraft 1.1; it charges small
/// projects' stage-sized caches more than their copying costs, so snapshots are kept only where
/// replays are clearly dearer)
pub const CLONE: u64 = 2_000;
/// … plus this per 8-byte word of state copied (targets, variables and list items, thread
/// stacks, coverage bits, the geometry's kept pixels and caches; [`crate::Vm::clone_work`]).
/// Touching rows are shared by a clone, not copied: the first write on each side after the
/// clone is charged this per word instead (one of them copies).
pub const CLONE_WORD: u64 = 1;
