//! What every chart has: [`Chart`], the SVG document's size, fonts and margins, and
//! [`frame`]: the opaque background, the title, the legend and the footer around the plot.

use std::error::Error;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::labels::{clean, pack, text_width};
use super::palette::{GRID, INK, MUTED, store_color};
use crate::report::model::Report;

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

pub(super) const WIDTH: u32 = 900;
pub(super) const HEIGHT: u32 = 480;

pub(super) const FONT: &str = "sans-serif";
/// Font sizes as plotters takes them (the SVG says size / 1.24).
pub(super) const TITLE_SIZE: f64 = 22.0;
pub(super) const LABEL_SIZE: f64 = 14.0;
pub(super) const SMALL_SIZE: f64 = 12.0;
pub(super) const NOTE_SIZE: f64 = 11.0;

pub(super) const MARGIN: u32 = 12;
pub(super) const Y_LABEL_AREA: u32 = 78;
pub(super) const LINE_HEIGHT: i32 = 15;

pub(super) type Drawn = Result<(), Box<dyn Error>>;
pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

pub(super) fn style(size: f64, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    (FONT, size).into_font().color(&color).pos(Pos::new(h, v))
}

/// Draws into an SVG document of [`WIDTH`] x [`HEIGHT`]; `None` when plotters fails.
pub(super) fn render(draw: impl FnOnce(&Area<'_>) -> Drawn) -> Option<String> {
    render_sized(HEIGHT, draw)
}

/// Draws into an SVG document of [`WIDTH`] x `height`; `None` when plotters fails.
pub(super) fn render_sized(height: u32, draw: impl FnOnce(&Area<'_>) -> Drawn) -> Option<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        draw(&root).ok()?;
        root.present().ok()?;
    }
    Some(svg)
}

/// How a legend entry shows its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Swatch {
    Bar,
    Line,
}

/// Paints what every chart has (the opaque background, the title, the legend under it, the
/// footer) and returns the area left for the plot.
pub(super) fn frame<'a>(
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

/// The legend's entries: each store's name and colour.
pub(super) fn legend(report: &Report, stores: &[usize]) -> Vec<(String, RGBColor)> {
    stores
        .iter()
        .map(|&i| (report.stores[i].store.clone(), store_color(report, i)))
        .collect()
}

/// The footer's facts: the machine, each shown store's version, the durability asked for.
pub(super) fn footer_parts(report: &Report, stores: &[usize]) -> Vec<String> {
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
