//! What a launcher takes from the machine: the installed server (its binaries, found on PATH
//! or in the usual directories, and the version they report), whether dbcompare runs as root,
//! and config files only their owner can read.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result};

/// An installed server: the binaries dbcompare needs and the version they report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installation {
    /// The server binary (`postgres`, `mariadbd`, `redis-server`).
    pub server: PathBuf,
    /// Other binaries of the same installation, by role (`initdb`, `pg_ctl`, `install_db`).
    pub tools: Vec<(&'static str, PathBuf)>,
    /// What `server --version` printed (first line).
    pub version: String,
}

impl Installation {
    pub(super) fn tool(&self, role: &str) -> &Path {
        self.tools
            .iter()
            .find(|(r, _)| *r == role)
            .map(|(_, p)| p.as_path())
            .expect("every installation lists the tools its start needs")
    }
}

/// First line of `binary --version`.
pub(super) fn version_of(binary: &Path) -> Option<String> {
    let out = Command::new(binary)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next()?;
    // `/usr/sbin/mariadbd  Ver 10.11...`: name the binary, not where it lives.
    let words: Vec<&str> = line
        .split_whitespace()
        .enumerate()
        .map(|(i, w)| {
            if i == 0 {
                w.rsplit('/').next().unwrap_or(w)
            } else {
                w
            }
        })
        .collect();
    Some(words.join(" "))
}

/// The first of `names` found on PATH or in `extra_dirs`.
pub(super) fn which(names: &[&str], extra_dirs: &[PathBuf]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path).chain(extra_dirs.iter().cloned());
    let dirs: Vec<PathBuf> = dirs.collect();
    names
        .iter()
        .find_map(|name| dirs.iter().map(|d| d.join(name)).find(|p| p.is_file()))
}

/// Whether this process runs as root (servers that refuse root then run as another user).
pub(super) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Writes a config file only its owner can read (some hold the server's password).
pub(super) fn write_file(path: &Path, contents: &str) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| f.write_all(contents.as_bytes()))
        .with_context(|| format!("writing {}", path.display()))
}
