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
        "unknown store 'nosuch'; valid names: all, sqlite, postgres, mysql, mongodb, redis, aerospike, couchbase",
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
    refused(&["--concurrency", "1,0"], "--concurrency");
    refused(&["--rate", "0"], "--rate");
    refused(&["--rate", "fast"], "--rate");
    refused(&["--client-threads", "0"], "--client-threads");
    refused(
        &["--suite", "pool", "--client-threads", "2"],
        "--client-threads: the pool suite runs on one event loop",
    );
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
