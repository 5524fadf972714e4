//! Loading Scratch 3 projects (`.sb3` zip or bare `project.json`) into an
//! immutable, index-based model the interpreter runs from.
//!
//! Everything here treats the input as hostile: sizes, counts and nesting are
//! bounded, and every malformed piece yields a [`LoadError`] naming the file,
//! target and block concerned (never a panic).

use std::collections::{BTreeMap, HashMap};
use std::io::Read;

use serde_json::Value as Json;

use crate::value::js_string_to_number;

/// Limits applied while loading untrusted project files.
#[derive(Debug, Clone)]
pub struct LoadLimits {
    /// Largest accepted input file (zip or JSON), in bytes.
    pub max_file_bytes: u64,
    /// Largest accepted uncompressed `project.json`, in bytes.
    pub max_json_bytes: u64,
    /// Largest total uncompressed size of all zip entries read.
    pub max_uncompressed_bytes: u64,
    /// Most zip entries accepted.
    pub max_zip_entries: usize,
    /// Most blocks (all targets together).
    pub max_blocks: usize,
    /// Most targets (sprites + stage).
    pub max_targets: usize,
    /// Deepest JSON nesting accepted.
    pub max_json_depth: usize,
}

impl Default for LoadLimits {
    fn default() -> Self {
        Self {
            max_file_bytes: 256 << 20,
            max_json_bytes: 64 << 20,
            max_uncompressed_bytes: 512 << 20,
            max_zip_entries: 10_000,
            max_blocks: 500_000,
            max_targets: 2_000,
            max_json_depth: 256,
        }
    }
}

/// Why a project could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The container (zip) is unreadable or over a limit.
    #[error("{file}: {msg}")]
    Container {
        /// File name (or `<bytes>`).
        file: String,
        /// What is wrong.
        msg: String,
    },
    /// `project.json` is not valid JSON or is over a limit.
    #[error("{file}: project.json: {msg}")]
    Json {
        /// File name.
        file: String,
        /// What is wrong.
        msg: String,
    },
    /// The JSON is valid but not a Scratch 3 project.
    #[error("{file}: {msg}")]
    Format {
        /// File name.
        file: String,
        /// What is wrong (names the target and block where known).
        msg: String,
    },
}

/// Index of a block in [`Project::blocks`].
pub type BlockIdx = u32;

/// A literal or reference in an input slot, resolved at load time.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    /// A number literal (compact primitives 4–8 that parse as numbers).
    Num(f64),
    /// A text literal (kept verbatim: `"007"` stays a string).
    Str(String),
    /// A JSON boolean (JS keeps it a boolean: variables can hold `true`).
    Bool(bool),
    /// JSON `null` (JS keeps `null`; only in broken files).
    Null,
}

/// What an input slot holds after resolving shadows.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// Nothing plugged in and no shadow.
    Empty,
    /// A literal value (from a shadow block or a compact primitive).
    Lit(Lit),
    /// A reporter or boolean block, or a substack's first block.
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
    /// The visible value.
    pub value: String,
    /// Referenced id (variables, lists, broadcasts), if any.
    pub id: Option<String>,
}

/// A procedure prototype or call mutation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mutation {
    /// `proccode`, e.g. `"move %s steps %b"`.
    pub proccode: String,
    /// Argument ids (inputs of a call).
    pub argument_ids: Vec<String>,
    /// Argument names (prototype only).
    pub argument_names: Vec<String>,
    /// Argument defaults (prototype only).
    pub argument_defaults: Vec<String>,
    /// Run without screen refresh.
    pub warp: bool,
    /// `hasnext` of `control_stop`.
    pub has_next: Option<bool>,
}

/// One block of the project.
#[derive(Debug, Clone)]
pub struct Block {
    /// The block id from project.json.
    pub id: String,
    /// The opcode, e.g. `motion_movesteps`.
    pub opcode: String,
    /// Next block in the stack.
    pub next: Option<BlockIdx>,
    /// Parent block (previous in stack, or the block whose input holds this one).
    pub parent: Option<BlockIdx>,
    /// Named inputs, in project.json order.
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
    /// Cloud variable flag.
    pub cloud: bool,
}

/// Costume metadata (the bitmap itself is decoded by the geometry layer).
#[derive(Debug, Clone)]
pub struct Costume {
    /// Costume name.
    pub name: String,
    /// Asset file name in the sb3 (`md5ext`).
    pub md5ext: String,
    /// `svg`, `png`, `jpg`…
    pub data_format: String,
    /// Rotation centre x, in costume pixels.
    pub rotation_center_x: f64,
    /// Rotation centre y, in costume pixels.
    pub rotation_center_y: f64,
    /// Pixels per stage unit (2 for hi-dpi bitmaps).
    pub bitmap_resolution: f64,
}

/// Sound metadata (no audio is decoded).
#[derive(Debug, Clone)]
pub struct Sound {
    /// Sound name.
    pub name: String,
    /// Sample rate.
    pub rate: f64,
    /// Number of samples.
    pub sample_count: f64,
}

/// A sprite or the stage as declared in the project.
#[derive(Debug, Clone)]
pub struct TargetDef {
    /// Sprite name (`Stage` for the stage).
    pub name: String,
    /// Whether this is the stage.
    pub is_stage: bool,
    /// Scalar variables.
    pub variables: Vec<VarDef>,
    /// Lists.
    pub lists: Vec<VarDef>,
    /// Broadcast messages declared here (id, name); only the stage's matter.
    pub broadcasts: Vec<(String, String)>,
    /// Top-level blocks (script starts), in project.json order.
    pub scripts: Vec<BlockIdx>,
    /// Costumes.
    pub costumes: Vec<Costume>,
    /// Sounds.
    pub sounds: Vec<Sound>,
    /// Current costume index.
    pub current_costume: usize,
    /// Position x.
    pub x: f64,
    /// Position y.
    pub y: f64,
    /// Direction in degrees.
    pub direction: f64,
    /// Size in percent.
    pub size: f64,
    /// Visibility.
    pub visible: bool,
    /// `all around`, `left-right` or `don't rotate`.
    pub rotation_style: String,
    /// Draggable in the player.
    pub draggable: bool,
    /// Volume in percent.
    pub volume: f64,
    /// Layer order (0 = stage).
    pub layer_order: i64,
    /// Music tempo (stage).
    pub tempo: f64,
    /// Video transparency (stage).
    pub video_transparency: f64,
    /// Video state (stage): `on`, `off`, `on-flipped`.
    pub video_state: String,
}

/// A loaded, immutable project. Shared by every VM instance that runs it.
#[derive(Debug, Clone)]
pub struct Project {
    /// Targets in project.json order (the stage first after loading).
    pub targets: Vec<TargetDef>,
    /// All blocks of all targets.
    pub blocks: Vec<Block>,
    /// Extensions declared in the project.
    pub extensions: Vec<String>,
    /// Asset files found in the sb3, by name (empty for bare project.json).
    pub assets: BTreeMap<String, Vec<u8>>,
    /// blake3 hash of the input bytes, hex.
    pub content_hash: String,
    /// The interpreter's compiled form, built on first use and shared by every VM.
    pub(crate) compiled: std::sync::OnceLock<std::sync::Arc<crate::program::Program>>,
    /// Per-project data of the geometry layer (decoded costumes), built on first use.
    pub geometry_data: std::sync::OnceLock<std::sync::Arc<dyn std::any::Any + Send + Sync>>,
}

/// Loads a project from bytes: a zip (`.sb3`) or a bare `project.json`.
///
/// `name` is only used in error messages.
pub fn load(bytes: &[u8], name: &str, limits: &LoadLimits) -> Result<Project, LoadError> {
    if bytes.len() as u64 > limits.max_file_bytes {
        return Err(LoadError::Container {
            file: name.to_string(),
            msg: format!("file is {} bytes, over the limit of {}", bytes.len(), limits.max_file_bytes),
        });
    }
    let content_hash = blake3::hash(bytes).to_hex().to_string();
    let (json_bytes, assets) =
        if bytes.starts_with(b"PK") { read_sb3(bytes, name, limits)? } else { (bytes.to_vec(), BTreeMap::new()) };
    if json_bytes.len() as u64 > limits.max_json_bytes {
        return Err(LoadError::Json {
            file: name.to_string(),
            msg: format!("{} bytes, over the limit of {}", json_bytes.len(), limits.max_json_bytes),
        });
    }
    check_json_depth(&json_bytes, limits.max_json_depth)
        .map_err(|msg| LoadError::Json { file: name.to_string(), msg })?;
    let json: Json = serde_json::from_slice(&json_bytes)
        .map_err(|e| LoadError::Json { file: name.to_string(), msg: e.to_string() })?;
    let mut project = parse_project(&json, name, limits)?;
    project.assets = assets;
    project.content_hash = content_hash;
    Ok(project)
}

/// Reads `project.json` and the asset files from an sb3 zip, within limits.
/// Asset files of an sb3 by file name.
type Assets = BTreeMap<String, Vec<u8>>;

fn read_sb3(bytes: &[u8], name: &str, limits: &LoadLimits) -> Result<(Vec<u8>, Assets), LoadError> {
    let err = |msg: String| LoadError::Container { file: name.to_string(), msg };
    let mut zip =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| err(format!("not a readable zip: {e}")))?;
    if zip.len() > limits.max_zip_entries {
        return Err(err(format!("{} zip entries, over the limit of {}", zip.len(), limits.max_zip_entries)));
    }
    let mut total: u64 = 0;
    let mut json = None;
    let mut assets = BTreeMap::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| err(format!("zip entry {i}: {e}")))?;
        if entry.is_dir() {
            continue;
        }
        let entry_name = entry.name().map(|n| n.to_string()).unwrap_or_else(|_| format!("entry{i}"));
        // Read at most the remaining budget + 1 so a lying header cannot bomb us.
        let budget = limits.max_uncompressed_bytes.saturating_sub(total);
        let mut buf = Vec::new();
        (&mut entry).take(budget + 1).read_to_end(&mut buf).map_err(|e| err(format!("zip entry {entry_name}: {e}")))?;
        total += buf.len() as u64;
        if total > limits.max_uncompressed_bytes {
            return Err(err(format!(
                "uncompressed contents exceed the limit of {} bytes (zip bomb?)",
                limits.max_uncompressed_bytes
            )));
        }
        // sb3 files made by some tools nest everything in a folder.
        let base = entry_name.rsplit('/').next().unwrap_or(&entry_name).to_string();
        if base == "project.json" {
            json = Some(buf);
        } else {
            assets.insert(base, buf);
        }
    }
    let json = json.ok_or_else(|| err("zip has no project.json".to_string()))?;
    Ok((json, assets))
}

/// Rejects JSON nested deeper than `max` before serde recurses into it.
fn check_json_depth(bytes: &[u8], max: usize) -> Result<(), String> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for &b in bytes {
        if in_str {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_str = false;
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Err(format!("nested deeper than {max} levels"));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn num_of(v: Option<&Json>, default: f64) -> f64 {
    match v {
        Some(Json::Number(n)) => n.as_f64().unwrap_or(default),
        Some(Json::String(s)) => {
            let n = js_string_to_number(s);
            if n.is_nan() { default } else { n }
        }
        _ => default,
    }
}

fn str_of(v: Option<&Json>) -> Option<String> {
    match v {
        Some(Json::String(s)) => Some(s.clone()),
        Some(Json::Number(n)) => Some(n.to_string()),
        Some(Json::Bool(b)) => Some(b.to_string()),
        _ => None,
    }
}

/// Converts a JSON scalar to a literal, keeping strings as strings.
fn lit_of(v: &Json) -> Lit {
    match v {
        Json::Number(n) => Lit::Num(n.as_f64().unwrap_or(0.0)),
        Json::String(s) => Lit::Str(s.clone()),
        Json::Bool(b) => Lit::Bool(*b),
        Json::Null => Lit::Null,
        other => Lit::Str(other.to_string()),
    }
}

fn parse_project(json: &Json, file: &str, limits: &LoadLimits) -> Result<Project, LoadError> {
    let ferr = |msg: String| LoadError::Format { file: file.to_string(), msg };
    let obj = json.as_object().ok_or_else(|| ferr("project.json is not an object".into()))?;
    let targets_json = match obj.get("targets") {
        Some(Json::Array(a)) => a,
        _ => {
            if obj.contains_key("objName") || obj.contains_key("children") {
                return Err(ferr("this is a Scratch 2 project (sb2); only Scratch 3 is supported".into()));
            }
            return Err(ferr("no `targets` array: not a Scratch 3 project".into()));
        }
    };
    if targets_json.len() > limits.max_targets {
        return Err(ferr(format!("{} targets, over the limit of {}", targets_json.len(), limits.max_targets)));
    }
    let mut targets = Vec::new();
    let mut blocks: Vec<Block> = Vec::new();
    for (ti, t) in targets_json.iter().enumerate() {
        let tobj = t.as_object().ok_or_else(|| ferr(format!("target {ti} is not an object")))?;
        let tname = str_of(tobj.get("name")).unwrap_or_else(|| format!("target{ti}"));
        let is_stage = matches!(tobj.get("isStage"), Some(Json::Bool(true)));
        let target_index = targets.len() as u32;
        let blocks_json = match tobj.get("blocks") {
            Some(Json::Object(b)) => Some(b),
            None | Some(Json::Null) => None,
            Some(_) => return Err(ferr(format!("target {tname:?}: `blocks` is not an object"))),
        };
        let mut scripts = Vec::new();
        if let Some(bj) = blocks_json {
            if blocks.len() + bj.len() > limits.max_blocks {
                return Err(ferr(format!("more than {} blocks", limits.max_blocks)));
            }
            parse_blocks(bj, target_index, &tname, &mut blocks, &mut scripts).map_err(ferr)?;
        }
        let variables = parse_vars(tobj.get("variables"), false);
        let lists = parse_vars(tobj.get("lists"), true);
        let broadcasts = match tobj.get("broadcasts") {
            Some(Json::Object(m)) => {
                m.iter().map(|(id, n)| (id.clone(), str_of(Some(n)).unwrap_or_default())).collect()
            }
            _ => Vec::new(),
        };
        let costumes = match tobj.get("costumes") {
            Some(Json::Array(a)) => a
                .iter()
                .filter_map(|c| c.as_object())
                .map(|c| Costume {
                    name: str_of(c.get("name")).unwrap_or_default(),
                    md5ext: str_of(c.get("md5ext")).unwrap_or_else(|| {
                        format!(
                            "{}.{}",
                            str_of(c.get("assetId")).unwrap_or_default(),
                            str_of(c.get("dataFormat")).unwrap_or_default()
                        )
                    }),
                    data_format: str_of(c.get("dataFormat")).unwrap_or_default(),
                    rotation_center_x: num_of(c.get("rotationCenterX"), 0.0),
                    rotation_center_y: num_of(c.get("rotationCenterY"), 0.0),
                    bitmap_resolution: num_of(c.get("bitmapResolution"), 1.0),
                })
                .collect(),
            _ => Vec::new(),
        };
        let sounds = match tobj.get("sounds") {
            Some(Json::Array(a)) => a
                .iter()
                .filter_map(|c| c.as_object())
                .map(|c| Sound {
                    name: str_of(c.get("name")).unwrap_or_default(),
                    rate: num_of(c.get("rate"), 48000.0),
                    sample_count: num_of(c.get("sampleCount"), 0.0),
                })
                .collect(),
            _ => Vec::new(),
        };
        let current_costume = num_of(tobj.get("currentCostume"), 0.0);
        let current_costume = if current_costume.is_finite() && current_costume >= 0.0 {
            (current_costume as usize).min(costumes.len().saturating_sub(1))
        } else {
            0
        };
        targets.push(TargetDef {
            name: tname,
            is_stage,
            variables,
            lists,
            broadcasts,
            scripts,
            costumes,
            sounds,
            current_costume,
            x: num_of(tobj.get("x"), 0.0),
            y: num_of(tobj.get("y"), 0.0),
            direction: num_of(tobj.get("direction"), 90.0),
            size: num_of(tobj.get("size"), 100.0),
            visible: !matches!(tobj.get("visible"), Some(Json::Bool(false))),
            rotation_style: str_of(tobj.get("rotationStyle")).unwrap_or_else(|| "all around".into()),
            draggable: matches!(tobj.get("draggable"), Some(Json::Bool(true))),
            volume: num_of(tobj.get("volume"), 100.0),
            layer_order: num_of(tobj.get("layerOrder"), if is_stage { 0.0 } else { ti as f64 }) as i64,
            tempo: num_of(tobj.get("tempo"), 60.0),
            video_transparency: num_of(tobj.get("videoTransparency"), 50.0),
            video_state: str_of(tobj.get("videoState")).unwrap_or_else(|| "on".into()),
        });
    }
    if !targets.iter().any(|t| t.is_stage) {
        return Err(ferr("no stage target".into()));
    }
    let extensions = match obj.get("extensions") {
        Some(Json::Array(a)) => a.iter().filter_map(|e| str_of(Some(e))).collect(),
        _ => Vec::new(),
    };
    Ok(Project {
        targets,
        blocks,
        extensions,
        assets: BTreeMap::new(),
        content_hash: String::new(),
        compiled: Default::default(),
        geometry_data: Default::default(),
    })
}

fn parse_vars(v: Option<&Json>, lists: bool) -> Vec<VarDef> {
    let Some(Json::Object(m)) = v else { return Vec::new() };
    m.iter()
        .filter_map(|(id, def)| {
            let arr = def.as_array()?;
            let name = str_of(arr.first())?;
            let (value, items) = if lists {
                let items = match arr.get(1) {
                    Some(Json::Array(items)) => items.iter().map(lit_of).collect(),
                    _ => Vec::new(),
                };
                (Lit::Num(0.0), items)
            } else {
                (arr.get(1).map(lit_of).unwrap_or(Lit::Num(0.0)), Vec::new())
            };
            let cloud = matches!(arr.get(2), Some(Json::Bool(true)));
            Some(VarDef { id: id.clone(), name, value, items, cloud })
        })
        .collect()
}

/// Parses one target's `blocks` map into the shared arena.
fn parse_blocks(
    bj: &serde_json::Map<String, Json>,
    target: u32,
    tname: &str,
    blocks: &mut Vec<Block>,
    scripts: &mut Vec<BlockIdx>,
) -> Result<(), String> {
    let base = blocks.len() as u32;
    // First pass: assign indices (ids are local to a target).
    let mut index: HashMap<&str, BlockIdx> = HashMap::with_capacity(bj.len());
    let mut order: Vec<(&str, &Json)> = Vec::with_capacity(bj.len());
    for (id, b) in bj {
        index.insert(id.as_str(), base + order.len() as u32);
        order.push((id.as_str(), b));
    }
    // Compact top-level primitives ([12, name, id, x, y]) become variable reporter blocks.
    for (id, b) in &order {
        let block = match b {
            Json::Object(o) => parse_block(id, o, &index, target, tname, blocks, bj)?,
            Json::Array(a) => {
                let mut blk = Block {
                    id: id.to_string(),
                    opcode: String::new(),
                    next: None,
                    parent: None,
                    inputs: Vec::new(),
                    fields: Vec::new(),
                    shadow: false,
                    top_level: true,
                    mutation: None,
                    target,
                };
                match compact_primitive(a) {
                    Some(Input::Variable { name, id }) => {
                        blk.opcode = "data_variable".into();
                        blk.fields.push(Field { name: "VARIABLE".into(), value: name, id: Some(id) });
                    }
                    Some(Input::List { name, id }) => {
                        blk.opcode = "data_listcontents".into();
                        blk.fields.push(Field { name: "LIST".into(), value: name, id: Some(id) });
                    }
                    _ => blk.opcode = "clowder_invalid".into(),
                }
                blk
            }
            _ => {
                return Err(format!("target {tname:?}: block {id:?} is neither an object nor an array"));
            }
        };
        blocks.push(block);
    }
    for (i, (_, _)) in order.iter().enumerate() {
        let bi = base + i as u32;
        let b = &blocks[bi as usize];
        if b.top_level && !b.shadow {
            scripts.push(bi);
        }
    }
    check_acyclic(blocks, base, tname)?;
    Ok(())
}

/// Follows `next` chains and input links from every block of the target and
/// rejects cycles (a malicious project could otherwise hang the interpreter).
fn check_acyclic(blocks: &[Block], base: u32, tname: &str) -> Result<(), String> {
    // Iterative DFS with colours over the edges next + input blocks.
    let n = blocks.len() - base as usize;
    let mut colour = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    for start in 0..n {
        if colour[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        colour[start] = 1;
        while let Some(&mut (node, ref mut edge)) = stack.last_mut() {
            let b = &blocks[base as usize + node];
            let succ = edge_at(b, *edge);
            *edge += 1;
            match succ {
                Some(s) => {
                    if s < base || (s - base) as usize >= n {
                        continue;
                    }
                    let si = (s - base) as usize;
                    match colour[si] {
                        0 => {
                            colour[si] = 1;
                            stack.push((si, 0));
                        }
                        1 => {
                            return Err(format!(
                                "target {tname:?}: block {:?} is part of a cycle in the block graph",
                                blocks[base as usize + si].id
                            ));
                        }
                        _ => {}
                    }
                }
                None => {
                    if *edge > b.inputs.len() + 1 {
                        colour[node] = 2;
                        stack.pop();
                    }
                }
            }
        }
    }
    Ok(())
}

/// The `i`-th outgoing edge of a block: 0 = next, then input blocks.
fn edge_at(b: &Block, i: usize) -> Option<BlockIdx> {
    if i == 0 {
        return b.next;
    }
    match b.inputs.get(i - 1) {
        Some((_, Input::Block(x))) => Some(*x),
        _ => None,
    }
}

fn compact_primitive(a: &[Json]) -> Option<Input> {
    let kind = a.first()?.as_u64()?;
    match kind {
        4..=8 => {
            let v = a.get(1)?;
            Some(Input::Lit(match v {
                Json::Number(n) => Lit::Num(n.as_f64().unwrap_or(0.0)),
                other => lit_of(other),
            }))
        }
        9 | 10 => Some(Input::Lit(lit_of(a.get(1)?))),
        11 => Some(Input::Broadcast { name: str_of(a.get(1))?, id: str_of(a.get(2)).unwrap_or_default() }),
        12 => Some(Input::Variable { name: str_of(a.get(1))?, id: str_of(a.get(2)).unwrap_or_default() }),
        13 => Some(Input::List { name: str_of(a.get(1))?, id: str_of(a.get(2)).unwrap_or_default() }),
        _ => None,
    }
}

fn parse_block(
    id: &str,
    o: &serde_json::Map<String, Json>,
    index: &HashMap<&str, BlockIdx>,
    target: u32,
    tname: &str,
    _blocks: &mut [Block],
    all: &serde_json::Map<String, Json>,
) -> Result<Block, String> {
    let opcode = match o.get("opcode") {
        Some(Json::String(s)) => s.clone(),
        _ => return Err(format!("target {tname:?}: block {id:?} has no opcode")),
    };
    let link = |v: Option<&Json>| -> Option<BlockIdx> {
        match v {
            Some(Json::String(s)) => index.get(s.as_str()).copied(),
            _ => None,
        }
    };
    let mut inputs = Vec::new();
    if let Some(Json::Object(inp)) = o.get("inputs") {
        for (iname, spec) in inp {
            inputs.push((iname.clone(), resolve_input(spec, index, all)));
        }
    }
    let mut fields = Vec::new();
    if let Some(Json::Object(fs)) = o.get("fields") {
        for (fname, spec) in fs {
            let (value, fid) = match spec {
                Json::Array(a) => (str_of(a.first()).unwrap_or_default(), str_of(a.get(1))),
                other => (str_of(Some(other)).unwrap_or_default(), None),
            };
            fields.push(Field { name: fname.clone(), value, id: fid });
        }
    }
    let mutation = match o.get("mutation") {
        Some(Json::Object(m)) => Some(parse_mutation(m)),
        _ => None,
    };
    Ok(Block {
        id: id.to_string(),
        opcode,
        next: link(o.get("next")),
        parent: link(o.get("parent")),
        inputs,
        fields,
        shadow: matches!(o.get("shadow"), Some(Json::Bool(true))),
        top_level: matches!(o.get("topLevel"), Some(Json::Bool(true))),
        mutation,
        target,
    })
}

/// Resolves `[1|2|3, block-or-primitive, shadow?]` to what the interpreter reads.
fn resolve_input(spec: &Json, index: &HashMap<&str, BlockIdx>, all: &serde_json::Map<String, Json>) -> Input {
    let Json::Array(a) = spec else { return Input::Empty };
    // The occupying value is a[1]: scratch-vm executes `input.block`, which is
    // a[1] for all three kinds ([1, x], [2, x], [3, x, shadow]); an obscured
    // shadow is never read. Only a dangling id in a[1] (scratch-vm would throw)
    // falls back to the shadow.
    let primary = a.get(1);
    let shadow = a.get(2);
    if matches!(primary, Some(Json::Null)) {
        return Input::Empty;
    }
    let pick = |v: Option<&Json>| -> Option<Input> {
        match v {
            Some(Json::String(bid)) => {
                let idx = *index.get(bid.as_str())?;
                // A shadow block holding a single field is a literal (math_number, text…).
                if let Some(Json::Object(b)) = all.get(bid.as_str())
                    && matches!(b.get("shadow"), Some(Json::Bool(true)))
                    && let Some(lit) = shadow_literal(b)
                {
                    return Some(Input::Lit(lit));
                }
                Some(Input::Block(idx))
            }
            Some(Json::Array(p)) => compact_primitive(p),
            _ => None,
        }
    };
    pick(primary).or_else(|| pick(shadow)).unwrap_or(Input::Empty)
}

/// The literal value of a shadow block like `math_number` or `text`.
fn shadow_literal(b: &serde_json::Map<String, Json>) -> Option<Lit> {
    let opcode = b.get("opcode")?.as_str()?;
    let field = match opcode {
        "math_number" | "math_positive_number" | "math_whole_number" | "math_integer" | "math_angle" => "NUM",
        "text" => "TEXT",
        "colour_picker" => "COLOUR",
        _ => return None,
    };
    let f = b.get("fields")?.as_object()?.get(field)?;
    let v = match f {
        Json::Array(a) => a.first()?,
        other => other,
    };
    Some(lit_of(v))
}

fn parse_mutation(m: &serde_json::Map<String, Json>) -> Mutation {
    // argumentids etc. are JSON arrays encoded as strings.
    let list = |key: &str| -> Vec<String> {
        match m.get(key) {
            Some(Json::String(s)) => match serde_json::from_str::<Json>(s) {
                Ok(Json::Array(a)) => a.iter().map(|v| str_of(Some(v)).unwrap_or_default()).collect(),
                _ => Vec::new(),
            },
            Some(Json::Array(a)) => a.iter().map(|v| str_of(Some(v)).unwrap_or_default()).collect(),
            _ => Vec::new(),
        }
    };
    let flag = |key: &str| -> Option<bool> {
        match m.get(key) {
            Some(Json::Bool(b)) => Some(*b),
            Some(Json::String(s)) => Some(s == "true"),
            _ => None,
        }
    };
    Mutation {
        proccode: str_of(m.get("proccode")).unwrap_or_default(),
        argument_ids: list("argumentids"),
        argument_names: list("argumentnames"),
        argument_defaults: list("argumentdefaults"),
        warp: flag("warp").unwrap_or(false),
        has_next: flag("hasnext"),
    }
}

impl Project {
    /// Loads a project file from disk.
    pub fn load_path(path: &std::path::Path, limits: &LoadLimits) -> Result<Project, LoadError> {
        let name = path.display().to_string();
        let meta =
            std::fs::metadata(path).map_err(|e| LoadError::Container { file: name.clone(), msg: e.to_string() })?;
        if meta.len() > limits.max_file_bytes {
            return Err(LoadError::Container {
                file: name,
                msg: format!("file is {} bytes, over the limit of {}", meta.len(), limits.max_file_bytes),
            });
        }
        let bytes = std::fs::read(path).map_err(|e| LoadError::Container { file: name.clone(), msg: e.to_string() })?;
        load(&bytes, &name, limits)
    }

    /// Index of the stage target.
    pub fn stage_index(&self) -> usize {
        self.targets.iter().position(|t| t.is_stage).unwrap_or(0)
    }

    /// The block at `idx`.
    pub fn block(&self, idx: BlockIdx) -> &Block {
        &self.blocks[idx as usize]
    }
}
