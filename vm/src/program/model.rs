//! The compiled program's model: the IR the interpreter runs (commands, reporters, argument
//! slots, variable references, hat scripts) and the per-target definitions.

use std::collections::HashMap;

/// "No block" (a null `next`, an empty branch).
pub(crate) const NONE: u32 = u32::MAX;
/// A link to a block id that does not exist (scratch-vm retires the thread there).
pub(crate) const DANGLING: u32 = u32::MAX - 1;
/// Deepest reporter nesting compiled; deeper inputs read as `undefined`. Above the loader's
/// nesting limit (`LoadLimits::max_block_depth`), so a loaded project is compiled whole.
pub(crate) const MAX_EXPR_DEPTH: u32 = 1_024;

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
    /// Equal for dynamic references with equal ids (compared as numbers at run time).
    pub id_key: u32,
    /// Equal for dynamic references with equal names.
    pub name_key: u32,
}

/// The declared variables and lists of one target in slot order, with the first slot of each
/// id and of each (name, kind) indexed: references resolve in time independent of how many
/// variables a target declares.
#[derive(Debug, Clone, Default)]
pub(crate) struct VarTable {
    by_id: HashMap<String, u32>,
    /// Index 0: variables, 1: lists.
    by_name: [HashMap<String, u32>; 2],
}

impl VarTable {
    pub(crate) fn new(vars: &[VarDecl]) -> Self {
        let mut t = Self::default();
        for (i, v) in vars.iter().enumerate() {
            t.by_id.entry(v.id.to_string()).or_insert(i as u32);
            t.by_name[v.is_list as usize].entry(v.name.to_string()).or_insert(i as u32);
        }
        t
    }

    /// The first slot declared with this id.
    pub(crate) fn by_id(&self, id: &str) -> Option<u32> {
        self.by_id.get(id).copied()
    }

    /// The first slot declared with this name and kind.
    pub(crate) fn by_name(&self, name: &str, is_list: bool) -> Option<u32> {
        self.by_name[is_list as usize].get(name).copied()
    }
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
    /// `list` fills slots `0..n` in that order, each once: the values can be pushed as they
    /// are evaluated instead of into `undefined` slots made first ([`Args::new`]).
    pub in_order: bool,
}

impl Args {
    /// Input slots from `list` (project.json order) for an opcode reading `n` slots.
    pub(crate) fn new(list: Vec<(u8, ExprId)>, n: u8, has_promise: bool) -> Self {
        let in_order = list.len() == usize::from(n) && list.iter().enumerate().all(|(i, &(s, _))| usize::from(s) == i);
        Self { list: list.into_boxed_slice(), n, has_promise, in_order }
    }
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
    /// An input holding a reporter that other inputs hold too (`program::shared`): its one
    /// argument is the reporter; the value is what slot `slot` holds after the reporter
    /// reported into the slot its `group` is bound to.
    Shared {
        group: u32,
        slot: u32,
    },
}

impl Rep {
    /// The reporters computing scripts are made of, charged [`crate::geometry::cost::EVAL_LIGHT`]
    /// in the work count: variables, parameters, list items and lengths, and the operators
    /// that neither draw random numbers nor build or search strings.
    pub fn is_light(&self) -> bool {
        match self {
            Rep::Var(_) | Rep::Arg(_) | Rep::LengthOfList(_) | Rep::ItemOfList(_) => true,
            Rep::Random | Rep::Join | Rep::LetterOf | Rep::Length | Rep::Contains => false,
            rep => rep.is_operator(),
        }
    }

    /// The `operator_*` reporters ([`crate::blocks::operators`]): at most two inputs.
    pub fn is_operator(&self) -> bool {
        matches!(
            self,
            Rep::Add
                | Rep::Sub
                | Rep::Mul
                | Rep::Div
                | Rep::Lt
                | Rep::Eq
                | Rep::Gt
                | Rep::And
                | Rep::Or
                | Rep::Not
                | Rep::Random
                | Rep::Join
                | Rep::LetterOf
                | Rep::Length
                | Rep::Contains
                | Rep::Mod
                | Rep::Round
                | Rep::MathOp(_)
        )
    }
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
    /// The duration of the buffer Whisker's browser decodes from the file, when its header was
    /// read (`crate::whisker::sound_secs`).
    pub whisker_secs: Option<f64>,
}

/// A sprite or the stage as loaded.
#[derive(Debug)]
pub(crate) struct DefInfo {
    pub name: LitId,
    pub is_stage: bool,
    pub x: f64,
    pub y: f64,
    /// As saved (see [`crate::project::TargetDef::direction`]).
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
    /// Costume index by name, for targets with many costumes (names are unique within a
    /// target, so the first is the only one); `None` where a scan is as quick.
    pub costume_by_name: Option<HashMap<Box<str>, u32>>,
    /// `vars` indexed by id and by name.
    pub var_index: VarTable,
    pub sounds: Vec<SoundInfo>,
    /// Variables and lists in scratch-vm's `target.variables` order.
    pub vars: Vec<VarDecl>,
    /// Broadcast messages (id, name) of this target.
    pub broadcasts: Vec<(Box<str>, Box<str>)>,
    /// Hat scripts by kind, in script order.
    pub hats: [Vec<HatScript>; 12],
    /// The original's `Target::uid_draw`.
    pub uid_draw: u64,
}

/// Rotation styles as stored in `Target::rotation_style`.
pub(crate) const ROT_ALL_AROUND: u8 = 0;
pub(crate) const ROT_LEFT_RIGHT: u8 = 1;
pub(crate) const ROT_NONE: u8 = 2;
pub(crate) const ROT_NAMES: [&str; 3] = ["all around", "left-right", "don't rotate"];

/// Graphic effects in trace order.
pub(crate) const EFFECT_NAMES: [&str; 7] = ["color", "fisheye", "whirl", "pixelate", "mosaic", "brightness", "ghost"];

/// What building a block's cached form binds (`program::shared`).
#[derive(Debug)]
pub(crate) struct SharedInfo {
    /// Shared reporters that report a value.
    pub groups: u32,
    /// Input slots holding one of them.
    pub slots: u32,
    /// Per block, its reporter inputs in input order: `(child, group, slot)`, group and slot
    /// `u32::MAX` when the child is not a shared reporter.
    pub kids: Vec<Box<[(u32, u32, u32)]>>,
    /// Bits of the blocks whose cached form binds something (a shared reporter below them).
    pub relevant: Vec<u64>,
}

impl SharedInfo {
    /// Whether building block `b`'s cached form binds a shared reporter.
    #[inline]
    pub fn relevant(&self, b: u32) -> bool {
        self.relevant.get(b as usize / 64).is_some_and(|w| w & (1 << (b % 64)) != 0)
    }
}

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
    /// Reporters held in more than one input slot, when the project has any.
    pub shared: Option<Box<SharedInfo>>,
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

#[cfg(test)]
mod tests {
    use super::Args;

    #[test]
    fn inputs_are_in_order_only_when_they_fill_every_slot_in_slot_order() {
        assert!(Args::new(vec![(0, 7), (1, 3)], 2, false).in_order);
        assert!(Args::new(Vec::new(), 0, false).in_order);
        assert!(!Args::new(vec![(1, 3), (0, 7)], 2, false).in_order, "out of order");
        assert!(!Args::new(vec![(0, 7)], 2, false).in_order, "a slot missing");
        assert!(!Args::new(vec![(0, 7), (255, 3)], 1, false).in_order, "an input no slot names");
        assert!(!Args::default().in_order, "the default takes the general path");
    }
}
