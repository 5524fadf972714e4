//! Seeded, deterministic sampling: subsets of a dataset (`clowder dataset
//! sample`) and random project-id lists built the way the Whisker paper built
//! its Random1000 set (`clowder dataset ids`).
//!
//! A dataset sample ranks every project by a keyed hash of (seed, project
//! content hash) and keeps the `n` smallest. The choice therefore depends only
//! on the seed and on the projects' bytes, not on file names, file order or
//! the platform, and the sample for `n` is contained in the sample for `n + 1`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clowder_vm::rng::SplitMix64;

use clowder_datasets::manifest::{self, Entry, MANIFEST_FILE, Manifest};
use clowder_datasets::{DatasetError, discover};

/// How the sampled files get into the output folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Copy the files.
    Copy,
    /// Hard-link the files (copy when linking fails, e.g. across file systems).
    Link,
    /// No files: the output manifest's `root` points at the source folder, so a
    /// split can be committed as a list of hashes without copying any project.
    Reference,
}

/// What to sample.
#[derive(Debug, Clone)]
pub struct SampleOptions {
    /// Projects to keep.
    pub n: usize,
    /// Seed of the ranking.
    pub seed: u64,
    /// How files are placed.
    pub mode: Mode,
    /// Leave out remixes (projects whose manifest entry has a `remix_parent`),
    /// as the paper sampled only non-remixes.
    pub exclude_remixes: bool,
    /// Leave out projects the VM cannot load (manifest `load_error`, or loaded here
    /// when there is no manifest).
    pub exclude_unloadable: bool,
    /// Also write the projects not chosen to this folder (a disjoint split).
    pub rest: Option<PathBuf>,
}

/// What sampling did.
#[derive(Debug, Clone)]
pub struct SampleReport {
    /// Eligible projects (after filters).
    pub candidates: usize,
    /// Projects left out by the filters.
    pub filtered: usize,
    /// Files of the sample, sorted.
    pub chosen: Vec<String>,
    /// Projects written to `rest`.
    pub rest: usize,
}

/// The rank of a project in the sample for `seed`: smaller is chosen first.
pub fn rank(seed: u64, content_hash: &str) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key("clowder dataset sample v1");
    h.update(&seed.to_le_bytes());
    h.update(content_hash.as_bytes());
    *h.finalize().as_bytes()
}

fn io(path: &Path, e: impl std::fmt::Display) -> DatasetError {
    DatasetError::Io { path: path.display().to_string(), msg: e.to_string() }
}

/// Samples `opts.n` projects of the dataset `source` into `out` (which must be
/// absent or empty). `source_label` is how the source is named in the output
/// manifest's `root` in [`Mode::Reference`] (e.g. `$CLOWDER_CORPORA/random-sample`,
/// kept verbatim so the split works on any machine); other modes ignore it.
pub fn sample(
    source: &Path,
    source_label: &str,
    out: &Path,
    opts: &SampleOptions,
) -> Result<SampleReport, DatasetError> {
    let projects = discover(source)?;
    let src_manifest = if source.is_dir() { Manifest::read(source)? } else { None };
    let entries: BTreeMap<String, Entry> = src_manifest
        .as_ref()
        .map(|m| m.projects.iter().map(|e| (e.file.clone(), e.clone())).collect())
        .unwrap_or_default();
    let mut candidates = Vec::new();
    let mut filtered = 0;
    for p in projects {
        let file = p.path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let entry = entries.get(&file).cloned().unwrap_or_else(|| Entry {
            file: file.clone(),
            hash: p.content_hash.clone(),
            bytes: p.size,
            ..Default::default()
        });
        // Without a manifest entry, loadability is checked here.
        let unloadable = opts.exclude_unloadable
            && (!entry.load_error.is_empty()
                || (!entries.contains_key(&file)
                    && clowder_datasets::read_project_bytes(&p.path)
                        .and_then(|b| clowder_datasets::metrics::measure(&b, &file))
                        .is_err()));
        if (opts.exclude_remixes && entry.remix_parent.is_some()) || unloadable {
            filtered += 1;
            continue;
        }
        candidates.push((rank(opts.seed, &p.content_hash), file, p.path, entry));
    }
    if opts.exclude_remixes && src_manifest.is_none() {
        return Err(DatasetError::Manifest {
            path: source.display().to_string(),
            msg: "--exclude-remixes needs a manifest with remix_parent (run `clowder dataset scan` or fetch)".into(),
        });
    }
    if opts.n > candidates.len() {
        return Err(DatasetError::Manifest {
            path: source.display().to_string(),
            msg: format!("asked for {} projects but only {} are eligible", opts.n, candidates.len()),
        });
    }
    candidates.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    let rest: Vec<_> = candidates.split_off(opts.n);
    let n_candidates = candidates.len() + rest.len();
    let filters = match (opts.exclude_remixes, opts.exclude_unloadable) {
        (false, false) => String::new(),
        (true, false) => ", remixes excluded".into(),
        (false, true) => ", unloadable excluded".into(),
        (true, true) => ", remixes and unloadable excluded".into(),
    };
    let describe = |what: &str, k: usize| {
        format!(
            "{what} {k} of {n_candidates} eligible projects of {source_label} \
             (clowder dataset sample --n {} --seed {}{filters}; blake3 rank)",
            opts.n, opts.seed
        )
    };
    let chosen: Vec<String> = {
        let mut v: Vec<String> = candidates.iter().map(|c| c.1.clone()).collect();
        v.sort();
        v
    };
    write_split(source, source_label, out, &candidates, opts.mode, describe("sample of", candidates.len()))?;
    if let Some(rest_dir) = &opts.rest {
        write_split(source, source_label, rest_dir, &rest, opts.mode, describe("rest:", rest.len()))?;
    }
    Ok(SampleReport { candidates: n_candidates, filtered, chosen, rest: rest.len() })
}

type Candidate = ([u8; 32], String, PathBuf, Entry);

fn write_split(
    source: &Path,
    source_label: &str,
    out: &Path,
    items: &[Candidate],
    mode: Mode,
    derived_from: String,
) -> Result<(), DatasetError> {
    if out.exists() && std::fs::read_dir(out).map_err(|e| io(out, e))?.next().is_some() {
        return Err(io(out, "output folder exists and is not empty"));
    }
    std::fs::create_dir_all(out).map_err(|e| io(out, e))?;
    let mut m = Manifest::default();
    m.dataset.name = out.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    m.dataset.derived_from = derived_from;
    let portable = |s: &str| s.starts_with('$') || Path::new(s).is_absolute();
    // Where the source's files really are: its own `root` when it is a split itself.
    let (mut files_dir, mut label) = (source.to_path_buf(), source_label.to_string());
    if let Some(src) = Manifest::read(source).ok().flatten() {
        if let Some(root) = &src.dataset.root {
            files_dir = src.files_dir(source);
            label = root.clone();
        }
        m.dataset.source = src.dataset.source;
        m.dataset.licence = src.dataset.licence;
    }
    if mode == Mode::Reference {
        if !portable(&label) {
            label = std::fs::canonicalize(&files_dir).map_err(|e| io(&files_dir, e))?.display().to_string();
        }
        m.dataset.root = Some(label);
    }
    let mut items: Vec<&Candidate> = items.iter().collect();
    items.sort_by(|a, b| a.1.cmp(&b.1));
    for (_, file, path, entry) in items {
        if mode != Mode::Reference {
            let dst = out.join(file);
            let linked = mode == Mode::Link && std::fs::hard_link(path, &dst).is_ok();
            if !linked {
                std::fs::copy(path, &dst).map_err(|e| io(&dst, e))?;
            }
        }
        m.projects.push(entry.clone());
    }
    m.write(out)?;
    // Measures the entries and checks them against the files (also in reference mode).
    manifest::scan(out, &BTreeMap::new())?;
    debug_assert!(out.join(MANIFEST_FILE).exists());
    Ok(())
}

/// A uniformly distributed integer in `[0, bound)` (rejection sampling: no modulo bias).
fn below(rng: &mut SplitMix64, bound: u64) -> u64 {
    if bound == 0 {
        return 0;
    }
    let zone = u64::MAX - (u64::MAX % bound);
    loop {
        let x = rng.next_u64();
        if x < zone {
            return x % bound;
        }
    }
}

/// Random project ids as in the Whisker paper (§6.1.2): `batches` start ids
/// drawn uniformly from the half-open `ranges` (weighted by their length),
/// each followed by `batch_size − 1` consecutive ids (clipped to its range).
/// The union is returned sorted. SplitMix64 seeded with `seed` draws the
/// starts, so the list is the same on every machine.
pub fn random_ids(ranges: &[(u64, u64)], batches: u64, batch_size: u64, seed: u64) -> Result<Vec<u64>, String> {
    if ranges.is_empty() || ranges.iter().any(|(lo, hi)| lo >= hi) {
        return Err("each range needs from < to".into());
    }
    if batch_size == 0 {
        return Err("batch size must be positive".into());
    }
    let total: u64 = ranges.iter().try_fold(0u64, |a, (lo, hi)| a.checked_add(hi - lo)).ok_or("ranges too large")?;
    let count = batches.checked_mul(batch_size).ok_or("too many ids")?;
    if count > crate::fetch::MAX_IDS as u64 {
        return Err(format!("{count} ids is more than the limit of {}", crate::fetch::MAX_IDS));
    }
    let mut rng = SplitMix64::new(seed);
    let mut ids = std::collections::BTreeSet::new();
    for _ in 0..batches {
        let mut k = below(&mut rng, total);
        for &(lo, hi) in ranges {
            if k < hi - lo {
                let start = lo + k;
                ids.extend(start..start.saturating_add(batch_size).min(hi));
                break;
            }
            k -= hi - lo;
        }
    }
    Ok(ids.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn smoke() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/smoke")
    }

    fn opts(n: usize, seed: u64, mode: Mode) -> SampleOptions {
        SampleOptions { n, seed, mode, exclude_remixes: false, exclude_unloadable: false, rest: None }
    }

    #[test]
    fn samples_are_seeded_nested_and_disjoint_from_the_rest() {
        let t = tempfile::tempdir().unwrap();
        let a = sample(&smoke(), "smoke", &t.path().join("a"), &opts(3, 7, Mode::Copy)).unwrap();
        let b = sample(&smoke(), "smoke", &t.path().join("b"), &opts(3, 7, Mode::Link)).unwrap();
        assert_eq!(a.chosen, b.chosen, "same seed, same sample");
        assert_eq!(a.chosen.len(), 3);
        let two = sample(&smoke(), "smoke", &t.path().join("c"), &opts(2, 7, Mode::Copy)).unwrap();
        assert!(two.chosen.iter().all(|f| a.chosen.contains(f)), "nested: {two:?} in {a:?}");
        let others: Vec<_> = (1..20)
            .map(|s| sample(&smoke(), "smoke", &t.path().join(format!("s{s}")), &opts(3, s, Mode::Reference)).unwrap())
            .map(|r| r.chosen)
            .collect();
        assert!(others.iter().any(|c| *c != a.chosen), "seeds change the sample");
        // The sampled folder is a dataset whose manifest discover honours.
        let found = discover(&t.path().join("a")).unwrap();
        assert_eq!(found.len(), 3);
        let m = Manifest::read(&t.path().join("a")).unwrap().unwrap();
        assert!(m.dataset.derived_from.contains("--seed 7"), "{}", m.dataset.derived_from);

        let mut o = opts(2, 1, Mode::Reference);
        o.rest = Some(t.path().join("rest"));
        let r = sample(&smoke(), "smoke", &t.path().join("split"), &o).unwrap();
        assert_eq!(r.rest, 3);
        let split = discover(&t.path().join("split")).unwrap();
        let rest = discover(&t.path().join("rest")).unwrap();
        assert_eq!(split.len() + rest.len(), 5);
        assert!(split.iter().all(|p| rest.iter().all(|q| q.content_hash != p.content_hash)));
        assert!(split.iter().all(|p| p.path.starts_with(std::fs::canonicalize(smoke()).unwrap())), "no copies");

        let err = sample(&smoke(), "smoke", &t.path().join("big"), &opts(6, 1, Mode::Copy)).unwrap_err();
        assert!(err.to_string().contains("only 5"), "{err}");
        let err = sample(&smoke(), "smoke", &t.path().join("a"), &opts(1, 1, Mode::Copy)).unwrap_err();
        assert!(err.to_string().contains("not empty"), "{err}");
    }

    #[test]
    fn random_ids_are_batches_inside_the_range() {
        let ids = random_ids(&[(400_000_000, 700_000_000)], 5, 1000, 42).unwrap();
        assert_eq!(ids, random_ids(&[(400_000_000, 700_000_000)], 5, 1000, 42).unwrap());
        assert_ne!(ids, random_ids(&[(400_000_000, 700_000_000)], 5, 1000, 43).unwrap());
        assert!(ids.len() <= 5000 && ids.len() > 4000);
        assert!(ids.iter().all(|&i| (400_000_000..700_000_000).contains(&i)));
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        // Batches are runs of consecutive ids.
        let runs = 1 + ids.windows(2).filter(|w| w[1] != w[0] + 1).count();
        assert!(runs <= 5, "{runs}");
        // Clipped at the end of a range.
        let small = random_ids(&[(10, 12)], 3, 5, 1).unwrap();
        assert!(small.iter().all(|&i| (10..12).contains(&i)));
        assert!(random_ids(&[(5, 5)], 1, 1, 1).is_err());
    }

    #[test]
    fn below_is_in_range() {
        let mut r = SplitMix64::new(3);
        for b in [1, 2, 3, 1000, u64::MAX] {
            for _ in 0..100 {
                assert!(below(&mut r, b) < b);
            }
        }
    }
}
