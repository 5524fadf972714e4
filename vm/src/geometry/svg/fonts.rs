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
//! default font, Times New Roman, which is Liberation Serif. Approximated: `monospace`
//! (Chromium: DejaVu Sans Mono; here Liberation Mono). Another machine's fonts can differ.
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

/// The browser's fallback fonts (fonts-liberation 1.07.4, as Debian ships it), each under its
/// own family name and the names fontconfig's metric aliases give it.
const FALLBACKS: [(&[&str], &[u8]); 12] = [
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
];
const SANS: &[&str] = &["Liberation Sans", "Arial", "Helvetica"];
const SERIF: &[&str] = &["Liberation Serif", "Times New Roman", "Times"];
const MONO: &[&str] = &["Liberation Mono", "Courier New", "Courier"];

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
        db.set_monospace_family("Liberation Mono");
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
    opt
}
