//! A connection the server drops in the middle of a phase (PostgreSQL's
//! `pg_terminate_backend`, MySQL's `KILL`, Redis's `CLIENT KILL`), against real throw-away
//! servers: by default the phase fails with an error naming it, the operations it reached
//! and the server's message; with `--retries` the operation is made again on a new
//! connection, the run goes on, and every retry is counted beside the phase.

mod common;

use std::time::Duration;

use dbcompare::catalog::{Durability, StoreKind};
use dbcompare::report::json;
use dbcompare::report::model::{PhaseKind, Report, StoreStatus};
use dbcompare::server::LocalServer;

/// Closes every client connection of the server but the one it asks on; how many.
async fn drop_connections(kind: StoreKind, url: &str) -> usize {
    match kind {
        StoreKind::Postgres => {
            let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(conn);
            let rows = client
                .query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                     WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
                    &[],
                )
                .await
                .unwrap();
            rows.len()
        }
        StoreKind::Mysql => {
            use mysql_async::prelude::Queryable;
            let mut conn = mysql_async::Conn::from_url(url).await.unwrap();
            let ids: Vec<u64> = conn
                .query(
                    "SELECT id FROM information_schema.processlist \
                     WHERE id <> CONNECTION_ID() AND command <> 'Daemon'",
                )
                .await
                .unwrap();
            for id in &ids {
                // A connection may end by itself meanwhile.
                let _ = conn.query_drop(format!("KILL {id}")).await;
            }
            ids.len()
        }
        StoreKind::Redis => {
            let client = redis::Client::open(url).unwrap();
            let mut conn = client.get_multiplexed_async_connection().await.unwrap();
            let killed: usize = redis::cmd("CLIENT")
                .arg(&["KILL", "TYPE", "normal", "SKIPME", "yes"])
                .query_async(&mut conn)
                .await
                .unwrap();
            killed
        }
        other => panic!("no way to drop {other}'s connections here"),
    }
}

struct Outcome {
    code: i32,
    output: String,
    report: Report,
}

/// A classic run against `server` whose connections are dropped once its search phase (at
/// `concurrency`, closed loop or at `rate` operations per second) has started.
fn run_and_drop(
    server: &LocalServer,
    retries: &str,
    concurrency: &str,
    rate: Option<&str>,
) -> Outcome {
    let kind = server.kind();
    let url = server.url();
    let out = tempfile::tempdir().unwrap();
    let mut args: Vec<std::ffi::OsString> = [
        "--verbose",
        "--store",
        kind.name(),
        "--url",
        &format!("{kind}={url}"),
        "--sizes",
        "tiny",
        "--searches-per-insert",
        "50",
        "--runs",
        "1",
        "--warmup-runs",
        "0",
        "--no-floor",
        "--retries",
        retries,
        "--concurrency",
        concurrency,
        "--out",
    ]
    .iter()
    .map(Into::into)
    .collect();
    args.push(out.path().into());
    if let Some(rate) = rate {
        args.extend(["--rate".into(), rate.into()]);
    }
    // Inserts done: the search phase starts now.
    let (mut child, lines) = common::spawn_until(&args, "final database size");
    std::thread::sleep(Duration::from_millis(300));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dropped = runtime.block_on(drop_connections(kind, &url));
    assert!(dropped >= 1, "{kind}: no connection of the run was found");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    let report = json::parse(&std::fs::read_to_string(out.path().join("run.json")).unwrap())
        .unwrap_or_else(|e| panic!("{kind}: {e}"));
    Outcome {
        code: status.code().unwrap_or(-1),
        output: rest.join("\n"),
        report,
    }
}

/// What each server says, or its driver says for it, when it drops a connection.
fn server_message(kind: StoreKind) -> &'static [&'static str] {
    match kind {
        StoreKind::Postgres => &["terminating connection due to administrator command"],
        StoreKind::Mysql => &[
            "Connection was killed",
            "Lost connection",
            "connection was killed",
            "Input/output error",
            "broken pipe",
            "Broken pipe",
            "unexpected end of file",
            "Connection reset",
            // dbcompare's own connection, when the server closed it without a word.
            "the server closed the connection",
        ],
        StoreKind::Redis => &[
            "broken pipe",
            "Broken pipe",
            "connection reset",
            "Connection reset",
            "closed",
            "unexpected end of file",
            "terminated",
        ],
        _ => &[],
    }
}

fn check_store(kind: StoreKind) {
    let server = common::start(kind, Durability::Durable);

    // No retries: the phase fails, naming itself, the operations it reached and the cause.
    let failed = run_and_drop(&server, "0", "1", None);
    assert_eq!(failed.code, 1, "{kind}:\n{}", failed.output);
    let store = &failed.report.stores[0];
    assert_eq!(store.status, StoreStatus::Failed, "{kind}");
    let error = store.error.as_deref().unwrap();
    eprintln!("{kind}, connection dropped: {error}");
    assert!(
        error.starts_with("SEARCH tiny: failed after "),
        "{kind}: {error}"
    );
    let reached: u64 = error["SEARCH tiny: failed after ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(reached > 0 && reached < 50_000, "{kind}: {error}");
    assert!(
        server_message(kind).iter().any(|m| error.contains(m)),
        "{kind}: the server's message is not in: {error}"
    );
    let search = store
        .phases
        .iter()
        .find(|p| p.kind == PhaseKind::Search)
        .unwrap();
    assert_eq!(search.ops, reached, "{kind}: the phase's figures are kept");
    assert_eq!(search.retries, 0);

    // With retries, on four connections at once (each task reconnects on its own): the run
    // goes on and says how many operations were made again. An open loop of 10,000/s keeps
    // the phase going for 5 s on any machine, so the drop lands inside it.
    let retried = run_and_drop(&server, "3", "4", Some("10000"));
    assert_eq!(retried.code, 0, "{kind}:\n{}", retried.output);
    let store = &retried.report.stores[0];
    assert_eq!(store.status, StoreStatus::Ok, "{kind}: {:?}", store.error);
    let search = store
        .phases
        .iter()
        .find(|p| p.kind == PhaseKind::Search)
        .unwrap();
    assert_eq!(search.errors, 0, "{kind}");
    assert_eq!(search.ops, 50_000, "{kind}");
    assert!(search.retries >= 1, "{kind}: no retry counted");
    assert!(
        retried.output.contains("on a new connection"),
        "{kind}: the console does not show the retries:\n{}",
        retried.output
    );
}

#[test]
fn postgres_dropped_connections_fail_the_phase_or_are_retried_and_counted() {
    check_store(StoreKind::Postgres);
}

#[test]
fn mysql_dropped_connections_fail_the_phase_or_are_retried_and_counted() {
    check_store(StoreKind::Mysql);
}

#[test]
fn redis_dropped_connections_fail_the_phase_or_are_retried_and_counted() {
    check_store(StoreKind::Redis);
}
