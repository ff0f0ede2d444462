//! PostgreSQL, MySQL (MariaDB), Redis and a Redis Cluster against real throw-away servers started through
//! `src/server/`: round trips with every field compared, a missing key, the classic suite
//! at micro size, durability read back, the driver, pool and YCSB suites, and no process or
//! directory left behind. Every store dbcompare starts a server of has its tests here
//! ([`every_store_with_a_local_server_has_its_tests`]).

mod common;

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use dbcompare::catalog::{Durability, StoreKind};
use dbcompare::report::model::{StoreInfo, StoreResult};
use dbcompare::server::process_alive;
use dbcompare::store::registry::AnyStore;
use dbcompare::store::{DiskUsage, NotApplicable, Store};
use dbcompare::suite::Silent;
use dbcompare::suite::classic::{self, Workload};
use dbcompare::suite::clients::Connect;
use dbcompare::workload::record::{Record, generate};

async fn round_trip(kind: StoreKind) {
    let server = common::start(kind, Durability::Durable);
    let mut store = common::connect(&server, Durability::Durable).await;
    // Redis SET overwrites: its unique_id is a key, not a unique index.
    let overwrites = matches!(kind, StoreKind::Redis | StoreKind::RedisCluster);
    common::round_trip(&mut store, kind.name(), !overwrites).await;
}

async fn classic_micro(kind: StoreKind) {
    let server = common::start(kind, Durability::Durable);
    let connect = common::connector(&server, Durability::Durable);
    let result = common::classic_micro(connect, kind.name()).await;
    if kind == StoreKind::Mysql {
        // InnoDB allocates 16 kB pages: micro's 100 records (about 12 kB) fit in the first
        // page of the table, so its size cannot grow yet (see mysql_size_grows_with_data).
        assert!(result.final_size_bytes >= result.initial_size_bytes);
    } else {
        common::size_grew(&result);
    }
    assert!(
        !result.final_size_extra.is_empty(),
        "{kind}: a local server's data directory is measured too"
    );
}

async fn durability_is_read_back(kind: StoreKind, expected: [(&str, &str, &str); 2]) {
    for durability in [Durability::Durable, Durability::Relaxed] {
        let server = common::start(kind, durability);
        let mut store = common::connect(&server, durability).await;
        let info = common::described(&mut store).await;
        let want: Vec<(&str, &str)> = expected
            .iter()
            .map(|&(name, durable, relaxed)| {
                (
                    name,
                    if durability == Durability::Durable {
                        durable
                    } else {
                        relaxed
                    },
                )
            })
            .collect();
        common::settings_are(&info, durability, &want);
    }
}

/// A real store that answers one search wrongly.
struct Lying(AnyStore);

impl Store for Lying {
    type Driver = NotApplicable;
    type Pool = NotApplicable;
    type Ycsb = NotApplicable;

    async fn describe(&mut self) -> Result<StoreInfo> {
        self.0.describe().await
    }
    async fn reset(&mut self) -> Result<()> {
        self.0.reset().await
    }
    async fn insert(&mut self, record: &Record) -> Result<()> {
        self.0.insert(record).await
    }
    async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
        let found = self.0.find(unique_id).await?;
        Ok(found.filter(|_| unique_id != "micro-3"))
    }
    async fn disk_usage(&mut self) -> Result<DiskUsage> {
        self.0.disk_usage().await
    }
}

fn gone(pid: i32, dir: &Path) {
    assert!(!process_alive(pid), "server process {pid} survived");
    assert!(!dir.exists(), "{} survived", dir.display());
}

async fn nothing_survives_a_failing_run(kind: StoreKind) {
    let server = common::start(kind, Durability::Durable);
    let (pid, dir) = (server.pid().unwrap(), server.dir().to_path_buf());
    assert!(process_alive(pid) && dir.exists());
    let honest = Arc::new(common::connector(&server, Durability::Durable));
    let connect = move || {
        let honest = Arc::clone(&honest);
        async move { Ok(Lying(honest.connect().await?)) }
    };
    let mut result = StoreResult::new(kind.name());
    let outcome = classic::run(
        &common::clients(connect),
        &Workload::generate(&common::micro_plan()),
        &mut result,
        &mut Silent,
    )
    .await;
    let message = format!("{:#}", outcome.unwrap_err());
    assert!(
        message.contains("missing record for unique_id micro-3"),
        "{message}"
    );
    drop(server);
    gone(pid, &dir);

    // A panic while the server runs stops it too.
    let server = common::start(kind, Durability::Durable);
    let (pid, dir) = (server.pid().unwrap(), server.dir().to_path_buf());
    let panicked = std::thread::spawn(move || {
        let _server = server;
        panic!("a failure in the middle of a run");
    })
    .join();
    assert!(panicked.is_err());
    gone(pid, &dir);
}

async fn driver_suite(kind: StoreKind, not_applicable: &[&str]) {
    let server = common::start(kind, Durability::Durable);
    let connect = common::connector_for_drivers(&server, Durability::Durable);
    let result = common::driver_tiny(connect, kind.name()).await;
    assert_eq!(result.not_applicable, not_applicable, "{kind}");
    let concurrent = result
        .phases
        .iter()
        .find(|p| p.size.name == "PreparedQueryConcurrent16")
        .unwrap();
    assert_eq!(concurrent.concurrency, 16);
}

/// YCSB's six workloads at a small size, at one and four connections: zero errors.
async fn ycsb_at_a_small_size(kind: StoreKind) {
    let server = common::start(kind, Durability::Durable);
    let connect = common::connector_for_drivers(&server, Durability::Durable);
    common::ycsb_small(connect, kind.name(), &[]).await;
}

/// This process's TCP sockets connected to `port`, each with its TCP_NODELAY setting.
fn sockets_to(port: u16) -> Vec<bool> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let Ok(fd) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        // SAFETY: plain queries on a descriptor of this process; one closed meanwhile
        // makes them fail, which skips it.
        unsafe {
            let mut addr: libc::sockaddr_in = std::mem::zeroed();
            let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            if libc::getpeername(fd, (&raw mut addr).cast(), &mut len) != 0
                || i32::from(addr.sin_family) != libc::AF_INET
                || u16::from_be(addr.sin_port) != port
            {
                continue;
            }
            let mut on: libc::c_int = 0;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            if libc::getsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_NODELAY,
                (&raw mut on).cast(),
                &mut len,
            ) == 0
            {
                found.push(on != 0);
            }
        }
    }
    found
}

/// The client's connections send every request at once (TCP_NODELAY), as the native tools'
/// do: with Nagle's algorithm a small write can wait for the previous one's ACK.
async fn sockets_send_without_delay(kind: StoreKind) {
    let server = common::start(kind, Durability::Durable);
    let mut store = common::connect(&server, Durability::Durable).await;
    store.reset().await.unwrap();
    // Every node of a cluster: the client connects to those it discovers too.
    for (port, _) in server.nodes() {
        let sockets = sockets_to(port);
        assert!(
            !sockets.is_empty(),
            "{kind}: no TCP connection to port {port}"
        );
        assert!(
            sockets.iter().all(|&on| on),
            "{kind}: TCP_NODELAY per socket to port {port}: {sockets:?}"
        );
    }
}

/// The tests of every store dbcompare starts a throw-away server of, one module per store,
/// and the list of those stores ([`SERVER_TESTED`]).
macro_rules! server_store_tests {
    ($(
        $module:ident {
            kind: $kind:expr,
            durability: $settings:expr,
            driver_not_applicable: $driver_na:expr $(,)?
        }
    )+) => {
        $(
            mod $module {
                use super::*;

                #[tokio::test]
                async fn round_trip_compares_every_field() {
                    round_trip($kind).await;
                }

                #[tokio::test]
                async fn classic_suite_at_micro_size() {
                    classic_micro($kind).await;
                }

                #[tokio::test]
                async fn durability_settings_are_read_back() {
                    durability_is_read_back($kind, $settings).await;
                }

                #[tokio::test]
                async fn no_process_or_directory_survives_a_failing_run() {
                    nothing_survives_a_failing_run($kind).await;
                }

                #[tokio::test]
                async fn client_sockets_send_without_delay() {
                    sockets_send_without_delay($kind).await;
                }

                #[tokio::test]
                async fn driver_suite_at_a_tiny_scale() {
                    driver_suite($kind, $driver_na).await;
                }

                #[tokio::test]
                async fn pool_suite() {
                    pool_suite_runs_every_test($kind).await;
                }

                #[tokio::test]
                async fn ycsb_core_workloads() {
                    ycsb_at_a_small_size($kind).await;
                }
            }
        )+

        /// The stores with tests in this file.
        const SERVER_TESTED: &[StoreKind] = &[$($kind),+];
    };
}

/// A loopback URL is used over TCP, as it says, though the MySQL driver would switch to the
/// server's Unix socket on its own; asked for in the URL, the socket is used, and the report
/// says which it was.
#[tokio::test]
async fn mysql_uses_the_transport_its_url_names() {
    let server = common::start(StoreKind::Mysql, Durability::Durable);
    for (query, want) in [("", "TCP"), ("?prefer_socket=true", "Unix socket")] {
        let url = format!("{}{query}", server.url());
        let mut store =
            common::connect_url(StoreKind::Mysql, &url, Durability::Durable, None).await;
        let info = common::described(&mut store).await;
        assert_eq!(info.settings["transport"], want, "{url}");
        // The records over dbcompare's own connection, the driver suites over the driver.
        assert!(
            info.settings["client"].contains("own connection"),
            "{info:?}"
        );
        let mut store =
            common::connect_url_for_drivers(StoreKind::Mysql, &url, Durability::Durable, None)
                .await;
        let info = common::described(&mut store).await;
        assert_eq!(info.settings["transport"], want, "{url}");
        assert_eq!(info.settings["client"], "mysql_async");
        let e = store.find("micro-1").await.unwrap_err().to_string();
        assert!(e.contains("driver, pool or YCSB"), "{e}");
    }
}

/// PostgreSQL reports its transport too: TCP for a loopback URL.
#[tokio::test]
async fn postgres_reports_its_transport() {
    let server = common::start(StoreKind::Postgres, Durability::Durable);
    let mut store = common::connect(&server, Durability::Durable).await;
    let info = common::described(&mut store).await;
    assert_eq!(info.settings["transport"], "TCP");
    // The records over dbcompare's own connection, the driver suites over the driver.
    assert!(
        info.settings["client"].contains("own connection"),
        "{info:?}"
    );
    store.close().await.unwrap();
    let mut store = common::connect_for_drivers(&server, Durability::Durable).await;
    let info = common::described(&mut store).await;
    assert_eq!(info.settings["client"], "tokio-postgres");
    assert_eq!(info.settings["transport"], "TCP");
    // A connection for the driver suites does not serve the records, and says so.
    let e = store.find("micro-1").await.unwrap_err().to_string();
    assert!(e.contains("driver, pool or YCSB"), "{e}");
}

/// The MySQL size measure follows the data once it outgrows InnoDB's first pages.
#[tokio::test]
async fn mysql_size_grows_with_data() {
    let server = common::start(StoreKind::Mysql, Durability::Durable);
    let mut store = common::connect(&server, Durability::Durable).await;
    store.reset().await.unwrap();
    let initial = store.disk_usage().await.unwrap().bytes;
    for r in generate(3, &"tiny".parse().unwrap(), 1) {
        store.insert(&r).await.unwrap();
    }
    let fin = store.disk_usage().await.unwrap().bytes;
    assert!(fin > initial, "final size {fin} <= initial size {initial}");
}

async fn pool_suite(kind: StoreKind) -> dbcompare::report::model::StoreResult {
    let server = common::start(kind, Durability::Durable);
    let connect = common::clients(common::connector_for_drivers(&server, Durability::Durable));
    let plan = dbcompare::suite::pool::PoolPlan {
        seed: 5,
        repetitions: dbcompare::workload::levels::Repetitions::ONCE,
        concurrency: common::levels(&[4, 50]),
    };
    let mut result = StoreResult::new(kind.name());
    dbcompare::suite::pool::run(&connect, &plan, &mut result, &mut dbcompare::suite::Silent)
        .await
        .unwrap_or_else(|e| panic!("{kind}: {e:#}"));
    result
}

/// The pool suite on a server store: every test at each level, zero errors.
async fn pool_suite_runs_every_test(kind: StoreKind) {
    let result = pool_suite(kind).await;
    let names: Vec<(&str, u32)> = result
        .phases
        .iter()
        .map(|p| (p.size.name.as_str(), p.concurrency.get()))
        .collect();
    assert_eq!(
        names,
        [
            ("LargeResultSet", 1),
            ("ConcurrentQueries", 4),
            ("ConcurrentQueries", 50),
            ("ConnectionPool", 4),
            ("ConnectionPool", 50),
            ("BatchInsert", 1)
        ],
        "{kind}"
    );
    assert!(result.not_applicable.is_empty(), "{kind}");
    let info = result.info.as_ref().unwrap();
    assert!(
        info.search_path.starts_with("per test"),
        "the classic table's search path is not this suite's: {}",
        info.search_path
    );
    for p in &result.phases {
        assert_eq!(p.errors, 0, "{kind} {}", p.size.name);
        assert!(p.operation.is_some());
    }
    let ops = |name: &str| {
        result
            .phases
            .iter()
            .find(|p| p.size.name == name)
            .unwrap()
            .ops
    };
    assert_eq!(ops("ConnectionPool"), 2000);
    assert_eq!(ops("ConcurrentQueries"), 4, "one query per connection");
    assert_eq!(ops("BatchInsert"), 10_000);
    // Every report says the batch's operations are rows, its latency the whole call's.
    let notes = dbcompare::report::facts::batch_lines(std::slice::from_ref(&result));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("BatchInsert: its 10000 operations are the rows one call inserts"));
}

server_store_tests! {
    postgres {
        kind: StoreKind::Postgres,
        durability: [("synchronous_commit", "on", "off"), ("fsync", "on", "on")],
        driver_not_applicable: &[],
    }
    mysql {
        kind: StoreKind::Mysql,
        durability: [
            ("innodb_flush_log_at_trx_commit", "1", "2"),
            ("sync_binlog", "1", "1")
        ],
        driver_not_applicable: &[],
    }
    redis {
        kind: StoreKind::Redis,
        durability: [
            ("appendfsync", "always", "everysec"),
            ("appendonly", "yes", "yes")
        ],
        driver_not_applicable: &["EchoMixed5", "SelectLargeRaw", "SelectPreparedLargeRaw"],
    }
    redis_cluster {
        kind: StoreKind::RedisCluster,
        durability: [
            ("appendfsync", "always", "everysec"),
            ("appendonly", "yes", "yes")
        ],
        driver_not_applicable: &["EchoMixed5", "SelectLargeRaw", "SelectPreparedLargeRaw"],
    }
}

/// A store dbcompare starts a throw-away server of is tested here, against that server:
/// without its entry in `server_store_tests!` it would not be.
#[test]
fn every_store_with_a_local_server_has_its_tests() {
    for &kind in StoreKind::all() {
        assert_eq!(
            SERVER_TESTED.contains(&kind),
            kind.launcher().is_some(),
            "{kind}: a store dbcompare starts a throw-away server of has its tests in \
             server_store_tests!, and only such a store"
        );
    }
}

/// Sessions the server saw end without the client's goodbye (the connection just went
/// away), and client connections it holds besides the asking one.
async fn abandoned_and_connected(kind: StoreKind, url: &str) -> (u64, u64) {
    match kind {
        StoreKind::Mysql => {
            use mysql_async::prelude::Queryable;
            let mut conn = mysql_async::Conn::from_url(url).await.unwrap();
            let mut status = Vec::new();
            for name in ["Aborted_clients", "Threads_connected"] {
                let row: Option<(String, u64)> = conn
                    .query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
                    .await
                    .unwrap();
                status.push(row.unwrap().1);
            }
            conn.disconnect().await.unwrap();
            (status[0], status[1] - 1)
        }
        StoreKind::Postgres => {
            let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                .await
                .unwrap();
            let task = tokio::spawn(connection);
            let row = client
                .query_one(
                    "SELECT (SELECT sessions_abandoned FROM pg_stat_database \
                             WHERE datname = current_database()), \
                            (SELECT count(*) FROM pg_stat_activity \
                             WHERE backend_type = 'client backend' AND pid <> pg_backend_pid())",
                    &[],
                )
                .await
                .unwrap();
            drop(client);
            task.await.unwrap().unwrap();
            (row.get::<_, i64>(0) as u64, row.get::<_, i64>(1) as u64)
        }
        _ => unreachable!("{kind}: no count of abandoned sessions"),
    }
}

/// Every suite ends every connection with the driver's goodbye, the classic and driver
/// suites on the event loop the connection was opened on (connections on a client thread of
/// their own included), the pool suite also the 50 connections of Concurrent Queries and
/// its pool's: the server counts no session as abandoned.
async fn connections_end_with_a_goodbye(kind: StoreKind) {
    let server = common::start(kind, Durability::Relaxed);
    let url = server.url();
    let (before, _) = abandoned_and_connected(kind, &url).await;
    common::classic_micro(common::connector(&server, Durability::Relaxed), kind.name()).await;
    common::driver_tiny(
        common::connector_for_drivers(&server, Durability::Relaxed),
        kind.name(),
    )
    .await;
    let plan = dbcompare::suite::pool::PoolPlan {
        seed: 5,
        repetitions: dbcompare::workload::levels::Repetitions::ONCE,
        concurrency: common::levels(&[50]),
    };
    let sizes = dbcompare::workload::pool::PoolSizes {
        rows: 2_000,
        large_result: 660,
        batch_rows: 1_000,
    };
    let mut result = StoreResult::new(kind.name());
    dbcompare::suite::pool::run_sized(
        &common::clients(common::connector_for_drivers(&server, Durability::Relaxed)),
        &plan,
        sizes,
        &mut result,
        &mut Silent,
    )
    .await
    .unwrap_or_else(|e| panic!("{kind}: {e:#}"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let abandoned = loop {
        let (abandoned, connected) = abandoned_and_connected(kind, &url).await;
        if connected == 0 {
            break abandoned;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{kind}: {connected} connection(s) still open 10 s after the suites"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(
        abandoned - before,
        0,
        "{kind}: sessions that ended without a goodbye"
    );
}

#[tokio::test]
async fn mysql_connections_end_with_a_goodbye() {
    connections_end_with_a_goodbye(StoreKind::Mysql).await;
}

#[tokio::test]
async fn postgres_connections_end_with_a_goodbye() {
    connections_end_with_a_goodbye(StoreKind::Postgres).await;
}
