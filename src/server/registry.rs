//! The process-wide registry of running servers, so that an exit that skips destructors (a
//! second Ctrl-C) still stops them and deletes their directories.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

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
    for s in servers {
        // SAFETY: kill(2) with a pid we started (or the group it leads, which lives on
        // while any of its nodes does); a stale pid only gets ESRCH.
        unsafe { libc::kill(if s.group { -s.pid } else { s.pid }, libc::SIGKILL) };
        if let Some(dir) = s.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
