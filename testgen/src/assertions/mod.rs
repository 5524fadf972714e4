//! Regression assertions (Whisker paper §4.3, Table 4).
//!
//! A test is replayed event by event on the program it was generated for;
//! after each event (and its one-step wait) the state of every live target is
//! observed, and only the properties whose value changed since the previous
//! observation become assertions at that point (the first event is compared
//! with the state the test starts from). Checking a test on a mutant replays
//! it the same way and evaluates each assertion where it was recorded.
//!
//! | kind | targets | value | checked |
//! |---|---|---|---|
//! | backdrop | stage | backdrop (costume) index | exactly |
//! | clone count | original sprites | live clones | exactly |
//! | costume | sprites, clones | costume index | exactly |
//! | direction | sprites, clones | degrees | ±1 |
//! | graphic effect | sprites, clones × 7 effects | value | exactly |
//! | layer | sprites, clones | layer (stage 0, then back to front) | exactly |
//! | list | stage, original sprites | length of each list | exactly |
//! | position | sprites, clones | x, y | ±5 each |
//! | say | sprites, clones | bubble type and text (none = empty text) | exactly |
//! | size | sprites, clones | size % | ±1 |
//! | touching | sprites, clones × other sprites | touching any instance of it | exactly |
//! | touching edge | sprites, clones | touching the stage edge | exactly |
//! | variable | stage, original sprites | value as a JS string | exactly; a number of 15 or more significant digits within 10⁻⁹ to 10⁻⁸ of it (`value_tolerance`) |
//! | visibility | sprites, clones | visible | exactly |
//! | volume | every target | volume % | exactly |
//!
//! Which targets carry which kinds follows Whisker's assertion factories
//! (branch `emse22`); the tolerances are those of the JavaScript Whisker
//! writes, so a verdict here is what the exported test would say. Whether a
//! value *changed* is decided exactly. Differences from Whisker's code, all on
//! the side of the paper's description: Whisker's `evaluate` never finds the
//! previous state (it looks targets up with `Object.values` on a `Map`), so it
//! adds every assertion after every event; the touching factories are disabled
//! there ("buggy"), here they are on; the state before the first event counts
//! as the previous state (Whisker skips the first event). Values that are not
//! finite numbers produce no assertion (JSON cannot hold them).
//!
//! A touching check is not an observation in the exported test: Whisker's
//! `isTouchingSprite` asks the live renderer, which keeps the MIPs the query makes,
//! so under the `whisker` profile the checks an exported test makes can change
//! what the program sees next. Recording asks every touching check as the test
//! will, in its order, and keeps a check's MIPs only when the check is exported;
//! checking on a mutant asks them the same way ([`first_failure`]).
//!
//! A clone is identified as Whisker identifies it: by its sprite and its index
//! among the sprite's clones alive *now*, in creation order (1 = the oldest
//! live clone; `sprite.clones[i]` in scratch-vm, Whisker's `getClone(i)`), so
//! after a deletion the same index names the next clone. The exported
//! JavaScript reads clones through Whisker's sprite wrapper
//! (`getClones()[i - 1]`), which has the same properties as an original's
//! (`getClone(i)` is the raw target: no `sayText`, unrounded `size`); under the `whisker`
//! profile each target is observed through the wrapper Whisker hands out for it, so a clone
//! whose Whisker id repeats its original's records the original's fields
//! (`Vm::whisker_wrapper_target`, after [`Sut::whisker_prologue`]). Sizes are
//! exported rounded, as the wrapper reports them. Layers are clowder's
//! execution order (stage 0, back-most sprite 1, …), which can differ from
//! scratch-render's drawable order.

use std::collections::BTreeMap;

use clowder_vm::value::js_round;
use serde::{Deserialize, Serialize};

use crate::events::Event;
use crate::execution::Executor;
use crate::result::Test;
use crate::sut::Sut;
use crate::work::{Kind, cost};

fn is_false(b: &bool) -> bool {
    !*b
}

/// The name standing for the stage in [`TargetRef::sprite`] (scratch-vm's own
/// name for the stage in menus; sprites cannot be called that).
pub const STAGE: &str = "_stage_";

/// Graphic effects, in the VM's order.
pub const EFFECTS: [&str; 7] = ["color", "fisheye", "whirl", "pixelate", "mosaic", "brightness", "ghost"];

/// Tolerance of position assertions (Scratch units, each coordinate).
pub const POSITION_TOLERANCE: f64 = 5.0;
/// Tolerance of direction assertions (degrees).
pub const DIRECTION_TOLERANCE: f64 = 1.0;
/// Tolerance of size assertions (percent).
pub const SIZE_TOLERANCE: f64 = 1.0;
/// Relative tolerance of a variable holding a computed number ([`computed_number`]): the
/// check allows [`value_tolerance`], the power of ten at or just above `|x|` times this.
pub const VALUE_RELATIVE_TOLERANCE: f64 = 1e-9;

/// The tolerance of a check on the computed number `x`: a power of ten (so the exported test
/// reads `1e-8`), between 1 and 10 times `|x|` × [`VALUE_RELATIVE_TOLERANCE`].
pub fn value_tolerance(x: f64) -> f64 {
    let exp = (x.abs() * VALUE_RELATIVE_TOLERANCE).log10().ceil();
    format!("1e{exp}").parse().unwrap_or(x.abs() * VALUE_RELATIVE_TOLERANCE)
}

/// The number a variable's value `value` (JS `String(v)`) is, when its last digits depend on
/// the JavaScript engine that computed it: 15 or more significant digits, as `Math.sin`,
/// `atan2`, `pow` or `exp` give. Browsers' maths libraries differ from each other and from
/// Node's in the last bits (Chromium 156 and Node 20 differ on 3 to 23 % of random arguments
/// of each such function), so a checked position or angle Whisker computes in its browser can
/// differ from ours by a few units in the last place; such a value is checked within
/// [`value_tolerance`]. Typed and short decimal values stay exact.
pub fn computed_number(value: &str) -> Option<f64> {
    let mantissa = value.strip_prefix('-').unwrap_or(value);
    let mantissa = mantissa.split(['e', 'E']).next().unwrap_or("");
    if mantissa.is_empty() || !mantissa.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let digits = mantissa.bytes().filter(u8::is_ascii_digit).skip_while(|&b| b == b'0').count();
    let x: f64 = value.parse().ok()?;
    (digits >= 15 && x.is_finite() && x != 0.0).then_some(x)
}

/// A live target: the stage ([`STAGE`]), a sprite's original (clone 0) or its
/// `clone`-th clone.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TargetRef {
    /// Sprite name, or [`STAGE`].
    pub sprite: String,
    /// 0 for the original, n for the n-th of the sprite's live clones (creation order).
    pub clone: u32,
}

impl TargetRef {
    /// The stage.
    pub fn stage() -> Self {
        Self { sprite: STAGE.into(), clone: 0 }
    }

    /// Whether this is the stage.
    pub fn is_stage(&self) -> bool {
        self.sprite == STAGE
    }

    fn accessor(&self) -> String {
        if self.is_stage() {
            "t.getStage()".into()
        } else if self.clone == 0 {
            format!("t.getSprite({})", js_str(&self.sprite))
        } else {
            format!("t.getSprite({}).getClones()[{}]", js_str(&self.sprite), self.clone - 1)
        }
    }

    fn label(&self) -> String {
        if self.is_stage() {
            "Stage".into()
        } else if self.clone == 0 {
            format!("Sprite {}", self.sprite)
        } else {
            format!("Clone {} of {}", self.clone, self.sprite)
        }
    }
}

/// One regression assertion: a property of the program state and its expected value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Assertion {
    /// The stage shows backdrop number `costume` (0-based index).
    Backdrop {
        /// Backdrop index.
        costume: u32,
    },
    /// Sprite `sprite` has `count` live clones.
    CloneCount {
        /// Sprite name.
        sprite: String,
        /// Live clones.
        count: u32,
    },
    /// The target wears costume number `costume` (0-based index).
    Costume {
        /// Target.
        target: TargetRef,
        /// Costume index.
        costume: u32,
    },
    /// The target points in `direction` (±1°).
    Direction {
        /// Target.
        target: TargetRef,
        /// Degrees.
        direction: f64,
    },
    /// Graphic effect `effect` of the target has `value`.
    Effect {
        /// Target.
        target: TargetRef,
        /// One of [`EFFECTS`].
        effect: String,
        /// Value.
        value: f64,
    },
    /// The target is at `layer`.
    Layer {
        /// Target.
        target: TargetRef,
        /// Layer (stage 0, back-most sprite 1, …).
        layer: u32,
    },
    /// List `list` of the target has `length` items.
    List {
        /// Target (stage or original sprite).
        target: TargetRef,
        /// List name.
        list: String,
        /// Items.
        length: u32,
    },
    /// The target is at (`x`, `y`) (±5 each).
    Position {
        /// Target.
        target: TargetRef,
        /// x.
        x: f64,
        /// y.
        y: f64,
    },
    /// The target's bubble: `text` (empty: no bubble), a thought when `think`.
    Say {
        /// Target.
        target: TargetRef,
        /// Bubble text; empty when there is no bubble.
        text: String,
        /// A thought bubble (false when there is no bubble).
        think: bool,
    },
    /// The target has `size` percent (±1).
    Size {
        /// Target.
        target: TargetRef,
        /// Size %.
        size: f64,
    },
    /// Whether the target touches sprite `other` (any of its instances).
    Touching {
        /// Target.
        target: TargetRef,
        /// The other sprite's name.
        other: String,
        /// Touching?
        touching: bool,
    },
    /// Whether the target touches the stage edge.
    TouchingEdge {
        /// Target.
        target: TargetRef,
        /// Touching?
        touching: bool,
    },
    /// Variable `variable` of the target has `value` (as a JS string).
    Variable {
        /// Target (stage or original sprite).
        target: TargetRef,
        /// Variable name.
        variable: String,
        /// Value, JS `String(value)`.
        value: String,
        /// The value is a boolean (`set v to <…>`), not a string: emse22's `assert.equal`
        /// turns the string `"true"` into `"NaN"` and so never equals a boolean, so the export
        /// writes a boolean literal. Absent from the JSON when false.
        #[serde(default, skip_serializing_if = "is_false")]
        boolean: bool,
    },
    /// Whether the target is visible.
    Visibility {
        /// Target.
        target: TargetRef,
        /// Visible?
        visible: bool,
    },
    /// The target's volume.
    Volume {
        /// Target.
        target: TargetRef,
        /// Volume %.
        volume: f64,
    },
}

/// What an assertion is about, without its expected value: two assertions
/// with the same key observe the same property.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    kind: u8,
    target: TargetRef,
    sub: String,
}

impl Key {
    /// The target observed (the sprite's original for clone counts, the stage for backdrops).
    pub fn target(&self) -> &TargetRef {
        &self.target
    }
}

impl Assertion {
    /// The kind's name, as in the JSON (`position`, `touching_edge`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Assertion::Backdrop { .. } => "backdrop",
            Assertion::CloneCount { .. } => "clone_count",
            Assertion::Costume { .. } => "costume",
            Assertion::Direction { .. } => "direction",
            Assertion::Effect { .. } => "effect",
            Assertion::Layer { .. } => "layer",
            Assertion::List { .. } => "list",
            Assertion::Position { .. } => "position",
            Assertion::Say { .. } => "say",
            Assertion::Size { .. } => "size",
            Assertion::Touching { .. } => "touching",
            Assertion::TouchingEdge { .. } => "touching_edge",
            Assertion::Variable { .. } => "variable",
            Assertion::Visibility { .. } => "visibility",
            Assertion::Volume { .. } => "volume",
        }
    }

    /// Whether asking this check in Whisker changes the renderer, and so possibly the
    /// program's later answers: a touching check leaves the MIPs it creates, a touching-edge
    /// check the sprite's convex hull.
    pub fn changes_renderer(&self) -> bool {
        matches!(self, Assertion::Touching { .. } | Assertion::TouchingEdge { .. })
    }

    /// The property observed.
    pub fn key(&self) -> Key {
        let k = |kind: u8, target: &TargetRef, sub: &str| Key { kind, target: target.clone(), sub: sub.to_string() };
        match self {
            Assertion::Backdrop { .. } => k(0, &TargetRef::stage(), ""),
            Assertion::CloneCount { sprite, .. } => k(1, &TargetRef { sprite: sprite.clone(), clone: 0 }, ""),
            Assertion::Costume { target, .. } => k(2, target, ""),
            Assertion::Direction { target, .. } => k(3, target, ""),
            Assertion::Effect { target, effect, .. } => k(4, target, effect),
            Assertion::Layer { target, .. } => k(5, target, ""),
            Assertion::List { target, list, .. } => k(6, target, list),
            Assertion::Position { target, .. } => k(7, target, ""),
            Assertion::Say { target, .. } => k(8, target, ""),
            Assertion::Size { target, .. } => k(9, target, ""),
            Assertion::Touching { target, other, .. } => k(10, target, other),
            Assertion::TouchingEdge { target, .. } => k(11, target, ""),
            Assertion::Variable { target, variable, .. } => k(12, target, variable),
            Assertion::Visibility { target, .. } => k(13, target, ""),
            Assertion::Volume { target, .. } => k(14, target, ""),
        }
    }

    /// Whether `actual` (the same property observed on a run, `None` when the
    /// target or property does not exist there) satisfies this assertion,
    /// with the tolerances of the table above.
    pub fn accepts(&self, actual: Option<&Assertion>) -> bool {
        let Some(actual) = actual else { return false };
        let near = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol;
        match (self, actual) {
            (Assertion::Direction { direction: e, .. }, Assertion::Direction { direction: a, .. }) => {
                // Headings wrap: 179 and -179 are 2° apart.
                let d = (e - a).rem_euclid(360.0);
                d.min(360.0 - d) <= DIRECTION_TOLERANCE
            }
            (Assertion::Position { x: ex, y: ey, .. }, Assertion::Position { x: ax, y: ay, .. }) => {
                near(*ex, *ax, POSITION_TOLERANCE) && near(*ey, *ay, POSITION_TOLERANCE)
            }
            (Assertion::Size { size: e, .. }, Assertion::Size { size: a, .. }) => near(*e, *a, SIZE_TOLERANCE),
            (
                Assertion::Variable { target: et, variable: ev, value: e, boolean: false },
                Assertion::Variable { target: at, variable: av, value: a, boolean: false },
            ) if et == at && ev == av && e != a => computed_number(e).is_some_and(|e| {
                // `withinRange` compares `actual` to numbers: JS `Number(actual)`.
                near(e, clowder_vm::value::js_string_to_number(a), value_tolerance(e))
            }),
            (e, a) => e == a,
        }
    }

    /// The Whisker JavaScript statement(s) checking this assertion.
    pub fn to_js(&self) -> String {
        let num = |x: f64| clowder_vm::value::number_to_js_string(x);
        match self {
            Assertion::Backdrop { costume } => {
                format!("t.assert.equal(t.getStage().currentCostume, {costume}, \"Expected backdrop {costume}\");")
            }
            Assertion::CloneCount { sprite, count } => {
                let t = TargetRef { sprite: sprite.clone(), clone: 0 };
                format!(
                    "t.assert.equal({}.getCloneCount(), {count}, {});",
                    t.accessor(),
                    js_str(&format!("Expected {} to have {count} clones", t.label()))
                )
            }
            Assertion::Costume { target, costume } => format!(
                "t.assert.equal({}.currentCostume, {costume}, {});",
                target.accessor(),
                js_str(&format!("Expected {} to have costume {costume}", target.label()))
            ),
            Assertion::Direction { target, direction } => format!(
                "t.assert.withinRange({}.direction, {}, {}, {});",
                target.accessor(),
                num(*direction),
                num(DIRECTION_TOLERANCE),
                js_str(&format!("Expected {} to face in direction {} +-1", target.label(), num(*direction)))
            ),
            Assertion::Effect { target, effect, value } => format!(
                "t.assert.equal({}.effects[{}], {}, {});",
                target.accessor(),
                js_str(effect),
                num(*value),
                js_str(&format!("Expected effect {effect} of {} to be {}", target.label(), num(*value)))
            ),
            Assertion::Layer { target, layer } => {
                format!(
                    "t.assert.equal({}.layerOrder, {layer}, {});",
                    target.accessor(),
                    js_str(&format!("Expected {} to be at layer {layer}", target.label()))
                )
            }
            Assertion::List { target, list, length } => {
                let local = if target.is_stage() { ", false" } else { "" };
                format!(
                    "t.assert.equal({}.getList({}{local}).value.length, {length}, {});",
                    target.accessor(),
                    js_str(list),
                    js_str(&format!("Expected list {list} of {} to have length {length}", target.label()))
                )
            }
            Assertion::Position { target, x, y } => format!(
                "t.assert.withinRange({a}.x, {x}, {tol}, {mx});\n  t.assert.withinRange({a}.y, {y}, {tol}, {my});",
                a = target.accessor(),
                x = num(*x),
                y = num(*y),
                tol = num(POSITION_TOLERANCE),
                mx = js_str(&format!("Expected {} to have x-position {} +-5", target.label(), num(*x))),
                my = js_str(&format!("Expected {} to have y-position {} +-5", target.label(), num(*y))),
            ),
            Assertion::Say { target, text, think } => {
                if text.is_empty() {
                    format!(
                        "t.assert.not({}.sayText, {});",
                        target.accessor(),
                        js_str(&format!("Expected {} not to say anything", target.label()))
                    )
                } else {
                    let verb = if *think { "think" } else { "say" };
                    format!(
                        "t.assert.equal({}.sayText, {}, {});",
                        target.accessor(),
                        js_str(text),
                        js_str(&format!("Expected {} to {verb} {text}", target.label()))
                    )
                }
            }
            // Whisker's wrapper reports `Math.round(size)`.
            Assertion::Size { target, size } => format!(
                "t.assert.withinRange({}.size, {}, {}, {});",
                target.accessor(),
                num(js_round(*size)),
                num(SIZE_TOLERANCE),
                js_str(&format!("Expected {} to have size {} +-1", target.label(), num(js_round(*size))))
            ),
            Assertion::Touching { target, other, touching } => {
                let (f, not) = if *touching { ("ok", "") } else { ("not", " not") };
                format!(
                    "t.assert.{f}({}.isTouchingSprite({}), {});",
                    target.accessor(),
                    js_str(other),
                    js_str(&format!("Expected {}{not} to touch {other}", target.label()))
                )
            }
            Assertion::TouchingEdge { target, touching } => {
                let (f, not) = if *touching { ("ok", "") } else { ("not", " not") };
                format!(
                    "t.assert.{f}({}.isTouchingEdge(), {});",
                    target.accessor(),
                    js_str(&format!("Expected {}{not} to touch edge", target.label()))
                )
            }
            Assertion::Variable { target, variable, value, boolean } => {
                let local = if target.is_stage() { ", false" } else { "" };
                if let Some(x) = computed_number(value).filter(|_| !*boolean) {
                    let tol = num(value_tolerance(x));
                    return format!(
                        "t.assert.withinRange({}.getVariable({}{local}).value, {}, {tol}, {});",
                        target.accessor(),
                        js_str(variable),
                        num(x),
                        js_str(&format!("Expected {variable} of {} to have value {value} +-{tol}", target.label()))
                    );
                }
                format!(
                    "t.assert.equal({}.getVariable({}{local}).value, {}, {});",
                    target.accessor(),
                    js_str(variable),
                    if *boolean { value.clone() } else { js_str(value) },
                    js_str(&format!("Expected {variable} of {} to have value {value}", target.label()))
                )
            }
            Assertion::Visibility { target, visible } => {
                let (f, not) = if *visible { ("ok", "") } else { ("not", " not") };
                format!(
                    "t.assert.{f}({}.visible, {});",
                    target.accessor(),
                    js_str(&format!("Expected {}{not} to be visible", target.label()))
                )
            }
            Assertion::Volume { target, volume } => format!(
                "t.assert.equal({}.volume, {}, {});",
                target.accessor(),
                num(*volume),
                js_str(&format!("Expected {} to have volume {}", target.label(), num(*volume)))
            ),
        }
    }
}

/// A JavaScript string literal in double quotes.
fn js_str(s: &str) -> String {
    crate::export::js_literal(s, '"')
}

/// Everything observable at one point of a test: the value of every
/// assertable property, by property.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    values: BTreeMap<Key, Assertion>,
}

impl Snapshot {
    /// A snapshot holding these observations (a later one with the same key wins).
    pub fn from_assertions(items: impl IntoIterator<Item = Assertion>) -> Self {
        let mut values = BTreeMap::new();
        for a in items {
            values.insert(a.key(), a);
        }
        Self { values }
    }

    /// Observes every property of the running program.
    pub fn observe(sut: &mut Sut) -> Self {
        Self::observe_metered(sut).0
    }

    /// [`Snapshot::observe`] and its cost in work units (properties observed, live targets
    /// listed; the geometry's touching questions count in the VM's own work). Touching is
    /// answered as [`Snapshot::ask_touching`] asks it with nothing exported: the renderer's
    /// state stays as it was.
    pub fn observe_metered(sut: &mut Sut) -> (Self, u64) {
        let (mut snap, live) = Self::observe_but_touching(sut);
        snap.ask_touching(sut, None);
        let units = snap.units(live);
        (snap, units)
    }

    /// Every property but touching other sprites, and the number of live targets.
    fn observe_but_touching(sut: &mut Sut) -> (Self, usize) {
        let (all, live) = probe::all(sut, false);
        (Self::from_assertions(all), live)
    }

    /// Work units of a snapshot of `live` targets (one per property observed).
    fn units(&self, live: usize) -> u64 {
        cost::OBSERVE.saturating_mul(self.len() as u64).saturating_add(cost::TARGET * live as u64)
    }

    /// Adds the touching observations, each asked as the exported test asks it: a touching
    /// check is not an observation in Whisker's runner but a query on the live renderer, which
    /// leaves the MIPs it creates (under the `whisker` profile: the asking sprite's 100 %
    /// texture, the silhouettes compared) and so can change the program's later answers. The
    /// checks are asked in the order the test lists them; a check whose answer equals `prev`'s
    /// is not exported, so its MIPs are dropped again; an exported one's stay, as in the
    /// runner. Only then is every exported check's answer what the runner will get. Without
    /// `prev` (the state a test starts from) nothing is exported and every check's MIPs go.
    ///
    /// A `touching edge` check changes the renderer too: Whisker's `isTouchingEdge` computes the
    /// sprite's convex hull, which narrows its later `touching` answers (the `whisker`
    /// profile's hull model). Its answer is the observation's; an exported one is asked again
    /// in its place in the test's order, so that the hull is there for the checks after it.
    fn ask_touching(&mut self, sut: &mut Sut, prev: Option<&Snapshot>) {
        // The live targets, listed once: asking changes MIPs, never which targets live.
        let views = probe::Views::of(sut);
        let mut checks = views.touching_checks(sut);
        if sut.vm().renderer_keeps_state() {
            checks.extend(views.edge_checks());
        }
        // Each key built once (a key owns its strings; a comparison sort would build two per
        // comparison). Stable, as `sort_by_key`.
        checks.sort_by_cached_key(Assertion::key);
        for check in checks {
            if matches!(check, Assertion::TouchingEdge { .. }) {
                let key = check.key();
                if prev.is_some_and(|p| p.values.get(&key) != self.values.get(&key)) {
                    views.ask(sut, &check);
                }
                continue;
            }
            let before = sut.vm().mips_checkpoint();
            let Some(seen) = views.ask(sut, &check) else { continue };
            let key = seen.key();
            if prev.is_none_or(|p| p.values.get(&key) == Some(&seen)) {
                sut.vm_mut().restore_mips(before);
            }
            self.values.insert(key, seen);
        }
    }

    /// Adds the answers of the touching and touching-edge checks among `exported`, asked in
    /// their order with their MIPs and hulls kept: what the runner sees when the test's list
    /// for this point is `exported`.
    fn ask_exported_touching(&mut self, sut: &mut Sut, exported: &[Assertion]) {
        let views = probe::Views::of(sut);
        for check in exported.iter().filter(|a| a.changes_renderer()) {
            if let Some(seen) = views.ask(sut, check) {
                self.values.insert(seen.key(), seen);
            }
        }
    }

    /// The observation of `key`, if the property exists.
    pub fn get(&self, key: &Key) -> Option<&Assertion> {
        self.values.get(key)
    }

    /// All observations, ordered by property.
    pub fn iter(&self) -> impl Iterator<Item = &Assertion> {
        self.values.values()
    }

    /// Number of observed properties.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when nothing was observed.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The assertions to record at `self` after `prev`: every observation
    /// whose value differs from (or is missing in) `prev`, ordered by property.
    pub fn changes_since(&self, prev: &Snapshot) -> Vec<Assertion> {
        self.values.iter().filter(|(k, a)| prev.values.get(*k) != Some(*a)).map(|(_, a)| a.clone()).collect()
    }
}

/// Whether `a` holds in the running program, checked as the exported test checks it
/// (reads only what `a` is about; a touching check leaves its MIPs, see
/// [`Snapshot::ask_touching`]).
pub fn holds(a: &Assertion, sut: &mut Sut) -> bool {
    a.accepts(probe::check(sut, a).0.as_ref())
}

/// The first assertion of `list` that fails on the running program, checked in order as the
/// exported test checks them; adds the cost of the checks to `units` (work units: one
/// observation and the live targets listed per check).
pub fn first_failure<'a>(list: &'a [Assertion], sut: &mut Sut, units: &mut u64) -> Option<&'a Assertion> {
    list.iter().find(|a| {
        let (seen, live) = probe::check(sut, a);
        *units = units.saturating_add(cost::OBSERVE + cost::TARGET * live as u64);
        !a.accepts(seen.as_ref())
    })
}

/// Whisker JavaScript lines for the assertions after one event (indented for a test body).
pub fn js_lines(list: &[Assertion]) -> String {
    let mut s = String::new();
    for a in list {
        s.push_str("  ");
        s.push_str(&a.to_js());
        s.push('\n');
    }
    s
}

/// Records the regression assertions of every test of `suite` (replacing any
/// it had) by replaying it on `exec`'s project: after each event, the
/// observations that changed since the previous event (or since the start).
/// Under the `whisker` profile, on programs with blocks Whisker times on the wall clock
/// (music beats, `when timer >`), each test is replayed again at every real step length of
/// `Executor::whisker_wall_variants` and only the checks that hold in every replay are kept:
/// the others would pass or fail in Whisker depending on its machine's speed.
/// Once the executor's work cap for this phase is reached, the remaining tests
/// (and the one it cut short) get no assertions. Returns the VM steps replayed.
pub fn add_to_suite(exec: &mut Executor<'_>, suite: &mut [Test]) -> u64 {
    let variants = exec.whisker_wall_variants();
    let mut steps = 0;
    for test in suite.iter_mut() {
        if exec.work_capped() {
            // The run's work cap ended this phase: the remaining tests get no assertions.
            test.assertions = Vec::new();
            continue;
        }
        // The state at the start, then after each event.
        let states = observe_states(exec, &test.events, &mut steps, Asking::Changed);
        let mut per_event: Vec<Vec<Assertion>> = states.windows(2).map(|w| w[1].changes_since(&w[0])).collect();
        for &wall in variants {
            if exec.work_capped() {
                break;
            }
            exec.set_whisker_wall_ms(Some(wall));
            let other = observe_states(exec, &test.events, &mut steps, Asking::Exported(&per_event));
            exec.set_whisker_wall_ms(None);
            let mut cut = None;
            for (e, (list, state)) in per_event.iter_mut().zip(other.iter().skip(1)).enumerate() {
                let touching = Assertion::changes_renderer;
                let before = list.iter().filter(|a| touching(a)).count();
                let mut dropped = false;
                // A touching (or touching-edge) check dropped here is a query the runner will
                // not ask: the touching answers after it and every later state may then differ
                // from what the replays saw (its MIPs or hull), so none of them is kept.
                list.retain(|a| {
                    let keep = !(dropped && touching(a)) && a.accepts(state.get(&a.key()));
                    dropped |= !keep && touching(a);
                    keep
                });
                if list.iter().filter(|a| touching(a)).count() < before {
                    cut = Some(e);
                    break;
                }
            }
            if let Some(e) = cut {
                for list in per_event.iter_mut().skip(e + 1) {
                    list.clear();
                }
            }
        }
        // A replay the work cap cut short observed states the test never reaches.
        test.assertions = if exec.work_capped() { Vec::new() } else { per_event };
    }
    steps
}

/// Which touching checks a replay asks (and leaves the MIPs of; see
/// [`Snapshot::ask_touching`]).
enum Asking<'a> {
    /// Every check, keeping the MIPs of those whose answer changed since the previous state:
    /// the ones that will be exported.
    Changed,
    /// Only the touching checks of these lists (one per event), as a test exporting them asks.
    Exported(&'a [Vec<Assertion>]),
}

/// Replays `events` and returns the observed state at the start and after each event.
fn observe_states(exec: &mut Executor<'_>, events: &[Event], steps: &mut u64, asking: Asking<'_>) -> Vec<Snapshot> {
    let mut states: Vec<Snapshot> = Vec::with_capacity(events.len() + 1);
    let mut units = 0u64;
    *steps += exec.replay_observed(events, &mut |point, sut| {
        let (mut snap, live) = Snapshot::observe_but_touching(sut);
        match (&asking, point.checked_sub(1)) {
            (Asking::Changed, _) => snap.ask_touching(sut, states.last()),
            (Asking::Exported(lists), Some(e)) => snap.ask_exported_touching(sut, lists.get(e).map_or(&[], |l| l)),
            // The test asks nothing before its first event.
            (Asking::Exported(_), None) => {}
        }
        units = units.saturating_add(snap.units(live));
        states.push(snap);
        true
    });
    exec.charge(Kind::Observe, units);
    states
}

mod probe;

#[cfg(test)]
mod tests;
