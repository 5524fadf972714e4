//! Reading the `.sb3` container (a zip) within limits.
//!
//! Nothing in a zip header is trusted for sizes: every entry is read through
//! `take(budget + 1)`, so a lying header or a zip bomb costs at most the
//! budget. The entry count is checked on the end-of-central-directory record
//! before the zip crate indexes the directory (its index costs memory per
//! entry), and again after.

use std::collections::BTreeMap;
use std::io::{Cursor, Read};

use zip::ZipArchive;
use zip::read::ZipReadOptions;

use super::{LoadError, LoadErrorKind, LoadLimits};

/// The opened archive plus the running total of uncompressed bytes read.
pub(crate) struct Sb3<'a> {
    zip: ZipArchive<Cursor<&'a [u8]>>,
    /// Entry names in central-directory order (index = zip index).
    names: Vec<Option<String>>,
    read_total: u64,
    file: String,
}

const EOCD_SIG: [u8; 4] = [0x50, 0x4b, 0x05, 0x06];

/// The largest entry count declared by any plausible end-of-central-directory
/// record in the tail of the file, and whether any of them marks a zip64
/// archive. A reader may skip the last record and fall back to an earlier one,
/// so every candidate it could pick is checked. `None` when there is none (the
/// zip crate then fails).
fn declared_entries(bytes: &[u8]) -> Option<(u64, bool)> {
    let len = bytes.len();
    if len < 22 {
        return None;
    }
    let lowest = len.saturating_sub(22 + 0xFFFF);
    let mut found: Option<(u64, bool)> = None;
    for pos in (lowest..=len - 22).rev() {
        if bytes[pos..pos + 4] != EOCD_SIG {
            continue;
        }
        let u16_at = |o: usize| u16::from_le_bytes([bytes[pos + o], bytes[pos + o + 1]]);
        let u32_at =
            |o: usize| u32::from_le_bytes([bytes[pos + o], bytes[pos + o + 1], bytes[pos + o + 2], bytes[pos + o + 3]]);
        let (disk, cd_disk, on_disk, total) = (u16_at(4), u16_at(6), u16_at(8), u16_at(10));
        if pos + 22 + usize::from(u16_at(20)) > len {
            continue;
        }
        let zip64 = total == 0xFFFF || on_disk == 0xFFFF || u32_at(12) == u32::MAX || u32_at(16) == u32::MAX;
        let consistent = disk == 0 && cd_disk == 0 && on_disk == total;
        if !(zip64 || consistent) {
            continue;
        }
        let (n, z) = found.unwrap_or((0, false));
        found = Some((n.max(u64::from(total)), z || zip64));
    }
    found
}

/// Whether `name` is `file` at the root or one folder deep (`^([^/]*/)?file$`),
/// the pattern scratch-parser and scratch-vm use to find files in an sb3.
fn matches_shallow(name: &str, file: &str) -> bool {
    match name.strip_suffix(file) {
        Some("") => true,
        Some(prefix) => prefix.ends_with('/') && !prefix[..prefix.len() - 1].contains('/'),
        None => false,
    }
}

impl<'a> Sb3<'a> {
    /// Opens the archive after checking its declared entry count.
    pub(crate) fn open(bytes: &'a [u8], file: &str, limits: &LoadLimits) -> Result<Self, LoadError> {
        let err = |kind, msg: String| LoadError::new(file, kind, msg);
        match declared_entries(bytes) {
            Some((_, true)) => {
                return Err(err(
                    LoadErrorKind::Zip,
                    "zip64 archive: not supported (Scratch never writes zip64, and a project needs neither \
                     65535 entries nor 4 GB)"
                        .into(),
                ));
            }
            Some((n, false)) if n > limits.max_zip_entries as u64 => {
                return Err(err(
                    LoadErrorKind::Limit,
                    format!("zip declares {n} entries, over the limit of {}", limits.max_zip_entries),
                ));
            }
            _ => {}
        }
        let zip = ZipArchive::new(Cursor::new(bytes))
            .map_err(|e| err(LoadErrorKind::Zip, format!("not a readable zip archive: {e}")))?;
        if zip.len() > limits.max_zip_entries {
            return Err(err(
                LoadErrorKind::Limit,
                format!("zip has {} entries, over the limit of {}", zip.len(), limits.max_zip_entries),
            ));
        }
        let names =
            (0..zip.len()).map(|i| zip.name_for_index(i).and_then(|n| n.ok()).map(|n| n.into_owned())).collect();
        Ok(Self { zip, names, read_total: 0, file: file.to_string() })
    }

    /// Index of the first file entry matching `^([^/]*/)?name$`.
    fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n.as_deref().is_some_and(|n| !n.ends_with('/') && matches_shallow(n, name)))
    }

    /// Reads entry `index`, at most `cap` bytes, within the total budget.
    fn read_entry(&mut self, index: usize, cap: u64, limits: &LoadLimits) -> Result<Vec<u8>, LoadError> {
        let label = self.names.get(index).cloned().flatten().unwrap_or_else(|| format!("#{index}"));
        let file = self.file.clone();
        let err = |kind, msg: String| LoadError::new(&file, kind, msg);
        let budget = limits.max_uncompressed_bytes.saturating_sub(self.read_total);
        let cap = cap.min(budget);
        // JSZip (scratch-vm) does not check CRCs, so neither do we.
        let options = ZipReadOptions::new().ignore_crc32(true);
        let entry = self
            .zip
            .by_index_with_options(index, options)
            .map_err(|e| err(LoadErrorKind::Zip, format!("zip entry {label}: {e}")))?;
        let mut buf = Vec::new();
        entry
            .take(cap.saturating_add(1))
            .read_to_end(&mut buf)
            .map_err(|e| err(LoadErrorKind::Zip, format!("zip entry {label}: {e}")))?;
        if buf.len() as u64 > cap {
            let msg = if cap == budget {
                format!(
                    "uncompressed contents exceed the limit of {} bytes (at entry {label}; zip bomb?)",
                    limits.max_uncompressed_bytes
                )
            } else {
                format!("entry {label} is larger than the limit of {cap} bytes")
            };
            return Err(err(LoadErrorKind::Limit, msg));
        }
        self.read_total += buf.len() as u64;
        Ok(buf)
    }

    /// The bytes of `project.json` (root or one folder deep, first match).
    pub(crate) fn project_json(&mut self, limits: &LoadLimits) -> Result<Vec<u8>, LoadError> {
        let Some(index) = self.find("project.json") else {
            let (kind, msg) = if self.find("sprite.json").is_some() {
                (LoadErrorKind::Sprite, "this is a sprite file (.sprite3), not a project".to_string())
            } else if let Some(deep) = self.names.iter().flatten().find(|n| n.ends_with("/project.json")) {
                (
                    LoadErrorKind::Zip,
                    format!("project.json is nested too deep ({deep}); Scratch looks at most one folder down"),
                )
            } else {
                (LoadErrorKind::Zip, "zip has no project.json: not a Scratch project".to_string())
            };
            return Err(LoadError::new(&self.file, kind, msg));
        };
        self.read_entry(index, limits.max_json_bytes, limits)
    }

    /// Reads the files named in `wanted` (costume assets) that exist, by name.
    pub(crate) fn assets(
        &mut self,
        wanted: &[String],
        limits: &LoadLimits,
        missing: &mut Vec<String>,
    ) -> Result<BTreeMap<String, Vec<u8>>, LoadError> {
        let mut out = BTreeMap::new();
        for name in wanted {
            if out.contains_key(name) {
                continue;
            }
            // scratch-vm tries the exact name, then the name one folder down.
            let index = self.zip.index_for_name(name).or_else(|| self.find(name));
            match index {
                Some(i) => {
                    let data = self.read_entry(i, u64::MAX, limits)?;
                    out.insert(name.clone(), data);
                }
                None => missing.push(name.clone()),
            }
        }
        Ok(out)
    }

    /// The first `head` bytes of the file `name` and its whole uncompressed length, or `None`
    /// when it is absent, unreadable, or would take the rest of the uncompressed budget (a
    /// sound's length is worth no load error). The rest is inflated and counted, not kept.
    pub(crate) fn head_and_len(&mut self, name: &str, head: usize, limits: &LoadLimits) -> Option<(Vec<u8>, u64)> {
        let index = self.zip.index_for_name(name).or_else(|| self.find(name))?;
        let budget = limits.max_uncompressed_bytes.saturating_sub(self.read_total);
        let options = ZipReadOptions::new().ignore_crc32(true);
        let mut entry = self.zip.by_index_with_options(index, options).ok()?.take(budget.saturating_add(1));
        let mut buf = Vec::new();
        (&mut entry).take(head as u64).read_to_end(&mut buf).ok()?;
        let rest = std::io::copy(&mut entry, &mut std::io::sink()).ok()?;
        let len = buf.len() as u64 + rest;
        if len > budget {
            return None;
        }
        self.read_total += len;
        Some((buf, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shallow_match_is_root_or_one_folder() {
        assert!(matches_shallow("project.json", "project.json"));
        assert!(matches_shallow("My Project/project.json", "project.json"));
        assert!(!matches_shallow("a/b/project.json", "project.json"));
        assert!(!matches_shallow("xproject.json", "project.json"));
        assert!(!matches_shallow("/project.json/x", "project.json"));
    }

    #[test]
    fn declared_entries_checks_every_plausible_record() {
        let mut eocd = vec![0u8; 10];
        eocd.extend_from_slice(&EOCD_SIG);
        eocd.extend_from_slice(&[0, 0, 0, 0, 7, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(declared_entries(&eocd), Some((7, false)));
        let n = eocd.len();
        eocd[n - 12] = 0xff;
        eocd[n - 11] = 0xff;
        eocd[n - 14] = 0xff;
        eocd[n - 13] = 0xff;
        assert_eq!(declared_entries(&eocd), Some((0xffff, true)));
        assert_eq!(declared_entries(b"short"), None);
        // An earlier plausible record (a reader could fall back to it) counts too.
        let mut two = EOCD_SIG.to_vec();
        two.extend_from_slice(&[0, 0, 0, 0, 0x60, 0xea, 0x60, 0xea, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        two.extend_from_slice(&EOCD_SIG);
        two.extend_from_slice(&[0, 0, 0, 0, 7, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(declared_entries(&two), Some((60000, false)));
    }
}
