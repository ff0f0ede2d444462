//! Throw-away local servers: find the installed binaries, create a temporary data directory,
//! initialise it with the settings in `configs/`, start the server on a free 127.0.0.1 port,
//! wait until it answers, and on drop stop it (gracefully, then forcefully) and delete the
//! directory. Every running server is also in a process-wide registry, so an exit that
//! skips destructors (a second Ctrl-C) still stops them: no process and no directory is
//! left behind.

use std::io::{BufRead, BufReader, Read};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::catalog::{Durability, Launcher, StoreKind};

pub mod leftovers;
pub mod mysql;
pub mod postgres;
pub mod redis;
pub mod tls;

/// How long a server may take from launch until it answers.
pub const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a graceful stop may take before the process is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

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
    fn tool(&self, role: &str) -> &Path {
        self.tools
            .iter()
            .find(|(r, _)| *r == role)
            .map(|(_, p)| p.as_path())
            .expect("every installation lists the tools its start needs")
    }
}

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

/// How a started server is stopped.
enum Process {
    /// A server running as our child.
    Child(Child),
    /// The nodes of a cluster, by port, all in the first one's process group.
    Group(Vec<(Child, u16)>),
    /// PostgreSQL, detached by pg_ctl: stopped with `pg_ctl stop`, or killed by its pid.
    PgCtl {
        pg_ctl: PathBuf,
        data: PathBuf,
        as_user: Option<String>,
        pid: i32,
    },
}

impl Process {
    fn pid(&self) -> i32 {
        match self {
            Process::Child(c) => c.id() as i32,
            Process::Group(nodes) => nodes.first().map_or(0, |(c, _)| c.id() as i32),
            Process::PgCtl { pid, .. } => *pid,
        }
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

/// What a launcher starts its server with.
pub(crate) struct Launch<'a> {
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
}

/// What the registry needs to kill a server and delete its directory without its owner.
struct Registered {
    id: u64,
    pid: i32,
    /// Whether `pid` leads a process group of the server's (a cluster's nodes).
    group: bool,
    dir: Option<PathBuf>,
}

static REGISTRY: Mutex<Vec<Registered>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Puts a server (or, with `group`, the process group `pid` leads: a cluster's nodes, also
/// while they are still being joined) where [`kill_all`] finds it; `dir` is deleted with
/// it. Gives the entry's id, for [`untrack`].
fn track(pid: i32, group: bool, dir: Option<PathBuf>) -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    REGISTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Registered {
            id,
            pid,
            group,
            dir,
        });
    id
}

/// Removes an entry of [`track`].
fn untrack(id: u64) {
    REGISTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|r| r.id != id);
}

/// Kills every server still running and deletes its directory. For exits that skip
/// destructors; a normal run stops its servers by dropping them.
pub fn kill_all() {
    let servers = std::mem::take(&mut *REGISTRY.lock().unwrap_or_else(|e| e.into_inner()));
    for s in servers {
        // SAFETY: kill(2) with a pid we started (or the group it leads, which lives on
        // while any of its nodes does); a stale pid only gets ESRCH.
        unsafe { libc::kill(if s.group { -s.pid } else { s.pid }, libc::SIGKILL) };
        if let Some(dir) = s.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Whether a process with this pid is running (an exited process that its parent has not
/// reaped yet, a zombie, is not).
pub fn process_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    let rc = unsafe { libc::kill(pid, 0) };
    let exists = rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH);
    let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        // The state follows the parenthesised command name.
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    });
    exists && !zombie
}

/// Waits until `pid` has exited, up to `timeout`; whether it did.
fn wait_for_exit(pid: i32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    while process_alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// A fresh password: 128 bits from the system's random source, in hexadecimal (nothing a
/// URL or a config file would need to quote).
fn random_password() -> Result<String> {
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
            eprintln!("warning: {e:#}");
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
        REGISTRY
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|r| r.id != self.registration);
        let removed = if self.keep_data {
            leftovers::unmark(&self.dir);
            eprintln!(
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
            eprintln!("warning: stopping the local {} server: {e:#}", self.kind);
        }
    }
}

/// SIGTERM, wait, then SIGKILL; always reaps the child.
fn stop_child(mut child: Child) -> Result<()> {
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let deadline = Instant::now() + STOP_TIMEOUT;
    while Instant::now() < deadline {
        if child.try_wait()?.is_some() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill()?;
    child.wait()?;
    bail!("the server did not stop within {STOP_TIMEOUT:?} of SIGTERM and was killed")
}

/// Stops every node at once (SIGTERM to each, then waits for all); names the nodes that did
/// not stop.
fn stop_children(nodes: Vec<(Child, u16)>) -> Result<()> {
    for (child, _) in &nodes {
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    }
    let deadline = Instant::now() + STOP_TIMEOUT;
    let mut failed = Vec::new();
    for (mut child, port) in nodes {
        let stopped = loop {
            match child.try_wait() {
                Ok(Some(_)) => break true,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => break false,
            }
        };
        if !stopped {
            let _ = child.kill();
            let _ = child.wait();
            failed.push(port.to_string());
        }
    }
    if !failed.is_empty() {
        bail!(
            "the nodes on ports {} did not stop within {STOP_TIMEOUT:?} of SIGTERM and were killed",
            failed.join(", ")
        );
    }
    Ok(())
}

/// Waits until the child accepts TCP connections on `port`, failing early if it exits.
fn wait_until_listening(child: &mut Child, port: u16, dir: &Path) -> Result<()> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    loop {
        if let Some(status) = child.try_wait()? {
            bail!(
                "the server exited ({status}) before it answered{}",
                log_tail(dir)
            );
        }
        if let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            // A listening server may still refuse to talk; a greeting or silence both mean
            // the socket is served. Only a reset means "not yet".
            stream.set_read_timeout(Some(Duration::from_millis(50)))?;
            let mut byte = [0u8; 1];
            match stream.read(&mut byte) {
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
                _ => return Ok(()),
            }
        }
        if Instant::now() > deadline {
            bail!(
                "the server did not answer on 127.0.0.1:{port} within {READY_TIMEOUT:?}{}",
                log_tail(dir)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The last lines of the server's log in `dir` (`server.log`), formatted for an error.
pub fn log_tail(dir: &Path) -> String {
    let Ok(file) = std::fs::File::open(dir.join("server.log")) else {
        return String::new();
    };
    let lines: Vec<String> = BufReader::new(file).lines().map_while(Result::ok).collect();
    let tail = &lines[lines.len().saturating_sub(15)..];
    if tail.is_empty() {
        String::new()
    } else {
        format!("\n--- last lines of its log ---\n{}", tail.join("\n"))
    }
}

/// Starts a server as our child, in a process group of its own (`group` 0) or in `group`
/// (so a terminal's Ctrl-C reaches dbcompare, which stops it in order), with no standard
/// streams.
fn spawn_server(mut command: Command, group: i32) -> Result<Process> {
    let program = command.get_program().to_string_lossy().into_owned();
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(group)
        .spawn()
        .with_context(|| format!("running {program}"))?;
    Ok(Process::Child(child))
}

/// Runs a setup command until it ends, `limit` passes or a Ctrl-C (it is killed then), with
/// its output in the error when it fails.
fn run_setup_within(mut command: Command, what: &str, limit: Duration) -> Result<()> {
    let program = command.get_program().to_string_lossy().into_owned();
    let dir = tempfile::tempdir().context("a directory for a setup command's output")?;
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = command
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out)?)
        .stderr(std::fs::File::create(&err)?)
        .process_group(0)
        .spawn()
        .with_context(|| format!("{what}: running {program}"))?;
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if Instant::now() > deadline || crate::interrupt::requested() {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = || {
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        format!("{}{}", read(&out).trim(), read(&err).trim())
    };
    match status {
        Some(status) if status.success() => Ok(()),
        Some(status) => bail!("{what}: {program} failed ({status}):\n{}", output()),
        None if crate::interrupt::requested() => bail!("{what}: interrupted"),
        None => bail!(
            "{what}: {program} did not finish within {limit:?}:\n{}",
            output()
        ),
    }
}

/// Runs a setup command to completion, with its output in the error when it fails.
fn run_setup(mut command: Command, what: &str) -> Result<()> {
    let program = command.get_program().to_string_lossy().into_owned();
    let output = command
        .stdin(Stdio::null())
        .process_group(0)
        .output()
        .with_context(|| format!("{what}: running {program}"))?;
    if !output.status.success() {
        bail!(
            "{what}: {program} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout).trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}

/// First line of `binary --version`.
fn version_of(binary: &Path) -> Option<String> {
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
fn which(names: &[&str], extra_dirs: &[PathBuf]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path).chain(extra_dirs.iter().cloned());
    let dirs: Vec<PathBuf> = dirs.collect();
    names
        .iter()
        .find_map(|name| dirs.iter().map(|d| d.join(name)).find(|p| p.is_file()))
}

/// Whether this process runs as root (servers that refuse root then run as another user).
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Writes `contents` to `path`.
/// Writes a config file only its owner can read (some hold the server's password).
fn write_file(path: &Path, contents: &str) -> Result<()> {
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
