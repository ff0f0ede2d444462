//! `dbcompare check` against real servers: ready where the setup is right, and where it is
//! not, the problem and its fix, the other stores still checked, passwords masked.

mod common;

use assert_cmd::Command;
use dbcompare::catalog::{Durability, StoreKind};

fn check(args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("dbcompare")
        .unwrap()
        .arg("check")
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), stdout)
}

/// The table row of `store`.
fn row<'a>(out: &'a str, store: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_whitespace().next() == Some(store))
        .unwrap_or_else(|| panic!("no row for {store}:\n{out}"))
}

#[test]
fn throw_away_servers_and_sqlite_are_ready() {
    let (code, out) = check(&["--store", "sqlite,postgres,mysql,redis"]);
    assert_eq!(code, 0, "{out}");
    for store in ["sqlite", "postgres", "mysql", "redis"] {
        let row = row(&out, store);
        assert!(row.trim_end().ends_with("yes"), "{row}");
        assert!(row.contains("reset ok, size ok"), "{row}");
    }
    assert!(
        row(&out, "postgres").contains("as configs/postgresql.conf asks"),
        "{out}"
    );
    assert!(row(&out, "mysql").contains("yes: MariaDB "), "{out}");
    assert!(row(&out, "mysql").contains("transport TCP"), "{out}");
    assert!(out.contains("How each insert is written:\n"), "{out}");
}

/// A setting the server refuses: the problem says so once, with the server's words, and the
/// fix names the flag to mend; a Redis Cluster named with --tls is refused before a node
/// starts, saying how to give one.
#[test]
fn a_refused_setting_is_the_fix_and_tls_leaves_the_cluster_unchecked() {
    let (code, out) = check(&["--store", "postgres", "--set", "postgres:no_such_setting=1"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out.matches("starting a local postgres server").count(),
        1,
        "{out}"
    );
    assert!(out.contains("no_such_setting"), "{out}");
    assert!(out.contains("(--set, --config), mend or"), "{out}");
    let (code, out) = check(&["--store", "redis-cluster", "--tls"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("dbcompare does not start a Redis Cluster serving TLS"),
        "{out}"
    );
    assert!(!out.contains("***"), "{out}");
}

/// With `--tls`, each row says the connection's TLS and what was verified; the Redis
/// Cluster, which dbcompare cannot start serving TLS, is skipped under `all`, not a problem.
#[test]
fn tls_is_shown_beside_the_transport() {
    let (code, out) = check(&["--tls"]);
    assert_eq!(code, 0, "{out}");
    assert!(row(&out, "redis-cluster").contains("skipped"), "{out}");
    for store in ["postgres", "mysql"] {
        let row = row(&out, store);
        assert!(row.contains("transport TCP over TLSv1."), "{row}");
        assert!(row.contains("certificate and host name verified"), "{row}");
    }
    assert!(
        row(&out, "redis").contains("; TLS, certificate and host name verified"),
        "{out}"
    );
}

#[test]
fn a_store_that_cannot_run_is_skipped_under_all_and_a_problem_when_named() {
    let (code, out) = check(&["--store", "aerospike"]);
    assert_eq!(code, 1, "{out}");
    assert!(row(&out, "aerospike").contains("no: 1 problem"), "{out}");
    // Built in, it needs a URL; not built, the way to build it.
    let fix = if cfg!(feature = "aerospike") {
        "fix:     dbcompare starts no local aerospike server"
    } else {
        "fix:     not in this build: `cargo build --release --features aerospike`"
    };
    assert!(out.contains(fix), "{out}");
}

/// A relaxed server checked for durable: the setting that differs, and the line of
/// configs/ that fixes it.
#[test]
fn a_server_that_is_not_durable_is_told_what_to_set() {
    let server = common::start(StoreKind::Redis, Durability::Relaxed);
    let url = format!("redis={}", server.url());
    let (code, out) = check(&["--store", "redis", "--url", &url]);
    assert_eq!(code, 1, "{out}");
    assert!(
        row(&out, "redis").contains("relaxed (asked: durable)"),
        "{out}"
    );
    assert!(
        out.contains("problem: it runs relaxed where durable was asked: appendfsync=everysec"),
        "{out}"
    );
    assert!(
        out.contains(
            "fix:     set appendfsync = always on the server (as configs/redis.conf does)"
        ),
        "{out}"
    );
    // Checked for what it is, it is ready.
    let (code, out) = check(&["--store", "redis", "--url", &url, "--durability", "relaxed"]);
    assert_eq!(code, 0, "{out}");
}

/// A wrong password: that store's row says so with the server's message, the password
/// masked; the other store is still checked.
#[test]
fn a_refused_connection_is_reported_and_the_others_are_checked() {
    let server = common::start(StoreKind::Mysql, Durability::Durable);
    let url = format!(
        "mysql=mysql://root:wrongsecret@127.0.0.1:{}/dbcompare",
        server.port()
    );
    let (code, out) = check(&["--store", "mysql,sqlite", "--url", &url]);
    assert_eq!(code, 1, "{out}");
    assert!(row(&out, "mysql").contains("no: 1 problem"), "{out}");
    assert!(row(&out, "sqlite").trim_end().ends_with("yes"), "{out}");
    assert!(
        out.contains("Access denied"),
        "the server's own message: {out}"
    );
    assert!(out.contains("root:***@"), "{out}");
    assert!(!out.contains("wrongsecret"), "{out}");
}

/// A user without the privilege the size measurement needs (PostgreSQL's CHECKPOINT): the
/// reset works, the size is refused, and the fix names the role.
#[test]
fn a_missing_privilege_is_found_with_the_call_a_run_makes() {
    let server = common::start(StoreKind::Postgres, Durability::Durable);
    let admin = server.url();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
            .batch_execute(
                "CREATE USER plain PASSWORD 'plainpw'; GRANT CREATE ON SCHEMA public TO plain",
            )
            .await
            .unwrap();
    });
    let url = format!(
        "postgres=postgres://plain:plainpw@127.0.0.1:{}/postgres",
        server.port()
    );
    let (code, out) = check(&["--store", "postgres", "--url", &url]);
    assert_eq!(code, 1, "{out}");
    assert!(
        row(&out, "postgres").contains("reset ok, size refused"),
        "{out}"
    );
    assert!(out.contains("GRANT pg_checkpoint TO <user>"), "{out}");
}

/// Ctrl-C stops the check after the store it is at; the stores not reached are named.
#[test]
fn an_interrupted_check_names_the_stores_it_did_not_reach() {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbcompare"))
        .args(["check", "--store", "postgres,mysql,redis"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("not checked (interrupted): "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.ends_with("redis"), "{line}");
}
