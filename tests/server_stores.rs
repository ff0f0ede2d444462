//! PostgreSQL, MySQL (MariaDB) and Redis against real throw-away servers started through
//! `src/server/`: round trips with every field compared, a missing key, the classic suite
//! at micro size, durability read back, and no process or directory left behind.

mod common;

use std::path::Path;

use anyhow::Result;
use dbcompare::record::{Record, generate};
use dbcompare::report::model::{PhaseKind, StoreInfo, StoreResult};
use dbcompare::server::process_alive;
use dbcompare::store::{AnyStore, DiskUsage, Durability, Store, StoreKind};
use dbcompare::suite::Silent;
use dbcompare::suite::classic::{self, ClassicPlan, Workload};

fn micro_plan() -> ClassicPlan {
    ClassicPlan {
        sizes: vec!["micro".parse().unwrap()],
        searches_per_insert: 40,
        seed: 11,
    }
}

async fn round_trip(kind: StoreKind) {
    let server = common::start(kind, Durability::Durable);
    let mut store = common::connect(&server, Durability::Durable).await;
    store.reset().await.unwrap();
    let records = generate(5, &"micro".parse().unwrap(), 1);
    for r in &records[..50] {
        store.insert(r).await.unwrap();
    }
    for r in &records[..50] {
        let found = store.find(&r.unique_id).await.unwrap();
        assert_eq!(found.as_ref(), Some(r), "{kind}: {}", r.unique_id);
    }
    assert_eq!(store.find(&records[50].unique_id).await.unwrap(), None);
    assert_eq!(store.find("micro-999999").await.unwrap(), None);
    // A unique_id is unique: a second insert of the same record is refused.
    assert!(store.insert(&records[0]).await.is_err() || kind == StoreKind::Redis);
    // A reset empties the store.
    store.reset().await.unwrap();
    assert_eq!(store.find(&records[0].unique_id).await.unwrap(), None);
}

async fn classic_micro(kind: StoreKind) {
    let server = common::start(kind, Durability::Durable);
    let mut store = common::connect(&server, Durability::Durable).await;
    let mut result = StoreResult::new(kind.name());
    classic::run(
        &mut store,
        &Workload::generate(&micro_plan()),
        &mut result,
        &mut Silent,
    )
    .await
    .unwrap_or_else(|e| panic!("{kind}: {e:#}"));
    let insert = result.phase(PhaseKind::Insert, "micro").unwrap();
    let search = result.phase(PhaseKind::Search, "micro").unwrap();
    assert_eq!((insert.ops, insert.errors), (100, 0));
    assert_eq!((search.ops, search.errors), (4000, 0));
    let (initial, fin) = (
        result.initial_size_bytes.unwrap(),
        result.final_size_bytes.unwrap(),
    );
    if kind == StoreKind::Mysql {
        // InnoDB allocates 16 kB pages: micro's 100 records (about 12 kB) fit in the first
        // page of the table, so its size cannot grow yet (see mysql::size_grows_with_data).
        assert!(
            fin >= initial,
            "{kind}: final size {fin} < initial size {initial}"
        );
    } else {
        assert!(
            fin > initial,
            "{kind}: final size {fin} <= initial size {initial}"
        );
    }
    assert!(
        !result.final_size_extra.is_empty(),
        "{kind}: a local server's data directory is measured too"
    );
}

async fn read_back(kind: StoreKind, durability: Durability) -> StoreInfo {
    let server = common::start(kind, durability);
    let mut store = common::connect(&server, durability).await;
    store.reset().await.unwrap();
    store.describe().await.unwrap()
}

async fn durability_is_read_back(kind: StoreKind, expected: [(&str, &str, &str); 2]) {
    for (durability, index) in [(Durability::Durable, 1), (Durability::Relaxed, 2)] {
        let info = read_back(kind, durability).await;
        assert_eq!(info.durability, durability.name(), "{kind}: {info:?}");
        for (setting, durable, relaxed) in expected {
            let want = if index == 1 { durable } else { relaxed };
            assert_eq!(
                info.settings.get(setting).map(String::as_str),
                Some(want),
                "{kind} {setting}: {info:?}"
            );
        }
    }
}

/// A real store that answers one search wrongly.
struct Lying(AnyStore);

impl Store for Lying {
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
    let mut store = Lying(common::connect(&server, Durability::Durable).await);
    let mut result = StoreResult::new(kind.name());
    let outcome = classic::run(
        &mut store,
        &Workload::generate(&micro_plan()),
        &mut result,
        &mut Silent,
    )
    .await;
    let message = format!("{:#}", outcome.unwrap_err());
    assert!(
        message.contains("missing record for unique_id micro-3"),
        "{message}"
    );
    drop(store);
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

macro_rules! store_tests {
    ($module:ident, $kind:expr, $settings:expr) => {
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
        }
    };
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

store_tests!(
    postgres,
    StoreKind::Postgres,
    [("synchronous_commit", "on", "off"), ("fsync", "on", "on")]
);
store_tests!(
    mysql,
    StoreKind::Mysql,
    [
        ("innodb_flush_log_at_trx_commit", "1", "2"),
        ("sync_binlog", "1", "1")
    ]
);
store_tests!(
    redis,
    StoreKind::Redis,
    [
        ("appendfsync", "always", "everysec"),
        ("appendonly", "yes", "yes")
    ]
);
