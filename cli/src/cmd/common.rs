//! Pieces shared by the runtime subcommands: tokens, TLS files, runtimes.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// Where the shared worker token comes from.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TokenArgs {
    /// Shared worker token (prefer --token-file or $CLOWDER_TOKEN: command lines are visible to other users).
    #[arg(long, env = "CLOWDER_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// File holding the shared worker token.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
}

impl TokenArgs {
    /// The token, if one was given.
    pub fn get(&self) -> anyhow::Result<Option<String>> {
        if let Some(t) = &self.token {
            return Ok(Some(check_token(t.trim())?));
        }
        if let Some(f) = &self.token_file {
            let t = std::fs::read_to_string(f).with_context(|| format!("reading token file {}", f.display()))?;
            return Ok(Some(check_token(t.trim())?));
        }
        Ok(None)
    }
}

fn check_token(t: &str) -> anyhow::Result<String> {
    if t.is_empty() {
        bail!("the token is empty");
    }
    if !t.bytes().all(|b| b.is_ascii_graphic()) {
        bail!("the token must be printable ASCII without spaces");
    }
    Ok(t.to_string())
}

/// A fresh random token (128 bits, hex).
pub fn random_token() -> anyhow::Result<String> {
    use std::io::Read;
    let mut buf = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .context("reading /dev/urandom for a token")?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes a token file readable only by its owner.
pub fn write_token_file(path: &Path, token: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing token file {}", path.display()))?;
    writeln!(f, "{token}")?;
    Ok(())
}

/// Client-side TLS settings.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ClientTlsArgs {
    /// CA certificate (PEM) to trust for an https:// coordinator (default: the system's roots).
    #[arg(long)]
    pub tls_ca: Option<PathBuf>,
    /// Server name to expect in the coordinator's certificate (default: the URL's host).
    #[arg(long)]
    pub tls_domain: Option<String>,
}

impl ClientTlsArgs {
    /// The CA file's bytes.
    pub fn ca(&self) -> anyhow::Result<Option<Vec<u8>>> {
        self.tls_ca
            .as_ref()
            .map(|p| std::fs::read(p).with_context(|| format!("reading TLS CA {}", p.display())))
            .transpose()
    }
}

/// A multi-threaded runtime for the async edges.
pub fn runtime(threads: usize) -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Adds `http://` to a bare `host:port`.
pub fn normalise_url(url: &str) -> String {
    if url.contains("://") { url.to_string() } else { format!("http://{url}") }
}

/// Loads an experiment to run: parsed and checked, and a test experiment's suites loaded once
/// (a broken suite is an error now, not in each of its runs; what the real Whisker would not
/// run as written is printed as a warning, as `clowder test` prints it).
pub fn load_experiment(path: &std::path::Path) -> anyhow::Result<clowder_coordinator::Experiment> {
    let exp = clowder_coordinator::Experiment::load(path)?;
    let warnings =
        clowder_coordinator::grading::check_suites(&exp).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    Ok(exp)
}

/// Human form of a duration in milliseconds.
pub fn human_ms(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// Parses `--whisker-wall-ms`: real milliseconds a Whisker step takes, 0.1 to 10 000 (a clap
/// value parser, so `clowder vm trace` and `clowder test` reject the same values the same way).
pub fn whisker_wall_ms(s: &str) -> Result<f64, String> {
    let ms: f64 = s.trim().parse().map_err(|_| format!("not a number of milliseconds: {s:?}"))?;
    clowder_vm::VmOptions::check_whisker_wall_ms(ms)
}

/// Parses `--whisker-maths`: the maths library of the browser Whisker runs in
/// (`clowder_vm::util::mathlib::MathLib::NAMES`).
pub fn whisker_maths(s: &str) -> Result<clowder_vm::util::mathlib::MathLib, String> {
    clowder_vm::util::mathlib::MathLib::parse_name(s.trim())
}

#[cfg(test)]
mod tests {
    use super::{whisker_maths, whisker_wall_ms};

    #[test]
    fn whisker_maths_names_a_library() {
        use clowder_vm::util::mathlib::MathLib;
        assert_eq!(whisker_maths("glibc"), Ok(MathLib::Glibc));
        assert_eq!(whisker_maths("chromium"), Ok(MathLib::Chromium));
        assert!(whisker_maths("fdlibm").unwrap_err().contains("known: chromium, glibc, node"));
    }

    #[test]
    fn whisker_wall_ms_takes_positive_milliseconds_only() {
        assert_eq!(whisker_wall_ms("8.5"), Ok(8.5));
        assert!(whisker_wall_ms("0").is_err());
        assert!(whisker_wall_ms("NaN").is_err());
        assert!(whisker_wall_ms("1e9").is_err());
        assert!(whisker_wall_ms("fast").is_err());
    }
}
