//! Charts of a run as SVG documents: the verdict's ratios to the fastest store, throughput
//! per phase, on-disk sizes, CPU per operation (client and server), latency percentile
//! curves, throughput over time and scaling with concurrency. Pure functions of a
//! [`Report`], no I/O.
//!
//! Text is written as SVG `<text>` elements. Without a font of its own, plotters only
//! estimates how wide a text is, so labels are wrapped and spaced with some slack. Every
//! chart paints its own white background and dark text, so it reads the same on light and
//! dark pages.
//!
//! One file per kind of chart (`glance`, `throughput`, `sizes`, `cost`, `latency`,
//! `timeline`, `server_timeline`, `scaling`); under them the drawing of bar charts (`bars`)
//! and line charts (`panel`), what every chart has (`frame`), the phases they compare
//! (`phases`), and the axes, labels and colours (`axis`, `labels`, `palette`).

use std::collections::BTreeSet;

use crate::report::model::Report;

mod axis;
mod bars;
mod cost;
mod frame;
mod glance;
mod labels;
mod latency;
mod palette;
mod panel;
mod phases;
mod scaling;
mod server_timeline;
mod sizes;
#[cfg(test)]
mod tests;
mod throughput;
mod timeline;

pub use frame::Chart;

/// Every chart the run's figures allow, in reading order.
pub fn charts(report: &Report) -> Vec<Chart> {
    let mut all: Vec<Chart> = glance::chart(report).into_iter().collect();
    all.extend(throughput::charts(report));
    all.extend(sizes::chart(report));
    all.extend(cost::chart(report));
    all.extend(latency::charts(report));
    all.extend(timeline::charts(report));
    all.extend(server_timeline::charts(report));
    all.extend(scaling::charts(report));
    unique_files(&mut all);
    all
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
