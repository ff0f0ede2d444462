//! What a phase cost the server beside the client: its CPU time, the bytes it moved to
//! and from storage, its memory, and what those come to per operation and per byte of
//! record stored (see docs/methodology.md for how each figure is taken).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Where a phase's server figures come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CostSource {
    /// The throw-away server's whole process tree, read from /proc.
    Processes,
    /// The embedded store's own process, the client's: its CPU time is in the client's
    /// figure, its bytes are the process's.
    ClientProcess,
    /// Only what the server reports about itself (a server given by URL).
    ServerCounters,
}

impl std::fmt::Display for CostSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CostSource::Processes => "the server's processes (/proc)",
            CostSource::ClientProcess => "the client's process (embedded store)",
            CostSource::ServerCounters => "the server's own counters",
        })
    }
}

/// What one phase cost the server, per operation: medians of the measured runs. A figure
/// that was not measured is absent (`n/a`), never zero.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerCost {
    pub source: CostSource,
    /// Server CPU time in user mode, per operation, in microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_user_us_per_op: Option<f64>,
    /// Server CPU time in the kernel, per operation, in microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_system_us_per_op: Option<f64>,
    /// Bytes the server caused to be sent to storage, per operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes_per_op: Option<f64>,
    /// Bytes the server caused to be fetched from storage, per operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes_per_op: Option<f64>,
    /// The server's largest resident memory read during the phase (largest of the runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
    /// The server's resident memory at the phase's end (of the last run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_memory_bytes: Option<u64>,
    /// The logical bytes of the records one run of the phase inserted (see
    /// docs/methodology.md); absent for a phase that inserts none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logical_bytes: Option<u64>,
    /// Bytes written to storage over the logical bytes inserted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_amplification: Option<f64>,
    /// Durable writes (the server's own count of its syncs) per operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syncs_per_op: Option<f64>,
    /// What the server's own counters rose by, per operation, each named with its source
    /// (`wal_bytes (pg_stat_wal)`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reported_per_op: BTreeMap<String, f64>,
    /// The server's CPU and memory over each measured run, in run order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<Vec<ServerPoint>>,
}

impl ServerCost {
    /// Server CPU time, user and system, per operation; absent unless both were read.
    pub fn cpu_us_per_op(&self) -> Option<f64> {
        Some(self.cpu_user_us_per_op? + self.cpu_system_us_per_op?)
    }
}

/// The server at one moment of a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerPoint {
    /// Since the run's start.
    pub t_ms: f64,
    /// CPU cores busy since the point before (CPU seconds per second).
    pub cpu_cores: f64,
    pub memory_bytes: u64,
}
