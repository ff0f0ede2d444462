//! The stores: the [`Store`] trait every store implements (the classic suite's operations
//! and `close`), the traits of the suites a store may also have ([`DriverStore`],
//! [`PoolStore`], [`YcsbStore`]), how a store is opened ([`Adapter`], [`ConnectSpec`]), and
//! one folder per store. [`registry`] names every adapter once and derives `AnyStore` and
//! `AnyDriverStore` from that list; [`url`] parses and masks URLs; [`conn`] is the core of
//! the connections dbcompare drives itself.
//!
//! A store says in one place whether it has the driver, pool and YCSB suites: its
//! `type Driver`, `type Pool` and `type Ycsb` are [`Supported`] (and it implements the
//! suite's trait) or [`NotApplicable`] (and the suite reports every test as n/a). The
//! compiler asks every store for all three. Those suites run on the connection its
//! [`Adapter::DriverSuites`] names (itself, for most stores).

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, anyhow};

use self::url::StoreUrl;
use crate::catalog::{Durability, StoreInfo, StoreKind, StoreOptions};
use crate::workload::driver::DriverOp;
use crate::workload::pool::{BenchRow, PoolTest};
use crate::workload::record::Record;
use crate::workload::ycsb::OpKind;

pub mod conn;
pub mod registry;
pub mod sql;
pub mod tls;
pub mod url;

// The stores that run only against a server given by URL are cargo features (Cargo.toml);
// a build without one says so when it is asked for (`registry::built`).
#[cfg(feature = "aerospike")]
pub mod aerospike;
#[cfg(feature = "couchbase")]
pub mod couchbase;
#[cfg(feature = "mongodb")]
pub mod mongodb;
pub mod mysql;
pub mod postgres;
pub mod redis;
pub mod sqlite;

/// One connection to a store, as the benchmark drives it. Every method is one round of work
/// the suites time; implementations do nothing else on these paths (no logging, no
/// re-preparing statements).
pub trait Store: Send + Sized {
    /// [`Supported`] when the store implements [`DriverStore`], else [`NotApplicable`].
    type Driver: DriverSuite<Self>;
    /// [`Supported`] when the store implements [`PoolStore`], else [`NotApplicable`].
    type Pool: PoolSuite<Self>;
    /// [`Supported`] when the store implements [`YcsbStore`], else [`NotApplicable`].
    type Ycsb: YcsbSuite<Self>;

    /// Version, durability settings read back from the store, search and write paths and
    /// how the size is measured.
    fn describe(&mut self) -> impl Future<Output = Result<StoreInfo>> + Send;

    /// Drops and recreates the benchmark's schema with every index, empty.
    fn reset(&mut self) -> impl Future<Output = Result<()>> + Send;

    /// Inserts one record in its own transaction (or the store's atomic single write).
    fn insert(&mut self, record: &Record) -> impl Future<Output = Result<()>> + Send;

    /// Finds the record with this `unique_id` through the store's index, fully decoded.
    fn find(&mut self, unique_id: &str) -> impl Future<Output = Result<Option<Record>>> + Send;

    /// Flushes what the store buffers, then measures its on-disk size.
    fn disk_usage(&mut self) -> impl Future<Output = Result<DiskUsage>> + Send;

    /// Counts the server keeps that tell how a phase went beside its latencies (a Redis
    /// Cluster's MOVED and ASK redirects), by name, as they stand now: the suites read them
    /// before and after each phase, outside its timing, and report the difference. None by
    /// default.
    fn counters(&mut self) -> impl Future<Output = Result<BTreeMap<String, u64>>> + Send {
        async { Ok(BTreeMap::new()) }
    }

    /// A server setting by name, as the server holds it for this connection (`SHOW`,
    /// `SELECT @@`, `CONFIG GET`): how a variant's own settings are read back. `None` for a
    /// store without settings by name (the default).
    fn setting(&mut self, name: &str) -> impl Future<Output = Result<Option<String>>> + Send {
        let _ = name;
        async { Ok(None) }
    }

    /// Sets a setting for the whole server (`SET GLOBAL`, `CONFIG SET`): a variant's `--set`
    /// on a server given by URL. By default the store has no way to, which is an error.
    fn set_setting(&mut self, name: &str, value: &str) -> impl Future<Output = Result<()>> + Send {
        let _ = value;
        let refusal = anyhow!("this store has no way to set {name} on its server");
        async move { Err(refusal) }
    }

    /// Ends the connection with the driver's goodbye to the server, where it has one (by
    /// default the store is simply dropped). The suites call it after a connection's last
    /// operation, on the event loop the connection was opened on.
    fn close(self) -> impl Future<Output = Result<()>> + Send {
        async { Ok(()) }
    }
}

/// The driver suite's operations (tiny queries after the Go SQL driver benchmark).
pub trait DriverStore: Store {
    /// What this store runs for `op` (`SELECT 1, simple protocol`), or `None` when it has no
    /// such operation (the test is reported as not applicable).
    fn driver_operation(&self, op: DriverOp) -> Option<&'static str>;

    /// Runs `op` once (`i` is the iteration, for parameters) and checks its answer; only
    /// called for an operation [`DriverStore::driver_operation`] names. Statements are
    /// prepared on first use, outside any timing that matters (every test has a warm-up).
    fn driver(&mut self, op: DriverOp, i: u64) -> impl Future<Output = Result<()>> + Send;
}

/// The pool suite's operations (the asyncmy suite's table and tests).
pub trait PoolStore: Store {
    /// What this store runs for `test`, or `None` (not applicable).
    fn pool_operation(&self, test: PoolTest) -> Option<&'static str>;

    /// Creates `benchmark_data` (and `benchmark_batch`) and loads `rows` into it.
    fn pool_load(&mut self, rows: &[BenchRow]) -> impl Future<Output = Result<()>> + Send;

    /// `benchmark_data` rows with `id <= max_id`, in id order, every column decoded.
    fn pool_large(&mut self, max_id: u32) -> impl Future<Output = Result<Vec<BenchRow>>> + Send;

    /// The `benchmark_data` row with this id.
    fn pool_point(&mut self, id: i32) -> impl Future<Output = Result<Option<BenchRow>>> + Send;

    /// Empties `benchmark_batch`.
    fn pool_batch_reset(&mut self) -> impl Future<Output = Result<()>> + Send;

    /// Inserts `rows` into `benchmark_batch` with the store's batch path.
    fn pool_batch_insert(&mut self, rows: &[BenchRow]) -> impl Future<Output = Result<()>> + Send;

    /// Rows in `benchmark_batch`.
    fn pool_batch_count(&mut self) -> impl Future<Output = Result<u64>> + Send;
}

/// The YCSB suite's table (YCSB's `usertable`): its name and its fields, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YcsbTable {
    pub name: String,
    pub fields: Vec<String>,
}

/// A record's fields as read: field `i` at index `i`, `None` where it was not read.
pub type YcsbFields = Vec<Option<String>>;

/// A record's `count` fields as read, every one (`field` `None`) or the one asked for:
/// `value(position, field)` gives the value of `field`, the `position`-th value the store
/// returned (a column from the first field's on).
pub fn ycsb_fields<E>(
    count: usize,
    field: Option<u16>,
    mut value: impl FnMut(usize, usize) -> Result<String, E>,
) -> Result<YcsbFields, E> {
    let mut fields = vec![None; count];
    match field {
        Some(f) => fields[usize::from(f)] = Some(value(0, usize::from(f))?),
        None => {
            for (i, slot) in fields.iter_mut().enumerate() {
                *slot = Some(value(i, i)?);
            }
        }
    }
    Ok(fields)
}

/// The YCSB suite's operations: YCSB's DB interface (insert, read, update, scan; a
/// read-modify-write is a read and an update, as YCSB makes it).
pub trait YcsbStore: Store {
    /// What this store runs for `op`, or `None` when it has no such operation (a scan on a
    /// store without ordered keys): those operations are reported as not applicable.
    fn ycsb_operation(&self, op: OpKind) -> Option<&'static str>;

    /// Why this store has no `op` (where [`YcsbStore::ycsb_operation`] is `None`), for the
    /// report; asked after [`YcsbStore::ycsb_reset`], which may have found it out.
    fn ycsb_lacking(&self, op: OpKind) -> String {
        format!("the store has no {} operation", op.name())
    }

    /// Drops and creates `table` (its key and its fields), empty, then uses it.
    fn ycsb_reset(&mut self, table: &YcsbTable) -> impl Future<Output = Result<()>> + Send;

    /// Uses `table`, which another connection created (statements are prepared here).
    fn ycsb_use(&mut self, table: &YcsbTable) -> impl Future<Output = Result<()>> + Send;

    /// Inserts a record: `values[i]` is field `i`.
    fn ycsb_insert(
        &mut self,
        key: &str,
        values: &[String],
    ) -> impl Future<Output = Result<()>> + Send;

    /// The record's fields, every one (`None`) or one; `None` when there is no such record.
    fn ycsb_read(
        &mut self,
        key: &str,
        field: Option<u16>,
    ) -> impl Future<Output = Result<Option<YcsbFields>>> + Send;

    /// Writes these fields of a record.
    fn ycsb_update(
        &mut self,
        key: &str,
        values: &[(u16, String)],
    ) -> impl Future<Output = Result<()>> + Send;

    /// Up to `count` records from `start` on, in the order of their keys' bytes, with their
    /// fields as [`YcsbStore::ycsb_read`] gives them.
    fn ycsb_scan(
        &mut self,
        start: &str,
        count: u32,
        field: Option<u16>,
    ) -> impl Future<Output = Result<Vec<(String, YcsbFields)>>> + Send;
}

/// A store's `type Driver` or `type Pool`: it has that suite (and implements its trait).
pub struct Supported;

/// A store's `type Driver` or `type Pool`: it has no such suite; every test is n/a.
pub struct NotApplicable;

/// How the driver suite reaches a store of type `S` (see [`Store::Driver`]).
pub trait DriverSuite<S> {
    fn operation(store: &S, op: DriverOp) -> Option<&'static str>;
    fn run(store: &mut S, op: DriverOp, i: u64) -> impl Future<Output = Result<()>> + Send;
}

impl<S: DriverStore> DriverSuite<S> for Supported {
    fn operation(store: &S, op: DriverOp) -> Option<&'static str> {
        store.driver_operation(op)
    }
    fn run(store: &mut S, op: DriverOp, i: u64) -> impl Future<Output = Result<()>> + Send {
        store.driver(op, i)
    }
}

impl<S> DriverSuite<S> for NotApplicable {
    fn operation(_: &S, _: DriverOp) -> Option<&'static str> {
        None
    }
    /// Never asked for: the suite asks [`DriverSuite::operation`] first.
    fn run(_: &mut S, op: DriverOp, _: u64) -> impl Future<Output = Result<()>> + Send {
        std::future::ready(Err(anyhow!(
            "{} is not applicable to this store",
            op.name()
        )))
    }
}

/// How the pool suite reaches a store of type `S` (see [`Store::Pool`]).
pub trait PoolSuite<S> {
    fn operation(store: &S, test: PoolTest) -> Option<&'static str>;
    fn load(store: &mut S, rows: &[BenchRow]) -> impl Future<Output = Result<()>> + Send;
    fn large(store: &mut S, max_id: u32) -> impl Future<Output = Result<Vec<BenchRow>>> + Send;
    fn point(store: &mut S, id: i32) -> impl Future<Output = Result<Option<BenchRow>>> + Send;
    fn batch_reset(store: &mut S) -> impl Future<Output = Result<()>> + Send;
    fn batch_insert(store: &mut S, rows: &[BenchRow]) -> impl Future<Output = Result<()>> + Send;
    fn batch_count(store: &mut S) -> impl Future<Output = Result<u64>> + Send;
}

impl<S: PoolStore> PoolSuite<S> for Supported {
    fn operation(store: &S, test: PoolTest) -> Option<&'static str> {
        store.pool_operation(test)
    }
    fn load(store: &mut S, rows: &[BenchRow]) -> impl Future<Output = Result<()>> + Send {
        store.pool_load(rows)
    }
    fn large(store: &mut S, max_id: u32) -> impl Future<Output = Result<Vec<BenchRow>>> + Send {
        store.pool_large(max_id)
    }
    fn point(store: &mut S, id: i32) -> impl Future<Output = Result<Option<BenchRow>>> + Send {
        store.pool_point(id)
    }
    fn batch_reset(store: &mut S) -> impl Future<Output = Result<()>> + Send {
        store.pool_batch_reset()
    }
    fn batch_insert(store: &mut S, rows: &[BenchRow]) -> impl Future<Output = Result<()>> + Send {
        store.pool_batch_insert(rows)
    }
    fn batch_count(store: &mut S) -> impl Future<Output = Result<u64>> + Send {
        store.pool_batch_count()
    }
}

/// The answer of every pool operation of a store without the pool suite (never asked for:
/// the suite asks [`PoolSuite::operation`] first, which is `None` for every test).
fn no_pool_suite<T>() -> std::future::Ready<Result<T>> {
    std::future::ready(Err(anyhow!(
        "the pool suite is not applicable to this store"
    )))
}

impl<S> PoolSuite<S> for NotApplicable {
    fn operation(_: &S, _: PoolTest) -> Option<&'static str> {
        None
    }
    fn load(_: &mut S, _: &[BenchRow]) -> impl Future<Output = Result<()>> + Send {
        no_pool_suite()
    }
    fn large(_: &mut S, _: u32) -> impl Future<Output = Result<Vec<BenchRow>>> + Send {
        no_pool_suite()
    }
    fn point(_: &mut S, _: i32) -> impl Future<Output = Result<Option<BenchRow>>> + Send {
        no_pool_suite()
    }
    fn batch_reset(_: &mut S) -> impl Future<Output = Result<()>> + Send {
        no_pool_suite()
    }
    fn batch_insert(_: &mut S, _: &[BenchRow]) -> impl Future<Output = Result<()>> + Send {
        no_pool_suite()
    }
    fn batch_count(_: &mut S) -> impl Future<Output = Result<u64>> + Send {
        no_pool_suite()
    }
}

/// How the YCSB suite reaches a store of type `S` (see [`Store::Ycsb`]).
pub trait YcsbSuite<S> {
    fn operation(store: &S, op: OpKind) -> Option<&'static str>;
    fn lacking(store: &S, op: OpKind) -> String;
    fn reset(store: &mut S, table: &YcsbTable) -> impl Future<Output = Result<()>> + Send;
    fn use_table(store: &mut S, table: &YcsbTable) -> impl Future<Output = Result<()>> + Send;
    fn insert(
        store: &mut S,
        key: &str,
        values: &[String],
    ) -> impl Future<Output = Result<()>> + Send;
    fn read(
        store: &mut S,
        key: &str,
        field: Option<u16>,
    ) -> impl Future<Output = Result<Option<YcsbFields>>> + Send;
    fn update(
        store: &mut S,
        key: &str,
        values: &[(u16, String)],
    ) -> impl Future<Output = Result<()>> + Send;
    fn scan(
        store: &mut S,
        start: &str,
        count: u32,
        field: Option<u16>,
    ) -> impl Future<Output = Result<Vec<(String, YcsbFields)>>> + Send;
}

impl<S: YcsbStore> YcsbSuite<S> for Supported {
    fn operation(store: &S, op: OpKind) -> Option<&'static str> {
        store.ycsb_operation(op)
    }
    fn lacking(store: &S, op: OpKind) -> String {
        store.ycsb_lacking(op)
    }
    fn reset(store: &mut S, table: &YcsbTable) -> impl Future<Output = Result<()>> + Send {
        store.ycsb_reset(table)
    }
    fn use_table(store: &mut S, table: &YcsbTable) -> impl Future<Output = Result<()>> + Send {
        store.ycsb_use(table)
    }
    fn insert(
        store: &mut S,
        key: &str,
        values: &[String],
    ) -> impl Future<Output = Result<()>> + Send {
        store.ycsb_insert(key, values)
    }
    fn read(
        store: &mut S,
        key: &str,
        field: Option<u16>,
    ) -> impl Future<Output = Result<Option<YcsbFields>>> + Send {
        store.ycsb_read(key, field)
    }
    fn update(
        store: &mut S,
        key: &str,
        values: &[(u16, String)],
    ) -> impl Future<Output = Result<()>> + Send {
        store.ycsb_update(key, values)
    }
    fn scan(
        store: &mut S,
        start: &str,
        count: u32,
        field: Option<u16>,
    ) -> impl Future<Output = Result<Vec<(String, YcsbFields)>>> + Send {
        store.ycsb_scan(start, count, field)
    }
}

/// The answer of every YCSB operation of a store without the suite (never asked for: the
/// suite asks [`YcsbSuite::operation`] first).
fn no_ycsb_suite<T>() -> std::future::Ready<Result<T>> {
    std::future::ready(Err(anyhow!(
        "the YCSB suite is not applicable to this store"
    )))
}

impl<S> YcsbSuite<S> for NotApplicable {
    fn operation(_: &S, _: OpKind) -> Option<&'static str> {
        None
    }
    fn lacking(_: &S, _: OpKind) -> String {
        "the store has no YCSB suite".to_string()
    }
    fn reset(_: &mut S, _: &YcsbTable) -> impl Future<Output = Result<()>> + Send {
        no_ycsb_suite()
    }
    fn use_table(_: &mut S, _: &YcsbTable) -> impl Future<Output = Result<()>> + Send {
        no_ycsb_suite()
    }
    fn insert(_: &mut S, _: &str, _: &[String]) -> impl Future<Output = Result<()>> + Send {
        no_ycsb_suite()
    }
    fn read(
        _: &mut S,
        _: &str,
        _: Option<u16>,
    ) -> impl Future<Output = Result<Option<YcsbFields>>> + Send {
        no_ycsb_suite()
    }
    fn update(_: &mut S, _: &str, _: &[(u16, String)]) -> impl Future<Output = Result<()>> + Send {
        no_ycsb_suite()
    }
    fn scan(
        _: &mut S,
        _: &str,
        _: u32,
        _: Option<u16>,
    ) -> impl Future<Output = Result<Vec<(String, YcsbFields)>>> + Send {
        no_ycsb_suite()
    }
}

/// A store's own open and URL check, which the registry calls.
pub trait Adapter: Store {
    /// The connection the driver, pool and YCSB suites open: `Self` for most stores; a
    /// type of its own where those suites measure another client than the classic suite's
    /// (PostgreSQL's tokio-postgres beside dbcompare's own connection). Each type has the
    /// suites' traits of its own client only, so the compiler checks which suite runs on
    /// which.
    type DriverSuites: Adapter;

    /// Checks a URL the way the store's driver will read it (the scheme and the host are
    /// checked for every store already); the error says what is wrong, without the URL.
    fn check_url(raw: &str) -> Result<()>;

    /// Opens a connection ready for [`Store::reset`].
    fn connect(spec: &ConnectSpec) -> impl Future<Output = Result<Self>> + Send;
}

/// A store's on-disk size: the figure the tables show, and others measured beside it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskUsage {
    /// The size the store's `size_method` describes.
    pub bytes: u64,
    /// Other sizes worth knowing (for example a local server's whole data directory).
    pub extra: BTreeMap<String, u64>,
}

impl DiskUsage {
    pub fn bytes(bytes: u64) -> Self {
        DiskUsage {
            bytes,
            extra: BTreeMap::new(),
        }
    }
}

/// Everything a store needs to open.
#[derive(Debug, Clone)]
pub struct ConnectSpec {
    /// The server to use (a `--url` or a local throw-away server); `None` for embedded.
    pub url: Option<StoreUrl>,
    /// A local server's data directory, whose bytes a store may report beside its figure.
    pub data_dir: Option<PathBuf>,
    pub durability: Durability,
    pub connect_timeout: Duration,
    /// Each store's own options (`--sqlite-path`, `--couchbase-query`, ...).
    pub options: StoreOptions,
}

impl ConnectSpec {
    /// How a unit test connects to its throw-away server of `kind` at `url`.
    #[cfg(test)]
    pub fn for_test(kind: StoreKind, url: &str) -> ConnectSpec {
        ConnectSpec {
            url: Some(StoreUrl::parse(kind, url).expect("a throw-away server's URL")),
            data_dir: None,
            durability: Durability::Relaxed,
            connect_timeout: Duration::from_secs(10),
            options: Default::default(),
        }
    }

    /// The server URL a server store connects to.
    pub fn server_url(&self, kind: StoreKind) -> Result<&StoreUrl> {
        self.url
            .as_ref()
            .ok_or_else(|| anyhow!("{kind} needs a server URL"))
    }
}

/// Bytes of every file under `path` (a local server's data directory).
pub fn dir_bytes(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if meta.is_dir() {
        std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| dir_bytes(&e.path()))
            .sum()
    } else {
        meta.len()
    }
}
