//! The blog's lines for one store and its phases (`INSERT micro 100 41.20 ms`), as the
//! console prints them while a run goes and every renderer repeats them, and the machine's
//! floor and a phase's multiple of it.

use std::fmt::Write;

use super::format::{human_size, human_us};
use super::model::{Floor, PhaseKind, PhaseResult, StoreResult, StoreStatus};
use super::stats::Spread;
use super::warnings::{schedule_warning, series_warnings};
use crate::workload::levels::Concurrency;

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
    if p.concurrency > Concurrency::ONE {
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
    if p.ops == 0 {
        line.push_str(", no operation finished");
    } else {
        let _ = write!(
            line,
            ", p50 {} us, p99 {} us, cpu {} us/op",
            human_us(p.latency_us.p50),
            human_us(p.latency_us.p99),
            human_us(p.cpu_us_per_op)
        );
    }
    if let Some(cost) = super::costs::summary(p) {
        let _ = write!(line, ", {cost}");
    }
    if p.errors > 0 {
        let _ = write!(line, ", {} error(s)", p.errors);
    }
    if p.retries > 0 {
        let _ = write!(line, ", {}", retried(p));
    }
    Some(line)
}

/// `3 retries on a new connection` (`--retries`; one operation may be retried more than
/// once).
pub fn retried(p: &PhaseResult) -> String {
    let s = if p.retries == 1 { "y" } else { "ies" };
    format!("{} retr{s} on a new connection", p.retries)
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
            .map(|t| match r.not_applicable_why.get(t) {
                Some(why) => format!("{t}: not applicable ({why})"),
                None => format!("{t}: not applicable"),
            }),
    );
    lines.extend(status_line(r));
    lines
}

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
            match p.concurrency.get() {
                1 => (floor.loopback_c1.p50_us, "rtt"),
                8 => (floor.loopback_c8.p50_us, "rtt"),
                _ => return None,
            }
        }
        _ => return None,
    };
    (base > 0.0 && p.latency_us.p50 > 0.0).then(|| (p.latency_us.p50 / base, what))
}
