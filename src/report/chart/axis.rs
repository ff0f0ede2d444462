//! The charts' axes: value scales (linear from zero, or logarithmic) and their round
//! ticks, the nines axis of latency percentiles, a time axis' unit, and [`Axis`], the f64
//! axis plotters draws with the ticks given.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;

/// The highest quantile a latency curve reaches (four nines).
pub(super) const MAX_QUANTILE: f64 = 0.9999;

/// Spans from this long (ms) read in seconds on a time axis, shorter ones in ms.
pub(super) const SECONDS_FROM_MS: f64 = 2000.0;

pub(super) fn positive(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// The smallest and largest finite positive value.
pub(super) fn positive_range(values: &[f64]) -> Option<(f64, f64)> {
    values
        .iter()
        .copied()
        .filter(|v| positive(*v))
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// Whether the bars differ more than 10x (zero and missing bars left out).
pub(super) fn wants_log(values: &[f64]) -> bool {
    positive_range(values).is_some_and(|(min, max)| max / min > 10.0)
}

/// A value axis: linear from zero, or logarithmic (plotted as log10 of the value).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Scale {
    pub(super) log: bool,
    pub(super) lo: f64,
    pub(super) hi: f64,
}

impl Scale {
    /// Log when the bars differ more than 10x, else linear from zero; room for `extents`
    /// (whiskers) as well as the bars.
    pub(super) fn for_bars(bars: &[f64], extents: &[f64]) -> Scale {
        let all: Vec<f64> = bars.iter().chain(extents).copied().collect();
        match positive_range(&all) {
            // Bars stand on a power of ten at least 1.5x below the shortest.
            Some((min, max)) if wants_log(bars) => {
                Scale::log(10f64.powf((min / 1.5).log10().floor()), max * 1.6)
            }
            _ => Scale::linear(&all),
        }
    }

    /// Log when the values differ more than 10x, else linear from zero.
    pub(super) fn for_lines(values: &[f64]) -> Scale {
        match positive_range(values) {
            Some((min, max)) if wants_log(values) => Scale::log(min / 1.3, max * 1.3),
            _ => Scale::linear(values),
        }
    }

    /// From zero to a little above the largest value.
    pub(super) fn linear(values: &[f64]) -> Scale {
        let hi = positive_range(values).map_or(1.0, |(_, max)| max * 1.15);
        Scale {
            log: false,
            lo: 0.0,
            hi,
        }
    }

    /// From `lo` to `hi`, both made positive and apart.
    pub(super) fn log(lo: f64, hi: f64) -> Scale {
        let lo = if positive(lo) { lo } else { 1.0 };
        let hi = if positive(hi) && hi > lo * 1.01 {
            hi
        } else {
            lo * 10.0
        };
        Scale { log: true, lo, hi }
    }

    /// Where a value sits on the axis (a value below the axis sits at its bottom).
    pub(super) fn axis(&self, v: f64) -> f64 {
        if self.log { v.max(self.lo).log10() } else { v }
    }

    /// The inverse of [`Scale::axis`].
    pub(super) fn value(&self, a: f64) -> f64 {
        if self.log { 10f64.powf(a) } else { a }
    }

    pub(super) fn axis_range(&self) -> Range<f64> {
        self.axis(self.lo)..self.axis(self.hi)
    }

    /// Tick values: powers of ten (and 2x, 5x when there are few decades), or round steps.
    pub(super) fn ticks(&self) -> Vec<f64> {
        if !self.log {
            return nice_ticks(self.lo, self.hi, 5);
        }
        let (first, last) = (
            self.lo.log10().floor() as i32,
            self.hi.log10().floor() as i32,
        );
        let inside = |v: &f64| *v >= self.lo * 0.999 && *v <= self.hi * 1.001;
        let powers: Vec<f64> = (first..=last)
            .map(|e| 10f64.powi(e))
            .filter(inside)
            .collect();
        if powers.len() >= 3 {
            let step = powers.len().div_ceil(8);
            return powers.into_iter().step_by(step).collect();
        }
        let multiples: Vec<f64> = (first..=last)
            .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
            .filter(inside)
            .collect();
        if multiples.len() >= 2 {
            return multiples;
        }
        nice_ticks(self.lo, self.hi, 4)
            .into_iter()
            .filter(|v| *v > 0.0)
            .collect()
    }

    pub(super) fn suffix(&self) -> &'static str {
        if self.log { " (log scale)" } else { "" }
    }
}

/// Round tick values from `lo` to `hi`, about `target` of them.
pub(super) fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite() && hi > lo) {
        return vec![if lo.is_finite() { lo } else { 0.0 }];
    }
    let raw = (hi - lo) / target.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw * 0.999)
        .unwrap_or(10.0 * magnitude);
    let first = (lo / step).ceil() * step;
    (0..50)
        .map(|k| first + f64::from(k) * step)
        .take_while(|v| *v <= hi + step * 1e-9)
        .collect()
}

/// A quantile's place on the nines axis: 0.9 -> 1, 0.99 -> 2, 0.999 -> 3 (clamped to
/// [0, four nines]).
pub(super) fn nines(q: f64) -> f64 {
    if q.is_nan() || q <= 0.0 {
        return 0.0;
    }
    -(1.0 - q.min(MAX_QUANTILE)).log10()
}

/// The inverse of [`nines`].
pub(super) fn quantile(x: f64) -> f64 {
    (1.0 - 10f64.powf(-x)).clamp(0.0, MAX_QUANTILE)
}

/// A nines-axis tick as a percentile: `0`, `50`, `90`, `99`, `99.9`, `99.99`.
pub(super) fn nines_label(x: f64) -> String {
    if x <= 1e-9 {
        return "0".to_string();
    }
    let decimals = (x.round() as i64 - 2).clamp(0, 6) as usize;
    format!("{:.*}", decimals, 100.0 * quantile(x))
}

/// The unit a time axis spanning `span_ms` reads in: (ms per unit, its name). Seconds from
/// [`SECONDS_FROM_MS`] on, else milliseconds.
pub(super) fn time_unit(span_ms: f64) -> (f64, &'static str) {
    if span_ms >= SECONDS_FROM_MS {
        (1000.0, "s")
    } else {
        (1.0, "ms")
    }
}

/// An f64 axis with the ticks given. (plotters' own f64 axis picks its ticks itself, and
/// wrapped in `with_key_points` it can no longer take a label formatter.)
#[derive(Debug, Clone)]
pub(super) struct Axis {
    pub(super) range: Range<f64>,
    pub(super) ticks: Vec<f64>,
}

impl Axis {
    pub(super) fn new(range: Range<f64>, ticks: Vec<f64>) -> Axis {
        Axis { range, ticks }
    }
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.range.end - self.range.start;
        let t = (value - self.range.start) / span;
        if !t.is_finite() {
            return (limit.0 + limit.1) / 2;
        }
        let pixels = f64::from(limit.1 - limit.0);
        (f64::from(limit.0) + t.clamp(-1.0, 2.0) * pixels).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_map_onto_the_nines_axis() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(nines(0.0), 0.0));
        assert!(close(nines(0.9), 1.0));
        assert!(close(nines(0.99), 2.0));
        assert!(close(nines(0.999), 3.0));
        assert!(close(nines(0.9999), 4.0));
        assert!(close(nines(1.0), 4.0), "clamped to four nines");
        assert!(close(nines(f64::NAN), 0.0));
        assert!(close(quantile(nines(0.95)), 0.95));
        let labels: Vec<String> = [0.0, nines(0.5), 1.0, 2.0, 3.0, 4.0]
            .into_iter()
            .map(nines_label)
            .collect();
        assert_eq!(labels, ["0", "50", "90", "99", "99.9", "99.99"]);
    }

    #[test]
    fn scales_pick_round_ticks() {
        let linear = Scale::for_bars(&[120.0, 200.0], &[]);
        assert!(!linear.log);
        assert_eq!(linear.lo, 0.0);
        assert_eq!(linear.ticks(), [0.0, 50.0, 100.0, 150.0, 200.0]);

        let log = Scale::for_bars(&[2000.0, 60_000.0], &[1800.0]);
        assert!(log.log);
        assert_eq!(log.lo, 1000.0, "bars stand on a power of ten");
        assert_eq!(
            log.ticks(),
            [1000.0, 2000.0, 5000.0, 10_000.0, 20_000.0, 50_000.0]
        );
        let many = Scale::log(1.0, 1e6);
        assert_eq!(many.ticks(), [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]);
        assert!(!Scale::log(5.0, 8.0).ticks().is_empty());
        assert!(
            Scale::log(f64::NAN, 0.0).axis_range().end
                > Scale::log(f64::NAN, 0.0).axis_range().start
        );
        assert_eq!(Scale::linear(&[]).hi, 1.0);
        assert_eq!(nice_ticks(1.0, 1.0, 5), [1.0]);
    }
}
