//! The view box of an SVG without one (`transformMeasurements`): the drawing's bounding
//! box plus half the largest stroke width, as the stroke widths stand after
//! `transformStrokeWidths`.

use resvg::usvg;

use super::fonts::options;
use super::pushdown::{CONTAINERS, GRAPHICS, IDENTITY, Matrix, StrokeWidth, compose, parse_transform};
use super::{SVG_NS, XLINK_NS, parse_xml};
use crate::util::math::f32r;

/// Bounding box (x, y, w, h) of the drawing without strokes, and the largest stroke width
/// (`findLargestStrokeWidth`: 1 for any `stroke` attribute, else the numeric `stroke-width`, as
/// the attributes stand after `transformStrokeWidths` rewrote them).
pub(super) fn measure(root: &roxmltree::Node<'_, '_>, body: &str) -> Result<([f64; 4], f64), String> {
    let mut stroke = 0.0f64;
    for n in root.descendants().filter(|n| n.is_element()) {
        if attr_of(&n, "stroke").is_some_and(|v| !v.is_empty()) {
            stroke = stroke.max(1.0);
        }
    }
    largest_stroke_width(root, IDENTITY, StrokeWidth::Default, &mut stroke);
    // An identity user space; usvg's bounding boxes are not clipped by the viewport.
    let probe = format!(
        "<svg xmlns=\"{SVG_NS}\" xmlns:xlink=\"{XLINK_NS}\" width=\"100\" height=\"100\" viewBox=\"0 0 100 100\">{body}</svg>"
    );
    let doc = parse_xml(&probe)?;
    let tree = usvg::Tree::from_xmltree(&doc, &options()).map_err(|e| format!("SVG not measurable: {e}"))?;
    let mut ltrb = None;
    union_of_shapes(tree.root(), &mut ltrb);
    let bbox = match ltrb {
        Some([l, t, r, b]) => [f32r(l as f64), f32r(t as f64), f32r((r - l) as f64), f32r((b - t) as f64)],
        None => [0.0; 4],
    };
    Ok((bbox, stroke))
}

/// The union (left, top, right, bottom) of the group's shapes, text and images in canvas
/// coordinates. A group with nothing in it is skipped, as Blink's `getBBox` skips a
/// container without a valid bounding box: usvg gives such a group a box at its origin,
/// which its parent's box would take in (a paint-editor costume with an empty group and
/// text far from (0, 0) then measured from the origin).
fn union_of_shapes(group: &usvg::Group, ltrb: &mut Option<[f32; 4]>) {
    for child in group.children() {
        if let usvg::Node::Group(g) = child {
            union_of_shapes(g, ltrb);
            continue;
        }
        let b = child.abs_bounding_box();
        *ltrb = Some(match *ltrb {
            None => [b.left(), b.top(), b.right(), b.bottom()],
            Some([l, t, r, bo]) => [l.min(b.left()), t.min(b.top()), r.max(b.right()), bo.max(b.bottom())],
        });
    }
}

fn attr_of<'a>(n: &roxmltree::Node<'a, '_>, name: &str) -> Option<&'a str> {
    n.attributes().find(|a| a.namespace().is_none() && a.name() == name).map(|a| a.value())
}

/// The stroke widths `transformStrokeWidths` leaves on elements: paths under a transform get the
/// quadratic mean of the transform's scale factors times their width; other shapes inherit.
fn largest_stroke_width(node: &roxmltree::Node<'_, '_>, m: Matrix, sw: StrokeWidth<'_>, largest: &mut f64) {
    if !node.is_element() {
        return;
    }
    let name = node.tag_name().name();
    let own = attr_of(node, "stroke-width");
    let mut note = |v: f64| {
        if v.is_finite() && v > *largest {
            *largest = v;
        }
    };
    if CONTAINERS.contains(&name) {
        let sw = own.map(StrokeWidth::Attr).unwrap_or(sw);
        let m = compose(m, parse_transform(attr_of(node, "transform")));
        for child in node.children() {
            largest_stroke_width(&child, m, sw, largest);
        }
        return;
    }
    let width = own.map(StrokeWidth::Attr).unwrap_or(sw);
    if name == "path" && width.number() != 0.0 && attr_of(node, "d").is_some_and(|d| !d.is_empty()) {
        let m = compose(m, parse_transform(attr_of(node, "transform")));
        if m == IDENTITY {
            note(width.number());
        } else {
            let (a, b, c, d) = (m[0], m[1], m[2], m[3]);
            let det = a * d - b * c;
            let (sx, sy) = if a != 0.0 || b != 0.0 {
                let r = (a * a + b * b).sqrt();
                (r, det / r)
            } else if c != 0.0 || d != 0.0 {
                let s = (c * c + d * d).sqrt();
                (det / s, s)
            } else {
                (0.0, 0.0)
            };
            note(((sx * sx + sy * sy) / 2.0).sqrt() * width.number());
        }
    } else if GRAPHICS.contains(&name) {
        note(width.number());
    } else if let Some(v) = own {
        // Untouched elements keep their own attribute.
        note(StrokeWidth::Attr(v).number());
    }
}
