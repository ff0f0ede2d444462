//! The charts' tests, on runs made up as the measuring code writes them: the fixtures here,
//! the tests of every chart kind in `charts.rs`, those of the timelines in `timeline.rs`.

use std::collections::{BTreeMap, BTreeSet};

use hdrhistogram::Histogram;

use super::charts;
use super::frame::{HEIGHT, WIDTH};
use super::timeline::TIMELINE_HEIGHT;
use crate::machine::Machine;
use crate::report::model::{
    Latency, PhaseKind, PhaseResult, PlanSummary, Report, RunFigures, RunStatus, SCHEMA_VERSION,
    Series, SeriesPoint, StoreInfo, StoreResult, Tool,
};
use std::num::NonZeroU32;

use crate::catalog::Suite;
use crate::workload::levels::Concurrency;
use crate::workload::record::Size;

mod charts;
mod timeline;

/// base64 of a histogram's V2 encoding, as the measuring code writes it.
fn encoded(latencies_ns: &[u64]) -> String {
    let mut h = Histogram::<u64>::new(3).unwrap();
    for &ns in latencies_ns {
        h.record(ns).unwrap();
    }
    crate::report::model::encode_histogram(&h)
}

/// A run's time series as the measuring code writes it: `ops` operations at about
/// `ops_per_s` (the first interval at half speed, a wobble after it), the interval
/// 1/1024 s doubled while there are more than 48, the last one cut short.
fn series_of(ops_per_s: f64, ops: u64) -> Series {
    let span_ms = ops as f64 / ops_per_s * 1000.0;
    let mut interval_ms = 1000.0 / 1024.0;
    while span_ms / interval_ms > 48.0 && interval_ms < 1000.0 {
        interval_ms *= 2.0;
    }
    let n = (span_ms / interval_ms).ceil() as usize;
    let points = (0..n)
        .map(|i| {
            let width = (span_ms - i as f64 * interval_ms).min(interval_ms);
            let speed = if i == 0 {
                0.5
            } else {
                1.0 + 0.15 * (i as f64 * 0.9 + ops_per_s).sin()
            };
            let us = 1e6 / (ops_per_s * speed);
            SeriesPoint {
                ops: (ops_per_s * speed * width / 1000.0).round() as u64,
                errors: 0,
                p50_us: us,
                p99_us: us * 3.0,
                max_us: us * 10.0,
            }
        })
        .collect();
    Series {
        interval_ms,
        span_ms,
        points,
    }
}

/// A phase of 1000 operations: two runs' figures, three runs' time series.
fn phase(kind: PhaseKind, size: &str, concurrency: u32, ops_per_s: f64) -> PhaseResult {
    let us = 1e6 / ops_per_s;
    let run = |f: f64| RunFigures {
        wall_ms: 100.0 / f,
        ops_per_s: ops_per_s * f,
        cpu_us_per_op: 10.0,
        allocs_per_op: None,
        bytes_per_op: None,
        p50_us: us,
        p99_us: us * 3.0,
        response_p50_us: None,
        response_p99_us: None,
        server_cpu_us_per_op: None,
        write_bytes_per_op: None,
    };
    PhaseResult {
        kind,
        size: size.parse::<Size>().unwrap(),
        concurrency: level(concurrency),
        operation: None,
        ops: 1000,
        errors: 0,
        error_kinds: BTreeMap::new(),
        incomplete: false,
        wall_ms: 100.0,
        ops_per_s,
        latency_us: Latency {
            min: us / 2.0,
            mean: us,
            p50: us,
            p90: us * 1.5,
            p95: us * 2.0,
            p99: us * 3.0,
            p999: us * 5.0,
            p9999: us * 8.0,
            max: us * 10.0,
        },
        cpu_us_per_op: 10.0,
        allocs_per_op: None,
        bytes_per_op: None,
        runs: vec![run(0.9), run(1.1)],
        histogram: None,
        open_loop: None,
        client_bound: None,
        retries: 0,
        server_counters: Default::default(),
        client_wall_ms: Vec::new(),
        common_ops_per_s: None,
        alloc_sites: None,
        server: None,
        series: [0.9, 1.0, 1.1]
            .map(|f| series_of(ops_per_s * f, 1000))
            .to_vec(),
    }
}

fn store(name: &str, version: &str, speed: f64) -> StoreResult {
    let mut s = StoreResult::new(name);
    s.info = Some(StoreInfo {
        version: version.into(),
        durability: "durable".into(),
        settings: BTreeMap::new(),
        search_path: String::new(),
        write_path: String::new(),
        size_method: String::new(),
    });
    s.initial_size_bytes = Some(24 * 1024);
    s.final_size_bytes = Some((speed * 3000.0) as u64);
    for (kind, base) in [(PhaseKind::Insert, 1.0), (PhaseKind::Search, 10.0)] {
        for size in ["micro", "tiny"] {
            s.phases.push(phase(kind, size, 1, speed * base));
        }
    }
    for size in ["micro", "tiny"] {
        s.phases
            .push(phase(PhaseKind::Search, size, 4, speed * 25.0));
    }
    s
}

fn machine() -> Machine {
    Machine {
        cpu_model: "Example CPU @ 2.00GHz".into(),
        cores: 8,
        memory_bytes: 16 << 30,
        os: "Linux".into(),
        kernel: "6.1.0".into(),
        arch: "x86_64".into(),
    }
}

fn report_of(stores: Vec<StoreResult>) -> Report {
    Report {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "dbcompare".into(),
            version: "0.0.0-test".into(),
            features: Vec::new(),
        },
        status: RunStatus::Complete,
        stopped_by: None,
        started_at: "2026-11-30T10:00:00Z".into(),
        finished_at: "2026-11-30T10:01:02Z".into(),
        plan: PlanSummary {
            suite: Suite::Classic,
            scale: None,
            stores: stores.iter().map(|s| s.store.clone()).collect(),
            sizes: vec!["micro".parse().unwrap(), "tiny".parse().unwrap()],
            searches_per_insert: 40,
            durability: "durable".into(),
            warmup_runs: 0,
            runs: NonZeroU32::new(2).unwrap(),
            concurrency: vec![level(1), level(4)],
            rate: None,
            seed: 2016,
            client_threads: Some(2),
            workloads: Vec::new(),
            blog_reference: true,
            retries: 0,
            alloc_sites: false,
            client: None,
        },
        machine: machine(),
        floor: None,
        client_peak_rss_bytes: None,
        stores,
        interleaved: Vec::new(),
        shares: Vec::new(),
    }
}

/// sqlite, postgres and redis, 30x apart (redis the fastest); one histogram; errors in
/// an interval of postgres' SEARCH tiny.
fn fixture() -> Report {
    let mut sqlite = store("sqlite", "SQLite 3.46.0", 300.0);
    sqlite.phases[3].histogram = Some(encoded(
        &(1..=10_000u64)
            .map(|i| 20_000 + i * i / 50)
            .collect::<Vec<_>>(),
    ));
    let mut postgres = store("postgres", "PostgreSQL 15.18 <Debian> & co", 100.0);
    postgres.phases[3].series[1].points[5].errors = 3;
    let redis = store("redis", "Redis 7.0.15", 3000.0);
    report_of(vec![sqlite, postgres, redis])
}

fn file_names(report: &Report) -> Vec<String> {
    charts(report).into_iter().map(|c| c.file).collect()
}

/// The chart's distinct colours once rasterized (fonts as usvg's default: none).
fn raster_colours(svg: &str) -> usize {
    let tree =
        resvg::usvg::Tree::from_str(svg, &resvg::usvg::Options::default()).expect("the SVG parses");
    let size = tree.size().to_int_size();
    assert_eq!(size.width(), WIDTH);
    assert!([HEIGHT, TIMELINE_HEIGHT].contains(&size.height()));
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    let colours: BTreeSet<[u8; 4]> = pixmap
        .pixels()
        .iter()
        .map(|p| [p.red(), p.green(), p.blue(), p.alpha()])
        .collect();
    assert!(
        pixmap.pixels().iter().all(|p| p.alpha() == 255),
        "the background is opaque"
    );
    colours.len()
}

/// A concurrency level of the tests.
pub(super) fn level(n: u32) -> Concurrency {
    Concurrency::new(n).expect("a level of at least 1")
}
