//! Sharing decoded costumes: a project's [`CostumeSet`] is kept in its cache slot and serves
//! every VM of the project, and of edited copies with the same costumes (mutants).

use std::sync::Arc;

use crate::geometry::skin::CostumeSet;
use crate::project::Project;

/// The project's costume set, created on first use and kept in the project's cache slot.
pub fn costume_set(project: &Arc<Project>) -> Arc<CostumeSet> {
    let any = project.geometry_data.0.get_or_init(|| CostumeSet::new(project.clone()));
    // Dropping the unwind-safety markers is a plain coercion; `downcast` needs `dyn Any + Send + Sync`.
    let any: Arc<dyn std::any::Any + Send + Sync> = any.clone();
    match any.downcast::<CostumeSet>() {
        // A cloned project shares the slot but not the set's (weak) project link: the set
        // serves the copy when the copy's costumes are the original's (an edited copy such as
        // a mutant, `Project::clone_for_edit`), so a mutant's VMs do not decode every costume
        // again (each one did before: most of a costume-heavy project's mutation analysis).
        Ok(c) if c.project().is_some_and(|p| Arc::ptr_eq(&p, project) || same_costumes(&p, project)) => c,
        // Someone else's data, or a copy with other costumes: decode privately.
        _ => CostumeSet::new(project.clone()),
    }
}

/// Whether `b` has `a`'s costumes: the same costumes per target (asset, format, centre,
/// resolution) backed by assets of the same sizes. Assets are named by their content's md5,
/// and a copy's assets are the original's unless someone replaced one in place, which the
/// size check catches in practice; nothing in clowder edits assets.
fn same_costumes(a: &Project, b: &Project) -> bool {
    let same = |x: &crate::project::Costume, y: &crate::project::Costume| {
        x.md5ext == y.md5ext
            && x.data_format == y.data_format
            && x.rotation_center_x.to_bits() == y.rotation_center_x.to_bits()
            && x.rotation_center_y.to_bits() == y.rotation_center_y.to_bits()
            && x.has_rotation_center == y.has_rotation_center
            && x.bitmap_resolution.to_bits() == y.bitmap_resolution.to_bits()
            && a.assets.get(&x.md5ext).map(Vec::len) == b.assets.get(&y.md5ext).map(Vec::len)
    };
    a.targets.len() == b.targets.len()
        && a.targets.iter().zip(&b.targets).all(|(s, t)| {
            s.costumes.len() == t.costumes.len() && s.costumes.iter().zip(&t.costumes).all(|(x, y)| same(x, y))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project_with_costume(md5ext: &str) -> Project {
        let json = format!(
            r#"{{"targets": [{{"isStage": true, "name": "Stage", "variables": {{}}, "lists": {{}},
                "broadcasts": {{}}, "blocks": {{}}, "comments": {{}}, "currentCostume": 0,
                "costumes": [{{"assetId": "{}", "dataFormat": "svg", "md5ext": "{md5ext}", "name": "c",
                               "rotationCenterX": 5, "rotationCenterY": 5}}],
                "sounds": [], "volume": 100, "layerOrder": 0}}],
              "monitors": [], "extensions": [], "meta": {{"semver": "3.0.0"}}}}"#,
            md5ext.split('.').next().unwrap_or_default()
        );
        let mut p = crate::project::load(json.as_bytes(), "p.json", &crate::LoadLimits::default()).expect("loads");
        let svg =
            br#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>"#;
        p.assets.insert(md5ext.to_string(), svg.to_vec());
        p
    }

    /// An edited copy (a mutant) uses the original's decoded costumes instead of decoding them
    /// for every VM; a copy with other costumes does not.
    #[test]
    fn edited_copies_share_the_decoded_costumes() {
        let original = Arc::new(project_with_costume("0123456789abcdef0123456789abcdef.svg"));
        let set = costume_set(&original);
        assert!(Arc::ptr_eq(&set, &costume_set(&original)), "cached in the project");
        let copy = Arc::new(original.clone_for_edit());
        assert!(Arc::ptr_eq(&set, &costume_set(&copy)), "the copy shares the original's set");
        let mut other = original.clone_for_edit();
        other.targets[0].costumes[0].rotation_center_x = 6.0;
        let other = Arc::new(other);
        assert!(!Arc::ptr_eq(&set, &costume_set(&other)), "other costumes are decoded privately");
        // Without the original, a copy decodes privately (its set would have no costumes to read).
        drop(set);
        drop(original);
        assert!(costume_set(&copy).project().is_some_and(|p| Arc::ptr_eq(&p, &copy)));
    }
}
