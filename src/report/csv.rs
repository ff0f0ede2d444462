//! CSV rendering (`results.csv`): one row per store, suite, phase and concurrency, every
//! figure in a column of its own, the unit in the column's name (`ops_per_s`, `p99_us`), as
//! hyperfine's export does. An empty cell is a figure that was not measured.

use super::model::{Report, StoreStatus};
use super::stats::Spread;

/// The header, in column order.
pub const HEADERS: [&str; 46] = [
    "suite",
    "store",
    "store_status",
    "version",
    "deployment",
    "durability",
    "phase",
    "size",
    "records",
    "concurrency",
    "operation",
    "ops",
    "errors",
    "retries",
    "incomplete",
    "runs",
    "wall_ms",
    "ops_per_s",
    "ops_per_s_min",
    "ops_per_s_max",
    "latency_min_us",
    "latency_mean_us",
    "p50_us",
    "p90_us",
    "p95_us",
    "p99_us",
    "p999_us",
    "p9999_us",
    "latency_max_us",
    "cpu_us_per_op",
    "allocs_per_op",
    "bytes_per_op",
    "open_loop_rate_ops_per_s",
    "response_p99_us",
    "p50_over_floor",
    "floor",
    "client_bound",
    "server_figures_from",
    "server_cpu_user_us_per_op",
    "server_cpu_system_us_per_op",
    "server_write_bytes_per_op",
    "server_read_bytes_per_op",
    "write_amplification",
    "syncs_per_op",
    "server_peak_memory_bytes",
    "logical_bytes",
];

/// `results.csv` for a run. A store without phases (failed at its start, skipped) still
/// has one row, with its status and no figures, so that no store goes missing.
pub fn render(report: &Report) -> String {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(HEADERS).expect("writing to memory");
    let suite = report.plan.suite.to_string();
    for s in &report.stores {
        let status = match s.status {
            StoreStatus::Ok => "ok",
            StoreStatus::Failed => "failed",
            StoreStatus::Skipped => "skipped",
            StoreStatus::Interrupted => "interrupted",
        };
        let info = s.info.as_ref();
        let store_cells = [
            suite.to_string(),
            s.store.clone(),
            status.to_string(),
            info.map(|i| i.version.clone()).unwrap_or_default(),
            s.deployment
                .as_ref()
                .map(|d| d.kind.clone())
                .unwrap_or_default(),
            info.map(|i| i.durability.clone()).unwrap_or_default(),
        ];
        if s.phases.is_empty() {
            let mut row = store_cells.to_vec();
            row.resize(HEADERS.len(), String::new());
            out.write_record(&row).expect("writing to memory");
        }
        for p in &s.phases {
            let l = &p.latency_us;
            // A phase in which no operation finished (stopped at once) has no latency or
            // CPU per operation: empty cells, not zeros.
            let per_op = |v: f64| if p.ops > 0 { figure(v) } else { String::new() };
            let spread = Spread::of(&p.runs.iter().map(|r| r.ops_per_s).collect::<Vec<_>>());
            let opt = |v: Option<f64>| v.map(figure).unwrap_or_default();
            let multiple = super::lines::floor_ratio(report.floor.as_ref(), s, p);
            let mut row = store_cells.to_vec();
            row.extend([
                p.kind.label().to_lowercase(),
                p.size.name.clone(),
                p.size.records.to_string(),
                p.concurrency.to_string(),
                p.operation.clone().unwrap_or_default(),
                p.ops.to_string(),
                p.errors.to_string(),
                p.retries.to_string(),
                p.incomplete.to_string(),
                p.runs.len().max(1).to_string(),
                figure(p.wall_ms),
                figure(p.ops_per_s),
                opt(spread.map(|s| s.min)),
                opt(spread.map(|s| s.max)),
                per_op(l.min),
                per_op(l.mean),
                per_op(l.p50),
                per_op(l.p90),
                per_op(l.p95),
                per_op(l.p99),
                per_op(l.p999),
                per_op(l.p9999),
                per_op(l.max),
                per_op(p.cpu_us_per_op),
                opt(p.allocs_per_op),
                opt(p.bytes_per_op),
                opt(p.open_loop.as_ref().map(|o| o.rate)),
                opt(p.open_loop.as_ref().map(|o| o.response_us.p99)),
                multiple.map(|(m, _)| figure(m)).unwrap_or_default(),
                multiple.map(|(_, f)| f.to_string()).unwrap_or_default(),
                p.client_bound.clone().unwrap_or_default(),
            ]);
            let cost = p.server.as_ref();
            row.extend([
                match (cost, super::costs::whole_workload(s, p)) {
                    (Some(c), _) => serde_name(&c.source),
                    // Its cost is in its workload's row, as a whole.
                    (None, Some(w)) => format!("workload {}", w.size.name),
                    (None, None) => String::new(),
                },
                opt(cost.and_then(|c| c.cpu_user_us_per_op)),
                opt(cost.and_then(|c| c.cpu_system_us_per_op)),
                opt(cost.and_then(|c| c.write_bytes_per_op)),
                opt(cost.and_then(|c| c.read_bytes_per_op)),
                opt(cost.and_then(|c| c.write_amplification)),
                opt(cost.and_then(|c| c.syncs_per_op)),
                cost.and_then(|c| c.peak_memory_bytes)
                    .map(|b| b.to_string())
                    .unwrap_or_default(),
                cost.and_then(|c| c.logical_bytes)
                    .map(|b| b.to_string())
                    .unwrap_or_default(),
            ]);
            out.write_record(&row).expect("writing to memory");
        }
    }
    String::from_utf8(out.into_inner().expect("writing to memory")).expect("CSV of UTF-8 cells")
}

/// A value's serde name (`processes`), as run.json writes it.
fn serde_name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The header of the time-series CSV, in column order.
pub const SERIES_HEADERS: [&str; 15] = [
    "suite",
    "store",
    "phase",
    "size",
    "concurrency",
    "run",
    "start_ms",
    "interval_ms",
    "ops",
    "errors",
    "ops_per_s",
    "p50_us",
    "p99_us",
    "max_us",
    "span_ms",
];

/// `series.csv` for a run: one row per store, phase, measured run and interval.
pub fn render_series(report: &Report) -> String {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(SERIES_HEADERS).expect("writing to memory");
    for s in &report.stores {
        for p in &s.phases {
            for (run, series) in p.series.iter().enumerate() {
                for ((start, rate), point) in series.rates().into_iter().zip(&series.points) {
                    out.write_record([
                        report.plan.suite.to_string(),
                        s.store.clone(),
                        p.kind.label().to_lowercase(),
                        p.size.name.clone(),
                        p.concurrency.to_string(),
                        (run + 1).to_string(),
                        figure(start),
                        figure(series.interval_ms),
                        point.ops.to_string(),
                        point.errors.to_string(),
                        figure(rate),
                        figure(point.p50_us),
                        figure(point.p99_us),
                        figure(point.max_us),
                        figure(series.span_ms),
                    ])
                    .expect("writing to memory");
                }
            }
        }
    }
    String::from_utf8(out.into_inner().expect("writing to memory")).expect("CSV of UTF-8 cells")
}

/// A figure as a plain number: no thousands separators, at most three decimals, no
/// trailing zeros (`1234.5`, `0.125`, `7`).
fn figure(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_plain_numbers() {
        assert_eq!(figure(1234.5), "1234.5");
        assert_eq!(figure(0.125), "0.125");
        assert_eq!(figure(7.0), "7");
        assert_eq!(figure(2.0 / 3.0), "0.667");
        assert_eq!(figure(-0.0001), "0");
        assert_eq!(figure(f64::NAN), "");
    }
}
