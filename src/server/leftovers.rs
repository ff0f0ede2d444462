//! What a killed dbcompare leaves: every throw-away directory (a server's, or an embedded
//! store's temporary file) holds a marker naming the dbcompare process that made it and the
//! server running in it, each by pid and start time (so a reused pid is never mistaken for
//! it). [`clean`] finds the directories whose owner is gone, stops their servers and
//! deletes them; a directory without a marker, or whose owner still runs, is not touched.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// The marker's file name, inside each throw-away directory.
pub const MARKER: &str = "dbcompare-owner";

/// The names the throw-away directories start with.
pub const PREFIX: &str = "dbcompare-";

/// How long a left-over server may take to stop on SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(15);

/// A process, as the marker names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Process {
    pub pid: i32,
    /// Clock ticks after boot the process started at (`/proc/PID/stat`, field 22).
    pub start: u64,
}

impl Process {
    /// This process.
    pub fn current() -> Option<Process> {
        Process::of(std::process::id() as i32)
    }

    /// The process with this pid, if it runs.
    pub fn of(pid: i32) -> Option<Process> {
        Some(Process {
            pid,
            start: start_time(pid)?,
        })
    }

    /// Whether this very process still runs (not another one given the same pid since).
    pub fn alive(&self) -> bool {
        start_time(self.pid) == Some(self.start) && super::process::process_alive(self.pid)
    }
}

/// When the process started, in clock ticks after boot; `None` when it does not exist.
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the parenthesised command name start with the state, field 3.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(22 - 3)?.parse().ok()
}

/// What a marker says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    /// `postgres`, `sqlite`, ...
    pub kind: String,
    pub owner: Process,
    pub server: Option<Process>,
    /// `--keep-data`: stop the server but keep the directory.
    pub keep: bool,
    /// The boot it was made in (absent where it cannot be read).
    pub boot: Option<String>,
}

impl Marker {
    fn render(&self) -> String {
        let mut text = format!(
            "kind={}\nowner_pid={}\nowner_start={}\nkeep={}\n",
            self.kind, self.owner.pid, self.owner.start, self.keep
        );
        if let Some(s) = self.server {
            text.push_str(&format!("server_pid={}\nserver_start={}\n", s.pid, s.start));
        }
        if let Some(boot) = &self.boot {
            text.push_str(&format!("boot={boot}\n"));
        }
        text
    }

    /// Reads a marker; `None` for anything that is not one (then the directory is not ours
    /// to touch).
    pub fn parse(text: &str) -> Option<Marker> {
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
                .map(str::trim)
        };
        let process = |pid: &str, start: &str| {
            Some(Process {
                pid: field(pid)?.parse().ok().filter(|&p: &i32| p > 0)?,
                start: field(start)?.parse().ok()?,
            })
        };
        Some(Marker {
            kind: field("kind")?.to_string(),
            owner: process("owner_pid", "owner_start")?,
            server: process("server_pid", "server_start"),
            keep: field("keep") == Some("true"),
            boot: field("boot").map(str::to_string),
        })
    }
}

/// Marks `dir` as made by this process for a `kind` store.
pub fn mark(dir: &Path, kind: &str, keep: bool) -> Result<()> {
    let owner = Process::current().context("reading this process's start time")?;
    write(
        dir,
        &Marker {
            kind: kind.to_string(),
            owner,
            server: None,
            keep,
            boot: boot_id(),
        },
    )
}

/// Adds the server now running in `dir` to its marker.
pub fn mark_server(dir: &Path, pid: i32) -> Result<()> {
    let path = dir.join(MARKER);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut marker = Marker::parse(&text)
        .with_context(|| format!("{} is not a dbcompare marker", path.display()))?;
    marker.server = Process::of(pid);
    write(dir, &marker)
}

/// Removes the marker of a directory that is kept (`--keep-data`), so that no later clean
/// deletes it.
pub fn unmark(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(MARKER));
}

fn write(dir: &Path, marker: &Marker) -> Result<()> {
    let path = dir.join(MARKER);
    // Written whole, then renamed: a kill in the middle leaves the old marker or the new.
    let tmp = dir.join(format!(".{MARKER}.tmp"));
    let written = (|| {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        // Private whatever the umask: `clean` trusts no marker others can write.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        file.write_all(marker.render().as_bytes())?;
        std::fs::rename(&tmp, &path)
    })();
    written.with_context(|| format!("writing {}", path.display()))
}

/// What [`clean`] removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    pub dir: PathBuf,
    pub marker: Marker,
    /// Whether a server was still running there (and was stopped).
    pub stopped_server: bool,
    /// Whether the directory was deleted (not with `--keep-data`).
    pub deleted: bool,
}

impl std::fmt::Display for Removed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = &self.marker;
        match (self.stopped_server, m.server) {
            (true, Some(s)) => write!(f, "stopped a {} server (pid {}) and ", m.kind, s.pid)?,
            _ => write!(f, "found a {} directory and ", m.kind)?,
        }
        let action = if self.deleted { "deleted" } else { "kept" };
        write!(
            f,
            "{action} {}, left by a dbcompare that is gone (pid {})",
            self.dir.display(),
            m.owner.pid
        )
    }
}

/// Finds, in `base`, the throw-away directories whose dbcompare is gone: stops the server
/// still running in each and deletes the directory (keeps it, marker removed, where the run
/// had `--keep-data`). Returns what it did; what it could not do is an error naming it,
/// after everything else was done.
pub fn clean(base: &Path) -> Result<Vec<Removed>> {
    let mut removed = Vec::new();
    let mut failures = Vec::new();
    let Ok(entries) = std::fs::read_dir(base) else {
        return Ok(removed);
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with(PREFIX) {
            continue;
        }
        let dir = entry.path();
        let Some(text) = trusted_marker(&dir) else {
            continue;
        };
        let Some(marker) = Marker::parse(&text) else {
            continue;
        };
        // Made on another boot or machine (a shared --data-dir): its pids are not ours.
        if marker
            .boot
            .as_deref()
            .is_some_and(|b| Some(b) != boot_id().as_deref())
        {
            continue;
        }
        if marker.owner.alive() {
            continue;
        }
        match clean_one(&dir, &marker) {
            Ok(r) => removed.push(r),
            Err(e) => failures.push(format!("{}: {e:#}", dir.display())),
        }
    }
    if failures.is_empty() {
        Ok(removed)
    } else {
        for r in &removed {
            crate::output::errln!("{r}");
        }
        anyhow::bail!(
            "could not clean up after a killed run:\n{}",
            failures.join("\n")
        )
    }
}

/// The marker of `dir`, if it can be trusted: `dir` a real directory (not a link), the
/// marker a regular file of this user's that nobody else can write. In a shared /tmp a
/// directory anyone made is never taken for one of ours, nor its "server" signalled.
fn trusted_marker(dir: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let d = std::fs::symlink_metadata(dir).ok()?;
    let m = std::fs::symlink_metadata(dir.join(MARKER)).ok()?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let ours = d.is_dir() && m.is_file() && m.uid() == me && m.mode() & 0o022 == 0;
    ours.then(|| std::fs::read_to_string(dir.join(MARKER)).ok())?
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`): pids and start times mean something
/// only within one boot of one machine.
fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
}

/// The PostgreSQL postmaster running in `dir`, by its `data/postmaster.pid`, when the marker
/// does not name it yet (dbcompare was killed while `pg_ctl start` still waited): only a
/// live process working in `dir` counts.
fn postmaster_in(dir: &Path) -> Option<Process> {
    let text = std::fs::read_to_string(dir.join("data").join("postmaster.pid")).ok()?;
    let pid: i32 = text
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
        .filter(|&p| p > 0)?;
    let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
    let dir = std::fs::canonicalize(dir).ok()?;
    cwd.starts_with(&dir).then(|| Process::of(pid)).flatten()
}

fn clean_one(dir: &Path, marker: &Marker) -> Result<Removed> {
    let running = marker
        .server
        .or_else(|| postmaster_in(dir))
        .filter(Process::alive);
    if let Some(server) = running {
        stop(server).with_context(|| format!("stopping the {} server", marker.kind))?;
    }
    // Another clean (a run starting at the same time) may have got there first.
    let gone = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    if marker.keep {
        unmark(dir);
    } else {
        match std::fs::remove_dir_all(dir) {
            Err(e) if !gone(&e) => {
                return Err(e).with_context(|| format!("deleting {}", dir.display()));
            }
            _ => {}
        }
    }
    let mut marker = marker.clone();
    marker.server = running.or(marker.server);
    Ok(Removed {
        dir: dir.to_path_buf(),
        deleted: !marker.keep,
        marker,
        stopped_server: running.is_some(),
    })
}

/// SIGTERM to the server's process group (or the server alone when it leads none), wait,
/// then SIGKILL.
fn stop(server: Process) -> Result<()> {
    // SAFETY: getpgid(2) and kill(2) on a process whose start time we just checked.
    let group = unsafe { libc::getpgid(server.pid) } == server.pid;
    let target = if group { -server.pid } else { server.pid };
    if unsafe { libc::kill(target, libc::SIGTERM) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ESRCH) {
            return Err(e).with_context(|| format!("signalling pid {}", server.pid));
        }
    }
    let deadline = Instant::now() + STOP_TIMEOUT;
    while server.alive() {
        if Instant::now() > deadline {
            // SAFETY: as above.
            unsafe { libc::kill(target, libc::SIGKILL) };
            // A big process takes a moment to unmap its memory.
            let killed = Instant::now() + Duration::from_secs(5);
            while server.alive() && Instant::now() < killed {
                std::thread::sleep(Duration::from_millis(20));
            }
            anyhow::ensure!(!server.alive(), "pid {} survived SIGKILL", server.pid);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_reads_back() {
        let m = Marker {
            kind: "redis".into(),
            owner: Process {
                pid: 12,
                start: 345,
            },
            server: Some(Process {
                pid: 67,
                start: 890,
            }),
            keep: false,
            boot: Some("b00t".into()),
        };
        assert_eq!(Marker::parse(&m.render()), Some(m.clone()));
        let no_server = Marker { server: None, ..m };
        assert_eq!(Marker::parse(&no_server.render()), Some(no_server));
    }

    #[test]
    fn anything_else_is_not_a_marker() {
        for text in [
            "",
            "kind=redis\n",
            "kind=redis\nowner_pid=-1\nowner_start=3\n",
        ] {
            assert_eq!(Marker::parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn this_process_is_alive_and_a_changed_start_time_is_not() {
        let me = Process::current().unwrap();
        assert!(me.alive());
        let other = Process {
            start: me.start + 1,
            ..me
        };
        assert!(!other.alive(), "a reused pid must not count as the owner");
    }

    /// A PostgreSQL server whose start dbcompare did not see end (the marker names no
    /// server) is found by its postmaster.pid and its working directory, and stopped.
    #[test]
    fn a_postmaster_the_marker_does_not_name_is_found_by_its_pid_file() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("dbcompare-postgres-early");
        let data = dir.join("data");
        std::fs::create_dir_all(&data).unwrap();
        let mut owner = std::process::Command::new("true").spawn().unwrap();
        let owner_proc = Process::of(owner.id() as i32).unwrap_or(Process {
            pid: owner.id() as i32,
            start: 1,
        });
        owner.wait().unwrap();
        let mut postmaster = std::process::Command::new("sleep")
            .arg("60")
            .current_dir(&data)
            .spawn()
            .unwrap();
        std::fs::write(
            data.join("postmaster.pid"),
            format!("{}\n{}\n", postmaster.id(), data.display()),
        )
        .unwrap();
        write(
            &dir,
            &Marker {
                kind: "postgres".into(),
                owner: owner_proc,
                server: None,
                keep: false,
                boot: boot_id(),
            },
        )
        .unwrap();
        let removed = clean(base.path()).unwrap();
        assert_eq!(removed.len(), 1, "{removed:?}");
        assert!(removed[0].stopped_server, "{}", removed[0]);
        assert!(
            removed[0].to_string().contains(&format!(
                "stopped a postgres server (pid {})",
                postmaster.id()
            )),
            "{}",
            removed[0]
        );
        assert!(!dir.exists());
        assert!(!postmaster.wait().unwrap().success());
    }

    /// A directory of a gone owner is deleted, with the server in it stopped; one of a live
    /// owner, one without a marker and one not named like ours are left alone.
    #[test]
    fn only_directories_of_a_gone_dbcompare_are_cleaned() {
        let base = tempfile::tempdir().unwrap();
        let make = |name: &str| {
            let d = base.path().join(name);
            std::fs::create_dir(&d).unwrap();
            d
        };
        // A gone owner: a child that has exited and was reaped.
        let mut owner = std::process::Command::new("true").spawn().unwrap();
        let owner_pid = owner.id() as i32;
        let owner_proc = Process::of(owner_pid).unwrap_or(Process {
            pid: owner_pid,
            start: 1,
        });
        owner.wait().unwrap();
        let mut server = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let server_proc = Process::of(server.id() as i32).unwrap();
        let gone = make("dbcompare-redis-gone");
        write(
            &gone,
            &Marker {
                kind: "redis".into(),
                owner: owner_proc,
                server: Some(server_proc),
                keep: false,
                boot: boot_id(),
            },
        )
        .unwrap();
        let live = make("dbcompare-redis-live");
        mark(&live, "redis", false).unwrap();
        let unmarked = make("dbcompare-redis-unmarked");
        // A marker anyone could have written (a shared /tmp) is not trusted.
        let writable = make("dbcompare-redis-writable");
        std::fs::write(
            writable.join(MARKER),
            std::fs::read_to_string(gone.join(MARKER)).unwrap(),
        )
        .unwrap();
        std::fs::set_permissions(
            writable.join(MARKER),
            std::os::unix::fs::PermissionsExt::from_mode(0o666),
        )
        .unwrap();
        // Nor a link to one of ours.
        let link = base.path().join("dbcompare-redis-link");
        std::os::unix::fs::symlink(&gone, &link).unwrap();
        let foreign = make("other-dir");
        std::fs::write(
            foreign.join(MARKER),
            std::fs::read_to_string(gone.join(MARKER)).unwrap(),
        )
        .unwrap();

        let removed = clean(base.path()).unwrap();
        assert_eq!(removed.len(), 1, "{removed:?}");
        assert_eq!(removed[0].dir, gone);
        assert!(removed[0].stopped_server && removed[0].deleted);
        assert!(
            removed[0].to_string().contains("stopped a redis server"),
            "{}",
            removed[0]
        );
        assert!(!gone.exists());
        assert!(live.exists() && unmarked.exists() && foreign.exists() && writable.exists());
        assert!(std::fs::symlink_metadata(&link).is_ok());
        let status = server.wait().unwrap();
        assert!(!status.success(), "the server was stopped by a signal");
    }
}
