//! The timeline charts: throughput over a phase's time with its p99 under it, a line per
//! run of each store (the median run bold), the intervals with errors marked.

use plotters::style::text_anchor::{HPos, VPos};

use super::axis::{Scale, nice_ticks, positive, positive_range, time_unit, wants_log};
use super::frame::{
    Chart, LINE_HEIGHT, MARGIN, SMALL_SIZE, Swatch, WIDTH, frame, render_sized, style,
};
use super::labels::{duration_label, grouped, human_count, pack, slug, text_width};
use super::palette::{MUTED, store_color, tint};
use super::panel::{Line, Panel, draw_panel};
use super::phases::{PhaseKey, per_operation, phase_keys};
use crate::report::model::{PhaseKind, Report, Series};

/// Throughput over time is taller: a p99 panel sits under it.
pub(super) const TIMELINE_HEIGHT: u32 = 640;

pub(super) const MAX_TIMELINE_CHARTS: usize = 12;
/// A time series' last interval, cut short where the phase ended, is left out when it is
/// narrower than this share of an interval: its rate is noise.
pub(super) const MIN_LAST_WIDTH: f64 = 0.1;

/// Ops/s over the phase's time (and p99 under it), one line per store, for each phase with
/// a time series: the classic phases, pool and driver tests, YCSB workload totals (at most
/// [`MAX_TIMELINE_CHARTS`], the lowest concurrency first).
pub(super) fn charts(report: &Report) -> Vec<Chart> {
    let mut keys = phase_keys(report, |p| {
        !p.series.is_empty() && (p.kind != PhaseKind::Ycsb || !per_operation(p))
    });
    keys.sort_by_key(|k| k.concurrency);
    keys.iter()
        .filter_map(|k| timeline_chart(report, k))
        .take(MAX_TIMELINE_CHARTS)
        .collect()
}

/// One store's runs of a phase, as drawn over time.
pub(super) struct StoreRuns {
    pub(super) store: usize,
    /// Each run's intervals (runs with nothing to draw left out).
    pub(super) runs: Vec<Vec<TimePoint>>,
    /// The run drawn bold: the one whose overall rate is the median.
    pub(super) median: usize,
    /// That run's overall ops/s.
    pub(super) rate: f64,
    /// The runs' interval widths (ms).
    pub(super) intervals: Vec<f64>,
}

pub(super) fn timeline_chart(report: &Report, key: &PhaseKey) -> Option<Chart> {
    let mut shown: Vec<StoreRuns> = Vec::new();
    for (i, s) in report.stores.iter().enumerate() {
        let Some(p) = key.find(s) else { continue };
        let runs: Vec<(&Series, Vec<TimePoint>)> = p
            .series
            .iter()
            .map(|r| (r, timeline_points(r)))
            .filter(|(_, pts)| pts.iter().any(|t| positive(t.ops_per_s)))
            .collect();
        let rates: Vec<f64> = runs.iter().map(|(r, _)| run_rate(r)).collect();
        let Some(median) = median_run(&rates) else {
            continue;
        };
        shown.push(StoreRuns {
            store: i,
            intervals: runs.iter().map(|(r, _)| r.interval_ms).collect(),
            runs: runs.into_iter().map(|(_, pts)| pts).collect(),
            median,
            rate: rates[median],
        });
    }
    if shown.is_empty() {
        return None;
    }
    let points = || shown.iter().flat_map(|s| s.runs.iter().flatten());
    let end_ms = points()
        .map(|t| t.end_ms)
        .filter(|v| positive(*v))
        .fold(0.0, f64::max);
    let (div, unit) = time_unit(end_ms);
    let x_max = if positive(end_ms / div) {
        end_ms / div
    } else {
        1.0
    };
    let rates: Vec<f64> = points().map(|t| t.ops_per_s).collect();
    let totals: Vec<f64> = shown.iter().map(|s| s.rate).collect();
    let ops_scale = match positive_range(&rates) {
        Some((lo, hi)) if wants_log(&totals) => Scale::log(lo / 1.3, hi * 1.3),
        _ => Scale::linear(&rates),
    };
    let p99s: Vec<f64> = points().map(|t| t.p99_us).collect();
    let p99_scale = positive_range(&p99s).map(|(lo, hi)| Scale::log(lo / 1.3, hi * 1.3));

    // Thin lines first, the bold ones over them.
    let lines = |figure: fn(&TimePoint) -> f64| -> Vec<Line> {
        let line = |s: &StoreRuns, k: usize| {
            let color = store_color(report, s.store);
            let bold = k == s.median;
            Line {
                color: if bold { color } else { tint(color, 0.45) },
                width: if bold { 2 } else { 1 },
                points: s.runs[k]
                    .iter()
                    .map(|t| (t.mid_ms / div, figure(t)))
                    .collect(),
                dots: false,
            }
        };
        let thin = shown.iter().flat_map(|s| {
            (0..s.runs.len())
                .filter(|&k| k != s.median)
                .map(move |k| (s, k))
        });
        let bold = shown.iter().map(|s| (s, s.median));
        thin.chain(bold).map(|(s, k)| line(s, k)).collect()
    };
    let marks: Vec<(f64, f64)> = points()
        .filter(|t| t.errors > 0)
        .map(|t| (t.mid_ms / div, t.ops_per_s))
        .collect();

    let mut notes = Vec::new();
    if shown.iter().any(|s| s.runs.len() > 1) {
        notes.push(
            "bold line: each store's median run (by its overall ops/s), thin lines: its other runs"
                .to_string(),
        );
    }
    if let Some((lo, hi)) = positive_range(
        &shown
            .iter()
            .flat_map(|s| s.intervals.clone())
            .collect::<Vec<_>>(),
    ) {
        let width = if hi > lo * 1.001 {
            format!("{} to {}", duration_label(lo), duration_label(hi))
        } else {
            duration_label(lo)
        };
        notes.push(format!("a point per interval of {width}"));
    }
    if !marks.is_empty() {
        notes.push("red dot: an interval with errors".to_string());
    }
    let per_line = ((WIDTH - 2 * MARGIN) as f64 / text_width("x", SMALL_SIZE)) as usize;
    let notes = pack(&notes, per_line);

    let x_ticks = nice_ticks(0.0, x_max, 6);
    let x_desc = format!("time since the phase start ({unit})");
    let ops = Panel {
        caption: None,
        x: 0.0..x_max,
        x_ticks: x_ticks.clone(),
        x_fmt: &grouped,
        x_desc: if p99_scale.is_some() { "" } else { &x_desc },
        scale: ops_scale,
        y_desc: format!("ops/s{}", ops_scale.suffix()),
        y_fmt: human_count,
        lines: lines(|t| t.ops_per_s),
        zeros: true,
        marks,
    };
    let p99 = p99_scale.map(|scale| Panel {
        caption: None,
        x: 0.0..x_max,
        x_ticks,
        x_fmt: &grouped,
        x_desc: &x_desc,
        scale,
        y_desc: "p99 latency (µs, log scale)".to_string(),
        y_fmt: grouped,
        lines: lines(|t| t.p99_us),
        zeros: false,
        marks: Vec::new(),
    });
    let stores: Vec<usize> = shown.iter().map(|s| s.store).collect();
    let title = format!(
        "Throughput over time: {}, concurrency {}",
        key.name(),
        key.concurrency
    );
    let file = format!("timeline-{}-c{}.svg", slug(&key.name()), key.concurrency);
    let svg = render_sized(TIMELINE_HEIGHT, |root| {
        let plot = frame(root, report, &title, &stores, Swatch::Line)?;
        let (note_area, plot) = plot.split_vertically(LINE_HEIGHT * notes.len() as i32 + 6);
        let note_style = style(SMALL_SIZE, MUTED, HPos::Center, VPos::Top);
        for (k, line) in notes.iter().enumerate() {
            note_area.draw_text(
                line,
                &note_style,
                (WIDTH as i32 / 2, 2 + LINE_HEIGHT * k as i32),
            )?;
        }
        match &p99 {
            Some(p99) => {
                let (_, h) = plot.dim_in_pixel();
                let (top, bottom) = plot.split_vertically(h * 3 / 5);
                draw_panel(&top, &ops)?;
                draw_panel(&bottom, p99)
            }
            None => draw_panel(&plot, &ops),
        }
    })?;
    Some(Chart { file, title, svg })
}

/// One interval of a run's time series, as drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct TimePoint {
    /// The interval's middle and end, in ms from the phase's start.
    pub(super) mid_ms: f64,
    pub(super) end_ms: f64,
    pub(super) ops_per_s: f64,
    pub(super) p99_us: f64,
    pub(super) errors: u64,
}

/// A run's intervals to draw, from [`Series::rates`]: the last one left out when it is
/// narrower than [`MIN_LAST_WIDTH`] of an interval (its rate is noise) or its width is
/// unknown; nothing when the interval width is not a positive number.
pub(super) fn timeline_points(series: &Series) -> Vec<TimePoint> {
    let interval = series.interval_ms;
    if !positive(interval) {
        return Vec::new();
    }
    let n = series.points.len();
    series
        .rates()
        .into_iter()
        .zip(&series.points)
        .enumerate()
        .filter_map(|(i, ((from, rate), p))| {
            // As `Series::rates` cuts it (an unknown span stays NaN, where `f64::min`
            // would make it a whole interval).
            let width = if i + 1 == n {
                (series.span_ms - from).clamp(0.0, interval)
            } else {
                interval
            };
            let keep = width >= MIN_LAST_WIDTH * interval && from.is_finite() && !rate.is_nan();
            keep.then_some(TimePoint {
                mid_ms: from + width / 2.0,
                end_ms: from + width,
                ops_per_s: rate.max(0.0),
                p99_us: p.p99_us,
                errors: p.errors,
            })
        })
        .collect()
}

/// A run's overall ops/s: its operations over its span (over its intervals when the span is
/// not known); 0 when neither tells.
pub(super) fn run_rate(series: &Series) -> f64 {
    let ops: f64 = series.points.iter().map(|p| p.ops as f64).sum();
    let ms = if positive(series.span_ms) {
        series.span_ms
    } else {
        series.points.len() as f64 * series.interval_ms
    };
    let rate = ops / (ms / 1000.0);
    if rate.is_finite() { rate } else { 0.0 }
}

/// The index of the median of `rates` (the lower one of an even count); `None` when empty.
pub(super) fn median_run(rates: &[f64]) -> Option<usize> {
    let mut order: Vec<usize> = (0..rates.len()).collect();
    order.sort_by(|&a, &b| rates[a].total_cmp(&rates[b]));
    order.get(rates.len().saturating_sub(1) / 2).copied()
}
