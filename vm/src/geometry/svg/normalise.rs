//! `loadSvgString` and `serializeSvgToString`: the source document rebuilt as a clean SVG
//! with width, height and view box, keeping only SVG and XLink content, with embedded
//! images drawn pixelated.

use std::fmt::Write as _;

use super::container::Aspect;
use super::fonts::is_scratch_font;
use super::measure::measure;
use super::pushdown::{Matrix, Pushed, StrokeWidth, invert, step};
use super::{SVG_NS, XLINK_NS, XML_NS, parse_xml};
use crate::util::math::f32r;

/// A normalised document and the numbers [`super::SvgImage`] keeps from it.
pub(super) struct Normalised {
    /// The rebuilt SVG source.
    pub(super) text: String,
    /// `viewBox` width and height (single precision; zero when not positive).
    pub(super) view_size: [f64; 2],
    /// `viewBox` x and y (single precision).
    pub(super) view_origin: [f64; 2],
    /// The root's `preserveAspectRatio`.
    pub(super) aspect: Aspect,
    /// Whether the document contains text.
    pub(super) has_text: bool,
    /// The ids of the document's `<circle>`, `<ellipse>` and `<rect>` elements (sorted;
    /// elements without an id are given a fresh one): usvg turns them into paths, which keep
    /// the id, and the browser builds ellipses and rounded corners from conics (`conics`).
    pub(super) conic_ids: Vec<String>,
}

/// What serialising the document's nodes collects besides the text.
struct Writer<'a> {
    out: String,
    has_text: bool,
    /// Scratch fonts inlined in this document.
    inlined: Vec<&'a str>,
    /// Every id the source uses, so that generated ones are fresh.
    taken: std::collections::BTreeSet<&'a str>,
    conic_ids: Vec<String>,
    /// Ids generated so far.
    generated: usize,
    /// The clip paths and masks (by id) whose content is in user space units, which
    /// [`Writer::reroot`] can re-express.
    rerootable: std::collections::BTreeSet<&'a str>,
    /// Copies of clip paths and masks to write after the drawing: the source's id, the
    /// correction put before the content, the copy's id.
    copies: Vec<(String, Matrix, String)>,
    /// Writing a copy: ids are left out (they would be duplicates).
    copying: bool,
}

/// At most this many clip path and mask copies per document (each is at most the source's size).
const MAX_COPIES: usize = 256;

/// `loadSvgString` (Scratch 3 path) + `serializeSvgToString`: a clean SVG with width, height and view box.
pub(super) fn normalise(text: &str) -> Result<Normalised, String> {
    let doc = parse_xml(text)?;
    let root = doc.root_element();
    if root.tag_name().name() != "svg" {
        return Err("document does not appear to be SVG".to_string());
    }
    let mut writer = Writer {
        out: String::with_capacity(text.len()),
        has_text: false,
        inlined: inlined_fonts(&root),
        taken: root.descendants().filter_map(|n| n.attribute("id")).collect(),
        conic_ids: Vec::new(),
        generated: 0,
        rerootable: rerootable(&root),
        copies: Vec::new(),
        copying: false,
    };
    // transformStrokeWidths starts at the root: a container, whose stroke width passes down.
    let root_width = root.attribute("stroke-width").map_or(StrokeWidth::Default, StrokeWidth::Attr);
    for child in root.children() {
        writer.node(&child, Pushed::Reached(super::pushdown::IDENTITY, root_width));
    }
    writer.write_copies(&root);
    let Writer { out: body, has_text, mut conic_ids, .. } = writer;
    conic_ids.sort();
    let attr = |name: &str| root.attributes().find(|a| a.namespace().is_none() && a.name() == name).map(|a| a.value());
    let mut width = attr("width").map(str::to_string);
    let mut height = attr("height").map(str::to_string);
    let view_box = match attr("viewBox") {
        Some(vb) => parse_view_box(vb),
        None => {
            // transformMeasurements: getBBox of the drawing plus half the largest stroke width.
            let (bbox, stroke) = measure(&root, &body)?;
            let half = if bbox[2] == 0.0 || bbox[3] == 0.0 { 0.0 } else { stroke / 2.0 };
            let vb = [bbox[0] - half, bbox[1] - half, bbox[2] + half * 2.0, bbox[3] + half * 2.0];
            width = Some(js_number(vb[2]));
            height = Some(js_number(vb[3]));
            vb
        }
    };
    // The browser keeps view box numbers in single precision.
    let vb = view_box.map(f32r);
    if width.is_none() || height.is_none() {
        width = Some(js_number(vb[2]));
        height = Some(js_number(vb[3]));
    }
    let mut out = String::with_capacity(body.len() + 512);
    out.push_str("<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\"");
    for a in root.attributes() {
        if a.namespace().is_some() || matches!(a.name(), "width" | "height" | "viewBox") {
            continue;
        }
        write_attr(&mut out, a.name(), a.value());
    }
    if let (Some(w), Some(h)) = (&width, &height) {
        write_attr(&mut out, "width", w);
        write_attr(&mut out, "height", h);
    }
    let vb_text = format!("{} {} {} {}", js_number(vb[0]), js_number(vb[1]), js_number(vb[2]), js_number(vb[3]));
    write_attr(&mut out, "viewBox", &vb_text);
    out.push('>');
    out.push_str(&body);
    out.push_str("</svg>");
    let (w, h) = (vb[2], vb[3]);
    Ok(Normalised {
        text: out,
        view_size: [if w.is_finite() && w > 0.0 { w } else { 0.0 }, if h.is_finite() && h > 0.0 { h } else { 0.0 }],
        view_origin: [vb[0], vb[1]],
        aspect: Aspect::parse(attr("preserveAspectRatio")),
        has_text,
        conic_ids,
    })
}

/// Parses `viewBox` as the browser does (four numbers separated by spaces and/or commas);
/// an unparseable value is all zeros (an empty costume).
fn parse_view_box(s: &str) -> [f64; 4] {
    let nums: Vec<f64> = s
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .map_while(|t| t.parse::<f64>().ok())
        .collect();
    if nums.len() == 4 && nums.iter().all(|n| n.is_finite()) && nums[2] >= 0.0 && nums[3] >= 0.0 {
        [nums[0], nums[1], nums[2], nums[3]]
    } else {
        [0.0; 4]
    }
}

/// JavaScript's number-to-string for the values we write back into attributes.
fn js_number(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    if !x.is_finite() {
        return "0".to_string();
    }
    let s = format!("{x}");
    s
}

fn write_attr(out: &mut String, name: &str, value: &str) {
    out.push(' ');
    out.push_str(name);
    out.push_str("=\"");
    escape_into(out, value, true);
    out.push('"');
}

fn escape_into(out: &mut String, s: &str, attr: bool) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attr => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
}

impl<'a> Writer<'a> {
    /// Serialises one node of the source document, keeping SVG and XLink content and
    /// applying `transformImages` (embedded bitmaps are drawn pixelated).
    /// `at` is where `transformStrokeWidths` left the node's parent (`pushdown`).
    fn node(&mut self, node: &roxmltree::Node<'a, '_>, at: Pushed<'a>) {
        if node.is_text() {
            if let Some(t) = node.text() {
                escape_into(&mut self.out, t, false);
            }
            return;
        }
        if !node.is_element() {
            return;
        }
        let tag = node.tag_name();
        if tag.namespace().is_some_and(|ns| ns != SVG_NS) {
            return;
        }
        let name = tag.name();
        if name == "text" {
            self.has_text = true;
        }
        let pushed = step(node, at);
        self.out.push('<');
        self.out.push_str(name);
        let mut style = None;
        for a in node.attributes() {
            let qualified = match a.namespace() {
                None => a.name().to_string(),
                Some(XLINK_NS) => format!("xlink:{}", a.name()),
                Some(XML_NS) => format!("xml:{}", a.name()),
                Some(_) => continue,
            };
            if name == "image" && qualified == "style" {
                style = Some(a.value().to_string());
                continue;
            }
            // `alignment-baseline` does not apply to a `<text>` element and is not inherited:
            // Chromium ignores it there (Scratch 2's text-before-edge), usvg would apply it.
            if name == "text" && qualified == "alignment-baseline" {
                continue;
            }
            if self.copying && qualified == "id" {
                continue;
            }
            let value = match qualified.as_str() {
                "font-family" => browser_families(a.value(), &self.inlined),
                "style" if a.value().contains("font-family") => browser_style(a.value(), &self.inlined),
                "clip-path" | "mask" => pushed.lost.and_then(|m| self.reroot(a.value(), m)),
                _ => None,
            };
            write_attr(&mut self.out, &qualified, value.as_deref().unwrap_or(a.value()));
        }
        if name == "image" {
            let pixelated = "image-rendering: optimizespeed; image-rendering: pixelated;";
            let v = match style {
                Some(s) if !s.is_empty() => format!("{pixelated} {s}"),
                _ => pixelated.to_string(),
            };
            write_attr(&mut self.out, "style", &v);
        }
        if matches!(name, "circle" | "ellipse" | "rect") {
            self.mark_conic(node);
        }
        self.out.push('>');
        for child in node.children() {
            self.node(&child, pushed.children);
        }
        let _ = write!(self.out, "</{name}>");
    }

    /// The reference `url(#id)` of an element whose user space `transformStrokeWidths` took
    /// `lost` from, pointed at a copy of the clip path or mask drawn in the root's user space,
    /// as the browser draws it; `None` to keep the reference as written.
    fn reroot(&mut self, value: &str, lost: Matrix) -> Option<String> {
        let id = value.trim().strip_prefix("url(")?.strip_suffix(')')?.trim().trim_matches(|c| c == '"' || c == '\'');
        let id = id.strip_prefix('#')?;
        if !self.rerootable.contains(id) {
            return None;
        }
        let fix = invert(lost)?;
        if let Some((_, _, copy)) = self.copies.iter().find(|(src, m, _)| src == id && *m == fix) {
            return Some(format!("url(#{copy})"));
        }
        if self.copies.len() >= MAX_COPIES {
            return None;
        }
        let copy = self.fresh_id("clowder-rerooted");
        self.copies.push((id.to_string(), fix, copy.clone()));
        Some(format!("url(#{copy})"))
    }

    /// The clip paths and masks [`Writer::reroot`] asked for, in a `<defs>` after the drawing:
    /// the source's content under the correction (a clip path's own `transform` goes first,
    /// a mask's content is wrapped in a group).
    fn write_copies(&mut self, root: &roxmltree::Node<'a, '_>) {
        if self.copies.is_empty() {
            return;
        }
        let copies = std::mem::take(&mut self.copies);
        self.out.push_str("<defs>");
        self.copying = true;
        for (src, fix, copy) in &copies {
            // The browser resolves a duplicate id to its first element.
            let Some(def) = root.descendants().find(|n| n.attribute("id") == Some(src.as_str())) else { continue };
            let name = def.tag_name().name();
            // `+ 0.0` writes a negative zero as 0.
            let [a, b, c, d, e, f] = fix.map(|v| v + 0.0);
            let matrix = format!("matrix({a} {b} {c} {d} {e} {f})");
            let _ = write!(self.out, "<{name}");
            write_attr(&mut self.out, "id", copy);
            for a in def.attributes().filter(|a| a.namespace().is_none() && a.name() != "id") {
                if name == "clipPath" && a.name() == "transform" {
                    continue;
                }
                write_attr(&mut self.out, a.name(), a.value());
            }
            if name == "clipPath" {
                let t = match def.attribute("transform") {
                    Some(t) => format!("{matrix} {t}"),
                    None => matrix.clone(),
                };
                write_attr(&mut self.out, "transform", &t);
                self.out.push('>');
            } else {
                self.out.push('>');
                let _ = write!(self.out, "<g transform=\"{matrix}\">");
            }
            for child in def.children() {
                self.node(&child, Pushed::Untouched);
            }
            if name != "clipPath" {
                self.out.push_str("</g>");
            }
            let _ = write!(self.out, "</{name}>");
        }
        self.copying = false;
        self.out.push_str("</defs>");
    }

    /// An id no element of the source uses and none generated before.
    fn fresh_id(&mut self, prefix: &str) -> String {
        loop {
            let id = format!("{prefix}-{}", self.generated);
            self.generated += 1;
            if !self.taken.contains(id.as_str()) {
                return id;
            }
        }
    }

    /// Records the id of an element the browser may build from conics, giving it a fresh one
    /// when it has none.
    fn mark_conic(&mut self, node: &roxmltree::Node<'a, '_>) {
        match node.attribute("id").filter(|_| !self.copying) {
            // An empty id cannot be told apart: that shape keeps usvg's outline.
            Some("") => return,
            Some(id) => {
                self.conic_ids.push(id.to_string());
                return;
            }
            None => {}
        }
        let id = self.fresh_id("clowder-conic");
        write_attr(&mut self.out, "id", &id);
        self.conic_ids.push(id);
    }
}

/// The ids of the clip paths and masks whose content is drawn in the referring
/// element's user space, the only ones [`Writer::reroot`] re-expresses (content in bounding
/// box units would need the browser's bounding box after the push-down).
fn rerootable<'a>(root: &roxmltree::Node<'a, '_>) -> std::collections::BTreeSet<&'a str> {
    let mut out = std::collections::BTreeSet::new();
    for n in root.descendants().filter(|n| n.is_element()) {
        let units = match n.tag_name().name() {
            "clipPath" => n.attribute("clipPathUnits"),
            "mask" => n.attribute("maskContentUnits"),
            _ => continue,
        };
        if let Some(id) = n.attribute("id")
            && units.is_none_or(|u| u.trim() != "objectBoundingBox")
        {
            out.insert(id);
        }
    }
    out
}

/// The Scratch fonts scratch-svg-renderer's `inlineSvgFonts` embeds in this document: each
/// Scratch font name that is some element's whole `font-family` attribute. The browser has
/// no other Scratch font.
fn inlined_fonts<'a>(root: &roxmltree::Node<'a, '_>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for n in root.descendants() {
        if let Some(v) = n.attribute("font-family")
            && is_scratch_font(v)
            && !out.contains(&v)
        {
            out.push(v);
        }
    }
    out
}

/// A `font-family` list without the Scratch font names that were not inlined (the browser
/// goes on to the next family for them); `None` when nothing is dropped. A list left empty
/// is the browser's default font (`serif` here).
fn browser_families(list: &str, inlined: &[&str]) -> Option<String> {
    let mut parts = Vec::new();
    let (mut start, mut quote) = (0, None);
    for (i, c) in list.char_indices() {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            (',', None) => {
                parts.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&list[start..]);
    let absent = |part: &str| {
        if GENERIC_FAMILIES.iter().any(|g| part.trim().eq_ignore_ascii_case(g)) {
            return false;
        }
        let name = part.trim().trim_matches(|c| c == '"' || c == '\'');
        let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
        is_scratch_font(&name) && !inlined.contains(&name.as_str())
    };
    // CSS's generic family keywords are case-insensitive when unquoted: the Scratch name
    // `Serif` as a whole attribute is the browser's default serif font, not the inlined
    // Source Serif (seen in Chromium's silhouettes); usvg matches keywords in lower case only.
    let generic = |part: &str| {
        let p = part.trim();
        GENERIC_FAMILIES.iter().find(|g| p.eq_ignore_ascii_case(g) && p != **g).copied()
    };
    if !parts.iter().any(|p| absent(p) || generic(p).is_some()) {
        return None;
    }
    let kept: Vec<&str> = parts.into_iter().filter(|p| !absent(p)).map(|p| generic(p).unwrap_or(p)).collect();
    Some(if kept.is_empty() { "serif".to_string() } else { kept.join(",") })
}

/// CSS's generic font families, as usvg knows them.
const GENERIC_FAMILIES: [&str; 5] = ["serif", "sans-serif", "cursive", "fantasy", "monospace"];

/// A `style` attribute with its `font-family` declaration read as [`browser_families`] reads
/// the attribute; `None` when nothing changes.
fn browser_style(style: &str, inlined: &[&str]) -> Option<String> {
    let mut changed = false;
    let decls: Vec<String> = style
        .split(';')
        .map(|d| match d.split_once(':') {
            Some((k, v)) if k.trim().eq_ignore_ascii_case("font-family") => match browser_families(v, inlined) {
                Some(nv) => {
                    changed = true;
                    format!("{k}:{nv}")
                }
                None => d.to_string(),
            },
            _ => d.to_string(),
        })
        .collect();
    changed.then(|| decls.join(";"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_of_pushed_down_containers_are_rerooted() {
        let svg = r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><defs><clipPath id="c" transform="scale(2)"><rect width="3" height="3"/></clipPath></defs><g transform="translate(2,3)"><g clip-path="url(#c)"><rect width="9" height="9"/></g><rect clip-path="url(#c)" width="1" height="1"/></g></svg>"#;
        let Ok(n) = normalise(svg) else { panic!("normalises") };
        // The group's clip now undoes the translation the browser no longer applies to it; the
        // rect keeps the translation as its own transform, and so its clip.
        assert!(n.text.contains(r#"<g clip-path="url(#clowder-rerooted-1)">"#), "{}", n.text);
        assert!(n.text.contains(r#"<rect clip-path="url(#c)""#), "{}", n.text);
        assert!(
            n.text.contains(r#"<clipPath id="clowder-rerooted-1" transform="matrix(1 0 0 1 -2 -3) scale(2)">"#),
            "{}",
            n.text
        );
        // The copy's shapes have fresh ids (and are drawn as conics like the original's).
        assert_eq!(n.conic_ids.len(), 4, "{:?}", n.conic_ids);
    }

    #[test]
    fn scratch_fonts_not_inlined_leave_the_list() {
        let l = r#""Roboto-Regular", Sans Serif"#;
        assert_eq!(browser_families(l, &[]).as_deref(), Some(r#""Roboto-Regular""#));
        assert_eq!(browser_families(l, &["Sans Serif"]), None);
        assert_eq!(browser_families("'Sans  Serif'", &[]).as_deref(), Some("serif"));
        assert_eq!(browser_families("Arial, sans-serif", &[]), None);
        // Unquoted, a generic family in any case is the keyword; quoted, a font's name.
        assert_eq!(browser_families("Serif", &["Serif"]).as_deref(), Some("serif"));
        assert_eq!(browser_families("Arial, SANS-SERIF", &[]).as_deref(), Some("Arial,sans-serif"));
        assert_eq!(browser_families("'Serif'", &["Serif"]), None);
        assert_eq!(
            browser_style("fill: red; font-family: Marker, Arial", &[]).as_deref(),
            Some("fill: red; font-family: Arial")
        );
    }

    #[test]
    fn measured_view_boxes_skip_empty_groups() {
        // An early paint-editor costume: no view box, groups emptied of their paths, and a
        // shape far from the origin. Blink's getBBox skips containers with nothing in them
        // (read in Whisker: such a costume's bounds start at its text, not at (0, 0)).
        let svg = r#"<svg xmlns="http://www.w3.org/2000/svg" width="80" height="90"><g><g id="a"><path d=""/></g><g id="b"/><rect x="10" y="20" width="30" height="40" stroke="black" stroke-width="2"/></g></svg>"#;
        let Ok(n) = normalise(svg) else { panic!("normalises") };
        // The rect's box plus half the largest stroke width.
        assert_eq!((n.view_origin, n.view_size), ([9.0, 19.0], [32.0, 42.0]));
        let empty = r#"<svg xmlns="http://www.w3.org/2000/svg" width="80" height="90"><g><g id="a"/></g></svg>"#;
        let Ok(n) = normalise(empty) else { panic!("normalises") };
        assert_eq!((n.view_origin, n.view_size), ([0.0, 0.0], [0.0, 0.0]));
    }
}
