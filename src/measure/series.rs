//! A phase's time series: operations, errors and latency percentiles per fixed interval
//! from the phase's start, so that a reader sees drift and warm-up, not only the totals.
//!
//! Intervals are 1/1024 s to start with and double (adjacent pairs merged exactly) while the
//! phase has more than [`MAX_POINTS`] of them, up to one second: a short phase still gets
//! 24 to 48 points, a long one a point a second. Memory is bounded by time, never by the
//! number of operations: each interval holds a coarse histogram (two significant digits).

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::alloc::uncounted;
use crate::report::model::{Series as SeriesFigures, SeriesPoint};

/// Coarsen while there are more points than this (and the interval is under a second).
pub const MAX_POINTS: usize = 48;

/// The finest interval is 1 s >> this; the coarsest one second.
const FINEST_SHIFT: u32 = 10;

/// Latencies above this (one hour, in microseconds) are clamped in an interval's histogram.
const MAX_LATENCY_US: u64 = 3_600_000_000;

#[derive(Debug, Clone, Default)]
struct Interval {
    ops: u64,
    errors: u64,
    /// Microseconds, two significant digits; made at the interval's first operation.
    latency: Option<Histogram<u32>>,
}

impl Interval {
    fn add(&mut self, other: &Interval) {
        self.ops += other.ops;
        self.errors += other.errors;
        if let Some(h) = &other.latency {
            match &mut self.latency {
                Some(mine) => mine.add(h).expect("interval histograms of one shape merge"),
                None => self.latency = Some(h.clone()),
            }
        }
    }
}

/// The time series of a phase run (or of one of its tasks), from a start all its tasks share.
#[derive(Debug, Clone)]
pub struct Series {
    start: Instant,
    /// The interval is (1 s >> FINEST_SHIFT) << shift.
    shift: u32,
    intervals: Vec<Interval>,
    /// The interval the last operation fell in (where [`Series::failed`] counts).
    last: usize,
    /// When the last operation ended.
    end: Option<Instant>,
}

impl Series {
    pub fn new(start: Instant) -> Self {
        Series {
            start,
            shift: 0,
            intervals: Vec::new(),
            last: 0,
            end: None,
        }
    }

    /// When the series starts (its first interval's beginning).
    pub fn start(&self) -> Instant {
        self.start
    }

    fn interval_ns(shift: u32) -> f64 {
        1e9 / f64::from(1u32 << FINEST_SHIFT) * f64::from(1u32 << shift)
    }

    /// The interval an instant falls in at the current width.
    fn index(&self, at: Instant) -> usize {
        let ns = at.saturating_duration_since(self.start).as_nanos() as u64;
        // (ns * 1024 / 1e9) >> shift, in integers: exact for phases of up to ~200 days.
        (((ns << FINEST_SHIFT) / 1_000_000_000) >> self.shift) as usize
    }

    /// One operation that ended at `end` after `latency`.
    #[inline]
    pub fn record(&mut self, end: Instant, latency: Duration) {
        let mut i = self.index(end);
        while i >= MAX_POINTS && self.shift < FINEST_SHIFT {
            uncounted(|| self.coarsen());
            i = self.index(end);
        }
        if i >= self.intervals.len() {
            uncounted(|| self.intervals.resize_with(i + 1, Interval::default));
        }
        let interval = &mut self.intervals[i];
        interval.ops += 1;
        let us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        interval
            .latency
            .get_or_insert_with(|| {
                // The tool's own recording: not the client's cost of an operation.
                uncounted(|| {
                    Histogram::new_with_bounds(1, MAX_LATENCY_US, 2)
                        .expect("static histogram bounds are valid")
                })
            })
            .saturating_record(us.clamp(1, MAX_LATENCY_US));
        self.last = i;
        self.end = Some(self.end.map_or(end, |e| e.max(end)));
    }

    /// The operation recorded last failed or gave a wrong answer.
    pub fn failed(&mut self) {
        if let Some(interval) = self.intervals.get_mut(self.last) {
            interval.errors += 1;
        }
    }

    /// Doubles the interval: adjacent pairs merged.
    fn coarsen(&mut self) {
        let merged: Vec<Interval> = self
            .intervals
            .chunks(2)
            .map(|pair| {
                let mut one = pair[0].clone();
                if let Some(second) = pair.get(1) {
                    one.add(second);
                }
                one
            })
            .collect();
        self.intervals = merged;
        self.last /= 2;
        self.shift += 1;
    }

    /// Adds another task's series of the same phase run (the same start).
    pub fn add(&mut self, other: &Series) {
        let mut other = other.clone();
        while other.shift < self.shift {
            other.coarsen();
        }
        while self.shift < other.shift {
            self.coarsen();
        }
        if other.intervals.len() > self.intervals.len() {
            self.intervals
                .resize_with(other.intervals.len(), Interval::default);
        }
        for (mine, theirs) in self.intervals.iter_mut().zip(&other.intervals) {
            mine.add(theirs);
        }
        self.end = match (self.end, other.end) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        // Keep the series short if the merge made it long (a task that ran later).
        while self.intervals.len() > MAX_POINTS && self.shift < FINEST_SHIFT {
            self.coarsen();
        }
    }

    /// The figures for run.json: a point per interval, the last one as long as the phase
    /// lasted into it (`span_ms` says how long the whole series is).
    pub fn figures(&self) -> SeriesFigures {
        let interval_ms = Self::interval_ns(self.shift) / 1e6;
        let span_ms = self.end.map_or(0.0, |e| {
            e.saturating_duration_since(self.start).as_secs_f64() * 1e3
        });
        let points = self
            .intervals
            .iter()
            .map(|i| {
                let (p50, p99, max) = i.latency.as_ref().map_or((0.0, 0.0, 0.0), |h| {
                    (
                        h.value_at_quantile(0.5) as f64,
                        h.value_at_quantile(0.99) as f64,
                        h.max() as f64,
                    )
                });
                SeriesPoint {
                    ops: i.ops,
                    errors: i.errors,
                    p50_us: p50,
                    p99_us: p99,
                    max_us: max,
                }
            })
            .collect();
        SeriesFigures {
            interval_ms,
            span_ms,
            points,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_short_phase_gets_fine_intervals() {
        let start = Instant::now();
        let mut s = Series::new(start);
        // 100 ms of one operation a millisecond, 20 us each.
        for i in 1..=100 {
            s.record(start + ms(i), Duration::from_micros(20));
        }
        let f = s.figures();
        assert!(
            f.points.len() > MAX_POINTS / 2 && f.points.len() <= MAX_POINTS,
            "{}",
            f.points.len()
        );
        assert_eq!(f.points.iter().map(|p| p.ops).sum::<u64>(), 100);
        // 100 ms in at most 48 points: 1/1024 s doubled to 1/256 s (3.9 ms).
        assert!(
            (f.interval_ms - 1000.0 / 256.0).abs() < 1e-9,
            "{}",
            f.interval_ms
        );
        assert!((f.span_ms - 100.0).abs() < 1e-6);
        let p = &f.points[5];
        assert!((p.p50_us - 20.0).abs() <= 0.5 && p.max_us >= 19.0, "{p:?}");
    }

    #[test]
    fn a_long_phase_gets_a_point_a_second_and_no_more() {
        let start = Instant::now();
        let mut s = Series::new(start);
        for i in 0..3000 {
            s.record(start + ms(i * 100), Duration::from_millis(1));
        }
        let f = s.figures();
        assert_eq!(f.interval_ms, 1000.0);
        assert_eq!(f.points.len(), 300);
        assert!(f.points.iter().all(|p| p.ops == 10), "{:?}", &f.points[..3]);
    }

    #[test]
    fn errors_land_in_the_interval_of_their_operation() {
        let start = Instant::now();
        let mut s = Series::new(start);
        for i in 0..200 {
            s.record(start + ms(i), Duration::from_micros(5));
            if i == 150 {
                s.failed();
            }
        }
        let f = s.figures();
        let at = f
            .points
            .iter()
            .position(|p| p.errors == 1)
            .expect("the error is counted");
        let from = at as f64 * f.interval_ms;
        assert!(
            from <= 150.0 && 150.0 < from + f.interval_ms,
            "{at} {}",
            f.interval_ms
        );
        assert_eq!(f.points.iter().map(|p| p.errors).sum::<u64>(), 1);
    }

    #[test]
    fn tasks_merge_exactly_whatever_their_widths() {
        let start = Instant::now();
        let (mut a, mut b) = (Series::new(start), Series::new(start));
        let mut whole = Series::new(start);
        for i in 0..40 {
            a.record(start + ms(i), Duration::from_micros(10 + i));
            whole.record(start + ms(i), Duration::from_micros(10 + i));
        }
        for i in 0..400 {
            b.record(start + ms(i), Duration::from_micros(100));
            whole.record(start + ms(i), Duration::from_micros(100));
        }
        a.add(&b);
        let (merged, whole) = (a.figures(), whole.figures());
        assert_eq!(merged.interval_ms, whole.interval_ms);
        assert_eq!(merged.points, whole.points);
    }
}
