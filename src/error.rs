//! Errors that mean "bad usage or configuration": found before any benchmark starts, exit 2.

/// A problem with the command line, the environment or the output directory. The message
/// names the flag (or the command) that fixes it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl UsageError {
    pub fn new(message: impl Into<String>) -> Self {
        UsageError(message.into())
    }
}

/// The process exit code for an error returned by [`crate::run()`]: 2 for usage errors, else 1.
pub fn exit_code(error: &anyhow::Error) -> u8 {
    if error.downcast_ref::<UsageError>().is_some() || error.downcast_ref::<clap::Error>().is_some()
    {
        2
    } else {
        1
    }
}
