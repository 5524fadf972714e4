//! `clowder mutate --write-mutants DIR`: each project's mutants as project files, for other
//! tools to run (the real Whisker grading mutants as student programs, `docs/mutation.md`).

use std::path::Path;

use anyhow::Context;
use clowder_datasets::sb3::{ContainerLimits, read_contents, replace_project_json};
use clowder_testgen::mutation::{self, Mutant};
use clowder_vm::Project;

use super::mutate::csv_field;

/// Most bytes one project's written mutants may take.
const MAX_TOTAL_BYTES: u64 = 20_000_000_000;

/// Writes `mutants` of `project` (loaded from `path`) into `dir/<name>/`: `<mutant id>.sb3`
/// (the original's assets, byte for byte, and the edited `project.json`), or `.json` for a
/// bare `project.json`, and `mutants.csv` (id, operator, block, change, file). A mutant whose
/// edit does not fit the file is listed with an empty file name and said on stderr. Returns
/// the number written.
pub fn write(path: &Path, name: &str, project: &Project, mutants: &[Mutant], dir: &Path) -> anyhow::Result<usize> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    // Every mutant is a whole copy of the project: refuse, before writing anything, what would
    // fill a disk (Paper Minecraft's 16 274 mutants of its 3.9 MB file would be 63 GB).
    let total = (bytes.len() as u64).saturating_mul(mutants.len() as u64);
    if total > MAX_TOTAL_BYTES {
        anyhow::bail!(
            "{name}: {} mutants of a {:.1} MB project would take {:.1} GB, over the limit of {} GB; \
             write a sample (--sample N per operator)",
            mutants.len(),
            bytes.len() as f64 / 1e6,
            total as f64 / 1e9,
            MAX_TOTAL_BYTES / 1_000_000_000
        );
    }
    let limits = ContainerLimits::default();
    let contents = read_contents(&bytes, &limits).map_err(anyhow::Error::msg).context("reading project.json")?;
    let original = clowder_vm::project::document(&contents.json, &clowder_vm::LoadLimits::default())
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("parsing {}", path.display()))?;
    let out = dir.join(name);
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let mut csv = String::from("mutant_id,operator,block_id,detail,file\n");
    let mut written = 0;
    for m in mutants {
        let mut doc = original.clone();
        let file = match mutation::json::apply_edit_to_document(&mut doc, project, &m.edit) {
            Ok(()) => {
                let json = serde_json::to_vec(&doc).context("serialising a mutant")?;
                let (file, data) = if contents.zipped {
                    let sb3 = replace_project_json(&bytes, &json, &limits).map_err(anyhow::Error::msg)?;
                    (format!("{}.sb3", m.id), sb3)
                } else {
                    (format!("{}.json", m.id), json)
                };
                std::fs::write(out.join(&file), data).with_context(|| format!("writing {file}"))?;
                written += 1;
                file
            }
            Err(e) => {
                eprintln!("{name} {}: not written ({})", m.id, e.0);
                String::new()
            }
        };
        csv.push_str(&format!(
            "{},{},{},{},{}\n",
            m.id,
            m.operator.name(),
            csv_field(&m.block_id),
            csv_field(&m.detail),
            file
        ));
    }
    std::fs::write(out.join("mutants.csv"), csv).context("writing mutants.csv")?;
    Ok(written)
}
