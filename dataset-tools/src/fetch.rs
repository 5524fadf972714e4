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

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use clowder_datasets::manifest::{self, Descriptive};
use clowder_datasets::sb3::{self, ContainerLimits, Format};

/// Name of the per-project report written into the output folder.
pub const REPORT_FILE: &str = "fetch-report.csv";
/// Working folder inside the output folder.
pub const STATE_DIR: &str = ".clowder-fetch";
/// Licence note recorded for downloaded projects.
pub const SCRATCH_LICENCE: &str = "CC BY-SA 2.0 (shared on the Scratch website, Scratch Terms of Use)";

/// Size bounds for everything downloaded.
#[derive(Debug, Clone)]
pub struct FetchLimits {
    /// Project API response (metadata JSON).
    pub max_metadata_bytes: u64,
    /// `project.json` as served.
    pub max_project_bytes: u64,
    /// One asset.
    pub max_asset_bytes: u64,
    /// Assets per project.
    pub max_assets: usize,
    /// The assembled `.sb3` (sum of its parts).
    pub max_total_bytes: u64,
}

impl Default for FetchLimits {
    fn default() -> Self {
        Self {
            max_metadata_bytes: 1 << 20,
            // The VM accepts up to 64 MiB of project.json; Scratch itself stores far less.
            max_project_bytes: 64 << 20,
            // Scratch's upload limit for an asset is 10 MB.
            max_asset_bytes: 32 << 20,
            max_assets: 10_000,
            max_total_bytes: clowder_datasets::MAX_PROJECT_BYTES,
        }
    }
}

/// How to fetch.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// Project API base (`https://api.scratch.mit.edu`).
    pub api_base: String,
    /// Project server base (`https://projects.scratch.mit.edu`).
    pub projects_base: String,
    /// Asset server base (`https://assets.scratch.mit.edu`).
    pub assets_base: String,
    /// Projects fetched at the same time.
    pub jobs: usize,
    /// Requests per second, over all workers (token bucket refill rate).
    pub rate: f64,
    /// Requests that may go out at once after a quiet period (bucket size).
    pub burst: f64,
    /// Attempts per request for transient failures (network, timeout, truncated, 5xx).
    pub max_attempts: u32,
    /// HTTP 429 answers tolerated per request before giving up.
    pub max_rate_limited: u32,
    /// First backoff; doubles per attempt up to `backoff_max`.
    pub backoff_initial: Duration,
    /// Longest backoff.
    pub backoff_max: Duration,
    /// Longest `Retry-After` honoured (a larger value is capped to this).
    pub max_retry_after: Duration,
    /// Whole-request timeout (connect, headers and body).
    pub timeout: Duration,
    /// Size bounds.
    pub limits: FetchLimits,
    /// Write `.sb3` files even when some assets are missing on the server.
    pub allow_missing_assets: bool,
    /// Re-try projects whose previous failure was final (404, Scratch 2, …).
    pub retry_failed: bool,
    /// Keep downloaded assets in `.clowder-fetch/assets` after the run.
    pub keep_cache: bool,
    /// `User-Agent` header.
    pub user_agent: String,
}

impl Default for FetchOptions {
    fn default() -> Self {
        Self {
            api_base: "https://api.scratch.mit.edu".into(),
            projects_base: "https://projects.scratch.mit.edu".into(),
            assets_base: "https://assets.scratch.mit.edu".into(),
            jobs: 4,
            rate: 5.0,
            burst: 10.0,
            max_attempts: 4,
            max_rate_limited: 8,
            backoff_initial: Duration::from_secs(1),
            backoff_max: Duration::from_secs(60),
            max_retry_after: Duration::from_secs(600),
            timeout: Duration::from_secs(120),
            limits: FetchLimits::default(),
            allow_missing_assets: false,
            retry_failed: false,
            keep_cache: false,
            user_agent: concat!("clowder/", env!("CARGO_PKG_VERSION"), " (research dataset download)").into(),
        }
    }
}

/// Outcome of one project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// `.sb3` written (or already complete).
    Ok,
    /// `.sb3` written although some assets are missing on the server (`allow_missing_assets`).
    OkMissingAssets,
    /// The project API says 404 (or 403/410): not shared, or deleted.
    NotFound,
    /// A Scratch 2 project (`objName`/`children` instead of `targets`).
    Scratch2,
    /// A Scratch 1.x binary project.
    Scratch1,
    /// The server's answer is not a usable project (bad JSON, bad asset names, no token).
    Invalid,
    /// Some assets are not on the asset server.
    AssetMissing,
    /// A body ended early or failed its check (MD5), after every retry.
    Truncated,
    /// A response or the assembled project is over a size bound.
    TooLarge,
    /// Still rate-limited (HTTP 429) after every retry.
    RateLimited,
    /// An unexpected HTTP status.
    HttpError,
    /// Connection failure or timeout, after every retry.
    Network,
    /// The fetch was stopped before this project finished.
    Cancelled,
}

impl Status {
    /// Name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::OkMissingAssets => "ok_missing_assets",
            Status::NotFound => "not_found",
            Status::Scratch2 => "scratch2",
            Status::Scratch1 => "scratch1",
            Status::Invalid => "invalid",
            Status::AssetMissing => "asset_missing",
            Status::Truncated => "truncated",
            Status::TooLarge => "too_large",
            Status::RateLimited => "rate_limited",
            Status::HttpError => "http_error",
            Status::Network => "network",
            Status::Cancelled => "cancelled",
        }
    }

    /// True when a `.sb3` exists for the project.
    pub fn has_file(self) -> bool {
        matches!(self, Status::Ok | Status::OkMissingAssets)
    }

    /// True when asking again would give the same answer (the server's
    /// content, not the connection, decided).
    pub fn is_final(self) -> bool {
        matches!(
            self,
            Status::Ok
                | Status::OkMissingAssets
                | Status::NotFound
                | Status::Scratch2
                | Status::Scratch1
                | Status::Invalid
                | Status::AssetMissing
                | Status::TooLarge
        )
    }
}

/// One row of the fetch report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Scratch project id.
    pub id: u64,
    /// Outcome.
    pub status: Status,
    /// `ID.sb3` when written, else empty.
    pub file: String,
    /// Size of the `.sb3`.
    pub bytes: u64,
    /// blake3 of the `.sb3` (the project hash of run identities).
    pub hash: String,
    /// Assets in the `.sb3`.
    pub assets: u64,
    /// Project title (from the API).
    pub title: String,
    /// Author's user name.
    pub author: String,
    /// Id of the project this one remixes.
    pub remix_parent: Option<u64>,
    /// What went wrong (empty for `ok`).
    pub error: String,
}

impl Row {
    fn new(id: u64) -> Self {
        Self {
            id,
            status: Status::Cancelled,
            file: String::new(),
            bytes: 0,
            hash: String::new(),
            assets: 0,
            title: String::new(),
            author: String::new(),
            remix_parent: None,
            error: String::new(),
        }
    }

    fn fail(mut self, status: Status, error: impl Into<String>) -> Self {
        self.status = status;
        self.error = error.into();
        self
    }
}

/// Time source and sleeping, so tests can run rate limits and backoffs
/// without waiting.
pub trait Clock: Send + Sync {
    /// Time since some fixed start.
    fn now(&self) -> Duration;
    /// Waits `d`.
    fn sleep(&self, d: Duration);
}

/// The real clock.
#[derive(Debug)]
pub struct SystemClock(Instant);

impl Default for SystemClock {
    fn default() -> Self {
        Self(Instant::now())
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.0.elapsed()
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// Token bucket shared by all workers; a 429 pauses it for everyone.
struct Bucket {
    rate: f64,
    burst: f64,
    state: Mutex<BucketState>,
}

struct BucketState {
    tokens: f64,
    last: Duration,
    paused_until: Duration,
}

impl Bucket {
    fn new(rate: f64, burst: f64, now: Duration) -> Self {
        let burst = burst.max(1.0);
        Self {
            rate: rate.max(1e-3),
            burst,
            state: Mutex::new(BucketState { tokens: burst, last: now, paused_until: now }),
        }
    }

    /// Takes one token, sleeping (in slices, to notice cancellation) until one is there.
    fn acquire(&self, clock: &dyn Clock, cancel: &AtomicBool) -> bool {
        loop {
            if cancel.load(Ordering::Relaxed) {
                return false;
            }
            let wait = {
                let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
                let now = clock.now();
                if now > s.last {
                    s.tokens = (s.tokens + (now - s.last).as_secs_f64() * self.rate).min(self.burst);
                    s.last = now;
                }
                if s.paused_until > now {
                    s.paused_until - now
                } else if s.tokens >= 1.0 {
                    s.tokens -= 1.0;
                    return true;
                } else {
                    Duration::from_secs_f64((1.0 - s.tokens) / self.rate)
                }
            };
            clock.sleep(wait.min(Duration::from_millis(250)));
        }
    }

    /// No request leaves before `until`; the bucket restarts empty then, so
    /// the server is not hit by a burst right after telling us to slow down.
    fn pause_until(&self, until: Duration) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if until > s.paused_until {
            s.paused_until = until;
            s.tokens = 0.0;
            s.last = until;
        }
    }
}

/// Why a request failed for good.
#[derive(Debug)]
enum ReqError {
    Cancelled,
    TooLarge(String),
    RateLimited(String),
    Network(String),
    Truncated(String),
    Http(u16, String),
}

impl ReqError {
    fn status(&self) -> Status {
        match self {
            ReqError::Cancelled => Status::Cancelled,
            ReqError::TooLarge(_) => Status::TooLarge,
            ReqError::RateLimited(_) => Status::RateLimited,
            ReqError::Network(_) => Status::Network,
            ReqError::Truncated(_) => Status::Truncated,
            ReqError::Http(..) => Status::HttpError,
        }
    }
    fn message(&self) -> String {
        match self {
            ReqError::Cancelled => "cancelled".into(),
            ReqError::TooLarge(m) | ReqError::RateLimited(m) | ReqError::Network(m) | ReqError::Truncated(m) => {
                m.clone()
            }
            ReqError::Http(_, m) => m.clone(),
        }
    }
}

/// A request's answer: a checked body, or a "not there" status (404, 403, 410).
enum Got {
    Body(Vec<u8>),
    Gone(u16),
}

/// One attempt's answer.
enum Once {
    Body(Vec<u8>),
    Status(u16),
    Limited(Option<Duration>),
}

struct Http<'a> {
    agent: ureq::Agent,
    opts: &'a FetchOptions,
    bucket: Bucket,
    clock: &'a dyn Clock,
    cancel: &'a AtomicBool,
    requests: AtomicU64,
    bytes: AtomicU64,
}

/// `Retry-After` in seconds (the HTTP-date form is not used by Scratch; it
/// falls back to the backoff).
fn parse_retry_after(v: &str) -> Option<Duration> {
    v.trim().parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0).map(Duration::from_secs_f64)
}

impl Http<'_> {
    fn backoff(&self, attempt: u32) -> Duration {
        let f = 2f64.powi(attempt.saturating_sub(1).min(30) as i32);
        self.opts.backoff_initial.mul_f64(f).min(self.opts.backoff_max)
    }

    fn once(&self, full_url: &str, max: u64) -> Result<Once, ReqError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        // Messages name the URL without its query: the project token is short-lived
        // and would make reports differ between otherwise identical runs.
        let url = full_url.split('?').next().unwrap_or(full_url);
        let resp = match self.agent.get(full_url).call() {
            Ok(r) => r,
            Err(ureq::Error::Timeout(t)) => return Err(ReqError::Network(format!("{url}: timed out ({t})"))),
            Err(e) => return Err(ReqError::Network(format!("{url}: {e}"))),
        };
        let status = resp.status().as_u16();
        if status == 429 {
            let ra = resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(parse_retry_after);
            return Ok(Once::Limited(ra));
        }
        if status != 200 {
            return Ok(Once::Status(status));
        }
        // When ureq decodes gzip it removes Content-Length (it counted compressed
        // bytes), so a length seen here is that of the bytes we read.
        let declared = resp
            .headers()
            .get("content-length")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if let Some(n) = declared
            && n > max
        {
            return Err(ReqError::TooLarge(format!("{url}: {n} bytes, over the limit of {max}")));
        }
        let mut reader = resp.into_body().into_with_config().limit(max.saturating_add(1)).reader();
        let mut body = Vec::with_capacity(declared.unwrap_or(0).min(max) as usize);
        let mut chunk = vec![0u8; 64 << 10];
        loop {
            if self.cancel.load(Ordering::Relaxed) {
                return Err(ReqError::Cancelled);
            }
            match reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    body.extend_from_slice(&chunk[..n]);
                    if body.len() as u64 > max {
                        return Err(ReqError::TooLarge(format!("{url}: over the limit of {max} bytes")));
                    }
                }
                Err(e) => {
                    self.bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
                    return Err(match ureq::Error::from(e) {
                        ureq::Error::BodyExceedsLimit(_) => {
                            ReqError::TooLarge(format!("{url}: over the limit of {max} bytes"))
                        }
                        ureq::Error::Timeout(t) => {
                            ReqError::Network(format!("{url}: timed out after {} bytes ({t})", body.len()))
                        }
                        other => ReqError::Truncated(format!(
                            "{url}: body ended after {} of {} bytes ({other})",
                            body.len(),
                            declared.map(|d| d.to_string()).unwrap_or_else(|| "?".into())
                        )),
                    });
                }
            }
        }
        self.bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
        if let Some(n) = declared
            && (body.len() as u64) < n
        {
            return Err(ReqError::Truncated(format!("{url}: body ended after {} of {n} bytes", body.len())));
        }
        Ok(Once::Body(body))
    }

    /// GET with rate limiting, retries and a content check. `check` returning
    /// an error means the body is damaged (retried like a truncated download).
    fn get(&self, full_url: &str, max: u64, check: &dyn Fn(&[u8]) -> Result<(), String>) -> Result<Got, ReqError> {
        let url = full_url.split('?').next().unwrap_or(full_url);
        let (mut attempts, mut limited) = (0u32, 0u32);
        loop {
            if !self.bucket.acquire(self.clock, self.cancel) {
                return Err(ReqError::Cancelled);
            }
            attempts += 1;
            let failure = match self.once(full_url, max) {
                Ok(Once::Body(b)) => match check(&b) {
                    Ok(()) => return Ok(Got::Body(b)),
                    Err(e) => ReqError::Truncated(format!("{url}: {e}")),
                },
                Ok(Once::Status(s @ (403 | 404 | 410))) => return Ok(Got::Gone(s)),
                Ok(Once::Status(s)) if s >= 500 || s == 408 => ReqError::Http(s, format!("{url}: HTTP {s}")),
                Ok(Once::Status(s)) => return Err(ReqError::Http(s, format!("{url}: HTTP {s}"))),
                Ok(Once::Limited(after)) => {
                    limited += 1;
                    attempts -= 1; // being told to wait is not a failed attempt
                    if limited > self.opts.max_rate_limited {
                        return Err(ReqError::RateLimited(format!(
                            "{url}: HTTP 429 (too many requests) {limited} times; lower --rate"
                        )));
                    }
                    let wait = after.unwrap_or_else(|| self.backoff(limited)).min(self.opts.max_retry_after);
                    self.bucket.pause_until(self.clock.now() + wait);
                    continue;
                }
                Err(e @ (ReqError::Cancelled | ReqError::TooLarge(_))) => return Err(e),
                Err(e) => e,
            };
            if attempts >= self.opts.max_attempts {
                let msg = format!("{} (after {attempts} attempts)", failure.message());
                return Err(match failure {
                    ReqError::Truncated(_) => ReqError::Truncated(msg),
                    ReqError::Http(s, _) => ReqError::Http(s, msg),
                    _ => ReqError::Network(msg),
                });
            }
            self.clock.sleep(self.backoff(attempts));
        }
    }
}

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

/// Most ids accepted in one ids file.
pub const MAX_IDS: usize = 10_000_000;

/// Reads project ids: one per line (the first field of a CSV/TSV line, or a
/// `…/projects/ID` URL); blank lines and `#` comments are skipped. Duplicates
/// are dropped; the result is sorted.
pub fn parse_ids(text: &str) -> Result<Vec<u64>, String> {
    let mut ids = std::collections::BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let field = line.split([',', '\t', ' ', ';']).next().unwrap_or("").trim();
        let field = match field.find("/projects/") {
            Some(p) => field[p + "/projects/".len()..].trim_end_matches('/'),
            None => field,
        };
        let field = field.trim_matches('"');
        match field.parse::<u64>() {
            Ok(id) => {
                ids.insert(id);
            }
            // A header row (`id,title,…`) is allowed as the first line.
            Err(_) if i == 0 && !field.bytes().any(|b| b.is_ascii_digit()) => continue,
            Err(_) => return Err(format!("line {}: {field:?} is not a project id", i + 1)),
        }
        if ids.len() > MAX_IDS {
            return Err(format!("more than {MAX_IDS} ids"));
        }
    }
    Ok(ids.into_iter().collect())
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

/// Writes the report CSV: `id, status, file, bytes, hash, assets, title,
/// author, remix_parent, error`, in the rows' order.
pub fn write_report(path: &Path, rows: &[Row]) -> Result<(), FetchError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = ["id", "status", "file", "bytes", "hash", "assets", "title", "author", "remix_parent", "error"];
    w.write_record(header).map_err(|e| io_err(path, e))?;
    for r in rows {
        w.write_record([
            r.id.to_string(),
            r.status.as_str().to_string(),
            r.file.clone(),
            r.bytes.to_string(),
            r.hash.clone(),
            r.assets.to_string(),
            r.title.clone(),
            r.author.clone(),
            r.remix_parent.map(|p| p.to_string()).unwrap_or_default(),
            r.error.clone(),
        ])
        .map_err(|e| io_err(path, e))?;
    }
    let bytes = w.into_inner().map_err(|e| io_err(path, e))?;
    clowder_datasets::write_atomic(path, &bytes).map_err(|e| io_err(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_files() {
        let text = "id,title\n# comment\n 42 \n7,foo\nhttps://scratch.mit.edu/projects/1234/\n42\n\n";
        assert_eq!(parse_ids(text).unwrap(), vec![7, 42, 1234]);
        assert!(parse_ids("1\nx2\n").unwrap_err().contains("line 2"));
    }

    #[test]
    fn retry_after_seconds() {
        assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }

    struct Fake(Mutex<Duration>);
    impl Clock for Fake {
        fn now(&self) -> Duration {
            *self.0.lock().unwrap()
        }
        fn sleep(&self, d: Duration) {
            *self.0.lock().unwrap() += d;
        }
    }

    #[test]
    fn bucket_limits_the_rate_and_pauses() {
        let clock = Fake(Mutex::new(Duration::ZERO));
        let cancel = AtomicBool::new(false);
        let b = Bucket::new(2.0, 3.0, clock.now());
        for _ in 0..3 {
            assert!(b.acquire(&clock, &cancel));
        }
        assert_eq!(clock.now(), Duration::ZERO, "the burst goes out at once");
        for _ in 0..4 {
            assert!(b.acquire(&clock, &cancel));
        }
        assert!((clock.now().as_secs_f64() - 2.0).abs() < 1e-6, "4 more at 2/s take 2 s: {:?}", clock.now());
        b.pause_until(clock.now() + Duration::from_secs(10));
        assert!(b.acquire(&clock, &cancel));
        assert!(clock.now().as_secs_f64() >= 12.0 - 1e-6);
        cancel.store(true, Ordering::Relaxed);
        assert!(!b.acquire(&clock, &cancel));
    }
}
