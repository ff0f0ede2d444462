//! Plain-text rendering: the blog's per-store lines (printed as each phase completes) and
//! the recap tables printed at the end of a run.

use std::fmt::Write;

use super::format::{human_size, human_us};
use super::model::{Floor, PhaseKind, PhaseResult, Report, StoreResult, StoreStatus};
use super::stats::Spread;
use crate::workload::driver::DriverTest;
use crate::workload::pool::PoolTest;

/// `== sqlite: SQLite 3.46.0, embedded, durable ==`
pub fn store_header(r: &StoreResult) -> String {
    let mut parts = Vec::new();
    if let Some(i) = &r.info {
        parts.push(i.version.clone());
    }
    if let Some(d) = &r.deployment {
        parts.push(d.describe());
    }
    if let Some(i) = &r.info {
        parts.push(i.durability.clone());
    }
    if parts.is_empty() {
        format!("== {} ==", r.store)
    } else {
        format!("== {}: {} ==", r.store, parts.join(", "))
    }
}

/// `initial database size: 24 kB` (`which` is `initial` or `final`); `-` when unknown.
pub fn size_line(which: &str, bytes: Option<u64>) -> String {
    format!(
        "{which} database size: {}",
        bytes.map_or_else(|| "-".to_string(), human_size)
    )
}

/// The blog's line: `INSERT micro 100 41.20 ms`; for a driver test, the seed's:
/// `PreparedQueryRow 25000 iterations: 0.352s  71023 queries/sec  5 allocs/query  149 B/query`.
pub fn phase_line(p: &PhaseResult) -> String {
    if p.kind == PhaseKind::Ycsb {
        return ycsb_line(p);
    }
    if p.kind == super::model::PhaseKind::Driver {
        let mut line = format!(
            "{} {} iterations: {:.6}s \t{:>9.0} queries/sec",
            p.size.name,
            p.size.records,
            p.wall_ms / 1000.0,
            p.ops_per_s
        );
        if let (Some(a), Some(b)) = (p.allocs_per_op, p.bytes_per_op) {
            let _ = write!(line, "\t{a:>5.0} allocs/query\t{b:>7.0} B/query");
        }
        if let Some(op) = &p.operation {
            let _ = write!(line, "  [{op}]");
        }
        if p.errors > 0 {
            let _ = write!(line, "  (errors: {})", p.errors);
        }
        if p.retries > 0 {
            let _ = write!(line, "  ({})", retried(p));
        }
        return line;
    }
    let mut line = format!(
        "{} {} {} {:.2} ms",
        p.kind.label(),
        p.size.name,
        p.size.records,
        p.wall_ms
    );
    notes(p, &mut line);
    line
}

/// Every client-bound phase, a line each: `redis SEARCH tiny x8: the client used ...`.
pub fn client_bound_lines(report: &Report) -> Vec<String> {
    report
        .stores
        .iter()
        .flat_map(|s| {
            s.phases.iter().filter_map(move |p| {
                p.client_bound.as_ref().map(|why| {
                    format!(
                        "{} {} {} x{}: {why}",
                        s.store,
                        p.kind.label(),
                        p.size.name,
                        p.concurrency
                    )
                })
            })
        })
        .collect()
}

/// What the stores' own counters rose by in each phase, a line each:
/// `redis-cluster INSERT tiny x1: ASK redirects 0, MOVED redirects 2`.
pub fn counter_lines(report: &Report) -> Vec<String> {
    report
        .stores
        .iter()
        .flat_map(|s| {
            s.phases
                .iter()
                .filter(|p| !p.server_counters.is_empty())
                .map(move |p| {
                    let counts: Vec<String> = p
                        .server_counters
                        .iter()
                        .map(|(name, n)| format!("{name} {n}"))
                        .collect();
                    format!(
                        "{} {} {} x{}: {}",
                        s.store,
                        p.kind.label(),
                        p.size.name,
                        p.concurrency,
                        counts.join(", ")
                    )
                })
        })
        .collect()
}

/// A merged run's phases, a line each: how long each load client took and the throughput
/// over the slowest one's time and while every one ran:
/// `redis SEARCH tiny x2: clients 291.2, 286.9 ms; 12633 ops/s over the slowest, 13010 while all ran`.
pub fn client_lines(report: &Report) -> Vec<String> {
    report
        .stores
        .iter()
        .flat_map(|s| {
            s.phases
                .iter()
                .filter(|p| !p.client_wall_ms.is_empty())
                .map(move |p| {
                    let walls: Vec<String> =
                        p.client_wall_ms.iter().map(|w| format!("{w:.1}")).collect();
                    let common = p
                        .common_ops_per_s
                        .map_or(String::new(), |r| format!(", {r:.0} while all ran"));
                    format!(
                        "{} {} {} x{}: clients {} ms; {:.0} ops/s over the slowest{common}",
                        s.store,
                        p.kind.label(),
                        p.size.name,
                        p.concurrency,
                        walls.join(", "),
                        p.ops_per_s
                    )
                })
        })
        .collect()
}

/// The heading of [`client_lines`].
pub const CLIENTS_HEADING: &str =
    "Load clients per phase (each one's wall time; they began every phase together)";

/// The per-phase notes that are not in the tables, each section with its heading: the
/// stores' own counters and a merged run's load clients (the empty ones left out).
pub fn phase_notes(report: &Report) -> Vec<(&'static str, Vec<String>)> {
    [
        (COUNTERS_HEADING, counter_lines(report)),
        (CLIENTS_HEADING, client_lines(report)),
    ]
    .into_iter()
    .filter(|(_, lines)| !lines.is_empty())
    .collect()
}

/// The heading of [`counter_lines`].
pub const COUNTERS_HEADING: &str =
    "Server counters per phase (what each store's own counters rose by, summed over the runs)";

/// `machine floor: loopback round trip p50 17.2 us (p99 31.0) at concurrency 1, ...`
pub fn floor_line(f: &Floor) -> String {
    format!(
        "machine floor: loopback TCP round trip p50 {} us (p99 {}) on one connection, {} us \
         (p99 {}) on 8 at once; 4 kB write + fdatasync in {} p50 {} us (p99 {})",
        human_us(f.loopback_c1.p50_us),
        human_us(f.loopback_c1.p99_us),
        human_us(f.loopback_c8.p50_us),
        human_us(f.loopback_c8.p99_us),
        f.fsync_dir,
        human_us(f.fsync.p50_us),
        human_us(f.fsync.p99_us)
    )
}

/// A phase's p50 latency as a multiple of the machine's floor it pays: a durable insert's
/// over the durable write (`2.1x fsync`), a server store's search at concurrency 1 or 8 over
/// the loopback round trip at that concurrency (`3.4x rtt`). `None` where no floor applies
/// (an embedded store's search, other concurrencies, relaxed inserts).
pub fn floor_multiple(floor: Option<&Floor>, r: &StoreResult, p: &PhaseResult) -> Option<String> {
    floor_ratio(floor, r, p).map(|(m, what)| format!("{m:.1}x {what}"))
}

/// [`floor_multiple`] as a number and the floor's name (`fsync` or `rtt`).
pub fn floor_ratio(
    floor: Option<&Floor>,
    r: &StoreResult,
    p: &PhaseResult,
) -> Option<(f64, &'static str)> {
    let floor = floor?;
    let embedded = r.deployment.as_ref().is_none_or(|d| d.kind == "embedded");
    let durable = r.info.as_ref().is_some_and(|i| i.durability == "durable");
    let (base, what) = match p.kind {
        PhaseKind::Insert if durable => (floor.fsync.p50_us, "fsync"),
        PhaseKind::Search | PhaseKind::Driver | PhaseKind::Ycsb if !embedded => {
            match p.concurrency {
                1 => (floor.loopback_c1.p50_us, "rtt"),
                8 => (floor.loopback_c8.p50_us, "rtt"),
                _ => return None,
            }
        }
        _ => return None,
    };
    (base > 0.0 && p.latency_us.p50 > 0.0).then(|| (p.latency_us.p50 / base, what))
}

/// The console's summary of a classic or pool phase, under the blog's lines (a driver or
/// YCSB phase's own line already says as much): `  SEARCH tiny x1: 305344 ops/s
/// (277585-339271 over 3 runs), p50 2.87 us, p99 8.61 us, cpu 2.30 us/op`.
pub fn summary_line(p: &PhaseResult) -> Option<String> {
    if matches!(p.kind, PhaseKind::Driver | PhaseKind::Ycsb) {
        return None;
    }
    let mut line = format!(
        "  {} {} x{}: {:.0} ops/s",
        p.kind.label(),
        p.size.name,
        p.concurrency,
        p.ops_per_s
    );
    if let Some(s) = Spread::of(&p.runs.iter().map(|r| r.ops_per_s).collect::<Vec<_>>()) {
        let _ = write!(
            line,
            " ({:.0}-{:.0} over {} runs)",
            s.min,
            s.max,
            p.runs.len()
        );
    }
    let _ = write!(
        line,
        ", p50 {} us, p99 {} us, cpu {} us/op",
        human_us(p.latency_us.p50),
        human_us(p.latency_us.p99),
        human_us(p.cpu_us_per_op)
    );
    if p.errors > 0 {
        let _ = write!(line, ", {} error(s)", p.errors);
    }
    if p.retries > 0 {
        let _ = write!(line, ", {}", retried(p));
    }
    Some(line)
}

/// go-ycsb's line for one operation type of a workload (`TOTAL`: every operation):
/// `a READ - Takes(s): 1.2, Count: 512, OPS: 426.7, Avg(us): 2301, Min(us): 170, ...`.
pub fn ycsb_line(p: &PhaseResult) -> String {
    let (workload, kind) = p
        .size
        .name
        .split_once(' ')
        .unwrap_or((p.size.name.as_str(), "TOTAL"));
    let l = &p.latency_us;
    let us = |v: f64| format!("{v:.0}");
    let mut line = format!(
        "{:<24} - Takes(s): {:.1}, Count: {}, OPS: {:.1}, Avg(us): {}, Min(us): {}, \
         Max(us): {}, 50th(us): {}, 90th(us): {}, 95th(us): {}, 99th(us): {}, 99.9th(us): {}, \
         99.99th(us): {}",
        format!("{workload} {kind}"),
        p.wall_ms / 1e3,
        p.ops,
        p.ops_per_s,
        us(l.mean),
        us(l.min),
        us(l.max),
        us(l.p50),
        us(l.p90),
        us(l.p95),
        us(l.p99),
        us(l.p999),
        us(l.p9999),
    );
    notes(p, &mut line);
    line
}

/// What a phase's line adds after its figures: its concurrency, its open-loop response
/// times, its errors, a schedule it fell behind.
fn notes(p: &PhaseResult, line: &mut String) {
    if p.concurrency > 1 {
        let _ = write!(line, " (concurrency {})", p.concurrency);
    }
    if let Some(ol) = &p.open_loop {
        let _ = write!(
            line,
            " (open loop at {:.0}/s: response p50 {} us, p99 {} us)",
            ol.rate,
            human_us(ol.response_us.p50),
            human_us(ol.response_us.p99)
        );
    }
    if p.errors > 0 || p.incomplete {
        let _ = write!(line, "  (errors: {}", p.errors);
        if p.incomplete {
            line.push_str(", stopped early");
        }
        line.push(')');
    }
    if p.retries > 0 {
        let _ = write!(line, "  ({})", retried(p));
    }
    if let Some(warning) = schedule_warning(p) {
        let _ = write!(line, "  WARNING: {warning}");
    }
    if let Some(why) = &p.client_bound {
        let _ = write!(line, "  CLIENT-BOUND: {why}");
    }
}

/// What a phase's time series says against its figures: throughput that drifted (the last
/// tenth of the phase more than 20% off its middle fifth) or a first interval much slower
/// than the rest (warm-up not over). Phases shorter than 200 ms are not judged.
pub fn series_warnings(p: &PhaseResult) -> Vec<String> {
    let mut out = Vec::new();
    let runs = p.series.len();
    for (i, series) in p.series.iter().enumerate() {
        let run = if runs > 1 {
            format!("run {} of {runs}: ", i + 1)
        } else {
            String::new()
        };
        if let Some(w) = drift(series) {
            out.push(format!("{run}{w}"));
        }
        if let Some(w) = cold_start(series) {
            out.push(format!("{run}{w}"));
        }
    }
    out
}

/// Shortest series judged, in ms.
const JUDGED_FROM_MS: f64 = 200.0;

/// Operations per second over the points starting in `[from, to)` of the span.
fn rate_between(series: &super::model::Series, from: f64, to: f64) -> Option<f64> {
    let n = series.points.len();
    let (mut ops, mut ms) = (0u64, 0.0);
    for (i, p) in series.points.iter().enumerate() {
        let start = i as f64 * series.interval_ms;
        if start < from * series.span_ms || start >= to * series.span_ms {
            continue;
        }
        let width = if i + 1 == n {
            (series.span_ms - start).clamp(0.0, series.interval_ms)
        } else {
            series.interval_ms
        };
        ops += p.ops;
        ms += width;
    }
    (ms > 0.0).then(|| ops as f64 / (ms / 1000.0))
}

fn drift(series: &super::model::Series) -> Option<String> {
    if series.span_ms < JUDGED_FROM_MS || series.points.len() < 10 {
        return None;
    }
    let middle = rate_between(series, 0.4, 0.6)?;
    let last = rate_between(series, 0.9, 1.0)?;
    let change = last / middle - 1.0;
    (middle > 0.0 && change.abs() > 0.2).then(|| {
        format!(
            "throughput drifted: the last tenth ran at {last:.0} ops/s, the middle at \
             {middle:.0} ({:+.0}%)",
            change * 100.0
        )
    })
}

fn cold_start(series: &super::model::Series) -> Option<String> {
    if series.span_ms < JUDGED_FROM_MS || series.points.len() < 10 {
        return None;
    }
    let rates = series.rates();
    // The last point is cut short where the phase ended; it is not a typical one.
    let mut typical: Vec<f64> = rates[1..rates.len() - 1].iter().map(|r| r.1).collect();
    typical.sort_by(f64::total_cmp);
    let median = typical[typical.len() / 2];
    let first = rates[0].1;
    (median > 0.0 && first < median * 0.5).then(|| {
        format!(
            "warm-up not over: the first {:.1} ms ran at {:.0}% of the median interval's \
             rate (more --warmup-runs, or longer phases)",
            series.interval_ms,
            first / median * 100.0
        )
    })
}

/// An open-loop phase whose client could not keep to its schedule says so, by how much:
/// never a silent lower rate.
pub fn schedule_warning(p: &PhaseResult) -> Option<String> {
    let ol = p.open_loop.as_ref()?;
    (p.ops_per_s < ol.rate * 0.95).then(|| {
        format!(
            "the schedule fell behind by up to {:.1} ms: {:.0} of the {:.0} ops/s asked for",
            ol.max_behind_ms, p.ops_per_s, ol.rate
        )
    })
}

/// The seed benchmarks' block for a repeated phase: one line per run (duration,
/// queries/sec, allocs/query, B/query), then the average and the median.
pub fn runs_block(p: &PhaseResult) -> Vec<String> {
    if p.runs.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![format!(
        "{} {} {} ({} operations, concurrency {}), {} runs",
        p.kind.label(),
        p.size.name,
        p.size.records,
        p.ops,
        p.concurrency,
        p.runs.len()
    )];
    for r in &p.runs {
        let allocs = match (r.allocs_per_op, r.bytes_per_op) {
            (Some(a), Some(b)) => format!("\t{a:>7.0} allocs/query\t{b:>7.0} B/query"),
            _ => String::new(),
        };
        lines.push(format!(
            " {:.6}s \t{:>9.0} queries/sec{allocs}",
            r.wall_ms / 1000.0,
            r.ops_per_s
        ));
    }
    let qps: Vec<f64> = p.runs.iter().map(|r| r.ops_per_s).collect();
    let avg = qps.iter().sum::<f64>() / qps.len() as f64;
    let spread = Spread::of(&qps).expect("runs is not empty");
    lines.push(format!(
        " -- avg {avg:.0} qps;  median {:.0} qps  (min {:.0}, max {:.0})",
        spread.median, spread.min, spread.max
    ));
    lines
}

/// What a store's run ended with, when it did not end well.
pub fn status_line(r: &StoreResult) -> Option<String> {
    let what = match r.status {
        StoreStatus::Ok => return None,
        StoreStatus::Failed => "FAILED",
        StoreStatus::Skipped => "SKIPPED",
        StoreStatus::Interrupted => "INTERRUPTED",
    };
    Some(match &r.error {
        Some(e) => format!("{what}: {e}"),
        None => what.to_string(),
    })
}

/// The blog's block of lines for one store, in run order.
pub fn store_lines(r: &StoreResult) -> Vec<String> {
    let mut lines = Vec::new();
    let unknown = r.size_error.is_some();
    if r.initial_size_bytes.is_some() || unknown {
        lines.push(size_line("initial", r.initial_size_bytes));
    }
    let (inserts, searches): (Vec<_>, Vec<_>) = r
        .phases
        .iter()
        .partition(|p| p.kind == super::model::PhaseKind::Insert);
    let with_warnings = |p: &PhaseResult| {
        let mut lines = vec![phase_line(p)];
        lines.extend(
            series_warnings(p)
                .into_iter()
                .map(|w| format!("  WARNING: {w}")),
        );
        lines
    };
    lines.extend(inserts.into_iter().flat_map(with_warnings));
    if r.final_size_bytes.is_some() || (unknown && !searches.is_empty()) {
        lines.push(size_line("final", r.final_size_bytes));
    }
    lines.extend(searches.into_iter().flat_map(with_warnings));
    lines.extend(
        r.not_applicable
            .iter()
            .map(|t| format!("{t}: not applicable")),
    );
    lines.extend(status_line(r));
    lines
}

/// A table with aligned columns; `numeric[i]` right-aligns column i.
pub fn table(headers: &[&str], rows: &[Vec<String>], numeric: &[bool]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut out = String::new();
        for (i, cell) in cells.enumerate() {
            let pad = widths[i].saturating_sub(cell.chars().count());
            if i > 0 {
                out.push_str("  ");
            }
            if numeric.get(i).copied().unwrap_or(false) {
                out.extend(std::iter::repeat_n(' ', pad));
                out.push_str(cell);
            } else {
                out.push_str(cell);
                out.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
        out
    };
    let mut out = line(&mut headers.iter().copied());
    out.push_str(&line(
        &mut widths
            .iter()
            .map(|&w| "-".repeat(w))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str),
    ));
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
}

/// Headers of the per-phase recap, shared with the markdown renderer.
pub const PHASE_HEADERS: [&str; 18] = [
    "store",
    "phase",
    "size",
    "conc",
    "ops",
    "ms",
    "ops/s",
    "ops/s min-max",
    "p50 us",
    "p50/floor",
    "p90 us",
    "p99 us",
    "p99.9 us",
    "max us",
    "cpu us/op",
    "allocs/op",
    "B/op",
    "errors",
];

/// The per-phase recap's rows: every phase of every store, in run order.
pub fn phase_rows(report: &Report) -> Vec<Vec<String>> {
    report
        .stores
        .iter()
        .flat_map(|s| {
            s.phases
                .iter()
                .map(|p| phase_row(report.floor.as_ref(), s, p))
        })
        .collect()
}

/// One row of the per-phase recap.
pub fn phase_row(floor: Option<&Floor>, r: &StoreResult, p: &PhaseResult) -> Vec<String> {
    let l = &p.latency_us;
    vec![
        r.store.clone(),
        p.kind.label().to_string(),
        p.size.name.clone(),
        p.concurrency.to_string(),
        p.ops.to_string(),
        format!("{:.2}", p.wall_ms),
        format!("{:.0}", p.ops_per_s),
        Spread::of(&p.runs.iter().map(|r| r.ops_per_s).collect::<Vec<_>>())
            .map_or_else(|| "-".to_string(), |s| format!("{:.0}-{:.0}", s.min, s.max)),
        human_us(l.p50),
        floor_multiple(floor, r, p).unwrap_or_else(|| "-".to_string()),
        human_us(l.p90),
        human_us(l.p99),
        human_us(l.p999),
        human_us(l.max),
        human_us(p.cpu_us_per_op),
        p.allocs_per_op
            .map_or_else(|| "-".to_string(), |a| format!("{a:.1}")),
        p.bytes_per_op
            .map_or_else(|| "-".to_string(), |b| format!("{b:.0}")),
        if p.retries > 0 {
            format!("{} ({} retried)", p.errors, p.retries)
        } else {
            p.errors.to_string()
        },
    ]
}

/// `3 retries on a new connection` (`--retries`; one operation may be retried more than
/// once).
pub fn retried(p: &PhaseResult) -> String {
    let s = if p.retries == 1 { "y" } else { "ies" };
    format!("{} retr{s} on a new connection", p.retries)
}

/// Headers of the per-store recap, shared with the markdown renderer.
pub const STORE_HEADERS: [&str; 8] = [
    "store",
    "status",
    "version",
    "runs",
    "durability",
    "initial size",
    "final size",
    "search path",
];

/// One row of the per-store recap.
pub fn store_row(r: &StoreResult) -> Vec<String> {
    let size = |b: Option<u64>| b.map_or_else(|| "-".to_string(), human_size);
    let status = match r.status {
        StoreStatus::Ok => "ok",
        StoreStatus::Failed => "FAILED",
        StoreStatus::Skipped => "skipped",
        StoreStatus::Interrupted => "interrupted",
    };
    let info = r.info.as_ref();
    vec![
        r.store.clone(),
        status.to_string(),
        info.map_or("-", |i| i.version.as_str()).to_string(),
        r.deployment
            .as_ref()
            .map_or_else(|| "-".to_string(), |d| d.describe()),
        info.map_or("-", |i| i.durability.as_str()).to_string(),
        size(r.initial_size_bytes),
        size(r.final_size_bytes),
        info.map_or("-", |i| i.search_path.as_str()).to_string(),
    ]
}

/// The driver or pool suite's table: one row per test, one column per store; `n/a` where
/// the store has no such operation. Driver cells: `qps (allocs/query, B/query)`; pool
/// cells: `ms (ops/s)`.
pub fn suite_rows(report: &Report) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let (kind, tests): (PhaseKind, Vec<String>) = match report.plan.suite.as_str() {
        "driver" => (
            PhaseKind::Driver,
            DriverTest::all().into_iter().map(|t| t.name()).collect(),
        ),
        "pool" => (
            PhaseKind::Pool,
            PoolTest::ALL.iter().map(|t| t.name().to_string()).collect(),
        ),
        "ycsb" => (PhaseKind::Ycsb, ycsb_rows(report)),
        _ => return None,
    };
    let mut headers = vec!["test".to_string()];
    headers.extend(report.stores.iter().map(|s| s.store.clone()));
    let rows = tests
        .iter()
        .map(|test| {
            let mut row = vec![test.clone()];
            row.extend(report.stores.iter().map(|s| {
                if s.not_applicable.contains(test) {
                    return "n/a".to_string();
                }
                let Some(p) = s
                    .phases
                    .iter()
                    .find(|p| p.kind == kind && &p.size.name == test)
                else {
                    return "-".to_string();
                };
                match (kind, p.allocs_per_op, p.bytes_per_op) {
                    (PhaseKind::Driver, Some(a), Some(b)) => {
                        format!("{:.0} ({a:.0}, {b:.0} B)", p.ops_per_s)
                    }
                    (PhaseKind::Driver, _, _) => format!("{:.0}", p.ops_per_s),
                    (PhaseKind::Ycsb, _, _) => format!(
                        "{:.0} ({} / {})",
                        p.ops_per_s,
                        human_us(p.latency_us.p99),
                        human_us(p.latency_us.p9999)
                    ),
                    _ => format!("{:.2} ms ({:.0}/s)", p.wall_ms, p.ops_per_s),
                }
            }));
            row
        })
        .collect();
    Some((headers, rows))
}

/// The YCSB suite's rows: every workload's operation types and its total (`a READ`,
/// `a`), in run order, across the stores (a store may have left some out).
fn ycsb_rows(report: &Report) -> Vec<String> {
    let mut rows: Vec<String> = Vec::new();
    let names = report.stores.iter().flat_map(|s| {
        s.phases
            .iter()
            .filter(|p| p.kind == PhaseKind::Ycsb)
            .map(|p| p.size.name.clone())
            .chain(s.not_applicable.iter().cloned())
    });
    for name in names {
        if !rows.contains(&name) {
            rows.push(name);
        }
    }
    rows
}

/// What the suite table shows, for its title.
pub fn suite_title(report: &Report) -> &'static str {
    match report.plan.suite.as_str() {
        "ycsb" => {
            "Operations per second by workload and operation type (median of the runs; in brackets p99 / p99.99 latency in microseconds over every run; a line without an operation type is the whole workload; n/a: the store has no such operation)"
        }
        "driver" => {
            "Queries per second by test (median of the runs; in brackets allocations and bytes allocated per query; n/a: the store has no such operation)"
        }
        _ => {
            "Wall time per test (median of the runs) and operations per second: Large Result Set is one query of 33,000 rows, Concurrent Queries 50 connections and queries, Connection Pool 2,000 queries, Batch Insert 10,000 rows; n/a: the store has no such operation"
        }
    }
}

/// Search throughput by concurrency, when there is more than one level: one row per store
/// and size, one column per level, `ops/s (p99 us)` in each cell.
pub fn scaling_rows(report: &Report) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let levels = &report.plan.concurrency;
    if levels.len() < 2 {
        return None;
    }
    let mut headers = vec!["store".to_string(), "size".to_string()];
    headers.extend(levels.iter().map(|c| format!("x{c} ops/s (p99 us)")));
    let mut rows = Vec::new();
    for s in &report.stores {
        for size in &report.plan.sizes {
            let mut row = vec![s.store.clone(), size.name.clone()];
            row.extend(levels.iter().map(|&c| {
                s.phase_at(super::model::PhaseKind::Search, &size.name, c)
                    .map_or_else(
                        || "-".to_string(),
                        |p| format!("{:.0} ({})", p.ops_per_s, human_us(p.latency_us.p99)),
                    )
            }));
            rows.push(row);
        }
    }
    Some((headers, rows))
}

fn numeric_columns(n: usize, text_columns: usize) -> Vec<bool> {
    (0..n).map(|i| i >= text_columns).collect()
}

/// The recap printed at the end of a run: every phase of every store, then every store.
pub fn recap(report: &Report) -> String {
    let phase_rows = phase_rows(report);
    let store_rows: Vec<Vec<String>> = report.stores.iter().map(store_row).collect();
    let mut out = String::from("Recap\n\n");
    out.push_str(&table(
        &PHASE_HEADERS,
        &phase_rows,
        &numeric_columns(PHASE_HEADERS.len(), 3),
    ));
    out.push('\n');
    if let Some((headers, rows)) = suite_rows(report) {
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        out.push_str(suite_title(report));
        out.push_str(":\n\n");
        out.push_str(&table(&headers, &rows, &numeric_columns(headers.len(), 1)));
        out.push('\n');
    }
    if let Some((headers, rows)) = scaling_rows(report) {
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        out.push_str("Search throughput by concurrency:\n\n");
        out.push_str(&table(&headers, &rows, &numeric_columns(headers.len(), 2)));
        out.push('\n');
    }
    if let Some((headers, rows)) = super::blog::reference_rows(report) {
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        out.push_str("Beside the 2016 blog (wall time in ms):\n\n");
        out.push_str(&table(&headers, &rows, &numeric_columns(headers.len(), 1)));
        for (phase, now, then) in super::blog::rank_rows(report) {
            out.push_str(&format!("{phase}: now {now}; 2016 {then}\n"));
        }
        for note in super::blog::notes(report) {
            out.push_str(&note.replace('`', ""));
            out.push('\n');
        }
        out.push('\n');
    }
    let bound = client_bound_lines(report);
    if !bound.is_empty() {
        out.push_str(
            "Client-bound phases (their figures are the client's limit, not the store's):\n",
        );
        for line in bound {
            out.push_str(&line);
            out.push('\n');
        }
        out.push('\n');
    }
    for (heading, lines) in phase_notes(report) {
        out.push_str(&format!("{heading}:\n"));
        for line in lines {
            out.push_str(&line);
            out.push('\n');
        }
        out.push('\n');
    }
    out.push_str(&table(&STORE_HEADERS, &store_rows, &[]));
    let settings: Vec<String> = report
        .stores
        .iter()
        .filter_map(|s| Some(format!("{}: {}", s.store, settings_line(s.info.as_ref()?))))
        .collect();
    if !settings.is_empty() {
        out.push_str("\nSettings read back from each store:\n");
        for line in settings {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// `fsync=on, synchronous_commit=on, ...`
pub fn settings_line(info: &super::model::StoreInfo) -> String {
    let settings: Vec<String> = info
        .settings
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    settings.join(", ")
}

/// The whole run as text: each store's blog lines, then the recap.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for r in &report.stores {
        out.push_str(&store_header(r));
        out.push('\n');
        for line in store_lines(r) {
            out.push_str(&line);
            out.push('\n');
        }
        for p in &r.phases {
            for line in runs_block(p) {
                out.push_str(&line);
                out.push('\n');
            }
        }
        out.push('\n');
    }
    out.push_str(&recap(report));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{Series, SeriesPoint};

    /// A series of `rates` (ops/s), one point per 10 ms, the last point whole.
    fn series(rates: &[f64]) -> Series {
        Series {
            interval_ms: 10.0,
            span_ms: rates.len() as f64 * 10.0,
            points: rates
                .iter()
                .map(|r| SeriesPoint {
                    ops: (r / 100.0).round() as u64,
                    errors: 0,
                    p50_us: 1.0,
                    p99_us: 2.0,
                    max_us: 3.0,
                })
                .collect(),
        }
    }

    #[test]
    fn a_steady_series_gives_no_warning() {
        let steady: Vec<f64> = (0..40).map(|i| 10_000.0 + (i % 3) as f64 * 500.0).collect();
        assert_eq!(drift(&series(&steady)), None);
        assert_eq!(cold_start(&series(&steady)), None);
    }

    #[test]
    fn a_slowing_end_is_drift() {
        let mut slowing = vec![10_000.0; 40];
        for r in &mut slowing[36..] {
            *r = 7_000.0;
        }
        let w = drift(&series(&slowing)).expect("drift");
        assert!(
            w.contains("last tenth ran at 7000 ops/s, the middle at 10000 (-30%)"),
            "{w}"
        );
        // 15% is within the tolerance.
        for r in &mut slowing[36..] {
            *r = 8_500.0;
        }
        assert_eq!(drift(&series(&slowing)), None);
    }

    #[test]
    fn a_slow_first_interval_is_warm_up() {
        let mut cold = vec![10_000.0; 40];
        cold[0] = 3_000.0;
        let w = cold_start(&series(&cold)).expect("warm-up");
        assert!(w.contains("the first 10.0 ms ran at 30%"), "{w}");
        cold[0] = 6_000.0;
        assert_eq!(cold_start(&series(&cold)), None);
    }

    #[test]
    fn short_phases_are_not_judged() {
        let mut short = vec![10_000.0; 15];
        short[0] = 100.0;
        short[14] = 100.0;
        assert_eq!(drift(&series(&short)), None);
        assert_eq!(cold_start(&series(&short)), None);
    }
}
