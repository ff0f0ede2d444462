//! The process-wide registry of running servers, so that an exit that skips destructors (a
//! second Ctrl-C) still stops them and deletes their directories.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::process::{group_alive, process_alive};

/// What the registry needs to kill a server and delete its directory without its owner.
struct Registered {
    id: u64,
    pid: i32,
    /// Whether `pid` leads a process group of the server's (a cluster's nodes).
    group: bool,
    dir: Option<PathBuf>,
}

/// How long [`kill_all`] waits for its killed servers to be gone.
const KILLED_EXIT: Duration = Duration::from_secs(5);

static REGISTRY: Mutex<Vec<Registered>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Puts a server (or, with `group`, the process group `pid` leads: a cluster's nodes, also
/// while they are still being joined) where [`kill_all`] finds it; `dir` is deleted with
/// it. Gives the entry's id, for [`untrack`].
pub(super) fn track(pid: i32, group: bool, dir: Option<PathBuf>) -> u64 {
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
pub(super) fn untrack(id: u64) {
    REGISTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|r| r.id != id);
}

/// Kills every server still running and deletes its directory. For exits that skip
/// destructors; a normal run stops its servers by dropping them.
pub fn kill_all() {
    let servers = std::mem::take(&mut *REGISTRY.lock().unwrap_or_else(|e| e.into_inner()));
    // The whole group where the server leads one: a cluster's nodes, and any child a
    // server forked (a background save or rewrite), which SIGKILL to the parent spares.
    // SAFETY: getpgid(2) on a pid we started; a stale pid only gets ESRCH.
    let leads = |s: &Registered| s.group || unsafe { libc::getpgid(s.pid) } == s.pid;
    for s in &servers {
        // SAFETY: kill(2) with a pid we started (or the group it leads, which lives on
        // while any of its processes does); a stale pid only gets ESRCH.
        unsafe { libc::kill(if leads(s) { -s.pid } else { s.pid }, libc::SIGKILL) };
    }
    // A killed server takes a moment to unmap its memory: gone before we exit, within
    // a bound.
    let deadline = Instant::now() + KILLED_EXIT;
    for s in servers {
        while Instant::now() < deadline && (process_alive(s.pid) || group_alive(s.pid)) {
            std::thread::sleep(Duration::from_millis(5));
        }
        if let Some(dir) = s.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
