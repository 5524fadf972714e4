//! Loading Scratch 3 projects (`.sb3` zip or bare `project.json`) into an
//! immutable, index-based model the interpreter runs from.
//!
//! # What the model promises
//!
//! The model follows what scratch-vm 5.0.300 builds from the same file
//! (`serialization/sb3.js`, `virtual-machine.js` `installTargets`), so that the
//! interpreter only has to reproduce execution, not loading:
//!
//! * **Order.** Objects are read in JS property order (array-index keys first,
//!   then insertion order; a duplicate key keeps its first position and last
//!   value). So [`Block::inputs`] are in the order scratch-vm evaluates them,
//!   the blocks of one target are in scratch-vm's `_blocks` order (JSON order,
//!   top-level compact variable/list reporters last), and
//!   [`TargetDef::scripts`] is scratch-vm's `_scripts` order, in which hats are
//!   started. [`Project::targets`] is in sprite-pane (JSON) order with the
//!   stage first; [`Project::execution_order`] gives layer order.
//! * **Inputs** resolve scratch-vm's `input.block` (element 1 of
//!   `[1|2|3, block, shadow]`); the obscured shadow (element 2) is never
//!   executed by scratch-vm, so `[3, null, shadow]` is [`Input::Empty`]: an
//!   `undefined` argument. Literal shadows become [`Input::Lit`] with their
//!   JSON type (`[4, 10]` is the number 10, `[4, "10"]` the string "10").
//!   Menus stay [`Input::Block`]: scratch-vm evaluates a block that has no
//!   implementation, exactly one field and no inputs to that field's value
//!   (`BlockCached._isShadowBlock`), and skips hat blocks in inputs; the
//!   interpreter applies those rules because it knows which opcodes exist.
//! * **Block graph.** Every block has at most one execution parent (the block
//!   whose `next` or input slot holds it), there are no cycles, and input
//!   nesting is at most [`LoadLimits::max_block_depth`] deep. So every walk
//!   terminates and recursion over inputs is bounded. [`Block::parent`] is
//!   computed from that tree; the file's `parent` fields are not trusted
//!   (scratch-vm does not use them to execute either).
//! * **Sprite names** are unique, as scratch-vm's `renameSprite` makes them
//!   at install (`Cat`, `Cat` → `Cat`, `Cat2`; references in blocks are not
//!   renamed, like upstream). Variable, list and broadcast ids containing
//!   `<>&'"` are rewritten as scratch-vm does (`<` → `lt`, …), in
//!   declarations and references alike. Within one target, variables, lists
//!   and broadcasts share one id space (a later kind replaces an earlier one
//!   with the same id, as in scratch-vm's `target.variables`).
//!
//! # Fallbacks (documented, never silent for the caller)
//!
//! scratch-vm refuses files that fail its JSON schema. We accept a superset:
//! wherever scratch-vm accepts a file we build what it builds; for values its
//! schema would reject we apply a fallback and record a line in
//! [`Project::warnings`]. Structural nonsense is rejected with a
//! [`LoadError`] naming the file, target and block: a root that is not an
//! object, no stage or a stage that is not the first target, a second stage,
//! a target without a name or without costumes, `blocks` that is not an
//! object, a block that is neither an object nor an array or has no string
//! opcode, shared or cyclic block links, and anything over a [`LoadLimits`].
//! Scratch 2 (`.sb2`), Scratch 1.4 (`.sb`) and sprite files are rejected with
//! their own [`LoadErrorKind`].
//!
//! Value-level fallbacks: a number stored as a string is converted with JS
//! `Number()`; a property of the wrong type takes scratch-vm's default
//! (x 0, y 0, direction 90, size 100, visible, volume 100, tempo 60, video
//! transparency 50, video state `on`, rotation style `all around`); a
//! `null`/missing literal or field value reads as `""`; an unparsable
//! `argumentids`/`argumentnames`/`argumentdefaults` is empty and a `warp`
//! string that is not JSON is `false` (scratch-vm would throw when the
//! procedure is called); a link to a missing block is absent (`next`) or
//! [`Input::Empty`] (scratch-vm throws a TypeError each time such an input is
//! evaluated); a sound with a non-positive or non-finite `rate` gets 48 000
//! and a negative `sampleCount` 0; `currentCostume` is floored and clamped;
//! lone UTF-16 surrogates in strings become U+FFFD; invalid UTF-8 is decoded
//! lossily; a UTF-8 byte-order mark is skipped. Variables referenced by
//! blocks but not declared are not created here: scratch-vm creates them on
//! first lookup (`lookupOrCreateVariable`, on the executing target), which the
//! interpreter reproduces. Numbers beyond the double range (`1e400`) are a JSON
//! error (Scratch never writes them: `JSON.stringify(Infinity)` is `null`).

mod container;
mod json;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use self::json::{J, Obj};
use crate::value::{js_string_to_number, number_to_js_string};

/// Limits applied while loading untrusted project files.
#[derive(Debug, Clone)]
pub struct LoadLimits {
    /// Largest accepted input file (zip or JSON), in bytes.
    pub max_file_bytes: u64,
    /// Largest accepted uncompressed `project.json`, in bytes. Parsing needs
    /// at most ~16 bytes of memory per byte of JSON (an array of one-digit
    /// numbers); the Scratch website stores at most 5 MB.
    pub max_json_bytes: u64,
    /// Largest total uncompressed size of the zip entries read (`project.json`
    /// and costume files; sounds are never read).
    pub max_uncompressed_bytes: u64,
    /// Most zip entries accepted (checked on the declared count before the
    /// directory is indexed).
    pub max_zip_entries: usize,
    /// Most blocks (all targets together).
    pub max_blocks: usize,
    /// Most targets (sprites + stage).
    pub max_targets: usize,
    /// Deepest JSON nesting accepted (real projects need 8; serde_json itself
    /// stops at 128).
    pub max_json_depth: usize,
    /// Deepest nesting of blocks inside input slots (reporters in reporters,
    /// substacks in C blocks), so that recursive evaluation is bounded.
    pub max_block_depth: usize,
    /// Most initial list items (all lists together); every VM instance copies
    /// them.
    pub max_list_items: usize,
}

impl Default for LoadLimits {
    fn default() -> Self {
        Self {
            max_file_bytes: 128 << 20,
            max_json_bytes: 32 << 20,
            max_uncompressed_bytes: 256 << 20,
            max_zip_entries: 10_000,
            max_blocks: 500_000,
            max_targets: 2_000,
            max_json_depth: 100,
            max_block_depth: 500,
            max_list_items: 2_000_000,
        }
    }
}

/// Why a project could not be loaded, by category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LoadErrorKind {
    /// The file could not be read.
    Io,
    /// Over a [`LoadLimits`] bound (size, count, nesting).
    Limit,
    /// The container is not a usable zip (or lacks `project.json`).
    Zip,
    /// `project.json` is not valid JSON.
    Json,
    /// A Scratch 1.4 (`.sb`) file.
    Scratch1,
    /// A Scratch 2 project (`.sb2` or its JSON).
    Scratch2,
    /// A sprite file (`.sprite3`), not a project.
    Sprite,
    /// Valid JSON, but not a Scratch project at all.
    NotAProject,
    /// A Scratch 3 project whose structure is broken (see the module docs).
    Malformed,
    /// Shared or cyclic `next`/input links between blocks.
    BlockGraph,
}

impl LoadErrorKind {
    /// A stable short name (for tables and counts).
    pub fn as_str(self) -> &'static str {
        match self {
            LoadErrorKind::Io => "io",
            LoadErrorKind::Limit => "limit",
            LoadErrorKind::Zip => "zip",
            LoadErrorKind::Json => "json",
            LoadErrorKind::Scratch1 => "scratch1",
            LoadErrorKind::Scratch2 => "scratch2",
            LoadErrorKind::Sprite => "sprite",
            LoadErrorKind::NotAProject => "not_a_project",
            LoadErrorKind::Malformed => "malformed",
            LoadErrorKind::BlockGraph => "block_graph",
        }
    }
}

/// Why a project could not be loaded: the file, the category, where (target
/// and block, when known) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// File name (or the name the caller gave).
    pub file: String,
    /// Category.
    pub kind: LoadErrorKind,
    /// Name of the target concerned, if any.
    pub target: Option<String>,
    /// Id of the block concerned, if any.
    pub block: Option<String>,
    /// What is wrong.
    pub msg: String,
}

impl LoadError {
    fn new(file: &str, kind: LoadErrorKind, msg: impl Into<String>) -> Self {
        Self { file: file.to_string(), kind, target: None, block: None, msg: msg.into() }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.file)?;
        if let Some(t) = &self.target {
            write!(f, "target {t:?}: ")?;
        }
        if let Some(b) = &self.block {
            write!(f, "block {b:?}: ")?;
        }
        f.write_str(&self.msg)
    }
}

impl std::error::Error for LoadError {}

/// Index of a block in [`Project::blocks`].
pub type BlockIdx = u32;

/// A literal value with the JS type the file gave it.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    /// A number.
    Num(f64),
    /// A string (kept verbatim: `"007"` stays a string).
    Str(String),
    /// A boolean (possible in variable values, list items and fields).
    Bool(bool),
    /// JSON `null` (JS keeps `null`; only in hand-edited files).
    Null,
}

impl Lit {
    /// JS `String(value)`.
    pub fn to_js_string(&self) -> String {
        match self {
            Lit::Num(n) => number_to_js_string(*n),
            Lit::Str(s) => s.clone(),
            Lit::Bool(b) => b.to_string(),
            Lit::Null => "null".to_string(),
        }
    }
}

/// What an input slot holds after resolving shadows (scratch-vm's `input.block`).
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// Nothing: the argument is `undefined` in scratch-vm (`[2, null]`,
    /// `[3, null, shadow]`, a missing block, a literal shadow without value).
    Empty,
    /// A literal value (from a literal shadow block or a compact primitive).
    Lit(Lit),
    /// A block to evaluate: a reporter, a menu, a substack's first block, a
    /// procedure prototype.
    Block(BlockIdx),
    /// A variable reporter (compact primitive 12): name and id.
    Variable {
        /// Variable name.
        name: String,
        /// Variable id.
        id: String,
    },
    /// A list reporter (compact primitive 13): name and id.
    List {
        /// List name.
        name: String,
        /// List id.
        id: String,
    },
    /// A broadcast menu value (compact primitive 11): name and id.
    Broadcast {
        /// Broadcast name.
        name: String,
        /// Broadcast id.
        id: String,
    },
}

/// A field value (`[value, id]` in project.json).
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Field name, e.g. `VARIABLE` or `KEY_OPTION`.
    pub name: String,
    /// The value as JS `String(value)`.
    pub value: String,
    /// The value with its JSON type (`[10]` is a number, `["10"]` a string).
    pub raw: Lit,
    /// Referenced id (variables, lists, broadcasts), if any.
    pub id: Option<String>,
}

/// A procedure prototype or call mutation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mutation {
    /// `proccode`, e.g. `"move %s steps %b"`.
    pub proccode: String,
    /// Argument ids (`argumentids`, a JSON array stored as a string).
    pub argument_ids: Vec<String>,
    /// Argument names (prototype only).
    pub argument_names: Vec<String>,
    /// Argument defaults (prototype only), as JS strings.
    pub argument_defaults: Vec<String>,
    /// Run without screen refresh: `true`, or a string that `JSON.parse`s to a
    /// truthy value (`"true"`), as scratch-vm reads it.
    pub warp: bool,
    /// `hasnext` of `control_stop`.
    pub has_next: Option<bool>,
}

/// One block of the project.
#[derive(Debug, Clone)]
pub struct Block {
    /// The block id from project.json (for top-level compact reporters, the
    /// key they were stored under).
    pub id: String,
    /// The opcode, e.g. `motion_movesteps`.
    pub opcode: String,
    /// Next block in the stack.
    pub next: Option<BlockIdx>,
    /// `next` named a block that does not exist (`next` is then `None`):
    /// scratch-vm retires the thread when it gets there, where a null `next`
    /// would return to the enclosing C block.
    pub next_missing: bool,
    /// The block whose `next` or input slot holds this one (computed, unique).
    pub parent: Option<BlockIdx>,
    /// Named inputs, in scratch-vm's evaluation order.
    pub inputs: Vec<(String, Input)>,
    /// Named fields.
    pub fields: Vec<Field>,
    /// Whether this is a shadow block.
    pub shadow: bool,
    /// Whether this is a top-level block (script start).
    pub top_level: bool,
    /// Procedure mutation, if any.
    pub mutation: Option<Mutation>,
    /// Index of the target this block belongs to.
    pub target: u32,
}

impl Block {
    /// The input named `name`.
    pub fn input(&self, name: &str) -> Option<&Input> {
        self.inputs.iter().find(|(n, _)| n == name).map(|(_, i)| i)
    }

    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A variable or list declaration.
#[derive(Debug, Clone)]
pub struct VarDef {
    /// Variable id.
    pub id: String,
    /// Variable name.
    pub name: String,
    /// Initial value (scalar variables).
    pub value: Lit,
    /// Initial items (lists).
    pub items: Vec<Lit>,
    /// Cloud variable (stage only, at most 10, as scratch-vm decides).
    pub cloud: bool,
}

/// Costume metadata (the bitmap itself is decoded by the geometry layer).
#[derive(Debug, Clone)]
pub struct Costume {
    /// Costume name.
    pub name: String,
    /// Asset id (md5 of the file).
    pub asset_id: String,
    /// Asset file name in the sb3 (`md5ext`, or `assetId.dataFormat`).
    pub md5ext: String,
    /// `svg`, `png`, `jpg`… (scratch-vm assumes `png` when missing).
    pub data_format: String,
    /// Rotation centre x, in costume pixels (0 when absent).
    pub rotation_center_x: f64,
    /// Rotation centre y, in costume pixels (0 when absent).
    pub rotation_center_y: f64,
    /// Whether the file gave a rotation centre (else the renderer uses the
    /// image centre).
    pub has_rotation_center: bool,
    /// Pixels per stage unit (2 for hi-dpi bitmaps; 1 when absent).
    pub bitmap_resolution: f64,
}

/// Sound metadata (no audio is decoded).
#[derive(Debug, Clone)]
pub struct Sound {
    /// Sound name.
    pub name: String,
    /// Asset id.
    pub asset_id: String,
    /// Asset file name (`md5ext`, or `assetId.dataFormat`).
    pub md5ext: String,
    /// `wav`, `mp3`…
    pub data_format: String,
    /// `""` or `adpcm`.
    pub format: String,
    /// Sample rate (positive, finite; 48 000 when absent or invalid).
    pub rate: f64,
    /// Number of samples (≥ 0; 0 when absent).
    pub sample_count: f64,
}

/// A sprite or the stage as declared in the project.
#[derive(Debug, Clone)]
pub struct TargetDef {
    /// Sprite name (unique among sprites, see the module docs).
    pub name: String,
    /// Whether this is the stage.
    pub is_stage: bool,
    /// Scalar variables, in scratch-vm's `target.variables` order.
    pub variables: Vec<VarDef>,
    /// Lists.
    pub lists: Vec<VarDef>,
    /// Broadcast messages declared here (id, name); only the stage's matter.
    pub broadcasts: Vec<(String, String)>,
    /// Top-level blocks (script starts), in scratch-vm's `_scripts` order.
    pub scripts: Vec<BlockIdx>,
    /// Costumes (at least one).
    pub costumes: Vec<Costume>,
    /// Sounds.
    pub sounds: Vec<Sound>,
    /// Current costume index (valid).
    pub current_costume: usize,
    /// Position x.
    pub x: f64,
    /// Position y.
    pub y: f64,
    /// Direction in degrees, wrapped into (-180, 180] as scratch-vm does at load.
    pub direction: f64,
    /// Size in percent.
    pub size: f64,
    /// Visibility.
    pub visible: bool,
    /// `all around`, `left-right` or `don't rotate` (kept verbatim).
    pub rotation_style: String,
    /// Draggable in the player.
    pub draggable: bool,
    /// Volume in percent.
    pub volume: f64,
    /// Layer after loading: 0 = back. scratch-vm's stable sort of the targets by
    /// their `layerOrder` (the stage is normally 0).
    pub layer_order: i64,
    /// Music tempo (stage).
    pub tempo: f64,
    /// Video transparency (stage).
    pub video_transparency: f64,
    /// Video state (stage): `on`, `off`, `on-flipped`.
    pub video_state: String,
    /// Text-to-speech language (stage), if set.
    pub text_to_speech_language: Option<String>,
    /// (proccode, `procedures_definition` block): the first definition in
    /// block order per proccode, sorted by proccode.
    procedure_definitions: Vec<(String, BlockIdx)>,
    /// (proccode, `procedures_prototype` block), likewise.
    procedure_prototypes: Vec<(String, BlockIdx)>,
}

impl TargetDef {
    /// The `procedures_definition` block scratch-vm's `getProcedureDefinition`
    /// finds for `proccode`: the first in block order whose prototype has it.
    pub fn procedure_definition(&self, proccode: &str) -> Option<BlockIdx> {
        lookup(&self.procedure_definitions, proccode)
    }

    /// The `procedures_prototype` block scratch-vm's
    /// `getProcedureParamNamesIdsAndDefaults` reads argument names, ids and
    /// defaults from: the first prototype in block order with that proccode
    /// (not necessarily the one attached to the definition).
    pub fn procedure_prototype(&self, proccode: &str) -> Option<BlockIdx> {
        lookup(&self.procedure_prototypes, proccode)
    }
}

fn lookup(sorted: &[(String, BlockIdx)], key: &str) -> Option<BlockIdx> {
    sorted.binary_search_by(|(k, _)| k.as_str().cmp(key)).ok().map(|i| sorted[i].1)
}

/// A monitor (variable/list watcher or reporter readout) as saved.
#[derive(Debug, Clone)]
pub struct Monitor {
    /// Monitor id (the variable id for variables and lists).
    pub id: String,
    /// `default`, `large`, `slider` or `list`.
    pub mode: String,
    /// Reporter opcode, e.g. `data_variable`.
    pub opcode: String,
    /// Block fields, e.g. `VARIABLE` → name.
    pub params: Vec<(String, String)>,
    /// Sprite of a sprite-local monitor.
    pub sprite_name: Option<String>,
    /// Shown on the stage (visible monitors run as monitor threads in scratch-vm).
    pub visible: bool,
    /// Slider minimum.
    pub slider_min: f64,
    /// Slider maximum.
    pub slider_max: f64,
    /// Slider steps are whole numbers.
    pub is_discrete: bool,
}

/// The `meta` object of project.json.
#[derive(Debug, Clone, Default)]
pub struct ProjectMeta {
    /// Scratch file format version, e.g. `3.0.0`.
    pub semver: Option<String>,
    /// scratch-vm version that saved the file.
    pub vm: Option<String>,
    /// User agent that saved the file.
    pub agent: Option<String>,
}

/// A loaded, immutable project. Shared by every VM instance that runs it.
#[derive(Debug, Clone)]
pub struct Project {
    /// Targets in sprite-pane (JSON) order, the stage first.
    pub targets: Vec<TargetDef>,
    /// All blocks of all targets; each target's blocks are contiguous and in
    /// scratch-vm's `_blocks` order.
    pub blocks: Vec<Block>,
    /// Extensions declared in the project.
    pub extensions: Vec<String>,
    /// Costume files found in the sb3, by `md5ext` (empty for a bare
    /// project.json; sounds are never read).
    pub assets: BTreeMap<String, Vec<u8>>,
    /// blake3 hash of the input bytes, hex.
    pub content_hash: String,
    /// Monitors.
    pub monitors: Vec<Monitor>,
    /// The file's `meta`.
    pub meta: ProjectMeta,
    /// Fallbacks applied while loading (see the module docs), at most
    /// [`MAX_WARNINGS`] lines plus a final count of the rest.
    pub warnings: Vec<String>,
    /// The interpreter's compiled form, built on first use and shared by every VM.
    pub(crate) compiled: std::sync::OnceLock<std::sync::Arc<crate::program::Program>>,
    /// Per-project data of the geometry layer (decoded costumes), built on first use.
    pub geometry_data: crate::geometry::GeometryCache,
}

/// Most warning lines kept per project.
pub const MAX_WARNINGS: usize = 100;

/// Loads a project from bytes: a zip (`.sb3`) or a bare `project.json`.
///
/// `name` is only used in error messages.
pub fn load(bytes: &[u8], name: &str, limits: &LoadLimits) -> Result<Project, LoadError> {
    let err = |kind, msg: String| LoadError::new(name, kind, msg);
    if bytes.len() as u64 > limits.max_file_bytes {
        return Err(err(
            LoadErrorKind::Limit,
            format!("file is {} bytes, over the limit of {}", bytes.len(), limits.max_file_bytes),
        ));
    }
    if bytes.starts_with(b"ScratchV0") {
        return Err(err(
            LoadErrorKind::Scratch1,
            "this is a Scratch 1.4 project (.sb); only Scratch 3 projects are supported".into(),
        ));
    }
    let content_hash = blake3::hash(bytes).to_hex().to_string();
    let mut zip = None;
    let json_bytes: Vec<u8>;
    let json_slice: &[u8] = if bytes.starts_with(b"PK") {
        let mut sb3 = container::Sb3::open(bytes, name, limits)?;
        json_bytes = sb3.project_json(limits)?;
        zip = Some(sb3);
        &json_bytes
    } else {
        bytes
    };
    if json_slice.len() as u64 > limits.max_json_bytes {
        return Err(err(
            LoadErrorKind::Limit,
            format!("project.json is {} bytes, over the limit of {}", json_slice.len(), limits.max_json_bytes),
        ));
    }
    let mut ld = Loader { file: name, limits, warnings: Vec::new(), dropped_warnings: 0 };
    let json_slice = json_slice.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(json_slice);
    let text = match std::str::from_utf8(json_slice) {
        Ok(t) => std::borrow::Cow::Borrowed(t),
        Err(e) => {
            ld.warn(format!("project.json is not valid UTF-8 ({e}); decoded with replacement characters"));
            String::from_utf8_lossy(json_slice)
        }
    };
    json::check_depth(text.as_bytes(), limits.max_json_depth)
        .map_err(|m| err(LoadErrorKind::Limit, format!("project.json: {m}")))?;
    let from_zip = zip.is_some();
    let root = json::parse(&text).map_err(|m| {
        let what = if from_zip { "project.json in the zip" } else { "the file (neither a zip nor JSON)" };
        if text.trim().is_empty() {
            err(LoadErrorKind::Json, format!("{what} is empty: not a Scratch project"))
        } else {
            err(LoadErrorKind::Json, format!("{what} is not valid JSON: {m}"))
        }
    })?;
    drop(text);
    let mut project = ld.project(&root)?;
    if let Some(sb3) = &mut zip {
        let mut wanted: Vec<String> =
            project.targets.iter().flat_map(|t| t.costumes.iter().map(|c| c.md5ext.clone())).collect();
        wanted.sort();
        wanted.dedup();
        let mut missing = Vec::new();
        project.assets = sb3.assets(&wanted, limits, &mut missing)?;
        for m in missing {
            ld.warn(format!("costume file {m} is not in the sb3"));
        }
    }
    project.content_hash = content_hash;
    project.warnings = ld.finish_warnings();
    Ok(project)
}

impl Project {
    /// Loads a project file from disk.
    pub fn load_path(path: &std::path::Path, limits: &LoadLimits) -> Result<Project, LoadError> {
        let name = path.display().to_string();
        let io = |e: std::io::Error| LoadError::new(&name, LoadErrorKind::Io, e.to_string());
        let meta = std::fs::metadata(path).map_err(io)?;
        if meta.len() > limits.max_file_bytes {
            return Err(LoadError::new(
                &name,
                LoadErrorKind::Limit,
                format!("file is {} bytes, over the limit of {}", meta.len(), limits.max_file_bytes),
            ));
        }
        let bytes = std::fs::read(path).map_err(io)?;
        load(&bytes, &name, limits)
    }

    /// Index of the stage target (always 0 after loading).
    pub fn stage_index(&self) -> usize {
        self.targets.iter().position(|t| t.is_stage).unwrap_or(0)
    }

    /// The block at `idx`.
    pub fn block(&self, idx: BlockIdx) -> &Block {
        &self.blocks[idx as usize]
    }

    /// Target indices back to front: scratch-vm's `executableTargets` after
    /// loading (hats start from the end of this list).
    pub fn execution_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.targets.len()).collect();
        order.sort_by_key(|&i| self.targets[i].layer_order);
        order
    }
}

/// Opcodes whose blocks are pure literals: never implemented by scratch-vm,
/// so with one field and no inputs they evaluate to the field's value.
const LITERAL_OPCODES: [&str; 7] =
    ["math_number", "math_positive_number", "math_whole_number", "math_integer", "math_angle", "text", "colour_picker"];

/// scratch-vm's names that `renameSprite` leaves alone.
const RESERVED_NAMES: [&str; 5] = ["_mouse_", "_stage_", "_edge_", "_myself_", "_random_"];

/// An error before the file name is attached.
struct Bad {
    kind: LoadErrorKind,
    target: Option<String>,
    block: Option<String>,
    msg: String,
}

impl Bad {
    fn malformed(target: &str, msg: impl Into<String>) -> Self {
        Bad { kind: LoadErrorKind::Malformed, target: Some(target.to_string()), block: None, msg: msg.into() }
    }
    fn at_block(kind: LoadErrorKind, target: &str, block: &str, msg: impl Into<String>) -> Self {
        Bad { kind, target: Some(target.to_string()), block: Some(block.to_string()), msg: msg.into() }
    }
}

struct Loader<'a> {
    file: &'a str,
    limits: &'a LoadLimits,
    warnings: Vec<String>,
    dropped_warnings: usize,
}

/// JS `Number(value)` of a JSON value (`None` = `undefined`).
fn js_number(v: Option<&J>) -> f64 {
    match v {
        None => f64::NAN,
        Some(J::Null) => 0.0,
        Some(J::Bool(b)) => f64::from(u8::from(*b)),
        Some(J::Num(n)) => *n,
        Some(J::Str(s)) => js_string_to_number(s),
        Some(J::Arr(_) | J::Obj(_)) => f64::NAN,
    }
}

/// JS `String(value)` of a scalar; `None` for arrays, objects and absence.
fn js_string(v: Option<&J>) -> Option<String> {
    match v? {
        J::Null => Some("null".into()),
        J::Bool(b) => Some(b.to_string()),
        J::Num(n) => Some(number_to_js_string(*n)),
        J::Str(s) => Some(s.clone()),
        J::Arr(_) | J::Obj(_) => None,
    }
}

/// A literal from a scalar; `None` for arrays, objects and absence (`undefined`).
fn lit(v: Option<&J>) -> Option<Lit> {
    match v? {
        J::Num(n) => Some(Lit::Num(*n)),
        J::Str(s) => Some(Lit::Str(s.clone())),
        J::Bool(b) => Some(Lit::Bool(*b)),
        J::Null => Some(Lit::Null),
        J::Arr(_) | J::Obj(_) => None,
    }
}

/// scratch-vm's `StringUtil.replaceUnsafeChars` for variable ids.
fn safe_id(id: &str) -> String {
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

/// scratch-vm's `StringUtil.unusedName`.
fn unused_name(name: &str, existing: &HashSet<String>) -> String {
    if !existing.contains(name) {
        return name.to_string();
    }
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let mut i = 2u64;
    loop {
        let candidate = format!("{base}{i}");
        if !existing.contains(&candidate) {
            return candidate;
        }
        i += 1;
    }
}

/// `MathUtil.wrapClamp(n, -179, 180)`.
fn wrap_direction(n: f64) -> f64 {
    let range = 360.0;
    n - ((n + 179.0) / range).floor() * range
}

/// The order in which V8's `Array.prototype.sort` (TimSort) leaves `keys`
/// with the comparator `(a, b) => a - b`, as scratch-vm sorts targets by
/// `layerOrder`. Exact for fewer than 64 targets (a single binary-insertion
/// run, where NaN comparisons from missing `layerOrder`s matter); above that
/// a stable sort is used, which is the same whenever every key is a number.
fn v8_sort_order(keys: &[f64]) -> Vec<usize> {
    let n = keys.len();
    let mut work: Vec<usize> = (0..n).collect();
    if n < 2 {
        return work;
    }
    let cmp = |a: usize, b: usize| keys[a] - keys[b];
    if n >= 64 {
        work.sort_by(|&a, &b| keys[a].partial_cmp(&keys[b]).unwrap_or(std::cmp::Ordering::Equal));
        return work;
    }
    // CountAndMakeRun.
    let mut run = 2;
    let descending = cmp(work[1], work[0]) < 0.0;
    let mut prev = work[1];
    for &cur in &work[2..] {
        let order = cmp(cur, prev);
        if descending {
            if order >= 0.0 {
                break;
            }
        } else if order < 0.0 {
            break;
        }
        prev = cur;
        run += 1;
    }
    if descending {
        work[..run].reverse();
    }
    // BinaryInsertionSort of the rest (min run = n below 64).
    for start in run..n {
        let pivot = work[start];
        let (mut left, mut right) = (0, start);
        while left < right {
            let mid = left + ((right - left) >> 1);
            if cmp(pivot, work[mid]) < 0.0 {
                right = mid;
            } else {
                left = mid + 1;
            }
        }
        work.copy_within(left..start, left + 1);
        work[left] = pivot;
    }
    work
}

/// One declaration in a target's single id space.
enum Decl {
    Var(VarDef),
    List(VarDef),
    Broadcast(String),
}

impl Loader<'_> {
    fn warn(&mut self, msg: String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(msg);
        } else {
            self.dropped_warnings += 1;
        }
    }

    fn finish_warnings(&mut self) -> Vec<String> {
        let mut w = std::mem::take(&mut self.warnings);
        if self.dropped_warnings > 0 {
            w.push(format!("… and {} more warnings", self.dropped_warnings));
        }
        w
    }

    fn fail(&self, b: Bad) -> LoadError {
        LoadError { file: self.file.to_string(), kind: b.kind, target: b.target, block: b.block, msg: b.msg }
    }

    fn project(&mut self, root: &J) -> Result<Project, LoadError> {
        self.project_inner(root).map_err(|b| self.fail(b))
    }

    fn project_inner(&mut self, root: &J) -> Result<Project, Bad> {
        let top = |kind, msg: &str| Bad { kind, target: None, block: None, msg: msg.to_string() };
        let Some(obj) = root.as_obj() else {
            return Err(top(
                LoadErrorKind::NotAProject,
                &format!("project.json is {}, not an object: not a Scratch project", root.type_name()),
            ));
        };
        let targets_json = match obj.get("targets") {
            Some(J::Arr(a)) => a,
            Some(other) => {
                return Err(top(
                    LoadErrorKind::Malformed,
                    &format!("`targets` is {}, not an array", other.type_name()),
                ));
            }
            None => {
                if obj.has("objName") || obj.has("children") || obj.has("info") {
                    return Err(top(
                        LoadErrorKind::Scratch2,
                        "this is a Scratch 2 project (sb2); only Scratch 3 projects are supported \
                         (open and save it in Scratch 3 to convert it)",
                    ));
                }
                if obj.has("isStage") && obj.has("blocks") {
                    return Err(top(LoadErrorKind::Sprite, "this is a sprite (sprite.json), not a project"));
                }
                return Err(top(LoadErrorKind::NotAProject, "no `targets` array: not a Scratch 3 project.json"));
            }
        };
        if targets_json.len() > self.limits.max_targets {
            return Err(top(
                LoadErrorKind::Limit,
                &format!("{} targets, over the limit of {}", targets_json.len(), self.limits.max_targets),
            ));
        }
        if targets_json.is_empty() {
            return Err(top(LoadErrorKind::Malformed, "no targets: a project needs a stage"));
        }
        // Structure first: objects, names, exactly one stage and it comes first.
        let mut tobjs: Vec<(&Obj, String)> = Vec::with_capacity(targets_json.len());
        for (ti, t) in targets_json.iter().enumerate() {
            let Some(tobj) = t.as_obj() else {
                return Err(top(
                    LoadErrorKind::Malformed,
                    &format!("target #{ti} is {}, not an object", t.type_name()),
                ));
            };
            let name = match tobj.get("name") {
                Some(J::Str(s)) => s.clone(),
                Some(J::Num(n)) => number_to_js_string(*n),
                _ => return Err(top(LoadErrorKind::Malformed, &format!("target #{ti} has no name"))),
            };
            let is_stage = tobj.get("isStage").is_some_and(J::truthy);
            if ti == 0 && !is_stage {
                return Err(Bad::malformed(&name, "the first target must be the stage (`isStage`: true)"));
            }
            if ti > 0 && is_stage {
                return Err(Bad::malformed(
                    &name,
                    "a second stage (`isStage`: true); only the first target may be the stage",
                ));
            }
            tobjs.push((tobj, name));
        }
        // Layer order: scratch-vm sorts by `layerOrder` with `a - b`.
        let keys: Vec<f64> = tobjs.iter().map(|(o, _)| js_number(o.get("layerOrder"))).collect();
        if keys.iter().any(|k| k.is_nan()) {
            self.warn("some targets have no numeric layerOrder; ordered as scratch-vm's sort leaves them".into());
        }
        let mut layer = vec![0i64; tobjs.len()];
        for (pos, &ti) in v8_sort_order(&keys).iter().enumerate() {
            layer[ti] = pos as i64;
        }

        let mut blocks: Vec<Block> = Vec::new();
        let mut targets: Vec<TargetDef> = Vec::with_capacity(tobjs.len());
        let mut list_items = 0usize;
        let mut cloud_count = 0usize;
        for (ti, (tobj, tname)) in tobjs.iter().enumerate() {
            let is_stage = ti == 0;
            let base = blocks.len();
            match tobj.get("blocks") {
                Some(J::Obj(bj)) => {
                    if blocks.len() + bj.len() > self.limits.max_blocks {
                        return Err(top(
                            LoadErrorKind::Limit,
                            &format!("more than {} blocks (at target {tname:?})", self.limits.max_blocks),
                        ));
                    }
                    self.blocks(bj, ti as u32, tname, &mut blocks)?;
                }
                None | Some(J::Null) => {}
                Some(other) => {
                    return Err(Bad::malformed(tname, format!("`blocks` is {}, not an object", other.type_name())));
                }
            }
            check_tree(&mut blocks, base, tname, self.limits.max_block_depth)?;
            let scripts: Vec<BlockIdx> =
                (base..blocks.len()).filter(|&i| blocks[i].top_level).map(|i| i as BlockIdx).collect();
            let (procedure_definitions, procedure_prototypes) = procedure_index(&blocks, base);

            let (variables, lists, broadcasts) = self.declarations(tobj, tname, is_stage, &mut cloud_count);
            list_items += lists.iter().map(|l| l.items.len()).sum::<usize>();
            if list_items > self.limits.max_list_items {
                return Err(Bad {
                    kind: LoadErrorKind::Limit,
                    target: Some(tname.clone()),
                    block: None,
                    msg: format!("more than {} initial list items", self.limits.max_list_items),
                });
            }
            let costumes = self.costumes(tobj, tname);
            if costumes.is_empty() {
                return Err(Bad::malformed(tname, "no costumes (Scratch requires at least one)"));
            }
            let sounds = self.sounds(tobj, tname);
            let current_costume = {
                let c = js_number(tobj.get("currentCostume"));
                let c = if c.is_nan() { 0.0 } else { c.floor() };
                c.clamp(0.0, (costumes.len() - 1) as f64) as usize
            };
            let direction = self.num_prop(tobj, "direction", 90.0, tname);
            let visible = match tobj.get("visible") {
                None => true,
                Some(J::Bool(b)) => *b,
                Some(other) => {
                    self.warn(format!("target {tname:?}: `visible` is {}; JS truthiness used", other.type_name()));
                    other.truthy()
                }
            };
            let rotation_style = self.str_prop(tobj, "rotationStyle", "all around", tname);
            let video_state = self.str_prop(tobj, "videoState", "on", tname);
            let text_to_speech_language = match tobj.get("textToSpeechLanguage") {
                Some(J::Str(s)) => Some(s.clone()),
                _ => None,
            };
            targets.push(TargetDef {
                name: tname.clone(),
                is_stage,
                variables,
                lists,
                broadcasts,
                scripts,
                costumes,
                sounds,
                current_costume,
                x: self.num_prop(tobj, "x", 0.0, tname),
                y: self.num_prop(tobj, "y", 0.0, tname),
                direction: wrap_direction(direction),
                size: self.num_prop(tobj, "size", 100.0, tname),
                visible,
                rotation_style,
                draggable: matches!(tobj.get("draggable"), Some(J::Bool(true))),
                volume: self.num_prop(tobj, "volume", 100.0, tname),
                layer_order: layer[ti],
                tempo: self.num_prop(tobj, "tempo", 60.0, tname),
                video_transparency: self.num_prop(tobj, "videoTransparency", 50.0, tname),
                video_state,
                text_to_speech_language,
                procedure_definitions,
                procedure_prototypes,
            });
        }
        // Unique sprite names, in install (pane) order, as `renameSprite`.
        let mut names: HashSet<String> = HashSet::new();
        for t in targets.iter_mut().skip(1) {
            if !t.name.is_empty() && !RESERVED_NAMES.contains(&t.name.as_str()) {
                let unique = unused_name(&t.name, &names);
                if unique != t.name {
                    self.warn(format!(
                        "sprite name {:?} is used twice; renamed to {unique:?} as scratch-vm does",
                        t.name
                    ));
                    t.name = unique;
                }
            }
            names.insert(t.name.clone());
        }
        let extensions = match obj.get("extensions") {
            Some(J::Arr(a)) => a.iter().filter_map(|e| e.as_str().map(str::to_string)).collect(),
            _ => Vec::new(),
        };
        let monitors = match obj.get("monitors") {
            Some(J::Arr(a)) => a.iter().filter_map(J::as_obj).map(monitor).collect(),
            _ => Vec::new(),
        };
        let meta = match obj.get("meta") {
            Some(J::Obj(m)) => ProjectMeta {
                semver: m.get("semver").and_then(J::as_str).map(str::to_string),
                vm: m.get("vm").and_then(J::as_str).map(str::to_string),
                agent: m.get("agent").and_then(J::as_str).map(str::to_string),
            },
            _ => ProjectMeta::default(),
        };
        Ok(Project {
            targets,
            blocks,
            extensions,
            assets: BTreeMap::new(),
            content_hash: String::new(),
            monitors,
            meta,
            warnings: Vec::new(),
            compiled: Default::default(),
            geometry_data: Default::default(),
        })
    }

    /// A numeric target property: numbers as is, other scalars through JS
    /// `Number()`, the default when absent or not a number.
    fn num_prop(&mut self, o: &Obj, key: &str, default: f64, tname: &str) -> f64 {
        match o.get(key) {
            None => default,
            Some(J::Num(n)) => *n,
            Some(other) => {
                let n = js_number(Some(other));
                let v = if n.is_finite() { n } else { default };
                self.warn(format!(
                    "target {tname:?}: `{key}` is {}; using {}",
                    other.type_name(),
                    number_to_js_string(v)
                ));
                v
            }
        }
    }

    fn str_prop(&mut self, o: &Obj, key: &str, default: &str, tname: &str) -> String {
        match o.get(key) {
            None => default.to_string(),
            Some(J::Str(s)) => s.clone(),
            Some(other) => {
                self.warn(format!("target {tname:?}: `{key}` is {}; using {default:?}", other.type_name()));
                default.to_string()
            }
        }
    }

    /// Variables, lists and broadcasts in scratch-vm's single id space per target.
    fn declarations(
        &mut self,
        tobj: &Obj,
        tname: &str,
        is_stage: bool,
        cloud_count: &mut usize,
    ) -> (Vec<VarDef>, Vec<VarDef>, Vec<(String, String)>) {
        // `target.variables` as a JS object: slots in key order (None = deleted)
        // and an index from id to slot.
        let mut decls: Vec<Option<(String, Decl)>> = Vec::new();
        let mut slot_of: HashMap<String, usize> = HashMap::new();
        let put =
            |decls: &mut Vec<Option<(String, Decl)>>, slot_of: &mut HashMap<String, usize>, id: String, d: Decl| {
                match slot_of.get(&id) {
                    // Re-assigning a JS key keeps its position.
                    Some(&i) => decls[i] = Some((id, d)),
                    None => {
                        slot_of.insert(id.clone(), decls.len());
                        decls.push(Some((id, d)));
                    }
                }
            };
        if let Some(J::Obj(vars)) = tobj.get("variables") {
            for (id, v) in vars.iter() {
                let Some(a) = v.as_arr() else {
                    self.warn(format!("target {tname:?}: variable {id:?} is {}, skipped", v.type_name()));
                    continue;
                };
                let name = js_string(a.first()).unwrap_or_default();
                let value = lit(a.get(1)).unwrap_or_else(|| {
                    self.warn(format!("target {tname:?}: variable {name:?} has no scalar value; using 0"));
                    Lit::Num(0.0)
                });
                let cloud = a.len() == 3 && a[2].truthy() && is_stage && *cloud_count < 10;
                *cloud_count += usize::from(cloud);
                let def = VarDef { id: id.to_string(), name, value, items: Vec::new(), cloud };
                put(&mut decls, &mut slot_of, id.to_string(), Decl::Var(def));
            }
        }
        if let Some(J::Obj(lists)) = tobj.get("lists") {
            for (id, v) in lists.iter() {
                let Some(a) = v.as_arr() else {
                    self.warn(format!("target {tname:?}: list {id:?} is {}, skipped", v.type_name()));
                    continue;
                };
                let name = js_string(a.first()).unwrap_or_default();
                let items = match a.get(1) {
                    Some(J::Arr(items)) => items
                        .iter()
                        .map(|it| {
                            lit(Some(it)).unwrap_or_else(|| {
                                self.warn(format!(
                                    "target {tname:?}: list {name:?} has a {} item; using \"\"",
                                    it.type_name()
                                ));
                                Lit::Str(String::new())
                            })
                        })
                        .collect(),
                    _ => {
                        self.warn(format!("target {tname:?}: list {name:?} has no item array; empty"));
                        Vec::new()
                    }
                };
                let def = VarDef { id: id.to_string(), name, value: Lit::Num(0.0), items, cloud: false };
                put(&mut decls, &mut slot_of, id.to_string(), Decl::List(def));
            }
        }
        if let Some(J::Obj(bs)) = tobj.get("broadcasts") {
            for (id, v) in bs.iter() {
                let name = js_string(Some(v)).unwrap_or_default();
                put(&mut decls, &mut slot_of, id.to_string(), Decl::Broadcast(name));
            }
        }
        // replaceUnsafeCharsInVariableIds: an unsafe id moves to the end under
        // its safe id, or replaces the declaration already holding that id.
        // (Object.keys is a snapshot: only the ids present before the pass move.)
        for i in 0..decls.len() {
            let Some((id, _)) = &decls[i] else { continue };
            let safe = safe_id(id);
            if safe == *id {
                continue;
            }
            if let Some((id, d)) = decls[i].take() {
                slot_of.remove(&id);
                put(&mut decls, &mut slot_of, safe, d);
            }
        }
        let (mut vars, mut lists, mut broadcasts) = (Vec::new(), Vec::new(), Vec::new());
        for (id, d) in decls.into_iter().flatten() {
            match d {
                Decl::Var(mut v) => {
                    v.id = id;
                    vars.push(v);
                }
                Decl::List(mut l) => {
                    l.id = id;
                    lists.push(l);
                }
                Decl::Broadcast(name) => broadcasts.push((id, name)),
            }
        }
        (vars, lists, broadcasts)
    }

    fn costumes(&mut self, tobj: &Obj, tname: &str) -> Vec<Costume> {
        let Some(J::Arr(a)) = tobj.get("costumes") else { return Vec::new() };
        let mut out = Vec::with_capacity(a.len());
        for c in a {
            let Some(c) = c.as_obj() else {
                self.warn(format!("target {tname:?}: a costume is {}, skipped", c.type_name()));
                continue;
            };
            let asset_id = js_string(c.get("assetId")).unwrap_or_default();
            let data_format = match c.get("dataFormat") {
                Some(J::Str(s)) if !s.is_empty() => s.clone(),
                _ => "png".to_string(),
            };
            let md5ext = match c.get("md5ext") {
                Some(v) => js_string(Some(v)).unwrap_or_default(),
                None => format!("{asset_id}.{data_format}"),
            };
            let rx = c.get("rotationCenterX").map(|v| js_number(Some(v)));
            let ry = c.get("rotationCenterY").map(|v| js_number(Some(v)));
            let has_rotation_center = rx.is_some_and(f64::is_finite) && ry.is_some_and(f64::is_finite);
            let br = js_number(c.get("bitmapResolution"));
            out.push(Costume {
                name: js_string(c.get("name")).unwrap_or_default(),
                asset_id,
                md5ext,
                data_format,
                rotation_center_x: if has_rotation_center { rx.unwrap_or(0.0) } else { 0.0 },
                rotation_center_y: if has_rotation_center { ry.unwrap_or(0.0) } else { 0.0 },
                has_rotation_center,
                bitmap_resolution: if br.is_finite() && br > 0.0 { br } else { 1.0 },
            });
        }
        out
    }

    fn sounds(&mut self, tobj: &Obj, tname: &str) -> Vec<Sound> {
        let Some(J::Arr(a)) = tobj.get("sounds") else { return Vec::new() };
        let mut out = Vec::with_capacity(a.len());
        for s in a {
            let Some(s) = s.as_obj() else {
                self.warn(format!("target {tname:?}: a sound is {}, skipped", s.type_name()));
                continue;
            };
            let name = js_string(s.get("name")).unwrap_or_default();
            let asset_id = js_string(s.get("assetId")).unwrap_or_default();
            let data_format = js_string(s.get("dataFormat")).unwrap_or_default();
            let md5ext = match s.get("md5ext") {
                Some(v) => js_string(Some(v)).unwrap_or_default(),
                None => format!("{asset_id}.{data_format}"),
            };
            let mut rate = js_number(s.get("rate"));
            if !(rate.is_finite() && rate > 0.0) {
                if s.has("rate") {
                    self.warn(format!("target {tname:?}: sound {name:?} has rate {rate}; using 48000"));
                }
                rate = 48_000.0;
            }
            let mut sample_count = js_number(s.get("sampleCount"));
            if !(sample_count.is_finite() && sample_count >= 0.0) {
                if s.has("sampleCount") {
                    self.warn(format!("target {tname:?}: sound {name:?} has sampleCount {sample_count}; using 0"));
                }
                sample_count = 0.0;
            }
            out.push(Sound {
                name,
                asset_id,
                md5ext,
                data_format,
                format: js_string(s.get("format")).unwrap_or_default(),
                rate,
                sample_count,
            });
        }
        out
    }

    /// Parses one target's `blocks` object into the shared arena (object
    /// blocks in JSON order, then top-level compact reporters).
    fn blocks(&mut self, bj: &Obj, target: u32, tname: &str, blocks: &mut Vec<Block>) -> Result<(), Bad> {
        let base = blocks.len();
        let mut index: HashMap<&str, (BlockIdx, &Obj)> = HashMap::with_capacity(bj.len());
        let mut objects: Vec<(&str, &Obj)> = Vec::with_capacity(bj.len());
        let mut prims: Vec<(&str, &[J])> = Vec::new();
        for (id, b) in bj.iter() {
            match b {
                J::Obj(o) => {
                    index.insert(id, ((base + objects.len()) as BlockIdx, o));
                    objects.push((id, o));
                }
                J::Arr(a) => prims.push((id, a)),
                other => {
                    return Err(Bad::at_block(
                        LoadErrorKind::Malformed,
                        tname,
                        id,
                        format!("is {}, neither a block object nor a compact reporter array", other.type_name()),
                    ));
                }
            }
        }
        for (id, o) in &objects {
            let block = self.block(id, o, &index, target, tname)?;
            blocks.push(block);
        }
        // Top-level compact reporters: scratch-vm re-creates them under new ids
        // after all other blocks (so nothing can link to them).
        for (id, a) in prims {
            let (opcode, field) = match a.first() {
                Some(J::Num(k)) if *k == 12.0 => ("data_variable", "VARIABLE"),
                Some(J::Num(k)) if *k == 13.0 => ("data_listcontents", "LIST"),
                _ => {
                    self.warn(format!(
                        "target {tname:?}: top-level entry {id:?} is not a variable or list reporter; skipped"
                    ));
                    continue;
                }
            };
            let name = js_string(a.get(1)).unwrap_or_default();
            let vid = js_string(a.get(2)).map(|s| safe_id(&s));
            blocks.push(Block {
                id: id.to_string(),
                opcode: opcode.to_string(),
                next: None,
                next_missing: false,
                parent: None,
                inputs: Vec::new(),
                fields: vec![Field { name: field.to_string(), value: name.clone(), raw: Lit::Str(name), id: vid }],
                shadow: false,
                top_level: a.len() > 3,
                mutation: None,
                target,
            });
        }
        Ok(())
    }

    fn block(
        &mut self,
        id: &str,
        o: &Obj,
        index: &HashMap<&str, (BlockIdx, &Obj)>,
        target: u32,
        tname: &str,
    ) -> Result<Block, Bad> {
        let opcode = match o.get("opcode") {
            Some(J::Str(s)) => s.clone(),
            Some(other) => {
                return Err(Bad::at_block(
                    LoadErrorKind::Malformed,
                    tname,
                    id,
                    format!("opcode is {}, not a string", other.type_name()),
                ));
            }
            None => return Err(Bad::at_block(LoadErrorKind::Malformed, tname, id, "has no opcode")),
        };
        let (next, next_missing) = match o.get("next") {
            None | Some(J::Null) => (None, false),
            Some(v) => match js_string(Some(v)).and_then(|s| index.get(s.as_str()).map(|(i, _)| *i)) {
                Some(i) => (Some(i), false),
                None => {
                    self.warn(format!("target {tname:?}: block {id:?}: `next` names a missing block"));
                    (None, true)
                }
            },
        };
        let mut inputs = Vec::new();
        if let Some(J::Obj(inp)) = o.get("inputs") {
            for (iname, spec) in inp.iter() {
                // scratch-vm skips inputs that are not arrays.
                let Some(a) = spec.as_arr() else { continue };
                // input.block is element 1 whatever the shadow kind says. A
                // link to a missing block makes scratch-vm throw each time the
                // block runs; we read the obscured shadow (element 2) instead.
                if let Some(J::Arr(p)) = a.get(1)
                    && !matches!(p.first(), Some(J::Num(k)) if k.fract() == 0.0 && (4.0..=13.0).contains(k))
                {
                    self.warn(format!("target {tname:?}: block {id:?}: input {iname} has an unknown primitive"));
                }
                let input = match self.input_desc(a.get(1), index) {
                    Some(input) => input,
                    None => {
                        self.warn(format!("target {tname:?}: block {id:?}: input {iname} links to a missing block"));
                        self.input_desc(a.get(2), index).unwrap_or(Input::Empty)
                    }
                };
                inputs.push((iname.to_string(), input));
            }
        }
        let fields = match o.get("fields") {
            Some(J::Obj(fs)) => fields(fs),
            _ => Vec::new(),
        };
        let mutation = match o.get("mutation") {
            Some(J::Obj(m)) => Some(self.mutation(m, tname, id)),
            _ => None,
        };
        Ok(Block {
            id: id.to_string(),
            opcode,
            next,
            next_missing,
            parent: None,
            inputs,
            fields,
            shadow: o.get("shadow").is_some_and(J::truthy),
            top_level: o.get("topLevel").is_some_and(J::truthy),
            mutation,
            target,
        })
    }

    /// scratch-vm's `deserializeInputDesc` followed by what `BlockCached`
    /// makes of it. `None`: a link to a block that does not exist.
    fn input_desc(&self, v: Option<&J>, index: &HashMap<&str, (BlockIdx, &Obj)>) -> Option<Input> {
        match v {
            None | Some(J::Null) => Some(Input::Empty),
            Some(J::Arr(p)) => Some(primitive(p)),
            Some(other) => {
                let key = js_string(Some(other)).unwrap_or_default();
                let &(idx, child) = index.get(key.as_str())?;
                Some(match child.get("opcode").and_then(J::as_str) {
                    Some(op) if LITERAL_OPCODES.contains(&op) => {
                        // Literal blocks are only values with exactly one field
                        // and no inputs (else scratch-vm leaves the argument
                        // undefined: no implementation runs).
                        let fs = match child.get("fields") {
                            Some(J::Obj(f)) => f.iter().filter(|(_, v)| v.as_arr().is_some()).collect::<Vec<_>>(),
                            _ => Vec::new(),
                        };
                        let n_inputs = match child.get("inputs") {
                            Some(J::Obj(i)) => i.iter().filter(|(_, v)| v.as_arr().is_some()).count(),
                            _ => 0,
                        };
                        match (fs.as_slice(), n_inputs) {
                            ([(_, f)], 0) => f.as_arr().and_then(|a| lit(a.first())).map_or(Input::Empty, Input::Lit),
                            _ => Input::Empty,
                        }
                    }
                    _ => Input::Block(idx),
                })
            }
        }
    }

    fn mutation(&mut self, m: &Obj, tname: &str, bid: &str) -> Mutation {
        let mut list = |key: &str| -> Vec<String> {
            let parsed = match m.get(key) {
                None => return Vec::new(),
                Some(J::Str(s)) => json::parse(s).ok(),
                Some(v @ J::Arr(_)) => Some(v.clone()),
                Some(_) => None,
            };
            match parsed {
                Some(J::Arr(a)) => a.iter().map(|v| js_string(Some(v)).unwrap_or_default()).collect(),
                _ => {
                    self.warn(format!("target {tname:?}: block {bid:?}: mutation `{key}` is not a JSON array; empty"));
                    Vec::new()
                }
            }
        };
        let argument_ids = list("argumentids");
        let argument_names = list("argumentnames");
        let argument_defaults = list("argumentdefaults");
        // scratch-vm: booleans as is, strings through JSON.parse, then truthiness.
        let flag = |v: Option<&J>| -> Result<Option<bool>, ()> {
            match v {
                None | Some(J::Null) => Ok(None),
                Some(J::Bool(b)) => Ok(Some(*b)),
                Some(J::Str(s)) => json::parse(s).map(|j| Some(j.truthy())).map_err(|_| ()),
                Some(other) => Ok(Some(other.truthy())),
            }
        };
        let warp = flag(m.get("warp")).unwrap_or_else(|()| {
            self.warn(format!("target {tname:?}: block {bid:?}: `warp` is not JSON; false"));
            None
        });
        Mutation {
            proccode: js_string(m.get("proccode")).unwrap_or_default(),
            argument_ids,
            argument_names,
            argument_defaults,
            warp: warp.unwrap_or(false),
            has_next: flag(m.get("hasnext")).ok().flatten(),
        }
    }
}

/// A compact primitive `[kind, value, id?]`. Unknown kinds (scratch-vm logs
/// and drops them) and values that are not scalars are `Empty`; a missing
/// value is `undefined`, so `Empty` too.
fn primitive(p: &[J]) -> Input {
    let kind = match p.first() {
        Some(J::Num(k)) if k.fract() == 0.0 && (4.0..=13.0).contains(k) => *k as u8,
        _ => return Input::Empty,
    };
    let name = || js_string(p.get(1)).unwrap_or_default();
    let id = || safe_id(&js_string(p.get(2)).unwrap_or_default());
    match kind {
        4..=10 => lit(p.get(1)).map_or(Input::Empty, Input::Lit),
        11 => Input::Broadcast { name: name(), id: id() },
        12 => Input::Variable { name: name(), id: id() },
        _ => Input::List { name: name(), id: id() },
    }
}

/// Fields as scratch-vm's `deserializeFields` keeps them (array values only).
fn fields(fs: &Obj) -> Vec<Field> {
    let mut out = Vec::with_capacity(fs.len());
    for (fname, spec) in fs.iter() {
        let Some(a) = spec.as_arr() else { continue };
        let raw = lit(a.first()).unwrap_or_else(|| Lit::Str(String::new()));
        let mut id = match a.get(1) {
            Some(J::Str(s)) => Some(s.clone()),
            Some(J::Num(n)) => Some(number_to_js_string(*n)),
            _ => None,
        };
        if matches!(fname, "VARIABLE" | "LIST" | "BROADCAST_OPTION") {
            id = id.map(|i| safe_id(&i));
        }
        out.push(Field { name: fname.to_string(), value: raw.to_js_string(), raw, id });
    }
    out
}

fn monitor(m: &Obj) -> Monitor {
    let num = |k: &str, d: f64| {
        let n = js_number(m.get(k));
        if n.is_finite() { n } else { d }
    };
    let params = match m.get("params") {
        Some(J::Obj(p)) => p.iter().map(|(k, v)| (k.to_string(), js_string(Some(v)).unwrap_or_default())).collect(),
        _ => Vec::new(),
    };
    let opcode = js_string(m.get("opcode")).unwrap_or_default();
    let mut id = js_string(m.get("id")).unwrap_or_default();
    if opcode == "data_variable" || opcode == "data_listcontents" {
        id = safe_id(&id);
    }
    Monitor {
        id,
        mode: js_string(m.get("mode")).unwrap_or_default(),
        opcode,
        params,
        sprite_name: m.get("spriteName").and_then(J::as_str).map(str::to_string),
        visible: m.get("visible").is_some_and(J::truthy),
        slider_min: num("sliderMin", 0.0),
        slider_max: num("sliderMax", 100.0),
        is_discrete: m.get("isDiscrete").is_none_or(J::truthy),
    }
}

/// The first `procedures_definition` / `procedures_prototype` per proccode, in
/// block order, each sorted by proccode for lookup.
type ProcIndex = Vec<(String, BlockIdx)>;

fn procedure_index(blocks: &[Block], base: usize) -> (ProcIndex, ProcIndex) {
    let mut defs: ProcIndex = Vec::new();
    let mut protos: ProcIndex = Vec::new();
    let mut seen_defs: HashSet<&str> = HashSet::new();
    let mut seen_protos: HashSet<&str> = HashSet::new();
    for (i, b) in blocks.iter().enumerate().skip(base) {
        match b.opcode.as_str() {
            "procedures_definition" => {
                if let Some(Input::Block(p)) = b.input("custom_block")
                    && let Some(m) = &blocks[*p as usize].mutation
                    && seen_defs.insert(&m.proccode)
                {
                    defs.push((m.proccode.clone(), i as BlockIdx));
                }
            }
            "procedures_prototype" => {
                if let Some(m) = &b.mutation
                    && seen_protos.insert(&m.proccode)
                {
                    protos.push((m.proccode.clone(), i as BlockIdx));
                }
            }
            _ => {}
        }
    }
    defs.sort_by(|a, b| a.0.cmp(&b.0));
    protos.sort_by(|a, b| a.0.cmp(&b.0));
    (defs, protos)
}

/// How a block links to a child.
fn link_name(parent: &Block, child: BlockIdx) -> String {
    if parent.next == Some(child) {
        return "next".to_string();
    }
    match parent.inputs.iter().find(|(_, i)| *i == Input::Block(child)) {
        Some((name, _)) => format!("input {name}"),
        None => "link".to_string(),
    }
}

/// Checks that the blocks `base..` of one target form a forest through
/// `next` and input links (one parent each, no cycles), sets `parent`, and
/// bounds the input nesting depth.
fn check_tree(blocks: &mut [Block], base: usize, tname: &str, max_depth: usize) -> Result<(), Bad> {
    let n = blocks.len() - base;
    let mut parent: Vec<Option<BlockIdx>> = vec![None; n];
    let mut children: Vec<(BlockIdx, bool)> = Vec::new();
    for local in 0..n {
        let b = &blocks[base + local];
        let me = (base + local) as BlockIdx;
        children.clear();
        children.extend(b.next.map(|c| (c, false)));
        children.extend(b.inputs.iter().filter_map(|(_, i)| match i {
            Input::Block(c) => Some((*c, true)),
            _ => None,
        }));
        for &(c, _) in &children {
            let cl = c as usize - base;
            if c == me {
                return Err(Bad::at_block(
                    LoadErrorKind::BlockGraph,
                    tname,
                    &b.id,
                    format!("its {} is itself (a cycle)", link_name(b, c)),
                ));
            }
            if let Some(p) = parent[cl] {
                let first = &blocks[p as usize];
                return Err(Bad::at_block(
                    LoadErrorKind::BlockGraph,
                    tname,
                    &blocks[c as usize].id,
                    format!(
                        "is linked from two places: {} of block {:?} and {} of block {:?}",
                        link_name(first, c),
                        first.id,
                        link_name(b, c),
                        b.id
                    ),
                ));
            }
            parent[cl] = Some(me);
        }
    }
    // Walk down from the roots; whatever is not reached hangs on a cycle.
    let mut depth = vec![usize::MAX; n];
    let mut stack: Vec<usize> = (0..n).filter(|&l| parent[l].is_none()).collect();
    for &r in &stack {
        depth[r] = 0;
    }
    while let Some(l) = stack.pop() {
        let b = &blocks[base + l];
        let d = depth[l];
        let next = b.next.map(|c| (c, d));
        let ins = b.inputs.iter().filter_map(|(_, i)| match i {
            Input::Block(c) => Some((*c, d + 1)),
            _ => None,
        });
        for (c, cd) in next.into_iter().chain(ins) {
            if cd > max_depth {
                return Err(Bad::at_block(
                    LoadErrorKind::Limit,
                    tname,
                    &blocks[c as usize].id,
                    format!("is nested more than {max_depth} input levels deep"),
                ));
            }
            let cl = c as usize - base;
            depth[cl] = cd;
            stack.push(cl);
        }
    }
    if let Some(start) = depth.iter().position(|&d| d == usize::MAX) {
        // Follow parents until one repeats: that block is on the cycle.
        let mut seen = vec![false; n];
        let mut l = start;
        while !seen[l] {
            seen[l] = true;
            match parent[l] {
                Some(p) => l = p as usize - base,
                None => break,
            }
        }
        let b = &blocks[base + l];
        return Err(Bad::at_block(
            LoadErrorKind::BlockGraph,
            tname,
            &b.id,
            "is part of a cycle of next/input links (a stack or reporter that contains itself)",
        ));
    }
    for (l, p) in parent.into_iter().enumerate() {
        blocks[base + l].parent = p;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
