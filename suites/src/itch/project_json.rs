//! A loaded project as the Itch glue reads it: targets with their static state and blocks
//! in `project.json`'s shape, inputs already reduced to what Itch's block trees hold (a
//! literal as text, a block by id, nothing), so `js/itch/model.js` can build snapshots and
//! block trees without a zip reader or a second JSON parser of untrusted files.

use clowder_vm::Project;
use clowder_vm::project::{Input, Lit};
use serde_json::{Value as J, json};

fn lit(l: &Lit) -> J {
    match l {
        Lit::Num(n) if n.is_finite() => json!(n),
        Lit::Bool(b) => json!(b),
        // JSON has no `undefined`: the file left the value out, which reads back as `null`.
        Lit::Null | Lit::Undefined => J::Null,
        other => json!(other.to_js_string()),
    }
}

/// The project as JSON text (`{"targets": [...]}`), in the file's target order.
pub(crate) fn project_json(project: &Project) -> String {
    let mut targets = Vec::new();
    for (ti, t) in project.targets.iter().enumerate() {
        let mut blocks = Vec::new();
        for b in project.blocks.iter().filter(|b| b.target as usize == ti) {
            let id_of = |i: u32| project.blocks.get(i as usize).map(|x| x.id.clone());
            let mut inputs = serde_json::Map::new();
            for (name, input) in &b.inputs {
                let v = match input {
                    Input::Empty => J::Null,
                    Input::Lit(l) => json!(l.to_js_string()),
                    Input::Block(x) => id_of(*x).map_or(J::Null, |id| json!({ "b": id })),
                    Input::Variable { name, .. } | Input::List { name, .. } | Input::Broadcast { name, .. } => {
                        json!(name)
                    }
                };
                inputs.insert(name.clone(), v);
            }
            let fields: serde_json::Map<String, J> =
                b.fields.iter().map(|f| (f.name.clone(), json!(f.value))).collect();
            let (proccode, argids) =
                b.mutation.as_ref().map_or((J::Null, J::Null), |m| (json!(m.proccode), json!(m.argument_ids)));
            blocks.push(json!({
                "id": b.id, "opcode": b.opcode,
                "next": b.next.and_then(id_of), "parent": b.parent.and_then(id_of),
                "inputs": inputs, "fields": fields, "mutation": proccode, "argumentids": argids,
                "shadow": b.shadow, "topLevel": b.top_level,
            }));
        }
        let mut variables: Vec<J> = t
            .variables
            .iter()
            .map(|v| json!({"id": v.id, "name": v.name, "type": "", "value": lit(&v.value)}))
            .collect();
        variables.extend(t.lists.iter().map(|v| {
            json!({"id": v.id, "name": v.name, "type": "list", "value": v.items.iter().map(lit).collect::<Vec<_>>()})
        }));
        variables.extend(
            t.broadcasts
                .iter()
                .map(|(id, name)| json!({"id": id, "name": name, "type": "broadcast_msg", "value": name})),
        );
        let costumes: Vec<J> = t
            .costumes
            .iter()
            .map(|c| {
                json!({"name": c.name, "assetId": c.asset_id, "dataFormat": c.data_format,
                       "rotationCenterX": c.rotation_center_x, "rotationCenterY": c.rotation_center_y,
                       "bitmapResolution": c.bitmap_resolution})
            })
            .collect();
        targets.push(json!({
            "id": format!("target{ti}"), "name": t.name, "isStage": t.is_stage,
            "x": t.x, "y": t.y, "size": t.size, "direction": t.direction, "visible": t.visible,
            "currentCostume": t.current_costume, "costumes": costumes, "volume": t.volume,
            "layerOrder": t.layer_order, "draggable": t.draggable, "rotationStyle": t.rotation_style,
            "tempo": t.tempo, "videoTransparency": t.video_transparency, "videoState": t.video_state,
            "variables": variables, "blocks": blocks,
        }));
    }
    json!({ "targets": targets }).to_string()
}
