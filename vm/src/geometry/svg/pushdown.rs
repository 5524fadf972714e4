//! What scratch-svg-renderer's `transformStrokeWidths` (transform-applier.js) does to every
//! costume before the browser draws it: the transforms of container elements are pushed down
//! to the leaves. A path with a stroke width gets them baked into its data (and its stroke
//! width scaled), other shapes get them as their own `transform`, and the containers lose
//! theirs. The drawing stays where it was, but anything that reads an element's user space
//! afterwards sees the root's: that is where the browser evaluates the clip paths and masks
//! those containers and paths refer to (`normalise` corrects for it; `measure` reads the
//! stroke widths it leaves).

/// The elements the walk descends into (`CONTAINER_ELEMENTS`).
pub(super) const CONTAINERS: [&str; 10] =
    ["a", "defs", "g", "marker", "glyph", "missing-glyph", "pattern", "svg", "switch", "symbol"];

/// The elements it gives the pushed transform to (`GRAPHICS_ELEMENTS`).
pub(super) const GRAPHICS: [&str; 10] =
    ["circle", "ellipse", "image", "line", "path", "polygon", "polyline", "rect", "text", "use"];

/// An affine matrix `[a, b, c, d, e, f]` as SVG writes it.
pub(super) type Matrix = [f64; 6];

/// The identity matrix.
pub(super) const IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

/// An element's `transform` attribute (identity when absent or unparseable).
pub(super) fn parse_transform(s: Option<&str>) -> Matrix {
    match s.and_then(|t| t.parse::<svgtypes::Transform>().ok()) {
        Some(t) => [t.a, t.b, t.c, t.d, t.e, t.f],
        None => IDENTITY,
    }
}

/// `m` then `n` (`Matrix.compose(m, n)`: `n` applies to points first).
pub(super) fn compose(m: Matrix, n: Matrix) -> Matrix {
    [
        m[0] * n[0] + m[2] * n[1],
        m[1] * n[0] + m[3] * n[1],
        m[0] * n[2] + m[2] * n[3],
        m[1] * n[2] + m[3] * n[3],
        m[0] * n[4] + m[2] * n[5] + m[4],
        m[1] * n[4] + m[3] * n[5] + m[5],
    ]
}

/// The inverse of `m`; `None` when it is singular or not finite.
pub(super) fn invert(m: Matrix) -> Option<Matrix> {
    let det = m[0] * m[3] - m[1] * m[2];
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let inv = [
        m[3] / det,
        -m[1] / det,
        -m[2] / det,
        m[0] / det,
        (m[2] * m[5] - m[3] * m[4]) / det,
        (m[1] * m[4] - m[0] * m[5]) / det,
    ];
    inv.iter().all(|v| v.is_finite()).then_some(inv)
}

/// The stroke width the walk pushes down: the SVG default (1) or an attribute's text.
#[derive(Clone, Copy)]
pub(super) enum StrokeWidth<'a> {
    Default,
    Attr(&'a str),
}

impl StrokeWidth<'_> {
    /// JavaScript's `Number(value)` (NaN → 0 as `|| 0` does).
    pub(super) fn number(self) -> f64 {
        match self {
            StrokeWidth::Default => 1.0,
            StrokeWidth::Attr(s) => {
                let v = crate::value::js_string_to_number(s);
                if v.is_nan() { 0.0 } else { v }
            }
        }
    }
}

/// Where the walk leaves an element, given where it left its parent.
#[derive(Clone, Copy)]
pub(super) enum Pushed<'a> {
    /// Reached by the walk, with the transforms of the containers above it composed and the
    /// stroke width they pass down.
    Reached(Matrix, StrokeWidth<'a>),
    /// Not reached (inside a clip path, a mask, a text, ...): left as written.
    Untouched,
}

/// What the walk does at one element.
pub(super) struct Step<'a> {
    /// Where its children are left.
    pub(super) children: Pushed<'a>,
    /// The transform its user space loses: the containers' above and its own, for a container
    /// or a path whose data the walk transforms; `None` when its user space stays as written.
    pub(super) lost: Option<Matrix>,
}

/// The walk at element `node` (an element reached or not, as `at` says).
pub(super) fn step<'a>(node: &roxmltree::Node<'a, '_>, at: Pushed<'a>) -> Step<'a> {
    let untouched = Step { children: Pushed::Untouched, lost: None };
    let Pushed::Reached(m, sw) = at else { return untouched };
    let name = node.tag_name().name();
    let attr = |a: &str| node.attributes().find(|x| x.namespace().is_none() && x.name() == a).map(|x| x.value());
    let own = attr("stroke-width").map(StrokeWidth::Attr);
    let lost = |m: Matrix| (m != IDENTITY).then_some(m);
    if CONTAINERS.contains(&name) {
        let m = compose(m, parse_transform(attr("transform")));
        return Step { children: Pushed::Reached(m, own.unwrap_or(sw)), lost: lost(m) };
    }
    let width = own.unwrap_or(sw);
    if name == "path" && width.number() != 0.0 && attr("d").is_some_and(|d| !d.is_empty()) {
        return Step { children: Pushed::Untouched, lost: lost(compose(m, parse_transform(attr("transform")))) };
    }
    untouched
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_undoes_the_matrix() {
        let m = compose([2.0, 0.0, 0.0, 0.5, 3.0, -4.0], [0.0, 1.0, -1.0, 0.0, 1.5, 2.0]);
        let Some(inv) = invert(m) else { panic!("invertible") };
        let id = compose(m, inv);
        assert!(id.iter().zip(IDENTITY).all(|(a, b)| (a - b).abs() < 1e-12), "{id:?}");
        assert_eq!(invert([1.0, 2.0, 2.0, 4.0, 0.0, 0.0]), None);
    }

    #[test]
    fn containers_and_stroked_paths_lose_their_user_space() {
        let doc = roxmltree::Document::parse(
            r#"<svg xmlns="http://www.w3.org/2000/svg"><g transform="translate(2,3)"><path d="M0 0h1"/><path d="M0 0h1" stroke-width="0"/><rect/></g></svg>"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let root = doc.root_element();
        let g = root.first_element_child().unwrap_or_else(|| panic!("g"));
        let s = step(&g, Pushed::Reached(IDENTITY, StrokeWidth::Default));
        assert_eq!(s.lost, Some([1.0, 0.0, 0.0, 1.0, 2.0, 3.0]));
        let kids: Vec<_> = g.children().filter(|n| n.is_element()).collect();
        assert_eq!(step(&kids[0], s.children).lost, Some([1.0, 0.0, 0.0, 1.0, 2.0, 3.0]));
        // A path without a stroke width keeps its transform as an attribute, as a rect does.
        assert!(step(&kids[1], s.children).lost.is_none());
        assert!(step(&kids[2], s.children).lost.is_none());
        assert!(step(&kids[0], Pushed::Untouched).lost.is_none());
    }
}
