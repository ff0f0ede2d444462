//! The size chart: each store's size on disk before and after its inserts.

use plotters::style::RGBColor;

use super::axis::Scale;
use super::bars::{Bar, BarChart, Group, draw_bars};
use super::frame::{Chart, render};
use super::labels::{short, size_unit};
use super::palette::{store_color, tint};
use crate::report::format::human_size;
use crate::report::model::Report;

/// On-disk size of each store before and after its inserts.
pub(super) fn chart(report: &Report) -> Option<Chart> {
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
                    lower: None,
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
