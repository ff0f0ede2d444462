//! `dbcompare merge`: the run.json files of N load clients (`--client K/N`, one
//! `--start-at`) as one run. Counts add up; latency histograms are merged exactly (never
//! averaged percentiles); the clients began every phase together, so a phase's wall time is
//! its slowest client's and its throughput every client's operations over it; time series
//! add up interval by interval from the common start. What cannot be one run is refused:
//! another plan, seed, schema or dbcompare version, a share missing or given twice.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use hdrhistogram::Histogram;

use crate::measure;
use crate::report::model::{
    self, MergedShare, OpenLoop, PhaseResult, Report, RunFigures, RunStatus, Series, SeriesPoint,
    StoreResult, StoreStatus,
};

/// Merges the reports (each with the file it came from, for messages), in any order.
pub fn merge(inputs: Vec<(String, Report)>) -> Result<Report> {
    let Some((_, first)) = inputs.first() else {
        bail!("merge: no run to merge");
    };
    let n = client_of(&inputs[0])?.of;
    let mut by_share: BTreeMap<u32, (String, Report)> = BTreeMap::new();
    for (file, report) in inputs.iter().cloned() {
        let share = client_of(&(file.clone(), report.clone()))?;
        if share.of != n {
            bail!(
                "merge: {file} is client {}/{} but {} is one of {n}",
                share.index,
                share.of,
                inputs[0].0
            );
        }
        same_run(&inputs[0].0, first, &file, &report)?;
        if let Some((other, _)) = by_share.get(&share.index) {
            bail!(
                "merge: client {}/{n} is given twice ({other} and {file})",
                share.index
            );
        }
        by_share.insert(share.index, (file, report));
    }
    let missing: Vec<String> = (1..=n)
        .filter(|k| !by_share.contains_key(k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        bail!(
            "merge: client(s) {} missing: every one of the {n} clients' run.json is needed",
            missing.join(", ")
        );
    }
    let shares: Vec<(String, Report)> = by_share.into_values().collect();
    let lead = &shares[0].1;
    let mut plan = lead.plan.clone();
    plan.client = None;
    // N clients at concurrency c are N x c tasks at once, on N schedules.
    for level in &mut plan.concurrency {
        *level *= n;
    }
    plan.rate = plan.rate.map(|r| r * f64::from(n));
    let mut stores = Vec::new();
    for name in &lead.plan.stores {
        // By name: a client stopped early (Ctrl-C, a kill) has fewer stores.
        let theirs: Vec<Option<&StoreResult>> = shares
            .iter()
            .map(|(_, r)| r.stores.iter().find(|s| s.store == *name))
            .collect();
        let Some(first) = theirs.iter().flatten().next() else {
            continue;
        };
        stores.push(merge_store(first, &theirs).with_context(|| name.clone())?);
    }
    let status = shares
        .iter()
        .map(|(_, r)| r.status)
        .max_by_key(|s| match s {
            RunStatus::Complete => 0,
            RunStatus::Partial => 1,
            RunStatus::Interrupted => 2,
        })
        .unwrap_or(RunStatus::Complete);
    Ok(Report {
        schema_version: lead.schema_version,
        tool: lead.tool.clone(),
        status,
        started_at: shares
            .iter()
            .map(|(_, r)| r.started_at.clone())
            .min()
            .unwrap_or_default(),
        finished_at: shares
            .iter()
            .map(|(_, r)| r.finished_at.clone())
            .max()
            .unwrap_or_default(),
        plan,
        machine: lead.machine.clone(),
        floor: lead.floor.clone(),
        client_peak_rss_bytes: shares
            .iter()
            .filter_map(|(_, r)| r.client_peak_rss_bytes)
            .max(),
        stores,
        shares: shares
            .iter()
            .map(|(file, r)| MergedShare {
                index: r.plan.client.as_ref().map_or(0, |c| c.index),
                file: file.clone(),
                started_at: r.started_at.clone(),
                finished_at: r.finished_at.clone(),
                machine: r.machine.clone(),
                floor: r.floor.clone(),
            })
            .collect(),
    })
}

/// Reads the run.json files and merges them.
pub fn merge_files(paths: &[impl AsRef<Path>]) -> Result<Report> {
    let inputs = paths
        .iter()
        .map(|p| {
            let p = p.as_ref();
            Ok((p.display().to_string(), crate::report::json::load(p)?))
        })
        .collect::<Result<Vec<_>>>()?;
    merge(inputs)
}

fn client_of((file, report): &(String, Report)) -> Result<model::ClientShare> {
    report.plan.client.clone().ok_or_else(|| {
        anyhow!(
            "merge: {file} is not one client's share of a run (it was not made with --client K/N)"
        )
    })
}

/// Refuses two shares that are not of one run.
fn same_run(a_file: &str, a: &Report, b_file: &str, b: &Report) -> Result<()> {
    let differ = |what: &str, x: String, y: String| -> Result<()> {
        if x == y {
            Ok(())
        } else {
            Err(anyhow!(
                "merge: {a_file} and {b_file} are not shares of one run: {what} {x} against {y}"
            ))
        }
    };
    differ(
        "schema version",
        a.schema_version.to_string(),
        b.schema_version.to_string(),
    )?;
    differ("dbcompare", a.tool.version.clone(), b.tool.version.clone())?;
    let start = |r: &Report| r.plan.client.as_ref().map(|c| c.start_at.clone());
    differ(
        "--start-at",
        start(a).unwrap_or_default(),
        start(b).unwrap_or_default(),
    )?;
    let plan = |r: &Report| {
        let mut p = r.plan.clone();
        p.client = None;
        // Each machine may run its own number of event loops.
        p.client_threads = None;
        serde_json::to_string(&p).unwrap_or_default()
    };
    if plan(a) != plan(b) {
        let (pa, pb) = (&a.plan, &b.plan);
        let fields = [
            ("suite", pa.suite.clone(), pb.suite.clone()),
            ("stores", pa.stores.join(","), pb.stores.join(",")),
            ("seed", pa.seed.to_string(), pb.seed.to_string()),
            (
                "sizes",
                format!("{:?}", pa.sizes),
                format!("{:?}", pb.sizes),
            ),
            (
                "searches per insert",
                pa.searches_per_insert.to_string(),
                pb.searches_per_insert.to_string(),
            ),
            ("durability", pa.durability.clone(), pb.durability.clone()),
            ("runs", pa.runs.to_string(), pb.runs.to_string()),
            (
                "warm-up runs",
                pa.warmup_runs.to_string(),
                pb.warmup_runs.to_string(),
            ),
            (
                "concurrency",
                format!("{:?}", pa.concurrency),
                format!("{:?}", pb.concurrency),
            ),
            ("rate", format!("{:?}", pa.rate), format!("{:?}", pb.rate)),
        ];
        for (what, x, y) in fields {
            differ(what, x, y)?;
        }
        differ("the plan", plan(a), plan(b))?;
    }
    Ok(())
}

/// One store's result from every client's (`None`: that client has no result for it).
fn merge_store(lead: &StoreResult, theirs: &[Option<&StoreResult>]) -> Result<StoreResult> {
    let mut merged = lead.clone();
    let n = theirs.len();
    let failures: Vec<String> = theirs
        .iter()
        .enumerate()
        .filter_map(|(k, s)| match s {
            None => Some(format!(
                "client {}/{n}: no result for this store (its run stopped before it)",
                k + 1
            )),
            Some(s) if s.status != StoreStatus::Ok => Some(format!(
                "client {}/{n}: {}",
                k + 1,
                s.error.as_deref().unwrap_or("no reason recorded")
            )),
            Some(_) => None,
        })
        .collect();
    let missing = theirs.iter().any(Option::is_none);
    let theirs: Vec<&StoreResult> = theirs.iter().flatten().copied().collect();
    merged.status = theirs
        .iter()
        .map(|s| s.status)
        .chain(missing.then_some(StoreStatus::Failed))
        .max_by_key(|s| match s {
            StoreStatus::Ok => 0,
            StoreStatus::Skipped => 1,
            StoreStatus::Interrupted => 2,
            StoreStatus::Failed => 3,
        })
        .unwrap_or(StoreStatus::Ok);
    merged.error = (!failures.is_empty()).then(|| failures.join("; "));
    merged.phases = lead
        .phases
        .iter()
        .map(|p| {
            let same: Vec<&PhaseResult> = theirs
                .iter()
                .filter_map(|s| {
                    s.phases.iter().find(|q| {
                        q.kind == p.kind
                            && q.size.name == p.size.name
                            && q.concurrency == p.concurrency
                    })
                })
                .collect();
            merge_phase(&same, n).with_context(|| format!("{} {}", p.kind.label(), p.size.name))
        })
        .collect::<Result<_>>()?;
    Ok(merged)
}

/// A histogram of every client's, exactly.
fn merged_histogram(encoded: &[&str]) -> Result<Histogram<u64>> {
    let mut all = measure::new_histogram();
    all.auto(true);
    for text in encoded {
        let h = model::decode_histogram(text)?;
        all.add(&h)
            .map_err(|e| anyhow!("the histograms do not add up: {e:?}"))?;
    }
    Ok(all)
}

/// One phase from the clients that reached it (`clients` of them ran).
fn merge_phase(same: &[&PhaseResult], clients: usize) -> Result<PhaseResult> {
    let lead = same[0];
    let mut p = lead.clone();
    // The clients' tasks all ran at once.
    p.concurrency = lead.concurrency * clients as u32;
    let sum = |f: fn(&PhaseResult) -> u64| same.iter().map(|q| f(q)).sum::<u64>();
    p.ops = sum(|q| q.ops);
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
    p.latency_us = measure::latency(&histogram);
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
    // The clients began together: the phase lasts until its slowest client's end.
    p.client_wall_ms = same.iter().map(|q| q.wall_ms).collect();
    let runs = same.iter().map(|q| q.runs.len()).max().unwrap_or(0);
    if runs > 1 && same.iter().all(|q| q.runs.len() == runs) {
        p.runs = (0..runs)
            .map(|r| merge_run(same.iter().map(|q| (&q.runs[r], q.ops)), &p.latency_us))
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
    p.open_loop = merge_open_loop(same)?;
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

/// One measured run of a phase from every client's (each with its phase's operations).
fn merge_run<'a>(
    runs: impl Iterator<Item = (&'a RunFigures, u64)>,
    latency: &model::Latency,
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
    }
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
        response_us: measure::latency(&response),
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
