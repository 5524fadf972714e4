//! One project's outcome ([`Status`], [`Row`]: also the resumable record in `meta/ID.json`)
//! and the report CSV written from the rows.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{FetchError, io_err};

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
    pub(super) fn new(id: u64) -> Self {
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

    pub(super) fn fail(mut self, status: Status, error: impl Into<String>) -> Self {
        self.status = status;
        self.error = error.into();
        self
    }
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
