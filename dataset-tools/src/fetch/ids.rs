//! Reading the project ids to fetch from an ids file.

/// Most ids accepted in one ids file.
pub const MAX_IDS: usize = 10_000_000;

/// Reads project ids: one per line (the first field of a CSV/TSV line, or a
/// `…/projects/ID` URL); blank lines and `#` comments are skipped. Duplicates
/// are dropped; the result is sorted.
pub fn parse_ids(text: &str) -> Result<Vec<u64>, String> {
    let mut ids = std::collections::BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let field = line.split([',', '\t', ' ', ';']).next().unwrap_or("").trim();
        let field = match field.find("/projects/") {
            Some(p) => field[p + "/projects/".len()..].trim_end_matches('/'),
            None => field,
        };
        let field = field.trim_matches('"');
        match field.parse::<u64>() {
            Ok(id) => {
                ids.insert(id);
            }
            // A header row (`id,title,…`) is allowed as the first line.
            Err(_) if i == 0 && !field.bytes().any(|b| b.is_ascii_digit()) => continue,
            Err(_) => return Err(format!("line {}: {field:?} is not a project id", i + 1)),
        }
        if ids.len() > MAX_IDS {
            return Err(format!("more than {MAX_IDS} ids"));
        }
    }
    Ok(ids.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_files() {
        let text = "id,title\n# comment\n 42 \n7,foo\nhttps://scratch.mit.edu/projects/1234/\n42\n\n";
        assert_eq!(parse_ids(text).unwrap(), vec![7, 42, 1234]);
        assert!(parse_ids("1\nx2\n").unwrap_err().contains("line 2"));
    }
}
