//! The latency charts: latency against percentile on a nines scale, one line per store,
//! for each phase that measured one kind of operation.

use super::axis::{MAX_QUANTILE, Scale, nines, nines_label, positive, positive_range, quantile};
use super::frame::{Chart, Swatch, frame, render};
use super::labels::{grouped, slug};
use super::palette::store_color;
use super::panel::{Line, Panel, draw_panel};
use super::phases::{PhaseKey, per_operation, phase_keys};
use crate::report::model::{PhaseResult, Report, decode_histogram};

pub(super) const MAX_LATENCY_CHARTS: usize = 12;

/// Latency against percentile, one line per store, for the insert and search phases and
/// YCSB's operations (at most [`MAX_LATENCY_CHARTS`], the lowest concurrency first).
pub(super) fn charts(report: &Report) -> Vec<Chart> {
    let mut keys = phase_keys(report, per_operation);
    keys.sort_by_key(|k| k.concurrency);
    keys.iter()
        .filter_map(|k| latency_chart(report, k))
        .take(MAX_LATENCY_CHARTS)
        .collect()
}

pub(super) fn latency_chart(report: &Report, key: &PhaseKey) -> Option<Chart> {
    let series: Vec<(usize, Vec<(f64, f64)>)> = report
        .stores
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let points = latency_points(key.find(s)?);
            (!points.is_empty()).then_some((i, points))
        })
        .collect();
    let ys: Vec<f64> = series
        .iter()
        .flat_map(|(_, pts)| pts.iter().map(|p| p.1))
        .collect();
    let (min, max) = positive_range(&ys)?;
    let stores: Vec<usize> = series.iter().map(|s| s.0).collect();
    let open_loop = report
        .stores
        .iter()
        .filter_map(|s| key.find(s))
        .any(|p| p.open_loop.is_some());
    let title = format!(
        "Latency percentiles: {}, concurrency {}",
        key.name(),
        key.concurrency
    );
    let file = format!("latency-{}-c{}.svg", slug(&key.name()), key.concurrency);
    let ticks = vec![0.0, nines(0.5), 1.0, 2.0, 3.0, 4.0];
    let panel = Panel {
        caption: None,
        x: -0.05..nines(MAX_QUANTILE) + 0.05,
        x_ticks: ticks,
        x_fmt: &nines_label,
        x_desc: "percentile (%), nines scale",
        scale: Scale::log(min / 1.3, max * 1.3),
        y_desc: if open_loop {
            "response time from when due (µs, log scale)"
        } else {
            "latency (µs, log scale)"
        }
        .to_string(),
        y_fmt: grouped,
        lines: series
            .into_iter()
            .map(|(i, pts)| Line::main(store_color(report, i), pts))
            .collect(),
        zeros: false,
        marks: Vec::new(),
    };
    let svg = render(|root| {
        let plot = frame(root, report, &title, &stores, Swatch::Line)?;
        draw_panel(&plot, &panel)
    })?;
    Some(Chart { file, title, svg })
}

/// A phase's latency curve as (nines, microseconds): from its histogram at many quantiles,
/// else from its recorded percentiles (the maximum left out: it sits at infinite nines).
pub(super) fn latency_points(p: &PhaseResult) -> Vec<(f64, f64)> {
    if let Some(h) = p
        .response_histogram()
        .and_then(|h| decode_histogram(h).ok())
        && !h.is_empty()
    {
        let steps = 80;
        let top = nines(MAX_QUANTILE);
        let points: Vec<(f64, f64)> = (0..=steps)
            .map(|i| {
                let x = top * f64::from(i) / f64::from(steps);
                (x, h.value_at_quantile(quantile(x)) as f64 / 1000.0)
            })
            .filter(|(_, us)| positive(*us))
            .collect();
        if !points.is_empty() {
            return points;
        }
    }
    let l = p.response_us();
    [
        (0.0, l.min),
        (0.5, l.p50),
        (0.9, l.p90),
        (0.95, l.p95),
        (0.99, l.p99),
        (0.999, l.p999),
        (0.9999, l.p9999),
    ]
    .into_iter()
    .filter(|(_, us)| positive(*us))
    .map(|(q, us)| (nines(q), us))
    .collect()
}
