//! Where a store runs, made ready for a run or a check: its throw-away local server started
//! (when its target is one) with its variant's settings, a server given by URL given them,
//! its connection spec (the URL, the data directory, a temporary SQLite file), and its
//! deployment as the report shows it; its own settings read back; stopped again afterwards.

use std::collections::BTreeMap;

use anyhow::{Context, Result, bail};
use tempfile::TempDir;

use crate::catalog::{Launcher, StoreKind, StoreOptions};
use crate::measure::cost::Watch;
use crate::measure::processes::{Processes, listening_on};
use crate::plan::{PlannedStore, Target};
use crate::report::model::Deployment;
use crate::server::{self, DataDirs, LocalServer};
use crate::store::url::StoreUrl;
use crate::store::{ConnectSpec, Store};

/// A store made ready to open.
pub struct Setup {
    kind: StoreKind,
    /// How every connection of the store opens.
    pub spec: ConnectSpec,
    /// How the store runs, for the report.
    pub deployment: Deployment,
    local: Option<LocalServer>,
    /// An embedded store's temporary directory (every connection opens the same file).
    _sqlite_dir: Option<TempDir>,
}

impl Setup {
    /// Starts the store's local server if its target is one (with its variant's
    /// configuration file and settings), gives a server given by URL the variant's
    /// server-wide settings, and builds its connection spec.
    pub async fn start(
        store: &PlannedStore,
        connect_timeout: std::time::Duration,
        dirs: &DataDirs,
        serve: server::Serve,
        options: &StoreOptions,
    ) -> Result<Setup> {
        let kind = store.id.kind;
        let variant = &store.variant;
        let durability = variant.durability;
        let (local, url, deployment) = match &store.target {
            Target::Unavailable(why) => bail!("{why}"),
            Target::Embedded => (None, None, deployment("embedded", None)),
            Target::Url(u) => {
                let mut d = deployment("url", Some(u));
                // Used as it is: the mode it reports is checked against the one asked for,
                // unless settings of its own (--config, --set) were given it on purpose.
                d.durability_asked =
                    (!variant.has_own_settings()).then(|| durability.name().to_string());
                (None, Some(u.clone()), d)
            }
            Target::Local(installation) => {
                let installation = installation.clone();
                let dirs = dirs.clone();
                let variant = variant.clone();
                let server = tokio::task::spawn_blocking(move || {
                    server::start_variant(kind, &installation, &variant, &dirs, serve)
                })
                .await
                .context("the server start panicked")??;
                let u = StoreUrl::parse(kind, &server.url())?;
                let mut d = deployment("local server", Some(&u));
                d.server = Some(server.installation.version.clone());
                d.start_ms = Some(server.start_time.as_secs_f64() * 1e3);
                d.data_dir = Some(server.dir().display().to_string());
                (Some(server), Some(u), d)
            }
        };
        let by_url = matches!(store.target, Target::Url(_));
        let sqlite_dir = match (kind.is_embedded(), &options.sqlite_path) {
            (true, None) => Some(dirs.create(kind.name())?),
            _ => None,
        };
        let sqlite_path = match &sqlite_dir {
            Some(dir) => Some(dir.path().join("dbcompare.sqlite")),
            None => options.sqlite_path.clone(),
        };
        let setup = Setup {
            kind,
            spec: ConnectSpec {
                url,
                data_dir: local.as_ref().map(LocalServer::data_dir),
                durability,
                connect_timeout,
                options: StoreOptions {
                    sqlite_path,
                    settings: variant.settings.clone(),
                    // PostgreSQL's settings hold per session: its connections set them.
                    set_on_connect: by_url && kind == StoreKind::Postgres,
                    ..options.clone()
                },
            },
            deployment,
            local,
            _sqlite_dir: sqlite_dir,
        };
        if by_url && kind != StoreKind::Postgres && !variant.settings.is_empty() {
            setup.set_server_wide().await?;
        }
        Ok(setup)
    }

    /// Gives a server given by URL the variant's settings for the whole server (MySQL's
    /// `SET GLOBAL`, Redis's `CONFIG SET`).
    async fn set_server_wide(&self) -> Result<()> {
        let mut store = self.kind.connect(&self.spec).await?;
        for (name, value) in &self.spec.options.settings {
            store.set_setting(name, value).await?;
        }
        store.close().await
    }

    /// Settings as the store reads them back, by name (`None` where it cannot tell): a
    /// variant's own (`--set`), to check them, or another variant's, to show them.
    pub async fn read_back<'a>(
        &self,
        names: impl IntoIterator<Item = &'a String>,
    ) -> Result<BTreeMap<String, Option<String>>> {
        let names: Vec<&String> = names.into_iter().collect();
        if names.is_empty() {
            return Ok(BTreeMap::new());
        }
        let mut store = self.kind.connect(&self.spec).await?;
        let mut found = BTreeMap::new();
        for name in names {
            let value = store
                .setting(name)
                .await
                .with_context(|| format!("reading {name} back"))?;
            found.insert(name.clone(), value);
        }
        store.close().await?;
        Ok(found)
    }

    /// What is read of the store's server around each phase: a local server's processes,
    /// an embedded store's own (the client's) process, or a URL server's own counters.
    ///
    /// A server given by URL on this machine's loopback is read as a throw-away one is,
    /// when the processes listening on its ports can be read.
    pub fn watch(&self) -> Watch {
        match &self.local {
            Some(server) => Watch::Processes(Processes::of(
                server.nodes().into_iter().map(|(_, pid)| pid).collect(),
            )),
            None if self.kind.is_embedded() => Watch::ClientProcess,
            None => match self
                .spec
                .url
                .as_ref()
                .and_then(|url| local_processes(self.kind, url))
            {
                Some(roots) => Watch::Processes(Processes::of(roots)),
                None => Watch::ServerCounters,
            },
        }
    }

    /// Stops the local server, if one was started, and deletes its directory. Stopping
    /// takes a moment (a final fsync); a failure to stop is a warning, since what was
    /// measured stands.
    pub async fn stop(self) {
        let (kind, local) = (self.kind, self.local);
        let Some(server) = local else {
            return;
        };
        let stopped = tokio::task::spawn_blocking(move || server.stop()).await;
        match stopped {
            Ok(Ok(())) => {}
            Ok(Err(e)) => crate::output::errln!("warning: stopping the local {kind} server: {e:#}"),
            Err(e) => {
                crate::output::errln!("warning: stopping the local {kind} server panicked: {e}")
            }
        }
    }
}

/// The programs a server of `kind` runs as (`/proc/PID/comm`, at most 15 bytes), so that a
/// proxy or port forward listening in the server's place is never read as the server.
fn server_programs(kind: StoreKind) -> &'static [&'static str] {
    match kind.launcher() {
        Some(Launcher::Postgres) => &["postgres", "postmaster"],
        Some(Launcher::Mysql) => &["mariadbd", "mysqld"],
        Some(Launcher::Redis | Launcher::RedisCluster) => {
            &["redis-server", "valkey-server", "keydb-server"]
        }
        None => &[],
    }
}

/// The processes serving every host of `url`, when each is on this machine's loopback and
/// a process this user may read listens there that runs the store's server program.
fn local_processes(kind: StoreKind, url: &StoreUrl) -> Option<Vec<i32>> {
    let programs = server_programs(kind);
    let mut roots = Vec::new();
    for host in url.hosts() {
        let (name, port) = host.rsplit_once(':')?;
        let name = name.trim_matches(|c| c == '[' || c == ']');
        if !matches!(name, "127.0.0.1" | "localhost" | "::1") {
            return None;
        }
        let found = listening_on(port.parse().ok()?);
        let is_server = |pid: &i32| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| programs.contains(&comm.trim()))
        };
        if found.is_empty() || !found.iter().all(is_server) {
            return None;
        }
        roots.extend(
            found
                .into_iter()
                .filter(|p| !roots.contains(p))
                .collect::<Vec<_>>(),
        );
    }
    (!roots.is_empty()).then_some(roots)
}

fn deployment(kind: &str, url: Option<&StoreUrl>) -> Deployment {
    Deployment {
        kind: kind.to_string(),
        url: url.map(|u| u.masked().to_string()),
        server: None,
        start_ms: None,
        data_dir: None,
        durability_asked: None,
    }
}
