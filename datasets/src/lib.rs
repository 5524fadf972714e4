//! Datasets of Scratch projects: finding the project files of a dataset and
//! identifying each by the hash of its bytes.

#![warn(missing_docs)]

use std::path::{Path, PathBuf};

/// Largest project file accepted into a dataset (same bound as the VM loader).
pub const MAX_PROJECT_BYTES: u64 = 256 << 20;

/// One project file of a dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFile {
    /// Name used in results: the file name without `.sb3` / `.json` / `.project.json`.
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
}

/// True for file names that hold a Scratch project.
pub fn is_project_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".sb3") || (lower.ends_with(".json") && !lower.starts_with('.') && lower != "dataset.json")
}

/// The display name of a project file.
pub fn project_name(file_name: &str) -> String {
    for ext in [".project.json", ".sb3", ".json"] {
        if let Some(stem) = file_name.strip_suffix(ext) {
            return stem.to_string();
        }
    }
    file_name.to_string()
}

/// Lists the projects of a dataset folder (not recursive), sorted by file name,
/// with their content hashes. A single project file is a dataset of one.
pub fn discover(path: &Path) -> Result<Vec<ProjectFile>, DatasetError> {
    let err = |msg: String| DatasetError::Io { path: path.display().to_string(), msg };
    let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
    let mut files: Vec<PathBuf> = if meta.is_file() {
        vec![path.to_path_buf()]
    } else {
        let mut v = Vec::new();
        for entry in std::fs::read_dir(path).map_err(|e| err(e.to_string()))? {
            let entry = entry.map_err(|e| err(e.to_string()))?;
            let name = entry.file_name().to_string_lossy().to_string();
            if entry.file_type().map(|t| t.is_file()).unwrap_or(false) && is_project_file(&name) {
                v.push(entry.path());
            }
        }
        v
    };
    files.sort();
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        let file_name = f.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let size = std::fs::metadata(&f).map_err(|e| err(format!("{}: {e}", f.display())))?.len();
        if size > MAX_PROJECT_BYTES {
            return Err(err(format!("{}: {size} bytes, over the limit of {MAX_PROJECT_BYTES}", f.display())));
        }
        let bytes = std::fs::read(&f).map_err(|e| err(format!("{}: {e}", f.display())))?;
        out.push(ProjectFile {
            name: project_name(&file_name),
            content_hash: blake3::hash(&bytes).to_hex().to_string(),
            size,
            path: f,
        });
    }
    Ok(out)
}
