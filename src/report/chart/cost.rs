//! The cost chart: each store's CPU time per operation in each phase, the client's part
//! beneath the server's, where the server's was read.

use super::axis::Scale;
use super::bars::{Bar, BarChart, Group, draw_bars};
use super::frame::{Chart, render};
use super::labels::short;
use super::palette::{store_color, tint};
use super::phases::phase_keys;
use crate::report::format::human_us;
use crate::report::model::{CostSource, PhaseResult, Report};

/// The client's and the server's CPU per operation of a phase, where the server's was
/// read (an embedded store's is the client's own).
fn split(p: &PhaseResult) -> Option<(f64, f64)> {
    let cost = p.server.as_ref()?;
    match cost.source {
        CostSource::ClientProcess => Some((p.cpu_us_per_op, 0.0)),
        _ => Some((p.cpu_us_per_op, cost.cpu_us_per_op()?)),
    }
}

/// CPU time per operation, client beneath server, per phase and store; none when no phase
/// has its server's CPU.
pub(super) fn chart(report: &Report) -> Option<Chart> {
    let keys = phase_keys(report, |p| split(p).is_some());
    let stores: Vec<usize> = (0..report.stores.len())
        .filter(|&i| {
            keys.iter().any(|k| {
                k.find(&report.stores[i])
                    .is_some_and(|p| split(p).is_some())
            })
        })
        .collect();
    if keys.is_empty() || stores.is_empty() {
        return None;
    }
    let groups: Vec<Group> = keys
        .iter()
        .map(|k| Group {
            label: k.label(),
            bars: stores
                .iter()
                .map(|&i| {
                    let (client, server) = split(k.find(&report.stores[i])?)?;
                    let color = store_color(report, i);
                    Some(Bar {
                        value: client + server,
                        color: tint(color, 0.55),
                        whisker: None,
                        notes: vec![human_us(client + server)],
                        sub: None,
                        lower: Some((client, color)),
                    })
                })
                .collect(),
        })
        .collect();
    let values: Vec<f64> = groups.iter().flat_map(Group::values).collect();
    let title = "CPU time per operation, client and server".to_string();
    let chart = BarChart {
        title: title.clone(),
        stores,
        groups,
        scale: Scale::linear(&values),
        y_desc: "CPU us per operation".to_string(),
        x_desc: "phase (darker: the client's part; lighter, above it: the server's)",
        y_fmt: short,
    };
    let svg = render(|root| draw_bars(root, report, &chart))?;
    Some(Chart {
        file: "cpu-per-op.svg".to_string(),
        title,
        svg,
    })
}
