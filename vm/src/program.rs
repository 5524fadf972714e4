//! The compiled, per-project representation the interpreter runs.
//!
//! [`compile`] turns a loaded [`Project`] into a [`Program`] once; every VM of
//! that project shares it (it lives in the project behind a `OnceLock`). It
//! reproduces what scratch-vm does while loading (JS object key order,
//! unique sprite and costume names, layer sorting, unsafe characters in
//! variable ids) and resolves everything that can be resolved statically:
//! opcodes become enum variants, fields become immediates, variables become
//! slots, procedure calls find their definition, inputs become expression
//! trees evaluated in project.json input order (scratch-vm's `_ops` order).
//! Blocks keep the project's indices ([`BlockIdx`]), so coverage bits and
//! block ids mean the same in both.

use std::collections::HashMap;

use crate::project::{BlockIdx, Input, Lit, Project};
use crate::value::{js_string_to_number, js_to_lower, js_to_upper};

/// "No block" (a null `next`, an empty branch).
pub(crate) const NONE: u32 = u32::MAX;
/// A link to a block id that does not exist (scratch-vm retires the thread there).
pub(crate) const DANGLING: u32 = u32::MAX - 1;
/// Deepest reporter nesting compiled; deeper inputs read as `undefined` (hostile projects).
const MAX_EXPR_DEPTH: u32 = 400;

/// Index into [`Program::exprs`].
pub(crate) type ExprId = u32;
/// Index into [`Program::lits`].
pub(crate) type LitId = u32;

/// A compile-time constant (no reference counting, so the program is `Sync`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Const {
    Num(f64),
    Bool(bool),
    Lit(LitId),
    Undef,
    Null,
}

/// An interned string literal with its conversions precomputed.
#[derive(Debug)]
pub(crate) struct LitStr {
    pub s: Box<str>,
    /// JS `Number(s)` (NaN when not numeric).
    pub num: f64,
    /// `Cast.isWhiteSpace(s)`.
    pub ws: bool,
}

/// Where a variable or list lives, resolved for the blocks of one sprite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum VarRef {
    /// A slot of the executing target (original or clone share the layout).
    Own(u32),
    /// A slot of the stage.
    Stage(u32),
    /// Resolved at run time (ids that scratch-vm may create on first use).
    Dyn(u32),
}

/// A variable reference that has to be resolved at run time.
#[derive(Debug)]
pub(crate) struct DynVar {
    pub id: Box<str>,
    pub name: Box<str>,
    pub is_list: bool,
}

/// A declared variable or list of a target.
#[derive(Debug)]
pub(crate) struct VarDecl {
    pub id: Box<str>,
    pub name: Box<str>,
    pub is_list: bool,
    pub value: Const,
    pub items: Vec<Const>,
}

/// Hats that start scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HatKind {
    Flag,
    Key,
    SpriteClicked,
    StageClicked,
    Backdrop,
    Broadcast,
    CloneStart,
    GreaterThan,
    TouchingObject,
    /// Makey Makey `when (key) pressed` (edge-activated, like every extension hat).
    MakeyKey,
    /// Makey Makey `when (sequence) pressed in order`.
    MakeyCode,
    /// Video sensing `when video motion > n`.
    VideoMotion,
}

impl HatKind {
    /// scratch-vm `restartExistingThreads`.
    pub fn restarts(self) -> bool {
        matches!(
            self,
            HatKind::Flag | HatKind::SpriteClicked | HatKind::StageClicked | HatKind::Backdrop | HatKind::Broadcast
        )
    }
    /// Edge-activated (evaluated every step).
    pub fn edge(self) -> bool {
        matches!(
            self,
            HatKind::GreaterThan
                | HatKind::TouchingObject
                | HatKind::MakeyKey
                | HatKind::MakeyCode
                | HatKind::VideoMotion
        )
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A script whose top block is a hat.
#[derive(Debug, Clone)]
pub(crate) struct HatScript {
    pub top: u32,
    /// The matched field, upper-cased (key, broadcast or backdrop name).
    pub field: Option<Box<str>>,
}

/// `control_stop` options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum StopOpt {
    All,
    Other,
    This,
    Nothing,
}

/// Where `broadcast` gets its message from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Bcast {
    /// A menu: the stage variable found by id/name at load (upper-cased name), or none.
    Static(Option<Box<str>>),
    /// A reporter: look the name up case-insensitively at run time.
    Dynamic,
    /// scratch-vm finds no message (null id and name).
    Nothing,
}

/// Properties of `sensing_of`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum OfProp {
    X,
    Y,
    Direction,
    CostumeNum,
    CostumeName,
    Size,
    Volume,
    BackdropNum,
    BackdropName,
    Other,
}

/// `operator_mathop` operators.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum MathOp {
    Abs,
    Floor,
    Ceiling,
    Sqrt,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Ln,
    Log,
    Exp,
    Pow10,
    Zero,
}

/// A command (stack) block.
#[derive(Debug, Clone)]
pub(crate) enum Cmd {
    /// A known primitive that does nothing without renderer, audio or hardware.
    Nop,
    /// No primitive function: only the inputs' reporters run.
    NoFn,
    /// Not an opcode scratch-vm knows: like `NoFn`, and counted.
    Unknown(LitId),
    /// A hat without predicate (runs as nothing).
    Hat,
    /// `when timer/loudness > n` (edge-activated predicate).
    HatGreaterThan {
        timer: bool,
    },
    /// `when touching` (edge-activated predicate).
    HatTouching,
    /// Makey Makey key hat predicate.
    HatMakeyKey,
    /// Makey Makey sequence hat predicate.
    HatMakeyCode,
    /// Video motion hat predicate.
    HatVideoMotion,
    /// A reporter in a stack: evaluated, value dropped.
    Expr(ExprId),
    Definition,
    Repeat {
        sub: u32,
    },
    RepeatUntil {
        sub: u32,
    },
    While {
        sub: u32,
    },
    ForEach {
        var: VarRef,
        sub: u32,
    },
    Forever {
        sub: u32,
    },
    Wait,
    WaitUntil,
    If {
        sub: u32,
    },
    IfElse {
        sub: u32,
        sub2: u32,
    },
    AllAtOnce {
        sub: u32,
    },
    Stop(StopOpt),
    CreateClone,
    DeleteClone,
    IncrCounter,
    ClearCounter,
    Broadcast(Bcast),
    BroadcastAndWait(Bcast),
    Say {
        think: bool,
    },
    SayForSecs {
        think: bool,
    },
    Show,
    Hide,
    SwitchCostume,
    SwitchBackdrop,
    SwitchBackdropAndWait,
    NextCostume,
    NextBackdrop,
    ChangeEffect(Option<u8>),
    SetEffect(Option<u8>),
    ClearEffects,
    ChangeSize,
    SetSize,
    GoFrontBack {
        front: bool,
    },
    GoLayers {
        forward: bool,
    },
    MoveSteps,
    GotoXY,
    Goto,
    TurnRight,
    TurnLeft,
    PointInDirection,
    PointTowards,
    Glide,
    GlideTo,
    Bounce,
    SetRotationStyle(Option<u8>),
    ChangeX,
    SetX,
    ChangeY,
    SetY,
    PlaySound {
        wait: bool,
    },
    StopAllSounds,
    SoundEffect {
        change: bool,
        effect: Option<u8>,
    },
    ClearSoundEffects,
    SetVolume,
    ChangeVolume,
    Ask,
    ResetTimer,
    SetDragMode {
        draggable: bool,
    },
    SetVar(VarRef),
    ChangeVar(VarRef),
    AddToList(VarRef),
    DeleteOfList(VarRef),
    DeleteAllOfList(VarRef),
    InsertAtList(VarRef),
    ReplaceItemOfList(VarRef),
    Call(Box<CallInfo>),
    PenClear,
    PenStamp,
    PenDown,
    PenUp,
    PenSetColor,
    PenParam {
        change: bool,
    },
    PenSize {
        change: bool,
    },
    PenShade {
        change: bool,
    },
    PenHue {
        change: bool,
    },
    MusicDrum,
    MusicRest,
    MusicNote,
    MusicInstrument {
        midi: bool,
    },
    MusicTempo {
        change: bool,
    },
    Speak,
    SetVoice,
    SetLanguage,
    VideoToggle,
    VideoTransparency,
}

/// A compiled procedure call.
#[derive(Debug, Clone)]
pub(crate) struct CallInfo {
    pub proccode: u32,
    /// `None`: no prototype found (the call does nothing).
    pub params: Option<Vec<(u32, ParamSrc)>>,
    /// The definition block to push, if any.
    pub definition: Option<u32>,
    pub warp: bool,
}

/// Where a parameter value comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ParamSrc {
    Slot(u8),
    Default(Const),
}

/// Input slots of a block, in evaluation order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Args {
    /// (slot, expression) in project.json input order; slot 255 = evaluated, value unused.
    pub list: Box<[(u8, ExprId)]>,
    /// Number of slots the opcode reads.
    pub n: u8,
    /// Whether a reporter below may return a promise (needs resumable evaluation).
    pub has_promise: bool,
}

/// A compiled block in command position.
#[derive(Debug, Clone)]
pub(crate) struct CBlock {
    pub cmd: Cmd,
    pub next: u32,
    pub args: Args,
}

/// Reporter operations.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rep {
    Const(Const),
    /// No function: children evaluated, value `undefined`.
    NoFn,
    Unknown(LitId),
    Add,
    Sub,
    Mul,
    Div,
    Lt,
    Eq,
    Gt,
    And,
    Or,
    Not,
    Random,
    Join,
    LetterOf,
    Length,
    Contains,
    Mod,
    Round,
    MathOp(MathOp),
    XPos,
    YPos,
    Direction,
    Size,
    CostumeNumName {
        number: bool,
    },
    BackdropNumName {
        number: bool,
    },
    Var(VarRef),
    ListContents(VarRef),
    ItemOfList(VarRef),
    ItemNumOfList(VarRef),
    LengthOfList(VarRef),
    ListContains(VarRef),
    TouchingObject,
    TouchingColor,
    ColorTouchingColor,
    DistanceTo,
    Timer,
    Of {
        prop: OfProp,
        name: LitId,
    },
    MouseX,
    MouseY,
    MouseDown,
    KeyPressed,
    Current(LitId),
    DaysSince2000,
    Loudness,
    Loud,
    Answer,
    Username,
    Volume,
    Arg(u32),
    Counter,
    Tempo,
    Translate,
    ViewerLanguage,
    VideoOn,
    Undefined,
}

/// A compiled reporter.
#[derive(Debug, Clone)]
pub(crate) struct Expr {
    pub rep: Rep,
    pub args: Args,
}

/// A costume's metadata.
#[derive(Debug)]
pub(crate) struct CostumeInfo {
    pub name: LitId,
}

/// A sound's metadata.
#[derive(Debug)]
pub(crate) struct SoundInfo {
    pub name: Box<str>,
    /// Duration in ms (`sampleCount / rate`), for the profiles with sound durations.
    pub duration_ms: f64,
}

/// A sprite or the stage as loaded.
#[derive(Debug)]
pub(crate) struct DefInfo {
    pub name: LitId,
    pub is_stage: bool,
    pub x: f64,
    pub y: f64,
    pub direction: f64,
    pub size: f64,
    pub visible: bool,
    pub costume: i64,
    pub rotation_style: u8,
    pub draggable: bool,
    pub volume: f64,
    pub tempo: f64,
    pub video_state: LitId,
    pub video_transparency: f64,
    pub costumes: Vec<CostumeInfo>,
    pub sounds: Vec<SoundInfo>,
    /// Variables and lists in scratch-vm's `target.variables` order.
    pub vars: Vec<VarDecl>,
    /// Broadcast messages (id, name) of this target.
    pub broadcasts: Vec<(Box<str>, Box<str>)>,
    /// Hat scripts by kind, in script order.
    pub hats: [Vec<HatScript>; 12],
}

/// Rotation styles as stored in `Target::rotation_style`.
pub(crate) const ROT_ALL_AROUND: u8 = 0;
pub(crate) const ROT_LEFT_RIGHT: u8 = 1;
pub(crate) const ROT_NONE: u8 = 2;
pub(crate) const ROT_NAMES: [&str; 3] = ["all around", "left-right", "don't rotate"];

/// Graphic effects in trace order.
pub(crate) const EFFECT_NAMES: [&str; 7] = ["color", "fisheye", "whirl", "pixelate", "mosaic", "brightness", "ghost"];

/// Extensions scratch-vm 5.0.300 can load by id.
pub(crate) const BUILTIN_EXTENSIONS: [&str; 11] = [
    "pen",
    "wedo2",
    "music",
    "microbit",
    "text2speech",
    "translate",
    "videoSensing",
    "ev3",
    "makeymakey",
    "boost",
    "gdxfor",
];
const CORE_PREFIXES: [&str; 12] = [
    "argument",
    "colour",
    "control",
    "data",
    "event",
    "looks",
    "math",
    "motion",
    "operator",
    "procedures",
    "sensing",
    "sound",
];

/// The compiled project.
#[derive(Debug)]
pub(crate) struct Program {
    pub lits: Vec<LitStr>,
    pub defs: Vec<DefInfo>,
    /// One per project block (same index).
    pub blocks: Vec<CBlock>,
    pub exprs: Vec<Expr>,
    pub dyn_vars: Vec<DynVar>,
    /// Definition indices in initial layer order (back to front).
    pub layer_order: Vec<u32>,
    /// Index of the stage definition.
    pub stage: u32,
    /// Whether any script starts with an edge-activated hat.
    pub has_edge_hats: bool,
    /// Extension ids the project uses that scratch-vm cannot load (it rejects the project).
    pub unloadable_extensions: Vec<String>,
    /// Whether the video sensing extension is loaded (its frame loop keeps a timer pending).
    pub video_loaded: bool,
    /// Whether the Makey Makey extension is loaded (key sequences, frame toggle).
    pub makey_loaded: bool,
    /// Whether the pen extension is loaded (its layer is a drawable below the sprites).
    pub pen_loaded: bool,
    /// Edge-activated hats in `runtime._hats` order (evaluated in this order every step).
    pub edge_order: Vec<HatKind>,
    pub lit_empty: LitId,
}

impl Program {
    pub fn lit(&self, id: LitId) -> &LitStr {
        &self.lits[id as usize]
    }
    pub fn lit_str(&self, id: LitId) -> &str {
        &self.lits[id as usize].s
    }
    pub fn def(&self, d: u32) -> &DefInfo {
        &self.defs[d as usize]
    }
}

/// A JS object key that is an array index comes first, in numeric order.
fn array_index_key(k: &str) -> Option<u32> {
    if k.is_empty() || k.len() > 10 || !k.bytes().all(|b| b.is_ascii_digit()) || (k.len() > 1 && k.starts_with('0')) {
        return None;
    }
    let v: u64 = k.parse().ok()?;
    if v < u64::from(u32::MAX) { Some(v as u32) } else { None }
}

/// Orders keys the way JS enumerates an object's own properties.
fn js_key_order<T>(items: Vec<(String, T)>) -> Vec<(String, T)> {
    let mut ints: Vec<(u32, (String, T))> = Vec::new();
    let mut rest = Vec::new();
    for it in items {
        match array_index_key(&it.0) {
            Some(n) => ints.push((n, it)),
            None => rest.push(it),
        }
    }
    if ints.is_empty() {
        return rest;
    }
    ints.sort_by_key(|(n, _)| *n);
    ints.into_iter().map(|(_, it)| it).chain(rest).collect()
}

/// scratch-vm `StringUtil.replaceUnsafeChars` for variable ids.
fn replace_unsafe(id: &str) -> String {
    if !id.contains(['<', '>', '&', '\'', '"']) {
        return id.to_string();
    }
    let mut out = String::with_capacity(id.len() + 8);
    for c in id.chars() {
        match c {
            '<' => out.push_str("lt"),
            '>' => out.push_str("gt"),
            '&' => out.push_str("amp"),
            '\'' => out.push_str("apos"),
            '"' => out.push_str("quot"),
            c => out.push(c),
        }
    }
    out
}

/// scratch-vm `StringUtil.unusedName`.
fn unused_name(name: &str, existing: &[String]) -> String {
    if !existing.iter().any(|e| e == name) {
        return name.to_string();
    }
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let mut i = 2u64;
    loop {
        let cand = format!("{base}{i}");
        if !existing.contains(&cand) {
            return cand;
        }
        i += 1;
    }
}

fn lit_const(l: &Lit, lits: &mut Lits) -> Const {
    match l {
        Lit::Num(n) => Const::Num(*n),
        Lit::Str(s) => Const::Lit(lits.intern(s)),
        Lit::Bool(b) => Const::Bool(*b),
        Lit::Null => Const::Null,
    }
}

/// String interner for literals.
#[derive(Default)]
pub(crate) struct Lits {
    list: Vec<LitStr>,
    map: HashMap<Box<str>, LitId>,
}

impl Lits {
    pub fn intern(&mut self, s: &str) -> LitId {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        let id = self.list.len() as LitId;
        self.list.push(LitStr { s: s.into(), num: js_string_to_number(s), ws: crate::value::is_white_space_str(s) });
        self.map.insert(s.into(), id);
        id
    }
}

/// Opcodes scratch-vm registers as primitives (core blocks and built-in extensions).
fn has_function(op: &str) -> bool {
    cmd_of_opcode(op).is_some() || rep_of_opcode(op).is_some() || HAT_WITH_FN.contains(&op)
}

/// Extension hats with a predicate function (never started in scratch-vm 5.0.300:
/// extension hats are not edge-activated there).
const HAT_WITH_FN: [&str; 4] = [
    "makeymakey_whenMakeyKeyPressed",
    "makeymakey_whenCodePressed",
    "videoSensing_whenMotionGreaterThan",
    "event_whentouchingobject",
];

/// Hats registered in `runtime._hats` (inputs that are hats are skipped by scratch-vm).
fn is_hat_opcode(op: &str) -> bool {
    matches!(
        op,
        "event_whenflagclicked"
            | "event_whenkeypressed"
            | "event_whenthisspriteclicked"
            | "event_whentouchingobject"
            | "event_whenstageclicked"
            | "event_whenbackdropswitchesto"
            | "event_whengreaterthan"
            | "event_whenbroadcastreceived"
            | "control_start_as_clone"
            | "makeymakey_whenMakeyKeyPressed"
            | "makeymakey_whenCodePressed"
            | "videoSensing_whenMotionGreaterThan"
    )
}

/// Command opcodes with their slot names (argument order of the implementation).
fn cmd_of_opcode(op: &str) -> Option<(&'static str, &'static [&'static str])> {
    let r: (&'static str, &'static [&'static str]) = match op {
        "control_repeat" => ("repeat", &["TIMES"]),
        "control_repeat_until" => ("repeat_until", &["CONDITION"]),
        "control_while" => ("while", &["CONDITION"]),
        "control_for_each" => ("for_each", &["VALUE"]),
        "control_forever" => ("forever", &[]),
        "control_wait" => ("wait", &["DURATION"]),
        "control_wait_until" => ("wait_until", &["CONDITION"]),
        "control_if" => ("if", &["CONDITION"]),
        "control_if_else" => ("if_else", &["CONDITION"]),
        "control_stop" => ("stop", &[]),
        "control_create_clone_of" => ("create_clone", &["CLONE_OPTION"]),
        "control_delete_this_clone" => ("delete_clone", &[]),
        "control_incr_counter" => ("incr_counter", &[]),
        "control_clear_counter" => ("clear_counter", &[]),
        "control_all_at_once" => ("all_at_once", &[]),
        "event_broadcast" => ("broadcast", &["BROADCAST_INPUT"]),
        "event_broadcastandwait" => ("broadcast_wait", &["BROADCAST_INPUT"]),
        "event_whengreaterthan" => ("hat_gt", &["VALUE"]),
        "event_whentouchingobject" => ("hat_touching", &["TOUCHINGOBJECTMENU"]),
        "makeymakey_whenMakeyKeyPressed" => ("hat_makey_key", &["KEY"]),
        "makeymakey_whenCodePressed" => ("hat_makey_code", &["SEQUENCE"]),
        "videoSensing_whenMotionGreaterThan" => ("hat_video", &["REFERENCE"]),
        "looks_say" => ("say", &["MESSAGE"]),
        "looks_sayforsecs" => ("sayforsecs", &["MESSAGE", "SECS"]),
        "looks_think" => ("think", &["MESSAGE"]),
        "looks_thinkforsecs" => ("thinkforsecs", &["MESSAGE", "SECS"]),
        "looks_show" => ("show", &[]),
        "looks_hide" => ("hide", &[]),
        "looks_hideallsprites" | "looks_changestretchby" | "looks_setstretchto" => ("nop", &[]),
        "looks_switchcostumeto" => ("switchcostume", &["COSTUME"]),
        "looks_switchbackdropto" => ("switchbackdrop", &["BACKDROP"]),
        "looks_switchbackdroptoandwait" => ("switchbackdrop_wait", &["BACKDROP"]),
        "looks_nextcostume" => ("nextcostume", &[]),
        "looks_nextbackdrop" => ("nextbackdrop", &[]),
        "looks_changeeffectby" => ("changeeffect", &["CHANGE"]),
        "looks_seteffectto" => ("seteffect", &["VALUE"]),
        "looks_cleargraphiceffects" => ("cleareffects", &[]),
        "looks_changesizeby" => ("changesize", &["CHANGE"]),
        "looks_setsizeto" => ("setsize", &["SIZE"]),
        "looks_gotofrontback" => ("frontback", &[]),
        "looks_goforwardbackwardlayers" => ("layers", &["NUM"]),
        "motion_movesteps" => ("move", &["STEPS"]),
        "motion_gotoxy" => ("gotoxy", &["X", "Y"]),
        "motion_goto" => ("goto", &["TO"]),
        "motion_turnright" => ("turnright", &["DEGREES"]),
        "motion_turnleft" => ("turnleft", &["DEGREES"]),
        "motion_pointindirection" => ("pointdir", &["DIRECTION"]),
        "motion_pointtowards" => ("pointtowards", &["TOWARDS"]),
        "motion_glidesecstoxy" => ("glide", &["SECS", "X", "Y"]),
        "motion_glideto" => ("glideto", &["SECS", "TO"]),
        "motion_ifonedgebounce" => ("bounce", &[]),
        "motion_setrotationstyle" => ("rotstyle", &[]),
        "motion_changexby" => ("changex", &["DX"]),
        "motion_setx" => ("setx", &["X"]),
        "motion_changeyby" => ("changey", &["DY"]),
        "motion_sety" => ("sety", &["Y"]),
        "motion_scroll_right" | "motion_scroll_up" | "motion_align_scene" => ("nop", &[]),
        "sound_play" => ("play", &["SOUND_MENU"]),
        "sound_playuntildone" => ("playwait", &["SOUND_MENU"]),
        "sound_stopallsounds" => ("stopsounds", &[]),
        "sound_seteffectto" => ("seteffect_snd", &["VALUE"]),
        "sound_changeeffectby" => ("changeeffect_snd", &["VALUE"]),
        "sound_cleareffects" => ("cleareffects_snd", &[]),
        "sound_setvolumeto" => ("setvolume", &["VOLUME"]),
        "sound_changevolumeby" => ("changevolume", &["VOLUME"]),
        "sensing_askandwait" => ("ask", &["QUESTION"]),
        "sensing_resettimer" => ("resettimer", &[]),
        "sensing_setdragmode" => ("dragmode", &[]),
        "data_setvariableto" => ("setvar", &["VALUE"]),
        "data_changevariableby" => ("changevar", &["VALUE"]),
        "data_showvariable" | "data_hidevariable" | "data_showlist" | "data_hidelist" => ("nop", &[]),
        "data_addtolist" => ("addtolist", &["ITEM"]),
        "data_deleteoflist" => ("deleteoflist", &["INDEX"]),
        "data_deletealloflist" => ("deleteall", &[]),
        "data_insertatlist" => ("insertat", &["ITEM", "INDEX"]),
        "data_replaceitemoflist" => ("replace", &["INDEX", "ITEM"]),
        "procedures_definition" => ("definition", &[]),
        "procedures_call" => ("call", &[]),
        "pen_clear" => ("pen_clear", &[]),
        "pen_stamp" => ("pen_stamp", &[]),
        "pen_penDown" => ("pen_down", &[]),
        "pen_penUp" => ("pen_up", &[]),
        "pen_setPenColorToColor" => ("pen_color", &["COLOR"]),
        "pen_changePenColorParamBy" => ("pen_param_change", &["COLOR_PARAM", "VALUE"]),
        "pen_setPenColorParamTo" => ("pen_param_set", &["COLOR_PARAM", "VALUE"]),
        "pen_changePenSizeBy" => ("pen_size_change", &["SIZE"]),
        "pen_setPenSizeTo" => ("pen_size_set", &["SIZE"]),
        "pen_setPenShadeToNumber" => ("pen_shade_set", &["SHADE"]),
        "pen_changePenShadeBy" => ("pen_shade_change", &["SHADE"]),
        "pen_setPenHueToNumber" => ("pen_hue_set", &["HUE"]),
        "pen_changePenHueBy" => ("pen_hue_change", &["HUE"]),
        "music_playDrumForBeats" => ("drum", &["DRUM", "BEATS"]),
        "music_midiPlayDrumForBeats" => ("drum_midi", &["DRUM", "BEATS"]),
        "music_restForBeats" => ("rest", &["BEATS"]),
        "music_playNoteForBeats" => ("note", &["NOTE", "BEATS"]),
        "music_setInstrument" => ("instrument", &["INSTRUMENT"]),
        "music_midiSetInstrument" => ("instrument_midi", &["INSTRUMENT"]),
        "music_setTempo" => ("tempo_set", &["TEMPO"]),
        "music_changeTempo" => ("tempo_change", &["TEMPO"]),
        "text2speech_speakAndWait" => ("speak", &["WORDS"]),
        "text2speech_setVoice" => ("voice", &["VOICE"]),
        "text2speech_setLanguage" => ("language", &["LANGUAGE"]),
        "videoSensing_videoToggle" => ("video_toggle", &["VIDEO_STATE"]),
        "videoSensing_setVideoTransparency" => ("video_transparency", &["TRANSPARENCY"]),
        _ => return None,
    };
    Some(r)
}

/// Reporter opcodes with their slot names.
fn rep_of_opcode(op: &str) -> Option<&'static [&'static str]> {
    let r: &'static [&'static str] = match op {
        "operator_add" | "operator_subtract" | "operator_multiply" | "operator_divide" | "operator_mod" => {
            &["NUM1", "NUM2"]
        }
        "operator_lt" | "operator_equals" | "operator_gt" | "operator_and" | "operator_or" => &["OPERAND1", "OPERAND2"],
        "operator_not" => &["OPERAND"],
        "operator_random" => &["FROM", "TO"],
        "operator_join" | "operator_contains" => &["STRING1", "STRING2"],
        "operator_letter_of" => &["LETTER", "STRING"],
        "operator_length" => &["STRING"],
        "operator_round" => &["NUM"],
        "operator_mathop" => &["NUM"],
        "motion_xposition" | "motion_yposition" | "motion_direction" | "motion_xscroll" | "motion_yscroll" => &[],
        "looks_size" | "looks_costumenumbername" | "looks_backdropnumbername" => &[],
        "data_variable" | "data_listcontents" | "data_lengthoflist" => &[],
        "data_itemoflist" => &["INDEX"],
        "data_itemnumoflist" | "data_listcontainsitem" => &["ITEM"],
        "sensing_touchingobject" => &["TOUCHINGOBJECTMENU"],
        "sensing_touchingcolor" => &["COLOR"],
        "sensing_coloristouchingcolor" => &["COLOR", "COLOR2"],
        "sensing_distanceto" => &["DISTANCETOMENU"],
        "sensing_timer" | "sensing_mousex" | "sensing_mousey" | "sensing_mousedown" => &[],
        "sensing_of" => &["OBJECT"],
        "sensing_keypressed" => &["KEY_OPTION"],
        "sensing_current" | "sensing_dayssince2000" | "sensing_loudness" | "sensing_loud" => &[],
        "sensing_answer" | "sensing_username" | "sensing_userid" => &[],
        "sound_volume" | "sound_sounds_menu" | "sound_beats_menu" | "sound_effects_menu" => &[],
        "argument_reporter_string_number" | "argument_reporter_boolean" => &[],
        "control_get_counter" => &[],
        "music_getTempo" => &[],
        "translate_getTranslate" => &["WORDS", "LANGUAGE"],
        "translate_getViewerLanguage" => &[],
        "videoSensing_videoOn" => &["ATTRIBUTE", "SUBJECT"],
        _ => return None,
    };
    Some(r)
}

/// Argument names, ids and defaults of a procedure prototype.
type ProtoInfo = (Vec<String>, Vec<String>, Vec<Lit>);

/// A target's variable declarations and broadcast messages.
type Decls = (Vec<VarDecl>, Vec<(Box<str>, Box<str>)>);

struct Compiler<'p> {
    project: &'p Project,
    lits: Lits,
    exprs: Vec<Expr>,
    expr_memo: HashMap<BlockIdx, ExprId>,
    dyn_vars: Vec<DynVar>,
    dyn_memo: HashMap<(String, String, bool), u32>,
    /// Per definition: var id -> (slot, is_list), and name lookup order.
    var_tables: Vec<Vec<(String, String, bool)>>,
    /// Ids that some reference may create at run time (per kind).
    dynamic_ids: std::collections::HashSet<(String, bool)>,
    stage: usize,
    param_names: Vec<Box<str>>,
    param_memo: HashMap<String, u32>,
    proccodes: HashMap<String, u32>,
    /// Per definition: proccode -> (names, ids, defaults) of the first prototype.
    protos: Vec<HashMap<String, ProtoInfo>>,
    /// Per definition: proccode -> (definition block, warp) of the first definition.
    definitions: Vec<HashMap<String, (u32, bool)>>,
    /// Per definition: project block indices in JS key order.
    order: Vec<Vec<BlockIdx>>,
}

/// Compiles a loaded project.
pub(crate) fn compile(project: &Project) -> Program {
    let n_defs = project.targets.len();
    let stage = project.targets.iter().position(|t| t.is_stage).unwrap_or(0);
    let mut c = Compiler {
        project,
        lits: Lits::default(),
        exprs: Vec::new(),
        expr_memo: HashMap::new(),
        dyn_vars: Vec::new(),
        dyn_memo: HashMap::new(),
        var_tables: Vec::new(),
        dynamic_ids: Default::default(),
        stage,
        param_names: Vec::new(),
        param_memo: HashMap::new(),
        proccodes: HashMap::new(),
        protos: vec![HashMap::new(); n_defs],
        definitions: vec![HashMap::new(); n_defs],
        order: vec![Vec::new(); n_defs],
    };
    let lit_empty = c.lits.intern("");

    // Blocks of each target in JS key order.
    for (bi, b) in project.blocks.iter().enumerate() {
        if let Some(o) = c.order.get_mut(b.target as usize) {
            o.push(bi as BlockIdx);
        }
    }
    for o in &mut c.order {
        let items: Vec<(String, BlockIdx)> = o.iter().map(|&i| (project.blocks[i as usize].id.clone(), i)).collect();
        *o = js_key_order(items).into_iter().map(|(_, i)| i).collect();
    }

    // Variables, lists and broadcasts in `target.variables` order.
    let mut decls: Vec<Decls> = Vec::with_capacity(n_defs);
    for t in &project.targets {
        // Insertion: variables, then lists, then broadcasts; a repeated id keeps its first
        // position and takes the later value.
        #[derive(Clone)]
        enum Ent {
            Var(String, Const, bool, Vec<Const>),
            Bc(String),
        }
        let mut entries: Vec<(String, Ent)> = Vec::new();
        let put = |entries: &mut Vec<(String, Ent)>, id: String, e: Ent| {
            if let Some(x) = entries.iter_mut().find(|x| x.0 == id) {
                x.1 = e;
            } else {
                entries.push((id, e));
            }
        };
        for v in &t.variables {
            let val = lit_const(&v.value, &mut c.lits);
            put(&mut entries, v.id.clone(), Ent::Var(v.name.clone(), val, false, Vec::new()));
        }
        for l in &t.lists {
            let items = l.items.iter().map(|x| lit_const(x, &mut c.lits)).collect();
            put(&mut entries, l.id.clone(), Ent::Var(l.name.clone(), Const::Num(0.0), true, items));
        }
        for (id, name) in &t.broadcasts {
            put(&mut entries, id.clone(), Ent::Bc(name.clone()));
        }
        let mut entries = js_key_order(entries);
        // replaceUnsafeCharsInVariableIds: unsafe ids are renamed and move to the end.
        let mut moved = Vec::new();
        entries.retain(|(id, e)| {
            let safe = replace_unsafe(id);
            if safe != *id {
                moved.push((safe, e.clone()));
                false
            } else {
                true
            }
        });
        for (id, e) in moved {
            put(&mut entries, id, e);
        }
        let mut vars = Vec::new();
        let mut bcs = Vec::new();
        for (id, e) in entries {
            match e {
                Ent::Var(name, value, is_list, items) => {
                    vars.push(VarDecl { id: id.into(), name: name.into(), is_list, value, items })
                }
                Ent::Bc(name) => bcs.push((id.into(), name.into())),
            }
        }
        decls.push((vars, bcs));
    }
    c.var_tables = decls
        .iter()
        .map(|(vars, _)| vars.iter().map(|v| (v.id.to_string(), v.name.to_string(), v.is_list)).collect())
        .collect();

    // Procedure prototypes and definitions (first in block order wins).
    for d in 0..n_defs {
        for &bi in &c.order[d] {
            let b = &project.blocks[bi as usize];
            match b.opcode.as_str() {
                "procedures_prototype" => {
                    if let Some(m) = &b.mutation
                        && !c.protos[d].contains_key(&m.proccode)
                    {
                        let defaults = m.argument_defaults.iter().map(|s| Lit::Str(s.clone())).collect::<Vec<_>>();
                        c.protos[d]
                            .insert(m.proccode.clone(), (m.argument_names.clone(), m.argument_ids.clone(), defaults));
                    }
                }
                "procedures_definition" => {
                    if let Some(Input::Block(inner)) = b.input("custom_block")
                        && let Some(ib) = project.blocks.get(*inner as usize)
                        && let Some(m) = &ib.mutation
                        && !c.definitions[d].contains_key(&m.proccode)
                    {
                        c.definitions[d].insert(m.proccode.clone(), (bi, m.warp));
                    }
                }
                _ => {}
            }
        }
    }

    // Variable references that scratch-vm might create at run time.
    for b in &project.blocks {
        for f in &b.fields {
            let is_list = match f.name.as_str() {
                "VARIABLE" => false,
                "LIST" => true,
                _ => continue,
            };
            let id = replace_unsafe(f.id.as_deref().unwrap_or(""));
            if c.resolve_static(b.target as usize, &id, &f.value, is_list).is_none() {
                c.dynamic_ids.insert((id, is_list));
            }
        }
        for (_, inp) in &b.inputs {
            let (id, name, is_list) = match inp {
                Input::Variable { name, id } => (id, name, false),
                Input::List { name, id } => (id, name, true),
                _ => continue,
            };
            let id = replace_unsafe(id);
            if c.resolve_static(b.target as usize, &id, name, is_list).is_none() {
                c.dynamic_ids.insert((id, is_list));
            }
        }
    }

    // Target definitions.
    let mut defs = Vec::with_capacity(n_defs);
    let mut sprite_names: Vec<String> = Vec::new();
    for (d, (t, (vars, bcs))) in project.targets.iter().zip(decls).enumerate() {
        let name = if t.is_stage || t.name.is_empty() || RESERVED.contains(&t.name.as_str()) {
            t.name.clone()
        } else {
            unused_name(&t.name, &sprite_names)
        };
        if !t.is_stage {
            sprite_names.push(name.clone());
        }
        let mut costume_names: Vec<String> = Vec::new();
        let mut costumes = Vec::new();
        for co in &t.costumes {
            let n = unused_name(&co.name, &costume_names);
            costume_names.push(n.clone());
            costumes.push(CostumeInfo { name: c.lits.intern(&n) });
        }
        let sounds = t
            .sounds
            .iter()
            .map(|s| SoundInfo {
                name: s.name.as_str().into(),
                duration_ms: if s.rate > 0.0 { 1000.0 * s.sample_count / s.rate } else { 0.0 },
            })
            .collect();
        let rotation_style = match t.rotation_style.as_str() {
            "left-right" => ROT_LEFT_RIGHT,
            "don't rotate" => ROT_NONE,
            _ => ROT_ALL_AROUND,
        };
        let costume =
            if costumes.is_empty() { -1 } else { (t.current_costume as i64).clamp(0, costumes.len() as i64 - 1) };
        defs.push(DefInfo {
            name: c.lits.intern(&name),
            is_stage: t.is_stage,
            x: t.x,
            y: t.y,
            direction: crate::value::wrap_clamp(t.direction, -179.0, 180.0),
            size: t.size,
            visible: t.visible,
            costume,
            rotation_style,
            draggable: t.draggable,
            volume: t.volume,
            tempo: t.tempo,
            video_state: c.lits.intern(&t.video_state),
            video_transparency: t.video_transparency,
            costumes,
            sounds,
            vars,
            broadcasts: bcs,
            hats: Default::default(),
        });
        let _ = d;
    }

    // Layer order: stable sort by layerOrder.
    let mut layer_order: Vec<u32> = (0..n_defs as u32).collect();
    layer_order.sort_by_key(|&d| project.targets[d as usize].layer_order);

    // Commands, one per project block.
    let mut blocks = Vec::with_capacity(project.blocks.len());
    for bi in 0..project.blocks.len() {
        let cb = c.compile_cmd(bi as BlockIdx, &defs);
        blocks.push(cb);
    }

    // Hat scripts.
    let mut has_edge_hats = false;
    for (d, def) in defs.iter_mut().enumerate() {
        // `_scripts` order: top-level blocks in creation (JS key) order.
        let tops: Vec<BlockIdx> =
            c.order[d].iter().copied().filter(|&bi| project.blocks[bi as usize].top_level).collect();
        let mut hats: [Vec<HatScript>; 12] = Default::default();
        for top in tops {
            let b = &project.blocks[top as usize];
            let (kind, field) = match b.opcode.as_str() {
                "event_whenflagclicked" => (HatKind::Flag, None),
                "event_whenkeypressed" => (HatKind::Key, Some("KEY_OPTION")),
                "event_whenthisspriteclicked" => (HatKind::SpriteClicked, None),
                "event_whenstageclicked" => (HatKind::StageClicked, None),
                "event_whenbackdropswitchesto" => (HatKind::Backdrop, Some("BACKDROP")),
                "event_whenbroadcastreceived" => (HatKind::Broadcast, Some("BROADCAST_OPTION")),
                "control_start_as_clone" => (HatKind::CloneStart, None),
                "event_whengreaterthan" => (HatKind::GreaterThan, None),
                "event_whentouchingobject" => (HatKind::TouchingObject, None),
                "makeymakey_whenMakeyKeyPressed" => (HatKind::MakeyKey, None),
                "makeymakey_whenCodePressed" => (HatKind::MakeyCode, None),
                "videoSensing_whenMotionGreaterThan" => (HatKind::VideoMotion, None),
                _ => continue,
            };
            if kind.edge() {
                has_edge_hats = true;
            }
            let field = match field {
                None => None,
                Some(fname) => match b.field(fname) {
                    Some(f) => Some(js_to_upper(&f.value).into_boxed_str()),
                    // scratch-vm would throw on the missing field; such a hat never starts here.
                    None => Some("\u{0}clowder:no-field".into()),
                },
            };
            hats[kind.index()].push(HatScript { top, field });
        }
        def.hats = hats;
    }

    // Extensions scratch-vm would load, in load order (first use in targets sorted
    // by layer, blocks in key order); their hats follow the core hats in `_hats`.
    let mut unloadable = Vec::new();
    let mut loaded: Vec<String> = Vec::new();
    for &d in &layer_order {
        for &bi in &c.order[d as usize] {
            if let Some(ext) = extension_id(&project.blocks[bi as usize].opcode)
                && !loaded.contains(&ext)
            {
                loaded.push(ext);
            }
        }
    }
    let mut edge_order = vec![HatKind::TouchingObject, HatKind::GreaterThan];
    for ext in &loaded {
        match ext.as_str() {
            "makeymakey" => edge_order.extend([HatKind::MakeyKey, HatKind::MakeyCode]),
            "videoSensing" => edge_order.push(HatKind::VideoMotion),
            e if !BUILTIN_EXTENSIONS.contains(&e) => unloadable.push(ext.clone()),
            _ => {}
        }
    }
    let video_loaded = loaded.iter().any(|e| e == "videoSensing");
    let makey_loaded = loaded.iter().any(|e| e == "makeymakey");
    let pen_loaded = loaded.iter().any(|e| e == "pen");

    Program {
        lits: c.lits.list,
        defs,
        blocks,
        exprs: c.exprs,
        dyn_vars: c.dyn_vars,
        layer_order,
        stage: stage as u32,
        has_edge_hats,
        unloadable_extensions: unloadable,
        video_loaded,
        makey_loaded,
        pen_loaded,
        edge_order,
        lit_empty,
    }
}

const RESERVED: [&str; 5] = ["_mouse_", "_stage_", "_edge_", "_myself_", "_random_"];

/// scratch-vm `getExtensionIdForOpcode`.
fn extension_id(opcode: &str) -> Option<String> {
    let idx = opcode.find('_')?;
    let prefix: String = opcode[..idx]
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '-' })
        .collect();
    if prefix.is_empty() || CORE_PREFIXES.contains(&prefix.as_str()) { None } else { Some(prefix) }
}

impl Compiler<'_> {
    /// Static resolution of a variable reference of a block of target `d`
    /// (`lookupOrCreateVariable` without the create branch).
    fn resolve_static(&self, d: usize, id: &str, name: &str, is_list: bool) -> Option<VarRef> {
        let own = self.var_tables.get(d)?;
        if let Some(i) = own.iter().position(|v| v.0 == id) {
            return Some(VarRef::Own(i as u32));
        }
        let stage_tab = self.var_tables.get(self.stage)?;
        let is_stage = d == self.stage;
        if !is_stage && let Some(i) = stage_tab.iter().position(|v| v.0 == id) {
            return Some(VarRef::Stage(i as u32));
        }
        if let Some(i) = own.iter().position(|v| v.1 == name && v.2 == is_list) {
            return Some(VarRef::Own(i as u32));
        }
        if !is_stage && let Some(i) = stage_tab.iter().position(|v| v.1 == name && v.2 == is_list) {
            return Some(VarRef::Stage(i as u32));
        }
        None
    }

    fn var_ref(&mut self, d: usize, id: &str, name: &str, is_list: bool) -> VarRef {
        let id = replace_unsafe(id);
        let stat = self.resolve_static(d, &id, name, is_list);
        // An id-based hit is final; a name-based hit can be shadowed by a variable
        // created at run time with this id, so those go through the dynamic path.
        let by_id = self.var_tables.get(d).is_some_and(|t| t.iter().any(|v| v.0 == id))
            || (d != self.stage && self.var_tables.get(self.stage).is_some_and(|t| t.iter().any(|v| v.0 == id)));
        match stat {
            Some(r) if by_id || !self.dynamic_ids.contains(&(id.clone(), is_list)) => r,
            _ => {
                let key = (id.clone(), name.to_string(), is_list);
                if let Some(&i) = self.dyn_memo.get(&key) {
                    return VarRef::Dyn(i);
                }
                let i = self.dyn_vars.len() as u32;
                self.dyn_vars.push(DynVar { id: id.into(), name: name.into(), is_list });
                self.dyn_memo.insert(key, i);
                VarRef::Dyn(i)
            }
        }
    }

    fn field_var(&mut self, bi: BlockIdx, fname: &str, is_list: bool) -> VarRef {
        let b = &self.project.blocks[bi as usize];
        let (id, name) = match b.field(fname) {
            Some(f) => (f.id.clone().unwrap_or_default(), f.value.clone()),
            None => (String::new(), String::new()),
        };
        self.var_ref(b.target as usize, &id, &name, is_list)
    }

    fn field_str(&self, bi: BlockIdx, fname: &str) -> Option<String> {
        self.project.blocks[bi as usize].field(fname).map(|f| f.value.clone())
    }

    fn param_id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.param_memo.get(name) {
            return i;
        }
        let i = self.param_names.len() as u32;
        self.param_names.push(name.into());
        self.param_memo.insert(name.to_string(), i);
        i
    }

    fn proccode_id(&mut self, p: &str) -> u32 {
        let n = self.proccodes.len() as u32;
        *self.proccodes.entry(p.to_string()).or_insert(n)
    }

    /// Compiles the inputs of block `bi` against the slot names of its opcode.
    /// Substacks and `custom_block` are not inputs; unknown inputs are still evaluated.
    fn compile_args(&mut self, bi: BlockIdx, slots: &[&str], depth: u32) -> Args {
        let b = &self.project.blocks[bi as usize];
        let mut list = Vec::new();
        let mut has_promise = false;
        let inputs: Vec<(String, Input)> = b.inputs.clone();
        for (name, inp) in inputs {
            if name.starts_with("SUBSTACK") || name == "custom_block" {
                continue;
            }
            let Some(e) = self.compile_input(&inp, b.target as usize, depth) else { continue };
            let slot = slots.iter().position(|s| *s == name).map(|p| p as u8).unwrap_or(255);
            if self.expr_has_promise(e) {
                has_promise = true;
            }
            list.push((slot, e));
        }
        Args { list: list.into_boxed_slice(), n: slots.len() as u8, has_promise }
    }

    fn expr_has_promise(&self, e: ExprId) -> bool {
        let x = &self.exprs[e as usize];
        x.rep == Rep::Translate || x.args.has_promise
    }

    /// An input slot's expression; `None` when scratch-vm sets no argument value
    /// for it (no block, or a hat block in the slot).
    fn compile_input(&mut self, inp: &Input, d: usize, depth: u32) -> Option<ExprId> {
        match inp {
            Input::Empty => None,
            Input::Lit(l) => {
                let k = lit_const(l, &mut self.lits);
                Some(self.push_expr(Rep::Const(k), Args::default()))
            }
            Input::Variable { name, id } => {
                let r = self.var_ref(d, id, name, false);
                Some(self.push_expr(Rep::Var(r), Args::default()))
            }
            Input::List { name, id } => {
                let r = self.var_ref(d, id, name, true);
                Some(self.push_expr(Rep::ListContents(r), Args::default()))
            }
            Input::Broadcast { name, .. } => {
                let k = Const::Lit(self.lits.intern(name));
                Some(self.push_expr(Rep::Const(k), Args::default()))
            }
            Input::Block(child) => {
                let cb = self.project.blocks.get(*child as usize)?;
                if is_hat_opcode(&cb.opcode) {
                    return None;
                }
                Some(self.compile_expr(*child, depth + 1))
            }
        }
    }

    fn push_expr(&mut self, rep: Rep, args: Args) -> ExprId {
        let id = self.exprs.len() as ExprId;
        self.exprs.push(Expr { rep, args });
        id
    }

    /// Compiles block `bi` as a reporter (memoised: shared subtrees compile once).
    fn compile_expr(&mut self, bi: BlockIdx, depth: u32) -> ExprId {
        if let Some(&e) = self.expr_memo.get(&bi) {
            return e;
        }
        if depth > MAX_EXPR_DEPTH {
            return self.push_expr(Rep::Const(Const::Undef), Args::default());
        }
        let b = &self.project.blocks[bi as usize];
        let op = b.opcode.clone();
        let d = b.target as usize;
        let e = match rep_of_opcode(&op) {
            Some(slots) => {
                let rep = self.rep_for(bi, &op, d);
                let args = self.compile_args(bi, slots, depth);
                self.push_expr(rep, args)
            }
            None => {
                let b = &self.project.blocks[bi as usize];
                let n_inputs =
                    b.inputs.iter().filter(|(n, _)| !n.starts_with("SUBSTACK") && n != "custom_block").count();
                if !has_function(&op) && b.fields.len() == 1 && n_inputs == 0 {
                    // A shadow-like block (menus, math_number…): its single field is the value.
                    let v = b.fields[0].value.clone();
                    let k = Const::Lit(self.lits.intern(&v));
                    self.push_expr(Rep::Const(k), Args::default())
                } else if has_function(&op) {
                    // A command in a reporter slot: scratch-vm calls it; commands report undefined.
                    let args = self.compile_args(bi, &[], depth);
                    self.push_expr(Rep::Undefined, args)
                } else {
                    let args = self.compile_args(bi, &[], depth);
                    let rep = if is_known_no_fn(&op) { Rep::NoFn } else { Rep::Unknown(self.lits.intern(&op)) };
                    self.push_expr(rep, args)
                }
            }
        };
        self.expr_memo.insert(bi, e);
        e
    }

    fn rep_for(&mut self, bi: BlockIdx, op: &str, d: usize) -> Rep {
        match op {
            "operator_add" => Rep::Add,
            "operator_subtract" => Rep::Sub,
            "operator_multiply" => Rep::Mul,
            "operator_divide" => Rep::Div,
            "operator_lt" => Rep::Lt,
            "operator_equals" => Rep::Eq,
            "operator_gt" => Rep::Gt,
            "operator_and" => Rep::And,
            "operator_or" => Rep::Or,
            "operator_not" => Rep::Not,
            "operator_random" => Rep::Random,
            "operator_join" => Rep::Join,
            "operator_letter_of" => Rep::LetterOf,
            "operator_length" => Rep::Length,
            "operator_contains" => Rep::Contains,
            "operator_mod" => Rep::Mod,
            "operator_round" => Rep::Round,
            "operator_mathop" => {
                let o = js_to_lower(&self.field_str(bi, "OPERATOR").unwrap_or_default());
                Rep::MathOp(match o.as_str() {
                    "abs" => MathOp::Abs,
                    "floor" => MathOp::Floor,
                    "ceiling" => MathOp::Ceiling,
                    "sqrt" => MathOp::Sqrt,
                    "sin" => MathOp::Sin,
                    "cos" => MathOp::Cos,
                    "tan" => MathOp::Tan,
                    "asin" => MathOp::Asin,
                    "acos" => MathOp::Acos,
                    "atan" => MathOp::Atan,
                    "ln" => MathOp::Ln,
                    "log" => MathOp::Log,
                    "e ^" => MathOp::Exp,
                    "10 ^" => MathOp::Pow10,
                    _ => MathOp::Zero,
                })
            }
            "motion_xposition" => Rep::XPos,
            "motion_yposition" => Rep::YPos,
            "motion_direction" => Rep::Direction,
            "motion_xscroll" | "motion_yscroll" | "sensing_userid" => Rep::Undefined,
            "looks_size" => Rep::Size,
            "looks_costumenumbername" => {
                Rep::CostumeNumName { number: self.field_str(bi, "NUMBER_NAME").as_deref() == Some("number") }
            }
            "looks_backdropnumbername" => {
                Rep::BackdropNumName { number: self.field_str(bi, "NUMBER_NAME").as_deref() == Some("number") }
            }
            "data_variable" => Rep::Var(self.field_var(bi, "VARIABLE", false)),
            "data_listcontents" => Rep::ListContents(self.field_var(bi, "LIST", true)),
            "data_itemoflist" => Rep::ItemOfList(self.field_var(bi, "LIST", true)),
            "data_itemnumoflist" => Rep::ItemNumOfList(self.field_var(bi, "LIST", true)),
            "data_lengthoflist" => Rep::LengthOfList(self.field_var(bi, "LIST", true)),
            "data_listcontainsitem" => Rep::ListContains(self.field_var(bi, "LIST", true)),
            "sensing_touchingobject" => Rep::TouchingObject,
            "sensing_touchingcolor" => Rep::TouchingColor,
            "sensing_coloristouchingcolor" => Rep::ColorTouchingColor,
            "sensing_distanceto" => Rep::DistanceTo,
            "sensing_timer" => Rep::Timer,
            "sensing_of" => {
                let p = self.field_str(bi, "PROPERTY").unwrap_or_default();
                let prop = match p.as_str() {
                    "x position" => OfProp::X,
                    "y position" => OfProp::Y,
                    "direction" => OfProp::Direction,
                    "costume #" => OfProp::CostumeNum,
                    "costume name" => OfProp::CostumeName,
                    "size" => OfProp::Size,
                    "volume" => OfProp::Volume,
                    "background #" | "backdrop #" => OfProp::BackdropNum,
                    "backdrop name" => OfProp::BackdropName,
                    _ => OfProp::Other,
                };
                Rep::Of { prop, name: self.lits.intern(&p) }
            }
            "sensing_mousex" => Rep::MouseX,
            "sensing_mousey" => Rep::MouseY,
            "sensing_mousedown" => Rep::MouseDown,
            "sensing_keypressed" => Rep::KeyPressed,
            "sensing_current" => {
                let m = js_to_lower(&self.field_str(bi, "CURRENTMENU").unwrap_or_default());
                Rep::Current(self.lits.intern(&m))
            }
            "sensing_dayssince2000" => Rep::DaysSince2000,
            "sensing_loudness" => Rep::Loudness,
            "sensing_loud" => Rep::Loud,
            "sensing_answer" => Rep::Answer,
            "sensing_username" => Rep::Username,
            "sound_volume" => Rep::Volume,
            "sound_sounds_menu" | "sound_beats_menu" | "sound_effects_menu" => {
                let b = &self.project.blocks[bi as usize];
                let v = b.fields.first().map(|f| f.value.clone());
                match v {
                    Some(v) => Rep::Const(Const::Lit(self.lits.intern(&v))),
                    None => Rep::Undefined,
                }
            }
            "argument_reporter_string_number" | "argument_reporter_boolean" => {
                let n = self.field_str(bi, "VALUE").unwrap_or_default();
                Rep::Arg(self.param_id(&n))
            }
            "control_get_counter" => Rep::Counter,
            "music_getTempo" => Rep::Tempo,
            "translate_getTranslate" => Rep::Translate,
            "translate_getViewerLanguage" => Rep::ViewerLanguage,
            "videoSensing_videoOn" => Rep::VideoOn,
            _ => {
                let _ = d;
                Rep::Undefined
            }
        }
    }

    fn substack(&self, bi: BlockIdx, name: &str) -> u32 {
        match self.project.blocks[bi as usize].input(name) {
            Some(Input::Block(x)) => *x,
            // Substack inputs holding a primitive or a dangling id: scratch-vm pushes
            // that id and retires the thread when it finds no block.
            Some(Input::Lit(_) | Input::Variable { .. } | Input::List { .. } | Input::Broadcast { .. }) => DANGLING,
            _ => NONE,
        }
    }

    fn compile_cmd(&mut self, bi: BlockIdx, defs: &[DefInfo]) -> CBlock {
        let b = &self.project.blocks[bi as usize];
        let op = b.opcode.clone();
        let d = b.target as usize;
        // A `next` naming a missing block retires the thread in scratch-vm (unlike a null `next`).
        let next = if b.next_missing { DANGLING } else { b.next.unwrap_or(NONE) };
        let Some((kind, slots)) = cmd_of_opcode(&op) else {
            // Not a command: hats, reporters in a stack, unknown opcodes.
            let (cmd, args) = if is_hat_opcode(&op) {
                (Cmd::Hat, self.compile_args(bi, &[], 0))
            } else if rep_of_opcode(&op).is_some() {
                let e = self.compile_expr(bi, 0);
                (Cmd::Expr(e), Args::default())
            } else if is_known_no_fn(&op) || op == "procedures_prototype" {
                (Cmd::NoFn, self.compile_args(bi, &[], 0))
            } else {
                let n_inputs =
                    b.inputs.iter().filter(|(n, _)| !n.starts_with("SUBSTACK") && n != "custom_block").count();
                if b.fields.len() == 1 && n_inputs == 0 {
                    (Cmd::NoFn, Args::default())
                } else {
                    let u = self.lits.intern(&op);
                    (Cmd::Unknown(u), self.compile_args(bi, &[], 0))
                }
            };
            return CBlock { cmd, next, args };
        };
        let args = self.compile_args(bi, slots, 0);
        let cmd = match kind {
            "repeat" => Cmd::Repeat { sub: self.substack(bi, "SUBSTACK") },
            "repeat_until" => Cmd::RepeatUntil { sub: self.substack(bi, "SUBSTACK") },
            "while" => Cmd::While { sub: self.substack(bi, "SUBSTACK") },
            "for_each" => {
                Cmd::ForEach { var: self.field_var(bi, "VARIABLE", false), sub: self.substack(bi, "SUBSTACK") }
            }
            "forever" => Cmd::Forever { sub: self.substack(bi, "SUBSTACK") },
            "wait" => Cmd::Wait,
            "wait_until" => Cmd::WaitUntil,
            "if" => Cmd::If { sub: self.substack(bi, "SUBSTACK") },
            "if_else" => Cmd::IfElse { sub: self.substack(bi, "SUBSTACK"), sub2: self.substack(bi, "SUBSTACK2") },
            "all_at_once" => Cmd::AllAtOnce { sub: self.substack(bi, "SUBSTACK") },
            "stop" => Cmd::Stop(match self.field_str(bi, "STOP_OPTION").as_deref() {
                Some("all") => StopOpt::All,
                Some("other scripts in sprite" | "other scripts in stage") => StopOpt::Other,
                Some("this script") => StopOpt::This,
                _ => StopOpt::Nothing,
            }),
            "create_clone" => Cmd::CreateClone,
            "delete_clone" => Cmd::DeleteClone,
            "incr_counter" => Cmd::IncrCounter,
            "clear_counter" => Cmd::ClearCounter,
            "broadcast" => Cmd::Broadcast(self.bcast(bi, defs)),
            "broadcast_wait" => Cmd::BroadcastAndWait(self.bcast(bi, defs)),
            "hat_gt" => {
                let m = js_to_lower(&self.field_str(bi, "WHENGREATERTHANMENU").unwrap_or_default());
                Cmd::HatGreaterThan { timer: m == "timer" }
            }
            "hat_touching" => Cmd::HatTouching,
            "hat_makey_key" => Cmd::HatMakeyKey,
            "hat_makey_code" => Cmd::HatMakeyCode,
            "hat_video" => Cmd::HatVideoMotion,
            "say" => Cmd::Say { think: false },
            "think" => Cmd::Say { think: true },
            "sayforsecs" => Cmd::SayForSecs { think: false },
            "thinkforsecs" => Cmd::SayForSecs { think: true },
            "show" => Cmd::Show,
            "hide" => Cmd::Hide,
            "nop" => Cmd::Nop,
            "switchcostume" => Cmd::SwitchCostume,
            "switchbackdrop" => Cmd::SwitchBackdrop,
            "switchbackdrop_wait" => Cmd::SwitchBackdropAndWait,
            "nextcostume" => Cmd::NextCostume,
            "nextbackdrop" => Cmd::NextBackdrop,
            "changeeffect" | "seteffect" => {
                let e = js_to_lower(&self.field_str(bi, "EFFECT").unwrap_or_default());
                let idx = EFFECT_NAMES.iter().position(|n| *n == e).map(|i| i as u8);
                if kind == "changeeffect" { Cmd::ChangeEffect(idx) } else { Cmd::SetEffect(idx) }
            }
            "cleareffects" => Cmd::ClearEffects,
            "changesize" => Cmd::ChangeSize,
            "setsize" => Cmd::SetSize,
            "frontback" => Cmd::GoFrontBack { front: self.field_str(bi, "FRONT_BACK").as_deref() == Some("front") },
            "layers" => Cmd::GoLayers { forward: self.field_str(bi, "FORWARD_BACKWARD").as_deref() == Some("forward") },
            "move" => Cmd::MoveSteps,
            "gotoxy" => Cmd::GotoXY,
            "goto" => Cmd::Goto,
            "turnright" => Cmd::TurnRight,
            "turnleft" => Cmd::TurnLeft,
            "pointdir" => Cmd::PointInDirection,
            "pointtowards" => Cmd::PointTowards,
            "glide" => Cmd::Glide,
            "glideto" => Cmd::GlideTo,
            "bounce" => Cmd::Bounce,
            "rotstyle" => Cmd::SetRotationStyle(match self.field_str(bi, "STYLE").as_deref() {
                Some("all around") => Some(ROT_ALL_AROUND),
                Some("left-right") => Some(ROT_LEFT_RIGHT),
                Some("don't rotate") => Some(ROT_NONE),
                _ => None,
            }),
            "changex" => Cmd::ChangeX,
            "setx" => Cmd::SetX,
            "changey" => Cmd::ChangeY,
            "sety" => Cmd::SetY,
            "play" => Cmd::PlaySound { wait: false },
            "playwait" => Cmd::PlaySound { wait: true },
            "stopsounds" => Cmd::StopAllSounds,
            "seteffect_snd" | "changeeffect_snd" => {
                let e = js_to_lower(&self.field_str(bi, "EFFECT").unwrap_or_default());
                let effect = match e.as_str() {
                    "pitch" => Some(0),
                    "pan" => Some(1),
                    _ => None,
                };
                Cmd::SoundEffect { change: kind == "changeeffect_snd", effect }
            }
            "cleareffects_snd" => Cmd::ClearSoundEffects,
            "setvolume" => Cmd::SetVolume,
            "changevolume" => Cmd::ChangeVolume,
            "ask" => Cmd::Ask,
            "resettimer" => Cmd::ResetTimer,
            "dragmode" => {
                Cmd::SetDragMode { draggable: self.field_str(bi, "DRAG_MODE").as_deref() == Some("draggable") }
            }
            "setvar" => Cmd::SetVar(self.field_var(bi, "VARIABLE", false)),
            "changevar" => Cmd::ChangeVar(self.field_var(bi, "VARIABLE", false)),
            "addtolist" => Cmd::AddToList(self.field_var(bi, "LIST", true)),
            "deleteoflist" => Cmd::DeleteOfList(self.field_var(bi, "LIST", true)),
            "deleteall" => Cmd::DeleteAllOfList(self.field_var(bi, "LIST", true)),
            "insertat" => Cmd::InsertAtList(self.field_var(bi, "LIST", true)),
            "replace" => Cmd::ReplaceItemOfList(self.field_var(bi, "LIST", true)),
            "definition" => Cmd::Definition,
            "call" => return self.compile_call(bi, d, next),
            "pen_clear" => Cmd::PenClear,
            "pen_stamp" => Cmd::PenStamp,
            "pen_down" => Cmd::PenDown,
            "pen_up" => Cmd::PenUp,
            "pen_color" => Cmd::PenSetColor,
            "pen_param_change" => Cmd::PenParam { change: true },
            "pen_param_set" => Cmd::PenParam { change: false },
            "pen_size_change" => Cmd::PenSize { change: true },
            "pen_size_set" => Cmd::PenSize { change: false },
            "pen_shade_set" => Cmd::PenShade { change: false },
            "pen_shade_change" => Cmd::PenShade { change: true },
            "pen_hue_set" => Cmd::PenHue { change: false },
            "pen_hue_change" => Cmd::PenHue { change: true },
            "drum" | "drum_midi" => Cmd::MusicDrum,
            "rest" => Cmd::MusicRest,
            "note" => Cmd::MusicNote,
            "instrument" => Cmd::MusicInstrument { midi: false },
            "instrument_midi" => Cmd::MusicInstrument { midi: true },
            "tempo_set" => Cmd::MusicTempo { change: false },
            "tempo_change" => Cmd::MusicTempo { change: true },
            "speak" => Cmd::Speak,
            "voice" => Cmd::SetVoice,
            "language" => Cmd::SetLanguage,
            "video_toggle" => Cmd::VideoToggle,
            "video_transparency" => Cmd::VideoTransparency,
            _ => Cmd::Nop,
        };
        CBlock { cmd, next, args }
    }

    fn bcast(&mut self, bi: BlockIdx, defs: &[DefInfo]) -> Bcast {
        let b = &self.project.blocks[bi as usize];
        let stage = &defs[self.stage];
        let lookup_id = |id: &str| -> Option<String> {
            // lookupVariableById on the stage: any variable type.
            if let Some(v) = stage.vars.iter().find(|v| &*v.id == id) {
                return Some(v.name.to_string());
            }
            stage.broadcasts.iter().find(|(i, _)| &**i == id).map(|(_, n)| n.to_string())
        };
        let lookup_name = |name: &str| -> Option<String> {
            let l = js_to_lower(name);
            stage.broadcasts.iter().find(|(_, n)| js_to_lower(n) == l).map(|(_, n)| n.to_string())
        };
        let found = match b.input("BROADCAST_INPUT") {
            Some(Input::Broadcast { name, id }) => {
                let id = replace_unsafe(id);
                if !id.is_empty() {
                    lookup_id(&id)
                } else if !name.is_empty() {
                    lookup_name(name)
                } else {
                    None
                }
            }
            Some(Input::Block(x)) => {
                let mb = &self.project.blocks[*x as usize];
                if mb.opcode == "event_broadcast_menu" && mb.shadow {
                    match mb.field("BROADCAST_OPTION") {
                        Some(f) => {
                            let id = replace_unsafe(f.id.as_deref().unwrap_or(""));
                            if !id.is_empty() {
                                lookup_id(&id)
                            } else if !f.value.is_empty() {
                                lookup_name(&f.value)
                            } else {
                                None
                            }
                        }
                        None => None,
                    }
                } else {
                    return Bcast::Dynamic;
                }
            }
            Some(Input::Lit(_) | Input::Variable { .. } | Input::List { .. }) => return Bcast::Dynamic,
            Some(Input::Empty) | None => return Bcast::Nothing,
        };
        Bcast::Static(found.map(|n| js_to_upper(&n).into_boxed_str()))
    }

    fn compile_call(&mut self, bi: BlockIdx, d: usize, next: u32) -> CBlock {
        let b = &self.project.blocks[bi as usize];
        let proccode = b.mutation.as_ref().map(|m| m.proccode.clone()).unwrap_or_default();
        let proto = self.protos.get(d).and_then(|p| p.get(&proccode)).cloned();
        let definition = self.definitions.get(d).and_then(|p| p.get(&proccode)).copied();
        // Inputs: every input is evaluated (slot = its position in the list).
        let inputs: Vec<(String, Input)> = b.inputs.clone();
        let mut list = Vec::new();
        let mut set_names: Vec<(String, u8)> = Vec::new();
        let mut has_promise = false;
        for (name, inp) in inputs {
            if name.starts_with("SUBSTACK") || name == "custom_block" {
                continue;
            }
            let Some(e) = self.compile_input(&inp, d, 0) else { continue };
            if self.expr_has_promise(e) {
                has_promise = true;
            }
            let slot = list.len().min(254) as u8;
            // Only reporters with a function (or shadow values) set an argument value.
            let sets = !matches!(self.exprs[e as usize].rep, Rep::NoFn | Rep::Unknown(_));
            if sets {
                set_names.retain(|(n, _)| *n != name);
                set_names.push((name.clone(), slot));
            }
            list.push((slot, e));
        }
        let n = list.len().min(255) as u8;
        let params = proto.map(|(names, ids, defaults)| {
            names
                .iter()
                .enumerate()
                .map(|(i, pname)| {
                    let pid = self.param_id(pname);
                    let src = match ids.get(i).and_then(|id| set_names.iter().find(|(n, _)| n == id)) {
                        Some((_, slot)) => ParamSrc::Slot(*slot),
                        None => ParamSrc::Default(match defaults.get(i) {
                            Some(l) => lit_const(l, &mut self.lits),
                            None => Const::Undef,
                        }),
                    };
                    (pid, src)
                })
                .collect()
        });
        let info = CallInfo {
            proccode: self.proccode_id(&proccode),
            params,
            definition: definition.map(|(db, _)| db),
            warp: definition.is_some_and(|(_, w)| w),
        };
        CBlock { cmd: Cmd::Call(Box::new(info)), next, args: Args { list: list.into_boxed_slice(), n, has_promise } }
    }
}

/// Opcodes scratch-vm knows but that have no primitive function (menus, shadows,
/// hats handled elsewhere, `procedures_prototype`): not "unknown".
fn is_known_no_fn(op: &str) -> bool {
    op.ends_with("_menu")
        || op.contains("_menu_")
        || matches!(
            op,
            "math_number"
                | "math_positive_number"
                | "math_whole_number"
                | "math_integer"
                | "math_angle"
                | "text"
                | "colour_picker"
                | "procedures_prototype"
                | "looks_costume"
                | "looks_backdrops"
                | "sensing_keyoptions"
                | "sensing_touchingobjectmenu"
                | "sensing_distancetomenu"
                | "sensing_of_object_menu"
                | "motion_goto_menu"
                | "motion_glideto_menu"
                | "motion_pointtowards_menu"
                | "control_create_clone_of_menu"
                | "event_broadcast_menu"
                | "event_touchingobjectmenu"
                | "note"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_key_order_puts_array_indices_first() {
        let items = vec![("b".to_string(), 1), ("10".to_string(), 2), ("a".to_string(), 3), ("2".to_string(), 4)];
        let keys: Vec<String> = js_key_order(items).into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["2", "10", "b", "a"]);
        assert_eq!(array_index_key("01"), None);
        assert_eq!(array_index_key("4294967295"), None);
    }

    #[test]
    fn unused_names() {
        let ex = vec!["Sprite1".to_string()];
        assert_eq!(unused_name("Sprite1", &ex), "Sprite2");
        assert_eq!(unused_name("Cat", &ex), "Cat");
        assert_eq!(replace_unsafe("a<b&'\""), "altbampaposquot");
    }
}
