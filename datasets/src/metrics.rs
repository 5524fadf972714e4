//! Size metrics of one project, as the Whisker paper describes its datasets
//! (Figure 11: connected, reachable statement blocks per project).

use std::collections::{BTreeMap, BTreeSet};

use clowder_vm::project::{LoadLimits, load};
use serde::{Deserialize, Serialize};

use crate::sb3::{self, ContainerLimits};

/// Size metrics of one project. `statements` is what the paper's Figure 11
/// counts; the others describe the project's shape.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metrics {
    /// Coverage targets: statement blocks reachable from a hat through the
    /// script and its substacks (`clowder_testgen::targets::statement_targets`,
    /// the same targets the generator covers), hats included.
    pub statements: u64,
    /// Non-shadow blocks, anywhere (loose blocks and reporters included).
    pub blocks: u64,
    /// Sprites (targets other than the stage; clones do not exist yet).
    pub sprites: u64,
    /// Scripts: top-level stacks that start with a hat clowder can trigger or the
    /// program triggers itself (`clowder_testgen::graph::is_hat`).
    pub scripts: u64,
    /// Other top-level stacks: loose blocks, and scripts under hats nothing can
    /// trigger here (extension hats such as Makey Makey or video motion).
    pub loose_scripts: u64,
    /// Extensions the project declares (`pen`, `music`, …), sorted.
    pub extensions: Vec<String>,
    /// Distinct asset files (costumes and sounds) the project references.
    pub assets: u64,
    /// Referenced asset files that are not in the container (all of them for a bare `project.json`).
    pub assets_missing: u64,
    /// Costumes and backdrops.
    #[serde(default)]
    pub costumes: u64,
    /// Scripts (as in `scripts`) that ask `touching (sprite, edge or mouse-pointer)?`.
    #[serde(default)]
    pub touching_scripts: u64,
    /// Scripts that ask `touching color?` or `color is touching color?`.
    #[serde(default)]
    pub color_scripts: u64,
    /// Scripts that create clones.
    #[serde(default)]
    pub clone_scripts: u64,
}

/// Loads a project file's bytes with the VM's loader and measures it.
/// The error is the loader's message (the project is then not measurable).
pub fn measure(bytes: &[u8], name: &str) -> Result<Metrics, String> {
    let project = load(bytes, name, &LoadLimits::default()).map_err(|e| e.to_string())?;
    let statements = clowder_testgen::targets::statement_targets(&project).len() as u64;
    let blocks = project.blocks.iter().filter(|b| !b.shadow).count() as u64;
    let sprites = project.targets.iter().filter(|t| !t.is_stage).count() as u64;
    let (mut scripts, mut loose_scripts) = (0, 0);
    // Which top-level stack each block belongs to (parents lead there).
    let top_of = |mut i: clowder_vm::project::BlockIdx| {
        for _ in 0..project.blocks.len() {
            match project.block(i).parent {
                Some(p) => i = p,
                None => break,
            }
        }
        i
    };
    let mut senses: BTreeMap<clowder_vm::project::BlockIdx, [bool; 3]> = BTreeMap::new();
    for (i, b) in project.blocks.iter().enumerate() {
        let kind = match b.opcode.as_str() {
            "sensing_touchingobject" => 0,
            "sensing_touchingcolor" | "sensing_coloristouchingcolor" => 1,
            "control_create_clone_of" => 2,
            _ => continue,
        };
        senses.entry(top_of(i as clowder_vm::project::BlockIdx)).or_default()[kind] = true;
    }
    let (mut touching_scripts, mut color_scripts, mut clone_scripts) = (0, 0, 0);
    for t in &project.targets {
        for &top in &t.scripts {
            let b = project.block(top);
            if b.shadow {
                continue;
            }
            if clowder_testgen::graph::is_hat(&b.opcode) {
                scripts += 1;
                let s = senses.get(&top).copied().unwrap_or_default();
                touching_scripts += u64::from(s[0]);
                color_scripts += u64::from(s[1]);
                clone_scripts += u64::from(s[2]);
            } else {
                loose_scripts += 1;
            }
        }
    }
    let costumes = project.targets.iter().map(|t| t.costumes.len() as u64).sum();
    let extensions: BTreeSet<String> = project.extensions.iter().cloned().collect();
    // Asset references come from the JSON itself: the VM keeps no sound file names.
    let contents = sb3::read_contents(bytes, &ContainerLimits::default())?;
    let json: serde_json::Value = serde_json::from_slice(&contents.json).map_err(|e| format!("project.json: {e}"))?;
    let refs = sb3::asset_refs(&json).unwrap_or_default();
    let missing = refs.iter().filter(|r| !contents.entries.contains(&r.md5ext)).count() as u64;
    Ok(Metrics {
        statements,
        blocks,
        sprites,
        scripts,
        loose_scripts,
        extensions: extensions.into_iter().collect(),
        assets: refs.len() as u64,
        assets_missing: missing,
        costumes,
        touching_scripts,
        color_scripts,
        clone_scripts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoke_counter_is_measured() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("smoke/counter.json");
        let bytes = std::fs::read(path).unwrap();
        let m = measure(&bytes, "counter.json").unwrap();
        assert!(m.statements > 0 && m.statements <= m.blocks, "{m:?}");
        assert!(m.sprites >= 1 && m.scripts >= 1, "{m:?}");
        // A bare project.json carries no assets.
        assert!(m.assets > 0 && m.assets_missing == m.assets, "{m:?}");
    }

    #[test]
    fn unloadable_bytes_give_the_loader_error() {
        let err = measure(b"{\"objName\": \"Stage\"}", "old.json").unwrap_err();
        assert!(!err.is_empty());
    }
}
