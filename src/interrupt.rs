//! Ctrl-C, SIGTERM and SIGHUP: the first one asks the run to stop after the current
//! operation (its partial results are written, marked interrupted and by what, and every
//! local server is stopped); a second one runs the cleanup it was installed with (stopping
//! the local servers) and exits at once. The exit code is 128 and the signal's number:
//! 130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP.
//!
//! Each delivery writes its signal's number, one byte, to a pipe a thread of its own reads:
//! two quick signals are two bytes, never one, and the thread knows which signal came.

use std::io::{Read, Write};
use std::os::fd::IntoRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Once;
use std::sync::atomic::{AtomicI32, Ordering};

/// The signals handled.
const SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The first signal received (0: none): whether a stop was asked for, and by what.
static FIRST: AtomicI32 = AtomicI32::new(0);
static INSTALL: Once = Once::new();

/// Installs the handler (once per process); a second signal calls `cleanup`, then exits.
pub fn install(cleanup: fn()) {
    INSTALL.call_once(|| {
        if let Err(e) = listen(cleanup) {
            crate::output::errln!(
                "warning: cannot handle Ctrl-C ({e}); an interrupted run will not write results"
            );
        }
    });
}

fn listen(cleanup: fn()) -> std::io::Result<()> {
    let (mut read, write) = UnixStream::pair()?;
    // A full pipe (hundreds of signals unread) drops a byte rather than block the handler.
    write.set_nonblocking(true)?;
    // The reader first: a handler installed is never one whose bytes nobody reads.
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let mut byte = [0u8; 1];
            while read.read_exact(&mut byte).is_ok() {
                received(i32::from(byte[0]), cleanup);
            }
        })?;
    // The write end lives as long as the process: the handlers write to it.
    let write = write.into_raw_fd();
    for signal in SIGNALS {
        let byte = signal as u8;
        // SAFETY: the action only calls write(2), which is async-signal-safe, on a file
        // descriptor that is never closed.
        let action = move || unsafe {
            libc::write(write, (&raw const byte).cast(), 1);
        };
        // SAFETY: as above; none of the signals is one signal-hook forbids.
        unsafe { signal_hook_registry::register(signal, action) }?;
    }
    Ok(())
}

/// One signal, on the thread that reads them all. What it says goes to stderr as far as
/// stderr can take it: a terminal closed (the SIGHUP's cause) does not stop a second
/// signal's exit.
fn received(signal: i32, cleanup: fn()) {
    let mut stderr = std::io::stderr();
    if FIRST.load(Ordering::SeqCst) != 0 {
        let _ = writeln!(
            stderr,
            "\n{} again: stopping local servers and exiting without writing results (a server \
             that was still starting may leave its directory: `dbcompare clean` removes it)",
            name(signal)
        );
        cleanup();
        std::process::exit(128 + signal);
    }
    FIRST.store(signal, Ordering::SeqCst);
    let _ = writeln!(
        stderr,
        "\ninterrupted by {}: stopping after the current operation ({} again to quit now)",
        name(signal),
        name(signal)
    );
}

/// How a signal is named to the user.
fn name(signal: i32) -> &'static str {
    match signal {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "Ctrl-C",
    }
}

/// Whether a stop was asked for. Cheap enough to call once per operation.
#[inline]
pub fn requested() -> bool {
    FIRST.load(Ordering::Relaxed) != 0
}

/// What asked the run to stop (`Ctrl-C`, `SIGTERM`, `SIGHUP`), if anything did.
pub fn stopped_by() -> Option<&'static str> {
    match FIRST.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(name(signal)),
    }
}

/// The exit code of a run that stopped when asked: 128 and the signal's number (130, as
/// after Ctrl-C, when none is known).
pub fn exit_code() -> u8 {
    match FIRST.load(Ordering::SeqCst) {
        0 => 128 + libc::SIGINT as u8,
        signal => 128 + signal as u8,
    }
}
