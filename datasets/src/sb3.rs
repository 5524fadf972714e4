//! The pieces of the `.sb3` format datasets need without running a project:
//! reading `project.json` out of a container, telling Scratch 3 from older
//! formats, listing the asset files a project references, and assembling an
//! `.sb3` from a `project.json` and its assets.

use std::collections::BTreeSet;
use std::io::{Read, Write};

use serde_json::Value as Json;

/// Bounds for reading untrusted containers.
#[derive(Debug, Clone)]
pub struct ContainerLimits {
    /// Largest uncompressed `project.json`.
    pub max_json_bytes: u64,
    /// Most zip entries.
    pub max_entries: usize,
}

impl Default for ContainerLimits {
    fn default() -> Self {
        // Same bounds as the VM loader's defaults.
        Self { max_json_bytes: 64 << 20, max_entries: 10_000 }
    }
}

/// What a downloaded or stored project file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Scratch 3 (`targets` array).
    Scratch3,
    /// Scratch 2 (`objName` / `children`, no `targets`).
    Scratch2,
    /// Scratch 1.x binary (`ScratchV0…` header).
    Scratch1,
}

/// `project.json` bytes and, for a zip, the names of its other entries.
#[derive(Debug, Clone)]
pub struct Contents {
    /// The `project.json` bytes.
    pub json: Vec<u8>,
    /// Names of the other entries (assets), empty for a bare JSON file.
    pub entries: BTreeSet<String>,
    /// Whether the input was a zip.
    pub zipped: bool,
}

/// True when `bytes` start like a zip file.
pub fn is_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06")
}

/// Reads `project.json` out of a zip, or takes the bytes as JSON.
pub fn read_contents(bytes: &[u8], limits: &ContainerLimits) -> Result<Contents, String> {
    if !is_zip(bytes) {
        return Ok(Contents { json: bytes.to_vec(), entries: BTreeSet::new(), zipped: false });
    }
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| format!("not a readable zip: {e}"))?;
    if zip.len() > limits.max_entries {
        return Err(format!("zip has {} entries, over the limit of {}", zip.len(), limits.max_entries));
    }
    let mut entries = BTreeSet::new();
    let mut json_index = None;
    for i in 0..zip.len() {
        let f = zip.by_index_raw(i).map_err(|e| format!("zip entry {i}: {e}"))?;
        let name = f.name().map(|n| n.to_string()).map_err(|e| format!("zip entry {i}: {e}"))?;
        // Scratch writes `project.json` at the root; some tools nest everything in one folder.
        if name == "project.json" || (json_index.is_none() && name.ends_with("/project.json")) {
            json_index = Some(i);
        } else if !f.is_dir() {
            entries.insert(name.rsplit('/').next().unwrap_or(&name).to_string());
        }
    }
    let i = json_index.ok_or("zip has no project.json")?;
    let f = zip.by_index(i).map_err(|e| format!("project.json: {e}"))?;
    let mut json = Vec::new();
    // Read one byte past the bound to detect overflow without trusting the header's size.
    f.take(limits.max_json_bytes + 1).read_to_end(&mut json).map_err(|e| format!("project.json: {e}"))?;
    if json.len() as u64 > limits.max_json_bytes {
        return Err(format!("project.json is over the limit of {} bytes", limits.max_json_bytes));
    }
    Ok(Contents { json, entries, zipped: true })
}

/// Classifies parsed project JSON.
pub fn json_format(json: &Json) -> Option<Format> {
    let obj = json.as_object()?;
    if obj.get("targets").is_some_and(Json::is_array) {
        Some(Format::Scratch3)
    } else if obj.contains_key("objName") || obj.contains_key("children") {
        Some(Format::Scratch2)
    } else {
        None
    }
}

/// One asset file a project references.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct AssetRef {
    /// File name: 32 lower-case hex digits (the MD5 of the content), a dot, an extension.
    pub md5ext: String,
}

impl AssetRef {
    /// The MD5 part of the name, lower-case (as [`md5_hex`] writes it).
    pub fn md5(&self) -> String {
        self.md5ext[..32].to_ascii_lowercase()
    }
}

/// True for names of the form `<32 hex>.<1-8 alphanumerics>`: the only asset
/// names accepted, so a name can never escape a folder or a URL path.
pub fn valid_md5ext(name: &str) -> bool {
    let Some((md5, ext)) = name.split_once('.') else { return false };
    md5.len() == 32
        && md5.bytes().all(|b| b.is_ascii_hexdigit())
        && !ext.is_empty()
        && ext.len() <= 8
        && ext.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Costume and sound files referenced by a Scratch 3 project, sorted and
/// without duplicates. A name that is not `<md5>.<ext>` is an error (it
/// could not be fetched or verified).
pub fn asset_refs(json: &Json) -> Result<Vec<AssetRef>, String> {
    let mut set = BTreeSet::new();
    let targets = json.get("targets").and_then(Json::as_array).ok_or("no targets array")?;
    for (ti, t) in targets.iter().enumerate() {
        for kind in ["costumes", "sounds"] {
            let Some(items) = t.get(kind).and_then(Json::as_array) else { continue };
            for (i, a) in items.iter().enumerate() {
                let name = match a.get("md5ext").and_then(Json::as_str) {
                    Some(m) => m.to_string(),
                    None => {
                        let id = a.get("assetId").and_then(Json::as_str).unwrap_or("");
                        let fmt = a.get("dataFormat").and_then(Json::as_str).unwrap_or("");
                        format!("{id}.{fmt}")
                    }
                };
                // Kept as written: the VM looks assets up by this exact name.
                if !valid_md5ext(&name) {
                    return Err(format!("target {ti} {kind}[{i}]: asset name {name:?} is not <md5>.<ext>"));
                }
                set.insert(AssetRef { md5ext: name });
            }
        }
    }
    Ok(set.into_iter().collect())
}

/// MD5 of `bytes`, lower-case hex.
pub fn md5_hex(bytes: &[u8]) -> String {
    use md5::Digest;
    let d = md5::Md5::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Builds an `.sb3`: `project.json` first, then the assets in the given
/// order. Timestamps are fixed and compression is deterministic, so the same
/// inputs give the same bytes.
pub fn assemble(project_json: &[u8], assets: &[(String, Vec<u8>)]) -> Result<Vec<u8>, String> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let deflate = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    // Bitmaps and audio are already compressed: storing them saves time, not space.
    let stored = deflate.compression_method(zip::CompressionMethod::Stored);
    w.start_file("project.json", deflate).map_err(|e| e.to_string())?;
    w.write_all(project_json).map_err(|e| e.to_string())?;
    for (name, bytes) in assets {
        let compressible = name.ends_with(".svg") || name.ends_with(".wav") || name.ends_with(".json");
        w.start_file(name.as_str(), if compressible { deflate } else { stored }).map_err(|e| e.to_string())?;
        w.write_all(bytes).map_err(|e| e.to_string())?;
    }
    Ok(w.finish().map_err(|e| e.to_string())?.into_inner())
}

/// A copy of an `.sb3` whose `project.json` is `json`: every other entry is copied as
/// stored (no recompression), so the assets stay byte for byte the same. The JSON goes where
/// the original had it (at the root, or nested as some tools write it).
pub fn replace_project_json(sb3: &[u8], json: &[u8], limits: &ContainerLimits) -> Result<Vec<u8>, String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(sb3)).map_err(|e| format!("not a readable zip: {e}"))?;
    if zip.len() > limits.max_entries {
        return Err(format!("zip has {} entries, over the limit of {}", zip.len(), limits.max_entries));
    }
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let deflate = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    // The entry `read_contents` reads: the root one, else the first nested one.
    let names: Vec<String> = zip.file_names().filter_map(Result::ok).map(|n| n.into_owned()).collect();
    let json_name = names
        .iter()
        .find(|n| *n == "project.json")
        .or_else(|| names.iter().find(|n| n.ends_with("/project.json")))
        .ok_or("zip has no project.json")?
        .clone();
    for i in 0..zip.len() {
        let f = zip.by_index_raw(i).map_err(|e| format!("zip entry {i}: {e}"))?;
        let name = f.name().map(|n| n.to_string()).map_err(|e| format!("zip entry {i}: {e}"))?;
        if name == json_name {
            w.start_file(name.as_str(), deflate).map_err(|e| e.to_string())?;
            w.write_all(json).map_err(|e| e.to_string())?;
        } else {
            w.raw_copy_file(f).map_err(|e| format!("zip entry {name}: {e}"))?;
        }
    }
    Ok(w.finish().map_err(|e| e.to_string())?.into_inner())
}

/// Checks a stored `.sb3`: it has a Scratch 3 `project.json`, every asset it
/// references is present, and every asset's MD5 equals its name.
pub fn verify_sb3(bytes: &[u8], limits: &ContainerLimits, max_asset_bytes: u64) -> Result<(), String> {
    let c = read_contents(bytes, limits)?;
    let json: Json = serde_json::from_slice(&c.json).map_err(|e| format!("project.json: {e}"))?;
    if json_format(&json) != Some(Format::Scratch3) {
        return Err("project.json is not a Scratch 3 project".into());
    }
    let refs = asset_refs(&json)?;
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| e.to_string())?;
    for r in refs {
        let f = zip.by_name(&r.md5ext).map_err(|_| format!("asset {} is missing", r.md5ext))?;
        let mut buf = Vec::new();
        f.take(max_asset_bytes + 1).read_to_end(&mut buf).map_err(|e| format!("asset {}: {e}", r.md5ext))?;
        if md5_hex(&buf) != r.md5() {
            return Err(format!("asset {}: content does not match its MD5", r.md5ext));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asset_names_are_validated() {
        assert!(valid_md5ext("0123456789abcdef0123456789abcdef.svg"));
        assert!(!valid_md5ext("0123456789abcdef0123456789abcdef"));
        assert!(!valid_md5ext("../../../etc/passwd.svg"));
        assert!(!valid_md5ext("0123456789abcdef0123456789abcdeg.svg"));
        assert!(!valid_md5ext("0123456789abcdef0123456789abcdef.s/g"));
    }

    #[test]
    fn refs_from_md5ext_or_asset_id() {
        let j: Json = serde_json::json!({"targets": [
            {"costumes": [{"md5ext": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.svg"},
                          {"assetId": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "dataFormat": "png"}],
             "sounds": [{"md5ext": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.svg"}]}]});
        let refs = asset_refs(&j).unwrap();
        let names: Vec<&str> = refs.iter().map(|r| r.md5ext.as_str()).collect();
        assert_eq!(
            names,
            [
                "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.svg",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.svg",
                "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.png"
            ]
        );
        assert_eq!(refs[0].md5(), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
        let bad = serde_json::json!({"targets": [{"costumes": [{"md5ext": "../x.svg"}]}]});
        assert!(asset_refs(&bad).unwrap_err().contains("../x.svg"));
    }

    #[test]
    fn formats() {
        assert_eq!(json_format(&serde_json::json!({"targets": []})), Some(Format::Scratch3));
        assert_eq!(json_format(&serde_json::json!({"objName": "Stage", "children": []})), Some(Format::Scratch2));
        assert_eq!(json_format(&serde_json::json!([1])), None);
    }

    #[test]
    fn assembled_sb3_is_deterministic_and_verifies() {
        let svg = b"<svg xmlns='http://www.w3.org/2000/svg'/>".to_vec();
        let name = format!("{}.svg", md5_hex(&svg));
        let json = serde_json::to_vec(&serde_json::json!({"targets": [{"costumes": [{"md5ext": name}]}]})).unwrap();
        let a = assemble(&json, &[(name.clone(), svg.clone())]).unwrap();
        let b = assemble(&json, &[(name.clone(), svg.clone())]).unwrap();
        assert_eq!(a, b);
        verify_sb3(&a, &ContainerLimits::default(), 1 << 20).unwrap();
        let c = read_contents(&a, &ContainerLimits::default()).unwrap();
        assert_eq!(c.json, json);
        assert!(c.entries.contains(&name));
        // A corrupted asset is caught by its MD5.
        let bad = assemble(&json, &[(name, b"<svg/>".to_vec())]).unwrap();
        assert!(verify_sb3(&bad, &ContainerLimits::default(), 1 << 20).unwrap_err().contains("MD5"));
    }

    #[test]
    fn replacing_project_json_keeps_the_assets_byte_for_byte() {
        let svg = b"<svg xmlns='http://www.w3.org/2000/svg'/>".to_vec();
        let name = format!("{}.svg", md5_hex(&svg));
        let json = serde_json::to_vec(&serde_json::json!({"targets": [{"costumes": [{"md5ext": name}]}]})).unwrap();
        let a = assemble(&json, &[(name.clone(), svg.clone())]).unwrap();
        let edited = br#"{"targets":[{"name":"edited","costumes":[]}]}"#;
        let b = replace_project_json(&a, edited, &ContainerLimits::default()).unwrap();
        let c = read_contents(&b, &ContainerLimits::default()).unwrap();
        assert_eq!(c.json, edited);
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(&b)).unwrap();
        let mut asset = Vec::new();
        zip.by_name(&name).unwrap().read_to_end(&mut asset).unwrap();
        assert_eq!(asset, svg);
        assert!(replace_project_json(b"not a zip", edited, &ContainerLimits::default()).is_err());
        let no_json = assemble(b"{}", &[]).unwrap();
        let renamed = replace_project_json(&no_json, b"{}", &ContainerLimits::default());
        assert!(renamed.is_ok(), "project.json at the root is found");
    }
}
