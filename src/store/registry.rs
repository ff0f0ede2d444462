//! The one list of store adapters. From it `stores!` derives [`AnyStore`] (an open store of
//! any kind for the classic suite and `dbcompare check`, statically dispatched: no
//! allocation per operation), [`AnyDriverStore`] (the same for the driver, pool and YCSB
//! suites, on each store's [`Adapter::DriverSuites`] connection), their dispatch of every
//! suite's operations, how a kind is opened ([`StoreKind::connect`],
//! [`StoreKind::connect_for_drivers`]) and how a URL for it is checked ([`parse_url`]). A
//! store that runs only by URL is in the list under its cargo feature (Cargo.toml); a build
//! without it answers [`not_built`] for it. A test checks that every kind of the catalog is
//! in the list, built exactly when it is not behind a feature or its feature is on.

use std::future::Future;

use anyhow::{Context, Result, anyhow};

use super::url::{StoreUrl, bad_url};
use super::{
    Adapter, ConnectSpec, DiskUsage, DriverStore, DriverSuite, NotApplicable, PoolStore, PoolSuite,
    Store, Supported, YcsbFields, YcsbStore, YcsbSuite, YcsbTable,
};
use crate::catalog::{StoreInfo, StoreKind};
use crate::error::UsageError;
use crate::workload::driver::DriverOp;
use crate::workload::pool::{BenchRow, PoolTest};
use crate::workload::record::Record;
use crate::workload::ycsb::OpKind;

impl StoreKind {
    /// Opens a connection for the classic suite and `dbcompare check`, ready for
    /// [`Store::reset`]; a server store within the connect timeout, its errors naming the
    /// server's address and (masked) URL.
    pub async fn connect(self, spec: &ConnectSpec) -> Result<AnyStore> {
        self.within_timeout(spec, open(self, spec)).await
    }

    /// Opens a connection for the driver, pool and YCSB suites, as [`StoreKind::connect`]
    /// does.
    pub async fn connect_for_drivers(self, spec: &ConnectSpec) -> Result<AnyDriverStore> {
        self.within_timeout(spec, open_for_drivers(self, spec))
            .await
    }

    /// `connecting`, given the connect timeout when it reaches a server.
    async fn within_timeout<T>(
        self,
        spec: &ConnectSpec,
        connecting: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        let Some(url) = &spec.url else {
            // Embedded (a server store without a URL says so itself).
            return connecting.await;
        };
        match tokio::time::timeout(spec.connect_timeout, connecting).await {
            Ok(connected) => connected.with_context(|| {
                format!(
                    "connecting to {self} at {} ({})",
                    url.address(),
                    url.masked()
                )
            }),
            Err(_) => Err(anyhow!(
                "connecting to {self} at {} ({}): no answer within {:?} (--connect-timeout)",
                url.address(),
                url.masked(),
                spec.connect_timeout
            )),
        }
    }
}

/// Why `kind` cannot run in this build, and how to build it in (the stores that run only by
/// URL are cargo features named as the stores are); it follows the store's name wherever it
/// is shown.
pub fn not_built(kind: StoreKind) -> UsageError {
    UsageError::new(format!(
        "not in this build: `cargo build --release --features {kind}` \
         (`--features all-stores`: every store)"
    ))
}

/// Whether `kind` runs only against a URL of a server of its own (no server is packaged
/// here): such a store is a cargo feature, named as the store is.
fn url_only(kind: StoreKind) -> bool {
    kind.server().is_some_and(|s| s.launcher.is_none())
}

/// The stores this build has on request, by their cargo features' names (`mongodb`,
/// `aerospike`, `couchbase`), in the catalog's order; none in the default build. A run
/// records them beside dbcompare's version.
pub fn built_on_request() -> Vec<String> {
    StoreKind::all()
        .iter()
        .filter(|&&kind| url_only(kind) && built(kind))
        .map(|kind| kind.name().to_string())
        .collect()
}

/// Parses `raw` as a URL for `kind` (scheme, host, default port) and checks it the way the
/// store's driver will read it; the error never shows the password.
pub fn parse_url(kind: StoreKind, raw: &str) -> Result<StoreUrl, UsageError> {
    if !built(kind) {
        return Err(bad_url(kind, not_built(kind).0));
    }
    let url = StoreUrl::parse(kind, raw)?;
    check_url(kind, raw).map_err(|e| {
        // A driver's parser may quote the URL it refused.
        let secrets: Vec<String> = url.password().into_iter().map(str::to_string).collect();
        let why = crate::store::url::scrub(&format!("{e:#}"), &secrets);
        bad_url(kind, format!("{}: {why}", url.masked()))
    })?;
    Ok(url)
}

/// `match` on an [`AnyStore`] or an [`AnyDriverStore`] (`$enum`), the same call for every
/// kind; `$ty` names the store's type in the call.
macro_rules! dispatch {
    ($enum:ident $any:expr, $store:ident: $ty:ident => $call:expr; $($(#[$built:meta])* $kind:ident => $type:ty),+) => {
        match $any {
            $($(#[$built])* $enum::$kind($store) => {
                #[allow(dead_code)]
                type $ty = $type;
                $call
            })+
        }
    };
}

/// The [`Store`] of an `$enum` of open stores: each call dispatched to the kind's store;
/// the suites' markers (`type Driver` and the others) are `$suites`.
macro_rules! any_store {
    ($enum:ident, $suites:ty; $($(#[$built:meta])* $kind:ident => $type:ty),+) => {
        impl Store for $enum {
            type Driver = $suites;
            type Pool = $suites;
            type Ycsb = $suites;

            async fn describe(&mut self) -> Result<StoreInfo> {
                dispatch!($enum self, s: S => s.describe().await; $($(#[$built])* $kind => $type),+)
            }
            async fn reset(&mut self) -> Result<()> {
                dispatch!($enum self, s: S => s.reset().await; $($(#[$built])* $kind => $type),+)
            }
            async fn insert(&mut self, record: &Record) -> Result<()> {
                dispatch!($enum self, s: S => s.insert(record).await; $($(#[$built])* $kind => $type),+)
            }
            async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
                dispatch!($enum self, s: S => s.find(unique_id).await; $($(#[$built])* $kind => $type),+)
            }
            async fn disk_usage(&mut self) -> Result<DiskUsage> {
                dispatch!($enum self, s: S => s.disk_usage().await; $($(#[$built])* $kind => $type),+)
            }
            async fn counters(&mut self) -> Result<std::collections::BTreeMap<String, u64>> {
                dispatch!($enum self, s: S => s.counters().await; $($(#[$built])* $kind => $type),+)
            }
            async fn setting(&mut self, name: &str) -> Result<Option<String>> {
                dispatch!($enum self, s: S => s.setting(name).await; $($(#[$built])* $kind => $type),+)
            }
            async fn set_setting(&mut self, name: &str, value: &str) -> Result<()> {
                dispatch!($enum self, s: S => s.set_setting(name, value).await; $($(#[$built])* $kind => $type),+)
            }
            async fn close(self) -> Result<()> {
                dispatch!($enum self, s: S => s.close().await; $($(#[$built])* $kind => $type),+)
            }
        }
    };
}

/// [`AnyDriverStore`] from the list of `Kind => the type its driver suites open`.
macro_rules! driver_stores {
    ($($(#[$built:meta])* $kind:ident => $type:ty),+) => {
        /// An open store of any kind for the driver, pool and YCSB suites (static dispatch:
        /// no allocation per operation).
        pub enum AnyDriverStore {
            $($(#[$built])* $kind($type),)+
        }

        async fn open_for_drivers(kind: StoreKind, spec: &ConnectSpec) -> Result<AnyDriverStore> {
            #[allow(unreachable_patterns)] // With every store built.
            Ok(match kind {
                $($(#[$built])* StoreKind::$kind => AnyDriverStore::$kind(<$type as Adapter>::connect(spec).await?),)+
                kind => return Err(not_built(kind).into()),
            })
        }

        any_store!(AnyDriverStore, Supported; $($(#[$built])* $kind => $type),+);

        impl DriverStore for AnyDriverStore {
            fn driver_operation(&self, op: DriverOp) -> Option<&'static str> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Driver as DriverSuite<S>>::operation(s, op); $($(#[$built])* $kind => $type),+)
            }
            async fn driver(&mut self, op: DriverOp, i: u64) -> Result<()> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Driver as DriverSuite<S>>::run(s, op, i).await; $($(#[$built])* $kind => $type),+)
            }
        }

        impl YcsbStore for AnyDriverStore {
            fn ycsb_operation(&self, op: OpKind) -> Option<&'static str> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Ycsb as YcsbSuite<S>>::operation(s, op); $($(#[$built])* $kind => $type),+)
            }
            fn ycsb_lacking(&self, op: OpKind) -> String {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Ycsb as YcsbSuite<S>>::lacking(s, op); $($(#[$built])* $kind => $type),+)
            }
            async fn ycsb_reset(&mut self, table: &YcsbTable) -> Result<()> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Ycsb as YcsbSuite<S>>::reset(s, table).await; $($(#[$built])* $kind => $type),+)
            }
            async fn ycsb_use(&mut self, table: &YcsbTable) -> Result<()> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Ycsb as YcsbSuite<S>>::use_table(s, table).await; $($(#[$built])* $kind => $type),+)
            }
            async fn ycsb_insert(&mut self, key: &str, values: &[String]) -> Result<()> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Ycsb as YcsbSuite<S>>::insert(s, key, values).await; $($(#[$built])* $kind => $type),+)
            }
            async fn ycsb_read(&mut self, key: &str, field: Option<u16>) -> Result<Option<YcsbFields>> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Ycsb as YcsbSuite<S>>::read(s, key, field).await; $($(#[$built])* $kind => $type),+)
            }
            async fn ycsb_update(&mut self, key: &str, values: &[(u16, String)]) -> Result<()> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Ycsb as YcsbSuite<S>>::update(s, key, values).await; $($(#[$built])* $kind => $type),+)
            }
            async fn ycsb_scan(&mut self, start: &str, count: u32, field: Option<u16>) -> Result<Vec<(String, YcsbFields)>> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Ycsb as YcsbSuite<S>>::scan(s, start, count, field).await; $($(#[$built])* $kind => $type),+)
            }
        }

        impl PoolStore for AnyDriverStore {
            fn pool_operation(&self, test: PoolTest) -> Option<&'static str> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Pool as PoolSuite<S>>::operation(s, test); $($(#[$built])* $kind => $type),+)
            }
            async fn pool_load(&mut self, rows: &[BenchRow]) -> Result<()> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Pool as PoolSuite<S>>::load(s, rows).await; $($(#[$built])* $kind => $type),+)
            }
            async fn pool_large(&mut self, max_id: u32) -> Result<Vec<BenchRow>> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Pool as PoolSuite<S>>::large(s, max_id).await; $($(#[$built])* $kind => $type),+)
            }
            async fn pool_point(&mut self, id: i32) -> Result<Option<BenchRow>> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Pool as PoolSuite<S>>::point(s, id).await; $($(#[$built])* $kind => $type),+)
            }
            async fn pool_batch_reset(&mut self) -> Result<()> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Pool as PoolSuite<S>>::batch_reset(s).await; $($(#[$built])* $kind => $type),+)
            }
            async fn pool_batch_insert(&mut self, rows: &[BenchRow]) -> Result<()> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Pool as PoolSuite<S>>::batch_insert(s, rows).await; $($(#[$built])* $kind => $type),+)
            }
            async fn pool_batch_count(&mut self) -> Result<u64> {
                dispatch!(AnyDriverStore self, s: S => <<S as Store>::Pool as PoolSuite<S>>::batch_count(s).await; $($(#[$built])* $kind => $type),+)
            }
        }
    };
}

/// Derives everything in this file from the list of `Kind => adapter type`.
macro_rules! stores {
    ($($(#[$built:meta])* $kind:ident => $store:ty),+ $(,)?) => {
        /// An open store of any kind for the classic suite and `dbcompare check` (static
        /// dispatch: no allocation per operation).
        pub enum AnyStore {
            $($(#[$built])* $kind($store),)+
        }

        /// Whether this build has `kind`'s adapter (the stores that run only by URL are
        /// cargo features).
        pub fn built(kind: StoreKind) -> bool {
            #[allow(unreachable_patterns)] // With every store built.
            match kind {
                $($(#[$built])* StoreKind::$kind => true,)+
                _ => false,
            }
        }

        async fn open(kind: StoreKind, spec: &ConnectSpec) -> Result<AnyStore> {
            #[allow(unreachable_patterns)] // With every store built.
            Ok(match kind {
                $($(#[$built])* StoreKind::$kind => AnyStore::$kind(<$store as Adapter>::connect(spec).await?),)+
                kind => return Err(not_built(kind).into()),
            })
        }

        fn check_url(kind: StoreKind, raw: &str) -> Result<()> {
            #[allow(unreachable_patterns)] // With every store built.
            match kind {
                $($(#[$built])* StoreKind::$kind => <$store as Adapter>::check_url(raw),)+
                kind => Err(not_built(kind).into()),
            }
        }

        any_store!(AnyStore, NotApplicable; $($(#[$built])* $kind => $store),+);

        driver_stores!($($(#[$built])* $kind => <$store as Adapter>::DriverSuites),+);
    };
}

// The list: one line per store, `Kind => adapter`, a store built only with its cargo feature
// under its `cfg`.
stores! {
    Sqlite => super::sqlite::SqliteStore,
    Postgres => super::postgres::PostgresStore<super::postgres::records::Own>,
    Mysql => super::mysql::MysqlStore<super::mysql::records::Own>,
    #[cfg(feature = "mongodb")]
    Mongodb => super::mongodb::MongoStore,
    Redis => super::redis::RedisStore,
    RedisCluster => super::redis::RedisStore,
    #[cfg(feature = "aerospike")]
    Aerospike => super::aerospike::AerospikeStore,
    #[cfg(feature = "couchbase")]
    Couchbase => super::couchbase::CouchbaseStore,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stores that run only by URL, each with whether its cargo feature is on.
    const FEATURES: [(&str, bool); 3] = [
        ("mongodb", cfg!(feature = "mongodb")),
        ("aerospike", cfg!(feature = "aerospike")),
        ("couchbase", cfg!(feature = "couchbase")),
    ];

    /// Every kind of the catalog is in the list: SQLite and the stores dbcompare starts a
    /// server of always, a store that runs only by URL exactly when its feature is on.
    #[test]
    fn every_kind_is_built_unless_its_feature_is_off() {
        for &kind in StoreKind::all() {
            let feature = FEATURES.iter().find(|(name, _)| *name == kind.name());
            assert_eq!(
                url_only(kind),
                feature.is_some(),
                "{kind}: a store that runs only by URL is a cargo feature named as it is"
            );
            assert_eq!(built(kind), feature.is_none_or(|(_, on)| *on), "{kind}");
        }
        let on: Vec<&str> = FEATURES
            .iter()
            .filter(|(_, on)| *on)
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(built_on_request(), on, "what a run records of its build");
    }

    #[test]
    fn a_store_not_built_names_the_feature_that_builds_it() {
        let e = not_built(StoreKind::Couchbase);
        assert!(e.0.contains("--features couchbase`"), "{e}");
        assert!(e.0.contains("--features all-stores"), "{e}");
    }

    /// In a build without MongoDB, its URL is refused as a usage error that says how to
    /// build it (`cargo test --lib` without features runs this).
    #[cfg(not(feature = "mongodb"))]
    #[tokio::test]
    async fn a_store_not_built_refuses_its_url_and_its_connection() {
        let e = parse_url(StoreKind::Mongodb, "mongodb://h:27017/db").unwrap_err();
        assert!(e.0.contains("--features mongodb"), "{e}");
        assert!(
            e.0.starts_with("--url mongodb=...: not in this build"),
            "{e}"
        );
        let spec = ConnectSpec::for_test(StoreKind::Mongodb, "mongodb://127.0.0.1:9/db");
        let Err(e) = StoreKind::Mongodb.connect(&spec).await else {
            panic!("connected to a store that is not built");
        };
        assert!(format!("{e:#}").contains("not in this build"), "{e:#}");
    }
}
