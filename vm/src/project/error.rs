//! Loading limits and load errors.

use std::fmt;

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
    /// substacks in C blocks), so that recursive evaluation is bounded: 1 000 levels take
    /// under 1 MiB of stack (a spawned thread has 2); real projects nest up to 740.
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
            max_block_depth: 1_000,
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
    pub(crate) fn new(file: &str, kind: LoadErrorKind, msg: impl Into<String>) -> Self {
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
