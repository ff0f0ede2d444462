//! What a phase's figures warn of: throughput that drifted or a warm-up not over, read
//! from its time series, and an open-loop schedule that fell behind.

use super::model::{PhaseResult, Series};

/// What a phase's time series says against its figures: throughput that drifted (the last
/// tenth of the phase more than 20% off its middle fifth) or a first interval much slower
/// than the rest (warm-up not over). Phases shorter than 200 ms are not judged, nor drift
/// over fewer than `DRIFT_FROM_OPS` (100) operations a side.
pub fn series_warnings(p: &PhaseResult) -> Vec<String> {
    let mut out = Vec::new();
    let runs = p.series.len();
    for (i, series) in p.series.iter().enumerate() {
        let run = if runs > 1 {
            format!("run {} of {runs}: ", i + 1)
        } else {
            String::new()
        };
        if let Some(w) = drift(series) {
            out.push(format!("{run}{w}"));
        }
        if let Some(w) = cold_start(series) {
            out.push(format!("{run}{w}"));
        }
    }
    out
}

/// Shortest series judged, in ms.
const JUDGED_FROM_MS: f64 = 200.0;

/// The fewest operations in the last tenth and in the middle fifth for drift to be judged:
/// the rate of ten durable inserts moves by more than 20% with nothing drifting (a mean of
/// n latencies spreading by about 40% spreads by 40%/sqrt(n): 13% at 10, 4% at 100).
const DRIFT_FROM_OPS: u64 = 100;

/// Operations per second over the points starting in `[from, to)` of the span, and how
/// many operations that is.
fn rate_between(series: &Series, from: f64, to: f64) -> Option<(f64, u64)> {
    let n = series.points.len();
    let (mut ops, mut ms) = (0u64, 0.0);
    for (i, p) in series.points.iter().enumerate() {
        let start = i as f64 * series.interval_ms;
        if start < from * series.span_ms || start >= to * series.span_ms {
            continue;
        }
        let width = if i + 1 == n {
            (series.span_ms - start).clamp(0.0, series.interval_ms)
        } else {
            series.interval_ms
        };
        ops += p.ops;
        ms += width;
    }
    (ms > 0.0).then(|| (ops as f64 / (ms / 1000.0), ops))
}

fn drift(series: &Series) -> Option<String> {
    if series.span_ms < JUDGED_FROM_MS || series.points.len() < 10 {
        return None;
    }
    let (middle, middle_ops) = rate_between(series, 0.4, 0.6)?;
    let (last, last_ops) = rate_between(series, 0.9, 1.0)?;
    if middle_ops.min(last_ops) < DRIFT_FROM_OPS {
        return None;
    }
    let change = last / middle - 1.0;
    (middle > 0.0 && change.abs() > 0.2).then(|| {
        format!(
            "throughput drifted: the last tenth ran at {last:.0} ops/s, the middle at \
             {middle:.0} ({:+.0}%)",
            change * 100.0
        )
    })
}

fn cold_start(series: &Series) -> Option<String> {
    if series.span_ms < JUDGED_FROM_MS || series.points.len() < 10 {
        return None;
    }
    let rates = series.rates();
    // The last point is cut short where the phase ended; it is not a typical one.
    let mut typical: Vec<f64> = rates[1..rates.len() - 1].iter().map(|r| r.1).collect();
    typical.sort_by(f64::total_cmp);
    let median = typical[typical.len() / 2];
    let first = rates[0].1;
    (median > 0.0 && first < median * 0.5).then(|| {
        format!(
            "warm-up not over: the first {:.1} ms ran at {:.0}% of the median interval's \
             rate (more --warmup-runs, or longer phases)",
            series.interval_ms,
            first / median * 100.0
        )
    })
}

/// An open-loop phase whose client could not keep to its schedule says so, by how much:
/// never a silent lower rate.
pub fn schedule_warning(p: &PhaseResult) -> Option<String> {
    let ol = p.open_loop.as_ref()?;
    (p.ops_per_s < ol.rate * 0.95).then(|| {
        format!(
            "the schedule fell behind by up to {:.1} ms: {:.0} of the {:.0} ops/s asked for",
            ol.max_behind_ms, p.ops_per_s, ol.rate
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::SeriesPoint;

    /// A series of `rates` (ops/s), one point per 10 ms, the last point whole.
    fn series(rates: &[f64]) -> Series {
        Series {
            interval_ms: 10.0,
            span_ms: rates.len() as f64 * 10.0,
            points: rates
                .iter()
                .map(|r| SeriesPoint {
                    ops: (r / 100.0).round() as u64,
                    errors: 0,
                    p50_us: 1.0,
                    p99_us: 2.0,
                    max_us: 3.0,
                })
                .collect(),
        }
    }

    #[test]
    fn a_steady_series_gives_no_warning() {
        let steady: Vec<f64> = (0..40).map(|i| 10_000.0 + (i % 3) as f64 * 500.0).collect();
        assert_eq!(drift(&series(&steady)), None);
        assert_eq!(cold_start(&series(&steady)), None);
    }

    #[test]
    fn a_slowing_end_is_drift() {
        let mut slowing = vec![10_000.0; 40];
        for r in &mut slowing[36..] {
            *r = 7_000.0;
        }
        let w = drift(&series(&slowing)).expect("drift");
        assert!(
            w.contains("last tenth ran at 7000 ops/s, the middle at 10000 (-30%)"),
            "{w}"
        );
        // 15% is within the tolerance.
        for r in &mut slowing[36..] {
            *r = 8_500.0;
        }
        assert_eq!(drift(&series(&slowing)), None);
    }

    #[test]
    fn drift_over_few_operations_is_not_judged() {
        // 1,000 ops/s in 10 ms points: 40 operations in the last tenth, 28 when it slows.
        let mut slowing = vec![1_000.0; 40];
        for r in &mut slowing[36..] {
            *r = 700.0;
        }
        assert_eq!(drift(&series(&slowing)), None);
        // Ten times the operations, the same shape: judged.
        let tenfold: Vec<f64> = slowing.iter().map(|r| r * 10.0).collect();
        assert!(drift(&series(&tenfold)).is_some());
    }

    #[test]
    fn a_slow_first_interval_is_warm_up() {
        let mut cold = vec![10_000.0; 40];
        cold[0] = 3_000.0;
        let w = cold_start(&series(&cold)).expect("warm-up");
        assert!(w.contains("the first 10.0 ms ran at 30%"), "{w}");
        cold[0] = 6_000.0;
        assert_eq!(cold_start(&series(&cold)), None);
    }

    #[test]
    fn short_phases_are_not_judged() {
        let mut short = vec![10_000.0; 15];
        short[0] = 100.0;
        short[14] = 100.0;
        assert_eq!(drift(&series(&short)), None);
        assert_eq!(cold_start(&series(&short)), None);
    }
}
