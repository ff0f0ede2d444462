//! Grouped bar charts (throughput per phase, on-disk sizes, CPU per operation stacked): bars with their whiskers and
//! the figures written over them, the groups' labels under the axis.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::{Axis, Scale, positive};
use super::frame::{
    Area, Drawn, LABEL_SIZE, LINE_HEIGHT, MARGIN, NOTE_SIZE, SMALL_SIZE, Swatch, Y_LABEL_AREA,
    frame, style,
};
use super::labels::{clean, text_width, wrap_label};
use super::palette::{GRID, INK, MUTED};
use crate::report::model::Report;

/// A bar of a bar chart.
pub(super) struct Bar {
    pub(super) value: f64,
    pub(super) color: RGBColor,
    /// Min and max of the runs, drawn as a whisker.
    pub(super) whisker: Option<(f64, f64)>,
    /// The figure written above the bar, most precise first: the chart writes the first
    /// precision that fits over every bar, or none.
    pub(super) notes: Vec<String>,
    /// A word under the bar (`before`, `after`).
    pub(super) sub: Option<&'static str>,
    /// A stacked bar's lower part: its value (from the axis) and colour; the part above it,
    /// up to `value`, is drawn in `color`.
    pub(super) lower: Option<(f64, RGBColor)>,
}

/// A group of bars side by side, one slot per series (`None`: nothing measured).
pub(super) struct Group {
    pub(super) label: String,
    pub(super) bars: Vec<Option<Bar>>,
}

impl Group {
    pub(super) fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.bars.iter().flatten().map(|b| b.value)
    }
}

/// A grouped bar chart.
pub(super) struct BarChart {
    pub(super) title: String,
    /// The stores shown, by index in the report (the legend, the footer's versions).
    pub(super) stores: Vec<usize>,
    pub(super) groups: Vec<Group>,
    pub(super) scale: Scale,
    pub(super) y_desc: String,
    pub(super) x_desc: &'static str,
    pub(super) y_fmt: fn(f64) -> String,
}

pub(super) fn draw_bars(root: &Area<'_>, report: &Report, chart: &BarChart) -> Drawn {
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
            if let Some((lower, color)) = bar.lower.filter(|(v, _)| positive(*v)) {
                area.draw(&Rectangle::new(
                    [
                        (left + width * 0.08, base),
                        (left + width * 0.92, scale.axis(lower.min(bar.value))),
                    ],
                    color.filled(),
                ))?;
            }
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
pub(super) fn note_precision(chart: &BarChart, slot_px: f64) -> Option<usize> {
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
