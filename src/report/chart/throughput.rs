//! The throughput chart: ops/s per phase, one bar per store, per suite (split over several
//! charts when a suite has many phases).

use std::ops::Range;

use super::axis::{Scale, positive};
use super::bars::{Bar, BarChart, Group, draw_bars};
use super::frame::{Chart, render};
use super::labels::{count_with, human_count};
use super::palette::store_color;
use super::phases::{PhaseKey, Suite, phase_keys, whisker};
use crate::report::model::Report;

/// Phases in one throughput chart; more are split over several charts.
pub(super) const MAX_GROUPS: usize = 8;

/// Ops/s per phase, one bar per store, per suite (split when a suite has many phases).
pub(super) fn charts(report: &Report) -> Vec<Chart> {
    let mut out = Vec::new();
    for suite in Suite::ALL {
        let keys = phase_keys(report, |p| Suite::of(p.kind) == suite);
        let keys: Vec<PhaseKey> = keys
            .into_iter()
            .filter(|k| {
                report
                    .stores
                    .iter()
                    .any(|s| k.find(s).is_some_and(|p| positive(p.ops_per_s)))
            })
            .collect();
        let parts = chunks(keys.len(), MAX_GROUPS);
        for (n, range) in parts.iter().enumerate() {
            let keys = &keys[range.clone()];
            let stores: Vec<usize> = (0..report.stores.len())
                .filter(|&i| {
                    keys.iter().any(|k| {
                        k.find(&report.stores[i])
                            .is_some_and(|p| positive(p.ops_per_s))
                    })
                })
                .collect();
            let groups: Vec<Group> = keys
                .iter()
                .map(|k| Group {
                    label: k.label(),
                    bars: stores
                        .iter()
                        .map(|&i| {
                            let p = k.find(&report.stores[i])?;
                            // A client-bound figure is the client's limit: starred.
                            let star = if p.client_bound.is_some() { "*" } else { "" };
                            Some(Bar {
                                value: p.ops_per_s,
                                color: store_color(report, i),
                                whisker: whisker(p),
                                notes: vec![
                                    format!("{}{star}", count_with(p.ops_per_s, 3)),
                                    format!("{}{star}", count_with(p.ops_per_s, 2)),
                                ],
                                sub: None,
                                lower: None,
                            })
                        })
                        .collect(),
                })
                .collect();
            let bars: Vec<f64> = groups.iter().flat_map(Group::values).collect();
            let extents: Vec<f64> = groups
                .iter()
                .flat_map(|g| g.bars.iter().flatten())
                .filter_map(|b| b.whisker)
                .flat_map(|(lo, hi)| [lo, hi])
                .collect();
            let scale = Scale::for_bars(&bars, &extents);
            let client_bound = keys.iter().any(|k| {
                stores.iter().any(|&i| {
                    k.find(&report.stores[i])
                        .is_some_and(|p| p.client_bound.is_some())
                })
            });
            let (file, mut title) = if parts.len() > 1 {
                (
                    format!("throughput-{}-{}.svg", suite.name(), n + 1),
                    format!(
                        "Throughput per phase ({} suite, part {} of {})",
                        suite.name(),
                        n + 1,
                        parts.len()
                    ),
                )
            } else {
                (
                    format!("throughput-{}.svg", suite.name()),
                    format!("Throughput per phase ({} suite)", suite.name()),
                )
            };
            if client_bound && title.ends_with(')') {
                // The starred figures are the client's limit, not the store's.
                title.pop();
                title.push_str("; * = client-bound)");
            }
            let chart = BarChart {
                title: title.clone(),
                stores,
                groups,
                scale,
                y_desc: format!("ops/s{}", scale.suffix()),
                x_desc: suite.x_desc(),
                y_fmt: human_count,
            };
            if let Some(svg) = render(|root| draw_bars(root, report, &chart)) {
                out.push(Chart { file, title, svg });
            }
        }
    }
    out
}

/// `n` items in at most `max` a part, the parts as even as can be.
pub(super) fn chunks(n: usize, max: usize) -> Vec<Range<usize>> {
    if n == 0 {
        return Vec::new();
    }
    let parts = n.div_ceil(max.max(1));
    let size = n.div_ceil(parts);
    (0..parts)
        .map(|k| k * size..((k + 1) * size).min(n))
        .filter(|r| !r.is_empty())
        .collect()
}
