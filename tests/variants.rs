//! Variants of a store in one run, against real throw-away servers: PostgreSQL, Redis and
//! MariaDB each as two variants whose settings are read back as asked and shown as their
//! difference, `--durability durable,relaxed` on SQLite and PostgreSQL, the variants' runs
//! interleaved in run.json (the YCSB suite's too), and the refusals of bad input (exit 2, the flag named, nothing
//! run).

// The runner's future, as in the library.
#![recursion_limit = "256"]

use std::path::Path;

use clap::Parser;
use dbcompare::cli::Cli;
use dbcompare::report::json;
use dbcompare::report::model::{Report, RunStatus, StoreStatus};
use dbcompare::report::variants;

/// Runs `dbcompare run ARGS` at micro size, two measured runs, into `out`; its exit code.
fn run(out: &Path, args: &[&str]) -> anyhow::Result<u8> {
    let mut argv = vec!["dbcompare", "run"];
    argv.extend_from_slice(args);
    argv.extend([
        "--sizes",
        "micro",
        "--warmup-runs",
        "0",
        "--runs",
        "2",
        "--no-floor",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    dbcompare::run(Cli::parse_from(argv))
}

fn report(out: &Path) -> Report {
    json::parse(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap()
}

/// The runs of `stores` in run.json's order.
fn order_of(report: &Report, stores: &[&str]) -> Vec<String> {
    report
        .interleaved
        .iter()
        .filter(|t| stores.contains(&t.store.as_str()))
        .map(|t| format!("{} {}", t.store, t.run))
        .collect()
}

#[test]
fn three_servers_as_two_variants_each_read_back_and_differ_in_their_settings() {
    let out = tempfile::tempdir().unwrap();
    let code = run(
        out.path(),
        &[
            "--store",
            "postgres@sync,postgres@async,redis@always,redis@everysec,mysql@one,mysql@two",
            "--set",
            "postgres@async:synchronous_commit=off",
            "--set",
            "redis@everysec:appendfsync=everysec",
            "--set",
            "mysql@one:innodb_flush_log_at_trx_commit=1",
            "--set",
            "mysql@two:innodb_flush_log_at_trx_commit=2",
        ],
    )
    .unwrap();
    let report = report(out.path());
    assert_eq!(code, 0, "{:#?}", report.stores);
    assert_eq!(report.status, RunStatus::Complete);
    let names: Vec<&str> = report.stores.iter().map(|s| s.store.as_str()).collect();
    assert_eq!(
        names,
        [
            "postgres@sync",
            "postgres@async",
            "redis@always",
            "redis@everysec",
            "mysql@one",
            "mysql@two"
        ]
    );
    for s in &report.stores {
        assert_eq!(s.status, StoreStatus::Ok, "{}: {:?}", s.store, s.error);
        let dir = s.deployment.as_ref().unwrap().data_dir.clone().unwrap();
        assert!(!Path::new(&dir).exists(), "{dir} left behind");
    }
    // Each throw-away variant had a server and a directory of its own.
    let dirs: std::collections::HashSet<String> = report
        .stores
        .iter()
        .map(|s| s.deployment.as_ref().unwrap().data_dir.clone().unwrap())
        .collect();
    assert_eq!(dirs.len(), 6);
    // Read back as asked, and the one setting that differs is the one asked for.
    let groups = variants::groups(&report);
    let differing: Vec<(String, Vec<String>)> =
        groups.iter().flat_map(|g| g.differing.clone()).collect();
    let pair = |key: &str, a: &str, b: &str| (key.to_string(), vec![a.to_string(), b.to_string()]);
    assert_eq!(
        differing,
        [
            pair("synchronous_commit", "on", "off"),
            pair("appendfsync", "always", "everysec"),
            pair("innodb_flush_log_at_trx_commit", "1", "2"),
        ],
        "{groups:#?}"
    );
    // Run by run: run 1 of each variant, then run 2 of each.
    assert_eq!(
        order_of(&report, &["redis@always", "redis@everysec"]),
        [
            "redis@always run 1/2",
            "redis@everysec run 1/2",
            "redis@always run 2/2",
            "redis@everysec run 2/2"
        ]
    );
    assert_eq!(report.interleaved.len(), 12);
    let md = std::fs::read_to_string(out.path().join("results.md")).unwrap();
    assert!(md.contains("## postgres: 2 variants"), "{md}");
    assert!(
        md.contains("| `synchronous_commit` | `on` | `off` |"),
        "{md}"
    );
    assert!(md.contains("### mysql@one against mysql@two (innodb_flush_log_at_trx_commit: 1 / 2)"));
    assert!(md.contains("redis@everysec (appendfsync=everysec)"), "{md}");
}

#[test]
fn durable_and_relaxed_make_every_store_two_variants() {
    let out = tempfile::tempdir().unwrap();
    let code = run(
        out.path(),
        &[
            "--store",
            "sqlite,postgres",
            "--durability",
            "durable,relaxed",
        ],
    )
    .unwrap();
    let report = report(out.path());
    assert_eq!(code, 0, "{:#?}", report.stores);
    let seen: Vec<(&str, &str)> = report
        .stores
        .iter()
        .map(|s| {
            (
                s.store.as_str(),
                s.info.as_ref().unwrap().durability.as_str(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("sqlite@durable", "durable"),
            ("sqlite@relaxed", "relaxed"),
            ("postgres@durable", "durable"),
            ("postgres@relaxed", "relaxed")
        ]
    );
    assert_eq!(report.plan.durability, "durable,relaxed");
    let groups = variants::groups(&report);
    let keys: Vec<Vec<&str>> = groups
        .iter()
        .map(|g| g.differing.iter().map(|(k, _)| k.as_str()).collect())
        .collect();
    assert_eq!(keys, [vec!["synchronous"], vec!["synchronous_commit"]]);
    assert_eq!(
        order_of(&report, &["sqlite@durable", "sqlite@relaxed"]),
        [
            "sqlite@durable run 1/2",
            "sqlite@relaxed run 1/2",
            "sqlite@durable run 2/2",
            "sqlite@relaxed run 2/2"
        ]
    );
}

#[test]
fn ycsb_variants_take_turns_load_by_load_and_run_by_run() {
    let out = tempfile::tempdir().unwrap();
    let argv = [
        "dbcompare",
        "run",
        "--suite",
        "ycsb",
        "--store",
        "redis@always,redis@everysec",
        "--set",
        "redis@everysec:appendfsync=everysec",
        "--workload",
        "a,c",
        "-p",
        "recordcount=100",
        "-p",
        "operationcount=200",
        "--warmup-runs",
        "0",
        "--runs",
        "2",
        "--no-floor",
        "--quiet",
        "--out",
        out.path().to_str().unwrap(),
    ];
    let code = dbcompare::run(Cli::parse_from(argv)).unwrap();
    let report = report(out.path());
    assert_eq!(code, 0, "{:#?}", report.stores);
    let stores = ["redis@always", "redis@everysec"];
    let order = order_of(&report, &stores);
    let mut expected = Vec::new();
    for run in [
        "load".to_string(),
        "workload a, concurrency 1: run 1/2".to_string(),
        "workload a, concurrency 1: run 2/2".to_string(),
        "workload c, concurrency 1: run 1/2".to_string(),
        "workload c, concurrency 1: run 2/2".to_string(),
    ] {
        for store in stores {
            expected.push(format!("{store} {run}"));
        }
    }
    assert_eq!(order, expected);
    for s in &report.stores {
        assert_eq!(s.status, StoreStatus::Ok, "{}: {:?}", s.store, s.error);
        assert!(s.phases.iter().any(|p| p.size.name.starts_with("c ")));
    }
}

#[test]
fn bad_variant_input_exits_2_naming_the_flag_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("tuned.conf");
    std::fs::write(&conf, "work_mem = 8MB\n").unwrap();
    let conf = conf.to_str().unwrap();
    let absent = dir.path().join("absent.conf");
    let absent = absent.to_str().unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "--store",
                "postgres@a",
                "--url",
                "postgres@b=postgres://u@h/db",
            ],
            "--url postgres@b: no store of --store is postgres@b",
        ),
        (
            vec![
                "--store",
                "postgres@a",
                "--config",
                &format!("postgres@b={conf}"),
            ],
            "--config postgres@b: no store of --store is postgres@b",
        ),
        (
            vec!["--store", "redis@a", "--set", "redis@b:appendfsync=always"],
            "--set redis@b: no store of --store is redis@b",
        ),
        (
            vec![
                "--store",
                "postgres@a",
                "--config",
                &format!("postgres@a={absent}"),
            ],
            "cannot read it",
        ),
        (
            vec!["--store", "sqlite@a", "--set", "sqlite@a:synchronous=OFF"],
            "sqlite is embedded: it has no server setting",
        ),
        (
            vec![
                "--store",
                "postgres@a",
                "--set",
                "postgres@a:no_such_setting=1",
            ],
            "--set postgres@a:no_such_setting=1: postgres@a did not take them",
        ),
        (
            vec![
                "--store",
                "redis@a",
                "--set",
                "redis@a:appendfsync=sometimes",
            ],
            "--set redis@a:appendfsync=sometimes: redis@a did not take them",
        ),
        (
            vec!["--store", "mysql@a", "--set", "mysql@a:no_such_variable=1"],
            "--set mysql@a:no_such_variable=1: mysql@a did not take them",
        ),
        (
            vec!["--store", "postgres@a", "--durability", "durable,relaxed"],
            "--durability durable,relaxed",
        ),
    ]
    .into_iter()
    .map(|(args, why)| (args.into_iter().map(String::from).collect(), why))
    .collect();
    for (args, why) in &cases {
        let out = tempfile::tempdir().unwrap();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let error = run(out.path(), &args).expect_err(why);
        assert_eq!(
            dbcompare::error::exit_code(&error),
            2,
            "{args:?}: {error:#}"
        );
        let message = format!("{error:#}");
        assert!(message.contains(why), "{args:?}: {message}");
        if why.starts_with("--set redis@a:appendfsync") {
            // Redis says why on its standard error, before it opens its log.
            assert!(message.contains("'appendfsync sometimes'"), "{message}");
        }
        assert!(!out.path().join("run.json").exists(), "{args:?} ran");
    }
}

#[test]
fn a_setting_not_read_back_as_asked_fails_that_variant_with_both_values() {
    let out = tempfile::tempdir().unwrap();
    // MariaDB takes 7 for innodb_flush_log_at_trx_commit and holds the highest it knows.
    let code = run(
        out.path(),
        &[
            "--store",
            "mysql@asked,mysql@plain",
            "--set",
            "mysql@asked:innodb_flush_log_at_trx_commit=7",
        ],
    )
    .unwrap();
    assert_eq!(code, 1);
    let report = report(out.path());
    let asked = &report.stores[0];
    assert_eq!(asked.store, "mysql@asked");
    assert_eq!(asked.status, StoreStatus::Failed);
    let error = asked.error.as_deref().unwrap();
    assert!(
        error.contains("innodb_flush_log_at_trx_commit: asked 7, read back 3"),
        "{error}"
    );
    assert!(asked.phases.is_empty());
    assert_eq!(report.stores[1].status, StoreStatus::Ok);
}

/// On the console, each variant's lines come under its own name: their runs take turns, so
/// the name is given again before each block.
#[test]
fn each_variants_lines_on_the_console_come_under_its_name() {
    let out = tempfile::tempdir().unwrap();
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_dbcompare"))
        .args([
            "run",
            "--store",
            "sqlite",
            "--durability",
            "durable,relaxed",
        ])
        .args([
            "--sizes",
            "micro",
            "--warmup-runs",
            "0",
            "--runs",
            "1",
            "--no-floor",
        ])
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    let blocks: Vec<(&str, &str)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("INSERT micro 100 "))
        .map(|(i, _)| {
            let header = lines[..i]
                .iter()
                .rev()
                .find(|l| l.starts_with("== "))
                .expect("a header above the lines");
            // The name right above the block: the header, the size, the inserts.
            assert!(
                lines[i - 1].starts_with("initial database size"),
                "{stdout}"
            );
            assert_eq!(lines[i - 2], *header, "{stdout}");
            (
                header.split(':').next().unwrap(),
                header.split(", ").last().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        blocks,
        [
            ("== sqlite@durable", "durable =="),
            ("== sqlite@relaxed", "relaxed ==")
        ],
        "{stdout}"
    );
}
