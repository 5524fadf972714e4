//! Dataset manifests: `dataset.toml` next to the project files.
//!
//! ```toml
//! [dataset]
//! format = 1
//! name = "random-sample"
//! root = "$CLOWDER_CORPORA/random-sample"  # optional: the files live elsewhere
//! source = "…"                              # defaults for entries that say nothing
//! licence = "…"
//!
//! [[project]]
//! file = "400001653_13-05-2021_11-04-44.json"
//! hash = "…"                 # blake3 of the file (as in run identities)
//! bytes = 5120
//! scratch_id = 400001653
//! title = "…"
//! duplicate_of = "…"         # set by scan: same bytes as that earlier file
//! exclude = "reason"         # set by hand: leave this project out of studies
//! size = { statements = 12, blocks = 30, sprites = 2, scripts = 3, … }
//! ```
//!
//! `clowder dataset scan` writes and refreshes it; the descriptive fields
//! (`scratch_id`, `title`, `author`, `source`, `licence`, `remix_parent`,
//! `exclude`) are kept across scans, everything else is recomputed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::metrics::{self, Metrics};
use crate::{DatasetError, ProjectFile, content_hash, list_project_files, project_name, read_project_bytes};

/// File name of the manifest inside a dataset folder.
pub const MANIFEST_FILE: &str = "dataset.toml";

/// Current manifest format version.
pub const FORMAT: u32 = 1;

/// Dataset-level information.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetInfo {
    /// Manifest format version.
    #[serde(default = "format_one")]
    pub format: u32,
    /// Dataset name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Free text.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Where the project files are, when not in the manifest's folder: a path
    /// relative to the manifest's folder, absolute, or starting with
    /// `$CLOWDER_CORPORA`. Lets a split (a list of hashes) live apart from the files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// Default source of the projects.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// Default licence note.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub licence: String,
    /// How this dataset was derived (the sampling command), if it was.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub derived_from: String,
}

fn format_one() -> u32 {
    FORMAT
}

impl Default for DatasetInfo {
    fn default() -> Self {
        Self {
            format: FORMAT,
            name: String::new(),
            description: String::new(),
            root: None,
            source: String::new(),
            licence: String::new(),
            derived_from: String::new(),
        }
    }
}

/// One project of the dataset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// File name inside the dataset folder (or `root`).
    pub file: String,
    /// blake3 of the file's bytes, hex.
    pub hash: String,
    /// File size.
    pub bytes: u64,
    /// Scratch project id, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scratch_id: Option<u64>,
    /// Project title.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// Author's user name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub author: String,
    /// Where the file came from.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// Licence note.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub licence: String,
    /// Scratch id of the project this one remixes, when it is a remix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remix_parent: Option<u64>,
    /// Set by scan: an earlier file (by name) with identical bytes. Duplicates
    /// are left out of studies (they would repeat the same runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<String>,
    /// Set by hand: why this project is left out of studies.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub exclude: String,
    /// Why the VM could not load the project (it stays in the dataset: its runs
    /// report `project_rejected`, which is a result too).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub load_error: String,
    /// Size metrics (absent when the project does not load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Metrics>,
}

impl Entry {
    /// True when studies use this entry.
    pub fn included(&self) -> bool {
        self.duplicate_of.is_none() && self.exclude.is_empty()
    }
}

/// A dataset manifest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Dataset-level information.
    #[serde(default)]
    pub dataset: DatasetInfo,
    /// The projects, sorted by file name.
    #[serde(default, rename = "project")]
    pub projects: Vec<Entry>,
}

const HEADER: &str = "\
# clowder dataset manifest, written by `clowder dataset scan`.
# Hashes are blake3 of the file bytes (the project hash of run identities).
# scan keeps scratch_id, title, author, source, licence, remix_parent and exclude;
# it recomputes everything else. Entries with duplicate_of or exclude are not run.
";

fn manifest_err(path: &Path, msg: impl Into<String>) -> DatasetError {
    DatasetError::Manifest { path: path.display().to_string(), msg: msg.into() }
}

/// True for a relative path inside the manifest's folder (or root): plain names separated
/// by `/`, none empty, `.` or `..`, no backslash. Manifest entries may not point outside;
/// a manifest with a `root` may list files in sub-folders of it (`codeclub/Game.sb3`).
fn inside_path(name: &str) -> bool {
    !name.is_empty() && !name.contains('\\') && name.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

impl Manifest {
    /// Reads `dir/dataset.toml`; `Ok(None)` when there is none.
    pub fn read(dir: &Path) -> Result<Option<Self>, DatasetError> {
        let path = dir.join(MANIFEST_FILE);
        if !path.exists() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path).map_err(|e| manifest_err(&path, e.to_string()))?;
        Self::parse(&text, &path).map(Some)
    }

    /// Parses manifest text; `path` names errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, DatasetError> {
        let m: Manifest = toml::from_str(text).map_err(|e| manifest_err(path, e.to_string()))?;
        if m.dataset.format != FORMAT {
            return Err(manifest_err(
                path,
                format!("format {} is not supported (expected {FORMAT})", m.dataset.format),
            ));
        }
        let mut seen = BTreeSet::new();
        for e in &m.projects {
            if !inside_path(&e.file) {
                return Err(manifest_err(
                    path,
                    format!("file {:?} must be a path inside the dataset (no \"..\", no leading /)", e.file),
                ));
            }
            if e.file.contains('/') && m.dataset.root.is_none() {
                return Err(manifest_err(path, format!("file {:?}: sub-folders need a `root`", e.file)));
            }
            if !seen.insert(e.file.as_str()) {
                return Err(manifest_err(path, format!("file {:?} is listed twice", e.file)));
            }
        }
        Ok(m)
    }

    /// The manifest as TOML text, with its explanatory header.
    pub fn to_toml(&self) -> Result<String, String> {
        let body = toml::to_string(self).map_err(|e| e.to_string())?;
        Ok(format!("{HEADER}\n{body}"))
    }

    /// Writes `dir/dataset.toml` atomically.
    pub fn write(&self, dir: &Path) -> Result<(), DatasetError> {
        let path = dir.join(MANIFEST_FILE);
        let text = self.to_toml().map_err(|e| manifest_err(&path, e))?;
        crate::write_atomic(&path, text.as_bytes()).map_err(|e| manifest_err(&path, e.to_string()))
    }

    /// The folder holding the project files, for a manifest in `dir`.
    pub fn files_dir(&self, dir: &Path) -> PathBuf {
        match &self.dataset.root {
            None => dir.to_path_buf(),
            Some(root) => {
                let expanded = crate::expand_corpora(root);
                if Path::new(&expanded).is_absolute() || &expanded != root {
                    PathBuf::from(expanded)
                } else {
                    dir.join(expanded)
                }
            }
        }
    }
}

/// [`crate::discover`] for a folder with a manifest.
pub(crate) fn discover_with_manifest(dir: &Path) -> Result<Vec<ProjectFile>, DatasetError> {
    let mpath = dir.join(MANIFEST_FILE);
    let m = Manifest::read(dir)?.ok_or_else(|| manifest_err(&mpath, "missing"))?;
    let files_dir = m.files_dir(dir);
    let rescan = "; run `clowder dataset scan` to refresh the manifest";
    if m.dataset.root.is_none() {
        let listed: BTreeSet<&str> = m.projects.iter().map(|e| e.file.as_str()).collect();
        let unlisted: Vec<String> = list_project_files(dir)?
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().to_string()))
            .filter(|n| !listed.contains(n.as_str()))
            .collect();
        if !unlisted.is_empty() {
            let shown: Vec<&str> = unlisted.iter().take(5).map(String::as_str).collect();
            return Err(manifest_err(
                &mpath,
                format!("{} project file(s) are not in the manifest ({}){rescan}", unlisted.len(), shown.join(", ")),
            ));
        }
    }
    let mut entries: Vec<&Entry> = m.projects.iter().filter(|e| e.included()).collect();
    entries.sort_by(|a, b| a.file.cmp(&b.file));
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let path = files_dir.join(&e.file);
        let bytes = read_project_bytes(&path).map_err(|msg| manifest_err(&mpath, format!("{msg}{rescan}")))?;
        let hash = content_hash(&bytes);
        if hash != e.hash {
            return Err(manifest_err(
                &mpath,
                format!(
                    "{} has changed since the manifest was written (hash {hash}, manifest {}){rescan}",
                    e.file, e.hash
                ),
            ));
        }
        out.push(ProjectFile { name: project_name(&e.file), content_hash: hash, size: bytes.len() as u64, path });
    }
    Ok(out)
}

/// Descriptive metadata that scan keeps and fetch supplies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Descriptive {
    /// Scratch project id.
    pub scratch_id: Option<u64>,
    /// Title.
    pub title: String,
    /// Author.
    pub author: String,
    /// Source.
    pub source: String,
    /// Licence note.
    pub licence: String,
    /// Remix parent id.
    pub remix_parent: Option<u64>,
}

/// What a scan did.
#[derive(Debug, Clone, Default)]
pub struct ScanReport {
    /// Entries in the new manifest.
    pub projects: usize,
    /// Files that were not in the previous manifest.
    pub added: Vec<String>,
    /// Entries whose files are gone (dropped from the manifest).
    pub removed: Vec<String>,
    /// Files whose bytes changed since the previous manifest.
    pub changed: Vec<String>,
    /// (file, earlier file with the same bytes).
    pub duplicates: Vec<(String, String)>,
    /// Distinct project names used by more than one file (`a.sb3` and `a.json`):
    /// results would not tell them apart.
    pub name_clashes: Vec<String>,
    /// (file, loader error).
    pub load_errors: Vec<(String, String)>,
}

/// The Scratch id a file name starts with (`400001653_13-05-2021.json`,
/// `123456.sb3`), if it clearly does.
pub fn id_from_file_name(file: &str) -> Option<u64> {
    let stem = project_name(file);
    let digits: String = stem.chars().take_while(char::is_ascii_digit).collect();
    let rest = &stem[digits.len()..];
    if digits.is_empty() || digits.len() > 12 || !(rest.is_empty() || rest.starts_with('_')) {
        return None;
    }
    digits.parse().ok()
}

/// Reads a corpora-style `MANIFEST.tsv` (`file, source_repo, path_in_repo,
/// commit, license`, or `path` and `licence`) into descriptive metadata by file name;
/// absent → empty.
fn read_corpora_tsv(dir: &Path) -> BTreeMap<String, Descriptive> {
    let mut out = BTreeMap::new();
    let Ok(text) = std::fs::read_to_string(dir.join("MANIFEST.tsv")) else { return out };
    let mut lines = text.lines();
    let Some(header) = lines.next() else { return out };
    let cols: Vec<&str> = header.split('\t').collect();
    // The corpora spell two columns two ways (whisker-rq1: `path_in_repo`, `license`;
    // codeclub: `path`, `licence`).
    let col = |names: &[&str]| cols.iter().position(|c| names.contains(c));
    let (Some(f), repo, path, commit, lic) = (
        col(&["file"]),
        col(&["source_repo"]),
        col(&["path_in_repo", "path"]),
        col(&["commit"]),
        col(&["license", "licence"]),
    ) else {
        return out;
    };
    for line in lines {
        let v: Vec<&str> = line.split('\t').collect();
        let get = |i: Option<usize>| i.and_then(|i| v.get(i)).map(|s| s.trim()).unwrap_or("");
        let Some(file) = v.get(f) else { continue };
        let source = match (get(repo), get(path), get(commit)) {
            ("", _, _) => String::new(),
            (r, p, c) => format!("github:{r}/{p}@{c}"),
        };
        out.insert(file.to_string(), Descriptive { source, licence: get(lic).to_string(), ..Default::default() });
    }
    out
}

/// (content hash, size, metrics or load error) of one file.
type Measured = (String, u64, Result<Metrics, String>);

/// Scans a dataset folder and writes its manifest.
///
/// Without a previous manifest (or one without `root`), the project files in
/// `dir` are the dataset: new files are added, missing ones dropped. With a
/// `root`, the listed entries are the dataset and are refreshed in place (a
/// missing file is an error). `overlay` supplies descriptive metadata by file
/// name (fetch uses it); it wins over what the manifest had.
pub fn scan(dir: &Path, overlay: &BTreeMap<String, Descriptive>) -> Result<(Manifest, ScanReport), DatasetError> {
    let previous = Manifest::read(dir)?;
    let mut report = ScanReport::default();
    let mut manifest = previous.clone().unwrap_or_default();
    manifest.dataset.format = FORMAT;
    if manifest.dataset.name.is_empty() {
        manifest.dataset.name = dir
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().to_string()))
            .unwrap_or_default();
    }
    let files_dir = manifest.files_dir(dir);
    let old: BTreeMap<String, Entry> =
        manifest.projects.iter().map(|e| (e.file.clone(), e.clone())).collect::<BTreeMap<_, _>>();
    let files: Vec<String> = if manifest.dataset.root.is_some() {
        old.keys().cloned().collect()
    } else {
        list_project_files(dir)?.iter().filter_map(|p| p.file_name().map(|n| n.to_string_lossy().to_string())).collect()
    };
    let present: BTreeSet<&String> = files.iter().collect();
    report.removed = old.keys().filter(|k| !present.contains(k)).cloned().collect();
    // MANIFEST.tsv of the root and of every sub-folder the manifest lists files in.
    let mut tsv = read_corpora_tsv(&files_dir);
    let folders: BTreeSet<&str> = files.iter().filter_map(|f| f.rsplit_once('/').map(|(d, _)| d)).collect();
    for d in folders {
        for (k, v) in read_corpora_tsv(&files_dir.join(d)) {
            tsv.insert(format!("{d}/{k}"), v);
        }
    }

    // Hashing and measuring dominate; files are independent. The result keeps file order.
    let measured: Vec<Result<Measured, String>> = files
        .par_iter()
        .map(|f| {
            let bytes = read_project_bytes(&files_dir.join(f))?;
            Ok((content_hash(&bytes), bytes.len() as u64, metrics::measure(&bytes, f)))
        })
        .collect();

    let mut first_by_hash: BTreeMap<String, String> = BTreeMap::new();
    let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
    let mut projects = Vec::with_capacity(files.len());
    for (f, m) in files.iter().zip(measured) {
        let (hash, bytes, size) = m.map_err(|msg| DatasetError::Io { path: dir.display().to_string(), msg })?;
        let mut e = match old.get(f) {
            Some(prev) => {
                if prev.hash != hash {
                    report.changed.push(f.clone());
                }
                prev.clone()
            }
            None => {
                report.added.push(f.clone());
                Entry { file: f.clone(), ..Default::default() }
            }
        };
        e.hash = hash;
        e.bytes = bytes;
        if e.scratch_id.is_none() {
            e.scratch_id = id_from_file_name(f);
        }
        if let Some(t) = tsv.get(f) {
            fill(&mut e.source, &t.source);
            fill(&mut e.licence, &t.licence);
        }
        if let Some(d) = overlay.get(f) {
            e.scratch_id = d.scratch_id.or(e.scratch_id);
            e.remix_parent = d.remix_parent.or(e.remix_parent);
            for (dst, src) in [
                (&mut e.title, &d.title),
                (&mut e.author, &d.author),
                (&mut e.source, &d.source),
                (&mut e.licence, &d.licence),
            ] {
                if !src.is_empty() {
                    dst.clone_from(src);
                }
            }
        }
        match size {
            Ok(s) => {
                e.size = Some(s);
                e.load_error.clear();
            }
            Err(msg) => {
                e.size = None;
                report.load_errors.push((f.clone(), msg.clone()));
                e.load_error = msg;
            }
        }
        e.duplicate_of = None;
        match first_by_hash.get(&e.hash) {
            Some(first) => {
                report.duplicates.push((f.clone(), first.clone()));
                e.duplicate_of = Some(first.clone());
            }
            None => {
                first_by_hash.insert(e.hash.clone(), f.clone());
            }
        }
        *by_name.entry(project_name(f)).or_default() += 1;
        projects.push(e);
    }
    report.name_clashes = by_name.into_iter().filter(|(_, n)| *n > 1).map(|(k, _)| k).collect();
    report.projects = projects.len();
    manifest.projects = projects;
    manifest.write(dir)?;
    Ok((manifest, report))
}

fn fill(dst: &mut String, src: &str) {
    if dst.is_empty() {
        src.clone_into(dst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn smoke() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("smoke")
    }

    #[test]
    fn corpora_tsv_in_both_spellings() {
        let dir = tempfile::tempdir().unwrap();
        let tsv = "file\tsource_repo\tpath\tcommit\tlicence\tbytes\nA.sb3\to/r\ten/A B.sb3\tc0ffee\tCC BY-SA 4.0\t1\n";
        std::fs::write(dir.path().join("MANIFEST.tsv"), tsv).unwrap();
        let m = read_corpora_tsv(dir.path());
        assert_eq!(m["A.sb3"].source, "github:o/r/en/A B.sb3@c0ffee");
        assert_eq!(m["A.sb3"].licence, "CC BY-SA 4.0");
        let tsv = "file\tsource_repo\tpath_in_repo\tcommit\tlicense\nB.sb3\to/r\tx/B.sb3\tbeef\tGPL-3.0\n";
        std::fs::write(dir.path().join("MANIFEST.tsv"), tsv).unwrap();
        let m = read_corpora_tsv(dir.path());
        assert_eq!(m["B.sb3"].source, "github:o/r/x/B.sb3@beef");
        assert_eq!(m["B.sb3"].licence, "GPL-3.0");
    }

    fn copy_smoke(dir: &Path) {
        for f in list_project_files(&smoke()).unwrap() {
            std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
        }
    }

    #[test]
    fn ids_from_file_names() {
        assert_eq!(id_from_file_name("400001653_13-05-2021_11-04-44.json"), Some(400001653));
        assert_eq!(id_from_file_name("123.sb3"), Some(123));
        assert_eq!(id_from_file_name("Pong.sb3"), None);
        assert_eq!(id_from_file_name("12abc.sb3"), None);
    }

    #[test]
    fn scan_writes_sorted_hashed_entries_and_flags_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        copy_smoke(dir.path());
        std::fs::copy(smoke().join("counter.json"), dir.path().join("zz-copy.json")).unwrap();
        let (m, r) = scan(dir.path(), &BTreeMap::new()).unwrap();
        let files: Vec<&str> = m.projects.iter().map(|e| e.file.as_str()).collect();
        let mut sorted = files.clone();
        sorted.sort_unstable();
        assert_eq!(files, sorted);
        assert_eq!(m.projects.len(), 6);
        assert_eq!(r.duplicates, vec![("zz-copy.json".to_string(), "counter.json".to_string())]);
        let dup = m.projects.iter().find(|e| e.file == "zz-copy.json").unwrap();
        assert_eq!(dup.duplicate_of.as_deref(), Some("counter.json"));
        let counter = m.projects.iter().find(|e| e.file == "counter.json").unwrap();
        assert_eq!(counter.hash, content_hash(&std::fs::read(smoke().join("counter.json")).unwrap()));
        assert!(counter.size.as_ref().is_some_and(|s| s.statements > 0));
        // discover honours the manifest: the duplicate is left out, hashes match plain discovery.
        let found = crate::discover(dir.path()).unwrap();
        assert_eq!(found.len(), 5);
        assert!(found.iter().all(|p| p.name != "zz-copy"));
        // Rescanning an unchanged folder gives the same bytes.
        let first = std::fs::read(dir.path().join(MANIFEST_FILE)).unwrap();
        let (_, r2) = scan(dir.path(), &BTreeMap::new()).unwrap();
        assert!(r2.added.is_empty() && r2.changed.is_empty() && r2.removed.is_empty());
        assert_eq!(first, std::fs::read(dir.path().join(MANIFEST_FILE)).unwrap());
    }

    #[test]
    fn scan_keeps_hand_edits_and_discover_rejects_stale_manifests() {
        let dir = tempfile::tempdir().unwrap();
        copy_smoke(dir.path());
        let (mut m, _) = scan(dir.path(), &BTreeMap::new()).unwrap();
        m.projects[0].title = "Hand-written title".into();
        m.projects[1].exclude = "too slow".into();
        m.write(dir.path()).unwrap();
        let (m2, _) = scan(dir.path(), &BTreeMap::new()).unwrap();
        assert_eq!(m2.projects[0].title, "Hand-written title");
        assert_eq!(m2.projects[1].exclude, "too slow");
        assert_eq!(crate::discover(dir.path()).unwrap().len(), 4);

        // A changed file: discover refuses until the manifest is refreshed.
        let f = dir.path().join(&m2.projects[0].file);
        let mut bytes = std::fs::read(&f).unwrap();
        bytes.push(b'\n');
        std::fs::write(&f, bytes).unwrap();
        let err = crate::discover(dir.path()).unwrap_err().to_string();
        assert!(err.contains("has changed") && err.contains("clowder dataset scan"), "{err}");
        let (_, r) = scan(dir.path(), &BTreeMap::new()).unwrap();
        assert_eq!(r.changed, vec![m2.projects[0].file.clone()]);
        assert_eq!(crate::discover(dir.path()).unwrap().len(), 4);

        // An unlisted file is an error too.
        std::fs::write(dir.path().join("new.json"), b"{}").unwrap();
        let err = crate::discover(dir.path()).unwrap_err().to_string();
        assert!(err.contains("new.json") && err.contains("not in the manifest"), "{err}");
        let (_, r) = scan(dir.path(), &BTreeMap::new()).unwrap();
        assert_eq!(r.added, vec!["new.json".to_string()]);
        assert_eq!(r.load_errors.len(), 1, "an empty object is not a project: {:?}", r.load_errors);
        // Unloadable projects stay in the dataset (their runs are rejected with the reason).
        assert_eq!(crate::discover(dir.path()).unwrap().len(), 5);
    }

    #[test]
    fn a_manifest_with_root_lists_files_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let split = dir.path().join("split");
        std::fs::create_dir(&split).unwrap();
        let text = format!(
            "[dataset]\nroot = {:?}\n\n[[project]]\nfile = \"guess.json\"\nhash = \"{}\"\nbytes = 0\n",
            smoke().display().to_string(),
            content_hash(&std::fs::read(smoke().join("guess.json")).unwrap())
        );
        std::fs::write(split.join(MANIFEST_FILE), text).unwrap();
        let found = crate::discover(&split).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].name, "guess");
        assert_eq!(found[0].path, smoke().join("guess.json"));
        // scan refreshes the listed entries only.
        let (m, r) = scan(&split, &BTreeMap::new()).unwrap();
        assert_eq!(m.projects.len(), 1);
        assert!(r.added.is_empty());
        assert!(m.projects[0].bytes > 0 && m.projects[0].size.is_some());
    }

    #[test]
    fn hostile_manifest_entries_are_rejected() {
        for bad in ["../x.json", "/etc/passwd", "a/../../b.json", "a//b.json", "a\\b.json", "./a.json"] {
            let text = format!("[[project]]\nfile = {bad:?}\nhash = \"h\"\nbytes = 1\n");
            let err = Manifest::parse(&text, Path::new("dataset.toml")).unwrap_err().to_string();
            assert!(err.contains("inside the dataset"), "{bad}: {err}");
        }
        // Sub-folders only under a root (the files are then someone else's corpus).
        let text = "[[project]]\nfile = \"a/b.json\"\nhash = \"h\"\nbytes = 1\n";
        let err = Manifest::parse(text, Path::new("dataset.toml")).unwrap_err().to_string();
        assert!(err.contains("need a `root`"), "{err}");
        let rooted = format!("[dataset]\nformat = {FORMAT}\nroot = \"$CLOWDER_CORPORA\"\n{text}");
        assert!(Manifest::parse(&rooted, Path::new("dataset.toml")).is_ok());
        let err =
            Manifest::parse("[[project]]\nfile = \"a.json\"\nhash = \"h\"\nbytes = 1\ntitel = \"x\"\n", Path::new("d"))
                .unwrap_err()
                .to_string();
        assert!(err.contains("titel"), "{err}");
    }
}
