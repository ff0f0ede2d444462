//! The run's heartbeat: every finished operation marks the run alive, and the stall
//! watchdog (`suite::watchdog`) looks at the mark. On the lowest floor, so that the stores'
//! bulk loads and `measure::record` can beat it without importing the suites.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by every finished operation, cleared by the watchdog when it looks.
pub static ALIVE: AtomicBool = AtomicBool::new(false);

/// Marks the run alive: an operation finished. A load, and a store only when the watchdog
/// cleared the flag since, so that tasks on several threads do not pass its cache line
/// around on every operation.
#[inline]
pub fn alive() {
    if !ALIVE.load(Ordering::Relaxed) {
        ALIVE.store(true, Ordering::Relaxed);
    }
}
