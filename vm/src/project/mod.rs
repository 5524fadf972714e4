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
//!   whose `next` or input slot holds it), except a reporter held in several
//!   input slots ([`Project::shared`]: generated files; its parent is the first
//!   holder); there are no cycles, and input nesting is at most
//!   [`LoadLimits::max_block_depth`] deep. So every walk terminates and
//!   recursion over inputs is bounded. [`Block::parent`] is computed from that
//!   graph; the file's `parent` fields are not trusted (scratch-vm does not use
//!   them to execute either).
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
//! scratch-vm refuses files that fail its JSON schema. A block that breaks the
//! schema's block rules (property types, input arrays, primitives, top-level
//! variable and list reporters; `schema.rs`) is a load error here too. For the
//! other rules we accept a superset: wherever scratch-vm accepts a file we build
//! what it builds; for values its schema would reject we apply a fallback and
//! record a line in [`Project::warnings`]. Structural nonsense is rejected with a
//! [`LoadError`] naming the file, target and block: a root that is not an
//! object, no stage or a stage that is not the first target, a second stage,
//! a target without a name or without costumes, `blocks` that is not an
//! object, a block that is neither an object nor an array or has no string
//! opcode, a block shared through a `next`, a substack or a prototype slot, cyclic block
//! links, and anything over a [`LoadLimits`].
//! Scratch 2 (`.sb2`), Scratch 1.4 (`.sb`) and sprite files are rejected with
//! their own [`LoadErrorKind`].
//!
//! A file that breaks a rule of scratch-vm's project schema is refused as
//! scratch-vm refuses it (`schema.rs`). Value-level fallbacks, for what the
//! schema lets through or where a value is missing: a property left out takes
//! scratch-vm's default (x 0, y 0, direction 90, size 100, visible, volume 100,
//! tempo 60, video transparency 50, video state `on`, rotation style `all
//! around`); a variable saved without a value is `undefined`; a
//! `null`/missing literal or field value reads as `""`; an unparsable
//! `argumentids`/`argumentnames`/`argumentdefaults` is empty (scratch-vm
//! would throw when the procedure is called); a link to a missing block is absent (`next`) or
//! [`Input::Empty`] (scratch-vm throws a TypeError each time such an input is
//! evaluated); a sound with a non-positive or non-finite `rate` gets 48 000
//! and a negative `sampleCount` 0; `currentCostume` is floored and clamped;
//! lone UTF-16 surrogates in strings become U+FFFD; invalid UTF-8 is decoded
//! lossily; a UTF-8 byte-order mark is skipped. Variables referenced by
//! blocks but not declared are not created here: scratch-vm creates them on
//! first lookup (`lookupOrCreateVariable`, on the executing target), which the
//! interpreter reproduces. Numbers beyond the double range (`1e400`) are a JSON
//! error (Scratch never writes them: `JSON.stringify(Infinity)` is `null`).

mod blocks;
mod check;
mod container;
mod error;
pub mod json;
mod loader;
mod model;
mod schema;
mod wav;

pub use error::{LoadError, LoadErrorKind, LoadLimits};
pub use model::*;
pub use wav::{WavKind, WavShape};

use loader::Loader;
use std::collections::BTreeMap;

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
    let mut ld = Loader { file: name, limits, warnings: Vec::new(), dropped_warnings: 0, shared: Vec::new() };
    let (text, utf8) = json_text(json_slice);
    if let Some(e) = utf8 {
        ld.warn(format!("project.json is not valid UTF-8 ({e}); decoded with replacement characters"));
    }
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
        // Whisker's durations follow the audio a sound holds (`crate::whisker::sound_secs`).
        let mut shapes: BTreeMap<String, Option<wav::WavShape>> = BTreeMap::new();
        for t in &mut project.targets {
            for s in &mut t.sounds {
                if !s.data_format.eq_ignore_ascii_case("wav") {
                    continue;
                }
                s.wav = *shapes.entry(s.md5ext.clone()).or_insert_with(|| {
                    sb3.head_and_len(&s.md5ext, wav::HEAD_BYTES, limits).and_then(|(head, len)| wav::shape(&head, len))
                });
            }
        }
    }
    project.content_hash = content_hash;
    project.warnings = ld.finish_warnings();
    Ok(project)
}

/// `project.json` bytes as text: without a byte-order mark, invalid UTF-8 replaced (the
/// error is returned for a warning).
fn json_text(bytes: &[u8]) -> (std::borrow::Cow<'_, str>, Option<std::str::Utf8Error>) {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(t) => (std::borrow::Cow::Borrowed(t), None),
        Err(e) => (String::from_utf8_lossy(bytes), Some(e)),
    }
}

/// `project.json` bytes as the loader reads them (same limits, same JS property order), as
/// a tree to edit and write back, e.g. a mutant for another tool to run.
pub fn document(json_bytes: &[u8], limits: &LoadLimits) -> Result<json::J, String> {
    if json_bytes.len() as u64 > limits.max_json_bytes {
        return Err(format!("project.json is {} bytes, over the limit of {}", json_bytes.len(), limits.max_json_bytes));
    }
    let (text, _) = json_text(json_bytes);
    json::check_depth(text.as_bytes(), limits.max_json_depth).map_err(|m| format!("project.json: {m}"))?;
    json::parse(&text).map_err(|m| format!("project.json is not valid JSON: {m}"))
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

#[cfg(test)]
mod tests;
