//! One phase of a merged run from every client's: counts added, latency histograms merged
//! exactly, each measured run's figures weighted by its operations, open-loop schedules
//! added, time series added interval by interval from the common start.

use std::collections::BTreeMap;

use anyhow::{Result, anyhow, bail};
use hdrhistogram::Histogram;

use crate::report::model::{
    self, OpenLoop, PhaseKind, PhaseResult, RunFigures, Series, SeriesPoint, empty_histogram,
    latency,
};

/// One phase from the clients that reached it (`clients` of them ran).
pub(super) fn merge_phase(same: &[&PhaseResult], clients: usize) -> Result<PhaseResult> {
    let lead = same[0];
    let mut p = lead.clone();
    // The clients' tasks all ran at once.
    p.concurrency = u32::try_from(clients)
        .ok()
        .and_then(|n| lead.concurrency.times(n))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "concurrency {} times {clients} clients is too many",
                lead.concurrency
            )
        })?;
    let sum = |f: fn(&PhaseResult) -> u64| same.iter().map(|q| f(q)).sum::<u64>();
    p.ops = sum(|q| q.ops);
    if p.kind == PhaseKind::Ycsb {
        // A YCSB phase's size is its first run's operations: each client's share of them.
        p.size.records = sum(|q| q.size.records);
    }
    p.errors = sum(|q| q.errors);
    p.retries = sum(|q| q.retries);
    p.incomplete = same.len() < clients || same.iter().any(|q| q.incomplete);
    p.error_kinds = add_maps(same.iter().map(|q| &q.error_kinds));
    // Each client read the servers' own counts, which every client's operations raise
    // over the common phase: the largest, not their sum.
    p.server_counters = largest(same.iter().map(|q| &q.server_counters));
    let histograms: Vec<&str> = same.iter().filter_map(|q| q.histogram.as_deref()).collect();
    if histograms.len() != same.len() {
        bail!("a client's phase has no histogram: its latencies cannot be merged");
    }
    let histogram = merged_histogram(&histograms)?;
    p.latency_us = latency(&histogram);
    p.histogram = Some(model::encode_histogram(&histogram));
    let weighted = |f: fn(&PhaseResult) -> Option<f64>| -> Option<f64> {
        let ops = p.ops.max(1) as f64;
        same.iter()
            .map(|q| f(q).map(|v| v * q.ops as f64))
            .sum::<Option<f64>>()
            .map(|total| total / ops)
    };
    p.cpu_us_per_op = weighted(|q| Some(q.cpu_us_per_op)).unwrap_or(0.0);
    p.allocs_per_op = weighted(|q| q.allocs_per_op);
    p.bytes_per_op = weighted(|q| q.bytes_per_op);
    // Allocation sites are each client's own (its run.json has them).
    p.alloc_sites = None;
    p.server = merge_server(same, p.ops);
    // The clients began together: the phase lasts until its slowest client's end.
    p.client_wall_ms = same.iter().map(|q| q.wall_ms).collect();
    p.open_loop = merge_open_loop(same)?;
    let response = p.open_loop.as_ref().map(|o| &o.response_us);
    let runs = same.iter().map(|q| q.runs.len()).max().unwrap_or(0);
    if runs > 1 && same.iter().all(|q| q.runs.len() == runs) {
        p.runs = (0..runs)
            .map(|r| {
                let of_run = same.iter().map(|q| (&q.runs[r], q.ops));
                merge_run(of_run, &p.latency_us, response)
            })
            .collect();
        let mut walls: Vec<f64> = p.runs.iter().map(|r| r.wall_ms).collect();
        let mut rates: Vec<f64> = p.runs.iter().map(|r| r.ops_per_s).collect();
        p.wall_ms = median(&mut walls);
        p.ops_per_s = median(&mut rates);
    } else {
        p.runs = Vec::new();
        p.wall_ms = same.iter().map(|q| q.wall_ms).fold(0.0, f64::max);
        p.ops_per_s = per_second(p.ops, p.wall_ms);
    }
    let bound: Vec<String> = same
        .iter()
        .enumerate()
        .filter_map(|(k, q)| {
            q.client_bound
                .as_ref()
                .map(|why| format!("client {}/{clients}: {why}", k + 1))
        })
        .collect();
    p.client_bound = (!bound.is_empty()).then(|| bound.join("; "));
    p.series = merge_series(same);
    p.common_ops_per_s = common_rate(same, &p.series);
    Ok(p)
}

/// A histogram of every client's, exactly.
fn merged_histogram(encoded: &[&str]) -> Result<Histogram<u64>> {
    let mut all = empty_histogram();
    all.auto(true);
    for text in encoded {
        let h = model::decode_histogram(text)?;
        all.add(&h)
            .map_err(|e| anyhow!("the histograms do not add up: {e:?}"))?;
    }
    Ok(all)
}

/// One measured run of a phase from every client's (each with its phase's operations).
fn merge_run<'a>(
    runs: impl Iterator<Item = (&'a RunFigures, u64)>,
    latency: &model::Latency,
    response: Option<&model::Latency>,
) -> RunFigures {
    let runs: Vec<(&RunFigures, u64)> = runs.collect();
    let ops: u64 = runs.iter().map(|(_, n)| n).sum();
    let wall_ms = runs.iter().map(|(r, _)| r.wall_ms).fold(0.0, f64::max);
    let weighted = |f: fn(&RunFigures) -> Option<f64>| -> Option<f64> {
        runs.iter()
            .map(|(r, n)| f(r).map(|v| v * *n as f64))
            .sum::<Option<f64>>()
            .map(|t| t / ops.max(1) as f64)
    };
    RunFigures {
        wall_ms,
        ops_per_s: per_second(ops, wall_ms),
        cpu_us_per_op: weighted(|r| Some(r.cpu_us_per_op)).unwrap_or(0.0),
        allocs_per_op: weighted(|r| r.allocs_per_op),
        bytes_per_op: weighted(|r| r.bytes_per_op),
        // One run's own histogram is not kept: the phase's, over every run.
        p50_us: latency.p50,
        p99_us: latency.p99,
        response_p50_us: response.map(|l| l.p50),
        response_p99_us: response.map(|l| l.p99),
        server_cpu_us_per_op: once(&runs, ops, |r| r.server_cpu_us_per_op),
        write_bytes_per_op: once(&runs, ops, |r| r.write_bytes_per_op),
    }
}

/// A figure of the server that every client read over the common phase, per operation of
/// all the clients: the server's, taken once (the largest client's reading, which spans
/// the others'), not each client's added up.
fn once<T>(of: &[(T, u64)], ops: u64, f: impl Fn(&T) -> Option<f64>) -> Option<f64> {
    of.iter()
        .map(|(r, n)| f(r).map(|v| v * *n as f64))
        .reduce(|a, b| Some(a?.max(b?)))
        .flatten()
        .map(|total| total / ops.max(1) as f64)
}

/// The server's cost of a merged phase: taken once (see [`once`]), per operation of all
/// the clients.
fn merge_server(same: &[&PhaseResult], ops: u64) -> Option<model::ServerCost> {
    let lead = same[0].server.as_ref()?;
    let costs: Vec<(&model::ServerCost, u64)> = same
        .iter()
        .filter_map(|q| Some((q.server.as_ref()?, q.ops)))
        .collect();
    if costs.len() != same.len() {
        return None;
    }
    let mut merged = lead.clone();
    merged.cpu_user_us_per_op = once(&costs, ops, |c| c.cpu_user_us_per_op);
    merged.cpu_system_us_per_op = once(&costs, ops, |c| c.cpu_system_us_per_op);
    merged.write_bytes_per_op = once(&costs, ops, |c| c.write_bytes_per_op);
    merged.read_bytes_per_op = once(&costs, ops, |c| c.read_bytes_per_op);
    merged.syncs_per_op = once(&costs, ops, |c| c.syncs_per_op);
    merged.peak_memory_bytes = costs.iter().filter_map(|(c, _)| c.peak_memory_bytes).max();
    merged.reported_per_op = lead
        .reported_per_op
        .keys()
        .filter_map(|name| {
            let v = once(&costs, ops, |c| c.reported_per_op.get(name).copied())?;
            Some((name.clone(), v))
        })
        .collect();
    // Each client inserted its share of the records: the logical bytes add up.
    merged.logical_bytes = costs
        .iter()
        .map(|(c, _)| c.logical_bytes)
        .sum::<Option<u64>>();
    merged.write_amplification = match (merged.write_bytes_per_op, merged.logical_bytes) {
        (Some(w), Some(l)) if l > 0 => Some(w * ops as f64 / l as f64),
        _ => None,
    };
    Some(merged)
}

/// Open-loop phases: the clients' schedules add up; response times merge exactly.
fn merge_open_loop(same: &[&PhaseResult]) -> Result<Option<OpenLoop>> {
    let loops: Vec<&OpenLoop> = same.iter().filter_map(|q| q.open_loop.as_ref()).collect();
    if loops.is_empty() {
        return Ok(None);
    }
    if loops.len() != same.len() {
        bail!("some clients ran the phase on an open-loop schedule and some did not");
    }
    let encoded: Vec<&str> = loops
        .iter()
        .map(|l| l.response_histogram.as_str())
        .collect();
    let response = merged_histogram(&encoded)?;
    Ok(Some(OpenLoop {
        rate: loops.iter().map(|l| l.rate).sum(),
        response_us: latency(&response),
        max_behind_ms: loops.iter().map(|l| l.max_behind_ms).fold(0.0, f64::max),
        response_histogram: model::encode_histogram(&response),
    }))
}

/// Each run's series, the clients' added interval by interval from the common start: the
/// operations and errors exactly; an interval's percentiles are its slowest client's.
fn merge_series(same: &[&PhaseResult]) -> Vec<Series> {
    let runs = same.iter().map(|q| q.series.len()).min().unwrap_or(0);
    // Every run's or none (a run left out would pair the others with the wrong spans).
    (0..runs)
        .map(|r| {
            // The widest client's interval: each interval is the finest one times a power
            // of two, so the others' points merge into it whole.
            let interval = same
                .iter()
                .map(|q| q.series[r].interval_ms)
                .fold(0.0, f64::max);
            let all: Vec<Series> = same
                .iter()
                .map(|q| widened(&q.series[r], interval))
                .collect::<Option<_>>()?;
            let len = all.iter().map(|s| s.points.len()).max().unwrap_or(0);
            let points = (0..len)
                .map(|i| {
                    let here: Vec<&SeriesPoint> =
                        all.iter().filter_map(|s| s.points.get(i)).collect();
                    combined(&here)
                })
                .collect();
            Some(Series {
                interval_ms: interval,
                span_ms: all.iter().map(|s| s.span_ms).fold(0.0, f64::max),
                points,
            })
        })
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default()
}

/// The clients' operations per second while every one of them ran: in each run, the merged
/// series' whole intervals before the first client's series ended; the median of the runs.
fn common_rate(same: &[&PhaseResult], merged: &[Series]) -> Option<f64> {
    let mut rates: Vec<f64> = merged
        .iter()
        .enumerate()
        .filter_map(|(r, series)| {
            let common = same
                .iter()
                .map(|q| q.series.get(r).map_or(0.0, |s| s.span_ms))
                .fold(f64::INFINITY, f64::min);
            let whole = (common / series.interval_ms).floor() as usize;
            if whole == 0 || !common.is_finite() {
                return None;
            }
            let ops: u64 = series.points.iter().take(whole).map(|p| p.ops).sum();
            Some(per_second(ops, whole as f64 * series.interval_ms))
        })
        .collect();
    (!rates.is_empty()).then(|| median(&mut rates))
}

/// `series` at `interval` (a whole multiple of its own), its points merged in runs of the
/// factor: operations and errors added, percentiles the largest; `None` when it is not a
/// whole multiple.
fn widened(series: &Series, interval: f64) -> Option<Series> {
    let factor = interval / series.interval_ms;
    if factor < 1.0 || (factor - factor.round()).abs() > 1e-9 {
        return None;
    }
    let factor = factor.round() as usize;
    let points = series
        .points
        .chunks(factor)
        .map(|chunk| combined(&chunk.iter().collect::<Vec<_>>()))
        .collect();
    Some(Series {
        interval_ms: interval,
        span_ms: series.span_ms,
        points,
    })
}

/// Points of one interval as one: operations and errors added, percentiles the largest.
fn combined(points: &[&SeriesPoint]) -> SeriesPoint {
    let largest = |f: fn(&SeriesPoint) -> f64| points.iter().map(|p| f(p)).fold(0.0, f64::max);
    SeriesPoint {
        ops: points.iter().map(|p| p.ops).sum(),
        errors: points.iter().map(|p| p.errors).sum(),
        p50_us: largest(|p| p.p50_us),
        p99_us: largest(|p| p.p99_us),
        max_us: largest(|p| p.max_us),
    }
}

fn largest<'a>(maps: impl Iterator<Item = &'a BTreeMap<String, u64>>) -> BTreeMap<String, u64> {
    let mut most = BTreeMap::new();
    for m in maps {
        for (k, v) in m {
            let e = most.entry(k.clone()).or_insert(0);
            *e = (*e).max(*v);
        }
    }
    most
}

fn add_maps<'a>(maps: impl Iterator<Item = &'a BTreeMap<String, u64>>) -> BTreeMap<String, u64> {
    let mut sum = BTreeMap::new();
    for m in maps {
        for (k, v) in m {
            *sum.entry(k.clone()).or_insert(0) += v;
        }
    }
    sum
}

fn per_second(ops: u64, wall_ms: f64) -> f64 {
    if wall_ms > 0.0 {
        ops as f64 / (wall_ms / 1000.0)
    } else {
        0.0
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(interval_ms: f64, ops: &[u64]) -> Series {
        Series {
            interval_ms,
            span_ms: interval_ms * ops.len() as f64,
            points: ops
                .iter()
                .map(|&n| SeriesPoint {
                    ops: n,
                    errors: n / 10,
                    p50_us: n as f64,
                    p99_us: 2.0 * n as f64,
                    max_us: 3.0 * n as f64,
                })
                .collect(),
        }
    }

    #[test]
    fn a_finer_series_widens_into_whole_intervals() {
        let w = widened(&series(125.0, &[10, 20, 30, 40, 50]), 250.0).unwrap();
        let ops: Vec<u64> = w.points.iter().map(|p| p.ops).collect();
        assert_eq!(ops, [30, 70, 50]);
        assert_eq!(w.points[1].errors, 3 + 4);
        assert_eq!(w.points[1].p99_us, 80.0);
        assert_eq!(w.interval_ms, 250.0);
        assert!(widened(&series(100.0, &[1]), 250.0).is_none());
        assert!(widened(&series(500.0, &[1]), 250.0).is_none());
    }

    #[test]
    fn medians_of_even_and_odd_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&mut []), 0.0);
    }
}
