//! The usvg options every SVG is parsed with: Scratch's own costume fonts and the fonts a
//! browser falls back to (both embedded, so text never depends on the machine's fonts), and
//! an image resolver that reads embedded raster images only.
//!
//! Which font the browser draws a `font-family` list in was read from Chromium (Debian's
//! `chromium` with its `fonts-liberation` dependency, the render oracle's and the Whisker
//! oracle's browser) by comparing silhouettes of the same text in many families: a Scratch
//! font name is drawn in Scratch's font only where scratch-svg-renderer inlined it, which it
//! does for a name that is some element's whole `font-family` attribute
//! ([`super::normalise`] drops the others from lists); Arial, Helvetica and `sans-serif` are
//! Liberation Sans, Courier New is Liberation Mono, and every other family (serif, cursive,
//! fantasy, Times, Georgia, Verdana, Impact, any name the machine lacks) is the browser's
//! default font, Times New Roman, which is Liberation Serif; `monospace` is DejaVu Sans Mono.
//! A character no font of the list has is drawn in DejaVu Sans ([`fallback_face`]). Another
//! machine's fonts can differ.
//! The Scratch name `Serif` unquoted is CSS's keyword `serif` (Liberation Serif), though it
//! is inlined: only a quoted `'Serif'` is drawn in Source Serif ([`super::normalise`]).

use std::sync::Arc;

use resvg::usvg;

/// Scratch's costume fonts, under the names Scratch 3 SVGs use (`scratch-render-fonts`
/// inlines exactly these into every SVG before the browser draws it).
const FONTS: [(&str, &[u8]); 7] = [
    ("Sans Serif", include_bytes!("../../../fonts/NotoSans-Medium.ttf")),
    ("Serif", include_bytes!("../../../fonts/SourceSerifPro-Regular.otf")),
    ("Handwriting", include_bytes!("../../../fonts/handlee-regular.ttf")),
    ("Marker", include_bytes!("../../../fonts/Knewave.ttf")),
    ("Curly", include_bytes!("../../../fonts/Griffy-Regular.ttf")),
    ("Pixel", include_bytes!("../../../fonts/Grand9K-Pixel.ttf")),
    ("Scratch", include_bytes!("../../../fonts/Scratch.ttf")),
];

/// The browser's fallback fonts (fonts-liberation 1.07.4 and fonts-dejavu-core 2.37, as Debian
/// ships them), each under its own family name and the names fontconfig's metric aliases give it.
const FALLBACKS: [(&[&str], &[u8]); 16] = [
    (SANS, include_bytes!("../../../fonts/LiberationSans-Regular.ttf")),
    (SANS, include_bytes!("../../../fonts/LiberationSans-Bold.ttf")),
    (SANS, include_bytes!("../../../fonts/LiberationSans-Italic.ttf")),
    (SANS, include_bytes!("../../../fonts/LiberationSans-BoldItalic.ttf")),
    (SERIF, include_bytes!("../../../fonts/LiberationSerif-Regular.ttf")),
    (SERIF, include_bytes!("../../../fonts/LiberationSerif-Bold.ttf")),
    (SERIF, include_bytes!("../../../fonts/LiberationSerif-Italic.ttf")),
    (SERIF, include_bytes!("../../../fonts/LiberationSerif-BoldItalic.ttf")),
    (MONO, include_bytes!("../../../fonts/LiberationMono-Regular.ttf")),
    (MONO, include_bytes!("../../../fonts/LiberationMono-Bold.ttf")),
    (MONO, include_bytes!("../../../fonts/LiberationMono-Italic.ttf")),
    (MONO, include_bytes!("../../../fonts/LiberationMono-BoldItalic.ttf")),
    (DEJAVU_SANS, include_bytes!("../../../fonts/DejaVuSans.ttf")),
    (DEJAVU_SANS, include_bytes!("../../../fonts/DejaVuSans-Bold.ttf")),
    (DEJAVU_MONO, include_bytes!("../../../fonts/DejaVuSansMono.ttf")),
    (DEJAVU_MONO, include_bytes!("../../../fonts/DejaVuSansMono-Bold.ttf")),
];
const SANS: &[&str] = &["Liberation Sans", "Arial", "Helvetica"];
const SERIF: &[&str] = &["Liberation Serif", "Times New Roman", "Times"];
const MONO: &[&str] = &["Liberation Mono", "Courier New", "Courier"];
const DEJAVU_SANS: &[&str] = &["DejaVu Sans"];
const DEJAVU_MONO: &[&str] = &["DejaVu Sans Mono"];

/// Whether `family` is one of Scratch's costume font names.
pub(super) fn is_scratch_font(family: &str) -> bool {
    FONTS.iter().any(|(name, _)| *name == family)
}

/// The font database of every SVG: [`FONTS`], each face renamed to its Scratch name, and
/// [`FALLBACKS`]. Built once per process; it is immutable data, the same on every machine.
fn font_db() -> Arc<usvg::fontdb::Database> {
    static DB: std::sync::OnceLock<Arc<usvg::fontdb::Database>> = std::sync::OnceLock::new();
    DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        for (name, data) in FONTS {
            push_named(&mut db, data, &[name]);
        }
        for (names, data) in FALLBACKS {
            push_named(&mut db, data, names);
        }
        // usvg ends every list with the serif family: the browser's default font.
        db.set_sans_serif_family("Liberation Sans");
        db.set_serif_family("Liberation Serif");
        db.set_cursive_family("Liberation Serif");
        db.set_fantasy_family("Liberation Serif");
        db.set_monospace_family("DejaVu Sans Mono");
        Arc::new(db)
    })
    .clone()
}

/// Adds the faces of font file `data` to `db` under the family `names` only.
fn push_named(db: &mut usvg::fontdb::Database, data: &[u8], names: &[&str]) {
    let mut one = usvg::fontdb::Database::new();
    one.load_font_data(data.to_vec());
    for face in one.faces() {
        let mut info = face.clone();
        info.families = names.iter().map(|n| (n.to_string(), usvg::fontdb::Language::English_UnitedStates)).collect();
        db.push_face_info(info);
    }
}

pub(super) fn options() -> usvg::Options<'static> {
    // Text without a family is drawn in the browser's default font.
    let mut opt =
        usvg::Options { fontdb: font_db(), font_family: "Liberation Serif".to_string(), ..usvg::Options::default() };
    // Never read files named by the SVG; embedded raster images only (nested SVG images are
    // skipped: their resolver would fall back to the file system).
    let data_resolver = usvg::ImageHrefResolver::default_data_resolver();
    opt.image_href_resolver = usvg::ImageHrefResolver {
        resolve_data: Box::new(move |mime, data, opts| {
            let head = &data[..data.len().min(16)];
            if mime.contains("svg") || head.starts_with(b"<") || head.starts_with(&[0x1f, 0x8b]) {
                return None;
            }
            data_resolver(mime, data, opts)
        }),
        resolve_string: Box::new(|_, _| None),
    };
    opt.font_resolver.select_fallback = Box::new(fallback_face);
    opt
}

/// The face characters missing from every font of their family list are drawn in: what
/// fontconfig sorts first for them on the oracles' machine, DejaVu Sans Mono after a
/// monospaced face and DejaVu Sans after any other (approximated for serif faces, which
/// fontconfig sends to DejaVu Serif), in the base face's weight. usvg asks for the span's first
/// missing character only and stops at the first `None`, so DejaVu is offered even when it
/// lacks that one: it then supplies the span's other missing characters it has (a `▶` after
/// Hangul, which no font here has and both draw as the base face's empty box), as Chromium
/// falls back character by character. What Chromium draws for an emoji is not modelled.
fn fallback_face(_: char, used: &[usvg::fontdb::ID], db: &mut Arc<usvg::fontdb::Database>) -> Option<usvg::fontdb::ID> {
    let base = db.face(*used.first()?)?;
    let family = if base.monospaced { "DejaVu Sans Mono" } else { "DejaVu Sans" };
    let query = usvg::fontdb::Query {
        families: &[usvg::fontdb::Family::Name(family)],
        weight: if base.weight.0 >= 600 { usvg::fontdb::Weight::BOLD } else { usvg::fontdb::Weight::NORMAL },
        ..Default::default()
    };
    let id = db.query(&query)?;
    (!used.contains(&id)).then_some(id)
}

#[cfg(test)]
mod tests {
    use crate::geometry::svg::test_support::{alpha, fnv};

    /// Chromium's silhouettes (render oracle, Chromium 148) of seeded text costumes, FNV-1a of
    /// the alpha bytes and the non-zero pixels: `monospace` is DejaVu Sans Mono, and symbols
    /// the family lacks come from DejaVu (Sans, or Sans Mono after a monospaced face), also
    /// after a character no font has.
    #[test]
    fn fallback_fonts_as_chromium_picks_them() {
        let text = |w: u32, attrs: &str, s: &str| {
            format!(
                "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"20\" \
                 viewBox=\"0,0,{w},20\"><text x=\"2\" y=\"15\" {attrs} font-size=\"12\">{s}</text></svg>"
            )
        };
        let cases = [
            (text(60, "font-family=\"monospace\"", "Mono 12"), 0xcc94_6dfe_5597_5937, 212),
            (text(60, "font-family=\"monospace\" font-weight=\"bold\"", "Bold \u{2764}"), 0x12a5_4ea8_91a7_4087, 218),
            (text(40, "font-family=\"Arial\"", "\u{2764}\u{26a1}"), 0xb9bf_dc8c_8495_a503, 83),
            // Hangul, which no font has (empty boxes), before a `▶` DejaVu Sans has.
            (
                text(80, "font-family=\"Arial\"", "\u{cd08}\u{b85d}(\u{25b6}) \u{c2dc}\u{c791}"),
                0xcfbf_a618_ec81_d068,
                223,
            ),
        ];
        for (svg, hash, nonzero) in cases {
            let (a, _) = alpha(&svg, 1.0);
            assert_eq!((fnv(&a), a.iter().filter(|&&v| v != 0).count()), (hash, nonzero), "{svg}");
        }
    }
}
