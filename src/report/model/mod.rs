//! The serialized result of a run (`run.json`). Every renderer reads only this model.
//!
//! The schema is versioned by [`SCHEMA_VERSION`]; a change that renames or removes a field
//! bumps it. Durations are in milliseconds (`_ms`) or microseconds (`_us`), sizes in bytes.
//!
//! Here the run as a whole: the plan, the machine, its floor, the load clients; one store's
//! result in `store.rs`, one phase's figures in `phase.rs`, the latency histograms as
//! `run.json` holds them in `histogram.rs`.

use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};

use crate::catalog::Suite;
use crate::machine::Machine;
use crate::workload::levels::Concurrency;
use crate::workload::record::Size;
use defaults::{is_zero_u32, one, one_level, yes};

mod cost;
mod defaults;
mod histogram;
mod phase;
mod store;

pub use crate::catalog::StoreInfo;
pub use cost::{CostSource, ServerCost, ServerPoint};
pub use histogram::{MAX_LATENCY_NS, decode_histogram, empty_histogram, encode_histogram, latency};
pub use phase::{
    AllocOwner, AllocSite, AllocSites, CLIENT_BOUND_SHARE, Latency, OpenLoop, PhaseKind,
    PhaseResult, RunFigures, Series, SeriesPoint,
};
pub use store::{Deployment, StoreResult, StoreStatus};

/// Version of the `run.json` layout. Version 2 added the server's cost, version 3 the
/// variants' `interleaved` runs, version 4 the stores the build has on request, version 5
/// each store's client threads, version 6 an open loop's response times per run and what
/// stopped an interrupted run, version 7 the durability mode asked of a server given by URL.
pub const SCHEMA_VERSION: u32 = 7;

/// The oldest layout still read: the versions since only added fields.
pub const OLDEST_SCHEMA_READ: u32 = 1;

/// A whole run: what was asked, where it ran, and what each store did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    /// Version of this layout ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// `dbcompare` and its version.
    pub tool: Tool,
    /// `complete`, `partial` (a write of a run still going, or one that ended early) or
    /// `interrupted` (stopped by Ctrl-C, SIGTERM or SIGHUP).
    pub status: RunStatus,
    /// An interrupted run: the signal that stopped it (`Ctrl-C`, `SIGTERM`, `SIGHUP`; a
    /// merged run's clients' each once, `Ctrl-C and SIGTERM`); absent otherwise, and in
    /// reports before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
    /// Wall-clock start of the run, RFC 3339.
    pub started_at: String,
    /// Wall-clock end of the run (or of the last write of a partial run), RFC 3339.
    pub finished_at: String,
    /// What was asked for.
    pub plan: PlanSummary,
    /// The machine the run was made on.
    pub machine: Machine,
    /// What the machine allows, measured before the stores (absent with `--no-floor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<Floor>,
    /// dbcompare's own peak resident memory over the run, in bytes (Linux's VmHWM; the
    /// servers' memory is not in it). Absent where it cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_peak_rss_bytes: Option<u64>,
    /// One entry per requested store, in run order (a variant of a store is one:
    /// `postgres@sync`).
    pub stores: Vec<StoreResult>,
    /// The variants of one store run interleaved, run by run: each of their runs in the
    /// order it was made. Absent when no store had variants.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interleaved: Vec<RunTurn>,
    /// A merged run (`dbcompare merge`): every load client's run, in share order; the
    /// figures above are theirs together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shares: Vec<MergedShare>,
}

/// One run of a variant, in the order the variants of its store took their turns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunTurn {
    /// The variant (`postgres@sync`).
    pub store: String,
    /// The run (`warm-up run 1/1 (discarded)`, `run 2/3`; a driver or pool test's name
    /// before it).
    pub run: String,
}

/// The machine's floor: the loopback round trip every server store's operation pays at
/// least once, and the durable write every durable commit pays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Floor {
    /// A one-byte echo over a 127.0.0.1 TCP connection, one connection.
    pub loopback_c1: FloorFigure,
    /// The same over 8 connections at once, each with its own client and echo thread.
    pub loopback_c8: FloorFigure,
    /// A 4 kB write and `fdatasync` in the directory of the throw-away servers' data.
    pub fsync: FloorFigure,
    /// Where the durable writes were timed.
    pub fsync_dir: String,
}

/// One floor figure, in microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FloorFigure {
    pub concurrency: u32,
    pub samples: u64,
    pub p50_us: f64,
    pub p99_us: f64,
}

/// The program that made a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Tool {
    /// Always `dbcompare`.
    pub name: String,
    /// The crate version.
    pub version: String,
    /// The stores built in on request (cargo features: `mongodb`, `aerospike`,
    /// `couchbase`); empty for the default build. Missing before version 4.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
}

impl Tool {
    /// This program, built with `features` (the stores built in on request).
    pub fn current(features: Vec<String>) -> Self {
        Tool {
            name: env!("CARGO_PKG_NAME").to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            features,
        }
    }

    /// The version, with the stores built in on request: `0.9.0` or `0.9.0 (with mongodb)`.
    pub fn build(&self) -> String {
        if self.features.is_empty() {
            self.version.clone()
        } else {
            format!("{} (with {})", self.version, self.features.join(", "))
        }
    }
}

/// Whether a report holds everything that was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every requested store ran to its end (successfully or not).
    Complete,
    /// Written while the run was still going, or the run stopped early on an error.
    Partial,
    /// Stopped by Ctrl-C, SIGTERM or SIGHUP; holds what was measured until then.
    Interrupted,
}

impl Report {
    /// What stopped an interrupted run, as its warning says it (`Ctrl-C`, `SIGTERM`).
    pub fn stopped_by(&self) -> &str {
        self.stopped_by
            .as_deref()
            .unwrap_or("Ctrl-C, SIGTERM or SIGHUP")
    }
}

/// The resolved plan, as far as it shapes the figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanSummary {
    /// The suite that ran (`classic`, `driver`, `pool`, `ycsb`).
    pub suite: Suite,
    /// Driver suite: the factor applied to the seed's iteration counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// Stores in run order.
    pub stores: Vec<String>,
    /// Workload sizes in run order.
    pub sizes: Vec<Size>,
    /// Searches per inserted record (the blog's 40).
    pub searches_per_insert: u64,
    /// `durable` (every commit on disk before it is acknowledged) or `relaxed`.
    pub durability: String,
    /// Runs of the whole suite made first and discarded.
    #[serde(default)]
    pub warmup_runs: u32,
    /// Measured runs of the whole suite; each figure is their median.
    #[serde(default = "one")]
    pub runs: NonZeroU32,
    /// Concurrency levels the suite ran at (tasks, one connection each): the classic
    /// suite's search phases, the YCSB workloads, the pool suite's concurrent tests.
    #[serde(default = "one_level")]
    pub concurrency: Vec<Concurrency>,
    /// Open-loop search rate in operations per second, if one was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Seed of the record and search generator.
    pub seed: u64,
    /// `--client-threads`, the client's threads (one event loop each) for every store, when
    /// given; absent when each store ran on its own default (in its result's
    /// `client_threads`). Before schema version 5 every run recorded its one number here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_threads: Option<u32>,
    /// YCSB: each workload run, with its properties in brief.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<String>,
    /// Classic suite at the blog's sizes: show the 2016 blog's figures beside the run's
    /// (`--no-blog-reference` turns it off).
    #[serde(default = "yes")]
    pub blog_reference: bool,
    /// `--retries`: how often a failed operation could be made again on a new connection.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub retries: u32,
    /// `--alloc-sites`: every allocation's stack was taken (each phase's `alloc_sites`),
    /// which slows the client: the run's times are not for comparing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub alloc_sites: bool,
    /// One of several load clients (`--client K/N`): which one, of how many, from when.
    /// Absent for a whole run, and in a merged one (see `Report::shares`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientShare>,
}

/// One load client's share of a run (`--client K/N --start-at TIME`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClientShare {
    /// K, from 1.
    pub index: u32,
    /// N.
    pub of: u32,
    /// When the clients began (`--start-at`), RFC 3339.
    pub start_at: String,
}

/// A load client's run, as `dbcompare merge` found it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MergedShare {
    /// K, from 1.
    pub index: u32,
    /// The run.json it came from, as given to `merge`.
    pub file: String,
    /// Its own wall-clock start and end, RFC 3339.
    pub started_at: String,
    pub finished_at: String,
    /// The machine it ran on.
    pub machine: Machine,
    /// That machine's floor, when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<Floor>,
}
