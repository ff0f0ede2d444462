//! The serialized result of a run (`run.json`). Every renderer reads only this model.
//!
//! The schema is versioned by [`SCHEMA_VERSION`]; a change that renames or removes a field
//! bumps it. Durations are in milliseconds (`_ms`) or microseconds (`_us`), sizes in bytes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::catalog::StoreInfo;
use crate::machine::Machine;
use crate::workload::record::Size;

/// A histogram as base64 of its HdrHistogram V2 encoding, as `run.json` holds it (what
/// other HdrHistogram tools read).
pub fn encode_histogram(h: &hdrhistogram::Histogram<u64>) -> String {
    use base64::Engine;
    use hdrhistogram::serialization::Serializer;
    let mut bytes = Vec::new();
    hdrhistogram::serialization::V2Serializer::new()
        .serialize(h, &mut bytes)
        .expect("serializing into memory does not fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The inverse of [`encode_histogram`].
pub fn decode_histogram(text: &str) -> anyhow::Result<hdrhistogram::Histogram<u64>> {
    use anyhow::Context;
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .context("histogram is not base64")?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| anyhow::anyhow!("histogram does not decode: {e:?}"))
}

/// Version of the `run.json` layout.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole run: what was asked, where it ran, and what each store did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    /// Version of this layout ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// `dbcompare` and its version.
    pub tool: Tool,
    /// `complete`, `partial` (a write of a run still going, or one that ended early) or
    /// `interrupted` (stopped by Ctrl-C).
    pub status: RunStatus,
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
    /// One entry per requested store, in run order.
    pub stores: Vec<StoreResult>,
    /// A merged run (`dbcompare merge`): every load client's run, in share order; the
    /// figures above are theirs together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shares: Vec<MergedShare>,
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
}

impl Tool {
    pub fn current() -> Self {
        Tool {
            name: env!("CARGO_PKG_NAME").to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
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
    /// Stopped by Ctrl-C; holds what was measured until then.
    Interrupted,
}

/// The resolved plan, as far as it shapes the figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanSummary {
    /// The suite that ran (`classic`, `driver`).
    pub suite: String,
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
    pub runs: u32,
    /// Concurrency levels of the search phases (tasks, one connection each).
    #[serde(default = "one_level")]
    pub concurrency: Vec<u32>,
    /// Open-loop search rate in operations per second, if one was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Seed of the record and search generator.
    pub seed: u64,
    /// Threads of the client's async runtime (absent in reports before it was recorded).
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

fn yes() -> bool {
    true
}

fn one() -> u32 {
    1
}

fn one_level() -> Vec<u32> {
    vec![1]
}

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
}

impl StoreResult {
    pub fn new(store: &str) -> Self {
        StoreResult {
            store: store.to_string(),
            status: StoreStatus::Ok,
            error: None,
            deployment: None,
            info: None,
            initial_size_bytes: None,
            final_size_bytes: None,
            size_error: None,
            final_size_extra: BTreeMap::new(),
            phases: Vec::new(),
            not_applicable: Vec::new(),
        }
    }

    /// The phase of this kind and size at this concurrency.
    pub fn phase_at(&self, kind: PhaseKind, size: &str, concurrency: u32) -> Option<&PhaseResult> {
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
    /// Stopped by Ctrl-C.
    Interrupted,
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

/// Which operation a phase measured.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PhaseKind {
    Insert,
    Search,
    /// A test of the driver suite (`size` names the test and its iterations).
    Driver,
    /// A test of the pool suite (`size` names the test and its operations).
    Pool,
    /// YCSB: the load, or one operation of a workload (`size` names them: `load INSERT`,
    /// `a READ`) or the whole workload (`a`).
    Ycsb,
}

impl PhaseKind {
    /// The blog's upper-case label.
    pub fn label(self) -> &'static str {
        match self {
            PhaseKind::Insert => "INSERT",
            PhaseKind::Search => "SEARCH",
            PhaseKind::Driver => "DRIVER",
            PhaseKind::Pool => "POOL",
            PhaseKind::Ycsb => "YCSB",
        }
    }
}

/// The figures of one measured phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PhaseResult {
    /// `insert` or `search`.
    pub kind: PhaseKind,
    /// The workload size the phase belongs to.
    pub size: Size,
    /// Tasks issuing operations at once, each on its own connection.
    #[serde(default = "one")]
    pub concurrency: u32,
    /// What the store ran for this phase, where stores run different things (driver suite).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// Operations attempted in one run (inserts, or searches_per_insert x records).
    pub ops: u64,
    /// Operations that failed or gave a wrong answer.
    pub errors: u64,
    /// Errors counted by kind (`wrong record`, `missing record`, `store error: ...`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub error_kinds: BTreeMap<String, u64>,
    /// Whether the phase stopped before its last operation (error limit or Ctrl-C).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
    /// Wall time of the whole phase (median of the runs).
    pub wall_ms: f64,
    /// Operations per second over the wall time (median of the runs).
    pub ops_per_s: f64,
    /// Per-operation latency, over every measured run (their histograms merged).
    pub latency_us: Latency,
    /// Client process CPU time (user + system) over the phase, per operation (median). For
    /// an embedded store this includes the store's own work.
    pub cpu_us_per_op: f64,
    /// Client allocations per operation, all threads (median); absent when not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocs_per_op: Option<f64>,
    /// Client bytes allocated per operation, all threads (median); absent when not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_op: Option<f64>,
    /// Every measured run's own figures, when there was more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<RunFigures>,
    /// The merged latency histogram (nanoseconds), base64 of its HdrHistogram V2 encoding:
    /// merge two runs or two clients exactly with any HdrHistogram library.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
    /// Open-loop (`--rate`) phases: response times from each operation's intended start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoop>,
    /// Why the client, not the store, was the limit of this phase (its own CPU near all of
    /// its event loops, or an open-loop schedule it could not keep); absent when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_bound: Option<String>,
    /// Operations made again on a new connection after an error (`--retries`), summed over
    /// the runs; their time is in the latencies (from the first attempt's start to the last
    /// one's end). Absent when there were none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u64,
    /// What the store's own counters rose by over the phase, summed over the measured runs
    /// (a Redis Cluster's `MOVED redirects` and `ASK redirects`, from every master's
    /// `INFO errorstats`); absent for a store that keeps none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server_counters: BTreeMap<String, u64>,
    /// A merged run (`dbcompare merge`): each load client's wall time of the phase
    /// (median of its runs), in share order; the phase's own is the slowest one's, since
    /// they began together. Absent in a client's own run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_wall_ms: Vec<f64>,
    /// A merged run: every client's operations per second over the common window, from
    /// the common start until the first client ended (whole intervals of the time series;
    /// median of the runs), where `ops_per_s` is over the slowest client's wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_ops_per_s: Option<f64>,
    /// Every measured run's time series, in run order (absent in reports before they were
    /// recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<Series>,
    /// Where the client's allocations came from over the measured runs (`--alloc-sites`);
    /// absent when they were not captured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alloc_sites: Option<AllocSites>,
}

/// A phase's client allocations by call site (`--alloc-sites`): every counted allocation's
/// call stack, named by its first frame outside the allocator and the standard library
/// (the call site) and by the crate of that frame (whose code allocated). Per operation,
/// over every measured run; these runs are slowed by the stack captures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AllocSites {
    /// Operations the figures are over (every measured run's).
    pub ops: u64,
    /// Every captured allocation, per operation.
    pub allocs_per_op: f64,
    pub bytes_per_op: f64,
    /// Per crate whose code allocated, the most allocating first.
    pub owners: Vec<AllocOwner>,
    /// The call sites that allocated most (at most 12), and up to 4 more that allocated the
    /// most bytes among the others; the most allocations first.
    pub sites: Vec<AllocSite>,
}

/// The allocations of one crate's code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AllocOwner {
    /// A crate name (`dbcompare`, `mysql_async`, `tokio`; `core` for the standard library's
    /// own, such as a thread's start).
    pub owner: String,
    pub allocs_per_op: f64,
    pub bytes_per_op: f64,
}

/// One call site's allocations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AllocSite {
    /// The crate of `function`.
    pub owner: String,
    /// The function that allocated (directly or through the standard library), demangled.
    pub function: String,
    /// The functions that called it, nearest first (frames of the standard library left
    /// out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub callers: Vec<String>,
    pub allocs_per_op: f64,
    pub bytes_per_op: f64,
}

/// A phase run over time: a point per fixed interval from the phase's start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Series {
    /// The width of every interval (the last one is cut short where the phase ended).
    pub interval_ms: f64,
    /// From the phase's start to its last operation's end.
    pub span_ms: f64,
    pub points: Vec<SeriesPoint>,
}

impl Series {
    /// Each point's operations per second over its own width (the last one's is cut
    /// short), with its start in ms.
    pub fn rates(&self) -> Vec<(f64, f64)> {
        let n = self.points.len();
        self.points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let from = i as f64 * self.interval_ms;
                let width = if i + 1 == n {
                    (self.span_ms - from).clamp(0.0, self.interval_ms)
                } else {
                    self.interval_ms
                };
                let rate = if width > 0.0 {
                    p.ops as f64 / (width / 1000.0)
                } else {
                    0.0
                };
                (from, rate)
            })
            .collect()
    }
}

/// One interval of a [`Series`]; latencies in microseconds (two significant digits).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeriesPoint {
    /// Operations that ended in the interval.
    pub ops: u64,
    /// Of which failed or answered wrong.
    pub errors: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// Share of the client's event loops its CPU may use before a phase counts as client-bound.
pub const CLIENT_BOUND_SHARE: f64 = 0.85;

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl PhaseResult {
    /// Why this phase's figures are the client's limit, if they are: the client process
    /// used more than [`CLIENT_BOUND_SHARE`] of its `loops` event loops' time (CPU per
    /// operation times operations per second), or an open loop fell behind its schedule.
    /// An embedded store's work is the client's own CPU, so its phases are never flagged.
    pub fn client_bound_reason(&self, loops: u32, embedded: bool) -> Option<String> {
        if embedded {
            return None;
        }
        if let Some(ol) = &self.open_loop
            && self.ops_per_s < ol.rate * 0.95
        {
            return Some(format!(
                "the open loop fell behind: {:.0} of {:.0} ops/s",
                self.ops_per_s, ol.rate
            ));
        }
        let loops = f64::from(loops.max(1));
        let busy = self.cpu_us_per_op * self.ops_per_s / 1e6;
        (busy > CLIENT_BOUND_SHARE * loops).then(|| {
            format!(
                "the client used {:.0}% of its {loops} event loop(s): {:.1} us of CPU per \
                 operation at {:.0} ops/s",
                busy / loops * 100.0,
                self.cpu_us_per_op,
                self.ops_per_s
            )
        })
    }
}

/// One measured run of a phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunFigures {
    pub wall_ms: f64,
    pub ops_per_s: f64,
    pub cpu_us_per_op: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocs_per_op: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_op: Option<f64>,
    pub p50_us: f64,
    pub p99_us: f64,
}

/// An open-loop phase: operations issued on a fixed schedule, each timed from the moment
/// it was meant to start, so a stall is charged to every operation queued behind it
/// (coordinated omission corrected). `latency_us` of the phase is then the service time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OpenLoop {
    /// The schedule, in operations per second.
    pub rate: f64,
    /// Response time: from the intended start to the answer.
    pub response_us: Latency,
    /// How far behind its schedule the client fell at worst.
    pub max_behind_ms: f64,
    /// The response-time histogram (nanoseconds, base64 HdrHistogram V2).
    pub response_histogram: String,
}

/// Latency percentiles of one phase, in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Latency {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    /// (absent in reports before it was recorded)
    #[serde(default)]
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    /// (absent in reports before it was recorded)
    #[serde(default)]
    pub p9999: f64,
    pub max: f64,
}
