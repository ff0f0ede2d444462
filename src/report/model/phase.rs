//! The figures of one measured phase: its latencies, each measured run, its open-loop
//! schedule, its time series and its allocation sites.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::cost::ServerCost;
use super::defaults::{is_zero, one_task};
use crate::workload::levels::Concurrency;
use crate::workload::record::Size;

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
    #[serde(default = "one_task")]
    pub concurrency: Concurrency,
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
    /// Whether the phase stopped before its last operation (error limit, Ctrl-C, SIGTERM or
    /// SIGHUP).
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
    /// What the phase cost the server (absent in reports before it was measured, and for a
    /// store whose server cannot be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerCost>,
}

/// Share of the client's event loops its CPU may use before a phase counts as client-bound.
pub const CLIENT_BOUND_SHARE: f64 = 0.85;

impl PhaseResult {
    /// The latencies a reader compares stores on: an open-loop phase's response times
    /// (each operation timed from when it was due, so a stall counts for every operation
    /// queued behind it), else the operations' own latencies.
    pub fn response_us(&self) -> &Latency {
        self.open_loop
            .as_ref()
            .map_or(&self.latency_us, |o| &o.response_us)
    }

    /// The histogram of [`PhaseResult::response_us`], when the phase has one.
    pub fn response_histogram(&self) -> Option<&str> {
        match &self.open_loop {
            Some(o) => Some(o.response_histogram.as_str()),
            None => self.histogram.as_deref(),
        }
    }

    /// Why this phase's figures are the client's limit, if they are: the client process
    /// used more than [`CLIENT_BOUND_SHARE`] of its `loops` event loops' time (CPU per
    /// operation times operations per second). An embedded store's work is the client's
    /// own CPU, so its phases are never flagged. An open loop that fell behind its schedule
    /// is not flagged for that alone: the connections at the store's service time may be
    /// what could not keep it (the schedule's warning says by how much).
    pub fn client_bound_reason(&self, loops: u32, embedded: bool) -> Option<String> {
        if embedded {
            return None;
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
    /// An open-loop run's response times, from when each operation was due (absent in a
    /// closed loop, and in reports before they were kept per run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_p50_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_p99_us: Option<f64>,
    /// The server's CPU time, user and system, per operation (absent where not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_us_per_op: Option<f64>,
    /// Bytes the server sent to storage per operation (absent where not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes_per_op: Option<f64>,
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
