//! MongoDB, Aerospike and Couchbase: the same integration tests as every other store, run
//! against a real server whose URL is given (`DBCOMPARE_MONGODB_URL`, `DBCOMPARE_AEROSPIKE_URL`,
//! `DBCOMPARE_COUCHBASE_URL`, set when the tests are built and run). No such server can be
//! installed where dbcompare is developed: without a URL these tests are listed as ignored,
//! with the variable that runs them. That is not a pass.
//!
//! The MongoDB adapter also runs against two servers that speak MongoDB's wire protocol
//! (`provisioning/install.sh jongodb secantus`), so its protocol path is exercised for real
//! in CI: jongodb, in memory, with no on-disk size and no durability; and SecantusDB, on
//! WiredTiger (MongoDB's own storage engine), a single-node replica set with commits synced
//! to disk, so that session transactions, `dbStats` sizes and `explain` plans run too.
//! Neither is MongoDB, each is reported as what it is, and neither appears in results.

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use dbcompare::catalog::{Durability, StoreKind};
use dbcompare::report::model::StoreResult;
use dbcompare::store::{DriverStore, PoolStore, Store};
use dbcompare::suite::clients::Connect;
use dbcompare::suite::pool::{PoolPlan, run_sized};
use dbcompare::workload::driver::DriverOp;
use dbcompare::workload::pool::{self, PoolSizes};

/// The store's URL for one test: the server of `DBCOMPARE_<STORE>_URL`, with a database, set
/// or collection of the test's own, so that tests running at once never reset each other's
/// data on one shared server.
fn url(kind: StoreKind, test: &str) -> String {
    let raw =
        std::env::var(kind.url_env()).unwrap_or_else(|_| panic!("{} is not set", kind.url_env()));
    own_url(kind, &raw, test)
}

/// `raw` with the test's own namespace: MongoDB's database `<database>_<test>`, Aerospike's
/// set `dbcompare_<test>`, Couchbase's collection `dbcompare_<test>` (in the URL's scope).
fn own_url(kind: StoreKind, raw: &str, test: &str) -> String {
    let mut url = url::Url::parse(raw).unwrap_or_else(|e| panic!("{}: {e}", kind.url_env()));
    let own = format!("dbcompare_{test}");
    match kind {
        StoreKind::Mongodb => {
            let database = url.path().trim_matches('/');
            let database = if database.is_empty() {
                "dbcompare"
            } else {
                database
            };
            let path = format!("/{database}_{test}");
            url.set_path(&path);
        }
        StoreKind::Aerospike => {
            let others: Vec<(String, String)> = url
                .query_pairs()
                .filter(|(k, _)| k != "set")
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            url.query_pairs_mut()
                .clear()
                .extend_pairs(others)
                .append_pair("set", &own);
        }
        StoreKind::Couchbase => {
            let parts: Vec<String> = url
                .path()
                .split('/')
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect();
            let scope = parts.get(1).map_or("_default", String::as_str);
            let path = format!("/{}/{scope}/{own}", parts[0]);
            url.set_path(&path);
        }
        other => panic!("{other} has no real-server tests by URL"),
    }
    url.to_string()
}

#[test]
fn every_real_server_test_has_a_namespace_of_its_own() {
    assert_eq!(
        own_url(
            StoreKind::Mongodb,
            "mongodb://h:1/bench?replicaSet=rs0",
            "pool_suite"
        ),
        "mongodb://h:1/bench_pool_suite?replicaSet=rs0"
    );
    assert_eq!(
        own_url(StoreKind::Mongodb, "mongodb://h:1", "x"),
        "mongodb://h:1/dbcompare_x"
    );
    assert_eq!(
        own_url(
            StoreKind::Aerospike,
            "aerospike://u:p@h:3000/test?set=shared",
            "round_trip"
        ),
        "aerospike://u:p@h:3000/test?set=dbcompare_round_trip"
    );
    assert_eq!(
        own_url(StoreKind::Couchbase, "couchbase://u:p@h/bench", "driver"),
        "couchbase://u:p@h/bench/_default/dbcompare_driver"
    );
    assert_eq!(
        own_url(
            StoreKind::Couchbase,
            "couchbase://u:p@h/bench/s/c",
            "driver"
        ),
        "couchbase://u:p@h/bench/s/dbcompare_driver"
    );
}

async fn real_server_round_trip(kind: StoreKind) {
    let mut store =
        common::connect_url(kind, &url(kind, "round_trip"), Durability::Durable, None).await;
    // Aerospike and Couchbase writes are upserts by key; MongoDB has a unique index.
    common::round_trip(&mut store, kind.name(), kind == StoreKind::Mongodb).await;
}

async fn real_server_classic_micro(kind: StoreKind) {
    let connect = common::connector_url(kind, &url(kind, "classic"), Durability::Durable, None);
    let result = common::classic_micro(connect, kind.name()).await;
    common::size_grew(&result);
}

async fn real_server_durability(
    kind: StoreKind,
    durable: &[(&str, &str)],
    relaxed: &[(&str, &str)],
) {
    for (durability, expected) in [
        (Durability::Durable, durable),
        (Durability::Relaxed, relaxed),
    ] {
        let mut store = common::connect_url(kind, &url(kind, "durability"), durability, None).await;
        let info = common::described(&mut store).await;
        assert!(
            !info.version.contains("jongodb"),
            "a real server, not jongodb: {}",
            info.version
        );
        for (setting, want) in expected {
            assert_eq!(
                info.settings.get(*setting).map(String::as_str),
                Some(*want),
                "{setting}: {info:?}"
            );
        }
    }
}

/// The driver suite at a tiny scale; `not_applicable` lists the tests the store has no
/// operation for (`None`: it has none at all).
async fn driver_suite_on<C: Connect<Store: DriverStore> + Send + 'static>(
    connect: C,
    name: &str,
    not_applicable: Option<&[&str]>,
) -> StoreResult {
    let result = common::driver_tiny(connect, name).await;
    match not_applicable {
        Some(expected) => assert_eq!(result.not_applicable, expected, "{name}"),
        None => {
            assert!(result.phases.is_empty(), "{name}");
            return result;
        }
    }
    let concurrent = result
        .phases
        .iter()
        .find(|p| p.size.name == "PreparedQueryConcurrent16")
        .unwrap_or_else(|| panic!("{name}: no PreparedQueryConcurrent16"));
    assert_eq!(concurrent.concurrency, 16, "{name}");
    result
}

/// The pool suite at these sizes (Concurrent Queries and Connection Pool at 4 and 50 at
/// once): `applicable` says whether the store has it at all. Every test is measured with
/// zero errors (every answer is compared with the rows loaded).
async fn pool_suite_on<C: Connect<Store: PoolStore> + Send + 'static>(
    connect: C,
    name: &str,
    sizes: PoolSizes,
    applicable: bool,
) -> StoreResult {
    let plan = PoolPlan {
        seed: 5,
        repetitions: dbcompare::workload::levels::Repetitions::ONCE,
        concurrency: common::levels(&[4, 50]),
    };
    let mut result = StoreResult::new(name);
    run_sized(
        &common::clients(connect),
        &plan,
        sizes,
        &mut result,
        &mut dbcompare::suite::Silent,
    )
    .await
    .unwrap_or_else(|e| panic!("{name}: {e:#}"));
    if !applicable {
        assert!(result.phases.is_empty(), "{name}");
        assert_eq!(
            result.not_applicable.len(),
            pool::PoolTest::ALL.len(),
            "{name}"
        );
        return result;
    }
    assert!(
        result.not_applicable.is_empty(),
        "{name}: {:?}",
        result.not_applicable
    );
    let measured: Vec<(&str, u32, u64)> = result
        .phases
        .iter()
        .map(|p| (p.size.name.as_str(), p.concurrency.get(), p.ops))
        .collect();
    assert_eq!(
        measured,
        [
            ("LargeResultSet", 1, 1),
            ("ConcurrentQueries", 4, 4),
            ("ConcurrentQueries", 50, 50),
            ("ConnectionPool", 4, u64::from(pool::POOL_QUERIES)),
            ("ConnectionPool", 50, u64::from(pool::POOL_QUERIES)),
            ("BatchInsert", 1, u64::from(sizes.batch_rows))
        ],
        "{name}"
    );
    for p in &result.phases {
        assert_eq!(p.errors, 0, "{name} {}", p.size.name);
        assert!(p.operation.is_some(), "{name} {}", p.size.name);
    }
    result
}

/// The driver suite on the server at the store's URL.
async fn real_server_driver_suite(kind: StoreKind, not_applicable: Option<&[&str]>) {
    let connect =
        common::connector_url_for_drivers(kind, &url(kind, "driver"), Durability::Durable, None);
    driver_suite_on(connect, kind.name(), not_applicable).await;
}

/// The pool suite at the seed's sizes (100,000 rows) on the server at the store's URL.
async fn real_server_pool_suite(kind: StoreKind, applicable: bool) {
    let connect =
        common::connector_url_for_drivers(kind, &url(kind, "pool"), Durability::Durable, None);
    pool_suite_on(connect, kind.name(), PoolSizes::SEED, applicable).await;
}

/// YCSB's six workloads at a small size on the server at the store's URL.
async fn real_server_ycsb(kind: StoreKind, not_applicable: &[&str]) {
    let connect =
        common::connector_url_for_drivers(kind, &url(kind, "ycsb"), Durability::Durable, None);
    common::ycsb_small(connect, kind.name(), not_applicable).await;
}

/// The store's own counters (`Store::counters`, the cost of a phase on a server given by
/// URL) around 50 inserts: each named with its source, none lower after than before, and
/// every figure of `expected` among them.
async fn real_server_counters(kind: StoreKind, expected: &[&str]) {
    use dbcompare::counters::figure_of;
    let mut store =
        common::connect_url(kind, &url(kind, "counters"), Durability::Durable, None).await;
    store.reset().await.unwrap();
    let read = |e: anyhow::Error| panic!("{kind}: reading the counters: {e:#}");
    let before = store.counters().await.unwrap_or_else(read);
    for r in &dbcompare::workload::record::generate(5, &"micro".parse().unwrap(), 1)[..50] {
        store.insert(r).await.unwrap();
    }
    let after = store.counters().await.unwrap_or_else(read);
    println!("{kind}: the server's counters before {before:?}, after 50 inserts {after:?}");
    for (name, n) in &after {
        assert!(name.contains(" ("), "{kind}: {name} names no source");
        let was = before.get(name).copied().unwrap_or(0);
        assert!(*n >= was, "{kind}: {name} fell from {was} to {n}");
    }
    let mut expected = expected.to_vec();
    // Aerospike counts the blocks of a namespace stored on devices or in files.
    let info = common::described(&mut store).await;
    if kind == StoreKind::Aerospike
        && matches!(
            info.settings.get("storage-engine").map(String::as_str),
            Some("device" | "file")
        )
    {
        expected.push("storage blocks written");
    }
    for figure in expected {
        assert!(
            after.keys().any(|name| figure_of(name) == figure),
            "{kind}: no {figure} among {after:?}"
        );
    }
}

/// The real-server tests of the stores dbcompare starts no server of, one module per store,
/// and the list of those stores ([`REAL_SERVER_TESTED`]).
macro_rules! real_server_tests {
    ($(
        $module:ident {
            kind: $kind:expr,
            cfg: $cfg:ident,
            why: $why:literal,
            durable: $durable:expr,
            relaxed: $relaxed:expr,
            driver_not_applicable: $driver_na:expr,
            pool: $pool:expr,
            ycsb_not_applicable: $ycsb_na:expr,
            counters: $counters:expr $(,)?
        }
    )+) => {
        $(
            mod $module {
                use super::*;

                #[tokio::test]
                #[cfg_attr(not($cfg), ignore = $why)]
                async fn round_trip_compares_every_field() {
                    real_server_round_trip($kind).await;
                }

                #[tokio::test]
                #[cfg_attr(not($cfg), ignore = $why)]
                async fn classic_suite_at_micro_size() {
                    real_server_classic_micro($kind).await;
                }

                #[tokio::test]
                #[cfg_attr(not($cfg), ignore = $why)]
                async fn durability_settings_are_read_back() {
                    real_server_durability($kind, $durable, $relaxed).await;
                }

                #[tokio::test]
                #[cfg_attr(not($cfg), ignore = $why)]
                async fn driver_suite_at_a_tiny_scale() {
                    real_server_driver_suite($kind, $driver_na).await;
                }

                #[tokio::test]
                #[cfg_attr(not($cfg), ignore = $why)]
                async fn pool_suite() {
                    real_server_pool_suite($kind, $pool).await;
                }

                #[tokio::test]
                #[cfg_attr(not($cfg), ignore = $why)]
                async fn ycsb_core_workloads() {
                    real_server_ycsb($kind, $ycsb_na).await;
                }

                #[tokio::test]
                #[cfg_attr(not($cfg), ignore = $why)]
                async fn server_counters_name_their_source() {
                    real_server_counters($kind, $counters).await;
                }
            }
        )+

        /// The stores with real-server tests in this file.
        const REAL_SERVER_TESTED: &[StoreKind] = &[$($kind),+];

        /// The cfg each store's tests run under, in the order of [`REAL_SERVER_TESTED`].
        const REAL_SERVER_CFGS: &[&str] = &[$(stringify!($cfg)),+];
    };
}

real_server_tests! {
    mongodb {
        kind: StoreKind::Mongodb,
        cfg: mongodb_url,
        why: "NOT RUN: no MongoDB server here; set DBCOMPARE_MONGODB_URL=mongodb://host:27017/dbcompare",
        durable: &[("write_concern", "w:1, j:true")],
        relaxed: &[("write_concern", "w:1, j:false")],
        driver_not_applicable: Some(&[]),
        pool: true,
        ycsb_not_applicable: &[],
        // WiredTiger's block manager.
        counters: &["bytes written"],
    }
    aerospike {
        kind: StoreKind::Aerospike,
        cfg: aerospike_url,
        why: "NOT RUN: no Aerospike server here; set DBCOMPARE_AEROSPIKE_URL=aerospike://host:3000/namespace",
        durable: &[],
        relaxed: &[],
        driver_not_applicable: Some(&[
            "PreparedQueryRowParam",
            "EchoMixed5",
            "SelectLargeRaw",
            "SelectPreparedLargeRaw"
        ]),
        pool: true,
        // Aerospike keeps no key order: workload E's scans cannot run, nor E.
        ycsb_not_applicable: &["e INSERT", "e SCAN", "e"],
        // Blocks written where the namespace is on devices or in files; no bytes, CPU
        // time or syncs.
        counters: &[],
    }
    couchbase {
        kind: StoreKind::Couchbase,
        cfg: couchbase_url,
        why: "NOT RUN: no Couchbase server here; set DBCOMPARE_COUCHBASE_URL=couchbase://user:pass@host/bucket",
        durable: &[("durability_level", "majorityAndPersistToActive")],
        relaxed: &[("durability_level", "none")],
        driver_not_applicable: Some(&["PreparedQueryRowParam", "EchoMixed5"]),
        pool: true,
        ycsb_not_applicable: &[],
        // The Data Service's bytes (7.0 on); CPU time from 7.2.4 on.
        counters: &["bytes written", "bytes read"],
    }
}

/// A store dbcompare starts no server of runs only by URL: without tests here it would
/// never be tested against a real server.
#[test]
fn every_store_without_a_local_server_has_real_server_tests() {
    for &kind in StoreKind::all() {
        let url_only = kind.server().is_some_and(|s| s.launcher.is_none());
        assert_eq!(
            REAL_SERVER_TESTED.contains(&kind),
            url_only,
            "{kind}: a store dbcompare starts no server of has its real-server tests in \
             real_server_tests! (and its cfg in build.rs), and only such a store"
        );
    }
}

/// The stores `build.rs` sets a `cfg(<store>_url)` for: the names in its `URL_ONLY`.
fn build_rs_url_only() -> Vec<String> {
    let build = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("build.rs"))
        .unwrap();
    let (_, list) = build
        .split_once("const URL_ONLY")
        .expect("build.rs lists the URL-only stores in URL_ONLY");
    let list = &list[..list.find(';').expect("URL_ONLY ends with ';'")];
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// `build.rs` sets the cfg of every store dbcompare starts no server of, and of no other
/// store; each store's tests here run under its own cfg.
#[test]
fn build_rs_sets_the_cfg_of_every_store_without_a_local_server() {
    let mut listed = build_rs_url_only();
    listed.sort();
    let mut url_only: Vec<&str> = StoreKind::all()
        .iter()
        .filter(|kind| kind.server().is_some_and(|s| s.launcher.is_none()))
        .map(|kind| kind.name())
        .collect();
    url_only.sort();
    assert_eq!(
        listed, url_only,
        "build.rs's URL_ONLY names the stores dbcompare starts no server of (launcher: None \
         in src/catalog.rs)"
    );
    for (kind, cfg) in REAL_SERVER_TESTED.iter().zip(REAL_SERVER_CFGS) {
        assert_eq!(
            *cfg,
            format!("{}_url", kind.name()),
            "{kind}: its tests run under cfg({}_url), which build.rs sets",
            kind.name()
        );
    }
}

/// A running jongodb, stopped on drop.
struct Jongodb {
    child: Child,
    url: String,
}

impl Drop for Jongodb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn jongodb_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("DBCOMPARE_JONGODB") {
        return path.into();
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(".tools/jongodb/node_modules/@jongodb/memory-server-bin-linux-x64-gnu/bin/jongodb");
    assert!(
        path.is_file(),
        "jongodb is not installed: run 'provisioning/install.sh jongodb' (these tests do not skip)"
    );
    path
}

/// Starts jongodb on a free port; each test uses its own database.
fn jongodb(database: &str) -> Jongodb {
    let port = dbcompare::server::free_port().unwrap();
    let mut child = Command::new(jongodb_binary())
        .arg("--host=127.0.0.1")
        .arg(format!("--port={port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting jongodb");
    let stdout = child.stdout.take().unwrap();
    let ready = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|line| line.starts_with("JONGODB_URI="));
    assert!(ready, "jongodb exited before it answered");
    Jongodb {
        child,
        url: format!("mongodb://127.0.0.1:{port}/{database}"),
    }
}

/// A TLS front (socat, with a certificate made for it) for a plain server on `port`,
/// stopped on drop: MongoDB's driver speaks TLS to it, as to a server started with
/// `--tlsMode requireTLS`.
struct TlsFront {
    child: Child,
    port: u16,
    ca: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tls_front(backend: u16) -> TlsFront {
    let dir = tempfile::tempdir().unwrap();
    let made = dbcompare::server::tls::make_certificates().unwrap();
    let (ca, cert, key) = (
        dir.path().join("ca.pem"),
        dir.path().join("server.pem"),
        dir.path().join("server.key"),
    );
    std::fs::write(&ca, &made.ca).unwrap();
    std::fs::write(&cert, &made.cert).unwrap();
    std::fs::write(&key, &made.key).unwrap();
    let port = dbcompare::server::free_port().unwrap();
    let child = Command::new("socat")
        .arg(format!(
            "OPENSSL-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork,cert={},key={},verify=0",
            cert.display(),
            key.display()
        ))
        .arg(format!("TCP:127.0.0.1:{backend}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect(
            "socat is not installed: run 'provisioning/install.sh socat' (these tests do not skip)",
        );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "socat did not listen");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    TlsFront {
        child,
        port,
        ca,
        _dir: dir,
    }
}

/// MongoDB over TLS (`tls=true&tlsCAFile=`): the classic suite runs with the certificate
/// verified and the report says so; a CA that did not sign the certificate is refused.
#[tokio::test]
async fn mongodb_over_tls_verifies_the_certificate() {
    let server = jongodb("tls");
    let backend: u16 = server
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let front = tls_front(backend);
    let url = format!(
        "mongodb://127.0.0.1:{}/tls?tls=true&tlsCAFile={}",
        front.port,
        front.ca.display()
    );
    let mut store = common::connect_url(StoreKind::Mongodb, &url, Durability::Durable, None).await;
    store.reset().await.unwrap();
    let tls = store.describe().await.unwrap().settings["tls"].clone();
    assert!(tls.contains("certificate and host name verified"), "{tls}");
    drop(store);
    let connect = common::connector_url(StoreKind::Mongodb, &url, Durability::Durable, None);
    common::classic_micro(connect, "mongodb on jongodb over TLS").await;

    let other = tempfile::tempdir().unwrap();
    let other_ca = other.path().join("ca.pem");
    std::fs::write(
        &other_ca,
        dbcompare::server::tls::make_certificates().unwrap().ca,
    )
    .unwrap();
    let url = format!(
        "mongodb://127.0.0.1:{}/tls?tls=true&tlsCAFile={}",
        front.port,
        other_ca.display()
    );
    let spec = dbcompare::store::ConnectSpec {
        url: Some(dbcompare::store::url::StoreUrl::parse(StoreKind::Mongodb, &url).unwrap()),
        data_dir: None,
        durability: Durability::Durable,
        connect_timeout: std::time::Duration::from_secs(5),
        options: Default::default(),
    };
    let e = match StoreKind::Mongodb.connect(&spec).await {
        Ok(_) => panic!("a certificate another CA signed was accepted"),
        Err(e) => format!("{e:#}"),
    };
    assert!(e.contains("invalid peer certificate"), "{e}");
}

/// `dbcompare check --store mongodb` on the server at `url`: its exit code and output.
fn check_mongodb(url: &str) -> (Option<i32>, String) {
    let out = assert_cmd::Command::cargo_bin("dbcompare")
        .unwrap()
        .args(["check", "--store", "mongodb", "--url"])
        .arg(format!("mongodb={url}"))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The pool suite on the MongoDB-compatible server at `url`, at 2,000 rows (the test
/// servers scan or write through slowly; the seed's 100,000 are for a real server): every
/// test measured with zero errors.
async fn mongodb_pool_suite(url: &str, name: &str) -> StoreResult {
    let connect =
        common::connector_url_for_drivers(StoreKind::Mongodb, url, Durability::Durable, None);
    let sizes = PoolSizes {
        rows: 2_000,
        large_result: 660,
        batch_rows: 1_000,
    };
    pool_suite_on(connect, name, sizes, true).await
}

/// A running SecantusDB with its data in a temporary directory, stopped on drop.
struct Secantus {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Secantus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn secantus_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("DBCOMPARE_SECANTUS") {
        return path.into();
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".tools/secantus/bin/secantusd-py");
    assert!(
        path.is_file(),
        "SecantusDB is not installed: run 'provisioning/install.sh secantus' (these tests do not skip)"
    );
    path
}

/// Starts SecantusDB on a free port (commits synced to disk) and waits until it answers.
fn secantus(database: &str) -> Secantus {
    let dir = tempfile::Builder::new()
        .prefix("dbcompare-secantus-")
        .tempdir()
        .unwrap();
    let port = dbcompare::server::free_port().unwrap();
    let mut child = Command::new(secantus_binary())
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .arg("--storage-path")
        .arg(dir.path().join("data"))
        .args(["--sync-on-commit", "--log-level", "WARNING"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting SecantusDB");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "SecantusDB exited before it answered"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "SecantusDB did not answer within 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Secantus {
        child,
        url: format!("mongodb://127.0.0.1:{port}/{database}"),
        _dir: dir,
    }
}

mod mongodb_adapter_on_secantusdb {
    use super::*;
    use dbcompare::catalog::Transactions;
    use dbcompare::report::model::PhaseKind;
    use dbcompare::suite::Silent;
    use dbcompare::suite::classic::{self, ClassicPlan, Workload};

    /// Named for what it is, never as MongoDB: `SecantusDB 0.7.0b3 (MongoDB wire protocol,
    /// reports 8.2.11)`.
    fn is_secantus(version: &str) {
        assert!(
            version.starts_with("SecantusDB ")
                && version.contains("(MongoDB wire protocol, reports "),
            "{version}"
        );
    }

    #[tokio::test]
    async fn ycsb_core_workloads() {
        let server = secantus("ycsb");
        let connect = common::connector_url_for_drivers(
            StoreKind::Mongodb,
            &server.url,
            Durability::Durable,
            None,
        );
        common::ycsb_small(connect, "mongodb on SecantusDB", &[]).await;
    }

    /// The classic suite at micro and tiny: session transactions (SecantusDB is a
    /// single-node replica set), sizes from dbStats, the search through its unique index.
    #[tokio::test]
    async fn classic_suite_at_micro_and_tiny() {
        let server = secantus("classic");
        let connect =
            common::connector_url(StoreKind::Mongodb, &server.url, Durability::Durable, None);
        let plan = ClassicPlan::once(
            vec!["micro".parse().unwrap(), "tiny".parse().unwrap()],
            40,
            11,
        );
        let mut result = StoreResult::new("mongodb on SecantusDB");
        classic::run(
            &common::clients(connect),
            &Workload::generate(&plan),
            &mut result,
            &mut Silent,
        )
        .await
        .unwrap_or_else(|e| panic!("{e:#}"));
        for (size, records) in [("micro", 100), ("tiny", 1_000)] {
            let insert = result.phase(PhaseKind::Insert, size).unwrap();
            let search = result.phase(PhaseKind::Search, size).unwrap();
            assert_eq!((insert.ops, insert.errors), (records, 0), "{size}");
            assert_eq!((search.ops, search.errors), (40 * records, 0), "{size}");
        }
        common::size_grew(&result);
        let info = result.info.unwrap();
        is_secantus(&info.version);
        assert!(
            info.write_path.starts_with("session transaction"),
            "{}",
            info.write_path
        );
        assert!(
            info.search_path
                .contains("IXSCAN dbcompare_records_unique_id"),
            "{}",
            info.search_path
        );
        assert_eq!(info.settings["storage_engine"], "wiredTiger");
        assert!(
            info.settings["topology"].starts_with("replica set"),
            "{info:?}"
        );
    }

    #[tokio::test]
    async fn durability_is_read_back() {
        let server = secantus("durability");
        for (durability, journal) in [
            (Durability::Durable, "true"),
            (Durability::Relaxed, "false"),
        ] {
            let mut store =
                common::connect_url(StoreKind::Mongodb, &server.url, durability, None).await;
            let info = common::described(&mut store).await;
            common::settings_are(
                &info,
                durability,
                &[("write_concern", &format!("w:1, j:{journal}"))],
            );
            is_secantus(&info.version);
        }
    }

    #[tokio::test]
    async fn round_trip_in_session_transactions() {
        let server = secantus("round_trip");
        let mut store = common::connect_with(
            StoreKind::Mongodb,
            &server.url,
            Durability::Durable,
            None,
            Transactions::Always,
        )
        .await;
        common::round_trip(&mut store, "mongodb on SecantusDB", true).await;
    }

    /// Every driver test has an operation on a MongoDB server, and every one runs.
    #[tokio::test]
    async fn driver_suite() {
        let server = secantus("driver");
        let connect = common::connector_url_for_drivers(
            StoreKind::Mongodb,
            &server.url,
            Durability::Durable,
            None,
        );
        driver_suite_on(connect, "mongodb on SecantusDB", Some(&[])).await;
    }

    /// `dbcompare check` on it: ready, named for what it is, inserts in transactions.
    #[test]
    fn check_says_what_answered() {
        let (code, stdout) = check_mongodb(&secantus("check").url);
        assert_eq!(code, Some(0), "{stdout}");
        assert!(
            stdout.contains("yes: SecantusDB ") && stdout.contains("reset ok, size ok"),
            "{stdout}"
        );
        assert!(
            stdout.contains("mongodb: session transaction: insert_one"),
            "{stdout}"
        );
    }

    /// The pool suite at reduced sizes, the Batch Insert in a session transaction.
    #[tokio::test]
    async fn pool_suite() {
        let server = secantus("pool");
        let result = mongodb_pool_suite(&server.url, "mongodb on SecantusDB").await;
        let batch = result.phases.last().and_then(|p| p.operation.clone());
        assert_eq!(
            batch.as_deref(),
            Some("insert_many of the whole batch, ordered, in one session transaction")
        );
    }
}

mod mongodb_adapter_on_jongodb {
    use ::mongodb::bson::spec::BinarySubtype;
    use ::mongodb::bson::{Binary, Document, doc};

    use super::*;

    #[tokio::test]
    async fn ycsb_core_workloads() {
        let server = jongodb("ycsb");
        let connect = common::connector_url_for_drivers(
            StoreKind::Mongodb,
            &server.url,
            Durability::Durable,
            None,
        );
        common::ycsb_small(connect, "mongodb on jongodb", &[]).await;
    }

    #[tokio::test]
    async fn round_trip_compares_every_field() {
        let server = jongodb("round_trip");
        let mut store =
            common::connect_url(StoreKind::Mongodb, &server.url, Durability::Durable, None).await;
        common::round_trip(&mut store, "mongodb on jongodb", true).await;
    }

    #[tokio::test]
    async fn classic_suite_at_micro_size() {
        let server = jongodb("classic");
        let connect =
            common::connector_url(StoreKind::Mongodb, &server.url, Durability::Durable, None);
        let result = common::classic_micro(connect, "mongodb on jongodb").await;
        // jongodb keeps nothing on disk and has no dbStats: the size is reported unknown,
        // with the reason, rather than made up.
        assert_eq!(result.initial_size_bytes, None);
        let why = result.size_error.unwrap_or_default();
        assert!(why.contains("dbStats"), "{why}");
    }

    #[tokio::test]
    async fn write_concern_and_server_are_read_back() {
        for durability in [Durability::Durable, Durability::Relaxed] {
            let server = jongodb("describe");
            let mut store =
                common::connect_url(StoreKind::Mongodb, &server.url, durability, None).await;
            let info = common::described(&mut store).await;
            let j = if durability == Durability::Durable {
                "true"
            } else {
                "false"
            };
            common::settings_are(
                &info,
                durability,
                &[("write_concern", &format!("w:1, j:{j}"))],
            );
            assert!(
                info.version.starts_with("jongodb"),
                "never reported as MongoDB: {}",
                info.version
            );
            assert!(
                info.write_path.contains("single-document atomic write"),
                "{}",
                info.write_path
            );
        }
    }

    /// jongodb runs session transactions although it reports a standalone server: the
    /// transaction path of the adapter runs for real there.
    #[tokio::test]
    async fn inserts_in_session_transactions() {
        let server = jongodb("transactions");
        let mut store = common::connect_with(
            StoreKind::Mongodb,
            &server.url,
            Durability::Durable,
            None,
            dbcompare::catalog::Transactions::Always,
        )
        .await;
        let info = common::described(&mut store).await;
        assert!(
            info.write_path.starts_with("session transaction"),
            "{}",
            info.write_path
        );
        common::round_trip(&mut store, "mongodb on jongodb, transactions", true).await;
    }

    /// The driver suite's native equivalents (ping, find_one of fixed documents, aggregate
    /// echoes, raw BSON): every test runs, every answer checked.
    #[tokio::test]
    async fn driver_suite() {
        let server = jongodb("driver");
        let connect = common::connector_url_for_drivers(
            StoreKind::Mongodb,
            &server.url,
            Durability::Durable,
            None,
        );
        let result = driver_suite_on(connect, "mongodb on jongodb", Some(&[])).await;
        let operation = |test: DriverOp| {
            let phase = result
                .phases
                .iter()
                .find(|p| p.size.name == test.name())
                .unwrap_or_else(|| panic!("{} did not run", test.name()));
            assert!(phase.ops > 0, "{}", test.name());
            phase.operation.clone().unwrap_or_default()
        };
        assert!(operation(DriverOp::PreparedQueryRowParam).contains("<iteration>"));
        assert!(operation(DriverOp::EchoMixed5).contains("DateTime"));
        for raw in [DriverOp::SelectLargeRaw, DriverOp::SelectPreparedLargeRaw] {
            assert!(operation(raw).contains("raw BSON"));
        }
    }

    /// The echoes answer each iteration with its own values, and the raw read checks what
    /// the server holds: a large binary shortened by another client fails it.
    #[tokio::test]
    async fn driver_answers_are_checked() {
        let server = jongodb("driver_checked");
        let mut store = common::connect_url_for_drivers(
            StoreKind::Mongodb,
            &server.url,
            Durability::Durable,
            None,
        )
        .await;
        store.reset().await.unwrap();
        for i in [0, 1, 2, 12_345] {
            store
                .driver(DriverOp::PreparedQueryRowParam, i)
                .await
                .unwrap();
            store.driver(DriverOp::EchoMixed5, i).await.unwrap();
        }
        store.driver(DriverOp::SelectLargeRaw, 0).await.unwrap();
        // Another client shortens the large binary: the raw read must see it.
        let short = Binary {
            subtype: BinarySubtype::Generic,
            bytes: b"AAA".to_vec(),
        };
        ::mongodb::Client::with_uri_str(&server.url)
            .await
            .unwrap()
            .database("driver_checked")
            .collection::<Document>("dbcompare_driver")
            .update_one(doc! { "_id": "large" }, doc! { "$set": { "b": short } })
            .await
            .unwrap();
        let e = store.driver(DriverOp::SelectLargeRaw, 0).await.unwrap_err();
        assert!(format!("{e:#}").contains("got 3 bytes"), "{e:#}");
    }

    /// The pool suite, every test measured, every answer compared with the rows loaded. At
    /// 2,000 documents: jongodb scans every document on each insert and lookup, so the
    /// seed's 100,000 would take minutes (the real-server test runs the seed's sizes).
    #[tokio::test]
    async fn pool_suite() {
        let server = jongodb("pool");
        let result = mongodb_pool_suite(&server.url, "mongodb on jongodb").await;
        let batch = result.phases.last().and_then(|p| p.operation.clone());
        assert_eq!(
            batch.as_deref(),
            Some("insert_many of the whole batch, ordered (no transaction)")
        );
        let large = result.phases[0].operation.clone().unwrap_or_default();
        assert!(large.contains("Decimal128"), "{large}");
    }

    /// The pool suite's store methods one by one, with the batch in a session transaction.
    #[tokio::test]
    async fn pool_methods_with_transactions() {
        let server = jongodb("pool_methods");
        let mut store = common::connect_with_for_drivers(
            StoreKind::Mongodb,
            &server.url,
            Durability::Durable,
            None,
            dbcompare::catalog::Transactions::Always,
        )
        .await;
        assert_eq!(
            store.pool_operation(pool::PoolTest::BatchInsert),
            Some("insert_many of the whole batch, ordered, in one session transaction")
        );
        // Loaded out of order: the Large Result Set must sort.
        let mut rows = pool::rows(9, 300, 1);
        rows.reverse();
        store.pool_load(&rows).await.unwrap();
        rows.reverse();
        let large = store.pool_large(120).await.unwrap();
        assert_eq!(large, rows[..120]);
        assert_eq!(store.pool_point(7).await.unwrap().as_ref(), Some(&rows[6]));
        assert_eq!(store.pool_point(301).await.unwrap(), None);
        let with_no_data = rows.iter().find(|r| r.data.is_none()).unwrap();
        assert_eq!(
            store.pool_point(with_no_data.id).await.unwrap().as_ref(),
            Some(with_no_data)
        );

        assert_eq!(store.pool_batch_count().await.unwrap(), 0);
        let batch = pool::rows(10, 1_000, 1);
        store.pool_batch_insert(&batch).await.unwrap();
        assert_eq!(store.pool_batch_count().await.unwrap(), 1_000);
        // _id is the row's id: the same rows again are refused, and nothing is added.
        assert!(store.pool_batch_insert(&batch[..10]).await.is_err());
        assert_eq!(store.pool_batch_count().await.unwrap(), 1_000);
        store.pool_batch_reset().await.unwrap();
        assert_eq!(store.pool_batch_count().await.unwrap(), 0);
        store.pool_batch_insert(&batch).await.unwrap();
        assert_eq!(store.pool_batch_count().await.unwrap(), 1_000);
    }

    /// jongodb keeps nothing on disk: `dbcompare check` says that no size can be measured.
    #[test]
    fn check_finds_that_no_size_can_be_measured() {
        let (code, stdout) = check_mongodb(&jongodb("check").url);
        assert_eq!(code, Some(1), "{stdout}");
        assert!(stdout.contains("reset ok, size refused"), "{stdout}");
        assert!(
            stdout.contains("problem: measuring the on-disk size"),
            "{stdout}"
        );
        assert!(stdout.contains("yes: jongodb (in-memory"), "{stdout}");
    }

    #[tokio::test]
    async fn a_missing_document_is_none() {
        let server = jongodb("missing");
        let mut store =
            common::connect_url(StoreKind::Mongodb, &server.url, Durability::Durable, None).await;
        store.reset().await.unwrap();
        assert_eq!(store.find("micro-1").await.unwrap(), None);
    }
}
