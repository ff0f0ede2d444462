//! A real SQLite run, checked through the run.json it writes.

mod common;

use std::ffi::OsStr;
use std::process::Command;
use std::time::Duration;

use clap::Parser;
use dbcompare::cli::Cli;
use dbcompare::report::json;
use dbcompare::report::model::{PhaseKind, RunStatus, StoreStatus};

#[test]
fn sqlite_micro_and_tiny_run_clean() {
    let out = tempfile::tempdir().unwrap();
    let db = out.path().join("kept.sqlite");
    let cli = Cli::parse_from([
        "dbcompare",
        "run",
        "--store",
        "sqlite",
        "--sizes",
        "micro,tiny",
        "--warmup-runs",
        "0",
        "--runs",
        "1",
        "--quiet",
        "--sqlite-path",
        db.to_str().unwrap(),
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert_eq!(dbcompare::run(cli).unwrap(), 0);

    let report =
        json::parse(&std::fs::read_to_string(out.path().join("run.json")).unwrap()).unwrap();
    assert_eq!(report.status, RunStatus::Complete);
    assert_eq!(report.stores.len(), 1);
    let sqlite = &report.stores[0];
    assert_eq!(sqlite.status, StoreStatus::Ok, "{:?}", sqlite.error);
    let ops = |kind, size| {
        let p = sqlite.phase(kind, size).unwrap();
        assert_eq!(p.errors, 0);
        assert!(p.ops_per_s > 0.0 && p.latency_us.p50 > 0.0);
        p.ops
    };
    assert_eq!(ops(PhaseKind::Insert, "micro"), 100);
    assert_eq!(ops(PhaseKind::Insert, "tiny"), 1000);
    assert_eq!(ops(PhaseKind::Search, "micro"), 4000);
    assert_eq!(ops(PhaseKind::Search, "tiny"), 40_000);
    let (initial, fin) = (
        sqlite.initial_size_bytes.unwrap(),
        sqlite.final_size_bytes.unwrap(),
    );
    assert!(fin > initial, "final size {fin} <= initial size {initial}");
    let info = sqlite.info.as_ref().unwrap();
    assert_eq!(info.durability, "durable");
    assert_eq!(info.settings["synchronous"], "FULL");
    assert!(
        info.search_path
            .contains("USING INDEX dbcompare_records_unique_id"),
        "{}",
        info.search_path
    );

    let markdown = std::fs::read_to_string(out.path().join("results.md")).unwrap();
    assert!(markdown.contains("INSERT tiny 1000"), "{markdown}");
    assert!(db.exists(), "--sqlite-path must be kept");
    assert!(
        sqlite.phases.iter().all(|p| p.allocs_per_op.is_none()),
        "nothing counts allocations in-process"
    );
}

#[test]
fn ctrl_c_writes_partial_results_and_exits_130() {
    let out = tempfile::tempdir().unwrap();
    let args = [
        "--store",
        "sqlite",
        "--sizes",
        "200000",
        "--warmup-runs",
        "0",
        "--verbose",
        "--out",
    ];
    let (mut child, lines) = common::spawn_until(
        args.map(OsStr::new)
            .into_iter()
            .chain([out.path().as_os_str()]),
        "initial database size",
    );
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: sending SIGINT to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(130),
        "stdout after the signal: {rest:?}"
    );

    let report =
        json::parse(&std::fs::read_to_string(out.path().join("run.json")).unwrap()).unwrap();
    assert_eq!(report.status, RunStatus::Interrupted);
    let sqlite = &report.stores[0];
    assert_eq!(sqlite.status, StoreStatus::Interrupted);
    let insert = &sqlite.phases[0];
    assert!(insert.incomplete);
    assert!(insert.ops > 0 && insert.ops < 200_000, "{}", insert.ops);
    let markdown = std::fs::read_to_string(out.path().join("results.md")).unwrap();
    assert!(markdown.contains("INTERRUPTED RUN"));
}

fn run_json(args: &[&str]) -> (i32, String, dbcompare::report::model::Report) {
    let out = tempfile::tempdir().unwrap();
    let output = Command::new(assert_cmd::cargo::cargo_bin("dbcompare"))
        .args(args)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    let report =
        json::parse(&std::fs::read_to_string(out.path().join("run.json")).unwrap()).unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        report,
    )
}

#[test]
fn repeated_concurrent_open_loop_runs_report_medians_allocations_and_response_times() {
    let (code, stdout, report) = run_json(&[
        "--verbose",
        "--store",
        "sqlite",
        "--sizes",
        "micro",
        "--warmup-runs",
        "1",
        "--runs",
        "2",
        "--concurrency",
        "1,2",
        "--rate",
        "40000",
        "--client-threads",
        "2",
    ]);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!((report.plan.warmup_runs, report.plan.runs.get()), (1, 2));
    assert_eq!(report.plan.client_threads, Some(2));
    assert_eq!(report.stores[0].client_threads, Some(2));
    let sqlite = &report.stores[0];
    let insert = sqlite.phase(PhaseKind::Insert, "micro").unwrap();
    assert_eq!(
        insert.runs.len(),
        2,
        "two measured runs, the warm-up discarded"
    );
    assert!(
        insert.allocs_per_op.is_some_and(|a| a > 0.0),
        "the binary counts allocations"
    );
    assert!(insert.bytes_per_op.is_some_and(|b| b > 0.0));
    let merged = dbcompare::measure::decode_histogram(insert.histogram.as_ref().unwrap()).unwrap();
    assert_eq!(
        merged.len(),
        200,
        "the histogram holds both runs' operations"
    );
    for level in [1, 2] {
        let search = sqlite
            .phase_at(PhaseKind::Search, "micro", common::levels(&[level])[0])
            .unwrap();
        assert_eq!((search.ops, search.errors), (4000, 0));
        let ol = search.open_loop.as_ref().expect("open loop");
        assert_eq!(ol.rate, 40000.0);
        assert!(
            ol.response_us.p50 >= search.latency_us.p50 * 0.99,
            "response >= service"
        );
    }
    assert!(
        stdout.contains("-- warm-up run 1/1 (discarded) --"),
        "{stdout}"
    );
    assert!(
        stdout.contains(" -- avg "),
        "the seed's summary line: {stdout}"
    );
}

#[test]
fn an_unreachable_rate_is_a_warning_not_a_silent_lower_rate() {
    let (code, stdout, report) = run_json(&[
        "--store",
        "sqlite",
        "--sizes",
        "micro",
        "--warmup-runs",
        "0",
        "--runs",
        "1",
        "--rate",
        "100000000",
    ]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("WARNING: the schedule fell behind by up to"),
        "{stdout}"
    );
    let search = report.stores[0].phase(PhaseKind::Search, "micro").unwrap();
    assert!(search.open_loop.as_ref().unwrap().max_behind_ms > 0.0);
}

#[test]
fn the_driver_suite_on_sqlite_reports_every_test() {
    let (code, stdout, report) = run_json(&[
        "--suite",
        "driver",
        "--store",
        "sqlite",
        "--scale",
        "0.001",
        "--warmup-runs",
        "0",
        "--runs",
        "2",
        "--verbose",
    ]);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(report.plan.suite.to_string(), "driver");
    let sqlite = &report.stores[0];
    assert_eq!(sqlite.phases.len(), 22, "every test runs on sqlite");
    for p in &sqlite.phases {
        assert_eq!(p.kind, PhaseKind::Driver);
        assert_eq!((p.errors, p.runs.len()), (0, 2), "{}", p.size.name);
        assert!(p.allocs_per_op.is_some());
    }
    assert!(
        stdout.contains("SimpleExec 250 iterations:"),
        "the seed's layout: {stdout}"
    );
    assert!(stdout.contains(" -- avg "), "{stdout}");
}

#[test]
fn the_pool_suite_on_sqlite_is_not_applicable_and_the_run_succeeds() {
    let (code, stdout, report) = run_json(&["--suite", "pool", "--store", "sqlite"]);
    assert_eq!(code, 0, "{stdout}");
    let sqlite = &report.stores[0];
    assert!(sqlite.phases.is_empty());
    assert_eq!(
        sqlite.not_applicable,
        [
            "LargeResultSet",
            "ConcurrentQueries",
            "ConnectionPool",
            "BatchInsert"
        ]
    );
    assert!(stdout.contains("n/a"), "{stdout}");
}

#[test]
fn the_console_shows_medians_and_a_summary_per_phase_unless_verbose() {
    let (code, stdout, _) = run_json(&[
        "--store",
        "sqlite",
        "--sizes",
        "micro",
        "--warmup-runs",
        "1",
        "--runs",
        "2",
    ]);
    assert_eq!(code, 0, "{stdout}");
    // The blog's lines once (the medians), a summary per phase, no per-run blocks.
    assert_eq!(stdout.matches("INSERT micro 100 ").count(), 1, "{stdout}");
    assert!(stdout.contains("  SEARCH micro x1: "), "{stdout}");
    assert!(stdout.contains("over 2 runs), p50 "), "{stdout}");
    for verbose_only in ["-- warm-up run", "-- run 1/2", " -- avg "] {
        assert!(!stdout.contains(verbose_only), "{verbose_only}: {stdout}");
    }
}

#[test]
fn a_run_with_alloc_sites_names_every_phase_s_sites() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(assert_cmd::cargo::cargo_bin("dbcompare"))
        .args([
            "run",
            "--store",
            "sqlite",
            "--suite",
            "driver",
            "--scale",
            "0.001",
            "--warmup-runs",
            "0",
            "--runs",
            "1",
            "--no-floor",
            "--alloc-sites",
            "--quiet",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report =
        json::parse(&std::fs::read_to_string(dir.path().join("run.json")).unwrap()).unwrap();
    assert!(report.plan.alloc_sites);
    let sqlite = &report.stores[0];
    assert_eq!(sqlite.phases.len(), 22);
    for p in &sqlite.phases {
        let sites = p
            .alloc_sites
            .as_ref()
            .unwrap_or_else(|| panic!("{}", p.size.name));
        let counted = p.allocs_per_op.unwrap();
        // The same allocations, read at the same two moments.
        assert!(
            (sites.allocs_per_op - counted).abs() <= 0.02 * counted + 1.0,
            "{}: {} captured, {counted} counted",
            p.size.name,
            sites.allocs_per_op
        );
        assert!(!sites.sites.is_empty() && sites.sites.len() <= dbcompare::measure::sites::TOP);
        for s in &sites.sites {
            assert!(!s.function.starts_with("0x"), "a symbol is named: {s:?}");
        }
    }
    // SQLite's queries go through rusqlite; the row checks are dbcompare's.
    let owners: Vec<&str> = sqlite
        .phases
        .iter()
        .flat_map(|p| p.alloc_sites.as_ref().unwrap().owners.iter())
        .map(|o| o.owner.as_str())
        .collect();
    assert!(owners.contains(&"dbcompare"), "{owners:?}");
    let md = std::fs::read_to_string(dir.path().join("results.md")).unwrap();
    assert!(md.contains("## Where the client allocates"), "{md}");
    assert!(md.contains("**allocation sites captured**"), "{md}");
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("<h2>Where the client allocates</h2>"));
}

#[test]
fn alloc_sites_without_the_counting_allocator_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(assert_cmd::cargo::cargo_bin("dbcompare"))
        .args([
            "run",
            "--store",
            "sqlite",
            "--sizes",
            "micro",
            "--alloc-sites",
        ])
        .arg("--out")
        .arg(dir.path())
        .env("DBCOMPARE_ALLOC_COUNTING", "off")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--alloc-sites needs the counting allocator"),
        "{stderr}"
    );
}

#[test]
fn a_ycsb_run_with_alloc_sites_names_the_load_s_and_every_workload_s_sites() {
    let (code, stdout, report) = run_json(&[
        "--suite",
        "ycsb",
        "--store",
        "sqlite",
        "--workload",
        "a,c",
        "-p",
        "recordcount=100",
        "-p",
        "operationcount=200",
        "--no-floor",
        "--alloc-sites",
    ]);
    assert_eq!(code, 0, "{stdout}");
    let phases = &report.stores[0].phases;
    // The load and workload C have one operation type (the phase is the whole run), A has
    // two (the sites are on its whole-run phase).
    for workload in ["load", "a", "c"] {
        let of: Vec<_> = phases
            .iter()
            .filter(|p| p.size.name.split(' ').next() == Some(workload))
            .collect();
        assert!(!of.is_empty(), "no {workload} phase");
        assert!(
            of.iter().any(|p| p.alloc_sites.is_some()),
            "{workload}: no allocation sites"
        );
    }
}

/// Runs dbcompare with its standard output (and error, with `both`) going to a reader that
/// has already gone, as `dbcompare ... | head` leaves it: its exit code.
fn to_a_closed_pipe(args: &[&OsStr], both: bool) -> Option<i32> {
    let (read, write) = std::io::pipe().unwrap();
    drop(read);
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("dbcompare"));
    command.args(args).stdout(write.try_clone().unwrap());
    if both {
        command.stderr(write);
    }
    command.status().unwrap().code()
}

/// `dbcompare run | head` and `dbcompare report --format html | head`: the reader going
/// away ends no run and panics nothing; the run still writes every file.
#[test]
fn a_reader_that_goes_away_stops_nothing() {
    let out = tempfile::tempdir().unwrap();
    let run = [
        "run",
        "--store",
        "sqlite",
        "--sizes",
        "micro",
        "--warmup-runs",
        "0",
    ]
    .map(OsStr::new)
    .into_iter()
    .chain([OsStr::new("--runs"), OsStr::new("1"), OsStr::new("--out")])
    .chain([out.path().as_os_str()])
    .collect::<Vec<_>>();
    for both in [false, true] {
        std::fs::remove_dir_all(out.path()).unwrap();
        assert_eq!(to_a_closed_pipe(&run, both), Some(0), "both: {both}");
        for file in ["run.json", "results.md", "report.html", "results.csv"] {
            assert!(out.path().join(file).exists(), "{file}, both: {both}");
        }
    }
    let saved = out.path().join("run.json");
    for format in ["html", "json", "md", "text"] {
        let args = [
            "report".as_ref(),
            saved.as_os_str(),
            "--format".as_ref(),
            format.as_ref(),
        ];
        assert_eq!(to_a_closed_pipe(&args, false), Some(0), "{format}");
    }
}
