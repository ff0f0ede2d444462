//! What an Aerospike node counts of its own storage work, read for the cost of a phase (see
//! [`crate::counters`]): the write blocks the namespace's storage devices or files
//! flushed, the partial flushes among them, and what defragmentation read and wrote, from
//! the node's `namespace/<namespace>` statistics, summed over the devices.
//!
//! Aerospike counts blocks, not bytes, so no bytes written or read are reported; its CPU
//! figures (`process_cpu_pct`, `user_cpu_pct`, `system_cpu_pct` of `statistics`) are
//! percentages of the moment, not time spent, so no CPU time either; and it counts no
//! syncs. Those figures are absent (n/a).

use std::collections::BTreeMap;

use crate::counters::named;

/// The per-device statistics read, each with the figure it counts:
/// `storage-engine.device[N].<statistic>` (or `file[N]` for a namespace stored in files).
const DEVICE_STATISTICS: [(&str, &str); 4] = [
    ("writes", "storage blocks written"),
    ("partial_writes", "storage partial flushes"),
    ("defrag_reads", "defrag blocks read"),
    ("defrag_writes", "defrag blocks written"),
];

/// The storage the namespace's statistics name per device or per file.
const STORAGE_KINDS: [&str; 2] = ["device", "file"];

/// The storage counters of one node's `namespace/<namespace>` statistics (as
/// [`super::parse_info`] reads them), each summed over the namespace's devices (or files)
/// and named with its source: `storage blocks written (namespace storage-engine.device[*].writes)`.
/// A statistic the node does not report is left out, never zero.
pub fn storage_counters(stats: &BTreeMap<String, String>) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for (key, value) in stats {
        let Some((kind, statistic)) = device_statistic(key) else {
            continue;
        };
        let Some(figure) = DEVICE_STATISTICS
            .iter()
            .find_map(|(name, figure)| (*name == statistic).then_some(*figure))
        else {
            continue;
        };
        let Ok(n) = value.parse::<u64>() else {
            continue;
        };
        let source = format!("namespace storage-engine.{kind}[*].{statistic}");
        *counts.entry(named(figure, &source)).or_insert(0) += n;
    }
    counts
}

/// `storage-engine.device[3].writes` as `("device", "writes")`; `None` for a key that is
/// not a device's (or file's) statistic.
fn device_statistic(key: &str) -> Option<(&'static str, &str)> {
    let rest = key.strip_prefix("storage-engine.")?;
    STORAGE_KINDS.into_iter().find_map(|kind| {
        let (index, statistic) = rest
            .strip_prefix(kind)?
            .strip_prefix('[')?
            .split_once("].")?;
        index
            .chars()
            .all(|c| c.is_ascii_digit())
            .then_some((kind, statistic))
    })
}

/// Adds one node's counters to the cluster's.
pub fn add(total: &mut BTreeMap<String, u64>, node: BTreeMap<String, u64>) {
    for (name, n) in node {
        *total.entry(name).or_insert(0) += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::aerospike::parse_info;

    /// The answer to `namespace/test` in the `key=value;` form of Aerospike's info protocol,
    /// with the per-device statistics the metrics reference lists for a namespace stored
    /// on devices (`storage-engine.device[ix].writes`, `partial_writes`, `defrag_reads`,
    /// `defrag_writes`, beside `used_bytes`, `free_wblocks`, `write_q`, `defrag_q`, `age`
    /// that count no work), two devices.
    const TWO_DEVICES: &str = "objects=1000;tombstones=0;client_write_success=1000;\
        data_used_bytes=262144;storage-engine=device;storage-engine.commit-to-device=true;\
        storage-engine.device[0].used_bytes=131072;storage-engine.device[0].free_wblocks=510;\
        storage-engine.device[0].write_q=0;storage-engine.device[0].writes=12;\
        storage-engine.device[0].partial_writes=7;storage-engine.device[0].defrag_q=0;\
        storage-engine.device[0].defrag_reads=1;storage-engine.device[0].defrag_writes=2;\
        storage-engine.device[0].age=-1;\
        storage-engine.device[1].used_bytes=131072;storage-engine.device[1].writes=30;\
        storage-engine.device[1].partial_writes=3;storage-engine.device[1].defrag_reads=0;\
        storage-engine.device[1].defrag_writes=0;process_cpu_pct=12";

    #[test]
    fn device_statistics_are_summed_over_the_devices_and_named_with_their_source() {
        let counts = storage_counters(&parse_info(TWO_DEVICES));
        assert_eq!(
            counts,
            BTreeMap::from([
                (
                    "storage blocks written (namespace storage-engine.device[*].writes)"
                        .to_string(),
                    42
                ),
                (
                    "storage partial flushes (namespace storage-engine.device[*].partial_writes)"
                        .to_string(),
                    10
                ),
                (
                    "defrag blocks read (namespace storage-engine.device[*].defrag_reads)"
                        .to_string(),
                    1
                ),
                (
                    "defrag blocks written (namespace storage-engine.device[*].defrag_writes)"
                        .to_string(),
                    2
                ),
            ])
        );
        // Neither bytes, CPU time nor syncs: Aerospike does not count them.
        use crate::counters::{BYTES_READ, BYTES_WRITTEN, CPU_SYSTEM_US, CPU_USER_US, SYNCS};
        for figure in [BYTES_WRITTEN, BYTES_READ, CPU_USER_US, CPU_SYSTEM_US, SYNCS] {
            assert!(
                counts
                    .keys()
                    .all(|name| crate::counters::figure_of(name) != figure),
                "{figure}: {counts:?}"
            );
        }
    }

    #[test]
    fn files_count_as_devices_do_and_memory_only_counts_nothing() {
        // A namespace stored in files (`storage-engine file`) reports `file[ix]`.
        let files = parse_info(
            "storage-engine=file;storage-engine.file[0].writes=5;\
             storage-engine.file[0].defrag_writes=1;storage-engine.file[0].used_bytes=9",
        );
        let counts = storage_counters(&files);
        assert_eq!(
            counts["storage blocks written (namespace storage-engine.file[*].writes)"],
            5
        );
        assert_eq!(counts.len(), 2, "{counts:?}");
        // A namespace in memory alone has no device: nothing is counted (n/a, not zero).
        let memory = parse_info("storage-engine=memory;data_used_bytes=100;objects=1");
        assert!(storage_counters(&memory).is_empty());
        // Keys that only look like a device's are not read.
        let odd = parse_info("storage-engine.device[x].writes=3;storage-engine.devices=2");
        assert!(storage_counters(&odd).is_empty());
    }

    #[test]
    fn a_clusters_counters_are_the_sum_of_its_nodes() {
        let mut total = BTreeMap::new();
        add(&mut total, storage_counters(&parse_info(TWO_DEVICES)));
        add(&mut total, storage_counters(&parse_info(TWO_DEVICES)));
        assert_eq!(
            total["storage blocks written (namespace storage-engine.device[*].writes)"],
            84
        );
    }
}
