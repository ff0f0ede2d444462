//! Shared parts of the integration tests: throw-away servers through `src/server/`, stores
//! from URLs, and the checks every store goes through (the same shape for every store).

#![allow(dead_code)]

use std::num::NonZeroU32;
use std::time::Duration;

use dbcompare::catalog::{Durability, StoreKind, StoreOptions, Transactions};
use dbcompare::report::model::{PhaseKind, StoreInfo, StoreResult};
use dbcompare::server::{self, LocalServer};
use dbcompare::store::registry::{AnyDriverStore, AnyStore};
use dbcompare::store::url::StoreUrl;
use dbcompare::store::{ConnectSpec, DriverStore, Store};
use dbcompare::suite::Silent;
use dbcompare::suite::classic::{self, ClassicPlan, Workload};
use dbcompare::suite::clients::{Clients, Connect};
use dbcompare::workload::levels::{Concurrency, Repetitions};
use dbcompare::workload::record::generate;

/// Starts dbcompare with `args` in the background and reads its standard output until a
/// line starts with `trigger`: the child, and the rest of its output.
pub fn spawn_until(
    args: impl IntoIterator<Item = impl AsRef<std::ffi::OsStr>>,
    trigger: &str,
) -> (
    std::process::Child,
    std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
) {
    spawn_until_in(&std::env::temp_dir(), args, trigger)
}

/// [`spawn_until`] with `tmp` as the run's temporary directory, where its throw-away
/// servers' directories are made: apart from those of other tests running at once.
pub fn spawn_until_in(
    tmp: &std::path::Path,
    args: impl IntoIterator<Item = impl AsRef<std::ffi::OsStr>>,
    trigger: &str,
) -> (
    std::process::Child,
    std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbcompare"))
        .args(args)
        .env("TMPDIR", tmp)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|l| l.is_ok_and(|l| l.starts_with(trigger))),
        "the run printed a line starting with '{trigger}'"
    );
    (child, lines)
}

/// A validator of the published schema of run.json (schema/run.schema.json).
pub fn schema_validator() -> jsonschema::Validator {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/schema/run.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// Pids of running processes working in `dir` (Redis rewrites its command line, but it
/// works in its data directory).
pub fn processes_in(dir: &std::path::Path) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let cwd = std::fs::read_link(e.path().join("cwd")).ok()?;
            (cwd.starts_with(dir) && server::process_alive(pid)).then_some(pid)
        })
        .collect()
}

/// The throw-away directories of `kind` stores in the system's temporary directory.
pub fn dirs_of(kind: &str) -> Vec<std::path::PathBuf> {
    dirs_in(&std::env::temp_dir(), kind)
}

/// The throw-away directories of `kind` stores in `base`.
pub fn dirs_in(base: &std::path::Path, kind: &str) -> Vec<std::path::PathBuf> {
    let prefix = format!("dbcompare-{kind}-");
    std::fs::read_dir(base)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&prefix)
        })
        .collect()
}

/// Starts a throw-away server. A missing server is a failure, never a skip: CI installs
/// every server these tests need (provisioning/install.sh).
pub fn start(kind: StoreKind, durability: Durability) -> LocalServer {
    let installation = server::find(kind).unwrap_or_else(|| {
        panic!("no {kind} server is installed: run 'provisioning/install.sh {kind}' (these tests do not skip)")
    });
    server::start(
        kind,
        &installation,
        durability,
        &server::DataDirs::temporary(),
        server::Serve::default(),
    )
    .unwrap_or_else(|e| panic!("starting a local {kind} server: {e:#}"))
}

/// Starts a throw-away server that serves TLS only, with a certificate made for it.
pub fn start_tls(kind: StoreKind) -> LocalServer {
    let installation = server::find(kind).unwrap_or_else(|| {
        panic!("no {kind} server is installed: run 'provisioning/install.sh {kind}' (these tests do not skip)")
    });
    server::start(
        kind,
        &installation,
        Durability::Relaxed,
        &server::DataDirs::temporary(),
        server::Serve {
            tls: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("starting a local {kind} server with TLS: {e:#}"))
}

/// Connects to `url` the way the runner does.
pub async fn connect_url(
    kind: StoreKind,
    url: &str,
    durability: Durability,
    data_dir: Option<&std::path::Path>,
) -> AnyStore {
    connect_with(kind, url, durability, data_dir, Transactions::Auto).await
}

/// Connects to `url` with a MongoDB transaction mode.
pub async fn connect_with(
    kind: StoreKind,
    url: &str,
    durability: Durability,
    data_dir: Option<&std::path::Path>,
    mongodb_transactions: Transactions,
) -> AnyStore {
    let spec = spec(kind, url, durability, data_dir, mongodb_transactions);
    kind.connect(&spec)
        .await
        .unwrap_or_else(|e| panic!("connecting to {kind} at {}: {e:#}", masked(&spec)))
}

/// Connects to `url` the way the runner does for the driver, pool and YCSB suites.
pub async fn connect_url_for_drivers(
    kind: StoreKind,
    url: &str,
    durability: Durability,
    data_dir: Option<&std::path::Path>,
) -> AnyDriverStore {
    connect_with_for_drivers(kind, url, durability, data_dir, Transactions::Auto).await
}

/// [`connect_with`] for the driver, pool and YCSB suites.
pub async fn connect_with_for_drivers(
    kind: StoreKind,
    url: &str,
    durability: Durability,
    data_dir: Option<&std::path::Path>,
    mongodb_transactions: Transactions,
) -> AnyDriverStore {
    let spec = spec(kind, url, durability, data_dir, mongodb_transactions);
    kind.connect_for_drivers(&spec)
        .await
        .unwrap_or_else(|e| panic!("connecting to {kind} at {}: {e:#}", masked(&spec)))
}

/// What a connection to `url` is opened with.
fn spec(
    kind: StoreKind,
    url: &str,
    durability: Durability,
    data_dir: Option<&std::path::Path>,
    mongodb_transactions: Transactions,
) -> ConnectSpec {
    let url = StoreUrl::parse(kind, url).unwrap_or_else(|e| panic!("{e}"));
    ConnectSpec {
        url: Some(url),
        data_dir: data_dir.map(std::path::Path::to_path_buf),
        durability,
        connect_timeout: Duration::from_secs(10),
        options: StoreOptions {
            mongodb_transactions,
            ..Default::default()
        },
    }
}

/// The URL of `spec`, masked.
fn masked(spec: &ConnectSpec) -> String {
    spec.url
        .as_ref()
        .map(StoreUrl::masked)
        .unwrap_or_default()
        .to_string()
}

/// Connects to a local server the way the runner does.
pub async fn connect(server: &LocalServer, durability: Durability) -> AnyStore {
    let data_dir = server.data_dir();
    connect_url(server.kind(), &server.url(), durability, Some(&data_dir)).await
}

pub fn micro_plan() -> ClassicPlan {
    ClassicPlan::once(vec!["micro".parse().unwrap()], 40, 11)
}

/// micro, with the search phase also on two connections at once.
pub fn micro_plan_concurrent() -> ClassicPlan {
    ClassicPlan {
        concurrency: levels(&[1, 2]),
        ..micro_plan()
    }
}

/// Reset, insert, find with every field compared, a missing key, a duplicate unique_id
/// refused (where the store has unique indexes), reset empties.
pub async fn round_trip(store: &mut impl Store, name: &str, duplicates_refused: bool) {
    store.reset().await.unwrap();
    let records = generate(5, &"micro".parse().unwrap(), 1);
    for r in &records[..50] {
        store
            .insert(r)
            .await
            .unwrap_or_else(|e| panic!("{name}: inserting {}: {e:#}", r.unique_id));
    }
    for r in &records[..50] {
        let found = store.find(&r.unique_id).await.unwrap();
        assert_eq!(found.as_ref(), Some(r), "{name}: {}", r.unique_id);
    }
    assert_eq!(store.find(&records[50].unique_id).await.unwrap(), None);
    assert_eq!(store.find("micro-999999").await.unwrap(), None);
    if duplicates_refused {
        assert!(
            store.insert(&records[0]).await.is_err(),
            "{name}: a duplicate unique_id was accepted"
        );
    }
    store.reset().await.unwrap();
    assert_eq!(
        store.find(&records[0].unique_id).await.unwrap(),
        None,
        "{name}: reset left records"
    );
}

/// Opens connections to `url` the way the runner does, on whichever client thread asks.
pub fn connector_url(
    kind: StoreKind,
    url: &str,
    durability: Durability,
    data_dir: Option<&std::path::Path>,
) -> impl Connect<Store = AnyStore> + Send + 'static + use<> {
    let (url, data_dir) = (url.to_string(), data_dir.map(std::path::Path::to_path_buf));
    move || {
        let (url, data_dir) = (url.clone(), data_dir.clone());
        async move { Ok(connect_url(kind, &url, durability, data_dir.as_deref()).await) }
    }
}

/// Connects to a local server the way the runner does for the driver, pool and YCSB
/// suites.
pub async fn connect_for_drivers(server: &LocalServer, durability: Durability) -> AnyDriverStore {
    let data_dir = server.data_dir();
    connect_url_for_drivers(server.kind(), &server.url(), durability, Some(&data_dir)).await
}

/// [`connector_url`] for the driver, pool and YCSB suites.
pub fn connector_url_for_drivers(
    kind: StoreKind,
    url: &str,
    durability: Durability,
    data_dir: Option<&std::path::Path>,
) -> impl Connect<Store = AnyDriverStore> + Send + 'static + use<> {
    let (url, data_dir) = (url.to_string(), data_dir.map(std::path::Path::to_path_buf));
    move || {
        let (url, data_dir) = (url.clone(), data_dir.clone());
        async move { Ok(connect_url_for_drivers(kind, &url, durability, data_dir.as_deref()).await) }
    }
}

/// [`connector`] for the driver, pool and YCSB suites.
pub fn connector_for_drivers(
    server: &LocalServer,
    durability: Durability,
) -> impl Connect<Store = AnyDriverStore> + Send + 'static + use<> {
    connector_url_for_drivers(
        server.kind(),
        &server.url(),
        durability,
        Some(&server.data_dir()),
    )
}

/// [`connector_url`] for a local server.
pub fn connector(
    server: &LocalServer,
    durability: Durability,
) -> impl Connect<Store = AnyStore> + Send + 'static + use<> {
    connector_url(
        server.kind(),
        &server.url(),
        durability,
        Some(&server.data_dir()),
    )
}

/// Client threads for a suite in a test: two, so that a concurrent phase has a connection
/// on a thread of its own.
pub fn clients<C: Connect + Send + 'static>(connect: C) -> Clients<C> {
    Clients::start(connect, 2).unwrap()
}

/// The classic suite at micro size: zero errors, every operation counted.
pub async fn classic_micro<C: Connect + Send + 'static>(connect: C, name: &str) -> StoreResult {
    let mut result = StoreResult::new(name);
    classic::run(
        &clients(connect),
        &Workload::generate(&micro_plan_concurrent()),
        &mut result,
        &mut Silent,
    )
    .await
    .unwrap_or_else(|e| panic!("{name}: {e:#}"));
    let insert = result.phase(PhaseKind::Insert, "micro").unwrap();
    let search = result.phase(PhaseKind::Search, "micro").unwrap();
    assert_eq!((insert.ops, insert.errors), (100, 0));
    assert_eq!((search.ops, search.errors), (4000, 0));
    let two = result
        .phase_at(PhaseKind::Search, "micro", Concurrency::new(2).unwrap())
        .unwrap();
    assert_eq!(
        (two.ops, two.errors),
        (4000, 0),
        "{name}: two connections at once"
    );
    result
}

/// The final size is above the initial one.
pub fn size_grew(result: &StoreResult) {
    let (initial, fin) = (
        result
            .initial_size_bytes
            .unwrap_or_else(|| panic!("no initial size: {:?}", result.size_error)),
        result
            .final_size_bytes
            .unwrap_or_else(|| panic!("no final size: {:?}", result.size_error)),
    );
    assert!(
        fin > initial,
        "{}: final size {fin} <= initial size {initial}",
        result.store
    );
}

/// The durability mode and settings a store reports.
pub async fn described(store: &mut impl Store) -> StoreInfo {
    store.reset().await.unwrap();
    store.describe().await.unwrap()
}

/// `info` reports `durability` with these settings.
pub fn settings_are(info: &StoreInfo, durability: Durability, expected: &[(&str, &str)]) {
    assert_eq!(info.durability, durability.name(), "{info:?}");
    for (setting, want) in expected {
        assert_eq!(
            info.settings.get(*setting).map(String::as_str),
            Some(*want),
            "{setting}: {info:?}"
        );
    }
}

/// The driver suite at a tiny scale: every applicable test runs with zero errors, the
/// others are listed as not applicable; returns the store's result.
pub async fn driver_tiny<C: Connect<Store: DriverStore> + Send + 'static>(
    connect: C,
    name: &str,
) -> StoreResult {
    let plan = dbcompare::suite::driver::DriverPlan {
        scale: 0.0005,
        repetitions: Repetitions {
            warmup: 1,
            measured: NonZeroU32::MIN,
        },
    };
    let mut result = StoreResult::new(name);
    dbcompare::suite::driver::run(&clients(connect), &plan, &mut result, &mut Silent)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e:#}"));
    let all = dbcompare::workload::driver::DriverTest::all();
    assert_eq!(result.phases.len() + result.not_applicable.len(), all.len());
    for p in &result.phases {
        assert_eq!(p.errors, 0, "{name} {}", p.size.name);
        assert_eq!(
            p.ops,
            plan.iterations_of(&p.size.name),
            "{name} {}",
            p.size.name
        );
        assert!(p.operation.is_some());
    }
    result
}

/// The YCSB suite's six core workloads at a small size (`records` loaded, `operations`
/// per workload), at one connection then four: every operation the store has runs with
/// zero errors and is named; the rows of the workloads it cannot run (`lacking`, as
/// `e INSERT`, `e SCAN`, `e`) are not applicable, and not run. Returns the store's result.
pub async fn ycsb_small<C: Connect<Store: dbcompare::store::YcsbStore> + Send + 'static>(
    connect: C,
    name: &str,
    lacking: &[&str],
) -> StoreResult {
    use dbcompare::workload::ycsb::{self, properties};
    let overrides = [
        properties::flag("recordcount=200").unwrap(),
        properties::flag("operationcount=400").unwrap(),
    ];
    let workloads: Vec<ycsb::Workload> = "abcfde"
        .chars()
        .map(|c| ycsb::Workload::core(c, &overrides).unwrap())
        .collect();
    let plan = dbcompare::suite::ycsb::YcsbPlan {
        workloads: workloads.clone(),
        seed: 11,
        repetitions: Repetitions::ONCE,
        concurrency: levels(&[1, 4]),
        rate: None,
        rendezvous: None,
    };
    let mut result = StoreResult::new(name);
    dbcompare::suite::ycsb::run(&clients(connect), &plan, &mut result, &mut Silent)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e:#}"));
    assert_eq!(result.not_applicable, lacking, "{name}");
    let load = result
        .phase_at(PhaseKind::Ycsb, "load INSERT", Concurrency::ONE)
        .unwrap_or_else(|| panic!("{name}: no load in {:?}", result.phases));
    assert_eq!((load.ops, load.errors), (200, 0), "{name}");
    for w in &workloads {
        let lacks = lacking
            .iter()
            .any(|l| l.split(' ').next() == Some(w.name.as_str()));
        for level in [1, 4] {
            let of_workload: Vec<_> = result
                .phases
                .iter()
                .filter(|p| p.concurrency == level)
                .filter(|p| p.size.name.split(' ').next() == Some(w.name.as_str()))
                .collect();
            if lacks {
                assert!(of_workload.is_empty(), "{name}: workload {} ran", w.name);
                continue;
            }
            assert!(
                !of_workload.is_empty(),
                "{name}: workload {} x{level}",
                w.name
            );
            for p in &of_workload {
                assert_eq!(p.errors, 0, "{name} {} x{level}", p.size.name);
                assert!(!p.incomplete, "{name} {} x{level}", p.size.name);
                if p.size.name.contains(' ') {
                    assert!(
                        p.operation.is_some(),
                        "{name}: {} names no operation",
                        p.size.name
                    );
                }
            }
            // Every operation ran once.
            let total = of_workload
                .iter()
                .find(|p| p.size.name == w.name)
                .or(of_workload.first())
                .unwrap();
            assert_eq!(total.ops, 400, "{name} {} x{level}", w.name);
        }
    }
    result
}

/// Concurrency levels, from whole numbers of at least 1.
pub fn levels(levels: &[u32]) -> Vec<Concurrency> {
    levels
        .iter()
        .map(|&l| Concurrency::new(l).expect("a level of at least 1"))
        .collect()
}
