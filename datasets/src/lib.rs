//! Datasets of Scratch projects: finding the project files of a dataset and
//! identifying each by the hash of its bytes, dataset manifests
//! (`dataset.toml`) and per-project metrics. This is what the coordinator needs; the
//! download, sampling and statistics tools of the CLI are in `clowder-dataset-tools`.
//!
//! A dataset is a folder of `.sb3` / `project.json` files, optionally with a
//! manifest ([`manifest::MANIFEST_FILE`]). When the manifest is present it is
//! the dataset: [`discover`] returns exactly its entries (minus duplicates and
//! exclusions) and checks every file against the hash recorded there.

#![warn(missing_docs)]

pub mod manifest;
pub mod metrics;
pub mod sb3;

use std::path::{Path, PathBuf};

/// Largest project file accepted into a dataset (same bound as the VM loader).
pub const MAX_PROJECT_BYTES: u64 = 256 << 20;

/// One project file of a dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFile {
    /// Name used in results: the file name without `.sb3` / `.json` / `.project.json` / `.py`.
    pub name: String,
    /// Where the file is.
    pub path: PathBuf,
    /// blake3 of the file's bytes, hex.
    pub content_hash: String,
    /// Size in bytes.
    pub size: u64,
}

/// Errors while reading a dataset.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// The dataset path cannot be read.
    #[error("dataset {path}: {msg}")]
    Io {
        /// The path concerned.
        path: String,
        /// What went wrong.
        msg: String,
    },
    /// The manifest is malformed or does not match the files.
    #[error("dataset {path}: {msg}")]
    Manifest {
        /// The manifest or dataset path.
        path: String,
        /// What is wrong, and how to fix it.
        msg: String,
    },
}

/// True for file names that hold a Scratch project.
pub fn is_project_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".sb3") || (lower.ends_with(".json") && !lower.starts_with('.') && lower != "dataset.json")
}

/// The display name of a project file.
pub fn project_name(file_name: &str) -> String {
    // `.py`: modules of datasets for external generators (engine kind `command`).
    for ext in [".project.json", ".sb3", ".json", ".py"] {
        if let Some(stem) = file_name.strip_suffix(ext) {
            return stem.to_string();
        }
    }
    file_name.to_string()
}

/// Replaces a leading `$CLOWDER_CORPORA` / `${CLOWDER_CORPORA}` with the
/// variable's value (default `../shared/corpora`), as experiment files do.
pub fn expand_corpora(p: &str) -> String {
    for prefix in ["${CLOWDER_CORPORA}", "$CLOWDER_CORPORA"] {
        if let Some(rest) = p.strip_prefix(prefix) {
            let base = std::env::var("CLOWDER_CORPORA").unwrap_or_else(|_| "../shared/corpora".into());
            return format!("{base}{rest}");
        }
    }
    p.to_string()
}

/// The project files directly inside `dir` (not recursive), sorted by name.
/// Symbolic links to files count (sampling may link instead of copying).
pub fn list_project_files(dir: &Path) -> Result<Vec<PathBuf>, DatasetError> {
    let err = |msg: String| DatasetError::Io { path: dir.display().to_string(), msg };
    let mut v = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| err(e.to_string()))? {
        let entry = entry.map_err(|e| err(e.to_string()))?;
        let name = entry.file_name().to_string_lossy().to_string();
        // `metadata` follows links; a dangling link is skipped here and reported by the
        // loader only if a manifest names it.
        let is_file = std::fs::metadata(entry.path()).map(|m| m.is_file()).unwrap_or(false);
        if is_file && is_project_file(&name) {
            v.push(entry.path());
        }
    }
    v.sort();
    Ok(v)
}

/// Reads a project file with the dataset size bound.
pub fn read_project_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let size = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?.len();
    if size > MAX_PROJECT_BYTES {
        return Err(format!("{}: {size} bytes, over the limit of {MAX_PROJECT_BYTES}", path.display()));
    }
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// blake3 of `bytes`, hex: the content hash used in run identities.
pub fn content_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// Lists the projects of a dataset, sorted by file name, with their content
/// hashes. A single project file is a dataset of one.
///
/// When the folder holds a manifest (`dataset.toml`), the manifest decides:
/// its entries are returned in its order, except those marked as duplicates
/// (identical bytes would give identical runs with the same identity) or
/// excluded; each file must still have the hash recorded there, and (for a
/// manifest without `root`) every project file in the folder must be listed.
/// A mismatch is an error that says to re-run `clowder dataset scan`.
pub fn discover(path: &Path) -> Result<Vec<ProjectFile>, DatasetError> {
    let err = |msg: String| DatasetError::Io { path: path.display().to_string(), msg };
    let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
    if meta.is_dir() && path.join(manifest::MANIFEST_FILE).exists() {
        return manifest::discover_with_manifest(path);
    }
    let files: Vec<PathBuf> = if meta.is_file() { vec![path.to_path_buf()] } else { list_project_files(path)? };
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        let file_name = f.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let bytes = read_project_bytes(&f).map_err(err)?;
        out.push(ProjectFile {
            name: project_name(&file_name),
            content_hash: content_hash(&bytes),
            size: bytes.len() as u64,
            path: f,
        });
    }
    Ok(out)
}

/// Writes `bytes` to `path` atomically (temporary file in the same folder, then
/// rename), so an interrupted process never leaves a half-written file under
/// the final name.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    // Unique per thread, so concurrent writers of the same file do not clash.
    let tmp = dir.join(format!(".{name}.{}.{:?}.tmp", std::process::id(), std::thread::current().id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
