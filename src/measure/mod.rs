//! Timers, latency histograms, error counts, client CPU time and client allocations of a
//! measured phase, and how repeated runs of a phase become one figure (median, min, max,
//! and the exact merge of their histograms). The counting allocator (`alloc.rs`) and the
//! time series (`series.rs`) have files of their own, re-exported here; the machine's floor
//! is [`floor`].

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::report::model::{MAX_LATENCY_NS, PhaseKind, PhaseResult, RunFigures, empty_histogram};
use crate::report::stats::Spread;
use crate::workload::levels::Concurrency;
use crate::workload::record::Size;

mod alloc;
pub mod cost;
pub mod floor;
pub mod processes;
mod series;
pub mod sites;

pub use alloc::{CountingAlloc, allocations, uncounted};
pub use series::Series;

pub use crate::report::model::{decode_histogram, encode_histogram, latency};

/// Process CPU time (user + system, all threads) so far.
pub fn process_cpu_time() -> Duration {
    // SAFETY: getrusage only writes into the struct we pass; an all-zero rusage is valid.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return Duration::ZERO;
        }
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// This process's peak resident memory so far, in bytes (`VmHWM` of /proc/self/status:
/// unlike `getrusage`'s children figure, never a child server's).
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// A latency histogram in nanoseconds, 3 significant digits, up to one hour. The tool's
/// own recording: its memory is not counted as the client's (see [`uncounted`]).
pub fn new_histogram() -> Histogram<u64> {
    uncounted(empty_histogram)
}

/// Records one latency into a histogram made by [`new_histogram`].
#[inline]
pub fn record(histogram: &mut Histogram<u64>, latency: Duration) {
    crate::liveness::alive();
    let ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
    histogram.saturating_record(ns.clamp(1, MAX_LATENCY_NS));
}

/// What a phase (or one task of it) records of each operation: its latency into the
/// phase's histogram and into its time series.
#[derive(Debug, Clone)]
pub struct Recorder {
    pub histogram: Histogram<u64>,
    pub series: Series,
}

impl Recorder {
    /// A recorder whose series counts from `start`, shared by every task of the phase run.
    pub fn new(start: Instant) -> Self {
        Recorder {
            histogram: new_histogram(),
            series: Series::new(start),
        }
    }

    /// One operation, from `start` to `end`.
    #[inline]
    pub fn record(&mut self, start: Instant, end: Instant) {
        let latency = end.saturating_duration_since(start);
        record(&mut self.histogram, latency);
        self.series.record(end, latency);
    }

    /// One operation that ended at `end` and took `latency` (timed in parts, for
    /// example around the store calls only).
    #[inline]
    pub fn record_took(&mut self, end: Instant, latency: Duration) {
        record(&mut self.histogram, latency);
        self.series.record(end, latency);
    }

    /// The operation recorded last failed or answered wrong.
    pub fn failed(&mut self) {
        self.series.failed();
    }

    /// Adds another task's recording of the same phase run.
    pub fn add(&mut self, other: &Recorder) {
        uncounted(|| {
            self.histogram
                .add(&other.histogram)
                .expect("histograms of one shape merge");
            self.series.add(&other.series);
        });
    }

    /// Operations recorded.
    pub fn len(&self) -> u64 {
        self.histogram.len()
    }

    pub fn is_empty(&self) -> bool {
        self.histogram.is_empty()
    }
}

/// A phase stops after this many errors: the store has failed by then, and a dead
/// connection should not cost a timeout per remaining operation.
pub const MAX_ERRORS_PER_PHASE: u64 = 10;

/// The errors of a phase (or of one of its tasks): counts by kind and the first message.
#[derive(Debug, Default)]
pub struct Errors {
    pub by_kind: BTreeMap<String, u64>,
    pub first: Option<String>,
}

impl Errors {
    /// Counts one error of `kind`; keeps `message()` if it is the first. Returns whether the
    /// phase has reached [`MAX_ERRORS_PER_PHASE`] and should stop.
    pub fn count(&mut self, kind: impl Into<String>, message: impl FnOnce() -> String) -> bool {
        *self.by_kind.entry(kind.into()).or_default() += 1;
        self.first.get_or_insert_with(message);
        self.by_kind.values().sum::<u64>() >= MAX_ERRORS_PER_PHASE
    }
}

/// One measured run of one phase.
#[derive(Debug, Clone)]
pub struct PhaseRun {
    pub kind: PhaseKind,
    pub size: Size,
    pub concurrency: Concurrency,
    pub ops: u64,
    pub errors: BTreeMap<String, u64>,
    pub incomplete: bool,
    pub figures: RunFigures,
    /// Latency from each operation's start.
    pub histogram: Histogram<u64>,
    /// The run over time.
    pub series: Series,
    /// Open-loop runs: latency from each operation's intended start, and how far behind.
    pub open_loop: Option<OpenLoopRun>,
    /// Operations made again on a new connection after an error (`--retries`).
    pub retries: u64,
    /// What the store's own counters rose by over the run (see `Store::counters`).
    pub counters: BTreeMap<String, u64>,
    /// The run's allocations by call stack (`--alloc-sites`).
    pub alloc_sites: Option<sites::Counts>,
    /// What the run cost the server, where it was read.
    pub server: Option<cost::ServerRun>,
    /// The logical bytes of the records the run inserted (none for a phase that inserts
    /// none).
    pub logical_bytes: Option<u64>,
}

/// What an open-loop run adds to a phase run.
#[derive(Debug, Clone)]
pub struct OpenLoopRun {
    pub rate: f64,
    pub response: Histogram<u64>,
    pub max_behind: Duration,
}

/// The clocks and counters around one phase run.
pub struct Meter {
    started: Instant,
    cpu_started: Duration,
    allocs_started: Option<(u64, u64)>,
}

impl Meter {
    /// When the phase started (the instant its series counts from).
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Starts the phase's wall, CPU and allocation clocks.
    pub fn start() -> Self {
        // The allocation sites from here on are the phase's.
        sites::begin();
        Meter {
            allocs_started: allocations(),
            cpu_started: process_cpu_time(),
            started: Instant::now(),
        }
    }

    /// Stops the clocks, as the phase's last operation ended: what is done with its
    /// recordings afterwards (merging the tasks') is not the phase's.
    pub fn stop(self) -> Stopped {
        Stopped {
            wall: self.started.elapsed(),
            cpu: process_cpu_time().saturating_sub(self.cpu_started),
            allocs: [self.allocs_started, allocations()],
            alloc_sites: sites::end(),
        }
    }
}

/// A phase's clocks, stopped.
pub struct Stopped {
    wall: Duration,
    cpu: Duration,
    /// The allocation counters (allocations, bytes) at the start and at the end.
    allocs: [Option<(u64, u64)>; 2],
    alloc_sites: Option<sites::Counts>,
}

impl Stopped {
    /// The figures of `ops` operations whose latencies `histogram` holds, and with
    /// `--alloc-sites` where the phase's allocations came from.
    pub fn figures(
        self,
        ops: u64,
        histogram: &Histogram<u64>,
    ) -> (RunFigures, Option<sites::Counts>) {
        let Stopped {
            wall,
            cpu,
            allocs,
            alloc_sites,
        } = self;
        let allocs = match allocs {
            [Some((a0, b0)), Some((a1, b1))] if ops > 0 => {
                Some(((a1 - a0) as f64 / ops as f64, (b1 - b0) as f64 / ops as f64))
            }
            _ => None,
        };
        let per_op = |d: Duration| {
            if ops == 0 {
                0.0
            } else {
                d.as_secs_f64() * 1e6 / ops as f64
            }
        };
        let l = latency(histogram);
        let figures = RunFigures {
            wall_ms: wall.as_secs_f64() * 1e3,
            ops_per_s: if wall.is_zero() {
                0.0
            } else {
                ops as f64 / wall.as_secs_f64()
            },
            cpu_us_per_op: per_op(cpu),
            allocs_per_op: allocs.map(|a| a.0),
            bytes_per_op: allocs.map(|a| a.1),
            p50_us: l.p50,
            p99_us: l.p99,
            response_p50_us: None,
            response_p99_us: None,
            server_cpu_us_per_op: None,
            write_bytes_per_op: None,
        };
        (figures, alloc_sites)
    }
}

/// Several runs of one phase as one result: medians (with min and max in `runs`), errors
/// summed, and the histograms merged exactly.
pub fn aggregate(runs: &[PhaseRun]) -> PhaseResult {
    let first = &runs[0];
    let mut histogram = new_histogram();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for run in runs {
        histogram
            .add(&run.histogram)
            .expect("histograms of one shape merge");
        for (kind, n) in &run.errors {
            *errors.entry(kind.clone()).or_default() += n;
        }
    }
    let median = |f: fn(&RunFigures) -> f64| {
        Spread::of(&runs.iter().map(|r| f(&r.figures)).collect::<Vec<_>>())
            .map_or(0.0, |s| s.median)
    };
    let median_opt = |f: fn(&RunFigures) -> Option<f64>| {
        let values: Vec<f64> = runs.iter().filter_map(|r| f(&r.figures)).collect();
        (values.len() == runs.len())
            .then(|| Spread::of(&values).map(|s| s.median))
            .flatten()
    };
    let open_loop = first.open_loop.as_ref().map(|o| {
        let mut response = new_histogram();
        for run in runs {
            if let Some(ol) = &run.open_loop {
                response
                    .add(&ol.response)
                    .expect("histograms of one shape merge");
            }
        }
        let max_behind = runs
            .iter()
            .filter_map(|r| r.open_loop.as_ref().map(|o| o.max_behind))
            .max()
            .unwrap_or_default();
        crate::report::model::OpenLoop {
            rate: o.rate,
            response_us: latency(&response),
            max_behind_ms: max_behind.as_secs_f64() * 1e3,
            response_histogram: encode_histogram(&response),
        }
    });
    let counters = runs.iter().fold(BTreeMap::new(), |mut sum, r| {
        for (name, n) in &r.counters {
            *sum.entry(name.clone()).or_insert(0) += n;
        }
        sum
    });
    let server = cost::server_cost(
        &runs
            .iter()
            .map(|r| (r.ops, r.server.as_ref()))
            .collect::<Vec<_>>(),
        &counters,
        first.logical_bytes,
    );
    PhaseResult {
        kind: first.kind,
        size: first.size.clone(),
        concurrency: first.concurrency,
        operation: None,
        ops: first.ops,
        errors: errors.values().sum(),
        error_kinds: errors,
        incomplete: runs.iter().any(|r| r.incomplete),
        wall_ms: median(|f| f.wall_ms),
        ops_per_s: median(|f| f.ops_per_s),
        latency_us: latency(&histogram),
        cpu_us_per_op: median(|f| f.cpu_us_per_op),
        allocs_per_op: median_opt(|f| f.allocs_per_op),
        bytes_per_op: median_opt(|f| f.bytes_per_op),
        runs: if runs.len() > 1 {
            runs.iter().map(|r| r.figures.clone()).collect()
        } else {
            Vec::new()
        },
        histogram: Some(encode_histogram(&histogram)),
        open_loop,
        client_bound: None,
        retries: runs.iter().map(|r| r.retries).sum(),
        server_counters: counters,
        server,
        client_wall_ms: Vec::new(),
        common_ops_per_s: None,
        alloc_sites: {
            let captured: Vec<&PhaseRun> =
                runs.iter().filter(|r| r.alloc_sites.is_some()).collect();
            (!captured.is_empty()).then(|| {
                let mut counts = sites::Counts::default();
                for r in &captured {
                    counts.add(r.alloc_sites.as_ref().expect("filtered above"));
                }
                sites::resolve(&counts, captured.iter().map(|r| r.ops).sum())
            })
        },
        // A phase of a YCSB operation type shares its workload's series: none of its own.
        series: runs
            .iter()
            .map(|r| r.series.figures())
            .filter(|s| !s.points.is_empty())
            .collect(),
    }
}

/// Groups runs by phase (kind, size, concurrency), in first-run order, and aggregates each.
pub fn aggregate_by_phase(runs: &[PhaseRun]) -> Vec<PhaseResult> {
    let mut order: Vec<(PhaseKind, String, Concurrency)> = Vec::new();
    let mut groups: BTreeMap<(PhaseKind, String, Concurrency), Vec<PhaseRun>> = BTreeMap::new();
    for r in runs {
        let key = (r.kind, r.size.name.clone(), r.concurrency);
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(r.clone());
    }
    order.iter().map(|key| aggregate(&groups[key])).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_rss_is_read_and_grows_with_a_touched_allocation() {
        // The peak may be above the current RSS already: compare with the current one.
        let rss = || {
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
            line.split_whitespace()
                .nth(1)
                .unwrap()
                .parse::<u64>()
                .unwrap()
                * 1024
        };
        let before = rss();
        assert!(peak_rss_bytes().expect("VmHWM on Linux") >= before);
        let block = vec![1u8; 64 << 20];
        std::hint::black_box(&block);
        let after = peak_rss_bytes().unwrap();
        assert!(after >= before + (32 << 20), "{before} -> {after}");
    }

    #[test]
    fn percentiles_follow_the_recorded_latencies() {
        let mut h = new_histogram();
        for us in 1..=1000u64 {
            record(&mut h, Duration::from_micros(us));
        }
        let l = latency(&h);
        // Three significant digits: within 0.1%.
        let close = |got: f64, want: f64| (got - want).abs() <= want * 0.001 + 0.001;
        assert!(close(l.p50, 500.0), "{}", l.p50);
        assert!(close(l.p99, 990.0), "{}", l.p99);
        assert!(close(l.max, 1000.0), "{}", l.max);
        assert!(close(l.min, 1.0), "{}", l.min);
    }

    fn run_of(latencies_us: &[u64], wall_ms: f64, errors: u64) -> PhaseRun {
        let mut histogram = new_histogram();
        for &us in latencies_us {
            record(&mut histogram, Duration::from_micros(us));
        }
        PhaseRun {
            kind: PhaseKind::Search,
            size: "micro".parse().unwrap(),
            concurrency: Concurrency::ONE,
            ops: latencies_us.len() as u64,
            errors: if errors > 0 {
                BTreeMap::from([("wrong record".to_string(), errors)])
            } else {
                BTreeMap::new()
            },
            incomplete: false,
            figures: RunFigures {
                wall_ms,
                ops_per_s: latencies_us.len() as f64 / wall_ms * 1000.0,
                cpu_us_per_op: wall_ms,
                allocs_per_op: Some(wall_ms * 2.0),
                bytes_per_op: Some(wall_ms * 100.0),
                p50_us: 0.0,
                p99_us: 0.0,
                response_p50_us: None,
                response_p99_us: None,
                server_cpu_us_per_op: None,
                write_bytes_per_op: None,
            },
            histogram,
            series: Series::new(Instant::now()),
            open_loop: None,
            retries: 0,
            counters: BTreeMap::new(),
            server: None,
            logical_bytes: None,
            alloc_sites: None,
        }
    }

    #[test]
    fn merged_histograms_equal_the_histogram_of_the_union() {
        let a: Vec<u64> = (1..=500).collect();
        let b: Vec<u64> = (300..=2000).step_by(3).collect();
        let c: Vec<u64> = vec![5_000, 7, 7, 7];
        let merged = aggregate(&[run_of(&a, 1.0, 0), run_of(&b, 2.0, 1), run_of(&c, 3.0, 2)]);
        let union: Vec<u64> = a.iter().chain(&b).chain(&c).copied().collect();
        let whole = run_of(&union, 1.0, 0).histogram;
        assert_eq!(
            decode_histogram(merged.histogram.as_ref().unwrap()).unwrap(),
            whole
        );
        assert_eq!(merged.latency_us, latency(&whole));
        // Medians of the runs, errors summed, every run kept.
        assert_eq!(merged.wall_ms, 2.0);
        assert_eq!(merged.cpu_us_per_op, 2.0);
        assert_eq!(merged.allocs_per_op, Some(4.0));
        assert_eq!(merged.errors, 3);
        assert_eq!(merged.runs.len(), 3);
    }

    #[test]
    fn histograms_survive_their_encoding() {
        let h = run_of(&[1, 10, 100, 1000, 10_000], 1.0, 0).histogram;
        assert_eq!(decode_histogram(&encode_histogram(&h)).unwrap(), h);
        assert!(decode_histogram("not base64!").is_err());
    }

    #[test]
    fn cpu_time_advances_with_work() {
        let before = process_cpu_time();
        let mut x = 0u64;
        while process_cpu_time() - before < Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(process_cpu_time() > before);
    }
}
