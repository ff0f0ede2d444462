//! Snapshot tests of the text, markdown, CSV and JSON renderings of fixed reports, of the
//! comparison of two runs, and of run.json against its published schema.

use std::collections::BTreeMap;
use std::num::NonZeroU32;

use dbcompare::catalog::Suite;
use dbcompare::machine::Machine;
use dbcompare::report::model::*;
use dbcompare::report::{compare, csv, html, json, lines, markdown, notices, text, verdict};
use dbcompare::workload::levels::Concurrency;
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
        concurrency: Concurrency::ONE,
        operation: None,
        runs: Vec::new(),
        histogram: None,
        open_loop: None,
        client_bound: None,
        retries: 0,
        server_counters: Default::default(),
        client_wall_ms: Vec::new(),
        common_ops_per_s: None,
        alloc_sites: None,
        server: None,
        series: Vec::new(),
    }
}

/// What a phase cost the server: `cpu_us` per operation (none for an embedded store),
/// `written` bytes per operation, `logical` bytes inserted.
fn cost(source: CostSource, cpu_us: Option<f64>, written: f64, logical: Option<u64>) -> ServerCost {
    ServerCost {
        source,
        cpu_user_us_per_op: cpu_us.map(|c| c * 0.75),
        cpu_system_us_per_op: cpu_us.map(|c| c * 0.25),
        write_bytes_per_op: Some(written),
        read_bytes_per_op: Some(0.0),
        peak_memory_bytes: cpu_us.map(|_| 86_477_824),
        end_memory_bytes: cpu_us.map(|_| 86_000_000),
        logical_bytes: logical,
        write_amplification: logical.map(|l| written * 100.0 / l as f64),
        syncs_per_op: cpu_us.map(|_| 1.0),
        reported_per_op: BTreeMap::new(),
        series: Vec::new(),
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
        response_p50_us: None,
        response_p99_us: None,
        server_cpu_us_per_op: None,
        write_bytes_per_op: None,
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
        durability_asked: None,
    });
    ok.initial_size_bytes = Some(24 * 1024);
    ok.final_size_bytes = Some(3_250_586);
    let mut concurrent = phase(PhaseKind::Search, &sizes[0], 4000, 7.5, 3.1);
    concurrent.concurrency = level(2);
    let mut paced = phase(PhaseKind::Search, &sizes[1], 40000, 400.0, 2.9);
    paced.concurrency = level(2);
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
    let mut embedded_insert = repeated(phase(PhaseKind::Insert, &sizes[0], 100, 41.2, 380.0));
    embedded_insert.server = Some(cost(
        CostSource::ClientProcess,
        None,
        20_807.7,
        Some(16_647),
    ));
    ok.phases = vec![
        embedded_insert,
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
        durability_asked: None,
    });
    failed.initial_size_bytes = Some(18);
    failed.final_size_bytes = Some(1_100_000);
    failed.final_size_extra = BTreeMap::from([("data directory".to_string(), 5_000_000)]);
    let mut bad = phase(PhaseKind::Search, &sizes[0], 4000, 80.0, 19.5);
    bad.errors = 1;
    bad.error_kinds = BTreeMap::from([("wrong record".to_string(), 1)]);
    let mut served_insert = phase(PhaseKind::Insert, &sizes[0], 100, 3.94, 38.0);
    served_insert.server = Some(cost(
        CostSource::Processes,
        Some(40.0),
        8_192.0,
        Some(16_647),
    ));
    failed.phases = vec![
        served_insert,
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
            features: Vec::new(),
        },
        status: RunStatus::Complete,
        stopped_by: None,
        started_at: "2026-11-30T10:00:00Z".into(),
        finished_at: "2026-11-30T10:01:02Z".into(),
        plan: PlanSummary {
            suite: Suite::Classic,
            scale: None,
            stores: vec!["sqlite".into(), "other".into(), "absent".into()],
            sizes,
            searches_per_insert: 40,
            seed: 2016,
            durability: "durable".into(),
            warmup_runs: 1,
            runs: NonZeroU32::new(2).unwrap(),
            concurrency: vec![Concurrency::ONE, level(2)],
            rate: None,
            client_threads: Some(1),
            workloads: Vec::new(),
            blog_reference: true,
            retries: 0,
            alloc_sites: false,
            client: None,
        },
        machine: Machine {
            cpu_model: "Example CPU @ 2.00GHz".into(),
            cores: 2,
            memory_bytes: 24 << 30,
            os: "Debian GNU/Linux 12 (bookworm)".into(),
            kernel: "6.1.0".into(),
            arch: "x86_64".into(),
        },
        floor: Some(Floor {
            loopback_c1: FloorFigure {
                concurrency: 1,
                samples: 2000,
                p50_us: 17.0,
                p99_us: 31.5,
            },
            loopback_c8: FloorFigure {
                concurrency: 8,
                samples: 16000,
                p50_us: 40.0,
                p99_us: 95.0,
            },
            fsync: FloorFigure {
                concurrency: 1,
                samples: 200,
                p50_us: 190.0,
                p99_us: 400.0,
            },
            fsync_dir: "/tmp".into(),
        }),
        client_peak_rss_bytes: Some(31 << 20),
        stores: vec![ok, failed, skipped],
        interleaved: Vec::new(),
        shares: Vec::new(),
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
fn the_stores_built_on_request_are_named_with_the_version() {
    let mut report = fixture();
    assert!(markdown::render(&report).contains("run: dbcompare 0.0.0-test, suite"));
    assert!(!json::render(&report).contains("\"features\""));
    report.tool.features = vec!["mongodb".into(), "couchbase".into()];
    let said = "run: dbcompare 0.0.0-test (with mongodb, couchbase), suite";
    assert!(markdown::render(&report).contains(said));
    assert!(html::render(&report, &[]).contains(said));
    assert_eq!(json::parse(&json::render(&report)).unwrap(), report);
}

#[test]
fn a_run_of_the_first_schema_version_is_still_read() {
    let mut report = fixture();
    for store in &mut report.stores {
        for phase in &mut store.phases {
            phase.server = None;
        }
    }
    let rendered = json::render(&report).replace(
        &format!("\"schema_version\": {SCHEMA_VERSION}"),
        "\"schema_version\": 1",
    );
    let read = json::parse(&rendered).expect("a version 1 run is read");
    assert_eq!(read.schema_version, 1);
    assert_eq!(read.stores, report.stores);
}

#[test]
fn an_unknown_schema_version_is_refused() {
    let rendered = json::render(&fixture()).replace(
        &format!("\"schema_version\": {SCHEMA_VERSION}"),
        "\"schema_version\": 99",
    );
    assert!(rendered.contains("\"schema_version\": 99"));
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
    report.plan.suite = Suite::Driver;
    report.plan.scale = Some(0.1);
    report.plan.concurrency = vec![Concurrency::ONE];
    let test = |name: &str, iterations: u64, wall_ms: f64, conc: u32| {
        let size = Size {
            name: name.into(),
            records: iterations,
        };
        let mut p = repeated(phase(PhaseKind::Driver, &size, iterations, wall_ms, 40.0));
        p.concurrency = level(conc);
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
    report.plan.suite = Suite::Ycsb;
    report.plan.concurrency = vec![Concurrency::ONE];
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
fn a_ycsb_run_at_several_levels_has_no_table_of_classic_searches() {
    let mut report = ycsb_fixture();
    report.plan.concurrency = vec![level(1), level(8)];
    for out in [text::recap(&report), markdown::render(&report)] {
        assert!(!out.contains("Search throughput by concurrency"), "{out}");
    }
}

#[test]
fn ycsb_suite_text() {
    insta::assert_snapshot!(text::render(&ycsb_fixture()));
}

/// YCSB's rows per operation type carry no cost of their own (a mixed workload's cannot be
/// split by type): every report says their workload's row holds it, and the CSV names that
/// row where their cost cells are empty.
#[test]
fn ycsb_rows_per_operation_type_point_to_their_workloads_cost() {
    let mut report = ycsb_fixture();
    for p in &mut report.stores[0].phases {
        if !p.size.name.contains(' ') || p.size.name == "load INSERT" {
            p.server = Some(cost(CostSource::Processes, Some(40.0), 300.0, None));
        }
    }
    let said = "YCSB's rows per operation type (e INSERT, ...) have no cost of their own: the \
                server's cost of a mixed workload, and the client's CPU and allocations, \
                cannot be split by operation type, so each workload's row (e) is its cost for \
                all its operations together.";
    assert!(markdown::render(&report).contains(said));
    assert!(text::render(&report).contains(said));
    // In the verdict, an operation type's row shows `-` for its cost, said once, and no
    // store is listed as not measured for it.
    let glance = text::render(&report);
    assert!(
        glance
            .contains("-: a YCSB operation type's row, whose cost is on its workload's total row."),
        "{glance}"
    );
    assert!(!glance.contains("not measured in this run"), "{glance}");
    assert!(html::render(&report, &[]).contains(&said.replace('\'', "&#39;")));
    let rendered = csv::render(&report);
    let mut reader = ::csv::Reader::from_reader(rendered.as_bytes());
    let column = |name: &str| {
        let headers = ::csv::Reader::from_reader(rendered.as_bytes())
            .headers()
            .unwrap()
            .clone();
        headers.iter().position(|h| h == name).unwrap()
    };
    let (size, from) = (column("size"), column("server_figures_from"));
    let cells: Vec<(String, String, String)> = reader
        .records()
        .map(Result::unwrap)
        .map(|r| (r[1].to_string(), r[size].to_string(), r[from].to_string()))
        .collect();
    let cell = |store: &str, size: &str| {
        cells
            .iter()
            .find(|(s, z, _)| s == store && z == size)
            .map(|(_, _, f)| f.as_str())
            .unwrap_or_else(|| panic!("no row {store} {size}: {cells:?}"))
    };
    assert_eq!(cell("ordered", "load INSERT"), "processes");
    assert_eq!(cell("ordered", "e"), "processes");
    assert_eq!(cell("ordered", "e INSERT"), "workload e");
    assert_eq!(cell("ordered", "e SCAN"), "workload e");
    // No workload row was measured: nothing to point to, the cells stay empty.
    assert_eq!(cell("unordered", "e INSERT"), "");
    // Without a measured cost there is nothing to explain.
    assert!(!markdown::render(&ycsb_fixture()).contains("YCSB's rows per operation type"));
}

#[test]
fn csv_of_every_suite() {
    for (name, report) in [
        ("classic", fixture()),
        ("driver", driver_fixture()),
        ("ycsb", ycsb_fixture()),
    ] {
        let rendered = csv::render(&report);
        insta::assert_snapshot!(format!("csv_{name}"), rendered);
        // Every row has every column; every store is there (a skipped one too).
        let mut reader = ::csv::Reader::from_reader(rendered.as_bytes());
        assert_eq!(reader.headers().unwrap().len(), csv::HEADERS.len());
        let rows: Vec<_> = reader.records().map(Result::unwrap).collect();
        for s in &report.stores {
            assert!(
                rows.iter().any(|r| &r[1] == s.store.as_str()),
                "{name}: {} missing",
                s.store
            );
        }
        let phases: usize = report.stores.iter().map(|s| s.phases.len().max(1)).sum();
        assert_eq!(rows.len(), phases, "{name}");
    }
}

/// `p` measured in one run per factor (ops/s divided by the factor, latency times it).
fn runs_of(mut p: PhaseResult, factors: &[f64]) -> PhaseResult {
    p.runs = factors
        .iter()
        .map(|&f| RunFigures {
            wall_ms: p.wall_ms * f,
            ops_per_s: p.ops_per_s / f,
            cpu_us_per_op: p.cpu_us_per_op,
            allocs_per_op: None,
            bytes_per_op: None,
            p50_us: p.latency_us.p50 * f,
            p99_us: p.latency_us.p99 * f,
            response_p50_us: None,
            response_p99_us: None,
            server_cpu_us_per_op: None,
            write_bytes_per_op: None,
        })
        .collect();
    p
}

/// Two runs of sqlite: SEARCH micro 25% faster in the new one (five runs each, little
/// spread), SEARCH tiny the same within noise, INSERT micro measured twice only.
fn comparison_pair() -> (Report, Report) {
    let mut base = fixture();
    base.stores.truncate(1);
    base.plan.stores.truncate(1);
    base.plan.runs = NonZeroU32::new(5).unwrap();
    let mut new = base.clone();
    let spread = [0.98, 1.0, 1.02, 0.99, 1.01];
    let noisy = [0.9, 1.1, 1.0, 0.95, 1.05];
    let noisier = [1.05, 0.92, 1.08, 1.0, 0.97];
    let (b, n) = (&mut base.stores[0], &mut new.stores[0]);
    b.phases = vec![
        b.phases[0].clone(),
        runs_of(b.phases[2].clone(), &spread),
        runs_of(b.phases[3].clone(), &noisy),
        b.phases[4].clone(),
    ];
    let mut faster = runs_of(n.phases[2].clone(), &spread.map(|f| f * 0.8));
    faster.ops_per_s /= 0.8;
    n.phases = vec![
        n.phases[0].clone(),
        faster,
        runs_of(n.phases[3].clone(), &noisier),
    ];
    new.stores[0].info.as_mut().unwrap().version = "SQLite 3.47.0".into();
    new.tool.version = "0.0.1-test".into();
    (base, new)
}

#[test]
fn compare_markdown() {
    let (base, new) = comparison_pair();
    let c = compare::compare(&base, &new, 0.05).unwrap();
    insta::assert_snapshot!(compare::markdown(&c, "base/run.json", "new/run.json"));
    let rows = &c.stores[0].rows;
    let verdict = |phase: &str, figure: compare::Figure| {
        rows.iter()
            .find(|r| r.phase == phase && r.figure == figure)
            .unwrap()
            .verdict
    };
    use compare::{Figure, Verdict};
    assert_eq!(verdict("SEARCH micro", Figure::Throughput), Verdict::Better);
    assert_eq!(verdict("SEARCH micro", Figure::P50), Verdict::Better);
    assert_eq!(
        verdict("SEARCH tiny", Figure::Throughput),
        Verdict::NoChange
    );
    assert_eq!(
        verdict("INSERT micro", Figure::Throughput),
        Verdict::NotEnoughRuns
    );
    assert_eq!(
        c.stores[0].unmatched,
        vec!["only in base: SEARCH micro x2".to_string()]
    );
    assert!(c.worst_regression().is_none());
    // Versions differ (what one compares) but nothing that confounds: no warning.
    assert!(
        c.differences.iter().all(|d| !d.confounds),
        "{:?}",
        c.differences
    );

    // The other way round the faster phase is a significant regression: 20% less
    // throughput, 25% more latency (the worst).
    let back = compare::compare(&new, &base, 0.05).unwrap();
    let (pct, at) = back.worst_regression().unwrap();
    assert!((pct - 25.0).abs() < 0.5, "{pct} at {at}");
    assert!(at.starts_with("sqlite SEARCH micro"), "{at}");

    // One load client's share beside a whole run is refused: it did only its part.
    let mut share = new.clone();
    share.plan.client = Some(ClientShare {
        index: 1,
        of: 2,
        start_at: "2026-12-05T16:00:00Z".into(),
    });
    let why = compare::compare(&base, &share, 0.05).unwrap_err();
    assert!(
        why.starts_with("base is a whole run and new is client 1/2's share of a run"),
        "{why}"
    );
    // Two shares of the same place in runs of as many clients compare.
    let mut base_share = base.clone();
    base_share.plan.client = share.plan.client.clone();
    assert!(compare::compare(&base_share, &share, 0.05).is_ok());
}

#[test]
fn each_store_names_the_client_threads_it_ran_on() {
    let mut report = fixture();
    let uniform = "concurrency 1,2, 1 client thread(s), one event loop each";
    assert!(markdown::render(&report).contains(uniform));
    // Each store on its own default: the plan records none, the stores theirs.
    report.plan.client_threads = None;
    report.stores[0].client_threads = Some(2);
    report.stores[1].client_threads = Some(1);
    let each = "client threads (one event loop each): 2 for sqlite; 1 for other";
    assert!(
        markdown::render(&report).contains(each),
        "{}",
        markdown::render(&report)
    );
    assert!(html::render(&report, &[]).contains(each));
    assert_eq!(json::parse(&json::render(&report)).unwrap(), report);
    report.stores[1].client_threads = Some(2);
    assert!(markdown::render(&report).contains(", 2 client thread(s), one event loop each"));

    let (base, mut new) = comparison_pair();
    new.plan.client_threads = None;
    new.stores[0].client_threads = Some(2);
    let md = compare::markdown(&compare::compare(&base, &new, 0.05).unwrap(), "a", "b");
    assert!(md.contains("| client threads | 1 | 2 |"), "{md}");
}

#[test]
fn compare_flags_runs_of_different_settings_and_refuses_different_suites() {
    let (base, mut new) = comparison_pair();
    new.plan.durability = "relaxed".into();
    new.stores[0]
        .info
        .as_mut()
        .unwrap()
        .settings
        .insert("synchronous".into(), "OFF".into());
    new.machine.cpu_model = "Other CPU".into();
    let c = compare::compare(&base, &new, 0.05).unwrap();
    let md = compare::markdown(&c, "a", "b");
    assert!(
        md.contains(
            "**Warning: the runs differ in what was measured (durability, CPU, sqlite synchronous)"
        ),
        "{md}"
    );
    assert!(md.contains("| sqlite synchronous | FULL | OFF |"), "{md}");

    let mut driver = new.clone();
    driver.plan.suite = Suite::Driver;
    let err = compare::compare(&base, &driver, 0.05).unwrap_err();
    assert!(
        err.contains("different suites (classic and driver)"),
        "{err}"
    );
}

#[test]
fn the_published_schema_is_current_and_every_fixture_validates() {
    let generated = json::schema();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/run.schema.json");
    if std::env::var_os("DBCOMPARE_UPDATE_SCHEMA").is_some() {
        std::fs::create_dir_all(std::path::Path::new(path).parent().unwrap()).unwrap();
        std::fs::write(path, &generated).unwrap();
    }
    let published = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        published == generated,
        "schema/run.schema.json is not the model's schema: regenerate it with \
         DBCOMPARE_UPDATE_SCHEMA=1 cargo test --test exporters"
    );
    let schema: serde_json::Value = serde_json::from_str(&published).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for report in [fixture(), driver_fixture(), ycsb_fixture()] {
        let value: serde_json::Value = serde_json::from_str(&json::render(&report)).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
    }
    // And the schema refuses what is not a run.
    let mut broken: serde_json::Value = serde_json::from_str(&json::render(&fixture())).unwrap();
    broken["stores"][0]["phases"][0]["ops"] = serde_json::json!("many");
    assert!(!validator.is_valid(&broken));
}

#[test]
fn html_holds_every_table_and_chart_escaped() {
    let mut report = fixture();
    report.stores[1].error = Some("<script>alert(1)</script>".into());
    let page = html::render(
        &report,
        &[(
            "A chart & more",
            "<?xml version=\"1.0\"?>\n<svg id=\"c1\"></svg>",
        )],
    );
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("<svg id=\"c1\"></svg>") && !page.contains("<?xml"));
    assert!(page.contains("<figcaption>A chart &amp; more</figcaption>"));
    assert!(!page.contains("<script>"), "unescaped store error");
    assert!(page.contains("&lt;script&gt;"));
    for needle in [
        "<h2>Recap</h2>",
        "<h2>Every phase</h2>",
        "<h2>Stores</h2>",
        "SQLite 3.46.0",
        "journal_mode=wal",
    ] {
        assert!(page.contains(needle), "{needle} missing");
    }
    // No fetches: the page is self-contained.
    for fetch in ["http://", "https://", "src=", "<link"] {
        assert!(!page.contains(fetch), "{fetch} in the page");
    }
}

#[test]
fn the_blog_reference_beside_a_classic_run_at_its_sizes() {
    let mut report = fixture();
    report.stores[0].store = "postgres".into();
    report.stores[1].store = "redis".into();
    report.stores[1].status = StoreStatus::Ok;
    report.stores[1].phases[2].errors = 0;
    // A skipped store of the blog's has no column and no caveat.
    report.stores[2].store = "couchbase".into();
    let md = markdown::render(&report);
    assert!(
        !md.contains("couchbase now") && !md.contains("Couchbase figures incorrect"),
        "{md}"
    );
    report.stores.truncate(2);
    let md = markdown::render(&report);
    let section = &md[md
        .find("### Beside the 2016 blog")
        .expect("no blog section")..];
    let section = &section[..section.find("\nEvery phase").unwrap()];
    insta::assert_snapshot!(section);
    // 41.2 ms now against the blog's 983.62 ms; 3.94 ms against 3.94 ms.
    assert!(
        section.contains("| INSERT micro 100 | 41.20 | 983.62 | 0.042x | 3.94 | 3.94 | 1.00x |"),
        "{section}"
    );
    assert!(
        section.contains("| SEARCH micro | postgres < redis | postgres < redis |"),
        "{section}"
    );
    assert!(text::recap(&report).contains("Beside the 2016 blog"));
    assert!(html::render(&report, &[]).contains("<h3>Beside the 2016 blog</h3>"));

    // Off when asked, at other sizes, or at another search count.
    for change in [
        (|r: &mut Report| r.plan.blog_reference = false) as fn(&mut Report),
        |r| r.plan.searches_per_insert = 10,
        |r| r.plan.sizes[0].records = 500,
        |r| r.plan.suite = Suite::Driver,
    ] {
        let mut other = report.clone();
        change(&mut other);
        assert!(!markdown::render(&other).contains("2016 blog"));
    }
}

#[test]
fn series_csv_and_the_warnings_it_shows() {
    let mut report = fixture();
    let point = |ops: u64| SeriesPoint {
        ops,
        errors: u64::from(ops == 0),
        p50_us: 2.5,
        p99_us: 9.0,
        max_us: 40.0,
    };
    // 30 intervals of 10 ms, the last one 5 ms long; the last tenth at half the rate.
    let mut points: Vec<SeriesPoint> = (0..30).map(|_| point(100)).collect();
    for p in &mut points[27..] {
        *p = point(50);
    }
    points[29] = point(25);
    report.stores[0].phases[3].series = vec![Series {
        interval_ms: 10.0,
        span_ms: 295.0,
        points,
    }];
    let rendered = csv::render_series(&report);
    let rows: Vec<&str> = rendered.lines().collect();
    assert_eq!(rows[0], csv::SERIES_HEADERS.join(","));
    assert_eq!(rows.len(), 31);
    assert_eq!(
        rows[1],
        "classic,sqlite,search,tiny,1,1,0,10,100,0,10000,2.5,9,40,295"
    );
    // The last interval's rate is over the 5 ms it lasted.
    assert_eq!(
        rows[30],
        "classic,sqlite,search,tiny,1,1,290,10,25,0,5000,2.5,9,40,295"
    );
    let lines = lines::store_lines(&report.stores[0]);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  WARNING: throughput drifted: the last tenth ran at")),
        "{lines:?}"
    );
    assert!(markdown::render(&report).contains("WARNING: throughput drifted"));
    // The schema and the loader take it.
    assert_eq!(json::parse(&json::render(&report)).unwrap(), report);
}

#[test]
fn latencies_read_as_multiples_of_the_machines_floor() {
    let report = fixture();
    let floor = report.floor.as_ref();
    let (sqlite, other) = (&report.stores[0], &report.stores[1]);
    // A durable insert over the fsync floor: 380 us / 190 us.
    assert_eq!(
        lines::floor_multiple(floor, sqlite, &sqlite.phases[0]).as_deref(),
        Some("2.0x fsync")
    );
    // An embedded store's search pays no round trip: no multiple.
    assert_eq!(
        lines::floor_multiple(floor, sqlite, &sqlite.phases[2]),
        None
    );
    // A server store's search at concurrency 1 over the loopback round trip: 19.5 / 17.
    assert_eq!(
        lines::floor_multiple(floor, other, &other.phases[2]).as_deref(),
        Some("1.1x rtt")
    );
    // Without a floor (--no-floor), nothing.
    assert_eq!(lines::floor_multiple(None, sqlite, &sqlite.phases[0]), None);
    let md = markdown::render(&report);
    assert!(
        md.contains(
            "- machine floor: loopback TCP round trip p50 17.0 us (p99 31.5) on one connection"
        ),
        "{md}"
    );
}

#[test]
fn a_phase_whose_client_ran_out_of_cpu_is_client_bound() {
    let report = fixture();
    let mut p = report.stores[1].phases[2].clone();
    // 15.6 us of CPU per operation at 50,000 ops/s: 78% of one loop, under the 85%.
    assert_eq!(p.client_bound_reason(1, false), None);
    p.ops_per_s = 60_000.0;
    let why = p.client_bound_reason(1, false).expect("94% of one loop");
    assert!(
        why.contains("the client used 94% of its 1 event loop(s)"),
        "{why}"
    );
    // Two loops have room for it; an embedded store's CPU is the store's work.
    assert_eq!(p.client_bound_reason(2, false), None);
    assert_eq!(p.client_bound_reason(1, true), None);
    // An open loop that fell behind its schedule is not the client's limit for that alone
    // (its connections at the store's service time may be): its schedule's warning says so.
    let paced = &report.stores[0].phases[5];
    assert_eq!(paced.client_bound_reason(4, false), None);
    let behind = dbcompare::report::warnings::schedule_warning(paced).expect("behind");
    assert!(
        behind.contains("100000 of the 200000 ops/s asked for"),
        "{behind}"
    );

    let mut report = report;
    report.stores[1].phases[2].client_bound = Some(why);
    let md = markdown::render(&report);
    assert!(md.contains("Client-bound phases"), "{md}");
    assert!(
        md.contains("- other SEARCH micro x1: the client used 94% of its 1 event loop(s)"),
        "{md}"
    );
    assert!(
        lines::store_lines(&report.stores[1])
            .iter()
            .any(|l| l.contains("CLIENT-BOUND: "))
    );
}

/// One store that measured one search phase, in one run per factor.
fn searched(store: &str, wall_ms: f64, factors: &[f64]) -> StoreResult {
    let size: Size = "micro".parse().unwrap();
    let mut s = StoreResult::new(store);
    s.phases = vec![runs_of(
        phase(PhaseKind::Search, &size, 4000, wall_ms, 3.0),
        factors,
    )];
    s
}

#[test]
fn the_verdict_ranks_what_the_runs_tell_apart_and_says_when_they_cannot() {
    let mut report = fixture();
    report.plan.runs = NonZeroU32::new(5).unwrap();
    // Two stores 2.5% apart whose runs spread +-10%, one at half their speed, runs tight.
    report.stores = vec![
        searched("slow", 40.0, &[0.99, 1.0, 1.01, 1.0, 1.0]),
        searched("fast", 20.0, &[0.9, 1.1, 1.0, 0.95, 1.05]),
        searched("close", 20.5, &[1.08, 0.92, 1.0, 1.05, 0.97]),
    ];
    report.plan.stores = vec!["slow".into(), "fast".into(), "close".into()];
    // The CPU per operation, client and server: fast 2.4 + 40, close 2.4 (embedded),
    // slow 2.4 + 10.
    let cpu = [
        (CostSource::Processes, Some(10.0)),
        (CostSource::Processes, Some(40.0)),
        (CostSource::ClientProcess, None),
    ];
    for (s, (source, server)) in report.stores.iter_mut().zip(cpu) {
        s.phases[0].server = Some(cost(source, server, 0.0, None));
    }
    let g = verdict::glance(&report);
    let rows = verdict::rows(&g);
    let cells: Vec<(&str, &str, &str, &str)> = rows
        .iter()
        .map(|r| (r[1].as_str(), r[2].as_str(), r[4].as_str(), r[7].as_str()))
        .collect();
    assert_eq!(
        cells,
        [
            ("=1", "fast", "1.00x", "42.4"),
            ("=1", "close", "0.98x", "2.40 cheapest"),
            ("3", "slow", "0.50x", "12.4"),
        ]
    );
    assert_eq!(rows[0][0], "SEARCH micro");
    let notes = verdict::notes(&g).join("\n");
    assert!(notes.contains("A shared rank (=1)"), "{notes}");
    assert!(!notes.contains("from one run"), "{notes}");

    // A server given by URL: its CPU is n/a, said so, and nobody is marked cheapest.
    report.stores[0].phases[0].server = Some(cost(CostSource::ServerCounters, None, 0.0, None));
    let g = verdict::glance(&report);
    let rows = verdict::rows(&g);
    assert_eq!(rows[2][7], "n/a");
    assert!(rows.iter().all(|r| !r[7].contains("cheapest")), "{rows:?}");
    let notes = verdict::notes(&g).join("\n");
    assert!(
        notes.contains("slow (a server given by URL that does not report its CPU time)"),
        "{notes}"
    );

    // From one run the order is the figures' alone, and the notes say so.
    for s in &mut report.stores {
        s.phases[0].runs.clear();
    }
    let g = verdict::glance(&report);
    let ranks: Vec<(String, String)> = verdict::rows(&g)
        .into_iter()
        .map(|r| (r[1].clone(), r[2].clone()))
        .collect();
    assert_eq!(
        ranks,
        [
            ("1".to_string(), "fast".to_string()),
            ("2".into(), "close".into()),
            ("3".into(), "slow".into())
        ]
    );
    let notes = verdict::notes(&g).join("\n");
    assert!(notes.contains("The order is from one run"), "{notes}");
    assert!(!notes.contains("A shared rank"), "{notes}");
}

#[test]
fn the_verdict_opens_with_each_stores_geometric_mean_over_the_phases_all_ran() {
    let (micro, tiny): (Size, Size) = ("micro".parse().unwrap(), "tiny".parse().unwrap());
    // (INSERT micro, SEARCH micro, SEARCH tiny) wall times; c's SEARCH tiny had errors.
    let store = |name: &str, walls: [f64; 3]| {
        let mut s = StoreResult::new(name);
        s.phases = vec![
            phase(PhaseKind::Insert, &micro, 100, walls[0], 3.0),
            phase(PhaseKind::Search, &micro, 4000, walls[1], 3.0),
            phase(PhaseKind::Search, &tiny, 40000, walls[2], 3.0),
        ];
        s
    };
    let mut report = fixture();
    let mut c = store("c", [40.0, 160.0, 100.0]);
    c.phases[2].errors = 3;
    report.stores = vec![
        store("a", [10.0, 40.0, 100.0]),
        store("b", [20.0, 25.0, 50.0]),
        c,
    ];
    report.plan.stores = vec!["a".into(), "b".into(), "c".into()];
    // a: 1.00 and 0.625 of the best; b: 0.50 and 1.00; c: 0.25 and 0.156.
    let line =
        verdict::standings(&report, &verdict::glance(&report)).expect("three stores, two phases");
    assert_eq!(
        line,
        "Over the 2 phases every store ran, each store's geometric mean of its vs best: \
         a 0.79x (first in 1), b 0.71x (first in 1), c 0.20x. 1 phase left out: not every \
         store has a figure of it (not run, not applicable, or errors)."
    );
    // It opens the verdict in every rendering, before the table.
    let recap = text::recap(&report);
    assert!(
        recap.starts_with(&format!("At a glance\n\n{line}\n\n")),
        "{recap}"
    );
    let md = markdown::render(&report);
    assert!(
        md.contains(&format!("## At a glance\n\n{line}\n\n|")),
        "{md}"
    );
    let page = html::render(&report, &[]);
    assert!(
        page.contains(&format!(
            "<h2>At a glance</h2>\n<p>{}</p>\n<table",
            line.replace('\'', "&#39;")
        )),
        "{page}"
    );

    // A store that ran but has no phase without errors is named, not dropped.
    let mut failed = StoreResult::new("d");
    failed.status = StoreStatus::Failed;
    let mut with_failed = report.clone();
    with_failed.stores.push(failed);
    let line = verdict::standings(&with_failed, &verdict::glance(&with_failed)).unwrap();
    assert!(
        line.ends_with(" Not in it: d (no phase without errors)."),
        "{line}"
    );

    // YCSB: a workload of several operations counts once, by its total row.
    let ycsb = |name: &str, fast: f64| {
        let mut s = StoreResult::new(name);
        s.phases = ["load INSERT", "a READ", "a UPDATE", "a", "c READ"]
            .iter()
            .map(|row| {
                let size = Size {
                    name: row.to_string(),
                    records: 1000,
                };
                phase(PhaseKind::Ycsb, &size, 1000, 100.0 / fast, 3.0)
            })
            .collect();
        s
    };
    let mut run = report.clone();
    run.stores = vec![ycsb("x", 1.0), ycsb("y", 2.0)];
    let line = verdict::standings(&run, &verdict::glance(&run)).expect("two stores, three rows");
    assert!(
        line.starts_with("Over the 3 phases every store ran, each store's geometric mean of its vs best: y 1.00x (first in 3), x 0.50x."),
        "{line}"
    );

    // One phase, or one store, is the table alone.
    for s in &mut report.stores {
        s.phases.truncate(1);
    }
    assert_eq!(verdict::standings(&report, &verdict::glance(&report)), None);
    let mut alone = store("a", [10.0, 40.0, 100.0]);
    alone.phases.truncate(3);
    report.stores = vec![alone];
    assert_eq!(verdict::standings(&report, &verdict::glance(&report)), None);
}

#[test]
fn every_report_opens_with_the_verdict_and_gives_a_skipped_store_no_column() {
    let report = fixture();
    let recap = text::recap(&report);
    assert!(recap.starts_with("At a glance\n"), "{recap}");
    let md = markdown::render(&report);
    let at = |needle: &str| md.find(needle).unwrap_or_else(|| panic!("{needle}: {md}"));
    assert!(at("## At a glance") < at("## The run"));
    assert!(at("**1 failure and 2 warnings: sqlite 1, other 2**") < at("## The run"));
    let page = html::render(&report, &[]);
    let at = |needle: &str| {
        page.find(needle)
            .unwrap_or_else(|| panic!("{needle}: {page}"))
    };
    assert!(at("<h2>At a glance</h2>") < at("<h2>The run</h2>"));
    // The warnings in one block, collapsed, their count in its summary.
    assert!(
        page.contains(
            "<details class=\"warning\">\n<summary>1 failure and 2 warnings: sqlite 1, other 2</summary>"
        ),
        "{page}"
    );
    assert_eq!(page.matches("class=\"warning\"").count(), 1, "{page}");
    // The skipped store: one line in each, in no table.
    for (name, out) in [("text", &recap), ("markdown", &md), ("html", &page)] {
        assert_eq!(
            out.matches("Skipped (not run, so in no table): absent (not installed")
                .count(),
            1,
            "{name}: {out}"
        );
        let in_table = out.lines().any(|l| {
            (l.starts_with('|')
                || l.starts_with("absent")
                || l.contains("<td>")
                || l.contains("<th>"))
                && l.contains("absent")
        });
        assert!(!in_table, "{name}: a table has the skipped store: {out}");
    }
}

/// Stores not built in share one entry of the skipped line, with one command that builds
/// them all in; a store skipped for another reason keeps its own.
#[test]
fn stores_skipped_alike_share_one_entry() {
    let mut report = fixture();
    for name in ["mongodb", "couchbase"] {
        let mut s = StoreResult::new(name);
        s.status = StoreStatus::Skipped;
        s.error = Some(format!(
            "not in this build: `cargo build --release --features {name}` \
             (`--features all-stores`: every store)"
        ));
        report.stores.push(s);
    }
    let line = notices::skipped_line(&report).unwrap();
    assert_eq!(
        line,
        "Skipped (not run, so in no table): absent (not installed: run provisioning/install.sh \
         absent); mongodb, couchbase (not in this build: `cargo build --release --features \
         mongodb,couchbase` (`--features all-stores`: every store))."
    );
}

/// A concurrency level of the fixtures.
fn level(n: u32) -> Concurrency {
    Concurrency::new(n).expect("a level of at least 1")
}

/// A run with variants: one store as `@sync` and `@async` (their runs taken in turn, the
/// async one's inserts clearly faster, its searches alike), and another store beside them.
fn variants_fixture() -> Report {
    let mut report = fixture();
    let sizes = report.plan.sizes.clone();
    let variant = |name: &str, commit: &str, insert_ms: f64| {
        let mut s = report.stores[0].clone();
        s.store = name.to_string();
        let info = s.info.as_mut().unwrap();
        info.version = "PostgreSQL 16.4".into();
        info.settings = BTreeMap::from([
            ("fsync".into(), "on".into()),
            ("synchronous_commit".into(), commit.into()),
            ("shared_buffers".into(), "2GB".into()),
        ]);
        // Four runs each: what a verdict needs.
        let runs = |p: PhaseResult, spread: [f64; 4]| {
            let mut p = p;
            p.runs = spread
                .iter()
                .map(|f| RunFigures {
                    wall_ms: p.wall_ms * f,
                    ops_per_s: p.ops_per_s / f,
                    cpu_us_per_op: p.cpu_us_per_op,
                    allocs_per_op: Some(3.0),
                    bytes_per_op: Some(160.0),
                    p50_us: p.latency_us.p50 * f,
                    p99_us: p.latency_us.p99 * f,
                    response_p50_us: None,
                    response_p99_us: None,
                    server_cpu_us_per_op: None,
                    write_bytes_per_op: None,
                })
                .collect();
            p
        };
        let spread = [0.98, 1.0, 1.01, 1.02];
        s.phases = vec![
            runs(
                phase(
                    PhaseKind::Insert,
                    &sizes[0],
                    100,
                    insert_ms,
                    insert_ms * 9.0,
                ),
                spread,
            ),
            runs(
                phase(PhaseKind::Search, &sizes[0], 4000, 12.25, 2.61),
                spread,
            ),
        ];
        s
    };
    let sync = variant("postgres@sync", "on", 41.2);
    let not_sync = variant("postgres@async", "off", 12.0);
    let mut other = report.stores[0].clone();
    other.phases.truncate(3);
    other.phases.remove(1);
    report.plan.stores = vec![
        "postgres@sync".into(),
        "postgres@async".into(),
        "sqlite".into(),
    ];
    report.plan.runs = NonZeroU32::new(4).unwrap();
    report.plan.warmup_runs = 0;
    report.plan.concurrency = vec![Concurrency::ONE];
    report.stores = vec![sync, not_sync, other];
    report.interleaved = (1..=4)
        .flat_map(|run| {
            ["postgres@sync", "postgres@async"].map(|store| RunTurn {
                store: store.into(),
                run: format!("run {run}/4"),
            })
        })
        .collect();
    report
}

#[test]
fn markdown_with_variants() {
    insta::assert_snapshot!(markdown::render(&variants_fixture()));
}

#[test]
fn text_recap_with_variants() {
    insta::assert_snapshot!(text::recap(&variants_fixture()));
}

#[test]
fn variants_differ_only_in_what_differs_and_are_judged_in_pairs() {
    let report = variants_fixture();
    let groups = dbcompare::report::variants::groups(&report);
    assert_eq!(groups.len(), 1, "{groups:?}");
    let g = &groups[0];
    assert_eq!(g.store, "postgres");
    assert_eq!(g.variants, ["postgres@sync", "postgres@async"]);
    // fsync and shared_buffers are alike: left out.
    assert_eq!(
        g.differing,
        [(
            "synchronous_commit".to_string(),
            vec!["on".to_string(), "off".to_string()]
        )]
    );
    assert!(
        g.order
            .as_deref()
            .unwrap()
            .starts_with("postgres@sync run 1/4, postgres@async run 1/4, postgres@sync run 2/4")
    );
    let pairs = dbcompare::report::variants::pairs(&report);
    assert_eq!(pairs.len(), 1);
    assert!(
        pairs[0].title.contains("synchronous_commit: on / off"),
        "{:?}",
        pairs[0]
    );
    let verdicts: Vec<(&str, &str, &str)> = pairs[0]
        .rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str(), r[6].as_str()))
        .collect();
    assert!(
        verdicts.contains(&("INSERT micro", "ops/s", "**faster**")),
        "{verdicts:?}"
    );
    assert!(
        verdicts.contains(&("SEARCH micro", "ops/s", "no significant change")),
        "{verdicts:?}"
    );
    // The verdict ranks the variants beside the stores, each named with what sets it apart.
    let labels = dbcompare::report::variants::labels(&report);
    assert_eq!(
        labels["postgres@async"],
        "postgres@async (synchronous_commit=off)"
    );
    let md = markdown::render(&report);
    assert!(
        md.contains("| INSERT micro | 1 | postgres@async (synchronous_commit=off) |"),
        "{md}"
    );
    let page = html::render(&report, &[]);
    assert!(page.contains("<h2>Stores and variants</h2>"), "{page}");
    assert!(
        page.contains("<td>synchronous_commit</td><td>on</td><td>off</td>"),
        "{page}"
    );
    // A run without variants has none of it.
    assert!(!html::render(&fixture(), &[]).contains("Stores and variants"));
    assert!(dbcompare::report::variants::labels(&fixture()).is_empty());
    assert!(!markdown::render(&fixture()).contains("variants"));
}

#[test]
fn compare_tests_the_servers_cost_as_it_tests_throughput() {
    let (mut base, mut new) = comparison_pair();
    let cpu = |p: &mut PhaseResult, us: f64| {
        for (i, r) in p.runs.iter_mut().enumerate() {
            r.server_cpu_us_per_op = Some(us * (1.0 + i as f64 / 100.0));
        }
    };
    cpu(&mut base.stores[0].phases[1], 20.0);
    cpu(&mut new.stores[0].phases[1], 30.0);
    let c = compare::compare(&base, &new, 0.05).unwrap();
    let row = c.stores[0]
        .rows
        .iter()
        .find(|r| r.phase == "SEARCH micro" && r.figure == compare::Figure::ServerCpu)
        .expect("a server CPU row where both runs read it");
    assert_eq!(row.verdict, compare::Verdict::Worse);
    assert!((row.change_pct - 50.0).abs() < 1.0, "{}", row.change_pct);
    // Where only one side read it, there is nothing to compare.
    assert!(
        !c.stores[0]
            .rows
            .iter()
            .any(|r| r.phase == "SEARCH tiny" && r.figure == compare::Figure::ServerCpu)
    );
    assert!(compare::markdown(&c, "base", "new").contains("server cpu us/op"));
    // Read in the base and not in the new run: the gate cannot judge it, and says so.
    cpu(&mut base.stores[0].phases[0], 20.0);
    let c = compare::compare(&base, &new, 0.05).unwrap();
    let name = dbcompare::report::verdict::phase_name(&base.stores[0].phases[0]);
    let expected = format!("{} {name} server cpu us/op", base.stores[0].store);
    assert!(c.lacking.contains(&expected), "{:?}", c.lacking);
    // Read in the new run only: nothing the base measured is missing.
    let back = compare::compare(&new, &base, 0.05).unwrap();
    assert!(
        !back
            .lacking
            .iter()
            .any(|l| l.ends_with("server cpu us/op") && l.contains(&name)),
        "{:?}",
        back.lacking
    );
}

/// The first store's row of `figure` in `phase`.
fn row_of(c: &compare::Comparison, phase: &str, figure: compare::Figure) -> compare::Row {
    c.stores[0]
        .rows
        .iter()
        .find(|r| r.phase == phase && r.figure == figure)
        .unwrap_or_else(|| panic!("no {figure:?} row in {phase}"))
        .clone()
}

/// A merged run's runs carry the whole phase's percentiles (a client keeps no histogram per
/// run): one figure, which no test can judge, where its throughputs are judged per run.
#[test]
fn compare_judges_a_merged_runs_percentiles_as_one_figure() {
    let (mut base, mut new) = comparison_pair();
    for r in [&mut base, &mut new] {
        r.stores[0].phases[1].client_wall_ms = vec![10.0, 11.0];
    }
    let c = compare::compare(&base, &new, 0.05).unwrap();
    let verdict = |figure| row_of(&c, "SEARCH micro", figure).verdict;
    assert_eq!(
        verdict(compare::Figure::Throughput),
        compare::Verdict::Better
    );
    assert_eq!(
        verdict(compare::Figure::P50),
        compare::Verdict::NotEnoughRuns
    );
    assert!(
        c.unjudged()
            .iter()
            .any(|u| u == "sqlite SEARCH micro p50 us"),
        "{:?}",
        c.unjudged()
    );
}

/// An open loop's stall shows in its response times, not its calls' own latencies: a new
/// run whose calls are as fast but whose responses queue behind a stall is a regression.
#[test]
fn compare_judges_an_open_loops_response_times() {
    let (mut base, mut new) = comparison_pair();
    let paced = |p: &mut PhaseResult, response_us: f64| {
        p.open_loop = Some(OpenLoop {
            rate: 1000.0,
            response_us: p.latency_us.clone(),
            max_behind_ms: 0.0,
            response_histogram: String::new(),
        });
        for (i, r) in p.runs.iter_mut().enumerate() {
            let spread = 1.0 + i as f64 / 100.0;
            r.response_p50_us = Some(response_us * spread);
            r.response_p99_us = Some(response_us * response_us * spread);
        }
    };
    // SEARCH tiny: the same calls in both runs (within noise), responses slower in the new
    // one.
    paced(&mut base.stores[0].phases[2], 10.0);
    paced(&mut new.stores[0].phases[2], 30.0);
    let c = compare::compare(&base, &new, 0.05).unwrap();
    let row = |figure| row_of(&c, "SEARCH tiny", figure);
    assert_eq!(
        row(compare::Figure::P99).verdict,
        compare::Verdict::NoChange
    );
    // p50 10 -> 30 us, p99 100 -> 900 us.
    for (figure, change) in [
        (compare::Figure::ResponseP50, 200.0),
        (compare::Figure::ResponseP99, 800.0),
    ] {
        let response = row(figure);
        assert_eq!(response.verdict, compare::Verdict::Worse, "{figure:?}");
        assert!(
            (response.change_pct - change).abs() < 1.0,
            "{figure:?}: {}",
            response.change_pct
        );
    }
    let (worst, at) = c.worst_regression().expect("a regression");
    assert!((worst - 800.0).abs() < 1.0, "{worst} at {at}");
    assert!(at.ends_with("SEARCH tiny response p99 us"), "{at}");
    assert!(compare::markdown(&c, "base", "new").contains("| response p99 us |"));
    // A closed-loop phase has no response rows.
    assert!(
        !c.stores[0]
            .rows
            .iter()
            .any(|r| r.phase == "SEARCH micro" && r.figure == compare::Figure::ResponseP50)
    );
    // An open loop whose new run did not keep its response times per run cannot be judged.
    for r in &mut new.stores[0].phases[2].runs {
        r.response_p99_us = None;
    }
    let c = compare::compare(&base, &new, 0.05).unwrap();
    assert!(
        c.lacking
            .iter()
            .any(|l| l.ends_with("SEARCH tiny response p99 us")),
        "{:?}",
        c.lacking
    );
}

/// One load client's run of several measured the whole database but inserted only its
/// share: no space amplification of its own (the merged run has it).
#[test]
fn a_load_clients_share_has_no_space_amplification_of_its_own() {
    let mut report = variants_fixture();
    assert!(markdown::render(&report).contains("space amplification"));
    report.plan.client = Some(ClientShare {
        index: 1,
        of: 2,
        start_at: "2026-11-30T10:00:00Z".into(),
    });
    assert!(!markdown::render(&report).contains("space amplification"));
    assert!(!text::recap(&report).contains("space amplification"));
}

/// A store whose size did not grow for its records (room allocated before them) has no
/// space amplification of 0.0x: the line says it did not grow.
#[test]
fn a_size_that_did_not_grow_has_no_space_amplification() {
    let mut report = variants_fixture();
    let before = dbcompare::report::costs::space_lines(&report);
    assert!(
        before.iter().all(|l| l.contains("space amplification ")),
        "{before:?}"
    );
    let name = before[0].split(':').next().unwrap().to_string();
    let i = report.stores.iter().position(|s| s.store == name).unwrap();
    let s = &mut report.stores[i];
    s.final_size_bytes = s.initial_size_bytes;
    assert_eq!(
        dbcompare::report::costs::space_amplification(&report.stores[i]),
        None
    );
    let lines = dbcompare::report::costs::space_lines(&report);
    let line = lines
        .iter()
        .find(|l| l.starts_with(&format!("{name}:")))
        .unwrap();
    assert!(line.contains("no growth on disk"), "{line}");
    assert!(!line.contains("0.0x"), "{line}");
}

/// A phase stopped before any operation finished has no latency or CPU per operation:
/// empty cells in results.csv, `-` in the tables and words on the console, never zeros.
#[test]
fn a_phase_with_no_finished_operation_shows_no_latency() {
    let mut report = fixture();
    let micro: Size = "micro".parse().unwrap();
    let mut stopped = phase(PhaseKind::Insert, &micro, 0, 0.4, 0.0);
    stopped.incomplete = true;
    stopped.ops_per_s = 0.0;
    stopped.cpu_us_per_op = 0.0;
    report.stores[0].phases = vec![stopped.clone()];
    let rendered = csv::render(&report);
    let mut reader = ::csv::Reader::from_reader(rendered.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let row = reader.records().next().unwrap().unwrap();
    for name in ["p50_us", "p99_us", "latency_max_us", "cpu_us_per_op"] {
        let at = headers.iter().position(|h| h == name).unwrap();
        assert_eq!(&row[at], "", "{name}");
    }
    let line = lines::summary_line(&stopped).unwrap();
    assert!(line.ends_with("no operation finished"), "{line}");
    assert!(!line.contains("p50"), "{line}");
    let text = text::render(&report);
    let row = text
        .lines()
        .find(|l| l.starts_with("sqlite") && l.contains("INSERT"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(!row.contains(" 0.00"), "{row}");
}

/// Where no store measured a phase (every one failed), there is no empty phase table.
#[test]
fn no_phase_table_without_a_phase() {
    let mut report = fixture();
    for s in &mut report.stores {
        s.phases.clear();
        s.status = StoreStatus::Failed;
        s.error = Some("connecting: refused".into());
    }
    let text = text::render(&report);
    assert!(!text.contains("p50/floor"), "{text}");
    assert!(text.contains("Recap"), "{text}");
    assert!(!markdown::render(&report).contains("Every phase"));
    assert!(!html::render(&report, &[]).contains("Every phase"));
}
