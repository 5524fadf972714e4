//! Downloading projects by id from the Scratch website and assembling `.sb3`
//! files, resumably.
//!
//! For each id: the project API (`{api}/projects/ID`) gives the metadata and a
//! `project_token`; the project server (`{projects}/ID?token=…`) gives
//! `project.json`; the asset server (`{assets}/internalapi/asset/MD5EXT/get/`)
//! gives each costume and sound, verified against the MD5 in its name. The
//! result is `OUT/ID.sb3` (`project.json` and the assets, deterministic bytes).
//!
//! Requests share one token bucket (rate limit); HTTP 429 pauses every worker
//! for the server's `Retry-After` (or an exponential backoff); transient
//! failures (network errors, timeouts, truncated bodies, 5xx) are retried with
//! backoff. Every download is size-bounded. Files appear atomically, so a
//! killed fetch loses at most the projects in flight: re-running it skips
//! every project that is complete (its `.sb3` matches the recorded hash and
//! every asset matches its MD5) and every final failure (404, Scratch 2, …;
//! `retry_failed` re-tries those), and reuses the assets already downloaded.
//!
//! Working state lives in `OUT/.clowder-fetch/` (`meta/ID.json`: one result
//! row per project; `assets/`: downloaded assets, removed at the end of a
//! run that finished every project unless `keep_cache`). At the end the
//! report `OUT/fetch-report.csv` (one row per id, sorted by id) and the
//! manifest `OUT/dataset.toml` (via [`clowder_datasets::manifest::scan`], with title,
//! author, source, licence and remix parent of each project) are written.
//!
//! Here: the public [`fetch`] and the per-project work (`Fetcher`); `options` (limits and
//! options), `http` (requests, retries, rate limit), `report` (rows and the report CSV),
//! `ids` (ids files).

mod http;
mod ids;
mod options;
mod report;

pub use http::{Clock, SystemClock};
pub use ids::{MAX_IDS, parse_ids};
pub use options::{FetchLimits, FetchOptions};
pub use report::{Row, Status, write_report};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use serde_json::Value as Json;

use clowder_datasets::manifest::{self, Descriptive};
use clowder_datasets::sb3::{self, ContainerLimits, Format};

use http::{Bucket, Got, Http, ReqError};

/// Name of the per-project report written into the output folder.
pub const REPORT_FILE: &str = "fetch-report.csv";
/// Working folder inside the output folder.
pub const STATE_DIR: &str = ".clowder-fetch";
/// Licence note recorded for downloaded projects.
pub const SCRATCH_LICENCE: &str = "CC BY-SA 2.0 (shared on the Scratch website, Scratch Terms of Use)";

/// What a whole fetch did.
#[derive(Debug, Clone, Default)]
pub struct FetchSummary {
    /// One row per distinct id, sorted by id.
    pub rows: Vec<Row>,
    /// Projects skipped because a previous run completed them (or failed them for good).
    pub reused: usize,
    /// HTTP requests made.
    pub requests: u64,
    /// Body bytes received.
    pub bytes_downloaded: u64,
}

impl FetchSummary {
    /// Rows per status.
    pub fn counts(&self) -> BTreeMap<Status, usize> {
        let mut m = BTreeMap::new();
        for r in &self.rows {
            *m.entry(r.status).or_insert(0) += 1;
        }
        m
    }
}

/// Errors that stop a fetch as a whole (per-project problems are rows).
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Reading ids or writing the output failed.
    #[error("{0}")]
    Io(String),
    /// The manifest could not be written.
    #[error(transparent)]
    Dataset(#[from] clowder_datasets::DatasetError),
}

struct Fetcher<'a> {
    out: &'a Path,
    opts: &'a FetchOptions,
    http: Http<'a>,
    container: ContainerLimits,
    /// One lock per asset name: projects share assets (the default costumes are
    /// everywhere), and a second worker waits for the first download instead of
    /// repeating it.
    inflight: Mutex<BTreeMap<String, std::sync::Arc<Mutex<()>>>>,
}

fn io_err(p: &Path, e: impl std::fmt::Display) -> FetchError {
    FetchError::Io(format!("{}: {e}", p.display()))
}

fn meta_dir(out: &Path) -> PathBuf {
    out.join(STATE_DIR).join("meta")
}
fn asset_dir(out: &Path) -> PathBuf {
    out.join(STATE_DIR).join("assets")
}

/// Removes temporary files a killed run may have left (`.NAME.PID.THREAD.tmp`).
fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with('.') && name.ends_with(".tmp") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

impl Fetcher<'_> {
    fn sb3_path(&self, id: u64) -> PathBuf {
        self.out.join(format!("{id}.sb3"))
    }

    /// The previous result, if it can be reused as is.
    fn reusable(&self, id: u64) -> Option<Row> {
        let text = std::fs::read_to_string(meta_dir(self.out).join(format!("{id}.json"))).ok()?;
        let row: Row = serde_json::from_str(&text).ok()?;
        if row.id != id || !row.status.is_final() {
            return None;
        }
        if !row.status.has_file() {
            return (!self.opts.retry_failed).then_some(row);
        }
        let bytes = clowder_datasets::read_project_bytes(&self.sb3_path(id)).ok()?;
        if clowder_datasets::content_hash(&bytes) != row.hash {
            return None;
        }
        if row.status == Status::Ok {
            sb3::verify_sb3(&bytes, &self.container, self.opts.limits.max_asset_bytes).ok()?;
        }
        Some(row)
    }

    fn record(&self, row: &Row) -> Result<(), String> {
        let text = serde_json::to_vec_pretty(row).map_err(|e| e.to_string())?;
        clowder_datasets::write_atomic(&meta_dir(self.out).join(format!("{}.json", row.id)), &text)
            .map_err(|e| e.to_string())
    }

    fn asset(&self, r: &sb3::AssetRef) -> Result<Option<Vec<u8>>, ReqError> {
        let lock = {
            let mut m = self.inflight.lock().unwrap_or_else(|p| p.into_inner());
            std::sync::Arc::clone(m.entry(r.md5ext.clone()).or_default())
        };
        let _one_download_at_a_time = lock.lock().unwrap_or_else(|p| p.into_inner());
        let cached = asset_dir(self.out).join(&r.md5ext);
        if let Ok(meta) = std::fs::metadata(&cached)
            && meta.len() <= self.opts.limits.max_asset_bytes
            && let Ok(b) = std::fs::read(&cached)
        {
            if sb3::md5_hex(&b) == r.md5() {
                return Ok(Some(b));
            }
            let _ = std::fs::remove_file(&cached);
        }
        let url = format!("{}/internalapi/asset/{}/get/", self.opts.assets_base.trim_end_matches('/'), r.md5ext);
        let md5 = r.md5();
        let check = move |b: &[u8]| {
            let got = sb3::md5_hex(b);
            if got == md5 {
                Ok(())
            } else {
                Err(format!("content MD5 {got} does not match its name ({} bytes)", b.len()))
            }
        };
        match self.http.get(&url, self.opts.limits.max_asset_bytes, &check)? {
            Got::Body(b) => {
                // A failed cache write only costs a download next time.
                let _ = clowder_datasets::write_atomic(&cached, &b);
                Ok(Some(b))
            }
            Got::Gone(_) => Ok(None),
        }
    }

    fn fetch(&self, id: u64) -> Row {
        let row = Row::new(id);
        let api = format!("{}/projects/{id}", self.opts.api_base.trim_end_matches('/'));
        let valid_json = |b: &[u8]| serde_json::from_slice::<Json>(b).map(|_| ()).map_err(|e| format!("bad JSON: {e}"));
        let meta = match self.http.get(&api, self.opts.limits.max_metadata_bytes, &valid_json) {
            Ok(Got::Body(b)) => serde_json::from_slice::<Json>(&b).unwrap_or(Json::Null),
            Ok(Got::Gone(s)) => {
                return row.fail(Status::NotFound, format!("not shared or deleted (project API: HTTP {s})"));
            }
            Err(e) => return row.fail(e.status(), e.message()),
        };
        let mut row = row;
        row.title = meta.get("title").and_then(Json::as_str).unwrap_or("").to_string();
        row.author = meta.pointer("/author/username").and_then(Json::as_str).unwrap_or("").to_string();
        row.remix_parent = meta.pointer("/remix/parent").and_then(Json::as_u64);
        let Some(token) = meta.get("project_token").and_then(Json::as_str) else {
            return row.fail(Status::Invalid, "the project API response has no project_token");
        };
        if token.is_empty() || !token.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b)) {
            return row.fail(Status::Invalid, "the project token has unexpected characters");
        }

        let url = format!("{}/{id}?token={token}", self.opts.projects_base.trim_end_matches('/'));
        // A JSON body that ends early is a truncated download (retried); other
        // malformed content is judged below, once.
        let complete = |b: &[u8]| {
            if sb3::is_zip(b) || b.starts_with(b"ScratchV0") {
                return Ok(());
            }
            match serde_json::from_slice::<serde::de::IgnoredAny>(b) {
                Err(e) if e.is_eof() => Err(format!("JSON ends early after {} bytes", b.len())),
                _ => Ok(()),
            }
        };
        let body = match self.http.get(&url, self.opts.limits.max_project_bytes, &complete) {
            Ok(Got::Body(b)) => b,
            Ok(Got::Gone(s)) => {
                return row.fail(Status::NotFound, format!("project body not available (project server: HTTP {s})"));
            }
            Err(e) => return row.fail(e.status(), e.message()),
        };
        if body.starts_with(b"ScratchV0") {
            return row.fail(Status::Scratch1, "a Scratch 1.x project (binary .sb); only Scratch 3 is supported");
        }
        let contents = match sb3::read_contents(&body, &self.container) {
            Ok(c) => c,
            Err(e) => return row.fail(Status::Invalid, e),
        };
        let json: Json = match serde_json::from_slice(&contents.json) {
            Ok(j) => j,
            Err(e) => return row.fail(Status::Invalid, format!("project.json: {e}")),
        };
        match sb3::json_format(&json) {
            Some(Format::Scratch3) => {}
            Some(Format::Scratch2) => {
                return row.fail(Status::Scratch2, "a Scratch 2 project (objName/children, no targets)");
            }
            _ => return row.fail(Status::Invalid, "project.json is not a Scratch project"),
        }
        let refs = match sb3::asset_refs(&json) {
            Ok(r) => r,
            Err(e) => return row.fail(Status::Invalid, e),
        };
        if refs.len() > self.opts.limits.max_assets {
            return row.fail(
                Status::TooLarge,
                format!("{} assets, over the limit of {}", refs.len(), self.opts.limits.max_assets),
            );
        }
        let mut total = contents.json.len() as u64;
        let mut assets = Vec::with_capacity(refs.len());
        let mut missing = Vec::new();
        for r in &refs {
            match self.asset(r) {
                Ok(Some(b)) => {
                    total += b.len() as u64;
                    if total > self.opts.limits.max_total_bytes {
                        return row.fail(
                            Status::TooLarge,
                            format!(
                                "project with assets is over the limit of {} bytes",
                                self.opts.limits.max_total_bytes
                            ),
                        );
                    }
                    assets.push((r.md5ext.clone(), b));
                }
                Ok(None) => missing.push(r.md5ext.clone()),
                Err(e) => return row.fail(e.status(), format!("asset {}: {}", r.md5ext, e.message())),
            }
        }
        if !missing.is_empty() {
            let shown: Vec<&str> = missing.iter().take(5).map(String::as_str).collect();
            let msg =
                format!("{} of {} assets not on the asset server: {}", missing.len(), refs.len(), shown.join(", "));
            if !self.opts.allow_missing_assets {
                return row.fail(Status::AssetMissing, msg);
            }
            row.error = msg;
        }
        let sb3 = match sb3::assemble(&contents.json, &assets) {
            Ok(b) => b,
            Err(e) => return row.fail(Status::Invalid, format!("assembling the .sb3: {e}")),
        };
        let path = self.sb3_path(id);
        if let Err(e) = clowder_datasets::write_atomic(&path, &sb3) {
            return row.fail(Status::Invalid, format!("{}: {e}", path.display()));
        }
        row.status = if missing.is_empty() { Status::Ok } else { Status::OkMissingAssets };
        row.file = format!("{id}.sb3");
        row.bytes = sb3.len() as u64;
        row.hash = clowder_datasets::content_hash(&sb3);
        row.assets = assets.len() as u64;
        row
    }
}

/// Downloads `ids` into `out` (see the module docs). `on_done(row, reused)` is
/// called as each project finishes (for progress). Setting `cancel` stops the
/// fetch soon: projects in flight become `cancelled` rows, nothing half-written
/// is left under a final name, and the next run resumes.
pub fn fetch(
    ids: &[u64],
    out: &Path,
    opts: &FetchOptions,
    clock: &dyn Clock,
    cancel: &AtomicBool,
    on_done: &(dyn Fn(&Row, bool) + Sync),
) -> Result<FetchSummary, FetchError> {
    for d in [out.to_path_buf(), meta_dir(out), asset_dir(out)] {
        std::fs::create_dir_all(&d).map_err(|e| io_err(&d, e))?;
        remove_stale_temporaries(&d);
    }
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(opts.timeout))
        .http_status_as_error(false)
        .user_agent(opts.user_agent.as_str())
        .max_redirects(3)
        .build()
        .into();
    let fetcher = Fetcher {
        out,
        opts,
        http: Http {
            agent,
            opts,
            bucket: Bucket::new(opts.rate, opts.burst, clock.now()),
            clock,
            cancel,
            requests: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        },
        container: ContainerLimits { max_json_bytes: opts.limits.max_project_bytes, ..Default::default() },
        inflight: Mutex::new(BTreeMap::new()),
    };
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let next = AtomicUsize::new(0);
    let reused = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Row>>> = Mutex::new(vec![None; ids.len()]);
    let write_error: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.clamp(1, 64) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&id) = ids.get(i) else { break };
                    let (row, was_reused) = if cancel.load(Ordering::Relaxed) {
                        (Row::new(id), false)
                    } else if let Some(r) = fetcher.reusable(id) {
                        reused.fetch_add(1, Ordering::Relaxed);
                        (r, true)
                    } else {
                        let r = fetcher.fetch(id);
                        if r.status.is_final()
                            && let Err(e) = fetcher.record(&r)
                        {
                            write_error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                        }
                        (r, false)
                    };
                    on_done(&row, was_reused);
                    results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(row);
                }
            });
        }
    });
    if let Some(e) = write_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(FetchError::Io(format!("recording results in {}: {e}", meta_dir(out).display())));
    }
    let rows: Vec<Row> = results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .zip(&ids)
        .map(|(r, &id)| r.unwrap_or_else(|| Row::new(id)))
        .collect();
    let summary = FetchSummary {
        reused: reused.into_inner(),
        requests: fetcher.http.requests.load(Ordering::Relaxed),
        bytes_downloaded: fetcher.http.bytes.load(Ordering::Relaxed),
        rows,
    };
    write_report(&out.join(REPORT_FILE), &summary.rows)?;

    // The manifest describes every .sb3 in the folder (earlier fetches included);
    // this run's metadata is overlaid on what it had.
    let overlay: BTreeMap<String, Descriptive> = summary
        .rows
        .iter()
        .filter(|r| r.status.has_file())
        .map(|r| {
            let d = Descriptive {
                scratch_id: Some(r.id),
                title: r.title.clone(),
                author: r.author.clone(),
                source: format!("https://scratch.mit.edu/projects/{}", r.id),
                licence: SCRATCH_LICENCE.into(),
                remix_parent: r.remix_parent,
            };
            (r.file.clone(), d)
        })
        .collect();
    manifest::scan(out, &overlay)?;
    let finished = summary.rows.iter().all(|r| r.status.is_final());
    if finished && !opts.keep_cache {
        let _ = std::fs::remove_dir_all(asset_dir(out));
    }
    Ok(summary)
}
