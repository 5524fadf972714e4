//! The loaded project's model (see the module docs of [`crate::project`] for what it
//! promises): targets, the block arena, inputs, fields, costumes, sounds, monitors.

use super::wav::WavShape;
use std::collections::BTreeMap;
use std::fmt;

use crate::util::cast::number_to_js_string;

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
    /// No value at all: JS `undefined`. Only a variable saved as `[name]` without a value
    /// (PictoBlox writes such files); scratch-vm's loader assigns the missing `variable[1]`.
    Undefined,
}

impl Lit {
    /// JS `String(value)`.
    pub fn to_js_string(&self) -> String {
        match self {
            Lit::Num(n) => number_to_js_string(*n),
            Lit::Str(s) => s.clone(),
            Lit::Bool(b) => b.to_string(),
            Lit::Null => "null".to_string(),
            Lit::Undefined => "undefined".to_string(),
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

/// Sound metadata, and the shape of its WAV data when the file has it (no audio is decoded).
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
    /// The audio the sound's WAV file holds, when the sb3 has the file and its header is read
    /// (`None` for MP3, a bare project.json, a missing or unusual file).
    pub wav: Option<WavShape>,
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
    /// Direction in degrees as saved. scratch-vm wraps it into (-180, 180] at load; Whisker's
    /// fork does not (the VM applies the one its profile follows).
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
    /// `uid()` calls scratch-vm's sb3 loader makes for this target's blocks before the target
    /// takes its own id: one per compact input (`[4, "10"]`, an obscured shadow, a top-level
    /// variable reporter). Whisker's target ids follow from it (`Target::uid_draw`).
    pub load_uids: u32,
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
    pub(super) procedure_definitions: Vec<(String, BlockIdx)>,
    /// (proccode, `procedures_prototype` block), likewise.
    pub(super) procedure_prototypes: Vec<(String, BlockIdx)>,
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
    /// Blocks held in more than one reporter slot (the `next` or inputs of two blocks; the
    /// Scratch editor never writes this, generated files do), ascending. Their
    /// [`Block::parent`] is the first holder. scratch-vm gives such a reporter's value only
    /// to one holder at a time (`docs/vm.md`, Known deviations), which the interpreter
    /// reproduces.
    pub shared: Vec<BlockIdx>,
    /// The interpreter's compiled form, built on first use and shared by every
    /// VM. A clone of the project starts with an empty cache (it may be edited,
    /// e.g. into a mutant, and must then be compiled afresh).
    pub(crate) compiled: CompiledCache,
    /// Per-project data of the geometry layer (decoded costumes), built on first use.
    pub geometry_data: crate::geometry::GeometryCache,
}

/// The compiled-program cell of a [`Project`]: shared by the VMs of that
/// project, never by its clones.
#[derive(Default)]
pub(crate) struct CompiledCache(std::sync::OnceLock<std::sync::Arc<crate::program::Program>>);

impl Clone for CompiledCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl fmt::Debug for CompiledCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.get().is_some() { "CompiledCache(built)" } else { "CompiledCache(empty)" })
    }
}

impl std::ops::Deref for CompiledCache {
    type Target = std::sync::OnceLock<std::sync::Arc<crate::program::Program>>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// scratch-vm's names that `renameSprite` leaves alone (they are the menus' special values).
pub const RESERVED_NAMES: [&str; 5] = ["_mouse_", "_stage_", "_edge_", "_myself_", "_random_"];
