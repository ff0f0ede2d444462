//! Timers, latency histograms, error counts and client CPU time of one measured phase.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::record::Size;
use crate::report::model::{Latency, PhaseKind, PhaseResult};

/// Highest latency the histogram holds exactly: one hour, in nanoseconds. Longer ones are
/// clamped to it (and still counted).
const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

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

/// Collects the figures of one phase while it runs.
pub struct Meter {
    kind: PhaseKind,
    size: Size,
    histogram: Histogram<u64>,
    errors: BTreeMap<String, u64>,
    started: Instant,
    cpu_started: Duration,
}

impl Meter {
    /// Starts the phase's wall and CPU clocks.
    pub fn start(kind: PhaseKind, size: &Size) -> Self {
        Meter {
            kind,
            size: size.clone(),
            histogram: Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3)
                .expect("static histogram bounds are valid"),
            errors: BTreeMap::new(),
            started: Instant::now(),
            cpu_started: process_cpu_time(),
        }
    }

    /// Records one operation's latency (successful or not).
    pub fn record(&mut self, latency: Duration) {
        let ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        self.histogram
            .saturating_record(ns.clamp(1, MAX_LATENCY_NS));
    }

    /// Counts one failed operation under `kind`.
    pub fn error(&mut self, kind: impl Into<String>) {
        *self.errors.entry(kind.into()).or_default() += 1;
    }

    /// Errors counted so far.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Stops the clocks. `incomplete` says the phase ended before its last operation.
    pub fn finish(self, incomplete: bool) -> PhaseResult {
        let wall = self.started.elapsed();
        let cpu = process_cpu_time().saturating_sub(self.cpu_started);
        let ops = self.histogram.len();
        let per_op = |d: Duration| {
            if ops == 0 {
                0.0
            } else {
                d.as_secs_f64() * 1e6 / ops as f64
            }
        };
        let h = &self.histogram;
        let us = |ns: u64| ns as f64 / 1000.0;
        let latency = if ops == 0 {
            Latency::default()
        } else {
            Latency {
                min: us(h.min()),
                mean: h.mean() / 1000.0,
                p50: us(h.value_at_quantile(0.50)),
                p90: us(h.value_at_quantile(0.90)),
                p99: us(h.value_at_quantile(0.99)),
                p999: us(h.value_at_quantile(0.999)),
                max: us(h.max()),
            }
        };
        PhaseResult {
            kind: self.kind,
            size: self.size,
            ops,
            errors: self.errors.values().sum(),
            error_kinds: self.errors,
            incomplete,
            wall_ms: wall.as_secs_f64() * 1e3,
            ops_per_s: if wall.is_zero() {
                0.0
            } else {
                ops as f64 / wall.as_secs_f64()
            },
            latency_us: latency,
            cpu_us_per_op: per_op(cpu),
        }
    }
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            min: 0.0,
            mean: 0.0,
            p50: 0.0,
            p90: 0.0,
            p99: 0.0,
            p999: 0.0,
            max: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_follow_the_recorded_latencies() {
        let mut meter = Meter::start(PhaseKind::Search, &"micro".parse().unwrap());
        for us in 1..=1000u64 {
            meter.record(Duration::from_micros(us));
        }
        meter.error("wrong record");
        meter.error("wrong record");
        meter.error("missing record");
        let r = meter.finish(false);
        assert_eq!(r.ops, 1000);
        assert_eq!(r.errors, 3);
        assert_eq!(r.error_kinds["wrong record"], 2);
        // Three significant digits: within 0.1%.
        let close = |got: f64, want: f64| (got - want).abs() <= want * 0.001 + 0.001;
        assert!(close(r.latency_us.p50, 500.0), "{}", r.latency_us.p50);
        assert!(close(r.latency_us.p99, 990.0), "{}", r.latency_us.p99);
        assert!(close(r.latency_us.max, 1000.0), "{}", r.latency_us.max);
        assert!(close(r.latency_us.min, 1.0), "{}", r.latency_us.min);
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
