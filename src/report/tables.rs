//! The recap tables' headers and rows, as plain cells: every renderer lays them out in its
//! own markup (aligned text, markdown, HTML).

use super::format::{human_size, human_us};
use super::lines::floor_multiple;
use super::model::{Floor, PhaseKind, PhaseResult, Report, StoreResult, StoreStatus};
use super::stats::Spread;
use super::verdict::ran;
use crate::catalog::Suite;
use crate::workload::driver::DriverTest;
use crate::workload::levels::Concurrency;
use crate::workload::pool::PoolTest;

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
    "client cpu us/op",
    "allocs/op",
    "B/op",
    "errors",
];

/// What the per-phase recap's caption adds where a phase ran in an open loop, whose
/// latencies are response times.
pub fn open_loop_note(report: &Report) -> &'static str {
    if report
        .stores
        .iter()
        .flat_map(|s| &s.phases)
        .any(|p| p.open_loop.is_some())
    {
        ", an open loop's from when each operation was due"
    } else {
        ""
    }
}

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

/// Whether `p` is a YCSB row per operation type (`a READ`) beside its workload's own row
/// (`a`): its CPU and allocations are the workload's, shared by its operations, and shown
/// on the workload's row alone.
fn shares_its_workloads_figures(r: &StoreResult, p: &PhaseResult) -> bool {
    p.kind == PhaseKind::Ycsb
        && p.size.name.split_once(' ').is_some_and(|(workload, _)| {
            r.phases.iter().any(|w| {
                w.kind == PhaseKind::Ycsb
                    && w.size.name == workload
                    && w.concurrency == p.concurrency
            })
        })
}

/// One row of the per-phase recap.
pub fn phase_row(floor: Option<&Floor>, r: &StoreResult, p: &PhaseResult) -> Vec<String> {
    let l = p.response_us();
    let shared = shares_its_workloads_figures(r, p);
    let own = |cell: String| if shared { "-".to_string() } else { cell };
    // A phase in which no operation finished has no latency or CPU per operation.
    let per_op = |v: f64| {
        if p.ops > 0 {
            human_us(v)
        } else {
            "-".to_string()
        }
    };
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
        per_op(l.p50),
        floor_multiple(floor, r, p).unwrap_or_else(|| "-".to_string()),
        per_op(l.p90),
        per_op(l.p99),
        per_op(l.p999),
        per_op(l.max),
        own(per_op(p.cpu_us_per_op)),
        own(p
            .allocs_per_op
            .map_or_else(|| "-".to_string(), |a| format!("{a:.1}"))),
        own(p
            .bytes_per_op
            .map_or_else(|| "-".to_string(), |b| format!("{b:.0}"))),
        if p.retries > 0 {
            format!("{} ({} retried)", p.errors, p.retries)
        } else {
            p.errors.to_string()
        },
    ]
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

/// The per-store recap's rows: every store that ran (a skipped one is listed once, in
/// the verdict's line).
pub fn store_rows(report: &Report) -> Vec<Vec<String>> {
    report
        .stores
        .iter()
        .filter(|s| ran(s))
        .map(store_row)
        .collect()
}

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
    let (kind, tests): (PhaseKind, Vec<String>) = match report.plan.suite {
        Suite::Driver => (
            PhaseKind::Driver,
            DriverTest::all().into_iter().map(|t| t.name()).collect(),
        ),
        Suite::Pool => (
            PhaseKind::Pool,
            PoolTest::ALL.iter().map(|t| t.name().to_string()).collect(),
        ),
        Suite::Ycsb => (PhaseKind::Ycsb, ycsb_rows(report)),
        Suite::Classic => return None,
    };
    let stores: Vec<&StoreResult> = report.stores.iter().filter(|s| ran(s)).collect();
    let mut headers = vec!["test".to_string()];
    headers.extend(stores.iter().map(|s| s.store.clone()));
    let rows = tests
        .iter()
        .map(|test| {
            let mut row = vec![test.clone()];
            row.extend(stores.iter().map(|s| {
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
                        human_us(p.response_us().p99),
                        human_us(p.response_us().p9999)
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
    match report.plan.suite {
        Suite::Ycsb => {
            "Operations per second by workload and operation type (median of the runs; in brackets p99 / p99.99 latency in microseconds over every run; a line without an operation type is the whole workload; n/a: the store has no such operation)"
        }
        Suite::Driver => {
            "Queries per second by test (median of the runs; in brackets allocations and bytes allocated per query; n/a: the store has no such operation)"
        }
        Suite::Pool | Suite::Classic => {
            "Wall time per test (median of the runs) and operations per second: Large Result Set is one query of 33,000 rows, Concurrent Queries 50 connections and queries, Connection Pool 2,000 queries, Batch Insert 10,000 rows; n/a: the store has no such operation"
        }
    }
}

/// Search throughput by concurrency, when there is more than one level: one row per store
/// and size, one column per level, `ops/s (p99 us)` in each cell.
pub fn scaling_rows(report: &Report) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let levels = &report.plan.concurrency;
    // The classic suite's searches alone (YCSB's table gives each level its own rows).
    if levels.len() < 2 || report.plan.suite != Suite::Classic {
        return None;
    }
    let mut headers = vec!["store".to_string(), "size".to_string()];
    headers.extend(levels.iter().map(|c| format!("x{c} ops/s (p99 us)")));
    let mut rows = Vec::new();
    for s in report.stores.iter().filter(|s| ran(s)) {
        for size in &report.plan.sizes {
            let mut row = vec![s.store.clone(), size.name.clone()];
            row.extend(levels.iter().map(|&c| {
                s.phase_at(super::model::PhaseKind::Search, &size.name, c)
                    .map_or_else(
                        || "-".to_string(),
                        |p| format!("{:.0} ({})", p.ops_per_s, human_us(p.response_us().p99)),
                    )
            }));
            rows.push(row);
        }
    }
    Some((headers, rows))
}

/// The blog's recap table (headers, rows): wall time in ms per phase, sizes on disk.
pub fn time_rows(report: &Report) -> (Vec<String>, Vec<Vec<String>>) {
    let stores: Vec<&StoreResult> = report.stores.iter().filter(|s| ran(s)).collect();
    let mut headers = vec!["phase".to_string()];
    headers.extend(stores.iter().map(|s| s.store.clone()));
    // A phase's whole time, or why there is none to show.
    let cell = |p: Option<&PhaseResult>| match p {
        None => "-".to_string(),
        Some(p) if p.incomplete => "stopped early".to_string(),
        Some(p) => format!("{:.2}", p.wall_ms),
    };
    let mut rows = Vec::new();
    for size in &report.plan.sizes {
        let mut row = vec![format!("INSERT {} {}", size.name, size.records)];
        row.extend(
            stores
                .iter()
                .map(|s| cell(s.phase(PhaseKind::Insert, &size.name))),
        );
        rows.push(row);
    }
    // Searches at each concurrency level, the lowest first; a level above one says so.
    let mut levels = report.plan.concurrency.clone();
    levels.sort();
    for level in levels {
        for size in &report.plan.sizes {
            let mut name = format!("SEARCH {} {}", size.name, size.records);
            if level != Concurrency::ONE {
                name.push_str(&format!(" (concurrency {level})"));
            }
            let mut row = vec![name];
            row.extend(
                stores
                    .iter()
                    .map(|s| cell(s.phase_at(PhaseKind::Search, &size.name, level))),
            );
            rows.push(row);
        }
    }
    let initial: fn(&StoreResult) -> Option<u64> = |s| s.initial_size_bytes;
    let fin: fn(&StoreResult) -> Option<u64> = |s| s.final_size_bytes;
    for (label, size_of) in [("initial size", initial), ("final size", fin)] {
        let mut row = vec![label.to_string()];
        row.extend(
            stores
                .iter()
                .map(|s| size_of(s).map_or_else(|| "-".to_string(), human_size)),
        );
        rows.push(row);
    }
    (headers, rows)
}
