//! Standard output and error that a reader who left does not break: `dbcompare run | head`
//! runs to its end and writes its files, and `report --format html | head` ends quietly.
//! What no one reads any more is dropped; a write to standard output that fails for another
//! reason (a full disk behind a redirection) is an error of the command that wrote it.

use std::fmt;
use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether standard output's reader has gone (a write failed with a broken pipe).
static OUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes to standard output; a reader that has gone is no error, and nothing more is
/// written to it.
pub fn write_out(args: fmt::Arguments) -> std::io::Result<()> {
    if OUT_CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut stdout = std::io::stdout().lock();
    match stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => {
            OUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        written => written,
    }
}

/// Writes to standard error, dropping what cannot be written: a warning or a progress line
/// never stops the work it is about.
pub fn write_err(args: fmt::Arguments) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_fmt(args).and_then(|()| stderr.flush());
}

/// `print!` through [`write_out`]: an `io::Result`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_out(format_args!($($arg)*))
    };
}

/// `println!` through [`write_out`]: an `io::Result`.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::write_out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` through [`write_err`].
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::write_err(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {errln, out, outln};
