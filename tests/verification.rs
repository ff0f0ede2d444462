//! A wrong or missing answer fails the store's run with an error naming the unique_id.

use anyhow::Result;
use dbcompare::catalog::Durability;
use dbcompare::report::model::{PhaseKind, StoreInfo, StoreResult};
use dbcompare::store::sqlite::SqliteStore;
use dbcompare::store::{ConnectSpec, DiskUsage, NotApplicable, Store};
use dbcompare::suite::Silent;
use dbcompare::suite::classic::{self, ClassicPlan, Workload};
use dbcompare::suite::clients::Clients;
use dbcompare::workload::record::Record;

fn sqlite_spec() -> ConnectSpec {
    ConnectSpec {
        url: None,
        data_dir: None,
        durability: Durability::Durable,
        connect_timeout: std::time::Duration::from_secs(10),
        options: Default::default(),
    }
}

#[derive(Clone, Copy)]
enum Lie {
    WrongAge,
    Nothing,
}

/// A real SQLite store that lies about one record.
struct Lying {
    inner: SqliteStore,
    victim: &'static str,
    lie: Lie,
}

impl Store for Lying {
    type Driver = NotApplicable;
    type Pool = NotApplicable;
    type Ycsb = NotApplicable;

    async fn describe(&mut self) -> Result<StoreInfo> {
        self.inner.describe().await
    }
    async fn reset(&mut self) -> Result<()> {
        self.inner.reset().await
    }
    async fn insert(&mut self, record: &Record) -> Result<()> {
        self.inner.insert(record).await
    }
    async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
        let found = self.inner.find(unique_id).await?;
        if unique_id != self.victim {
            return Ok(found);
        }
        Ok(match self.lie {
            Lie::WrongAge => found.map(|mut r| {
                r.data.age += 1;
                r
            }),
            Lie::Nothing => None,
        })
    }
    async fn disk_usage(&mut self) -> Result<DiskUsage> {
        self.inner.disk_usage().await
    }
}

async fn run_lying(lie: Lie) -> (Result<()>, StoreResult) {
    let plan = ClassicPlan::once(vec!["micro".parse().unwrap()], 40, 1);
    let connect = move || async move {
        Ok(Lying {
            inner: SqliteStore::open(&sqlite_spec())?,
            victim: "micro-17",
            lie,
        })
    };
    let clients = Clients::start(connect, 1).unwrap();
    let mut result = StoreResult::new("sqlite");
    let outcome = classic::run(
        &clients,
        &Workload::generate(&plan),
        &mut result,
        &mut Silent,
    )
    .await;
    (outcome, result)
}

#[tokio::test]
async fn a_wrong_record_fails_the_run_and_names_its_unique_id() {
    let (outcome, result) = run_lying(Lie::WrongAge).await;
    let message = format!(
        "{:#}",
        outcome.expect_err("a wrong answer must fail the run")
    );
    assert!(message.contains("unique_id micro-17"), "{message}");
    assert!(message.contains("wrong record"), "{message}");
    let search = result
        .phase(PhaseKind::Search, "micro")
        .expect("search phase recorded");
    assert!(search.errors >= 1);
    assert_eq!(search.error_kinds.get("wrong record"), Some(&search.errors));
    // The insert phase before it is kept.
    assert_eq!(result.phase(PhaseKind::Insert, "micro").unwrap().errors, 0);
}

#[tokio::test]
async fn a_missing_record_fails_the_run_and_names_its_unique_id() {
    let (outcome, result) = run_lying(Lie::Nothing).await;
    let message = format!(
        "{:#}",
        outcome.expect_err("a missing answer must fail the run")
    );
    assert!(
        message.contains("missing record for unique_id micro-17"),
        "{message}"
    );
    let search = result.phase(PhaseKind::Search, "micro").unwrap();
    assert!(search.error_kinds.contains_key("missing record"));
}

#[tokio::test]
async fn an_honest_store_passes() {
    let plan = ClassicPlan::once(vec!["micro".parse().unwrap()], 40, 1);
    let connect = || async { SqliteStore::open(&sqlite_spec()) };
    let clients = Clients::start(connect, 1).unwrap();
    let mut result = StoreResult::new("sqlite");
    classic::run(
        &clients,
        &Workload::generate(&plan),
        &mut result,
        &mut Silent,
    )
    .await
    .unwrap();
    let search = result.phase(PhaseKind::Search, "micro").unwrap();
    assert_eq!((search.ops, search.errors), (4000, 0));
}
