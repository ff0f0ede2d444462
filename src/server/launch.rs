//! What a launcher starts its server with: its directory, a free port, a fresh password and,
//! when it serves TLS, its certificate.

use std::io::Read;
use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;

use anyhow::{Context, Result};

use std::collections::BTreeMap;

use super::tls;
use crate::catalog::Durability;
use crate::variant::ConfigLayer;

/// What a launcher starts its server with.
pub(super) struct Launch<'a> {
    pub dir: &'a Path,
    pub port: u16,
    pub durability: Durability,
    /// The benchmark user's password (a fresh random one).
    pub password: &'a str,
    /// The server's certificate and key, when it serves TLS only.
    pub tls: Option<&'a tls::Files>,
    /// The masters of a cluster.
    pub masters: u16,
    /// Whether the directory is kept after the run.
    pub keep_data: bool,
    /// A variant's configuration file, after `configs/`'s lines (`--config`).
    pub config: Option<&'a ConfigLayer>,
    /// A variant's single settings, after everything else (`--set`).
    pub settings: &'a BTreeMap<String, String>,
}

impl Launch<'_> {
    /// The variant's configuration file and settings as lines of a configuration file
    /// (`line(key, value)` writes one setting the server's way), each part under a comment
    /// saying where it comes from; empty when it has none.
    pub fn variant_lines(&self, line: impl Fn(&str, &str) -> String) -> String {
        let mut out = self.config_lines();
        if !self.settings.is_empty() {
            out.push_str("\n# --- dbcompare: --set ---\n");
            for (key, value) in self.settings {
                out.push_str(&line(key, value));
                out.push('\n');
            }
        }
        out
    }

    /// The variant's configuration file alone, under a comment naming it.
    pub fn config_lines(&self) -> String {
        self.config.map_or_else(String::new, |config| {
            format!(
                "\n# --- dbcompare: --config {} ---\n{}\n",
                config.path.display(),
                config.text.trim_end()
            )
        })
    }
}

/// A fresh password: 128 bits from the system's random source, in hexadecimal (nothing a
/// URL or a config file would need to quote).
pub(super) fn random_password() -> Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("reading /dev/urandom for a password")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("finding a free port")?;
    Ok(listener.local_addr()?.port())
}
