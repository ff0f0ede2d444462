//! Bad input gets a clear error naming the flag, exit code 2, and nothing starts.

use assert_cmd::Command;
use predicates::prelude::*;

fn dbcompare() -> Command {
    Command::cargo_bin("dbcompare").unwrap()
}

fn refused(args: &[&str], message: &str) {
    let out = tempfile::tempdir().unwrap();
    dbcompare()
        .args(args)
        .arg("--out")
        .arg(out.path().join("results"))
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(message));
    assert!(
        !out.path().join("results").join("run.json").exists(),
        "a refused run must not write results"
    );
}

#[test]
fn unknown_store_lists_the_valid_names() {
    refused(
        &["--store", "nosuch"],
        "unknown store 'nosuch'; valid names: all, sqlite, postgres, mysql, mongodb, redis, redis-cluster, aerospike, couchbase",
    );
    refused(
        &["run", "--store", "sqlite,nosuch"],
        "valid names: all, sqlite",
    );
}

#[test]
fn bad_sizes_name_the_flag() {
    refused(&["--sizes", "0"], "--sizes");
    refused(&["--sizes", "0"], "positive number of records");
    refused(&["--sizes", "-5"], "--sizes");
    refused(&["--sizes=-5"], "positive number of records");
    refused(&["--sizes", "micro,lots"], "'lots' is neither a size name");
    refused(
        &["--sizes", "micro,micro"],
        "--sizes: 'micro' is given twice",
    );
    refused(
        &["--sizes", "micro,100"],
        "--sizes: 'micro' and '100' are the same size, 100 records",
    );
}

/// A temporary directory that is not there is found before anything starts, named with
/// the variable that sets it.
#[test]
fn a_missing_temporary_directory_is_a_usage_error() {
    let out = tempfile::tempdir().unwrap();
    dbcompare()
        .env("TMPDIR", out.path().join("gone"))
        .args(["--store", "sqlite", "--sizes", "micro", "--out"])
        .arg(out.path().join("results"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "($TMPDIR): not an existing directory",
        ));
}

#[test]
fn zero_searches_per_insert_names_the_flag() {
    refused(&["--searches-per-insert", "0"], "--searches-per-insert");
    refused(&["--searches-per-insert", "0"], "must be at least 1");
    refused(&["--searches-per-insert", "many"], "--searches-per-insert");
}

#[test]
fn zero_runs_concurrency_or_rate_name_the_flag() {
    refused(&["--runs", "0"], "--runs");
    // A negative number is a value refused for what it is, not an unknown flag.
    refused(
        &["--runs", "-1"],
        "'--runs <K>': must be at least 1, not '-1'",
    );
    refused(
        &["--concurrency", "-4"],
        "'--concurrency <LEVELS>': must be at least 1, not '-4'",
    );
    refused(
        &["--warmup-runs", "-1"],
        "'--warmup-runs <N>': must be a whole number, 0 or more, not '-1'",
    );
    refused(
        &["--stall-timeout", "1.5"],
        "'--stall-timeout <SECONDS>': must be a whole number, 0 or more, not '1.5'",
    );
    refused(&["--seed", "99999999999999999999999"], "is too large");
    refused(&["--runs", "99999999999999999999"], "is too large");
    refused(&["--concurrency", "1,0"], "--concurrency");
    refused(&["--rate", "0"], "--rate");
    refused(&["--rate", "fast"], "--rate");
    refused(
        &["--rate", "18446744073709551615"],
        "--rate 18446744073709551615: at most 1000000000 operations a second",
    );
    refused(&["--client-threads", "0"], "--client-threads");
    // A negative share is read as the flag's value, not as a flag of its own.
    refused(
        &["--client", "-1/2", "--start-at", "+5s"],
        "'-1/2' for '--client <K/N>': `-1/2`: K/N, two whole numbers",
    );
    refused(
        &["--suite", "pool", "--client-threads", "2"],
        "--client-threads: the pool suite runs on one event loop",
    );
}

#[test]
fn retries_are_the_classic_suites_and_a_count() {
    refused(
        &["--suite", "driver", "--retries", "2"],
        "--retries: the classic suite retries on a new connection; the driver suite",
    );
    refused(&["--retries=-1"], "--retries");
    refused(&["--retries", "often"], "--retries");
}

#[test]
fn an_unwritable_out_dir_stops_before_any_benchmark() {
    let file = tempfile::NamedTempFile::new().unwrap();
    dbcompare()
        .args(["--store", "sqlite", "--sizes", "micro", "--out"])
        .arg(file.path().join("results"))
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("--out").and(predicate::str::contains("cannot write")));
}

#[test]
fn list_shows_sqlite_as_embedded() {
    dbcompare()
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"sqlite\s+available\s+embedded SQLite 3\.").unwrap());
}

/// `list` plans the stores as a run would: a variant's --config file is read, and one that
/// cannot be read is refused there as in a run.
#[test]
fn list_reads_the_config_files_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("tuned.conf");
    std::fs::write(&conf, "work_mem = 8MB\n").unwrap();
    dbcompare()
        .args(["list", "--config"])
        .arg(format!("postgres@tuned={}", conf.display()))
        .assert()
        .success()
        .stdout(predicate::str::contains("postgres@tuned"));
    dbcompare()
        .args(["list", "--config"])
        .arg(format!(
            "postgres@tuned={}",
            dir.path().join("gone").display()
        ))
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("cannot read it"));
}

#[test]
fn bad_ycsb_workloads_are_refused_before_anything_starts() {
    let ycsb = |extra: &[&str], message: &str| {
        let mut args = vec!["--store", "sqlite", "--suite", "ycsb"];
        args.extend_from_slice(extra);
        refused(&args, message);
    };
    ycsb(
        &["--workload", "g"],
        "YCSB's core workloads are a, b, c, d, e and f",
    );
    ycsb(&["--workload", "a,a"], "workload a is given twice");
    ycsb(
        &["-p", "recordcount=0"],
        "recordcount=0: must be at least 1",
    );
    ycsb(
        &["-p", "requestdistribution=pareto"],
        "requestdistribution=pareto: not one of YCSB's: uniform, zipfian, latest",
    );
    ycsb(
        &["-p", "nosuchkey=1"],
        "nosuchkey=1: not a key of YCSB's core workload",
    );
    ycsb(&["-p", "recordcount"], "--property: expected KEY=VALUE");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine");
    std::fs::write(
        &file,
        "recordcount=10\nreadproportion=0.5\nupdateproportion=0.4\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    ycsb(
        &["--workload-file", file],
        "the operation proportions sum to 0.9",
    );
    std::fs::write(
        dir.path().join("other"),
        "recordcount=10\noperationcount=10\nreadproportion=1\nupdateproportion=0\n",
    )
    .unwrap();
    let other = dir.path().join("other");
    ycsb(
        &[
            "--workload",
            "a",
            "--workload-file",
            other.to_str().unwrap(),
        ],
        "differ in recordcount",
    );
    // YCSB's client has no default for either count; a value keeps its trailing spaces.
    ycsb(
        &[
            "--workload-file",
            other.to_str().unwrap(),
            "-p",
            "recordcount=10 ",
        ],
        "recordcount=10 : \"10 \" is not a whole number",
    );
    std::fs::write(
        dir.path().join("counts"),
        "readproportion=1\nupdateproportion=0\n",
    )
    .unwrap();
    ycsb(
        &[
            "--workload-file",
            dir.path().join("counts").to_str().unwrap(),
        ],
        "recordcount is not set",
    );
    ycsb(
        &["--workload-file", "/nonexistent/w"],
        "--workload-file /nonexistent/w",
    );
    // The YCSB flags belong to the YCSB suite.
    refused(
        &["--store", "sqlite", "--workload", "a"],
        "add --suite ycsb",
    );
}

#[test]
fn a_ycsb_run_on_sqlite_writes_its_report() {
    let out = tempfile::tempdir().unwrap();
    dbcompare()
        .args(["--store", "sqlite", "--suite", "ycsb", "--workload", "a,e"])
        .args(["-p", "recordcount=100", "-p", "operationcount=200"])
        .args(["--runs", "1", "--warmup-runs", "0", "--out"])
        .arg(out.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("a READ"))
        .stdout(predicate::str::contains("e SCAN"))
        .stdout(predicate::str::contains("99.99th(us)"));
    let md = std::fs::read_to_string(out.path().join("results.md")).unwrap();
    assert!(
        md.contains("suite `ycsb`") && md.contains("- workloads"),
        "{md}"
    );
    assert!(md.contains("- SCAN: SELECT"), "{md}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("run.json")).unwrap()).unwrap();
    let phases = json["stores"][0]["phases"].as_array().unwrap();
    let scan = phases
        .iter()
        .find(|p| p["size"]["name"] == "e SCAN")
        .unwrap();
    assert_eq!(scan["kind"], "ycsb");
    assert_eq!(scan["errors"], 0);
    assert!(scan["latency_us"]["p9999"].as_f64().unwrap() > 0.0);
}

/// `report --format md,md` is one format, on stdout; two different ones need --out.
#[test]
fn one_format_given_twice_is_one() {
    let run = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/results/classic/run.json");
    dbcompare()
        .args(["report", run, "--format", "md,md"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("# dbcompare results"));
    dbcompare()
        .args(["report", run, "--format", "md,csv,md"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "several --format values need --out",
        ));
}

/// `server` names the stores it starts; `all` takes no label.
#[test]
fn server_names_what_it_starts_and_all_takes_no_label() {
    dbcompare()
        .args(["server", "sqlite"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "dbcompare starts servers of postgres, mysql, redis or redis-cluster",
        ));
    refused(&["--store", "all@x"], "all takes no label");
}

/// Names of modes and suites are taken in any case, as store names are.
#[test]
fn modes_and_suites_in_any_case() {
    let out = tempfile::tempdir().unwrap();
    dbcompare()
        .args([
            "run",
            "--store",
            "SQLite",
            "--durability",
            "Durable",
            "--suite",
            "Classic",
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
        .assert()
        .success();
}

/// `server` refuses what `run` refuses, as bad usage (exit 2) before anything starts.
#[test]
fn server_refuses_a_tls_redis_cluster_as_run_does() {
    for args in [
        &["server", "redis-cluster", "--tls"][..],
        &[
            "run",
            "--store",
            "redis-cluster",
            "--tls",
            "--sizes",
            "micro",
        ][..],
    ] {
        dbcompare()
            .args(args)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(
                "dbcompare does not start a Redis Cluster serving TLS (--tls) yet",
            ));
    }
}

/// A store's own flag where no store of the run uses it would be dropped without a word:
/// refused, as `--url`, `--config` and `--set` for a store not in the run are.
#[test]
fn a_stores_own_flag_without_that_store_is_refused() {
    for (args, flag) in [
        (
            &["--store", "redis", "--sqlite-path", "/tmp/x.db"][..],
            "--sqlite-path",
        ),
        (&["--store", "sqlite", "--tls"][..], "--tls"),
        (
            &["--store", "sqlite", "--redis-cluster-masters", "5"][..],
            "--redis-cluster-masters",
        ),
        (
            &["--store", "sqlite", "--mongodb-transactions", "never"][..],
            "--mongodb-transactions",
        ),
        (
            &["--store", "sqlite", "--couchbase-query"][..],
            "--couchbase-query",
        ),
    ] {
        refused(
            args,
            &format!("{flag}: none of the stores given uses it (it is for "),
        );
    }
    // `check` takes them as `run` does.
    dbcompare()
        .args(["check", "--store", "sqlite", "--tls"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--tls: none of the stores given uses it",
        ));
}
