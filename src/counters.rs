//! The names of the counters a server keeps about itself that dbcompare reads before and
//! after each phase (`Store::counters`) and turns into cost figures: a counter is named by
//! the figure it counts and, in brackets, where the server keeps it
//! (`syncs (pg_stat_wal.wal_sync)`), so a report says where each figure comes from.

/// Durable writes: WAL or log syncs, fsyncs.
pub const SYNCS: &str = "syncs";
/// The server's CPU time in user mode, in microseconds.
pub const CPU_USER_US: &str = "cpu user us";
/// The server's CPU time in the kernel, in microseconds.
pub const CPU_SYSTEM_US: &str = "cpu system us";
/// Bytes the server wrote to storage (its data files, or its log where it counts only
/// that: the source says which).
pub const BYTES_WRITTEN: &str = "bytes written";
/// Bytes the server read from storage.
pub const BYTES_READ: &str = "bytes read";

/// `figure (source)`.
pub fn named(figure: &str, source: &str) -> String {
    format!("{figure} ({source})")
}

/// The figure a counter's name counts (what comes before its source).
pub fn figure_of(name: &str) -> &str {
    name.split_once(" (").map_or(name, |(figure, _)| figure)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_says_the_figure_and_its_source() {
        let name = named(SYNCS, "pg_stat_wal.wal_sync");
        assert_eq!(name, "syncs (pg_stat_wal.wal_sync)");
        assert_eq!(figure_of(&name), SYNCS);
        assert_eq!(figure_of("MOVED redirects"), "MOVED redirects");
    }
}
