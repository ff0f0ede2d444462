//! A server's process: started as our child with no standard streams, waited on until it
//! answers on its port, stopped (gracefully, then forcefully), and the setup commands around
//! it run to completion with their output in the error.

use std::io::{BufRead, BufReader, Read};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// How long a server may take from launch until it answers.
pub const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a data directory's initialisation (initdb, mariadb-install-db) may take: far
/// beyond the few seconds it takes, so only a hung one is cut short.
pub(super) const INIT_LIMIT: Duration = Duration::from_secs(600);

/// How long a graceful stop may take before the process is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// How a started server is stopped.
pub(super) enum Process {
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
    pub(super) fn pid(&self) -> i32 {
        match self {
            Process::Child(c) => c.id() as i32,
            Process::Group(nodes) => nodes.first().map_or(0, |(c, _)| c.id() as i32),
            Process::PgCtl { pid, .. } => *pid,
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

/// Whether a running process (not a zombie) is left in process group `pgid`.
pub(super) fn group_alive(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // After the parenthesised command name: state, parent's pid, process group.
        let mut fields = stat
            .rsplit_once(')')
            .map_or("", |(_, r)| r)
            .split_whitespace();
        let state = fields.next().unwrap_or("Z");
        state != "Z" && state != "X" && fields.nth(1) == Some(pgid.to_string().as_str())
    })
}

/// Waits until `pid` has exited, up to `timeout`; whether it did.
pub(super) fn wait_for_exit(pid: i32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    while process_alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}
/// SIGTERM, wait, then SIGKILL; always reaps the child.
pub(super) fn stop_child(mut child: Child) -> Result<()> {
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
pub(super) fn stop_children(nodes: Vec<(Child, u16)>) -> Result<()> {
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

/// Waits until the child accepts TCP connections on `port`, failing early if it exits or
/// on a Ctrl-C (its caller then stops it).
pub(super) fn wait_until_listening(child: &mut Child, port: u16, dir: &Path) -> Result<()> {
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
        if crate::interrupt::requested() {
            bail!("interrupted before the server answered");
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

/// The file a server's standard error goes to, in its directory: a server that refuses its
/// configuration says why there before it opens its log.
pub(super) const STDERR_FILE: &str = "server.stderr";

/// The last lines of the server's log in `dir` (`server.log`) and of its standard error
/// (`server.stderr`), formatted for an error.
pub fn log_tail(dir: &Path) -> String {
    [("log", "server.log"), ("standard error", STDERR_FILE)]
        .into_iter()
        .filter_map(|(what, name)| {
            let file = std::fs::File::open(dir.join(name)).ok()?;
            let lines: Vec<String> = BufReader::new(file).lines().map_while(Result::ok).collect();
            let tail = &lines[lines.len().saturating_sub(15)..];
            (!tail.is_empty())
                .then(|| format!("\n--- last lines of its {what} ---\n{}", tail.join("\n")))
        })
        .collect()
}

/// Starts a server as our child, in a process group of its own (`group` 0) or in `group`
/// (so a terminal's Ctrl-C reaches dbcompare, which stops it in order), with no standard
/// input or output and its standard error in `stderr`.
pub(super) fn spawn_server(mut command: Command, group: i32, stderr: &Path) -> Result<Process> {
    let program = command.get_program().to_string_lossy().into_owned();
    let stderr =
        std::fs::File::create(stderr).with_context(|| format!("creating {}", stderr.display()))?;
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .process_group(group)
        .spawn()
        .with_context(|| format!("running {program}"))?;
    Ok(Process::Child(child))
}

/// Runs a setup command until it ends, `limit` passes or a Ctrl-C (then it and every process
/// it started are killed: it runs in a process group of its own), with its output in the
/// error when it fails. For the steps before a server runs, which leave nothing behind but
/// files in the directory that is deleted after them.
pub(super) fn run_setup_within(mut command: Command, what: &str, limit: Duration) -> Result<()> {
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
            // SAFETY: kill(2) on the process group of the child we started (its pid).
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            // Its children (mariadbd under the install script) die on their own time: a
            // big process takes a moment to unmap its memory.
            let gone = Instant::now() + Duration::from_secs(10);
            while group_alive(child.id() as i32) && Instant::now() < gone {
                std::thread::sleep(Duration::from_millis(10));
            }
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

/// Runs a setup command to completion, also after a Ctrl-C, with its output in the error
/// when it fails: for a server's start and stop through pg_ctl, which must not be cut in
/// the middle (a server left running, or not stopped).
pub(super) fn run_setup(mut command: Command, what: &str) -> Result<()> {
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
