//! The scaling charts: ops/s and p99 against concurrency, one line per store, for each
//! search phase (and YCSB operation) measured at two or more concurrency levels.

use std::collections::BTreeSet;

use super::axis::{Scale, positive};
use super::frame::{Chart, Swatch, frame, render};
use super::labels::{grouped, human_count, slug};
use super::palette::store_color;
use super::panel::{Line, Panel, draw_panel};
use super::phases::{PhaseKey, per_operation, phase_keys};
use crate::report::model::{PhaseKind, PhaseResult, Report, StoreResult};
use crate::workload::levels::Concurrency;

pub(super) const MAX_SCALING_CHARTS: usize = 12;

/// Ops/s and p99 against concurrency, one line per store, for each search phase (and
/// YCSB operation) measured at two or more concurrency levels.
pub(super) fn charts(report: &Report) -> Vec<Chart> {
    let asked: BTreeSet<u32> = report.plan.concurrency.iter().map(|l| l.get()).collect();
    if asked.len() < 2 {
        return Vec::new();
    }
    let mut phases: Vec<(PhaseKind, String)> = Vec::new();
    for k in phase_keys(report, |p| p.kind != PhaseKind::Insert && per_operation(p)) {
        if !phases
            .iter()
            .any(|(kind, size)| *kind == k.kind && *size == k.size)
        {
            phases.push((k.kind, k.size));
        }
    }
    phases
        .iter()
        .filter_map(|(kind, size)| scaling_chart(report, *kind, size))
        .take(MAX_SCALING_CHARTS)
        .collect()
}

pub(super) fn scaling_chart(report: &Report, kind: PhaseKind, size: &str) -> Option<Chart> {
    let levels: Vec<u32> = report
        .stores
        .iter()
        .flat_map(|s| &s.phases)
        .filter(|p| p.kind == kind && p.size.name == size)
        .map(|p| p.concurrency.get())
        .collect::<BTreeSet<u32>>()
        .into_iter()
        .collect();
    if levels.len() < 2 {
        return None;
    }
    let curve = |s: &StoreResult, figure: fn(&PhaseResult) -> f64| -> Vec<(f64, f64)> {
        levels
            .iter()
            .enumerate()
            .filter_map(|(x, &c)| {
                let y = figure(s.phase_at(kind, size, Concurrency::new(c)?)?);
                positive(y).then_some((x as f64, y))
            })
            .collect()
    };
    let mut stores = Vec::new();
    let mut ops = Vec::new();
    let mut p99 = Vec::new();
    for (i, s) in report.stores.iter().enumerate() {
        let (o, l) = (curve(s, |p| p.ops_per_s), curve(s, |p| p.response_us().p99));
        if o.is_empty() && l.is_empty() {
            continue;
        }
        stores.push(i);
        ops.push(Line::main(store_color(report, i), o));
        p99.push(Line::main(store_color(report, i), l));
    }
    if stores.is_empty() {
        return None;
    }
    let values = |lines: &[Line]| -> Vec<f64> {
        lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1))
            .collect()
    };
    let (ops_scale, p99_scale) = (
        Scale::for_lines(&values(&ops)),
        Scale::for_lines(&values(&p99)),
    );
    let name = PhaseKey::name_of(kind, size);
    let title = format!("Scaling with concurrency: {name}");
    let file = format!("scaling-{}.svg", slug(&name));
    let level_label = |x: f64| -> String {
        levels
            .get(x.round().max(0.0) as usize)
            .map_or_else(String::new, u32::to_string)
    };
    let x = -0.25..(levels.len() - 1) as f64 + 0.25;
    let x_ticks: Vec<f64> = (0..levels.len()).map(|i| i as f64).collect();
    let left = Panel {
        caption: Some("throughput"),
        x: x.clone(),
        x_ticks: x_ticks.clone(),
        x_fmt: &level_label,
        x_desc: "concurrency (tasks)",
        scale: ops_scale,
        y_desc: format!("ops/s{}", ops_scale.suffix()),
        y_fmt: human_count,
        lines: ops,
        zeros: false,
        marks: Vec::new(),
    };
    let right = Panel {
        caption: Some("p99 latency"),
        x,
        x_ticks,
        x_fmt: &level_label,
        x_desc: "concurrency (tasks)",
        scale: p99_scale,
        y_desc: if p99_scale.log {
            "p99 latency (µs, log scale)".to_string()
        } else {
            "p99 latency (µs)".to_string()
        },
        y_fmt: grouped,
        lines: p99,
        zeros: false,
        marks: Vec::new(),
    };
    let svg = render(|root| {
        let plot = frame(root, report, &title, &stores, Swatch::Line)?;
        let (w, _) = plot.dim_in_pixel();
        let (a, b) = plot.split_horizontally(w / 2);
        draw_panel(&a, &left)?;
        draw_panel(&b, &right)
    })?;
    Some(Chart { file, title, svg })
}
