//! Ctrl-C (and SIGTERM, SIGHUP): the first one asks the run to stop after the current
//! operation (its partial results are written, marked interrupted, and every local server
//! is stopped); a second one runs the cleanup it was installed with (stopping the local
//! servers) and exits at once.

use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

/// Exit code of a run stopped by Ctrl-C (128 + SIGINT).
pub const EXIT_CODE: u8 = 130;

static REQUESTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Installs the handler (once per process); a second Ctrl-C calls `cleanup`, then exits.
pub fn install(cleanup: fn()) {
    INSTALL.call_once(|| {
        let installed = ctrlc::set_handler(move || {
            if REQUESTED.swap(true, Ordering::SeqCst) {
                eprintln!(
                    "\ninterrupted again: stopping local servers and exiting without writing \
                     results (a server that was still starting may leave its directory: \
                     `dbcompare clean` removes it)"
                );
                cleanup();
                std::process::exit(i32::from(EXIT_CODE));
            }
            eprintln!(
                "\ninterrupted: stopping after the current operation (Ctrl-C again to quit now)"
            );
        });
        if let Err(e) = installed {
            eprintln!(
                "warning: cannot handle Ctrl-C ({e}); an interrupted run will not write results"
            );
        }
    });
}

/// Whether a stop was asked for. Cheap enough to call once per operation.
#[inline]
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}
