//! The verdict's chart: each store's throughput over the best one's, per phase (the
//! "vs best" column of the verdict), with the spread of its runs as whiskers.

use super::axis::Scale;
use super::bars::{Bar, BarChart, Group, draw_bars};
use super::frame::{Chart, render};
use super::palette::store_color;
use super::phases::{Suite, whisker};
use crate::report::model::Report;
use crate::report::verdict::{self, CHART_FILE, CHART_TITLE};

/// Bars of the ratio to the best store, one group per phase of the verdict; none when no
/// phase was ranked or none had a throughput to divide by.
pub(super) fn chart(report: &Report) -> Option<Chart> {
    let g = verdict::glance(report);
    let first = g.phases.first()?;
    let stores: Vec<usize> = (0..report.stores.len())
        .filter(|&i| {
            g.phases
                .iter()
                .any(|v| v.entries.iter().any(|e| e.index == i))
        })
        .collect();
    let groups: Vec<Group> = g
        .phases
        .iter()
        .map(|v| {
            let best = v.entries.first().map_or(f64::NAN, |e| e.phase.ops_per_s);
            Group {
                label: v.name.clone(),
                bars: stores
                    .iter()
                    .map(|&i| {
                        let e = v.entries.iter().find(|e| e.index == i)?;
                        e.ratio.is_finite().then(|| Bar {
                            value: e.ratio,
                            color: store_color(report, i),
                            whisker: whisker(e.phase).map(|(lo, hi)| (lo / best, hi / best)),
                            notes: vec![format!("{:.2}x", e.ratio), format!("{:.1}x", e.ratio)],
                            sub: None,
                            lower: None,
                        })
                    })
                    .collect(),
            }
        })
        .collect();
    if groups.iter().all(|g| g.bars.iter().all(Option::is_none)) {
        return None;
    }
    let values: Vec<f64> = groups
        .iter()
        .flat_map(|g| g.bars.iter().flatten())
        .flat_map(|b| {
            let (lo, hi) = b.whisker.unwrap_or((b.value, b.value));
            [b.value, lo, hi]
        })
        .collect();
    let chart = BarChart {
        title: CHART_TITLE.to_string(),
        stores,
        groups,
        scale: Scale::linear(&values),
        y_desc: "ops/s over the fastest store's".to_string(),
        x_desc: Suite::of(first.kind).x_desc(),
        y_fmt: ratio,
    };
    let svg = render(|root| draw_bars(root, report, &chart))?;
    Some(Chart {
        file: CHART_FILE.to_string(),
        title: CHART_TITLE.to_string(),
        svg,
    })
}

/// An axis label: `0x`, `0.25x`, `0.5x`, `1x`.
fn ratio(v: f64) -> String {
    let digits = format!("{v:.2}");
    format!("{}x", digits.trim_end_matches('0').trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    #[test]
    fn axis_labels_keep_the_ticks_digits() {
        let labels: Vec<String> = [0.0, 0.25, 0.5, 1.0, 1.2].map(super::ratio).into();
        assert_eq!(labels, ["0x", "0.25x", "0.5x", "1x", "1.2x"]);
    }
}
