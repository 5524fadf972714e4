//! The usvg options every SVG is parsed with: Scratch's own costume fonts (embedded, so
//! text never depends on the machine's fonts) and an image resolver that reads embedded
//! raster images only.

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

/// The font database of every SVG: only [`FONTS`], each face renamed to its Scratch name.
/// Built once per process; it is immutable data, the same on every machine.
fn font_db() -> Arc<usvg::fontdb::Database> {
    static DB: std::sync::OnceLock<Arc<usvg::fontdb::Database>> = std::sync::OnceLock::new();
    DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        for (name, data) in FONTS {
            let mut one = usvg::fontdb::Database::new();
            one.load_font_data(data.to_vec());
            for face in one.faces() {
                let mut info = face.clone();
                info.families = vec![(name.to_string(), usvg::fontdb::Language::English_UnitedStates)];
                db.push_face_info(info);
            }
        }
        db.set_sans_serif_family("Sans Serif");
        db.set_serif_family("Serif");
        db.set_cursive_family("Handwriting");
        db.set_fantasy_family("Marker");
        db.set_monospace_family("Sans Serif");
        Arc::new(db)
    })
    .clone()
}

pub(super) fn options() -> usvg::Options<'static> {
    // A family none of the fonts has falls back to Scratch's default text font.
    let mut opt =
        usvg::Options { fontdb: font_db(), font_family: "Sans Serif".to_string(), ..usvg::Options::default() };
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
