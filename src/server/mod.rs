//! Throw-away local servers: find the installed binaries, create a temporary data directory,
//! initialise it with the settings in `configs/`, start the server on a free 127.0.0.1 port,
//! wait until it answers, and on drop stop it (gracefully, then forcefully) and delete the
//! directory. Every running server is also in a process-wide registry, so an exit that
//! skips destructors (a second Ctrl-C) still stops them: no process and no directory is
//! left behind.
//!
//! This module says which launcher starts which store and owns a running [`LocalServer`].
//! The launchers ([`postgres`], [`mysql`], [`redis`]) build on the toolkit below them: the
//! installation found on the machine (`host`), the launch's inputs (`launch`), the server's
//! process (`process`), the registry of running servers (`registry`), its certificate
//! ([`tls`]) and the marks a killed run leaves ([`leftovers`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::catalog::{Durability, Launcher, StoreKind};
use crate::variant::Variant;

mod host;
mod launch;
pub mod leftovers;
pub mod mysql;
pub mod postgres;
mod process;
pub mod redis;
mod registry;
pub mod tls;

pub use host::Installation;
pub use launch::free_port;
use launch::{Launch, random_password};
use process::{Process, stop_child, stop_children, wait_until_listening};
pub use process::{READY_TIMEOUT, log_tail, process_alive};
pub use registry::kill_all;
use registry::{track, untrack};

/// Finds the installed server for a store, if any (none for a store dbcompare starts no
/// local server of).
pub fn find(kind: StoreKind) -> Option<Installation> {
    match kind.launcher()? {
        Launcher::Postgres => postgres::find(),
        Launcher::Mysql => mysql::find(),
        Launcher::Redis => redis::find(),
        Launcher::RedisCluster => redis::find_cluster(),
    }
}

/// Whether dbcompare can start a throw-away server of this store when it is installed.
pub fn can_start(kind: StoreKind) -> bool {
    kind.launcher().is_some()
}

/// What fixes a store that cannot run here.
pub fn install_hint(kind: StoreKind) -> String {
    match kind.server() {
        Some(server) if server.launcher.is_some() => format!(
            "install it with 'provisioning/install.sh {kind}' or give a server with '--url {kind}=URL'"
        ),
        Some(server) => format!(
            "dbcompare starts no local {kind} server; give one with '--url {kind}={}' or {} \
             ('provisioning/{kind}.sh' installs the vendor's server)",
            server.url_example,
            kind.url_env()
        ),
        None => format!("{kind} is embedded: it needs no server"),
    }
}

/// The masters of a throw-away Redis Cluster unless `--redis-cluster-masters` says.
pub const CLUSTER_MASTERS: u16 = 3;

/// How the throw-away servers are made to serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Serve {
    /// TLS only, with a certificate made for each server (`--tls`).
    pub tls: bool,
    /// The masters of a throw-away Redis Cluster (`--redis-cluster-masters`).
    pub cluster_masters: u16,
}

impl Default for Serve {
    fn default() -> Self {
        Serve {
            tls: false,
            cluster_masters: CLUSTER_MASTERS,
        }
    }
}

/// A running throw-away server. Dropping it stops the server and deletes its directory
/// (unless `--keep-data`).
pub struct LocalServer {
    kind: StoreKind,
    launcher: Launcher,
    port: u16,
    dir: PathBuf,
    keep_data: bool,
    process: Option<Process>,
    registration: u64,
    /// Whether it was stopped (and its directory dealt with) already.
    shut: bool,
    /// The password of the server's benchmark user, made for this server alone.
    password: String,
    /// The certificate authority the server's certificate is signed by, when it serves TLS.
    tls: Option<tls::Files>,
    /// From launch until the server answered (including initialising the data directory).
    pub start_time: Duration,
    pub installation: Installation,
}

/// Where the throw-away directories go (`--data-dir`, by default the system's temporary
/// directory), and whether they are kept after the run (`--keep-data`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDirs {
    pub under: PathBuf,
    pub keep: bool,
}

impl DataDirs {
    /// In the system's temporary directory, deleted after the run.
    pub fn temporary() -> Self {
        DataDirs {
            under: std::env::temp_dir(),
            keep: false,
        }
    }

    /// A new directory for a `kind` store, private to this user (0700) and marked as this
    /// process's (see [`leftovers`]).
    pub fn create(&self, kind: &str) -> Result<tempfile::TempDir> {
        use std::os::unix::fs::PermissionsExt;
        // tempfile's directories follow the umask (0755 by default): this one holds the
        // server's password and key.
        let dir = tempfile::Builder::new()
            .prefix(&format!("{}{kind}-", leftovers::PREFIX))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(&self.under)
            .with_context(|| {
                format!(
                    "creating a directory for the {kind} data in {}",
                    self.under.display()
                )
            })?;
        leftovers::mark(dir.path(), kind, self.keep)?;
        Ok(dir)
    }
}

/// Starts a throw-away server for `kind`, its directory in `dirs`, with a fresh random
/// password and, as `serve` says, serving TLS only, with a certificate made for it.
pub fn start(
    kind: StoreKind,
    installation: &Installation,
    durability: Durability,
    dirs: &DataDirs,
    serve: Serve,
) -> Result<LocalServer> {
    start_variant(kind, installation, &Variant::plain(durability), dirs, serve)
}

/// A throw-away server of `kind` for a unit test, relaxed, in a temporary directory; a
/// server that is not installed fails the test with how to install it.
#[cfg(test)]
pub fn throwaway(kind: StoreKind, serve: Serve) -> LocalServer {
    let installation = find(kind)
        .unwrap_or_else(|| panic!("no {kind} server is installed: {}", install_hint(kind)));
    start(
        kind,
        &installation,
        Durability::Relaxed,
        &DataDirs::temporary(),
        serve,
    )
    .unwrap_or_else(|e| panic!("starting a local {kind} server: {e:#}"))
}

/// [`start`] for a variant: its durability mode, and its configuration file and settings
/// after `configs/`'s (see each launcher for how its server takes them). A free port can be
/// taken by another program before the server binds it: then it starts again, in a new
/// directory on a new port, up to three times in all.
pub fn start_variant(
    kind: StoreKind,
    installation: &Installation,
    variant: &Variant,
    dirs: &DataDirs,
    serve: Serve,
) -> Result<LocalServer> {
    let mut attempt = 1;
    loop {
        match start_once(kind, installation, variant, dirs, serve) {
            Err(e) if attempt < 3 && format!("{e:#}").contains("Address already in use") => {
                attempt += 1;
            }
            started => return started,
        }
    }
}

fn start_once(
    kind: StoreKind,
    installation: &Installation,
    variant: &Variant,
    dirs: &DataDirs,
    serve: Serve,
) -> Result<LocalServer> {
    let durability = variant.durability;
    let started = Instant::now();
    let keep_data = dirs.keep;
    let launcher = kind
        .launcher()
        .with_context(|| format!("dbcompare starts no local {kind} server"))?;
    let dir = dirs.create(kind.name())?.keep();
    let port = free_port()?;
    let mut server = LocalServer {
        kind,
        launcher,
        port,
        dir: dir.clone(),
        keep_data,
        process: None,
        registration: 0,
        shut: false,
        password: random_password()?,
        tls: None,
        start_time: Duration::ZERO,
        installation: installation.clone(),
    };
    // From here on, dropping `server` deletes the directory (and stops what was started).
    if serve.tls {
        server.tls = Some(tls::Files::make(&dir)?);
    }
    let launch = Launch {
        dir: &dir,
        port,
        durability,
        password: &server.password,
        tls: server.tls.as_ref(),
        masters: serve.cluster_masters,
        keep_data,
        config: variant.config.as_ref(),
        settings: &variant.settings,
    };
    let launched = match launcher {
        Launcher::Postgres => postgres::launch(installation, &launch),
        Launcher::Mysql => mysql::launch(installation, &launch),
        Launcher::Redis => redis::launch(installation, &launch),
        Launcher::RedisCluster => redis::launch_cluster(installation, &launch),
    };
    // A log may quote the statement that set the password.
    let secret = [server.password.clone()];
    let hide =
        |e: anyhow::Error| anyhow::anyhow!(crate::store::url::scrub(&format!("{e:#}"), &secret));
    let process = launched
        .with_context(|| {
            format!(
                "starting a local {kind} server ({}){}",
                installation.server.display(),
                log_tail(&dir)
            )
        })
        .map_err(hide)?;
    server.register(process);
    if let Some(Process::Child(child)) = &mut server.process {
        let listening = wait_until_listening(child, port, &dir)
            .with_context(|| format!("starting a local {kind} server"));
        listening.map_err(hide)?;
    }
    server.start_time = started.elapsed();
    Ok(server)
}

impl LocalServer {
    pub fn kind(&self) -> StoreKind {
        self.kind
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The temporary directory holding the data directory, config and log.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The pid of the server's main process (a cluster's first node).
    pub fn pid(&self) -> Option<i32> {
        self.process.as_ref().map(Process::pid)
    }

    /// Every node of a cluster as (port, pid); the one server's otherwise.
    pub fn nodes(&self) -> Vec<(u16, i32)> {
        match &self.process {
            Some(Process::Group(nodes)) => nodes.iter().map(|(c, p)| (*p, c.id() as i32)).collect(),
            Some(process) => vec![(self.port, process.pid())],
            None => Vec::new(),
        }
    }

    /// The URL a store connects to, with the server's password and, when it serves TLS,
    /// the settings that verify its certificate (each driver's own).
    pub fn url(&self) -> String {
        let (port, pw) = (self.port, &self.password);
        let mut url = match self.launcher {
            Launcher::Postgres => format!("postgres://bench:{pw}@127.0.0.1:{port}/postgres"),
            Launcher::Mysql => format!("mysql://root:{pw}@127.0.0.1:{port}/dbcompare"),
            Launcher::Redis if self.tls.is_some() => format!("rediss://:{pw}@127.0.0.1:{port}/0"),
            Launcher::Redis => format!("redis://:{pw}@127.0.0.1:{port}/0"),
            Launcher::RedisCluster => {
                let scheme = if self.tls.is_some() {
                    "rediss+cluster"
                } else {
                    "redis+cluster"
                };
                let hosts: Vec<String> = self
                    .nodes()
                    .iter()
                    .map(|(port, _)| format!("127.0.0.1:{port}"))
                    .collect();
                format!("{scheme}://:{pw}@{}/", hosts.join(","))
            }
        };
        if let Some(files) = &self.tls {
            url.push('?');
            url.push_str(&tls::url_settings(self.launcher, &files.ca));
        }
        url
    }

    /// The password of the server's benchmark user.
    pub fn password(&self) -> &str {
        &self.password
    }

    /// The certificate authority of the server's certificate, when it serves TLS.
    pub fn tls_ca(&self) -> Option<&Path> {
        self.tls.as_ref().map(|f| f.ca.as_path())
    }

    /// The server's data directory, whose bytes a store may report beside its own figure.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn register(&mut self, process: Process) {
        let group = matches!(process, Process::Group(_));
        let id = track(
            process.pid(),
            group,
            (!self.keep_data).then(|| self.dir.clone()),
        );
        if let Err(e) = leftovers::mark_server(&self.dir, process.pid()) {
            crate::output::errln!("warning: {e:#}");
        }
        self.registration = id;
        self.process = Some(process);
    }

    /// Stops the server and deletes its directory; returns what went wrong, if anything.
    pub fn stop(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        if self.shut {
            return Ok(());
        }
        self.shut = true;
        let stopped = match self.process.take() {
            Some(Process::Child(child)) => stop_child(child),
            Some(Process::Group(nodes)) => stop_children(nodes),
            Some(Process::PgCtl {
                pg_ctl,
                data,
                as_user,
                pid,
            }) => postgres::stop(&pg_ctl, &data, as_user.as_deref(), pid),
            None => Ok(()),
        };
        untrack(self.registration);
        let removed = if self.keep_data {
            leftovers::unmark(&self.dir);
            crate::output::errln!(
                "kept the {} server's directory: {}",
                self.kind,
                self.dir.display()
            );
            Ok(())
        } else {
            std::fs::remove_dir_all(&self.dir)
                .or_else(|e| match e.kind() {
                    std::io::ErrorKind::NotFound => Ok(()),
                    _ => Err(e),
                })
                .with_context(|| format!("deleting {}", self.dir.display()))
        };
        stopped.and(removed)
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            crate::output::errln!("warning: stopping the local {} server: {e:#}", self.kind);
        }
    }
}
