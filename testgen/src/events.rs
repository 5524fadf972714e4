//! Events a test can send (the paper's Table 1), which blocks call for them
//! (Table 2), and which ones are available in a program state (Algorithm 2).
//!
//! * [`Event`]: a concrete event with its parameters, as stored in suites.
//! * [`Cand`]: an event the extractor offers in a state; the decoder picks one
//!   with an event codon and fills its non-inferable parameters from the
//!   following parameter codons ([`Cand::realize`]).
//! * [`EventInfo`]: what is known statically (per project, computed once):
//!   the hat event and the event-relevant blocks of every script, text
//!   snippets for answers, the number of codons per event.
//!
//! Dynamic extraction (the default) offers, for every live target, the events
//! of the sensing blocks in its *active* scripts and the hat events of its
//! *inactive* scripts; if an answer is awaited only TypeText/TypeNumber events
//! are offered (the UI focus rule), otherwise Wait is always offered, first
//! (as in the paper's worked example; Whisker's code appends it).
//! Events are deduplicated by Whisker's identity (kind plus what the extractor
//! inferred, not the codon-chosen parameters), keeping the first.
//!
//! Deviations from Whisker (stated where they matter): the extractor looks at
//! every input of a block (Whisker skips inputs of `not` and nested operands of
//! conditions); a script is active per target (Whisker: if any target runs it);
//! a drag towards the edge goes to the nearest edge point (Whisker draws a
//! random edge point during extraction, which would make decoding depend on the
//! search's random stream). Drags towards a colour go where Whisker's grid search
//! finds it ([`clowder_vm::Vm::find_color`]), remembered per colour for the run.

use std::collections::BTreeMap;

use clowder_vm::TargetId;
use clowder_vm::project::{BlockIdx, Input, Lit, Project};
use clowder_vm::util::color::rgb_color_list;
use serde::{Deserialize, Serialize};

use crate::config::Params;
use crate::graph::{definition_proccode, is_hat, menu_value};
use crate::sut::{STAGE_HEIGHT, STAGE_WIDTH, Sut, TargetView};

/// One input event of a test, with its parameters. Durations are in steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// Click the green flag (sent automatically at the start of every test).
    GreenFlag,
    /// Press `key` for `steps` steps (then wait as long).
    KeyPress {
        /// Scratch key name (`space`, `a`, `left arrow`, `any`).
        key: String,
        /// How long the key stays down.
        steps: u32,
    },
    /// Click a sprite (`clone` 0) or one of its clones.
    ClickSprite {
        /// Sprite name.
        sprite: String,
        /// Clone number (0: the original).
        clone: u32,
        /// Position when the click was decided (clones are clicked there in Whisker files).
        x: f64,
        /// Position when the click was decided.
        y: f64,
        /// Click duration.
        steps: u32,
    },
    /// Click the stage.
    ClickStage,
    /// Answer a question with `text`.
    TypeText {
        /// The answer.
        text: String,
    },
    /// Answer a question with a number.
    TypeNumber {
        /// The answer.
        number: i64,
    },
    /// Set the mouse button.
    MouseDown {
        /// Pressed?
        down: bool,
    },
    /// Move the mouse to a chosen position.
    MouseMove {
        /// Stage x.
        x: f64,
        /// Stage y.
        y: f64,
    },
    /// Move the mouse onto a sprite that senses the mouse pointer.
    MouseMoveTo {
        /// Stage x.
        x: f64,
        /// Stage y.
        y: f64,
    },
    /// Drag a sprite (`clone` 0) or clone to a position.
    DragSprite {
        /// Sprite name.
        sprite: String,
        /// Whisker's `cloneID` of the clone (0: the original); the oldest live clone with it
        /// is dragged, as Whisker's `dragSprite` does.
        clone: u32,
        /// Stage x.
        x: f64,
        /// Stage y.
        y: f64,
    },
    /// Send a sound of `volume` for `steps` steps.
    Sound {
        /// Loudness (0..100).
        volume: f64,
        /// Duration.
        steps: u32,
    },
    /// Do nothing for `steps` steps.
    Wait {
        /// Steps to wait.
        steps: u32,
    },
}

impl Event {
    /// Short kind name.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::GreenFlag => "GreenFlag",
            Event::KeyPress { .. } => "KeyPress",
            Event::ClickSprite { .. } => "ClickSprite",
            Event::ClickStage => "ClickStage",
            Event::TypeText { .. } => "TypeText",
            Event::TypeNumber { .. } => "TypeNumber",
            Event::MouseDown { .. } => "MouseDown",
            Event::MouseMove { .. } => "MouseMove",
            Event::MouseMoveTo { .. } => "MouseMoveTo",
            Event::DragSprite { .. } => "DragSprite",
            Event::Sound { .. } => "Sound",
            Event::Wait { .. } => "Wait",
        }
    }
}

/// An event offered by the extractor, before codons fix its free parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum Cand {
    /// Press a key (duration from a codon).
    KeyPress(String),
    /// Click a target.
    ClickSprite {
        /// VM id.
        id: TargetId,
        /// Sprite index.
        def: usize,
        /// Clone number.
        clone: u32,
        /// Position.
        x: f64,
        /// Position.
        y: f64,
    },
    /// Click the stage.
    ClickStage,
    /// Answer with a text.
    TypeText(String),
    /// Answer with a number (from a codon).
    TypeNumber,
    /// Set the mouse button.
    MouseDown(bool),
    /// Move the mouse (x, y from codons).
    MouseMove,
    /// Move the mouse onto a sprite.
    MouseMoveTo(f64, f64),
    /// Drag a target towards `(x, y)` (moved by a codon angle).
    DragSprite {
        /// VM id.
        id: TargetId,
        /// Sprite index.
        def: usize,
        /// Whisker's `cloneID` (0: the original).
        clone: u32,
        /// Drag destination.
        x: f64,
        /// Drag destination.
        y: f64,
    },
    /// A sound of this volume.
    Sound(f64),
    /// Wait (duration from a codon).
    Wait,
}

impl Cand {
    /// Codons this event consumes after its event codon.
    pub fn params(&self) -> usize {
        match self {
            Cand::KeyPress(_) | Cand::TypeNumber | Cand::DragSprite { .. } | Cand::Wait => 1,
            Cand::MouseMove => 2,
            _ => 0,
        }
    }

    /// Whisker's event identity (`stringIdentifier`): kind plus what the
    /// extractor inferred, not codon-chosen parameters.
    pub fn same(&self, o: &Cand) -> bool {
        match (self, o) {
            (Cand::KeyPress(a), Cand::KeyPress(b)) => a == b,
            (
                Cand::ClickSprite { def: d1, clone: c1, x: x1, y: y1, .. },
                Cand::ClickSprite { def: d2, clone: c2, x: x2, y: y2, .. },
            ) => d1 == d2 && (*c1 == 0) == (*c2 == 0) && (*c1 == 0 || (x1 == x2 && y1 == y2)),
            (Cand::TypeText(a), Cand::TypeText(b)) => a == b,
            (Cand::MouseMoveTo(x1, y1), Cand::MouseMoveTo(x2, y2)) => x1 == x2 && y1 == y2,
            (Cand::DragSprite { def: d1, x: x1, y: y1, .. }, Cand::DragSprite { def: d2, x: x2, y: y2, .. }) => {
                d1 == d2 && x1.trunc() == x2.trunc() && y1.trunc() == y2.trunc()
            }
            (Cand::Sound(a), Cand::Sound(b)) => a == b,
            (Cand::ClickStage, Cand::ClickStage)
            | (Cand::TypeNumber, Cand::TypeNumber)
            | (Cand::MouseDown(_), Cand::MouseDown(_))
            | (Cand::MouseMove, Cand::MouseMove)
            | (Cand::Wait, Cand::Wait) => true,
            _ => false,
        }
    }

    /// TypeText or TypeNumber.
    pub fn is_typing(&self) -> bool {
        matches!(self, Cand::TypeText(_) | Cand::TypeNumber)
    }

    /// The concrete event with parameters from `codons` (the group's parameter
    /// codons; missing ones wrap around as in Whisker).
    pub fn realize(&self, codons: &[u32], p: &Params, project: &Project, sut: &mut Sut) -> Event {
        let c = |i: usize| -> u32 { if codons.is_empty() { 0 } else { codons[i % codons.len()] } };
        let name = |def: usize| project.targets.get(def).map(|t| t.name.clone()).unwrap_or_default();
        match self {
            Cand::KeyPress(k) => Event::KeyPress { key: k.clone(), steps: (c(0) % p.press_duration).max(1) },
            Cand::ClickSprite { def, clone, x, y, .. } => {
                Event::ClickSprite { sprite: name(*def), clone: *clone, x: *x, y: *y, steps: p.click_duration }
            }
            Cand::ClickStage => Event::ClickStage,
            Cand::TypeText(t) => Event::TypeText { text: t.clone() },
            Cand::TypeNumber => Event::TypeNumber { number: c(0) as i64 - ((p.codon_max - p.codon_min) / 2) as i64 },
            Cand::MouseDown(d) => Event::MouseDown { down: *d },
            Cand::MouseMove => Event::MouseMove {
                x: (c(0) as f64 % STAGE_WIDTH) - STAGE_WIDTH / 2.0,
                y: (c(1) as f64 % STAGE_HEIGHT) - STAGE_HEIGHT / 2.0,
            },
            Cand::MouseMoveTo(x, y) => Event::MouseMoveTo { x: *x, y: *y },
            Cand::DragSprite { id, def, clone, x, y } => {
                let (mut x, mut y) = (x.trunc(), y.trunc());
                let angle = c(0);
                // Codon angles below 360 move the destination by the sprite's size
                // in that direction (the paper's Algorithm 4), so a drag need not
                // land exactly on the sensed object.
                if angle < 360
                    && let Some((w, h)) = sut.size(*id)
                {
                    let r = (angle as f64).to_radians();
                    x = (x + w * r.cos()).clamp(-STAGE_WIDTH / 2.0, STAGE_WIDTH / 2.0);
                    y = (y + h * r.sin()).clamp(-STAGE_HEIGHT / 2.0, STAGE_HEIGHT / 2.0);
                }
                Event::DragSprite { sprite: name(*def), clone: *clone, x, y }
            }
            Cand::Sound(v) => Event::Sound { volume: *v, steps: p.sound_duration },
            Cand::Wait => Event::Wait { steps: decode_wait(c(0), p) },
        }
    }
}

/// Wait duration of a codon: `codon mod wait_upper_bound`, except that
/// multiples of the bound and `codon_max` stand for themselves (Whisker does
/// this so that extension local search can encode waits longer than the bound).
pub fn decode_wait(codon: u32, p: &Params) -> u32 {
    if codon % p.wait_upper_bound != 0 && codon != p.codon_max { codon % p.wait_upper_bound } else { codon }
}

/// An event-relevant block inside a script.
#[derive(Debug, Clone, PartialEq)]
enum Point {
    Key(String),
    MouseMove,
    TouchMouse,
    TouchEdge,
    TouchSprite(String),
    /// `touching color`, with the colour picker's text (`None`: not a literal colour).
    TouchColor(Option<String>),
    /// `color (own) is touching (target)?`, with both colour texts when literal.
    ColorTouchingColor(Option<(String, String)>),
    MouseDown,
    Ask,
    Sound(f64),
    Call(String),
}

/// The event a script's hat waits for.
#[derive(Debug, Clone, PartialEq)]
enum Hat {
    None,
    Key(String),
    Click,
    StageClick,
    Sound(f64),
}

#[derive(Debug, Clone)]
struct Script {
    top: BlockIdx,
    hat: Hat,
    points: Vec<Point>,
    /// A message, backdrop or clone hat: started by the program, not by the user's input.
    program_started: bool,
}

/// What event extraction knows about a project statically (computed once per run).
#[derive(Debug, Clone)]
pub struct EventInfo {
    scripts: Vec<Script>,
    /// Scripts of each sprite (indices into `scripts`), by sprite index.
    by_def: Vec<Vec<usize>>,
    procedures: BTreeMap<(usize, String), Vec<usize>>,
    /// Answers to offer for `ask`: "0", "10", "Hello", a random 3-letter text,
    /// then the texts compared with `answer` or a variable.
    pub snippets: Vec<String>,
    /// Whether some comparison or arithmetic uses `answer` or a variable (TypeNumber offered).
    pub compares_numbers: bool,
    /// Codons per event: the event codon plus the most parameters any event of
    /// the project needs.
    pub reserved: usize,
}

impl EventInfo {
    /// Analyses `project`; `seed` draws the random snippet.
    pub fn new(project: &Project, seed: u64) -> Self {
        let nb = project.blocks.len();
        let mut scripts = Vec::new();
        let mut by_def = vec![Vec::new(); project.targets.len()];
        let mut procedures: BTreeMap<(usize, String), Vec<usize>> = BTreeMap::new();
        for (def, t) in project.targets.iter().enumerate() {
            for &top in &t.scripts {
                if (top as usize) >= nb || !is_hat(&project.block(top).opcode) {
                    continue;
                }
                let hat = hat_event(project, top);
                let points = script_points(project, project.block(top).next);
                let ix = scripts.len();
                if project.block(top).opcode == "procedures_definition"
                    && let Some(code) = definition_proccode(project, top)
                {
                    procedures.entry((def, code)).or_default().push(ix);
                }
                by_def[def].push(ix);
                let program_started = matches!(
                    project.block(top).opcode.as_str(),
                    "event_whenbroadcastreceived" | "event_whenbackdropswitchesto" | "control_start_as_clone"
                );
                scripts.push(Script { top, hat, points, program_started });
            }
        }
        let mut rng = crate::rng::Rng::new(seed, 0x7E47);
        let chars: Vec<char> = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".chars().collect();
        let random_text: String = (0..3).map(|_| chars[rng.below(chars.len())]).collect();
        let mut snippets: Vec<String> = vec!["0".into(), "10".into(), "Hello".into(), random_text];
        let mut compares_numbers = false;
        for (bi, b) in project.blocks.iter().enumerate() {
            let is_answer_or_var = |name: &str| -> bool {
                match b.input(name) {
                    Some(Input::Variable { .. }) => true,
                    Some(Input::Block(r)) => project
                        .blocks
                        .get(*r as usize)
                        .is_some_and(|r| matches!(r.opcode.as_str(), "sensing_answer" | "data_variable")),
                    _ => false,
                }
            };
            let is_answer = |name: &str| -> bool {
                matches!(b.input(name), Some(Input::Block(r))
                    if project.blocks.get(*r as usize).is_some_and(|r| r.opcode == "sensing_answer"))
            };
            match b.opcode.as_str() {
                "operator_gt" | "operator_lt" | "operator_equals" => {
                    if is_answer_or_var("OPERAND1") || is_answer_or_var("OPERAND2") {
                        compares_numbers = true;
                    }
                    if b.opcode == "operator_equals" {
                        for (a, lit) in [("OPERAND1", "OPERAND2"), ("OPERAND2", "OPERAND1")] {
                            if is_answer_or_var(a)
                                && let Some(Input::Lit(l)) = b.input(lit)
                            {
                                let s = lit_string(l);
                                if !s.is_empty() && !snippets.contains(&s) {
                                    snippets.push(s);
                                }
                            }
                        }
                    }
                }
                "operator_add" | "operator_subtract" | "operator_multiply" | "operator_divide" | "operator_mod"
                    if is_answer("NUM1") || is_answer("NUM2") =>
                {
                    compares_numbers = true;
                }
                "operator_round" | "operator_mathop" if is_answer("NUM") => compares_numbers = true,
                _ => {}
            }
            let _ = bi;
        }
        // Codons per event: the most parameters of any event the project can offer.
        let mut most = Cand::Wait.params();
        for s in &scripts {
            if matches!(s.hat, Hat::Key(_)) {
                most = most.max(1);
            }
            for pt in &s.points {
                let n = match pt {
                    Point::MouseMove | Point::TouchMouse => 2,
                    Point::Key(_)
                    | Point::TouchEdge
                    | Point::TouchSprite(_)
                    | Point::TouchColor(_)
                    | Point::ColorTouchingColor(_) => 1,
                    Point::Ask => usize::from(compares_numbers),
                    _ => 0,
                };
                most = most.max(n);
            }
        }
        Self { scripts, by_def, procedures, snippets, compares_numbers, reserved: most + 1 }
    }

    /// Where colour `text` is found around target `id` or (`own`) on its costume
    /// ([`Sut::find_color`], which remembers the last point per test as Whisker's extractor).
    fn find_color(sut: &mut Sut, id: TargetId, text: &str, own: bool) -> Option<(f64, f64)> {
        sut.find_color(id, text, rgb_color_list(text), own).map(|(x, y)| (x as f64, y as f64))
    }

    /// The events available in the current state of `sut` (Algorithm 2), in a
    /// deterministic order; `dynamic = false` offers every handled event. Returns the
    /// targets and scripts looked at (the work meter's measure of its cost).
    pub fn extract(&self, project: &Project, sut: &mut Sut, dynamic: bool, out: &mut Vec<Cand>) -> u64 {
        self.extract_with(project, sut, dynamic, true, out)
    }

    /// [`EventInfo::extract`], without drag events when `drags` is false (Neatest's extractor
    /// has none: their colour searches and touching queries are then not done at all).
    pub fn extract_with(
        &self,
        project: &Project,
        sut: &mut Sut,
        dynamic: bool,
        drags: bool,
        out: &mut Vec<Cand>,
    ) -> u64 {
        out.clear();
        let mut visited = 0u64;
        // Whisker counts a script as active when any thread runs it, whichever
        // instance (clones share their sprite's scripts).
        let active: Option<Vec<BlockIdx>> = if dynamic {
            sut.active_scripts().map(|a| {
                let mut tops: Vec<BlockIdx> = a.iter().map(|(_, top)| *top).collect();
                tops.sort_unstable();
                tops.dedup();
                tops
            })
        } else {
            None
        };
        let targets = sut.targets();
        let mut scratch = Vec::new();
        for tv in &targets {
            for &si in self.by_def.get(tv.def).map(|v| v.as_slice()).unwrap_or(&[]) {
                visited += 1;
                let s = &self.scripts[si];
                match &active {
                    Some(act) => {
                        // A message, backdrop or clone hat that started during the
                        // last step counts as active even if its thread already ended
                        // (Whisker's `hatBlockTriggeredByScratchBlock`); a script the
                        // user's input started does not, so its hat event stays offered.
                        let just_started = s.program_started && sut.started_last_step(s.top);
                        if act.binary_search(&s.top).is_ok() || just_started {
                            self.points_events(project, sut, tv, &targets, &s.points, drags, &mut Vec::new(), out);
                        } else {
                            self.hat_events(s, tv, out);
                        }
                    }
                    None => {
                        // The VM cannot tell which scripts run: offer the hat events of
                        // all scripts and the sensing events of scripts that started.
                        self.hat_events(s, tv, out);
                        if sut.executed_bits().get(s.top as usize / 64).is_some_and(|w| w & (1 << (s.top % 64)) != 0) {
                            scratch.clear();
                            self.points_events(project, sut, tv, &targets, &s.points, drags, &mut scratch, out);
                        }
                    }
                }
            }
        }
        if out.iter().any(Cand::is_typing) {
            out.retain(Cand::is_typing);
        } else {
            // Wait comes first, as in the paper's worked example (Whisker's code appends it).
            out.insert(0, Cand::Wait);
        }
        let mut uniq: Vec<Cand> = Vec::with_capacity(out.len());
        for c in out.drain(..) {
            if !uniq.iter().any(|u| u.same(&c)) {
                uniq.push(c);
            }
        }
        *out = uniq;
        visited + targets.len() as u64
    }

    fn hat_events(&self, s: &Script, tv: &TargetView, out: &mut Vec<Cand>) {
        match &s.hat {
            Hat::Key(k) => out.push(Cand::KeyPress(k.clone())),
            Hat::Click if tv.visible && !tv.is_stage => {
                out.push(Cand::ClickSprite { id: tv.id, def: tv.def, clone: tv.clone, x: tv.x, y: tv.y })
            }
            Hat::StageClick => out.push(Cand::ClickStage),
            Hat::Sound(v) => out.push(Cand::Sound(*v)),
            _ => {}
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn points_events(
        &self,
        project: &Project,
        sut: &mut Sut,
        tv: &TargetView,
        all: &[TargetView],
        points: &[Point],
        drags: bool,
        calls: &mut Vec<usize>,
        out: &mut Vec<Cand>,
    ) {
        for pt in points {
            match pt {
                Point::Key(k) => out.push(Cand::KeyPress(k.clone())),
                Point::MouseMove => out.push(Cand::MouseMove),
                Point::TouchMouse => {
                    let (mx, my, _) = sut.mouse();
                    if mx != tv.x || my != tv.y {
                        out.push(Cand::MouseMoveTo(tv.x, tv.y));
                    }
                    out.push(Cand::MouseMove);
                }
                Point::TouchEdge if drags => {
                    if !tv.is_stage && !sut.touching_edge(tv.id) {
                        let (x, y) = nearest_edge_point(tv.x, tv.y);
                        out.push(Cand::DragSprite { id: tv.id, def: tv.def, clone: tv.clone_id, x, y });
                    }
                }
                Point::TouchSprite(name) if drags => {
                    let Some(def) = project.targets.iter().position(|t| &t.name == name && !t.is_stage) else {
                        continue;
                    };
                    if tv.is_stage || sut.touching_sprite(tv.id, name) {
                        continue;
                    }
                    let original = all.iter().find(|t| t.def == def && t.clone == 0);
                    let sensed = match original {
                        Some(o) if o.visible => Some(o),
                        _ => all.iter().find(|t| t.def == def && t.clone != 0 && t.visible),
                    };
                    if let Some(s) = sensed
                        && tv.visible
                    {
                        out.push(Cand::DragSprite { id: tv.id, def: tv.def, clone: tv.clone_id, x: s.x, y: s.y });
                    }
                }
                Point::TouchColor(Some(text)) if drags => {
                    // Drag to where the colour is drawn, if the sprite does not touch it yet.
                    let rgb = rgb_color_list(text);
                    if !tv.is_stage
                        && !sut.touching_color(tv.id, rgb)
                        && let Some((x, y)) = Self::find_color(sut, tv.id, text, false)
                    {
                        out.push(Cand::DragSprite { id: tv.id, def: tv.def, clone: tv.clone_id, x, y });
                    }
                }
                Point::ColorTouchingColor(Some((own, target))) if drags => {
                    // Whisker asks whether `own` touches, masked by `target` (the block's two
                    // colours the other way round), then drags the sprite so that a pixel of
                    // its own colour lands on the target colour.
                    if !tv.is_stage
                        && !sut.color_touching_color(tv.id, rgb_color_list(own), rgb_color_list(target))
                        && let Some((ox, oy)) = Self::find_color(sut, tv.id, own, true)
                        && let Some((tx, ty)) = Self::find_color(sut, tv.id, target, false)
                    {
                        let (x, y) = (tx + (tv.x - ox), ty + (tv.y - oy));
                        out.push(Cand::DragSprite { id: tv.id, def: tv.def, clone: tv.clone_id, x, y });
                    }
                }
                // No literal colour: Whisker's extractor cannot read one either.
                Point::TouchColor(None) | Point::ColorTouchingColor(None) => {}
                // Drags are not wanted (Neatest's extractor).
                Point::TouchEdge | Point::TouchSprite(_) | Point::TouchColor(_) | Point::ColorTouchingColor(_) => {}
                Point::MouseDown => out.push(Cand::MouseDown(!sut.mouse().2)),
                Point::Ask => {
                    if sut.question_pending() {
                        if self.compares_numbers {
                            out.push(Cand::TypeNumber);
                        }
                        out.extend(self.snippets.iter().map(|s| Cand::TypeText(s.clone())));
                    }
                }
                Point::Sound(v) => out.push(Cand::Sound(*v)),
                Point::Call(code) => {
                    for &si in self.procedures.get(&(tv.def, code.clone())).map(|v| v.as_slice()).unwrap_or(&[]) {
                        if calls.contains(&si) {
                            continue; // recursion
                        }
                        calls.push(si);
                        let pts = &self.scripts[si].points;
                        self.points_events(project, sut, tv, all, pts, drags, calls, out);
                    }
                }
            }
        }
        let _ = self;
    }
}

/// The closest point on the stage border.
fn nearest_edge_point(x: f64, y: f64) -> (f64, f64) {
    let (hw, hh) = (STAGE_WIDTH / 2.0, STAGE_HEIGHT / 2.0);
    let x = x.clamp(-hw, hw);
    let y = y.clamp(-hh, hh);
    let d = [hw - x, hw + x, hh - y, hh + y];
    let m = d.iter().copied().fold(f64::INFINITY, f64::min);
    if m == d[0] {
        (hw, y)
    } else if m == d[1] {
        (-hw, y)
    } else if m == d[2] {
        (x, hh)
    } else {
        (x, -hh)
    }
}

/// The JS string of a literal.
pub(crate) fn lit_string(l: &Lit) -> String {
    l.to_js_string()
}

/// The text of a colour picker input (`fields.COLOUR.value`), when it is a literal.
fn color_text(input: Option<&Input>) -> Option<String> {
    match input {
        Some(Input::Lit(l)) => Some(lit_string(l)),
        _ => None,
    }
}

fn hat_event(project: &Project, top: BlockIdx) -> Hat {
    let b = project.block(top);
    match b.opcode.as_str() {
        "event_whenkeypressed" => b.field("KEY_OPTION").map_or(Hat::None, |f| Hat::Key(f.value.clone())),
        "event_whenthisspriteclicked" => Hat::Click,
        "event_whenstageclicked" => Hat::StageClick,
        "event_whengreaterthan" => {
            let menu = b.field("WHENGREATERTHANMENU").map(|f| f.value.to_ascii_uppercase()).unwrap_or_default();
            match (menu.as_str(), b.input("VALUE")) {
                // "when loudness > v": a sound just above the threshold.
                ("LOUDNESS", Some(Input::Lit(l))) => {
                    let v = clowder_vm::value::js_string_to_number(&lit_string(l));
                    Hat::Sound(if v.is_finite() { v + 1.0 } else { 100.0 })
                }
                ("LOUDNESS", _) => Hat::Sound(100.0),
                _ => Hat::None,
            }
        }
        _ => Hat::None,
    }
}

/// Event-relevant blocks of a script body in pre-order (block, its inputs, then its successor).
fn script_points(project: &Project, first: Option<BlockIdx>) -> Vec<Point> {
    let nb = project.blocks.len();
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut stack: Vec<BlockIdx> = first.into_iter().collect();
    while let Some(b) = stack.pop() {
        if b as usize >= nb || !seen.insert(b) {
            continue;
        }
        let block = project.block(b);
        if let Some(pt) = point_of(project, b) {
            out.push(pt);
        }
        if let Some(n) = block.next {
            stack.push(n);
        }
        for (_, input) in block.inputs.iter().rev() {
            if let Input::Block(x) = input {
                stack.push(*x);
            }
        }
    }
    out
}

fn point_of(project: &Project, b: BlockIdx) -> Option<Point> {
    let block = project.block(b);
    let menu = |name: &str| menu_value(project, b, name);
    Some(match block.opcode.as_str() {
        "sensing_keypressed" => Point::Key(menu("KEY_OPTION")?),
        "sensing_mousex" | "sensing_mousey" | "pen_penDown" => Point::MouseMove,
        "motion_goto" | "sensing_distanceto" | "motion_pointtowards" => {
            let input = match block.opcode.as_str() {
                "motion_goto" => "TO",
                "sensing_distanceto" => "DISTANCETOMENU",
                _ => "TOWARDS",
            };
            if menu(input)? == "_mouse_" { Point::MouseMove } else { return None }
        }
        "sensing_touchingobject" => match menu("TOUCHINGOBJECTMENU")?.as_str() {
            "_mouse_" => Point::TouchMouse,
            "_edge_" => Point::TouchEdge,
            name => Point::TouchSprite(name.to_string()),
        },
        "sensing_touchingcolor" => Point::TouchColor(color_text(block.input("COLOR"))),
        "sensing_coloristouchingcolor" => {
            Point::ColorTouchingColor(color_text(block.input("COLOR")).zip(color_text(block.input("COLOR2"))))
        }
        "sensing_mousedown" => Point::MouseDown,
        "sensing_askandwait" => Point::Ask,
        "sensing_loudness" => Point::Sound(loudness_threshold(project, b)),
        "procedures_call" => Point::Call(block.mutation.as_ref()?.proccode.clone()),
        _ => return None,
    })
}

/// A loudness that makes the comparison around `loudness` true (Whisker's
/// inference); 100 when it cannot be inferred.
fn loudness_threshold(project: &Project, b: BlockIdx) -> f64 {
    let Some(parent) = project.block(b).parent.and_then(|p| project.blocks.get(p as usize)) else { return 100.0 };
    let mine = |name: &str| matches!(parent.input(name), Some(Input::Block(x)) if *x == b);
    let other = |name: &str| match parent.input(name) {
        Some(Input::Lit(l)) => Some(clowder_vm::value::js_string_to_number(&lit_string(l))),
        _ => None,
    };
    let (first, v) = if mine("OPERAND1") {
        (true, other("OPERAND2"))
    } else if mine("OPERAND2") {
        (false, other("OPERAND1"))
    } else {
        return 100.0;
    };
    match (parent.opcode.as_str(), v) {
        (_, Some(v)) if !v.is_finite() => 100.0,
        ("operator_gt", Some(v)) => {
            if first {
                v + 1.0
            } else {
                v - 1.0
            }
        }
        ("operator_lt", Some(v)) => {
            if first {
                v - 1.0
            } else {
                v + 1.0
            }
        }
        ("operator_equals", Some(v)) => v,
        _ => 100.0,
    }
}
