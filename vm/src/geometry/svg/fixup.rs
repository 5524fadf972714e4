//! scratch-svg-renderer's `fixupSvgString`: string repairs applied to the source text
//! before it is parsed, so that real-world SVGs parse as they do in the browser.

/// scratch-svg-renderer's `fixupSvgString`: repairs that make real-world SVGs parse.
pub fn fixup_svg_string(s: &str) -> String {
    let mut s = s.to_string();
    if let Some(start) = s.find("<svg ") {
        if let Some(len) = s[start..].find('>') {
            let tag = s[start..start + len + 1].to_string();
            if !tag.contains("xmlns=") {
                s = s.replacen("<svg ", "<svg xmlns=\"http://www.w3.org/2000/svg\" ", 1);
            }
            // Illustrator's undeclared `&ns_…;` entities in the root tag.
            if tag.contains("&ns_") && !s.contains("<!DOCTYPE") {
                let fixed = replace_ns_entities(&tag);
                s = s.replacen(&tag, &fixed, 1);
            }
        }
    }
    // Photoshop's invalid mime type for embedded PNGs.
    if s.contains("data:img/png") {
        s = s
            .replace("href=\"data:img/png", "href=\"data:image/png")
            .replace("href='data:img/png", "href='data:image/png");
    }
    // Inkscape binding a prefix to the reserved XML namespace.
    s = fix_reserved_xml_namespace(&s);
    // `svg:`-prefixed tags.
    s = strip_svg_prefix(&s);
    // Unparseable metadata and scripts are emptied (greedy, as the original regular expressions).
    s = empty_between(&s, "<metadata>", "</metadata>", "<metadata></metadata>");
    s = empty_script(&s);
    s
}

fn replace_ns_entities(tag: &str) -> String {
    let mut out = String::with_capacity(tag.len());
    let mut rest = tag;
    while let Some(i) = rest.find("&ns_") {
        match rest[i..].find(';') {
            Some(j) if j > 4 => {
                out.push_str(&rest[..i]);
                out.push_str("http://ns.adobe.com/Extensibility/1.0/");
                rest = &rest[i + j + 1..];
            }
            _ => break,
        }
    }
    out.push_str(rest);
    out
}

fn fix_reserved_xml_namespace(s: &str) -> String {
    const URL: &str = "\"http://www.w3.org/XML/1998/namespace\"";
    if !s.contains(URL) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(URL) {
        let before = &rest[..i];
        // The attribute name just before `=`: `xmlns:foo` with foo != xml.
        let name_start = before.trim_end_matches('=').rfind(|c: char| c.is_whitespace()).map(|k| k + 1).unwrap_or(0);
        let name = before[name_start..].trim_end_matches('=');
        out.push_str(before);
        if name.starts_with("xmlns:") && name != "xmlns:xml" {
            out.push_str("\"http://dummy.namespace\"");
        } else {
            out.push_str(URL);
        }
        rest = &rest[i + URL.len()..];
    }
    out.push_str(rest);
    out
}

fn strip_svg_prefix(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut last = 0;
    while i < bytes.len() {
        if bytes[i] == b'<' {
            let mut j = i + 1;
            let slash = j < bytes.len() && bytes[j] == b'/';
            if slash {
                j += 1;
            }
            while j < bytes.len() && (bytes[j] as char).is_ascii_whitespace() {
                j += 1;
            }
            if s[j..].starts_with("svg:") {
                out.push_str(&s[last..i]);
                out.push('<');
                if slash {
                    out.push('/');
                }
                i = j + 4;
                last = i;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&s[last..]);
    out
}

fn empty_between(s: &str, open: &str, close: &str, replacement: &str) -> String {
    match (s.find(open), s.rfind(close)) {
        (Some(a), Some(b)) if b >= a + open.len() => format!("{}{}{}", &s[..a], replacement, &s[b + close.len()..]),
        _ => s.to_string(),
    }
}

fn empty_script(s: &str) -> String {
    let (Some(a), Some(b)) = (s.find("<script"), s.rfind("</script>")) else {
        return s.to_string();
    };
    if b <= a || !s[a..b].contains('>') {
        return s.to_string();
    }
    format!("{}<script></script>{}", &s[..a], &s[b + "</script>".len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixups_add_namespace_and_strip_prefixes() {
        let s = fixup_svg_string("<svg:svg width=\"1\"><svg:rect/></svg:svg>");
        assert_eq!(s, "<svg width=\"1\"><rect/></svg>");
        let s = fixup_svg_string("<svg width=\"1\"></svg>");
        assert!(s.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width"));
        let s = fixup_svg_string("<svg xmlns=\"x\"><metadata><a></metadata>junk</metadata></svg>");
        assert_eq!(s, "<svg xmlns=\"x\"><metadata></metadata></svg>");
    }
}
