//! Projects cached on local disk by content hash.
//!
//! A project is fetched from the coordinator once per machine (not once per
//! run) and stored as `<hash>.<ext>`; every use checks the bytes against the
//! hash once per worker process, so a corrupted cache file is fetched again.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The default cache folder: `$CLOWDER_CACHE`, else `$XDG_CACHE_HOME/clowder/projects`,
/// else `~/.cache/clowder/projects`, else the temp folder.
pub fn default_cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CLOWDER_CACHE") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("clowder/projects");
    }
    if let Some(h) = std::env::var_os("HOME") {
        return PathBuf::from(h).join(".cache/clowder/projects");
    }
    std::env::temp_dir().join("clowder-projects")
}

/// The on-disk project cache.
#[derive(Debug)]
pub struct ProjectCache {
    dir: PathBuf,
    verified: Mutex<BTreeSet<String>>,
}

fn is_hex_hash(h: &str) -> bool {
    h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit())
}

impl ProjectCache {
    /// A cache in `dir` (created on first store).
    pub fn new(dir: PathBuf) -> Self {
        Self { dir, verified: Mutex::new(BTreeSet::new()) }
    }

    /// Where a project with this hash and file name is (or would be) cached.
    pub fn path_for(&self, hash: &str, file_name: &str) -> Result<PathBuf, String> {
        if !is_hex_hash(hash) {
            return Err(format!("project hash {hash:?} is not a blake3 hex digest"));
        }
        let lower = file_name.to_ascii_lowercase();
        // `.js`: the suite of a test run (crate::grading), fetched like a project.
        let ext = if lower.ends_with(".sb3") {
            "sb3"
        } else if lower.ends_with(".js") {
            "js"
        } else {
            "json"
        };
        Ok(self.dir.join(format!("{hash}.{ext}")))
    }

    /// The cached file if present and intact.
    pub fn get(&self, hash: &str, file_name: &str) -> Option<PathBuf> {
        let path = self.path_for(hash, file_name).ok()?;
        if self.verified.lock().ok()?.contains(hash) && path.is_file() {
            return Some(path);
        }
        let bytes = std::fs::read(&path).ok()?;
        if blake3::hash(&bytes).to_hex().as_str() != hash {
            let _ = std::fs::remove_file(&path);
            return None;
        }
        self.verified.lock().ok()?.insert(hash.to_string());
        Some(path)
    }

    /// Stores fetched bytes (checked against the hash) and returns the path.
    pub fn put(&self, hash: &str, file_name: &str, bytes: &[u8]) -> Result<PathBuf, String> {
        let path = self.path_for(hash, file_name)?;
        if blake3::hash(bytes).to_hex().as_str() != hash {
            return Err(format!("project {file_name}: fetched bytes do not match hash {hash}"));
        }
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("{}: {e}", self.dir.display()))?;
        // Unique temp name: several workers may share the cache folder.
        let tmp = self.dir.join(format!(".{hash}.{}.{:?}.tmp", std::process::id(), std::thread::current().id()));
        std::fs::write(&tmp, bytes).map_err(|e| format!("{}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, &path).map_err(|e| format!("{}: {e}", path.display()))?;
        if let Ok(mut v) = self.verified.lock() {
            v.insert(hash.to_string());
        }
        Ok(path)
    }

    /// The cache folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_checks_and_refetches_corrupted_files() {
        let dir = tempfile::tempdir().unwrap();
        let c = ProjectCache::new(dir.path().to_path_buf());
        let bytes = b"{\"targets\":[]}";
        let h = blake3::hash(bytes).to_hex().to_string();
        assert!(c.get(&h, "a.json").is_none());
        assert!(c.put(&h, "a.json", b"other").is_err());
        let p = c.put(&h, "a.json", bytes).unwrap();
        assert_eq!(c.get(&h, "a.json"), Some(p.clone()));
        std::fs::write(&p, b"corrupt").unwrap();
        let fresh = ProjectCache::new(dir.path().to_path_buf());
        assert!(fresh.get(&h, "a.json").is_none());
        assert!(c.path_for("../../etc/passwd", "x.json").is_err());
    }
}
