//! What happened to one store: its outcome, where it ran, its sizes and its phases.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::phase::{PhaseKind, PhaseResult};
use crate::catalog::StoreInfo;
use crate::workload::levels::Concurrency;

/// What happened to one store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StoreResult {
    /// Store name (`sqlite`, `postgres`, ...).
    pub store: String,
    /// `ok`, `failed`, `skipped` or `interrupted`.
    pub status: StoreStatus,
    /// Why the store failed or was skipped; the first wrong answer names its unique_id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Where the store ran: embedded, a throw-away local server, or a server given by URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<Deployment>,
    /// The client's threads, one event loop each, that this store's suite ran on (absent
    /// for a store that did not run, and in reports before each store recorded its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_threads: Option<u32>,
    /// Version, settings and paths, as read back from the store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub info: Option<StoreInfo>,
    /// On-disk size after the reset, before any insert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_size_bytes: Option<u64>,
    /// On-disk size after every insert phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_size_bytes: Option<u64>,
    /// Why a size is missing (`-`), when the store could not tell it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_error: Option<String>,
    /// Other sizes measured beside the final one (for example a local server's whole data
    /// directory), by what was measured.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub final_size_extra: BTreeMap<String, u64>,
    /// Measured phases in run order.
    pub phases: Vec<PhaseResult>,
    /// Tests of the suite this store has no operation for (shown as n/a, never as zero).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_applicable: Vec<String>,
    /// Why a test of `not_applicable` is, where the suite knows (a YCSB workload that needs
    /// an operation the store lacks).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_applicable_why: BTreeMap<String, String>,
}

impl StoreResult {
    pub fn new(store: &str) -> Self {
        StoreResult {
            store: store.to_string(),
            status: StoreStatus::Ok,
            error: None,
            deployment: None,
            client_threads: None,
            info: None,
            initial_size_bytes: None,
            final_size_bytes: None,
            size_error: None,
            final_size_extra: BTreeMap::new(),
            phases: Vec::new(),
            not_applicable: Vec::new(),
            not_applicable_why: BTreeMap::new(),
        }
    }

    /// The phase of this kind and size at this concurrency.
    pub fn phase_at(
        &self,
        kind: PhaseKind,
        size: &str,
        concurrency: Concurrency,
    ) -> Option<&PhaseResult> {
        self.phases
            .iter()
            .find(|p| p.kind == kind && p.size.name == size && p.concurrency == concurrency)
    }

    /// The phase of this kind and size at its lowest concurrency (1: the blog's).
    pub fn phase(&self, kind: PhaseKind, size: &str) -> Option<&PhaseResult> {
        self.phases
            .iter()
            .filter(|p| p.kind == kind && p.size.name == size)
            .min_by_key(|p| p.concurrency)
    }
}

/// The outcome of one store's run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StoreStatus {
    /// Every phase ran and every answer was right.
    Ok,
    /// A phase failed or an answer was wrong; see `error`.
    Failed,
    /// Not run (for example its server is not installed); see `error`.
    Skipped,
    /// Stopped by Ctrl-C, SIGTERM or SIGHUP.
    Interrupted,
}

impl std::fmt::Display for StoreStatus {
    /// Its name in run.json: `ok`, `failed`, `skipped`, `interrupted`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StoreStatus::Ok => "ok",
            StoreStatus::Failed => "failed",
            StoreStatus::Skipped => "skipped",
            StoreStatus::Interrupted => "interrupted",
        })
    }
}

/// Where a store ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Deployment {
    /// `embedded`, `local server` (a throw-away server dbcompare started) or `url`.
    pub kind: String,
    /// The server's URL, password masked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Local server: the binary's own version line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Local server: from creating its data directory until it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ms: Option<f64>,
    /// Local server: its temporary directory (deleted after the run unless --keep-data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<String>,
    /// A server given by URL with no settings of its own: the durability mode asked for
    /// (`durable` or `relaxed`), which the mode it reports (`info.durability`) may not be,
    /// since such a server is used as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability_asked: Option<String>,
}

impl Deployment {
    /// `embedded`, `url`, or `local server (started in 1.23 s)`.
    pub fn describe(&self) -> String {
        match self.start_ms {
            Some(ms) => format!("{} (started in {:.2} s)", self.kind, ms / 1000.0),
            None => self.kind.clone(),
        }
    }
}
