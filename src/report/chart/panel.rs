//! Line charts: a [`Panel`] of lines over a shared x axis, one per store (or run), with
//! the points that had errors marked.

use std::ops::Range;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::{Axis, Scale, positive};
use super::frame::{Area, Drawn, LABEL_SIZE, MARGIN, Y_LABEL_AREA, style};
use super::labels::clean;
use super::palette::{ERROR_RED, GRID, INK};

/// A line of a [`Panel`].
pub(super) struct Line {
    pub(super) color: RGBColor,
    /// Stroke width in pixels.
    pub(super) width: u32,
    pub(super) points: Vec<(f64, f64)>,
    /// Whether its points get dots (when there are few of them).
    pub(super) dots: bool,
}

impl Line {
    /// A store's line: 2 px, dotted where it has few points.
    pub(super) fn main(color: RGBColor, points: Vec<(f64, f64)>) -> Line {
        Line {
            color,
            width: 2,
            points,
            dots: true,
        }
    }
}

/// A line chart: one line per store (or run) over a shared x axis.
pub(super) struct Panel<'c> {
    /// A heading over the plot, when two panels share a chart.
    pub(super) caption: Option<&'c str>,
    pub(super) x: Range<f64>,
    pub(super) x_ticks: Vec<f64>,
    pub(super) x_fmt: &'c dyn Fn(f64) -> String,
    pub(super) x_desc: &'c str,
    pub(super) scale: Scale,
    pub(super) y_desc: String,
    pub(super) y_fmt: fn(f64) -> String,
    /// Drawn in order (the last on top).
    pub(super) lines: Vec<Line>,
    /// Whether zeros are drawn (at the axis' foot on a log scale) rather than left out.
    pub(super) zeros: bool,
    /// Points marked with a red dot (errors), drawn over the lines.
    pub(super) marks: Vec<(f64, f64)>,
}

pub(super) fn draw_panel(area: &Area<'_>, panel: &Panel<'_>) -> Drawn {
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
