//! What a long study command (`replay-study`, `judge-study`) has finished so far, kept beside
//! its output as `OUT.journal` so that a command stopped by Ctrl-C, a lost machine or an error
//! resumes where it stopped, and a later call on a study with more finished runs only does the
//! new ones. The output file itself is always written whole from the journal, in the order a
//! single uninterrupted call would write it.
//!
//! The journal is JSON lines: a header naming the command and every option that changes an
//! item's rows (a journal of other options is refused, never mixed), then one line per
//! finished item: its key and its CSV rows. A line is appended and flushed as soon as its item
//! finishes; a last line cut short by a kill is dropped (its item is done again).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::{Value, json};

/// Rows of one finished item, as CSV fields.
pub(crate) type Rows = Vec<Vec<String>>;

/// The journal of one output file.
pub(crate) struct Journal {
    path: PathBuf,
    file: File,
    done: BTreeMap<String, Rows>,
}

/// The journal's path for the output `out`.
pub(crate) fn path_for(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_os_string();
    name.push(".journal");
    PathBuf::from(name)
}

impl Journal {
    /// Opens (or starts) the journal of `out`, keeping the items of earlier calls made with
    /// the same `header`.
    pub(crate) fn open(out: &Path, header: &str) -> anyhow::Result<Journal> {
        let path = path_for(out);
        let mut done = BTreeMap::new();
        let text = match std::fs::read(&path) {
            Ok(bytes) => String::from_utf8(bytes).with_context(|| format!("{}: not UTF-8", path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        // Everything up to the last newline was written whole; a tail without one is a line
        // cut short and is dropped.
        let whole = text.rfind('\n').map_or(0, |i| i + 1);
        let mut lines = text[..whole].lines().enumerate();
        match lines.next() {
            None => {}
            Some((_, first)) => {
                let found = serde_json::from_str::<Value>(first)
                    .ok()
                    .and_then(|v| v.get("journal").and_then(Value::as_str).map(str::to_string));
                match found {
                    Some(h) if h == header => {}
                    Some(h) => bail!(
                        "{} was made with other options ({h}); this call is {header}: use another --out, or delete \
                         the journal to start over",
                        path.display()
                    ),
                    None => bail!("{}: not a journal of clowder (no header line)", path.display()),
                }
            }
        }
        for (n, line) in lines {
            let entry = parse_entry(line).with_context(|| format!("{}, line {}", path.display(), n + 1))?;
            done.insert(entry.0, entry.1);
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        file.set_len(whole as u64).with_context(|| format!("truncating {}", path.display()))?;
        let mut journal = Journal { path, file, done };
        if whole == 0 {
            journal.append(&json!({ "journal": header }))?;
        } else {
            use std::io::Seek;
            journal.file.seek(std::io::SeekFrom::End(0)).with_context(|| format!("{}", journal.path.display()))?;
        }
        Ok(journal)
    }

    /// The rows of an item finished earlier.
    pub(crate) fn get(&self, key: &str) -> Option<&Rows> {
        self.done.get(key)
    }

    /// How many items it holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.done.len()
    }

    /// Records a finished item (appended and flushed at once).
    pub(crate) fn record(&mut self, key: &str, rows: &Rows) -> anyhow::Result<()> {
        self.append(&json!({ "key": key, "rows": rows }))?;
        self.done.insert(key.to_string(), rows.clone());
        Ok(())
    }

    fn append(&mut self, v: &Value) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(v)?;
        line.push(b'\n');
        self.file.write_all(&line).with_context(|| format!("writing {}", self.path.display()))?;
        self.file.flush().with_context(|| format!("writing {}", self.path.display()))
    }
}

fn parse_entry(line: &str) -> anyhow::Result<(String, Rows)> {
    let v: Value = serde_json::from_str(line)?;
    let Some(key) = v.get("key").and_then(Value::as_str) else { bail!("no key") };
    let Some(rows) = v.get("rows").and_then(Value::as_array) else { bail!("no rows") };
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let Some(fields) = r.as_array() else { bail!("a row is not a list") };
        let fields: Option<Vec<String>> = fields.iter().map(|f| f.as_str().map(str::to_string)).collect();
        let Some(fields) = fields else { bail!("a field is not a string") };
        out.push(fields);
    }
    Ok((key.to_string(), out))
}

/// Does `work` for each item of `todo` on `workers` threads with a progress bar, recording
/// each finished item's rows in `journal` as soon as it finishes. Returns the items that
/// failed, described by `label` with their error (they are done again by the next call).
pub(crate) fn run_items<T: Sync>(
    journal: &mut Journal,
    todo: &[T],
    workers: usize,
    progress: &str,
    key: impl Fn(&T) -> String + Sync,
    label: impl Fn(&T) -> String + Sync,
    work: impl Fn(&T) -> Result<Rows, String> + Sync,
) -> anyhow::Result<Vec<String>> {
    let bar = crate::progress::Progress::new(todo.len() as u64, progress, false);
    let mut errors = Vec::new();
    let mut journal_error = None;
    clowder_suites::parallel::map_with(todo, workers.max(1), work, |i, result| {
        bar.inc(1);
        let Some(item) = todo.get(i) else { return };
        match result {
            Ok(rows) => {
                if let Err(e) = journal.record(&key(item), rows) {
                    journal_error.get_or_insert(e);
                }
            }
            Err(e) => errors.push(format!("{}: {e}", label(item))),
        }
    });
    bar.finish_and_clear();
    match journal_error {
        Some(e) => Err(e),
        None => Ok(errors),
    }
}

/// Reports the items that failed (the others are in `out`): exit code 1 when there are any.
pub(crate) fn report_failures(command: &str, errors: &[String], of: usize, what: &str, out: &Path) -> ExitCode {
    if errors.is_empty() {
        return ExitCode::SUCCESS;
    }
    for e in errors {
        eprintln!("clowder {command}: {e}");
    }
    eprintln!(
        "clowder {command}: {} of {of} {what} failed (tried again by the next call); the others are in {}",
        errors.len(),
        out.display()
    );
    ExitCode::FAILURE
}

/// Writes `header` and `rows` as CSV to `out` through a temporary file beside it, so that
/// `out` is either the old file or the whole new one (created as any file the user makes, with
/// the umask's permissions).
pub(crate) fn write_csv<'a>(
    out: &Path,
    header: &[&str],
    rows: impl Iterator<Item = &'a Vec<String>>,
) -> anyhow::Result<()> {
    let mut tmp = out.as_os_str().to_os_string();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let written = (|| -> anyhow::Result<()> {
        let file = File::create(&tmp)?;
        let mut w = csv::Writer::from_writer(std::io::BufWriter::new(file));
        w.write_record(header)?;
        for r in rows {
            w.write_record(r)?;
        }
        w.flush()?;
        Ok(())
    })();
    if let Err(e) = written.and_then(|()| Ok(std::fs::rename(&tmp, out)?)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.context(format!("writing {}", out.display())));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: usize) -> Rows {
        (0..n).map(|i| vec![format!("a{i}"), "b,\"c\"".to_string()]).collect()
    }

    #[test]
    fn items_survive_a_restart_and_a_cut_last_line() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let out = dir.path().join("x.csv");
        {
            let mut j = Journal::open(&out, "cmd a=1").unwrap_or_else(|e| panic!("{e:#}"));
            j.record("k1", &rows(2)).unwrap_or_else(|e| panic!("{e:#}"));
            j.record("k2", &rows(0)).unwrap_or_else(|e| panic!("{e:#}"));
        }
        // A kill in the middle of the third line.
        let p = path_for(&out);
        let mut f = OpenOptions::new().append(true).open(&p).unwrap_or_else(|e| panic!("{e}"));
        f.write_all(b"{\"key\":\"k3\",\"ro").unwrap_or_else(|e| panic!("{e}"));
        drop(f);
        let mut j = Journal::open(&out, "cmd a=1").unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!((j.len(), j.get("k1"), j.get("k2"), j.get("k3")), (2, Some(&rows(2)), Some(&rows(0)), None));
        j.record("k3", &rows(1)).unwrap_or_else(|e| panic!("{e:#}"));
        drop(j);
        let j = Journal::open(&out, "cmd a=1").unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!((j.len(), j.get("k3")), (3, Some(&rows(1))));
        // Other options never mix with these items.
        let err = Journal::open(&out, "cmd a=2").err().map(|e| format!("{e:#}")).unwrap_or_default();
        assert!(err.contains("other options (cmd a=1)"), "{err}");
    }

    #[test]
    fn a_damaged_line_inside_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let out = dir.path().join("x.csv");
        std::fs::write(path_for(&out), "{\"journal\":\"h\"}\nnot json\n{\"key\":\"k\",\"rows\":[]}\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let err = Journal::open(&out, "h").err().map(|e| format!("{e:#}")).unwrap_or_default();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn csv_is_written_whole() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let out = dir.path().join("x.csv");
        write_csv(&out, &["h1", "h2"], rows(2).iter()).unwrap_or_else(|e| panic!("{e:#}"));
        let text = std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(text, "h1,h2\na0,\"b,\"\"c\"\"\"\na1,\"b,\"\"c\"\"\"\n");
        // Nothing else is left in the folder, and the file is readable as any the user makes.
        let names: Vec<_> =
            std::fs::read_dir(dir.path()).into_iter().flatten().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, ["x.csv"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&out).map(|m| m.permissions().mode()).unwrap_or(0);
            assert_ne!(mode & 0o044, 0, "not private to its owner: {mode:o}");
        }
    }
}
