//! Snapshot tests of the text, markdown and JSON renderings of one fixed report.

use std::collections::BTreeMap;

use dbcompare::machine::Machine;
use dbcompare::report::model::*;
use dbcompare::report::{json, markdown, text};
use dbcompare::workload::record::Size;

fn phase(kind: PhaseKind, size: &Size, ops: u64, wall_ms: f64, p50: f64) -> PhaseResult {
    PhaseResult {
        kind,
        size: size.clone(),
        ops,
        errors: 0,
        error_kinds: BTreeMap::new(),
        incomplete: false,
        wall_ms,
        ops_per_s: ops as f64 / (wall_ms / 1000.0),
        latency_us: Latency {
            min: p50 * 0.5,
            mean: p50 * 1.1,
            p50,
            p90: p50 * 1.5,
            p95: p50 * 2.0,
            p99: p50 * 3.0,
            p999: p50 * 7.0,
            p9999: p50 * 20.0,
            max: p50 * 40.0,
        },
        cpu_us_per_op: p50 * 0.8,
        allocs_per_op: Some(3.0),
        bytes_per_op: Some(160.0),
        concurrency: 1,
        operation: None,
        runs: Vec::new(),
        histogram: None,
        open_loop: None,
    }
}

/// The same phase, measured in two runs (the median is their mean).
fn repeated(mut p: PhaseResult) -> PhaseResult {
    let run = |factor: f64| RunFigures {
        wall_ms: p.wall_ms * factor,
        ops_per_s: p.ops_per_s / factor,
        cpu_us_per_op: p.cpu_us_per_op,
        allocs_per_op: Some(3.0),
        bytes_per_op: Some(160.0),
        p50_us: p.latency_us.p50,
        p99_us: p.latency_us.p99,
    };
    p.runs = vec![run(0.9), run(1.1)];
    p
}

fn fixture() -> Report {
    let sizes: Vec<Size> = ["micro", "tiny"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let mut ok = StoreResult::new("sqlite");
    ok.info = Some(StoreInfo {
        version: "SQLite 3.46.0".into(),
        durability: "durable".into(),
        settings: BTreeMap::from([
            ("journal_mode".into(), "wal".into()),
            ("synchronous".into(), "FULL".into()),
        ]),
        search_path:
            "SEARCH dbcompare_records USING INDEX dbcompare_records_unique_id (unique_id=?)".into(),
        write_path: "BEGIN; INSERT; COMMIT (one transaction per record)".into(),
        size_method: "database file + WAL after wal_checkpoint(TRUNCATE)".into(),
    });
    ok.deployment = Some(Deployment {
        kind: "embedded".into(),
        url: None,
        server: None,
        start_ms: None,
        data_dir: None,
    });
    ok.initial_size_bytes = Some(24 * 1024);
    ok.final_size_bytes = Some(3_250_586);
    let mut concurrent = phase(PhaseKind::Search, &sizes[0], 4000, 7.5, 3.1);
    concurrent.concurrency = 2;
    let mut paced = phase(PhaseKind::Search, &sizes[1], 40000, 400.0, 2.9);
    paced.concurrency = 2;
    paced.open_loop = Some(OpenLoop {
        rate: 200_000.0,
        response_us: Latency {
            min: 2.0,
            mean: 900.0,
            p50: 850.0,
            p90: 1500.0,
            p95: 1800.0,
            p99: 2000.0,
            p999: 2100.0,
            p9999: 2190.0,
            max: 2200.0,
        },
        max_behind_ms: 260.5,
        response_histogram: "HISTFAAAAB54nJNpmSzMwMDAxAABzFCaEUzMu7rqX1OZZjYAOTUFgQ==".into(),
    });
    ok.phases = vec![
        repeated(phase(PhaseKind::Insert, &sizes[0], 100, 41.2, 380.0)),
        repeated(phase(PhaseKind::Insert, &sizes[1], 1000, 398.5, 372.5)),
        repeated(phase(PhaseKind::Search, &sizes[0], 4000, 12.25, 2.61)),
        repeated(phase(PhaseKind::Search, &sizes[1], 40000, 131.0, 2.87)),
        concurrent,
        paced,
    ];

    let mut failed = StoreResult::new("other");
    failed.status = StoreStatus::Failed;
    failed.error =
        Some("SEARCH micro: 1 error(s); first: wrong record for unique_id micro-17: ...".into());
    failed.deployment = Some(Deployment {
        kind: "local server".into(),
        url: Some("other://127.0.0.1:40000/0".into()),
        server: Some("other-server 1.2.3".into()),
        start_ms: Some(81.5),
        data_dir: Some("/tmp/dbcompare-other-x".into()),
    });
    failed.initial_size_bytes = Some(18);
    failed.final_size_bytes = Some(1_100_000);
    failed.final_size_extra = BTreeMap::from([("data directory".to_string(), 5_000_000)]);
    let mut bad = phase(PhaseKind::Search, &sizes[0], 4000, 80.0, 19.5);
    bad.errors = 1;
    bad.error_kinds = BTreeMap::from([("wrong record".to_string(), 1)]);
    failed.phases = vec![
        phase(PhaseKind::Insert, &sizes[0], 100, 3.94, 38.0),
        phase(PhaseKind::Insert, &sizes[1], 1000, 38.28, 37.0),
        bad,
    ];

    let mut skipped = StoreResult::new("absent");
    skipped.status = StoreStatus::Skipped;
    skipped.error = Some("not installed: run provisioning/install.sh absent".into());

    Report {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "dbcompare".into(),
            version: "0.0.0-test".into(),
        },
        status: RunStatus::Complete,
        started_at: "2026-11-30T10:00:00Z".into(),
        finished_at: "2026-11-30T10:01:02Z".into(),
        plan: PlanSummary {
            suite: "classic".into(),
            scale: None,
            stores: vec!["sqlite".into(), "other".into(), "absent".into()],
            sizes,
            searches_per_insert: 40,
            seed: 2016,
            durability: "durable".into(),
            warmup_runs: 1,
            runs: 2,
            concurrency: vec![1, 2],
            rate: None,
            client_threads: Some(1),
            workloads: Vec::new(),
        },
        machine: Machine {
            cpu_model: "Example CPU @ 2.00GHz".into(),
            cores: 2,
            memory_bytes: 24 << 30,
            os: "Debian GNU/Linux 12 (bookworm)".into(),
            kernel: "6.1.0".into(),
            arch: "x86_64".into(),
        },
        stores: vec![ok, failed, skipped],
    }
}

#[test]
fn text() {
    insta::assert_snapshot!(text::render(&fixture()));
}

#[test]
fn markdown() {
    insta::assert_snapshot!(markdown::render(&fixture()));
}

#[test]
fn json_and_its_round_trip() {
    let report = fixture();
    let rendered = json::render(&report);
    insta::assert_snapshot!(rendered);
    assert_eq!(json::parse(&rendered).unwrap(), report);
}

#[test]
fn partial_and_interrupted_runs_say_so() {
    let mut report = fixture();
    report.status = RunStatus::Partial;
    assert!(markdown::render(&report).contains("**PARTIAL RUN**"));
    report.status = RunStatus::Interrupted;
    assert!(markdown::render(&report).contains("**INTERRUPTED RUN**"));
    assert!(json::render(&report).contains("\"status\": \"interrupted\""));
}

#[test]
fn an_unknown_schema_version_is_refused() {
    let rendered =
        json::render(&fixture()).replace("\"schema_version\": 1", "\"schema_version\": 99");
    assert!(
        json::parse(&rendered)
            .unwrap_err()
            .to_string()
            .contains("schema_version")
    );
}

/// A driver-suite run: one store that runs a test, one that has no such operation.
fn driver_fixture() -> Report {
    let mut report = fixture();
    report.plan.suite = "driver".into();
    report.plan.scale = Some(0.1);
    report.plan.concurrency = vec![1];
    let test = |name: &str, iterations: u64, wall_ms: f64, conc: u32| {
        let size = Size {
            name: name.into(),
            records: iterations,
        };
        let mut p = repeated(phase(PhaseKind::Driver, &size, iterations, wall_ms, 40.0));
        p.concurrency = conc;
        p.operation = Some("SELECT 1, prepared".into());
        p
    };
    let mut sql = StoreResult::new("sqlstore");
    sql.phases = vec![
        test("PreparedQueryRow", 25_000, 350.0, 1),
        test("PreparedQueryConcurrent8", 50_000, 420.0, 8),
    ];
    let mut kv = StoreResult::new("kvstore");
    kv.phases = vec![test("PreparedQueryRow", 25_000, 500.0, 1)];
    kv.not_applicable = vec!["EchoMixed5".into()];
    report.stores = vec![sql, kv];
    report
}

#[test]
fn driver_suite_markdown() {
    insta::assert_snapshot!(markdown::render(&driver_fixture()));
}

#[test]
fn driver_suite_text() {
    insta::assert_snapshot!(text::render(&driver_fixture()));
}

/// A YCSB run: workload E on a store with scans and on one without.
fn ycsb_fixture() -> Report {
    let mut report = fixture();
    report.plan.suite = "ycsb".into();
    report.plan.concurrency = vec![1];
    report.plan.workloads = vec![
        "e: 5% insert, 95% scan, zipfian, scans of 1 to 100 records; 1000 operations on 1000 \
         records of 10 fields x 100 bytes"
            .into(),
    ];
    let op = |name: &str, ops: u64, wall_ms: f64, p50: f64, how: Option<&str>| {
        let size = Size {
            name: name.into(),
            records: ops,
        };
        let mut p = phase(PhaseKind::Ycsb, &size, ops, wall_ms, p50);
        p.allocs_per_op = None;
        p.bytes_per_op = None;
        p.operation = how.map(str::to_string);
        p
    };
    let mut ordered = StoreResult::new("ordered");
    ordered.phases = vec![
        op(
            "load INSERT",
            1000,
            900.0,
            800.0,
            Some("INSERT of every field"),
        ),
        op("e INSERT", 50, 2000.0, 850.0, Some("INSERT of every field")),
        op(
            "e SCAN",
            950,
            2000.0,
            1900.0,
            Some("SELECT ... ORDER BY key LIMIT n"),
        ),
        op("e", 1000, 2000.0, 1850.0, None),
    ];
    let mut unordered = StoreResult::new("unordered");
    unordered.phases = vec![
        op("load INSERT", 1000, 700.0, 650.0, Some("put of every bin")),
        op("e INSERT", 50, 40.0, 700.0, Some("put of every bin")),
    ];
    unordered.not_applicable = vec!["e SCAN".into()];
    report.stores = vec![ordered, unordered];
    report
}

#[test]
fn ycsb_suite_markdown() {
    insta::assert_snapshot!(markdown::render(&ycsb_fixture()));
}

#[test]
fn ycsb_suite_text() {
    insta::assert_snapshot!(text::render(&ycsb_fixture()));
}
