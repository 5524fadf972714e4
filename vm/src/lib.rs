//! clowder's deterministic Scratch 3 VM.
//!
//! One [`Vm`] runs one loaded [`Project`] step by step: one tick per step, a
//! virtual clock, seeded randomness, no I/O beyond reading the project and no
//! global state, so the same inputs always give the same states (DESIGN §3).
//! The step semantics are those of scratch-vm 5.0.300 under the fidelity
//! oracle's rules (`shared/tools/fidelity/README.md`); [`trace`] prints the
//! oracle's JSONL trace format.
//!
//! A project is compiled once (on first use, cached in the [`Project`]) into a
//! compact program: opcodes are enum variants, inputs are expression trees,
//! variables are slots. Creating a VM copies the initial target states only.

#![warn(missing_docs)]

mod blocks;
mod engine;
mod extensions;
mod external;
pub mod geometry;
pub mod instrument;
pub mod io;
mod observe;
pub(crate) mod program;
pub mod project;
pub mod rng;
pub mod trace;
pub mod util;
pub mod value;
mod vm;
pub mod whisker;

pub use util::jsmath;

/// Per-opcode counts and self times of the interpreter on this thread (feature `op-profile`,
/// for `clowder bench vm --op-profile`; a profiling build, never a study's).
#[cfg(feature = "op-profile")]
pub mod op_profile {
    pub use crate::engine::profile::{OpRow, reset, take};
}

pub use engine::{Target, TargetId};
pub use external::{MoveEvent, Pose};
pub use project::{LoadError, LoadLimits, Project};
pub use value::Value;
pub use vm::{ListenerEvent, ListenerKind, Profile, SayEvent, StepOutcome, Vm, VmOptions, Waiting};

/// The VM's public types under their former module path (`clowder_vm::runtime::…`), which
/// earlier versions kept in one `runtime.rs`: now [`Vm`] and the engine's constants.
pub mod runtime {
    pub use crate::engine::{MAX_CLONES, MAX_STACK_DEPTH, STEP_MS, Target, TargetId};
    pub use crate::io::keyboard::normalize_key;
    pub use crate::vm::{Profile, SayEvent, StepOutcome, Vm, VmOptions, Waiting};
}

/// Engine version: part of every run's identity, so results from a changed
/// VM are never mixed with old ones. Bump on any change that alters a run's
/// result, in the VM *or* in the generator (testgen has no version of its own).
/// `sem3`: the generator reads the VM's instrumentation (branch distances,
/// remaining waits, active scripts). `sem4`: SVG silhouettes get the browser's
/// edge coverage (`geometry::svg_raster`), which moves faint edge pixels. `sem5`: a run's VM
/// work is capped (`Vm::work`, testgen's `DEFAULT_WORK_CAP`): runaway runs end with a partial
/// result instead of running until a CPU-time limit, and a mutant replay doing far more work
/// than the original test is a timeout; SVG costume text is drawn in Scratch's fonts (it was
/// left out); the geometry got faster without changing any other answer. `sem6`: test
/// generation runs in the `whisker` profile, which now follows Whisker's scratch-vm
/// ([`whisker`]: `seed-random` keyed by the seed with the draws of internal ids, waits, glides,
/// say/think for secs and sounds counted in steps, the step timer, layers as the renderer
/// orders them); clone clicks, mouse-down events and drags act as Whisker's driver does;
/// assertions name clones by their index among the live ones. The `headless` and `default`
/// profiles are unchanged. `sem7`: in the `whisker` profile SVG silhouettes keep the largest
/// MIP made so far, as Whisker's live renderer does (a frame after every step makes each visible
/// sprite's MIP at its size), which moves touching answers at costume edges; touching-colour
/// events are offered where Whisker's extractor finds the colour. `headless`/`default` unchanged.
/// `sem8`: the generator's green flag starts the hats at once, as Whisker's does, so a test's
/// first event is chosen among the events of the running green-flag scripts (it was always a
/// wait or a hat event); every profile's generated suites change, the VM's traces do not. And
/// SVG shapes in solid colours are blended with the browser's truncating 8-bit arithmetic
/// (`geometry::svg_blend`): colours of partly covered pixels move by 1–2 units, which decides
/// colour sensing at dark edges (Snake's self-collision); `headless` is unaffected.
/// `sem9`: the work count measures everything a run does (`clowder_testgen::work`: fresh VMs,
/// per-step bookkeeping, event extraction, fitness, the algorithms' bookkeeping, observations,
/// mutants; the VM's block, reporter and random-draw costs and uncached colour walks
/// re-calibrated against CPU time over the corpora), so work totals and which runs reach a
/// work cap change, and the default cap with them; a run's geometry is `approximate` when an
/// asset is missing or a costume its VMs used has no usable pixels (costumes are decoded when
/// first used). Traces and the suites of runs that no cap ends are unchanged.
/// `sem10`: less work counted for the same results, so which runs reach a work cap may move:
/// MIO's improvement tracking decides "improved" from a newly executed target without
/// evaluating every target (a rule, not only a shortcut: where Whisker's CFD fallback values an
/// unexecuted target 0, covering it now counts as an improvement; never seen in real traces),
/// fitness evaluations reuse their graph search when the executed blocks did not change, and
/// mutation analysis skips unreached mutants of tests whose steps hang too. Digests of the
/// smoke and rq1 lists are unchanged; `work` totals are lower.
/// `sem11`: hand-written Whisker suites (`clowder test`, grading, mutation analysis with
/// `--suite`) are judged as the real Whisker (emse22) judges them, which can change their
/// verdicts: a stop-all gives every target an empty bubble (`sayText` is `""`, not `null`, after
/// the green flag), random inputs draw from Whisker's `Randomness` LCG (reseeded by
/// `t.seedScratch`) with its `randomBoolean`, elapsed times are Whisker's at acceleration 10
/// (`runForTime(1000)` gives 1000), variable values keep their type, `dragSprite` with three
/// arguments moves nothing, and `t.wait` (gone from Whisker since December 2021) is no driver
/// method. Generated runs, traces and the digest lists are unchanged.
/// `sem12`: hand-written suites again, as Whisker emse22's `test-runner/assert.js` checks:
/// `equal` first turns whatever global `isNaN` calls not-a-number into "NaN" (two different
/// non-numeric strings are equal there; clowder notes it in the test's log), comparisons are
/// plain `>`/`<` (no "not a number" error), `assume.withinRange` fails instead of skipping, and
/// the driver's own touching queries leave the MIPs they create in the renderer as the
/// program's do (`Vm::set_driver_queries_leave_mips`). Generated runs, traces and digests are
/// unchanged (the smoke list was regenerated for the new smoke study, not for this).
/// `sem13`: the work meter no longer charges a warp thread's spin on `broadcast and wait`
/// that the VM now skips (the hang guard still counts it, so every hang happens where it did):
/// Paper Minecraft's MIO run reported 170 · 10⁹ units for 3.5 CPU-s. Runs near the work cap
/// can end later; every other result is unchanged (smoke and rq1 digests equal by run).
/// `sem14`: test minimisation replays a candidate from a snapshot of the VM after the events
/// it shares with the current test (`Vm` is `Clone`; the copy's work is charged) and stops a
/// candidate's replay once it covers the target: the same minimised suites with less work,
/// so runs whose minimisation reached the work cap get further, and every run's reported
/// work is smaller. And minimisation may use what the search left of the work cap plus a
/// quarter (before: a quarter), assertions what is left plus another quarter: a run still
/// does at most 1.5 caps, and heavy programs whose search did not need the whole cap get their
/// suites minimised (Paper Minecraft's MOSA and `401051703`'s MIO and MOSA ended `limit` in the
/// minimisation). Digests of runs that did not reach a cap are unchanged.
/// `sem15`: the work meter charges a constant's evaluation (a literal input, a menu) 3 units
/// instead of a reporter's 25, and an algorithm's look at a target's value 5 instead of 10:
/// measured against CPU time over every corpus project, a warp loop of constant-argument blocks
/// (`402153740`) was charged four times its CPU and MOSA's bookkeeping on tiny projects three
/// times. Every run reports less work, so runs near a work cap get further; digests of runs
/// that reach no cap are unchanged.
/// `sem16`: under the `whisker` profile, regression assertions on programs with blocks Whisker
/// times on its wall clock (music beats, notes and rests; `when timer >`) are kept only when
/// they also hold with Whisker's step taking 4, 8.5 and 16 real milliseconds: checks that
/// depended on the machine's speed failed in the real Whisker (brain-game, rock-band). Suites
/// of those programs lose such assertions; the VM's own semantics are unchanged. Also in
/// `sem16`: a variable assertion records whether the value is a boolean (exported as a
/// literal: emse22 never equals `"false"` to `false`), exported drags keep their exact
/// position, and the Whisker driver's sprite wrappers follow Whisker's ids (`Target::uid_draw`:
/// a clone whose id repeats an original's shares its wrapper), which can change `clowder test`
/// verdicts of suites that read clones.
/// `sem17`: `clowder test` (and graded studies) run a file's tests on one VM reset between
/// tests as the real Whisker resets it (`engine/restore.rs`: clones deleted, fields assigned
/// back; layers, rotation styles, pen and the renderer's copy of the looks kept; the driver
/// wrapper's total steps and random inputs carried), where every test started fresh before:
/// verdicts that depend on the tests before them change (two of 327 graded mutants of the
/// rq1 games, now as in Whisker). Generated suites, their digests and the VM's stepping are
/// unchanged.
/// `sem18`: `clowder test` (and graded studies) evaluate a suite file once and run its tests
/// in that one JavaScript realm, as Whisker does: module-level variables and globals a test
/// sets are seen by the tests after it, where each test had the file evaluated anew before.
/// Verdicts of suites that keep such state change (none of the 16 example suites does: the
/// 327 graded mutants' verdicts are byte-identical). Generated suites and digests unchanged.
/// `sem19`: regression assertions ask their touching checks as the exported test does under
/// the `whisker` profile: a check is a query of the live renderer that keeps its MIPs, so an
/// exported check can change what the program sees next (recorded in the test's order, kept
/// only for the checks exported); mutation analysis checks the same way. Suites and mutation
/// scores of runs whose exported touching checks sharpen a silhouette change
/// (grow-a-dragonfly); smoke and rq1 digests are unchanged apart from the version.
/// `sem20`: a Whisker test's move callbacks see the renderer's copy of every look as it was
/// at the move (`Pose` carries it): where Whisker's reset left a drawable behind its fields and
/// the program hands the fields to the renderer later in the same step, the callback's
/// touching queries saw the end of the step's copy before. Whisker's `onSayOrThink`,
/// `onVariableChange` and visual-change listeners hear every `SAY`, `DELETE_SAY_OR_THINK`,
/// `CHANGE_VARIABLE` and `EVENT_TARGET_VISUAL_CHANGE` event in the step's order among the
/// moves, with the sprite as it was then, where the driver compared the step's start and end
/// before (one call per changed variable or look, none for a bubble a timer cleared). `clowder test` verdicts can change (BoatRace `SDM-000002`, now as
/// in the real Whisker); generated suites and digests unchanged.
/// `sem21`: colour searches sample only where some drawable can show the colour (the branch
/// distance of a false `touching color` and the drag events' colour search walk Whisker's grid
/// in its order but skip every point outside the boxes of the texels in that colour): the same
/// answers, far less work on games that ask every frame (Neatest on Snake in 0.48 of the CPU);
/// the work meter counts the points sampled and the cells marked, so runs report less work
/// and a run that reached the cap may now go further.
///
/// `sem22`: a layer change is charged when a query that depends on the layer order (colours,
/// picking) needs it, not before every query: fencing, touching sprites and bounds leave the
/// reordering of the same targets for later (same answers; a clone swarm whose members go to
/// the front every frame reported 14 times the work it does). Runs report less work; one that
/// reached the cap may go further.
///
/// `sem23`: a colour search skips the half-transparent texels that cannot make the composite
/// show the colour asked for (a blended composite has each channel at least the topmost
/// texel's premultiplied one), where it sampled every half-transparent texel's box: the same
/// answers, fewer points sampled and charged (Snake: 0.79 of the work), so a run that reached
/// the cap may go further.
///
/// `sem24`: a drawable rebuilt without changing its shape (shown again, a ghost or colour
/// effect, a new layer) keeps its cached touching rows, which a new version made stale: the
/// same answers, rows no longer recomputed and charged (`puzzle-room`'s crosshair, shown
/// every frame and hidden when it touches: 0.32 of the work), so a run that reached the cap
/// may go further.
///
/// `sem25`: a point of an uncached colour search is charged 80 units before its sample, not
/// 100 (`geometry::cost::WALK_POINT`): the colour sampler of `+sem24`'s builds fetches each
/// drawable once per search and skips the blend where it cannot matter, and the runs that do
/// little else (`whisker-integration`'s colour-distance programs) measured 0.34 CPU-s per 10⁹
/// units, below a third of the median (issue 31's calibration). Same answers; runs report
/// less work, so one that reached the cap may go further.
///
/// `sem26`: that charge is 60 units, not 80. Measured on another machine (issue 31's
/// calibration, all 2 994 runs of the corpora, one binary): the same colour-distance programs
/// (`cfgDistance__MoveWithConditions`, `cfgDistance__NestedConditions`: nine tenths of their
/// units are walk points) at 0.47–0.49 CPU-s per 10⁹ units against a median of 1.46–1.48,
/// a factor 3.0–3.1 below it; at 60 they measure 0.59. Same answers; runs report less work,
/// so one that reached the cap may go further.
///
/// `sem27`: a branch distance that cannot lower the minimum a condition has recorded in the
/// execution is not searched for: a `touching color` that has held once (minimum 0) asks no
/// more colour walks, and the others walk only the rings nearer than that minimum (for an
/// operand of `and`/`or`, tightened by the operands evaluated before it). The same minima
/// and digests (`Dodgeball`: a third of its CPU was walks whose answer was thrown away);
/// runs report less work (MIO on `Dodgeball`: 0.54 of it), so one that reached the cap may
/// go further.
///
/// `sem28`: a warp loop that has stopped changing anything (its state at two boundaries of the
/// loop is the same: `repeat until <not touching (Map)>` with the sprite fenced at an edge)
/// has the rest of its spin skipped (`engine::fixpoint`): the hang guard counts the skipped
/// periods and trips on the same step at the same block, and the instrumentation's condition
/// counts get what they would have added, so traces, coverage and branch distances are as
/// before; the skipped blocks are not done and not charged. Runs of such programs report far
/// less work (`501018355`, Random, 6 000 steps: 9.5 · 10⁹ units, ended by the cap, now
/// 0.17 · 10⁹, the whole budget), so a run that reached the cap may go further: in the whole
/// random sample, seed 1, the six runs of `501018355` and `402062721` now end `ok`.
///
/// `sem29`: pen lines and stamps are recorded and rasterised only when something reads the
/// pen layer (a colour query); a clear drops what no one read (`geometry::pen::deferred`).
/// The pen layer reports its changes per band of rows (`geometry::pen::changes`), and colour
/// composites are kept for sixteen asking drawables instead of four. Pixels and answers are as
/// before; the work count charges what is done
/// (recording, replaying, finding a dropped stamp's ink, fewer composite refills). Pen and
/// colour-sensing projects report less work (`400224037`, Random, 8 000 steps: 17 · 10⁹
/// units, ended by the cap after 4 894 steps, now 0.03 · 10⁹ with the whole budget; in the
/// whole random sample, seed 1, 205 runs report less work, every digest is the same, and
/// that project's Random run now ends `ok`).
///
/// `sem30`: a `touching color` query composites only the pixels inside the match boxes of the
/// drawables under it (where one of them can show the colour: `geometry::render::match_rects`),
/// and the pen layer's match boxes are the boxes of what it drew since its last clear instead
/// of the whole stage (colour searches too); a drawable at ghost 100 has none (it shows
/// nothing). Answers are as before; the work count charges fewer composited pixels and walk
/// points (`400003367`, Random, 20 000 steps: 6.2 · 10⁹ units, now 3.6 · 10⁹; its ten
/// falling clones ask for a colour only a pen line can show, and refilled their whole boxes
/// every frame; `401029935`, Random, 60 000 steps: 2.7 · 10⁹, now 0.43 · 10⁹, its colour
/// searches walked the whole stage under a fully ghosted title sprite).
///
/// `sem31`: fencing a move (every motion block) reads the mover's transform from the target as
/// it is now instead of first bringing the whole kept scene and its accelerated data up to
/// date (`geometry::cpu`, `fenced_position`); the next query that looks at the scene does that
/// once. Positions are as before; the work count charges fewer rebuilds of moved drawables
/// (`ball-physics-scroll`, Random, 30 000 steps: 8.21 · 10⁹ units, now 7.56 · 10⁹, the same
/// digest: its ball moves and asks `touching` step by step in warp loops, and each move
/// rebuilt it twice). And the fully covered core of a wide opaque pen line is filled without
/// computing each pixel's coverage (`PenLayer::raster_line_with`, the same pixels), charged
/// `cost::PEN_FILL` per pixel instead of `PEN_PIXEL` (left at the old charge, `400189023`'s
/// wide lines measured 0.16 CPU-s per 10⁹ units against a median of 1.06). And a full sync
/// for a query that reads no pen pixels gives a new pen drawable a placeholder skin instead of
/// drawing what is recorded (`PenLayer::placeholder_skin`): with fencing no longer syncing, the
/// first full sync came later and drew more lines that a clear then erased unseen
/// (`400189023`, 3 000 steps: 0.35 · 10⁶ units, now 0.04 · 10⁶, the same digest). In the whole
/// random sample, seed 1, 1 673 of 2 409 runs report other work (median 0.986 of it, 7 runs
/// more, at most 1.026) and every digest, status and step count is the same.
///
/// `sem32`: a question that reads only the asker's own drawable (`touching edge?`, `touching
/// mouse-pointer?`, bounds for `if on edge, bounce`, fencing a new clone) no longer brings the
/// kept scene up to date after clones were created or deleted: the asker's drawable as it is
/// now stands in for the question alone (`geometry::cpu`, `own_query`), rationed so that such
/// answers since the last sync cost at most four syncs' worth (`CpuGeometry::lazy`). Answers
/// are as before; the work count charges a stand-in as a rebuilt drawable instead of a sync
/// of the whole scene (`500004352`, MIO, paper budget: 0.20 · 10⁹ units, now 0.12 · 10⁹, the
/// same digest: its clones are created, deleted and asked about the edge every frame).
///
/// `sem33`: a warp thread whose block waits (`wait`, `wait until`, Whisker's `play sound until
/// done`, `say for secs`) re-runs that block at once, and virtual time does not move inside a
/// step, so it spins until the hang guard trips; each re-run is now a boundary of the fixed-point
/// search (`engine::fixpoint`), probed from the first, and a spin that changes nothing has the
/// rest of its passes skipped as a loop's are. Traces, hangs and coverage are as before; the
/// skipped passes are not done, so the work count drops (`402153740`, Random, paper budget:
/// 10.30 · 10⁹ units, now 0.027 · 10⁹, the same digest: every test that reaches its warp
/// `forever { play sound until done }` spun 5 million passes).
///
/// `sem34`: the phases that ask of a fitness only whether it is 0 (Random search, minimisation,
/// assertion generation) run their VMs with `instrument::Distances::ZeroOnly`: a branch
/// distance is measured only as zero or not, so a false `touching color` no longer walks the
/// stage for its distance. Execution, coverage and every decision are as before; the work
/// count drops by the walks not done (rq1 digests: the same 96 digests, Random's work down to
/// 0.74 of it on `FruitCatching`, MOSA's and MIO's to 0.87 and 0.90 by their minimisation).
///
/// `sem35`: the work count charges the evaluation of a light reporter (a variable, a
/// parameter, a list's item or length, arithmetic, a comparison, `and`/`or`/`not`:
/// `program::Rep::is_light`) `geometry::cost::EVAL_LIGHT` (10) instead of `EVAL` (25). Scripts
/// that compute (warp procedures of vector maths over lists) were charged 2.7× their CPU
/// against the corpora's median (`400011212`: 0.375 CPU-s per 10⁹ units, median 1.023), the
/// calibration's one outlier; now 0.72 against a median of 1.052. Execution, coverage, suites
/// and digests are as before where no cap is reached; the work count drops (minimisation's
/// choice between replaying and cloning reads it, so its path may change, its suite not).
///
/// `sem36`: MOSA's sorting scans (preference sorting, non-dominated sorting, sub-vector
/// dominance) are charged `testgen::work::cost::TARGET_SCAN` (1) per target value compared
/// instead of `TARGET` (5). A check on data the `+sem35` change was not made on (`clowder bench
/// work --seed 2 --steps 10000 --every 4 --offset 1`) put MOSA on small conformance projects
/// at 0.32 CPU-s per 10⁹ units against a median of 0.975 (beyond the factor 3): its fronts are
/// sorted every generation over every target, and the charge grew with the run. Now 0.466 /
/// 0.967 / 2.095 there. Searches, suites and digests are as before where no cap is reached;
/// MOSA's work count drops.
///
/// `sem37`: `Math.pow` (`operator_mathop` "10 ^", and the fisheye effect's geometry) is V8's:
/// V8's fdlibm `pow` divides by the whole `(t1 - 2) - (w + z·w)` where fdlibm subtracts
/// `w + z·w` after dividing, and the two differed in the last bit for 7 903 of 200 000 random
/// arguments (node 20.20.2, V8 11.3; now 0). Found on a project no one here had seen, whose
/// `10 ^` made a sprite's y differ from scratch-vm's at step 43. Runs that evaluate `10 ^` or
/// draw with fisheye may change; others are as before. Also: a reporter held in two input
/// slots (generated files; the Scratch editor never writes one) no longer makes the file a
/// load error: it runs as scratch-vm runs it (`program::shared`; four such files of 56 unseen
/// ones now trace as scratch-vm does for 1 500 steps). And a block that breaks the block rules
/// of scratch-vm's project schema (an input item that is neither a block id nor a primitive,
/// a `next` that is a number, …) is a load error, as scratch-vm refuses the file; before, it
/// loaded with fallbacks.
///
/// `sem38`: under the `whisker` profile, `2 × targets` more clones may be alive than
/// scratch-vm's 300 (`whisker::clone_allowance`): Whisker loads a project three times into
/// one VM before a test or a search, each load disposes the targets of the one before, and
/// `dispose()` lowers scratch-vm's never-reset clone counter for originals too (measured in
/// the real Whisker). Found by the round trip on 55 games no one here had seen, where six games
/// that fill the clone limit failed checks of clone counts (car-race: 293 against Whisker's
/// 303). Runs that reach the clone limit change; others are as before. And a variable's number
/// of 15 or more significant digits (a `sin`, `atan2` or `pow` result) is checked within 10⁻⁹
/// to 10⁻⁸ of it instead of exactly (`testgen::assertions::computed_number`): Whisker's
/// Chromium computes such values differently in the last bits (three games of the 55 failed on
/// them). Suites with such checks change; the VM does not.
///
/// `sem39`: under the `whisker` profile, a new VM starts with every sprite fenced
/// (`setXY(x, y, true)` of its saved position), as Whisker's `loadSaveState` does before every
/// test, the first included (`whisker-main/src/test-runner/test-runner.js`); before, only the
/// later tests of a file were fenced. Found by the whisker-profile sweep on GitHub projects no
/// one here had seen: a pipe saved at y −212 started at −113 in Whisker. Of 1 215 projects
/// (the corpora, 199 GitHub projects, 56 collection games), 27 start differently, all with a
/// sprite saved beyond the stage's edge; runs of the others are as before. And SVG text in a
/// family scratch-svg-renderer does not inline is drawn in the font Chromium falls back to
/// (Liberation Sans for Arial, Helvetica and `sans-serif`, Liberation Serif for unknown
/// families; `vm/fonts/`, `geometry::svg::fonts`) instead of Scratch's Sans Serif: read from
/// Chromium's silhouettes, it cut the pixels whose alpha is zero on one side only from 42 976
/// to 8 366 on the 73 text costumes of 60 GitHub projects. Silhouettes of other costumes are
/// as before; every smoke and rq1 run keeps its digest.
///
/// `sem40`: SVG edge pixels are left at zero where Skia's analytic anti-aliasing leaves them
/// (`geometry::svg_raster`): a shape small enough for Skia's mask blitter keeps every alpha of
/// 1 or more; a larger one drops alphas below 8 in pixel rows a vertex of its outline cuts
/// (the run blitter's `snapAlpha`) and only slivers in the others; clipped curves are also cut
/// at their x extrema, as `SkEdgeClipper` does; interior pixels whose float sums miss 1 are
/// full. Before, one threshold (5/255) served every pixel. Against Chromium's silhouettes
/// (`scripts/svg-silhouettes.py`) the pixels whose alpha is zero on one side only fell from
/// 29.5 to 20.2 per path-only costume on 302 GitHub costumes (half of them used to fit the
/// three thresholds) and from 23.2 to 16.3 on the 319 of the corpora (not used to fit).
///
/// `sem41`: SVG `<circle>` and `<ellipse>` elements, and the corners of a `<rect>` with
/// `rx`/`ry`, fill as Chromium fills them, from Skia's conics (four for an oval, one per
/// corner) cut into quadratics within 0.25 device pixels (`geometry::svg`'s `conics`), not
/// from usvg's cubic arcs (their strokes keep usvg's outline). Ellipses written as paths (the
/// paint editor's) stay as written, as in Chromium. On the 45 costumes of the silhouette
/// samples that have circles or ellipses, the pixels whose alpha is zero on one side only fell
/// from 928 to 870 at scale 1 and from 1 994 to 1 885 at scale 2 (no costume worse); on the
/// 707 costumes of the 55 collection games, from 5 456 to 5 444 with rounded rectangles added.
/// Silhouettes of costumes without such shapes are as before. Every smoke and rq1 run keeps
/// its digest.
///
/// `sem42`: three changes, each traced to a test of the collection games that failed in the
/// real Whisker. (1) The `whisker` profile computes `Math.sin`, `cos`, `tan`, `asin`, `acos`,
/// `atan`, `atan2`, `exp`, `log` and `pow` as Chromium does on Linux (glibc, modelled by the
/// correctly rounded results of CORE-MATH, `util::mathlib`) instead of as Node's V8 (fdlibm):
/// they differ in the last bit on 3 to 13 % of arguments, and a shell's `move` drifted one unit
/// in the last place from Whisker's. (2) Strokes of `<circle>`, `<ellipse>` and rounded `<rect>`
/// are Skia's offsets of their conics (`geometry::svg`'s `conic_stroke`), and their conics are
/// mapped to the device under any transform (rotated groups too). (3) The `whisker` profile's
/// renderer keeps convex hulls: after the program's `touching edge?` or `if on edge, bounce`,
/// Whisker's `isTouchingEdge`, or a say/think bubble computed a sprite's hull, its touching
/// search box is the hull's box until the hull is marked dirty, which can turn a `true` answer
/// `false`; test generation asks exported touching-edge checks in their place so that the
/// runner's hulls are the recorded ones. The `default` and `headless` profiles keep Node's maths
/// and a fresh renderer per query; (2) changes their SVG silhouettes only where such shapes are
/// stroked or rotated.
///
/// `sem43`: SVG shapes are rasterised by a port of the scan converters Chromium's Skia uses
/// (`geometry::aaa`: analytic anti-aliasing for paths, the rectangle filler for `<rect>`
/// elements that stay axis-aligned) instead of a model of them fitted with thresholds
/// (`sem40`). Checked against Skia itself (skia-python 144, `scripts/coverage-vs-skia.py
/// --paths`), the coverage is byte-identical on every one of thousands of seeded random
/// polygons, quadratic and cubic paths, clipped or not, and rectangles. An oval's or rounded
/// rectangle's path keeps what Skia knows of its conics (convex, bounded by the conics'
/// points), and its conics are cut into quadratics with Skia's monotonicity fixes. The strokes
/// of such shapes (`conic_stroke`) now keep the stroke's tangents as vectors, as Skia's
/// stroker does (the outline was up to 3·10⁻⁵ px off; stroked ellipses now equal Skia's in
/// every pixel). And SVGs with text no longer go wholly to resvg: their shapes get this
/// coverage and their glyph outlines too. Against Chromium's silhouettes the pixels whose
/// alpha is zero on one side only fell from 16 257 to 10 006 on 454 GitHub costumes, from
/// 12 644 to 7 618 on the 387 of the corpora (scale 1) and from 5 454 to 3 362 on the 707 of
/// the collection games. Silhouettes change wherever a faint edge pixel did, so runs that ask
/// touching questions may change.
///
/// `sem44`: SVG text is drawn as Chromium on Linux draws it (`geometry::svg`'s `glyphs`): each
/// glyph's mask is its light-hinted outline at the device size (skrifa, the crate Chromium's
/// Fontations backend runs: the automatic hinter for TrueType fonts), placed at a quarter pixel
/// in x and a whole pixel in y, filled by the ported scan converter and passed through Skia's
/// A8 gamma pre-blend (contrast 0.2, gamma 1.2); a stroked glyph is that outline stroked
/// before the canvas's scale (tiny-skia's stroker standing in for Skia's). Before, glyph
/// outlines were filled unhinted where usvg put them. The family `Serif` without quotes is the browser's default serif font
/// (CSS's generic keywords ignore case), not the inlined Source Serif, and `alignment-baseline`
/// on a `<text>` element is ignored, as Chromium ignores it (Scratch 2's text moved down by its
/// ascent). SVGs with embedded images keep the ported coverage for their other shapes. On 144
/// seeded text costumes the pixels whose alpha is zero on one side only fell from 12 871 to 85
/// (140 byte-identical, all 96 single glyphs among them); on the 39 text costumes of the
/// corpora from 64 945 to 34 602 at scale 1 and from 222 166 to 119 605 at scale 2, none worse;
/// on the 348 of the collection games from 3 600 to 1 525. The Whisker round trip of those
/// games passes 320 of 321 tests (from 319).
///
/// `sem45`: clip paths as the browser applies them (`geometry::svg`'s `clip` and `pushdown`).
/// scratch-svg-renderer pushes every container's transform down to the leaves before the
/// browser draws (`transformStrokeWidths`), so a clip path or mask on a transformed group, or on
/// a path whose data it transforms, is drawn in the root's user space: the paint editor's
/// layer clip on a `translate(120,90)` group cuts the drawing at 600 × 450, not at the canvas
/// (checked on twelve seeded clip costumes, all now byte-identical with Chromium's
/// silhouettes). A clip of one shape is also drawn with the ported coverage instead of sending
/// the costume to resvg: a hard clip for a rectangle within 1/8 px of whole pixels, else an
/// anti-aliased clip filled with run-length rows, under which shapes are scanned with
/// run-length rows and cut at the clip's bounds, their coverage multiplied by the clip's. Of
/// the 1 215 distinct SVG costumes of the corpora and the collection games, the 7 with a clip
/// path or mask change: pixels zero on one side only fell from 33 413 to 643. And a path in an
/// opaque colour other than black is painted as Skia's opaque-colour blitter paints it: the
/// two-pixel steps its scan converter hands to `blitAntiH2` are interpolated with weight
/// `a + (a >> 7)` (`SkFastFourByteInterp`), one 256th short below 128, so coverage 1 there
/// leaves alpha 0 (not for black, under an anti-aliased clip, cut at the canvas's sides, or in
/// a translucent layer). On seeded random paths in colour against skia-python this moved from
/// 785 to 800 of 800 byte-identical; on the 617 costumes with cached Chromium silhouettes the
/// pixels zero on one side only fell from 5 522 to 4 715 at scale 1 (27 better, none worse)
/// and from 12 589 to 11 889 at scale 2 (28 better, none worse).
///
/// `sem46`: embedded images and missing glyphs as Chromium draws them (`geometry::svg`'s
/// `bitmap` and `fonts`). An `<image>` (pixelated by scratch-svg-renderer) is sampled as Skia's
/// nearest-neighbour mapper samples it (the centre mapped in floats, 32.32 fixed point less
/// one 1/65536 step, stepped along rows) instead of tiny-skia's, which takes the other pixel
/// wherever a centre falls on a source boundary (every pixel of a bitmap at half size); its
/// edges are `SkScan::AntiFillRect`'s and it blends as `S32A_Blend`. `monospace` is DejaVu
/// Sans Mono, and a character no font of the family list has is drawn in DejaVu Sans (Sans
/// Mono after a monospaced face), as fontconfig picks on the oracles' machine; both are now
/// embedded. On the 626 costumes with cached Chromium silhouettes the pixels whose alpha is
/// zero on one side only fell from 4 755 to 1 948 at scale 1 (36 better, none worse). And
/// colours are written as Skia's blitters write them (`geometry::svg_blend`, checked with the
/// new colour instrument `scripts/svg-silhouettes.py --colour`): a colour over an empty pixel
/// and any translucent colour scaled by `coverage + 1` in 256ths, then `SkBlitRow::Color32`
/// over what is below; a translucent layer composited by `SkBlendARGB32`; and a translucent
/// group that holds one path with only a fill or only a stroke drawn without a layer, its
/// opacity folded into the paint (as Chromium's compositor folds a layer of one draw). Pixels
/// whose colour differs from Chromium's in the bits colour sensing compares fell from 491 521
/// to 338 153 (274 costumes better, 7 worse, all over gradients); alpha zero on one side only
/// from 1 948 to 1 884 at scale 1 and from 9 141 to 8 986 at scale 2 (none worse).
///
/// `sem47`: gradients, colours over paint, fallback glyphs and the layout container as
/// Chromium draws them (`geometry::svg`'s `gradient`, `container`, `text_layout`, `fonts`,
/// and `geometry::svg_blend`). Gradients are Skia's
/// dithered float pipeline (`t` per pixel centre, `factor × t + bias` per interval, an 8 × 8
/// ordered dither of less than half a step) instead of tiny-skia's undithered fill;
/// `SkBlitRow::Color32` keeps `256 − a` of what is below, truncated, and an opaque colour
/// over paint is written through it too; a translucent group of one gradient draw folds into
/// the paint's alpha; and DejaVu supplies a span's missing characters even after one that no
/// font has. And a costume off the 1/64 px layout grid is drawn where Blink's `LayoutUnit`
/// container and `drawImage`'s stretch put it (`container`), its text laid out in Blink's
/// scaled font (size floored to 1/100 px, advances in 16.16; `text_layout`). On the 626
/// costumes with cached Chromium colours the pixels differing in the bits colour sensing
/// compares fell from 338 153 to 56 587 (no step made more than 2 costumes worse, by at most
/// 12 pixels); alpha zero on one side only from 1 884 to 659 at scale 1 (14 better, 2 worse
/// by one pixel) and from 8 986 to 3 461 at scale 2; byte-identical alpha rose from 259 to
/// 405 costumes.
///
/// `sem48`: two classes found by the Whisker round trip on editor-made projects no one here
/// had seen (`docs/vm.md`, "The round trip on editor-made projects"). Under the `whisker`
/// profile a drag by the test driver moves the start of the sprite's last glide to the dragged
/// position while that glide runs (the fork's `setXY(x, y, true, true)` and
/// `glidingStackFrame`), so the glide goes on from there instead of snapping back to its line.
/// And an SVG without a view box is measured as Blink's `getBBox` measures it, skipping groups
/// with nothing in them (usvg gave them a box at the origin, which moved such a costume's
/// view box, rotation centre and bounds).
///
/// `sem49`: two classes found by the whisker-profile sweep on editor-made projects
/// (`docs/vm.md`, "The whisker-profile sweep on the editor-made samples"), both `whisker`
/// profile only. A direction saved outside (−180, 180] (the editor's dial saved −270) is kept
/// as saved, as Whisker's fork loads it (scratch-vm 5 wraps it): its reporters read it, a
/// left-right sprite flips by its sign, moves and bounces compute from it. And a sprite's
/// bounds come from the convex hull the renderer kept, made from the silhouette of the moment
/// it was computed: a larger MIP made later (a `touching` query asks for the 100 % texture)
/// replaces the silhouette but does not mark the hull dirty, so a small sprite that bounced
/// before it first asked `touching` keeps its first, coarser hull.
///
/// `sem50`: under a Whisker test driver (`clowder test`), a target Whisker's `Sprites` wraps
/// for the first time in a test loses its listeners (`wrapTarget` calls
/// `target.removeAllListeners()`), the pen's `_onTargetMoved` among them: a sprite whose pen is
/// down draws nothing more until its next `pen up` and `pen down`, and a clone made while its
/// original's pen is down (Whisker wraps clones as they are made) never draws. Found by the
/// whisker-profile sweep on Labyrinth (`docs/vm.md`, "Whisker's wrappers take the pen's
/// listener away"). Studies' runs, which have no driver, are unchanged.
///
/// `sem51`: under the `whisker` profile `play sound until done` waits for the buffer Whisker's
/// browser decodes from the sound's WAV file (its PCM resampled to 44.1 kHz, its IMA ADPCM
/// counted by scratch-audio's decoder), read from the file's header, where it waited for
/// project.json's `sampleCount / rate`; MP3 and absent files keep the metadata. Stale metadata
/// made a sample-7 shooter's hit sound last 25 steps instead of Whisker's 20 (`docs/vm.md`,
/// "Sound durations from the file"). Runs change only on projects whose metadata ends a wait
/// in another step; none of the corpora's does. And under the `whisker` profile a warp thread
/// that yields in a block timed by the step count (`wait`, `say … for secs`, `play sound until
/// done`, `glide`) and whose timer has not run out ends its turn, as Whisker's 500 ms warp
/// timer ends it (the step count does not move inside a step, so the spin changes nothing),
/// where the hang guard ended the whole
/// step: a sample-8 game's warp walk cycle (`docs/vm.md`, "A wait inside a warp procedure").
///
/// `sem52`: under the `whisker` profile `show` and `hide` give a target without a bubble state
/// a fresh, empty one, as looks' `_renderBubble` does through `_getBubbleState` when there is a
/// renderer: a clone that ran either block has Whisker's `sayText` `""` from then on, where it
/// read `null` (`docs/vm.md`, "Bubble states: `""` and `null`"). Only what a Whisker test reads
/// of `sayText` changes (a hand-written `sayText.length` no longer throws); generated
/// assertions and coverage read both as "says nothing", so no run's digest or status changes;
/// the work count of 26 of the 96 rq1 guard runs moves by 3 to 150 units (of 10⁷ to 10⁹), where
/// exactly was not traced. Also:
/// bitmap costumes are decoded by their bytes, so WebP, GIF and BMP files saved under a `.png`
/// name get their real silhouettes instead of an approximate opaque box (a held-out snake game's
/// `touching` differed from its 40th step; `docs/vm.md`, "Bitmaps decoded by their bytes"). None
/// of the corpora's bitmaps is such a file, so their digests stay. And: under the `whisker`
/// profile `switch backdrop to … and wait` that starts scripts no longer throws (P10) but ends at
/// once without waiting, as Whisker's fork, which guards the read that throws in scratch-vm: the
/// rest of the step runs (a held-out snake game's start button; `docs/vm.md`, same section;
/// reach 3 random-sample projects, none of the study corpora).
///
/// `sem53`: under the `whisker` profile test generation and mutation analysis run every test
/// as an exported test runs in Whisker, through Whisker's cache of sprite wrappers
/// (`Sut::whisker_prologue` in `clowder-testgen`): the prologue wraps every target, and each
/// clone is wrapped as it is made. Two things follow. A clone whose Whisker id repeats its
/// original's (the stream is seeded again before every test) is read through the original's
/// wrapper, so its assertions record the original's fields, as the exported test reads them
/// (a held-out Breakout's 36th brick clone: 4 of 5 exported tests failed in the real Whisker,
/// now 5 of 5 pass; `docs/vm.md`, "Generation reads through Whisker's wrappers"). And a clone of
/// a sprite whose pen is down draws nothing, as under `clowder test` since `sem50`. Also: the
/// empty bubble state `sem52` gives on `show`/`hide`, and the mirror's pen bit, no longer log
/// a change for the geometry (which re-checked those targets and counted the work); that log
/// entry was where the work of 26 rq1 guard runs moved under `sem52`. Every smoke run keeps
/// its `sem52` digest, status and work; every rq1 guard run its digest and status, and its
/// work is again exactly `sem51`'s.
///
/// `sem54`: the `whisker` profile's maths library is Chromium 148's on Linux (the browser the
/// whisker-oracle runs Whisker in here since 2026-11-28): fdlibm's `tan`, `asin`, `acos`,
/// `atan`, `atan2`, `exp` and `log` (bit for bit, as Node's), correctly rounded `sin`, `cos`
/// and `pow` (glibc's, approximated). `sem42` to `sem53` followed Chromium 156, which calls
/// glibc for all ten; that library is still there (`clowder test --whisker-maths glibc`).
/// A held-out repaired Sternenjagd's jellyfish pointed 1 ulp apart from Whisker's after a
/// `point towards` (`atan2`), and the real Whisker's generated test compares directions exactly
/// (`docs/vm.md`, "Chromium 148's maths, and Whisker's servant rewriting test files").
/// Every smoke run (headless) keeps its digest, status and work; of the 96 rq1 guard runs 10
/// change their digest (same status and coverage) and 3 their work (by 300 to 1 280 units).
///
/// `sem55`: a variable saved with a name and no value (`["v"]`, as PictoBlox writes it) starts
/// `undefined`, as in scratch-vm (it started at 0); `switch costume to`, `switch backdrop to`
/// (`… and wait`) given `undefined` or `null`, and text to speech's `set language to` given
/// anything but a string, throw as scratch-vm's JS does (the rest of the step is lost, the
/// thread stays on the block); and the
/// whole of scratch-vm's project schema is a load error, not only its block rules (a file
/// scratch-vm refuses, e.g. a costume whose `assetId` is not 32 hex digits or a variable whose
/// value is `null`, no longer runs here). Found by two new probes against the fidelity oracle
/// (`scripts/fidelity-bad-values.py`: every input of every block fed `undefined` and `null`;
/// `scripts/fidelity-schema.py`: 80 files that break or keep one rule, 55 of them treated
/// otherwise than scratch-vm before). No corpus project changes: every file of the corpora loads
/// as before, none has a variable without a value; every smoke and rq1 guard run keeps its
/// digest, status and work.
///
/// `sem56`: two charges of the work meter follow the CPU again (no answer changes). `color is
/// touching color` keeps the asking drawable's mask rows between queries (keyed by its shape
/// version, MIP level, sampling, effects' bits, the mask colour and the query's box), and a
/// kept row is charged as a cached row read, as touching rows are; before, every query
/// sampled and was charged every pixel of the asker's box again. And reading a list (`item`,
/// `item #`, `length`, `contains`, the list's contents, the length a `delete`, `insert` or
/// `replace` checks) no longer logs its owner as changed for the geometry, which re-checked
/// it and charged the work. Runs of programs with either change report less work; a run that
/// reached the work cap may now search further. Traces, digests and statuses as `sem55`
/// otherwise (`docs/vm.md`, "Kept mask rows and list reads that change nothing").
///
/// `sem57`: the touching rows the geometry keeps per drawable (a whole stage of them, about
/// 3 250 words, once one is asked for) are shared by a clone of the VM (a replay's snapshot)
/// instead of copied; the first write into shared rows copies them, and the first write on
/// each side after the clone is charged a copy (so that a VM and its clone count alike). Before, every clone copied them and its charge counted none of them. Runs whose
/// replays keep snapshots of programs that ask `touching` report other work; traces, digests
/// and statuses as `sem56` (`docs/vm.md`, "Touching rows shared by a VM's clones").
pub const ENGINE_VERSION: &str = concat!("clowder-vm/", env!("CARGO_PKG_VERSION"), "+sem57");
