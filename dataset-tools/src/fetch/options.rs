//! What a fetch may do: where it asks, how fast and how often, and how much it downloads.

use std::time::Duration;

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
