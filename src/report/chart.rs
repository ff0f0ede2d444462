//! Charts of a run as SVG documents: throughput per phase, on-disk sizes, latency
//! percentile curves, throughput over time and scaling with concurrency. Pure functions of
//! a [`Report`], no I/O.
//!
//! Text is written as SVG `<text>` elements. Without a font of its own, plotters only
//! estimates how wide a text is, so labels are wrapped and spaced with some slack. Every
//! chart paints its own white background and dark text, so it reads the same on light and
//! dark pages.

use std::collections::BTreeSet;
use std::error::Error;
use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::format::human_size;
use super::model::{PhaseKind, PhaseResult, Report, Series, StoreResult};
use crate::catalog::StoreKind;

/// One chart of a run: the file it is written to, its title, the SVG document.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// File name: `[a-z0-9-]` and `.svg`, the same from run to run.
    pub file: String,
    /// What the chart shows, as its heading says.
    pub title: String,
    /// The whole SVG document.
    pub svg: String,
}

/// Every chart the run's figures allow, in reading order.
pub fn charts(report: &Report) -> Vec<Chart> {
    let mut all = throughput(report);
    all.extend(sizes(report));
    all.extend(latency(report));
    all.extend(timeline(report));
    all.extend(scaling(report));
    unique_files(&mut all);
    all
}

const WIDTH: u32 = 900;
const HEIGHT: u32 = 480;
/// Throughput over time is taller: a p99 panel sits under it.
const TIMELINE_HEIGHT: u32 = 640;
const FONT: &str = "sans-serif";
/// Font sizes as plotters takes them (the SVG says size / 1.24).
const TITLE_SIZE: f64 = 22.0;
const LABEL_SIZE: f64 = 14.0;
const SMALL_SIZE: f64 = 12.0;
const NOTE_SIZE: f64 = 11.0;
/// Text, secondary text, grid lines.
const INK: RGBColor = RGBColor(33, 33, 33);
const MUTED: RGBColor = RGBColor(85, 85, 85);
const GRID: RGBColor = RGBColor(222, 222, 222);
const MARGIN: u32 = 12;
const Y_LABEL_AREA: u32 = 78;
const LINE_HEIGHT: i32 = 15;
/// Phases in one throughput chart; more are split over several charts.
const MAX_GROUPS: usize = 8;
const MAX_LATENCY_CHARTS: usize = 12;
const MAX_SCALING_CHARTS: usize = 12;
const MAX_TIMELINE_CHARTS: usize = 12;
/// A time series' last interval, cut short where the phase ended, is left out when it is
/// narrower than this share of an interval: its rate is noise.
const MIN_LAST_WIDTH: f64 = 0.1;
/// Spans from this long (ms) read in seconds on a time axis, shorter ones in ms.
const SECONDS_FROM_MS: f64 = 2000.0;
/// Marks an interval with errors.
const ERROR_RED: RGBColor = RGBColor(0xd6, 0x00, 0x1c);
/// The highest quantile a latency curve reaches (four nines).
const MAX_QUANTILE: f64 = 0.9999;
/// One colour per store kind (in [`StoreKind::all`] order), then for unknown names. Dark
/// enough for thin lines on white.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x3f, 0x9e, 0x9a),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xc9, 0xa2, 0x27),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x8a, 0x98),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0x7f, 0x7f, 0x7f),
];

type Drawn = Result<(), Box<dyn Error>>;
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

// ---------------------------------------------------------------------------------------
// The charts

/// Ops/s per phase, one bar per store, per suite (split when a suite has many phases).
fn throughput(report: &Report) -> Vec<Chart> {
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

/// On-disk size of each store before and after its inserts.
fn sizes(report: &Report) -> Option<Chart> {
    let stores: Vec<usize> = (0..report.stores.len())
        .filter(|&i| {
            let s = &report.stores[i];
            s.initial_size_bytes.is_some() || s.final_size_bytes.is_some()
        })
        .collect();
    let max = stores
        .iter()
        .flat_map(|&i| {
            let s = &report.stores[i];
            [s.initial_size_bytes, s.final_size_bytes]
        })
        .flatten()
        .max()?;
    if max == 0 {
        return None;
    }
    let (unit, unit_name) = size_unit(max);
    let groups: Vec<Group> = stores
        .iter()
        .map(|&i| {
            let s = &report.stores[i];
            let color = store_color(report, i);
            let bar = |bytes: Option<u64>, color: RGBColor, sub: &'static str| {
                bytes.map(|b| Bar {
                    value: b as f64 / unit,
                    color,
                    whisker: None,
                    notes: vec![human_size(b)],
                    sub: Some(sub),
                })
            };
            Group {
                label: s.store.clone(),
                bars: vec![
                    bar(s.initial_size_bytes, tint(color, 0.55), "before"),
                    bar(s.final_size_bytes, color, "after"),
                ],
            }
        })
        .collect();
    let values: Vec<f64> = groups.iter().flat_map(Group::values).collect();
    let title = "On-disk size before and after the inserts".to_string();
    let chart = BarChart {
        title: title.clone(),
        stores,
        groups,
        scale: Scale::linear(&values),
        y_desc: format!("on-disk size ({unit_name})"),
        x_desc: "store (lighter bar: before the inserts)",
        y_fmt: short,
    };
    let svg = render(|root| draw_bars(root, report, &chart))?;
    Some(Chart {
        file: "sizes.svg".to_string(),
        title,
        svg,
    })
}

/// Latency against percentile, one line per store, for the insert and search phases and
/// YCSB's operations (at most [`MAX_LATENCY_CHARTS`], the lowest concurrency first).
fn latency(report: &Report) -> Vec<Chart> {
    let mut keys = phase_keys(report, per_operation);
    keys.sort_by_key(|k| k.concurrency);
    keys.iter()
        .filter_map(|k| latency_chart(report, k))
        .take(MAX_LATENCY_CHARTS)
        .collect()
}

fn latency_chart(report: &Report, key: &PhaseKey) -> Option<Chart> {
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
        y_desc: "latency (µs, log scale)".to_string(),
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

/// Ops/s over the phase's time (and p99 under it), one line per store, for each phase with
/// a time series: the classic phases, pool and driver tests, YCSB workload totals (at most
/// [`MAX_TIMELINE_CHARTS`], the lowest concurrency first).
fn timeline(report: &Report) -> Vec<Chart> {
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
struct StoreRuns {
    store: usize,
    /// Each run's intervals (runs with nothing to draw left out).
    runs: Vec<Vec<TimePoint>>,
    /// The run drawn bold: the one whose overall rate is the median.
    median: usize,
    /// That run's overall ops/s.
    rate: f64,
    /// The runs' interval widths (ms).
    intervals: Vec<f64>,
}

fn timeline_chart(report: &Report, key: &PhaseKey) -> Option<Chart> {
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

/// Ops/s and p99 against concurrency, one line per store, for each search phase (and
/// YCSB operation) measured at two or more concurrency levels.
fn scaling(report: &Report) -> Vec<Chart> {
    let asked: BTreeSet<u32> = report.plan.concurrency.iter().copied().collect();
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

fn scaling_chart(report: &Report, kind: PhaseKind, size: &str) -> Option<Chart> {
    let levels: Vec<u32> = report
        .stores
        .iter()
        .flat_map(|s| &s.phases)
        .filter(|p| p.kind == kind && p.size.name == size)
        .map(|p| p.concurrency)
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
                let y = figure(s.phase_at(kind, size, c)?);
                positive(y).then_some((x as f64, y))
            })
            .collect()
    };
    let mut stores = Vec::new();
    let mut ops = Vec::new();
    let mut p99 = Vec::new();
    for (i, s) in report.stores.iter().enumerate() {
        let (o, l) = (curve(s, |p| p.ops_per_s), curve(s, |p| p.latency_us.p99));
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

/// Whether a phase measured one kind of operation: the classic suite's inserts and
/// searches, YCSB's per-operation phases (`a READ`, not the workload's total `a`).
fn per_operation(p: &PhaseResult) -> bool {
    match p.kind {
        PhaseKind::Insert | PhaseKind::Search => true,
        PhaseKind::Ycsb => p.size.name.trim().contains(' '),
        PhaseKind::Driver | PhaseKind::Pool => false,
    }
}

// ---------------------------------------------------------------------------------------
// Phases and stores

/// The suites whose phases share a throughput chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Suite {
    Classic,
    Driver,
    Pool,
    Ycsb,
}

impl Suite {
    const ALL: [Suite; 4] = [Suite::Classic, Suite::Driver, Suite::Pool, Suite::Ycsb];

    fn of(kind: PhaseKind) -> Suite {
        match kind {
            PhaseKind::Insert | PhaseKind::Search => Suite::Classic,
            PhaseKind::Driver => Suite::Driver,
            PhaseKind::Pool => Suite::Pool,
            PhaseKind::Ycsb => Suite::Ycsb,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Suite::Classic => "classic",
            Suite::Driver => "driver",
            Suite::Pool => "pool",
            Suite::Ycsb => "ycsb",
        }
    }

    fn x_desc(self) -> &'static str {
        match self {
            Suite::Classic => "phase",
            Suite::Driver | Suite::Pool => "test",
            Suite::Ycsb => "workload and operation",
        }
    }
}

/// What tells one phase from another across stores.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PhaseKey {
    kind: PhaseKind,
    size: String,
    concurrency: u32,
}

impl PhaseKey {
    fn find<'r>(&self, store: &'r StoreResult) -> Option<&'r PhaseResult> {
        store.phase_at(self.kind, &self.size, self.concurrency)
    }

    /// `SEARCH tiny`, `YCSB a READ`, `PreparedQueryRow`.
    fn name(&self) -> String {
        Self::name_of(self.kind, &self.size)
    }

    fn name_of(kind: PhaseKind, size: &str) -> String {
        match kind {
            PhaseKind::Driver | PhaseKind::Pool => size.to_string(),
            _ => format!("{} {size}", kind.label()),
        }
    }

    /// The label under a bar group: `INSERT micro`, `SEARCH tiny c=4`, `a READ`, `a total`.
    fn label(&self) -> String {
        phase_label(self.kind, &self.size, self.concurrency)
    }
}

fn phase_label(kind: PhaseKind, size: &str, concurrency: u32) -> String {
    let mut label = match kind {
        PhaseKind::Insert | PhaseKind::Search => format!("{} {size}", kind.label()),
        PhaseKind::Ycsb if !size.trim().contains(' ') => format!("{size} total"),
        _ => size.to_string(),
    };
    // A driver test such as `PreparedExecConcurrent16` already says its concurrency.
    let n = concurrency.to_string();
    let says_it = size
        .strip_suffix(&n)
        .is_some_and(|rest| !rest.ends_with(|c: char| c.is_ascii_digit()));
    if concurrency > 1 && !says_it {
        label.push_str(&format!(" c={concurrency}"));
    }
    label
}

/// The report's distinct phases that `keep` accepts, in the order they first ran.
fn phase_keys(report: &Report, keep: impl Fn(&PhaseResult) -> bool) -> Vec<PhaseKey> {
    let mut keys: Vec<PhaseKey> = Vec::new();
    for p in report.stores.iter().flat_map(|s| &s.phases) {
        if !keep(p) {
            continue;
        }
        let key = PhaseKey {
            kind: p.kind,
            size: p.size.name.clone(),
            concurrency: p.concurrency,
        };
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

/// The store's colour: fixed per store kind, so a store looks the same in every run.
fn store_color(report: &Report, index: usize) -> RGBColor {
    let kinds = StoreKind::all();
    let slot = report
        .stores
        .get(index)
        .and_then(|s| kinds.iter().position(|k| k.name() == s.store))
        .unwrap_or(kinds.len() + index);
    PALETTE[slot % PALETTE.len()]
}

/// The legend's entries: each store's name and colour.
fn legend(report: &Report, stores: &[usize]) -> Vec<(String, RGBColor)> {
    stores
        .iter()
        .map(|&i| (report.stores[i].store.clone(), store_color(report, i)))
        .collect()
}

/// The footer's facts: the machine, each shown store's version, the durability asked for.
fn footer_parts(report: &Report, stores: &[usize]) -> Vec<String> {
    let m = &report.machine;
    let cpu = if m.cpu_model.trim().is_empty() {
        "unknown CPU"
    } else {
        m.cpu_model.trim()
    };
    let mut parts = vec![format!("machine: {cpu}, {} cores", m.cores)];
    for &i in stores {
        let s = &report.stores[i];
        if let Some(info) = &s.info {
            parts.push(format!("{}: {}", s.store, info.version));
        }
    }
    parts.push(format!("durability: {}", report.plan.durability));
    parts
}

/// The min and max of a phase's runs (ops/s), when it ran at least twice.
fn whisker(p: &PhaseResult) -> Option<(f64, f64)> {
    let runs: Vec<f64> = p
        .runs
        .iter()
        .map(|r| r.ops_per_s)
        .filter(|v| positive(*v))
        .collect();
    if runs.len() < 2 {
        return None;
    }
    positive_range(&runs)
}

/// A phase's latency curve as (nines, microseconds): from its histogram at many quantiles,
/// else from its recorded percentiles (the maximum left out: it sits at infinite nines).
fn latency_points(p: &PhaseResult) -> Vec<(f64, f64)> {
    if let Some(h) = p
        .histogram
        .as_deref()
        .and_then(|h| super::model::decode_histogram(h).ok())
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
    let l = &p.latency_us;
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

/// One interval of a run's time series, as drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
struct TimePoint {
    /// The interval's middle and end, in ms from the phase's start.
    mid_ms: f64,
    end_ms: f64,
    ops_per_s: f64,
    p99_us: f64,
    errors: u64,
}

/// A run's intervals to draw, from [`Series::rates`]: the last one left out when it is
/// narrower than [`MIN_LAST_WIDTH`] of an interval (its rate is noise) or its width is
/// unknown; nothing when the interval width is not a positive number.
fn timeline_points(series: &Series) -> Vec<TimePoint> {
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
fn run_rate(series: &Series) -> f64 {
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
fn median_run(rates: &[f64]) -> Option<usize> {
    let mut order: Vec<usize> = (0..rates.len()).collect();
    order.sort_by(|&a, &b| rates[a].total_cmp(&rates[b]));
    order.get(rates.len().saturating_sub(1) / 2).copied()
}

/// The unit a time axis spanning `span_ms` reads in: (ms per unit, its name). Seconds from
/// [`SECONDS_FROM_MS`] on, else milliseconds.
fn time_unit(span_ms: f64) -> (f64, &'static str) {
    if span_ms >= SECONDS_FROM_MS {
        (1000.0, "s")
    } else {
        (1.0, "ms")
    }
}

/// A duration given in ms, in ms below a second, else in s: `0.977 ms`, `31.3 ms`, `1 s`.
fn duration_label(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{} ms", short(ms))
    } else {
        format!("{} s", short(ms / 1000.0))
    }
}

// ---------------------------------------------------------------------------------------
// Pure helpers: scales, axes, units, labels, names

fn positive(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// The smallest and largest finite positive value.
fn positive_range(values: &[f64]) -> Option<(f64, f64)> {
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
fn wants_log(values: &[f64]) -> bool {
    positive_range(values).is_some_and(|(min, max)| max / min > 10.0)
}

/// A value axis: linear from zero, or logarithmic (plotted as log10 of the value).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Scale {
    log: bool,
    lo: f64,
    hi: f64,
}

impl Scale {
    /// Log when the bars differ more than 10x, else linear from zero; room for `extents`
    /// (whiskers) as well as the bars.
    fn for_bars(bars: &[f64], extents: &[f64]) -> Scale {
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
    fn for_lines(values: &[f64]) -> Scale {
        match positive_range(values) {
            Some((min, max)) if wants_log(values) => Scale::log(min / 1.3, max * 1.3),
            _ => Scale::linear(values),
        }
    }

    /// From zero to a little above the largest value.
    fn linear(values: &[f64]) -> Scale {
        let hi = positive_range(values).map_or(1.0, |(_, max)| max * 1.15);
        Scale {
            log: false,
            lo: 0.0,
            hi,
        }
    }

    /// From `lo` to `hi`, both made positive and apart.
    fn log(lo: f64, hi: f64) -> Scale {
        let lo = if positive(lo) { lo } else { 1.0 };
        let hi = if positive(hi) && hi > lo * 1.01 {
            hi
        } else {
            lo * 10.0
        };
        Scale { log: true, lo, hi }
    }

    /// Where a value sits on the axis (a value below the axis sits at its bottom).
    fn axis(&self, v: f64) -> f64 {
        if self.log { v.max(self.lo).log10() } else { v }
    }

    /// The inverse of [`Scale::axis`].
    fn value(&self, a: f64) -> f64 {
        if self.log { 10f64.powf(a) } else { a }
    }

    fn axis_range(&self) -> Range<f64> {
        self.axis(self.lo)..self.axis(self.hi)
    }

    /// Tick values: powers of ten (and 2x, 5x when there are few decades), or round steps.
    fn ticks(&self) -> Vec<f64> {
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

    fn suffix(&self) -> &'static str {
        if self.log { " (log scale)" } else { "" }
    }
}

/// Round tick values from `lo` to `hi`, about `target` of them.
fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
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
fn nines(q: f64) -> f64 {
    if q.is_nan() || q <= 0.0 {
        return 0.0;
    }
    -(1.0 - q.min(MAX_QUANTILE)).log10()
}

/// The inverse of [`nines`].
fn quantile(x: f64) -> f64 {
    (1.0 - 10f64.powf(-x)).clamp(0.0, MAX_QUANTILE)
}

/// A nines-axis tick as a percentile: `0`, `50`, `90`, `99`, `99.9`, `99.99`.
fn nines_label(x: f64) -> String {
    if x <= 1e-9 {
        return "0".to_string();
    }
    let decimals = (x.round() as i64 - 2).clamp(0, 6) as usize;
    format!("{:.*}", decimals, 100.0 * quantile(x))
}

/// A count with 3 significant digits and k/M/G: `950`, `2.5k`, `120k`, `1.23M`.
fn human_count(v: f64) -> String {
    count_with(v, 3)
}

/// A count with `digits` significant digits (or more, for hundreds) and k/M/G.
fn count_with(v: f64, digits: u32) -> String {
    let a = v.abs();
    let (div, suffix) = if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    format!("{}{suffix}", significant(v / div, digits))
}

/// A number with 3 significant digits, trailing zeros dropped: `120`, `2.5`, `0.25`.
fn short(v: f64) -> String {
    significant(v, 3)
}

/// A number with `digits` significant digits (all of its integer digits), trailing zeros
/// dropped.
fn significant(v: f64, digits: u32) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let magnitude = v.abs().log10().floor() as i64;
    let decimals = (i64::from(digits) - 1 - magnitude).clamp(0, 9) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A number with thousands separated, 3 significant digits below 1000: `12,500`, `2.5`.
fn grouped(v: f64) -> String {
    if !v.is_finite() || v.abs() < 1000.0 {
        return short(v);
    }
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 { format!("-{out}") } else { out }
}

/// The unit a size axis reads in, from its largest value: bytes, kB, MB or GB (binary
/// multiples, as [`human_size`]).
fn size_unit(max_bytes: u64) -> (f64, &'static str) {
    const KIB: f64 = 1024.0;
    let b = max_bytes as f64;
    if b < KIB {
        (1.0, "bytes")
    } else if b < KIB * KIB {
        (KIB, "kB")
    } else if b < KIB * KIB * KIB {
        (KIB * KIB, "MB")
    } else {
        (KIB * KIB * KIB, "GB")
    }
}

/// A name made file-safe: lowercase `[a-z0-9]` words joined by `-`.
fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "x".to_string()
    } else {
        out.to_string()
    }
}

/// Makes file names unique (`-2`, `-3` on a repeat), in case two phases slug alike.
fn unique_files(charts: &mut [Chart]) {
    let mut seen = BTreeSet::new();
    for chart in charts {
        let stem = chart.file.trim_end_matches(".svg").to_string();
        let mut n = 1;
        while !seen.insert(chart.file.clone()) {
            n += 1;
            chart.file = format!("{stem}-{n}.svg");
        }
    }
}

/// `n` items in at most `max` a part, the parts as even as can be.
fn chunks(n: usize, max: usize) -> Vec<Range<usize>> {
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

/// Text as it can go into the SVG: control characters (invalid in XML) made spaces.
/// plotters escapes `<`, `&` and quotes itself.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

/// Estimated width in pixels of `text` at plotters font `size`: a little wider than
/// common sans-serif fonts draw it, so what is laid out by it does not overlap.
fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size / 1.24 * 0.6
}

/// A label in lines of at most `max` characters, broken at spaces, then inside long words
/// (before a capital after a lower-case letter, after `-`); at most `lines` lines, the
/// last cut with `…` when it does not fit.
fn wrap_label(label: &str, max: usize, lines: usize) -> Vec<String> {
    let (max, lines) = (max.max(3), lines.max(1));
    // (piece, whether it continues the word before it)
    let mut pieces: Vec<(String, bool)> = Vec::new();
    for word in label.split_whitespace() {
        let mut first = true;
        for piece in split_word(word, max) {
            pieces.push((piece, !first));
            first = false;
        }
    }
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for (piece, inside_word) in pieces {
        let joined = if current.is_empty() {
            piece.clone()
        } else if inside_word {
            format!("{current}{piece}")
        } else {
            format!("{current} {piece}")
        };
        if joined.chars().count() <= max || current.is_empty() {
            current = joined;
        } else {
            out.push(std::mem::take(&mut current));
            current = piece;
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    if out.len() > lines {
        let rest = out.split_off(lines - 1).join(" ");
        out.push(rest);
    }
    out.into_iter()
        .map(|line| {
            if line.chars().count() > max {
                let cut: String = line.chars().take(max - 1).collect();
                format!("{}…", cut.trim_end())
            } else {
                line
            }
        })
        .collect()
}

/// A word longer than `max` in pieces: before a capital that follows a lower-case letter,
/// and after a `-`.
fn split_word(word: &str, max: usize) -> Vec<String> {
    if word.chars().count() <= max {
        return vec![word.to_string()];
    }
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut previous: Option<char> = None;
    for c in word.chars() {
        let boundary = previous.is_some_and(|p| (p.is_lowercase() && c.is_uppercase()) || p == '-');
        if boundary && !current.is_empty() {
            pieces.push(std::mem::take(&mut current));
        }
        current.push(c);
        previous = Some(c);
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// `color` mixed with white (`amount` 0: unchanged, 1: white).
fn tint(color: RGBColor, amount: f64) -> RGBColor {
    let mix =
        |c: u8| (f64::from(c) + (255.0 - f64::from(c)) * amount.clamp(0.0, 1.0)).round() as u8;
    RGBColor(mix(color.0), mix(color.1), mix(color.2))
}

/// `items` packed into lines of at most `max` characters, joined by ` · ` (a longer item
/// gets a line of its own).
fn pack(items: &[String], max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for item in items {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 3 + item.chars().count() <= max => {
                line.push_str(" · ");
                line.push_str(item);
            }
            _ => lines.push(item.clone()),
        }
    }
    lines
}

// ---------------------------------------------------------------------------------------
// Drawing

fn style(size: f64, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    (FONT, size).into_font().color(&color).pos(Pos::new(h, v))
}

/// Draws into an SVG document of [`WIDTH`] x [`HEIGHT`]; `None` when plotters fails.
fn render(draw: impl FnOnce(&Area<'_>) -> Drawn) -> Option<String> {
    render_sized(HEIGHT, draw)
}

/// Draws into an SVG document of [`WIDTH`] x `height`; `None` when plotters fails.
fn render_sized(height: u32, draw: impl FnOnce(&Area<'_>) -> Drawn) -> Option<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        draw(&root).ok()?;
        root.present().ok()?;
    }
    Some(svg)
}

/// An f64 axis with the ticks given. (plotters' own f64 axis picks its ticks itself, and
/// wrapped in `with_key_points` it can no longer take a label formatter.)
#[derive(Debug, Clone)]
struct Axis {
    range: Range<f64>,
    ticks: Vec<f64>,
}

impl Axis {
    fn new(range: Range<f64>, ticks: Vec<f64>) -> Axis {
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

/// How a legend entry shows its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Swatch {
    Bar,
    Line,
}

/// Paints what every chart has (the opaque background, the title, the legend under it, the
/// footer) and returns the area left for the plot.
fn frame<'a>(
    root: &Area<'a>,
    report: &Report,
    title: &str,
    stores: &[usize],
    swatch: Swatch,
) -> Result<Area<'a>, Box<dyn Error>> {
    root.fill(&WHITE)?;
    let width = WIDTH as i32;
    let height = root.dim_in_pixel().1 as i32;
    let per_line = ((WIDTH - 2 * MARGIN) as f64 / text_width("x", SMALL_SIZE)) as usize;
    let parts: Vec<String> = footer_parts(report, stores)
        .iter()
        .map(|p| clean(p))
        .collect();
    let lines = pack(&parts, per_line);
    let footer_height = 8 + 14 * lines.len() as i32;
    let (body, footer) = root.split_vertically(height - footer_height);
    footer.draw(&PathElement::new(
        vec![(MARGIN as i32, 1), (width - MARGIN as i32, 1)],
        GRID,
    ))?;
    let small = style(SMALL_SIZE, MUTED, HPos::Left, VPos::Top);
    for (k, line) in lines.iter().enumerate() {
        footer.draw_text(line, &small, (MARGIN as i32, 5 + 14 * k as i32))?;
    }

    let title_style = (FONT, TITLE_SIZE)
        .into_font()
        .style(FontStyle::Bold)
        .color(&INK);
    let body = body.titled(&clean(title), title_style)?;

    // The legend: a row of stores (more when they do not fit), each row centred.
    let legend = legend(report, stores);
    let entry_width = |name: &str| 20.0 + text_width(name, LABEL_SIZE) + 18.0;
    let mut rows: Vec<Vec<&(String, RGBColor)>> = Vec::new();
    let mut row_width = 0.0;
    for entry in &legend {
        let w = entry_width(&entry.0);
        match rows.last_mut() {
            Some(row) if row_width + w <= f64::from(WIDTH - 2 * MARGIN) => {
                row.push(entry);
                row_width += w;
            }
            _ => {
                rows.push(vec![entry]);
                row_width = w;
            }
        }
    }
    let row_height = 20;
    let (legend_area, plot) = body.split_vertically(row_height * rows.len() as i32 + 4);
    let label = style(LABEL_SIZE, INK, HPos::Left, VPos::Center);
    for (r, row) in rows.iter().enumerate() {
        let total: f64 = row.iter().map(|e| entry_width(&e.0)).sum();
        let mut x = ((f64::from(WIDTH) - total) / 2.0).max(0.0) as i32;
        let y = row_height * r as i32 + row_height / 2;
        for (name, color) in row {
            match swatch {
                Swatch::Bar => legend_area.draw(&Rectangle::new(
                    [(x + 2, y - 6), (x + 14, y + 6)],
                    color.filled(),
                ))?,
                Swatch::Line => {
                    legend_area.draw(&PathElement::new(
                        vec![(x, y), (x + 16, y)],
                        color.stroke_width(3),
                    ))?;
                    legend_area.draw(&Circle::new((x + 8, y), 3, color.filled()))?;
                }
            }
            let name = clean(name);
            legend_area.draw_text(&name, &label, (x + 20, y))?;
            x += entry_width(&name) as i32;
        }
    }
    Ok(plot)
}

/// A bar of a bar chart.
struct Bar {
    value: f64,
    color: RGBColor,
    /// Min and max of the runs, drawn as a whisker.
    whisker: Option<(f64, f64)>,
    /// The figure written above the bar, most precise first: the chart writes the first
    /// precision that fits over every bar, or none.
    notes: Vec<String>,
    /// A word under the bar (`before`, `after`).
    sub: Option<&'static str>,
}

/// A group of bars side by side, one slot per series (`None`: nothing measured).
struct Group {
    label: String,
    bars: Vec<Option<Bar>>,
}

impl Group {
    fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.bars.iter().flatten().map(|b| b.value)
    }
}

/// A grouped bar chart.
struct BarChart {
    title: String,
    /// The stores shown, by index in the report (the legend, the footer's versions).
    stores: Vec<usize>,
    groups: Vec<Group>,
    scale: Scale,
    y_desc: String,
    x_desc: &'static str,
    y_fmt: fn(f64) -> String,
}

fn draw_bars(root: &Area<'_>, report: &Report, chart: &BarChart) -> Drawn {
    let plot = frame(root, report, &chart.title, &chart.stores, Swatch::Bar)?;
    let n = chart.groups.len().max(1);
    let slots = chart
        .groups
        .iter()
        .map(|g| g.bars.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let (plot_width, _) = plot.dim_in_pixel();
    let group_px = (f64::from(plot_width) - f64::from(Y_LABEL_AREA + 2 * MARGIN)) / n as f64;
    let max_chars = ((group_px - 8.0) / text_width("x", LABEL_SIZE))
        .floor()
        .max(4.0) as usize;
    let labels: Vec<Vec<String>> = chart
        .groups
        .iter()
        .map(|g| wrap_label(&clean(&g.label), max_chars, 3))
        .collect();
    let label_lines = labels.iter().map(Vec::len).max().unwrap_or(1) as i32;
    let has_sub = chart
        .groups
        .iter()
        .any(|g| g.bars.iter().flatten().any(|b| b.sub.is_some()));
    let x_area = 8 + LINE_HEIGHT * (label_lines + i32::from(has_sub)) + 24;

    let scale = chart.scale;
    let y_ticks: Vec<f64> = scale.ticks().into_iter().map(|v| scale.axis(v)).collect();
    let mut ctx = ChartBuilder::on(&plot)
        .margin(MARGIN)
        .margin_top(MARGIN + 4)
        .x_label_area_size(x_area)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(
            Axis::new(0.0..n as f64, Vec::new()),
            Axis::new(scale.axis_range(), y_ticks),
        )?;
    let y_fmt = |y: &f64| (chart.y_fmt)(scale.value(*y));
    ctx.configure_mesh()
        .disable_x_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(INK)
        .label_style(style(LABEL_SIZE, INK, HPos::Center, VPos::Center))
        .axis_desc_style(style(LABEL_SIZE, INK, HPos::Center, VPos::Center))
        .y_desc(clean(&chart.y_desc))
        .x_desc(chart.x_desc)
        .y_label_formatter(&y_fmt)
        .draw()?;

    let base = scale.axis(scale.lo);
    let width = 0.8 / slots as f64;
    let area = ctx.plotting_area();
    let note_style = style(NOTE_SIZE, INK, HPos::Center, VPos::Bottom);
    let precision = note_precision(chart, group_px * width);
    let whisker_style = INK.stroke_width(2);
    for (i, group) in chart.groups.iter().enumerate() {
        for (j, bar) in group.bars.iter().enumerate() {
            let Some(bar) = bar else { continue };
            if !(positive(bar.value) || bar.value == 0.0) {
                continue;
            }
            let left = i as f64 + 0.1 + j as f64 * width;
            let centre = left + width / 2.0;
            let top = scale.axis(bar.value);
            area.draw(&Rectangle::new(
                [(left + width * 0.08, base), (left + width * 0.92, top)],
                bar.color.filled(),
            ))?;
            let mut above = top;
            if let Some((lo, hi)) = bar.whisker {
                let (lo, hi) = (scale.axis(lo), scale.axis(hi));
                let cap = width * 0.2;
                for segment in [
                    [(centre, lo), (centre, hi)],
                    [(centre - cap, lo), (centre + cap, lo)],
                    [(centre - cap, hi), (centre + cap, hi)],
                ] {
                    area.draw(&PathElement::new(segment.to_vec(), whisker_style))?;
                }
                above = above.max(hi);
            }
            if let Some(note) = precision.and_then(|k| bar.notes.get(k)) {
                area.draw(
                    &(EmptyElement::at((centre, above))
                        + Text::new(clean(note), (0, -3), note_style.clone())),
                )?;
            }
        }
    }

    // Labels under the axis: the bars' words, then the group's label.
    let label_style = style(LABEL_SIZE, INK, HPos::Center, VPos::Top);
    let sub_style = style(SMALL_SIZE, MUTED, HPos::Center, VPos::Top);
    for (i, (group, lines)) in chart.groups.iter().zip(&labels).enumerate() {
        let (x, axis_y) = ctx.backend_coord(&(i as f64 + 0.5, base));
        let mut y = axis_y + 7;
        if has_sub {
            for (j, bar) in group.bars.iter().enumerate() {
                if let Some(sub) = bar.as_ref().and_then(|b| b.sub) {
                    let centre = i as f64 + 0.1 + (j as f64 + 0.5) * width;
                    let (bx, _) = ctx.backend_coord(&(centre, base));
                    root.draw_text(sub, &sub_style, (bx, y))?;
                }
            }
            y += LINE_HEIGHT;
        }
        for line in lines {
            root.draw_text(line, &label_style, (x, y))?;
            y += LINE_HEIGHT;
        }
    }
    Ok(())
}

/// Which of the bars' notes to write: the first precision whose every note fits over its
/// bar (`slot_px` wide with its gap), if any.
fn note_precision(chart: &BarChart, slot_px: f64) -> Option<usize> {
    let bars: Vec<&Bar> = chart
        .groups
        .iter()
        .flat_map(|g| g.bars.iter().flatten())
        .collect();
    let levels = bars.iter().map(|b| b.notes.len()).max()?;
    (0..levels).find(|&k| {
        bars.iter().all(|b| {
            b.notes
                .get(k)
                .is_some_and(|note| text_width(note, NOTE_SIZE) <= slot_px)
        })
    })
}

/// A line of a [`Panel`].
struct Line {
    color: RGBColor,
    /// Stroke width in pixels.
    width: u32,
    points: Vec<(f64, f64)>,
    /// Whether its points get dots (when there are few of them).
    dots: bool,
}

impl Line {
    /// A store's line: 2 px, dotted where it has few points.
    fn main(color: RGBColor, points: Vec<(f64, f64)>) -> Line {
        Line {
            color,
            width: 2,
            points,
            dots: true,
        }
    }
}

/// A line chart: one line per store (or run) over a shared x axis.
struct Panel<'c> {
    /// A heading over the plot, when two panels share a chart.
    caption: Option<&'c str>,
    x: Range<f64>,
    x_ticks: Vec<f64>,
    x_fmt: &'c dyn Fn(f64) -> String,
    x_desc: &'c str,
    scale: Scale,
    y_desc: String,
    y_fmt: fn(f64) -> String,
    /// Drawn in order (the last on top).
    lines: Vec<Line>,
    /// Whether zeros are drawn (at the axis' foot on a log scale) rather than left out.
    zeros: bool,
    /// Points marked with a red dot (errors), drawn over the lines.
    marks: Vec<(f64, f64)>,
}

fn draw_panel(area: &Area<'_>, panel: &Panel<'_>) -> Drawn {
    let scale = panel.scale;
    let y_ticks: Vec<f64> = scale.ticks().into_iter().map(|v| scale.axis(v)).collect();
    let mut builder = ChartBuilder::on(area);
    builder
        .margin(MARGIN)
        .margin_right(MARGIN + 12)
        .x_label_area_size(if panel.x_desc.is_empty() { 30 } else { 48 })
        .y_label_area_size(Y_LABEL_AREA);
    if let Some(caption) = panel.caption {
        builder.caption(
            caption,
            style(LABEL_SIZE + 2.0, INK, HPos::Center, VPos::Top),
        );
    }
    let mut ctx = builder.build_cartesian_2d(
        Axis::new(panel.x.clone(), panel.x_ticks.clone()),
        Axis::new(scale.axis_range(), y_ticks),
    )?;
    let x_fmt = |x: &f64| (panel.x_fmt)(*x);
    let y_fmt = |y: &f64| (panel.y_fmt)(scale.value(*y));
    ctx.configure_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(INK)
        .label_style(style(LABEL_SIZE, INK, HPos::Center, VPos::Center))
        .axis_desc_style(style(LABEL_SIZE, INK, HPos::Center, VPos::Center))
        .x_desc(panel.x_desc)
        .y_desc(clean(&panel.y_desc))
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .draw()?;
    let shown = |&(x, y): &(f64, f64)| x.is_finite() && (positive(y) || (panel.zeros && y == 0.0));
    for line in &panel.lines {
        let points: Vec<(f64, f64)> = line
            .points
            .iter()
            .filter(|p| shown(p))
            .map(|&(x, y)| (x, scale.axis(y)))
            .collect();
        ctx.draw_series(LineSeries::new(
            points.iter().copied(),
            line.color.stroke_width(line.width),
        ))?;
        if line.dots && points.len() <= 12 {
            ctx.draw_series(
                points
                    .iter()
                    .map(|&p| Circle::new(p, 3, line.color.filled())),
            )?;
        }
    }
    ctx.draw_series(
        panel
            .marks
            .iter()
            .filter(|p| shown(p))
            .map(|&(x, y)| Circle::new((x, scale.axis(y)), 4, ERROR_RED.filled())),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Machine;
    use crate::report::model::{
        Latency, PlanSummary, RunFigures, RunStatus, SCHEMA_VERSION, SeriesPoint, StoreInfo,
        StoreStatus, Tool,
    };
    use crate::workload::record::Size;
    use hdrhistogram::Histogram;
    use std::collections::BTreeMap;

    /// base64 of a histogram's V2 encoding, as the measuring code writes it.
    fn encoded(latencies_ns: &[u64]) -> String {
        let mut h = Histogram::<u64>::new(3).unwrap();
        for &ns in latencies_ns {
            h.record(ns).unwrap();
        }
        crate::report::model::encode_histogram(&h)
    }

    /// A run's time series as the measuring code writes it: `ops` operations at about
    /// `ops_per_s` (the first interval at half speed, a wobble after it), the interval
    /// 1/1024 s doubled while there are more than 48, the last one cut short.
    fn series_of(ops_per_s: f64, ops: u64) -> Series {
        let span_ms = ops as f64 / ops_per_s * 1000.0;
        let mut interval_ms = 1000.0 / 1024.0;
        while span_ms / interval_ms > 48.0 && interval_ms < 1000.0 {
            interval_ms *= 2.0;
        }
        let n = (span_ms / interval_ms).ceil() as usize;
        let points = (0..n)
            .map(|i| {
                let width = (span_ms - i as f64 * interval_ms).min(interval_ms);
                let speed = if i == 0 {
                    0.5
                } else {
                    1.0 + 0.15 * (i as f64 * 0.9 + ops_per_s).sin()
                };
                let us = 1e6 / (ops_per_s * speed);
                SeriesPoint {
                    ops: (ops_per_s * speed * width / 1000.0).round() as u64,
                    errors: 0,
                    p50_us: us,
                    p99_us: us * 3.0,
                    max_us: us * 10.0,
                }
            })
            .collect();
        Series {
            interval_ms,
            span_ms,
            points,
        }
    }

    /// A phase of 1000 operations: two runs' figures, three runs' time series.
    fn phase(kind: PhaseKind, size: &str, concurrency: u32, ops_per_s: f64) -> PhaseResult {
        let us = 1e6 / ops_per_s;
        let run = |f: f64| RunFigures {
            wall_ms: 100.0 / f,
            ops_per_s: ops_per_s * f,
            cpu_us_per_op: 10.0,
            allocs_per_op: None,
            bytes_per_op: None,
            p50_us: us,
            p99_us: us * 3.0,
        };
        PhaseResult {
            kind,
            size: size.parse::<Size>().unwrap(),
            concurrency,
            operation: None,
            ops: 1000,
            errors: 0,
            error_kinds: BTreeMap::new(),
            incomplete: false,
            wall_ms: 100.0,
            ops_per_s,
            latency_us: Latency {
                min: us / 2.0,
                mean: us,
                p50: us,
                p90: us * 1.5,
                p95: us * 2.0,
                p99: us * 3.0,
                p999: us * 5.0,
                p9999: us * 8.0,
                max: us * 10.0,
            },
            cpu_us_per_op: 10.0,
            allocs_per_op: None,
            bytes_per_op: None,
            runs: vec![run(0.9), run(1.1)],
            histogram: None,
            open_loop: None,
            client_bound: None,
            retries: 0,
            server_counters: Default::default(),
            client_wall_ms: Vec::new(),
            common_ops_per_s: None,
            alloc_sites: None,
            series: [0.9, 1.0, 1.1]
                .map(|f| series_of(ops_per_s * f, 1000))
                .to_vec(),
        }
    }

    fn store(name: &str, version: &str, speed: f64) -> StoreResult {
        let mut s = StoreResult::new(name);
        s.info = Some(StoreInfo {
            version: version.into(),
            durability: "durable".into(),
            settings: BTreeMap::new(),
            search_path: String::new(),
            write_path: String::new(),
            size_method: String::new(),
        });
        s.initial_size_bytes = Some(24 * 1024);
        s.final_size_bytes = Some((speed * 3000.0) as u64);
        for (kind, base) in [(PhaseKind::Insert, 1.0), (PhaseKind::Search, 10.0)] {
            for size in ["micro", "tiny"] {
                s.phases.push(phase(kind, size, 1, speed * base));
            }
        }
        for size in ["micro", "tiny"] {
            s.phases
                .push(phase(PhaseKind::Search, size, 4, speed * 25.0));
        }
        s
    }

    fn machine() -> Machine {
        Machine {
            cpu_model: "Example CPU @ 2.00GHz".into(),
            cores: 8,
            memory_bytes: 16 << 30,
            os: "Linux".into(),
            kernel: "6.1.0".into(),
            arch: "x86_64".into(),
        }
    }

    fn report_of(stores: Vec<StoreResult>) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: "dbcompare".into(),
                version: "0.0.0-test".into(),
            },
            status: RunStatus::Complete,
            started_at: "2026-11-30T10:00:00Z".into(),
            finished_at: "2026-11-30T10:01:02Z".into(),
            plan: PlanSummary {
                suite: "classic".into(),
                scale: None,
                stores: stores.iter().map(|s| s.store.clone()).collect(),
                sizes: vec!["micro".parse().unwrap(), "tiny".parse().unwrap()],
                searches_per_insert: 40,
                durability: "durable".into(),
                warmup_runs: 0,
                runs: 2,
                concurrency: vec![1, 4],
                rate: None,
                seed: 2016,
                client_threads: Some(2),
                workloads: Vec::new(),
                blog_reference: true,
                retries: 0,
                alloc_sites: false,
                client: None,
            },
            machine: machine(),
            floor: None,
            client_peak_rss_bytes: None,
            stores,
            shares: Vec::new(),
        }
    }

    /// sqlite, postgres and redis, 30x apart (redis the fastest); one histogram; errors in
    /// an interval of postgres' SEARCH tiny.
    fn fixture() -> Report {
        let mut sqlite = store("sqlite", "SQLite 3.46.0", 300.0);
        sqlite.phases[3].histogram = Some(encoded(
            &(1..=10_000u64)
                .map(|i| 20_000 + i * i / 50)
                .collect::<Vec<_>>(),
        ));
        let mut postgres = store("postgres", "PostgreSQL 15.18 <Debian> & co", 100.0);
        postgres.phases[3].series[1].points[5].errors = 3;
        let redis = store("redis", "Redis 7.0.15", 3000.0);
        report_of(vec![sqlite, postgres, redis])
    }

    fn file_names(report: &Report) -> Vec<String> {
        charts(report).into_iter().map(|c| c.file).collect()
    }

    /// The chart's distinct colours once rasterized (fonts as usvg's default: none).
    fn raster_colours(svg: &str) -> usize {
        let tree = resvg::usvg::Tree::from_str(svg, &resvg::usvg::Options::default())
            .expect("the SVG parses");
        let size = tree.size().to_int_size();
        assert_eq!(size.width(), WIDTH);
        assert!([HEIGHT, TIMELINE_HEIGHT].contains(&size.height()));
        let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
        resvg::render(
            &tree,
            resvg::tiny_skia::Transform::default(),
            &mut pixmap.as_mut(),
        );
        let colours: BTreeSet<[u8; 4]> = pixmap
            .pixels()
            .iter()
            .map(|p| [p.red(), p.green(), p.blue(), p.alpha()])
            .collect();
        assert!(
            pixmap.pixels().iter().all(|p| p.alpha() == 255),
            "the background is opaque"
        );
        colours.len()
    }

    #[test]
    fn a_classic_run_gets_every_kind_of_chart() {
        assert_eq!(
            file_names(&fixture()),
            [
                "throughput-classic.svg",
                "sizes.svg",
                "latency-insert-micro-c1.svg",
                "latency-insert-tiny-c1.svg",
                "latency-search-micro-c1.svg",
                "latency-search-tiny-c1.svg",
                "latency-search-micro-c4.svg",
                "latency-search-tiny-c4.svg",
                "timeline-insert-micro-c1.svg",
                "timeline-insert-tiny-c1.svg",
                "timeline-search-micro-c1.svg",
                "timeline-search-tiny-c1.svg",
                "timeline-search-micro-c4.svg",
                "timeline-search-tiny-c4.svg",
                "scaling-search-micro.svg",
                "scaling-search-tiny.svg",
            ]
        );
    }

    #[test]
    fn every_chart_is_a_valid_svg_that_draws_something() {
        for chart in charts(&fixture()) {
            assert!(chart.svg.starts_with("<svg"), "{}", chart.file);
            let colours = raster_colours(&chart.svg);
            assert!(colours >= 4, "{}: {colours} colours", chart.file);
            assert!(
                chart
                    .file
                    .trim_end_matches(".svg")
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{}",
                chart.file
            );
        }
    }

    #[test]
    fn every_chart_says_what_it_shows_and_where_it_was_measured() {
        for chart in charts(&fixture()) {
            let svg = &chart.svg;
            assert!(svg.matches("<text").count() >= 10, "{}", chart.file);
            assert!(svg.contains(&chart.title), "{}: title", chart.file);
            for name in ["sqlite", "postgres", "redis"] {
                assert!(
                    svg.contains(&format!(">\n{name}\n</text>")),
                    "{}: {name}",
                    chart.file
                );
            }
            assert!(svg.contains("durability: durable"), "{}", chart.file);
            assert!(
                svg.contains("Example CPU @ 2.00GHz, 8 cores"),
                "{}",
                chart.file
            );
            assert!(svg.contains("SQLite 3.46.0"), "{}", chart.file);
            assert!(
                svg.contains("PostgreSQL 15.18 &lt;Debian&gt; &amp; co"),
                "{}: versions escaped",
                chart.file
            );
            let units = match chart.file.split('-').next().unwrap() {
                "throughput" => "ops/s",
                "sizes.svg" => "on-disk size (MB)",
                "latency" => "latency (µs, log scale)",
                "scaling" => "p99 latency (µs",
                "timeline" => "time since the phase start (",
                other => panic!("unexpected chart {other}"),
            };
            assert!(svg.contains(units), "{}: {units}", chart.file);
        }
    }

    #[test]
    fn text_goes_into_the_svg_escaped_and_without_control_characters() {
        let mut report = fixture();
        report.stores[0].store = "a<b&c\u{7}".into();
        for chart in charts(&report) {
            assert!(chart.svg.contains("a&lt;b&amp;c"), "{}", chart.file);
            assert!(!chart.svg.contains('\u{7}'));
            raster_colours(&chart.svg);
        }
    }

    #[test]
    fn a_30x_spread_is_drawn_on_a_log_scale_and_a_2x_spread_is_not() {
        let wide = charts(&fixture());
        let throughput = &wide[0];
        assert!(throughput.svg.contains("ops/s (log scale)"));

        let narrow = report_of(vec![
            store("sqlite", "SQLite 3.46.0", 100.0),
            store("redis", "Redis 7.0.15", 200.0),
        ]);
        let mut narrow = narrow;
        for s in &mut narrow.stores {
            s.phases
                .retain(|p| p.kind == PhaseKind::Search && p.concurrency == 1);
        }
        let throughput = &charts(&narrow)[0];
        assert_eq!(throughput.file, "throughput-classic.svg");
        assert!(throughput.svg.contains("ops/s"));
        assert!(!throughput.svg.contains("log scale"));

        assert!(wants_log(&[100.0, 3000.0]));
        assert!(!wants_log(&[100.0, 200.0, 0.0, f64::NAN]));
        assert!(!wants_log(&[100.0, 1000.0]), "10x exactly stays linear");
        assert!(!wants_log(&[]));
    }

    #[test]
    fn client_bound_figures_are_starred_and_the_title_says_so() {
        let mut report = report_of(vec![
            store("sqlite", "SQLite 3.46.0", 100.0),
            store("redis", "Redis 7.0.15", 200.0),
        ]);
        let plain = &charts(&report)[0];
        assert!(!plain.title.contains("client-bound"), "{}", plain.title);
        report.stores[1].phases[0].client_bound = Some("client CPU 95% of 1 loop".into());
        let marked = &charts(&report)[0];
        assert!(
            marked.title.ends_with("; * = client-bound)"),
            "{}",
            marked.title
        );
        assert!(marked.svg.contains("client-bound"));
        let starred = marked.svg.lines().filter(|l| l.trim() == "200*").count();
        assert_eq!(starred, 1, "one starred figure");
    }

    #[test]
    fn whiskers_span_the_runs() {
        let mut p = phase(PhaseKind::Search, "tiny", 1, 1000.0);
        assert_eq!(whisker(&p), Some((900.0, 1100.0)));
        p.runs.truncate(1);
        assert_eq!(whisker(&p), None, "one run has no spread");
        p.runs.clear();
        assert_eq!(whisker(&p), None);

        // Drawn: each whisker is three more lines than the same chart without runs.
        let with = fixture();
        let mut without = fixture();
        for s in &mut without.stores {
            for p in &mut s.phases {
                p.runs.clear();
            }
        }
        let lines = |r: &Report| charts(r)[0].svg.matches("<polyline").count();
        // 3 stores x 6 phases, 3 lines each.
        assert_eq!(lines(&with), lines(&without) + 3 * 18);
    }

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
    fn latency_curves_come_from_the_histogram_else_the_percentiles() {
        let report = fixture();
        let from_histogram = latency_points(&report.stores[0].phases[3]);
        assert_eq!(from_histogram.len(), 81);
        assert!(
            from_histogram.windows(2).all(|w| w[0].1 <= w[1].1),
            "monotone"
        );
        assert!(
            (from_histogram[0].1 - 20.0).abs() < 0.1,
            "{:?}",
            from_histogram[0]
        );
        assert!((from_histogram[80].0 - 4.0).abs() < 1e-9);

        let mut p = phase(PhaseKind::Search, "tiny", 1, 1000.0);
        let fallback = latency_points(&p);
        assert_eq!(fallback.len(), 7, "max left out");
        assert_eq!(fallback[1], (nines(0.5), 1000.0));
        p.latency_us.p95 = 0.0;
        p.histogram = Some("not a histogram".into());
        assert_eq!(
            latency_points(&p).len(),
            6,
            "zeros and bad histograms left out"
        );
        p.latency_us = Latency::default();
        assert!(latency_points(&p).is_empty());
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

    #[test]
    fn figures_read_short() {
        assert_eq!(human_count(950.0), "950");
        assert_eq!(human_count(2500.0), "2.5k");
        assert_eq!(human_count(120_000.0), "120k");
        assert_eq!(human_count(1_230_000.0), "1.23M");
        assert_eq!(human_count(0.0), "0");
        assert_eq!(human_count(0.25), "0.25");
        assert_eq!(count_with(2440.0, 2), "2.4k");
        assert_eq!(count_with(111_192.0, 2), "111k");
        assert_eq!(short(7.5), "7.5");
        assert_eq!(grouped(12_500.0), "12,500");
        assert_eq!(grouped(1_000_000.0), "1,000,000");
        assert_eq!(grouped(2.5), "2.5");
        assert_eq!(size_unit(18), (1.0, "bytes"));
        assert_eq!(size_unit(24 * 1024), (1024.0, "kB"));
        assert_eq!(size_unit(3_250_586).1, "MB");
        assert_eq!(size_unit(5 << 30).1, "GB");
    }

    #[test]
    fn names_are_file_safe_and_labels_fit() {
        assert_eq!(slug("SEARCH tiny"), "search-tiny");
        assert_eq!(slug("YCSB f READ-MODIFY-WRITE"), "ycsb-f-read-modify-write");
        assert_eq!(slug("<&>"), "x");
        assert_eq!(phase_label(PhaseKind::Search, "tiny", 4), "SEARCH tiny c=4");
        assert_eq!(phase_label(PhaseKind::Insert, "micro", 1), "INSERT micro");
        assert_eq!(
            phase_label(PhaseKind::Driver, "PreparedExecConcurrent16", 16),
            "PreparedExecConcurrent16"
        );
        assert_eq!(
            phase_label(PhaseKind::Pool, "ConcurrentQueries", 50),
            "ConcurrentQueries c=50"
        );
        assert_eq!(phase_label(PhaseKind::Ycsb, "a", 1), "a total");
        assert_eq!(
            wrap_label("SelectPreparedLargeString", 16, 3),
            ["SelectPrepared", "LargeString"]
        );
        assert_eq!(wrap_label("SEARCH tiny c=4", 16, 3), ["SEARCH tiny c=4"]);
        assert_eq!(
            wrap_label("f READ-MODIFY-WRITE", 10, 3),
            ["f READ-", "MODIFY-", "WRITE"]
        );
        let cut = wrap_label("Averyveryverylongname", 8, 2);
        assert_eq!(cut, ["Averyve…"]);
        assert!(wrap_label("a b c d e f", 3, 2).len() <= 2);
        assert_eq!(chunks(22, 8), [0..8, 8..16, 16..22]);
        assert_eq!(chunks(16, 8), [0..8, 8..16]);
        assert_eq!(chunks(3, 8), vec![Range { start: 0, end: 3 }]);
        assert!(chunks(0, 8).is_empty());
        assert_eq!(
            pack(&["aaaa".into(), "bb".into(), "cccccc".into()], 10),
            ["aaaa · bb", "cccccc"]
        );
    }

    #[test]
    fn many_phases_are_split_into_charts_of_at_most_eight() {
        let mut report = fixture();
        report.plan.suite = "driver".into();
        report.plan.concurrency = vec![1];
        for (k, s) in report.stores.iter_mut().enumerate() {
            s.initial_size_bytes = None;
            s.final_size_bytes = None;
            s.phases = (0..22)
                .map(|i| {
                    let mut p = phase(PhaseKind::Driver, "micro", 1, 1000.0 * (k + 1) as f64);
                    p.size.name = format!("SelectPreparedLargeString{i}");
                    p.runs.clear();
                    p.series.clear();
                    p
                })
                .collect();
        }
        let charts = charts(&report);
        let files: Vec<&str> = charts.iter().map(|c| c.file.as_str()).collect();
        assert_eq!(
            files,
            [
                "throughput-driver-1.svg",
                "throughput-driver-2.svg",
                "throughput-driver-3.svg"
            ]
        );
        assert!(charts[2].title.contains("part 3 of 3"));
        for chart in &charts {
            raster_colours(&chart.svg);
        }
    }

    #[test]
    fn odd_reports_give_fewer_charts_and_no_panic() {
        // Nothing ran.
        let empty = report_of(Vec::new());
        assert!(charts(&empty).is_empty());

        // A failed store with no phases and no sizes: no chart at all.
        let mut failed = StoreResult::new("postgres");
        failed.status = StoreStatus::Failed;
        failed.error = Some("connection refused".into());
        let only_failed = report_of(vec![failed.clone()]);
        assert!(charts(&only_failed).is_empty());

        // Beside a working store it adds nothing (not in any legend).
        let mut report = fixture();
        report.stores.insert(1, failed);
        for chart in charts(&report) {
            assert!(!chart.svg.contains(">\npostgres\n</text>") || chart.svg.contains("redis"));
            raster_colours(&chart.svg);
        }

        // Zero, NaN and infinite figures, a broken histogram, no info, no runs.
        let mut odd = fixture();
        let s = &mut odd.stores[0];
        s.info = None;
        s.initial_size_bytes = Some(0);
        s.final_size_bytes = None;
        s.phases[0].ops_per_s = 0.0;
        s.phases[1].ops_per_s = f64::NAN;
        s.phases[2].ops_per_s = f64::INFINITY;
        s.phases[3].histogram = Some("AAAA".into());
        s.phases[4].latency_us = Latency::default();
        s.phases[4].runs[0].ops_per_s = f64::NAN;
        odd.machine.cpu_model = String::new();
        odd.machine.cores = 0;
        for chart in charts(&odd) {
            raster_colours(&chart.svg);
        }

        // Every figure zero: no throughput, latency or scaling chart; sizes stay.
        let mut zero = fixture();
        for s in &mut zero.stores {
            for p in &mut s.phases {
                p.ops_per_s = 0.0;
                p.latency_us = Latency::default();
                p.histogram = None;
                p.runs.clear();
                p.series.clear();
            }
        }
        assert_eq!(file_names(&zero), ["sizes.svg"]);

        // One concurrency level: no scaling chart.
        let mut single = fixture();
        single.plan.concurrency = vec![1];
        for s in &mut single.stores {
            s.phases.retain(|p| p.concurrency == 1);
        }
        assert!(
            file_names(&single)
                .iter()
                .all(|f| !f.starts_with("scaling"))
        );
    }

    #[test]
    fn latency_charts_are_limited() {
        let mut report = fixture();
        for s in &mut report.stores {
            let extra: Vec<PhaseResult> = (0..20)
                .map(|i| {
                    let mut p = phase(PhaseKind::Search, "micro", 1, 1000.0);
                    p.size.name = format!("{}", 100 + i);
                    p
                })
                .collect();
            s.phases.extend(extra);
        }
        let latency = file_names(&report)
            .into_iter()
            .filter(|f| f.starts_with("latency"))
            .count();
        assert_eq!(latency, MAX_LATENCY_CHARTS);
    }

    fn timeline_files(report: &Report) -> Vec<String> {
        file_names(report)
            .into_iter()
            .filter(|f| f.starts_with("timeline"))
            .collect()
    }

    #[test]
    fn phases_with_a_time_series_get_a_timeline_and_old_reports_do_not() {
        let report = fixture();
        let all = charts(&report);
        let timelines: Vec<&Chart> = all
            .iter()
            .filter(|c| c.file.starts_with("timeline"))
            .collect();
        assert_eq!(timelines.len(), 6);
        let files: BTreeSet<&str> = all.iter().map(|c| c.file.as_str()).collect();
        assert_eq!(files.len(), all.len(), "file names are unique");

        let search = timelines
            .iter()
            .find(|c| c.file == "timeline-search-tiny-c1.svg")
            .unwrap();
        assert_eq!(
            search.title,
            "Throughput over time: SEARCH tiny, concurrency 1"
        );
        let svg = &search.svg;
        // 30x apart: log scale; sqlite's 3000 searches/s take a third of a second.
        assert!(svg.contains("ops/s (log scale)"));
        assert!(svg.contains("p99 latency (µs, log scale)"));
        assert!(svg.contains("time since the phase start (ms)"));
        assert!(
            svg.contains("bold line: each store&apos;s median run")
                || svg.contains("bold line: each store's median run")
        );
        assert!(svg.contains("red dot: an interval with errors"));
        assert!(svg.to_ascii_uppercase().contains("#D6001C"), "the red dot");
        // postgres' 100 inserts/s take ten seconds.
        let insert = timelines
            .iter()
            .find(|c| c.file == "timeline-insert-tiny-c1.svg")
            .unwrap();
        assert!(insert.svg.contains("time since the phase start (s)"));
        assert!(!insert.svg.contains("red dot"), "no errors there");
        assert!(!insert.svg.to_ascii_uppercase().contains("#D6001C"));

        // An old report has no series: no timeline, everything else as before.
        let mut old = fixture();
        for s in &mut old.stores {
            for p in &mut s.phases {
                p.series.clear();
            }
        }
        let before: Vec<String> = file_names(&report)
            .into_iter()
            .filter(|f| !f.starts_with("timeline"))
            .collect();
        assert_eq!(file_names(&old), before);

        // One store with series among stores without: its chart shows only that store.
        let mut one = old.clone();
        one.stores[2].phases[3].series = report.stores[2].phases[3].series.clone();
        let charts = charts(&one);
        let only: Vec<&Chart> = charts
            .iter()
            .filter(|c| c.file.starts_with("timeline"))
            .collect();
        assert_eq!(only.len(), 1);
        assert_eq!(only[0].file, "timeline-search-tiny-c1.svg");
        assert!(only[0].svg.contains(">\nredis\n</text>"));
        assert!(!only[0].svg.contains(">\nsqlite\n</text>"));
        raster_colours(&only[0].svg);
    }

    #[test]
    fn timelines_of_one_run_close_stores_and_other_suites() {
        // One run each, 2x apart: linear, no note about runs.
        let mut narrow = report_of(vec![
            store("sqlite", "SQLite 3.46.0", 100.0),
            store("redis", "Redis 7.0.15", 200.0),
        ]);
        for s in &mut narrow.stores {
            s.phases
                .retain(|p| p.kind == PhaseKind::Search && p.concurrency == 1);
            for p in &mut s.phases {
                p.series.truncate(1);
            }
        }
        let narrow_charts = charts(&narrow);
        let timeline = narrow_charts
            .iter()
            .find(|c| c.file == "timeline-search-micro-c1.svg")
            .unwrap();
        assert!(timeline.svg.contains("ops/s"));
        assert!(!timeline.svg.contains("ops/s (log scale)"));
        assert!(!timeline.svg.contains("median run"));
        assert!(timeline.svg.contains("a point per interval of"));
        raster_colours(&timeline.svg);

        // YCSB: the workload's total has a timeline, its operations none; pool and driver
        // tests have theirs.
        let mut report = fixture();
        for s in &mut report.stores {
            let speed = s.phases[0].ops_per_s;
            let mut total = phase(PhaseKind::Ycsb, "micro", 1, speed);
            total.size.name = "a".into();
            let mut load = total.clone();
            load.size.name = "load".into();
            let mut read = total.clone();
            read.size.name = "a READ".into();
            let mut pool = phase(PhaseKind::Pool, "micro", 50, speed);
            pool.size.name = "ConcurrentQueries".into();
            let mut driver = phase(PhaseKind::Driver, "micro", 1, speed);
            driver.size.name = "PreparedQueryRow".into();
            s.phases = vec![load, total, read, pool, driver];
        }
        report.plan.concurrency = vec![1];
        let charts = charts(&report);
        let files: Vec<&str> = charts
            .iter()
            .map(|c| c.file.as_str())
            .filter(|f| f.starts_with("timeline"))
            .collect();
        assert_eq!(
            files,
            [
                "timeline-ycsb-load-c1.svg",
                "timeline-ycsb-a-c1.svg",
                "timeline-preparedqueryrow-c1.svg",
                "timeline-concurrentqueries-c50.svg",
            ]
        );
        for chart in charts.iter().filter(|c| c.file.starts_with("timeline")) {
            assert!(chart.title.starts_with("Throughput over time: "));
            raster_colours(&chart.svg);
        }
        assert!(
            charts
                .iter()
                .any(|c| c.title == "Throughput over time: YCSB a, concurrency 1")
        );
    }

    #[test]
    fn timeline_charts_are_limited_lowest_concurrency_first() {
        let mut report = fixture();
        for s in &mut report.stores {
            let extra: Vec<PhaseResult> = (0..20)
                .map(|i| {
                    let mut p = phase(PhaseKind::Search, "micro", 8, 1000.0);
                    p.size.name = format!("{}", 100 + i);
                    p
                })
                .collect();
            s.phases.extend(extra);
        }
        let files = timeline_files(&report);
        assert_eq!(files.len(), MAX_TIMELINE_CHARTS);
        assert_eq!(files[0], "timeline-insert-micro-c1.svg");
        assert!(files[..4].iter().all(|f| f.ends_with("-c1.svg")));
        assert!(files[4..6].iter().all(|f| f.ends_with("-c4.svg")));
        assert!(files[6..].iter().all(|f| f.ends_with("-c8.svg")));
    }

    #[test]
    fn the_time_axis_reads_in_ms_or_s() {
        assert_eq!(time_unit(0.0), (1.0, "ms"));
        assert_eq!(time_unit(350.0), (1.0, "ms"));
        assert_eq!(time_unit(1999.0), (1.0, "ms"));
        assert_eq!(time_unit(2000.0), (1000.0, "s"));
        assert_eq!(time_unit(60_000.0), (1000.0, "s"));
        assert_eq!(time_unit(f64::NAN), (1.0, "ms"));
        assert_eq!(duration_label(1000.0 / 1024.0), "0.977 ms");
        assert_eq!(duration_label(62.5), "62.5 ms");
        assert_eq!(duration_label(1000.0), "1 s");
    }

    #[test]
    fn a_short_last_interval_is_left_out() {
        let point = |ops| SeriesPoint {
            ops,
            errors: 0,
            p50_us: 10.0,
            p99_us: 30.0,
            max_us: 90.0,
        };
        let series = |span_ms| Series {
            interval_ms: 10.0,
            span_ms,
            points: vec![point(100), point(100), point(100), point(1)],
        };
        // The last interval 0.5 ms wide (5% of one): left out.
        let short = timeline_points(&series(30.5));
        assert_eq!(short.len(), 3);
        assert_eq!(short[0].mid_ms, 5.0);
        assert_eq!(short[2].end_ms, 30.0);
        assert!(short.iter().all(|t| (t.ops_per_s - 10_000.0).abs() < 1e-6));
        // 1 ms wide (10%): kept, at its own width's rate and middle.
        let kept = timeline_points(&series(31.0));
        assert_eq!(kept.len(), 4);
        assert!((kept[3].ops_per_s - 1000.0).abs() < 1e-6);
        assert!((kept[3].mid_ms - 30.5).abs() < 1e-9);
        // A whole last interval.
        assert_eq!(timeline_points(&series(40.0)).len(), 4);
        // A span shorter than the intervals, or unknown: only the last one goes.
        assert_eq!(timeline_points(&series(5.0)).len(), 3);
        assert_eq!(timeline_points(&series(f64::NAN)).len(), 3);

        assert_eq!(run_rate(&series(31.0)), 301.0 / 0.031);
        assert_eq!(median_run(&[3.0, 1.0, 2.0]), Some(2));
        assert_eq!(median_run(&[3.0, 1.0]), Some(1), "the lower of two");
        assert_eq!(median_run(&[f64::NAN, 1.0, 2.0]), Some(2));
        assert_eq!(median_run(&[]), None);
    }

    #[test]
    fn odd_time_series_do_not_panic() {
        let point = |ops, p99_us| SeriesPoint {
            ops,
            errors: ops / 2,
            p50_us: p99_us,
            p99_us,
            max_us: p99_us,
        };
        let odd = [
            Series {
                interval_ms: 10.0,
                span_ms: 25.0,
                points: Vec::new(),
            },
            Series {
                interval_ms: 10.0,
                span_ms: 0.0,
                points: vec![point(5, 1.0)],
            },
            Series {
                interval_ms: 0.0,
                span_ms: 10.0,
                points: vec![point(5, 1.0), point(5, 1.0)],
            },
            Series {
                interval_ms: f64::NAN,
                span_ms: f64::NAN,
                points: vec![point(5, f64::NAN)],
            },
            Series {
                interval_ms: -1.0,
                span_ms: f64::INFINITY,
                points: vec![point(5, 1.0)],
            },
            Series {
                interval_ms: 1.0,
                span_ms: f64::INFINITY,
                points: vec![
                    point(u64::MAX, f64::INFINITY),
                    point(0, 0.0),
                    point(3, -1.0),
                ],
            },
            Series {
                interval_ms: 1e300,
                span_ms: 1e305,
                points: vec![point(0, 0.0), point(7, f64::NAN)],
            },
        ];
        for s in &odd {
            timeline_points(s);
            run_rate(s);
        }
        assert!(timeline_points(&odd[0]).is_empty());
        assert!(timeline_points(&odd[1]).is_empty(), "zero span");
        assert!(timeline_points(&odd[2]).is_empty(), "zero interval");
        assert!(timeline_points(&odd[3]).is_empty());

        // Each odd series in a whole report, alone and beside good ones.
        for (k, s) in odd.iter().enumerate() {
            let mut report = fixture();
            report.stores[0].phases[2].series = vec![s.clone()];
            report.stores[1].phases[2].series = vec![s.clone(), s.clone()];
            for st in &mut report.stores {
                st.phases[3].series = vec![s.clone()];
            }
            for chart in charts(&report) {
                if chart.file.starts_with("timeline") {
                    raster_colours(&chart.svg);
                }
            }
            let files = timeline_files(&report);
            assert!(
                files.contains(&"timeline-search-micro-c1.svg".to_string()),
                "{k}"
            );
        }

        // Every series empty or idle: no timeline.
        let mut idle = fixture();
        for s in &mut idle.stores {
            for p in &mut s.phases {
                for r in &mut p.series {
                    for pt in &mut r.points {
                        pt.ops = 0;
                    }
                }
            }
        }
        assert!(timeline_files(&idle).is_empty());
    }

    #[test]
    fn file_names_stay_unique() {
        let mut charts = vec![
            Chart {
                file: "a.svg".into(),
                title: String::new(),
                svg: String::new(),
            },
            Chart {
                file: "a.svg".into(),
                title: String::new(),
                svg: String::new(),
            },
        ];
        unique_files(&mut charts);
        assert_eq!(charts[1].file, "a-2.svg");
    }
}
