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

/// Why files cannot be written in `dir`, if they cannot: a file made there and removed at
/// once tells (the reason alone, `permission denied`, not the probe's own name).
pub fn unwritable(dir: &std::path::Path) -> Option<String> {
    if !dir.is_dir() {
        return Some("not an existing directory".into());
    }
    let e = tempfile::Builder::new()
        .prefix(".dbcompare-probe")
        .tempfile_in(dir)
        .err()?;
    // The system's own words, without the probe's name tempfile adds after them.
    let said = e.to_string();
    let why = said.split(" at path ").next().unwrap_or(&said);
    Some(format!("cannot write there: {why}"))
}

/// An error and its causes, `outer: inner: ...`, as `{:#}` shows them, but without a cause
/// the message before it already says: some drivers' errors repeat their source in their own
/// text (`Server error: ERROR 1045 ...: ERROR 1045 ...`).
pub fn chain(error: &anyhow::Error) -> String {
    let mut shown: Vec<String> = Vec::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if shown.last().is_some_and(|last| last.contains(&text)) {
            continue;
        }
        shown.push(text);
    }
    shown.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("Server error: `ERROR 1045 (28000): Access denied'")]
    struct Outer(#[source] Inner);

    #[derive(Debug, thiserror::Error)]
    #[error("ERROR 1045 (28000): Access denied")]
    struct Inner;

    #[test]
    fn an_unwritable_directory_says_why_and_not_the_probes_name() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(unwritable(dir.path()), None);
        let gone = dir.path().join("gone");
        assert_eq!(
            unwritable(&gone).as_deref(),
            Some("not an existing directory")
        );
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert_eq!(
            unwritable(&file).as_deref(),
            Some("not an existing directory")
        );
        // A directory no file can be made in, even by root: the system's reason alone.
        let why = unwritable(std::path::Path::new("/proc")).expect("/proc takes no file");
        assert!(why.starts_with("cannot write there: "), "{why}");
        assert!(why.contains("(os error"), "{why}");
        assert!(!why.contains("probe"), "{why}");
    }

    #[test]
    fn a_cause_the_message_already_says_is_shown_once() {
        let e = anyhow::Error::new(Outer(Inner)).context("connecting to mysql at h:3306");
        assert_eq!(
            chain(&e),
            "connecting to mysql at h:3306: Server error: `ERROR 1045 (28000): Access denied'"
        );
        assert_eq!(format!("{e:#}").matches("ERROR 1045").count(), 2);
        let other = anyhow::anyhow!("closed").context("SEARCH tiny");
        assert_eq!(chain(&other), "SEARCH tiny: closed");
    }
}
