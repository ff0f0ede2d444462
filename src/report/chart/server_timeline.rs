//! The server over a phase's time: the CPU cores it kept busy and its memory, a line per
//! store (its first measured run), beside the throughput timeline of the same phase.

use super::axis::{Scale, nice_ticks, positive, time_unit};
use super::frame::{Chart, Swatch, frame, render_sized};
use super::labels::{grouped, short, size_unit, slug};
use super::palette::store_color;
use super::panel::{Line, Panel, draw_panel};
use super::phases::{PhaseKey, phase_keys};
use super::timeline::{MAX_TIMELINE_CHARTS, TIMELINE_HEIGHT};
use crate::report::model::{Report, ServerPoint};

/// The server's first measured run of a phase, where it was read while the phase ran.
fn points(p: &crate::report::model::PhaseResult) -> Option<&[ServerPoint]> {
    let run = p.server.as_ref()?.series.first()?;
    (!run.is_empty()).then_some(run.as_slice())
}

/// Server CPU and memory over time for each phase whose server was read while it ran (at
/// most [`MAX_TIMELINE_CHARTS`], the lowest concurrency first).
pub(super) fn charts(report: &Report) -> Vec<Chart> {
    let mut keys = phase_keys(report, |p| points(p).is_some());
    keys.sort_by_key(|k| k.concurrency);
    keys.iter()
        .filter_map(|k| chart(report, k))
        .take(MAX_TIMELINE_CHARTS)
        .collect()
}

fn chart(report: &Report, key: &PhaseKey) -> Option<Chart> {
    let shown: Vec<(usize, &[ServerPoint])> = report
        .stores
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((i, points(key.find(s)?)?)))
        .collect();
    if shown.is_empty() {
        return None;
    }
    let all = || shown.iter().flat_map(|(_, pts)| pts.iter());
    let end_ms = all().map(|p| p.t_ms).fold(0.0, f64::max);
    let (div, unit) = time_unit(end_ms);
    let x_max = if positive(end_ms / div) {
        end_ms / div
    } else {
        1.0
    };
    let max_memory = all().map(|p| p.memory_bytes).max().unwrap_or(0);
    let (mem_div, mem_unit) = size_unit(max_memory.max(1));
    let lines = |figure: &dyn Fn(&ServerPoint) -> f64| -> Vec<Line> {
        shown
            .iter()
            .map(|(i, pts)| {
                Line::main(
                    store_color(report, *i),
                    pts.iter().map(|p| (p.t_ms / div, figure(p))).collect(),
                )
            })
            .collect()
    };
    let cores: Vec<f64> = all().map(|p| p.cpu_cores).chain([0.0]).collect();
    let memory: Vec<f64> = all()
        .map(|p| p.memory_bytes as f64 / mem_div)
        .chain([0.0])
        .collect();
    let x_ticks = nice_ticks(0.0, x_max, 6);
    let x_desc = format!("time since the phase start ({unit})");
    let cpu = Panel {
        caption: None,
        x: 0.0..x_max,
        x_ticks: x_ticks.clone(),
        x_fmt: &grouped,
        x_desc: "",
        scale: Scale::linear(&cores),
        y_desc: "server CPU (cores busy)".to_string(),
        y_fmt: short,
        lines: lines(&|p| p.cpu_cores),
        zeros: true,
        marks: Vec::new(),
    };
    let mem = Panel {
        caption: None,
        x: 0.0..x_max,
        x_ticks,
        x_fmt: &grouped,
        x_desc: &x_desc,
        scale: Scale::linear(&memory),
        y_desc: format!("server memory ({mem_unit})"),
        y_fmt: short,
        lines: lines(&|p| p.memory_bytes as f64 / mem_div),
        zeros: true,
        marks: Vec::new(),
    };
    let stores: Vec<usize> = shown.iter().map(|(i, _)| *i).collect();
    let title = format!(
        "The server over time: {}, concurrency {}",
        key.name(),
        key.concurrency
    );
    let file = format!("server-{}-c{}.svg", slug(&key.name()), key.concurrency);
    let svg = render_sized(TIMELINE_HEIGHT, |root| {
        let plot = frame(root, report, &title, &stores, Swatch::Line)?;
        let (_, h) = plot.dim_in_pixel();
        let (top, bottom) = plot.split_vertically(h / 2);
        draw_panel(&top, &cpu)?;
        draw_panel(&bottom, &mem)
    })?;
    Some(Chart { file, title, svg })
}
