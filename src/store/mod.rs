//! The `Store` trait every store implements, the closed set of stores, their URLs, and how
//! to open one.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use crate::error::UsageError;
use crate::record::Record;
use crate::report::model::StoreInfo;
use crate::suite::driver::DriverTest;
use crate::suite::pool::{BenchRow, PoolTest};

pub mod aerospike;
pub mod couchbase;
pub mod mongodb;
pub mod mysql;
pub mod postgres;
pub mod redis;
pub mod sqlite;

/// The table (or key prefix) the benchmark owns; a reset drops it and touches nothing else.
pub const TABLE: &str = "dbcompare_records";

/// One connection to a store, as the benchmark drives it. Every method is one round of work
/// the suites time; implementations do nothing else on these paths (no logging, no
/// re-preparing statements).
pub trait Store: Send {
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

    /// The driver suite: what this store runs for `test` (`SELECT 1, simple protocol`), or
    /// `None` when it has no such operation (reported as not applicable).
    fn driver_operation(&self, _test: DriverTest) -> Option<&'static str> {
        None
    }

    /// Runs one operation of a driver test (`i` is the iteration, for parameters) and
    /// checks its answer. Statements are prepared on first use, outside any timing that
    /// matters (every test has a warm-up run).
    fn driver(&mut self, test: DriverTest, _i: u64) -> impl Future<Output = Result<()>> + Send {
        async move { Err(anyhow!("{} is not applicable to this store", test.name())) }
    }

    /// The pool suite: what this store runs for `test`, or `None` (not applicable).
    fn pool_operation(&self, _test: PoolTest) -> Option<&'static str> {
        None
    }

    /// Creates `benchmark_data` (and `benchmark_batch`) and loads `rows` into it.
    fn pool_load(&mut self, _rows: &[BenchRow]) -> impl Future<Output = Result<()>> + Send {
        async { Err(anyhow!("the pool suite is not applicable to this store")) }
    }

    /// `benchmark_data` rows with `id <= max_id`, in id order, every column decoded.
    fn pool_large(&mut self, _max_id: u32) -> impl Future<Output = Result<Vec<BenchRow>>> + Send {
        async { Err(anyhow!("the pool suite is not applicable to this store")) }
    }

    /// The `benchmark_data` row with this id.
    fn pool_point(&mut self, _id: i32) -> impl Future<Output = Result<Option<BenchRow>>> + Send {
        async { Err(anyhow!("the pool suite is not applicable to this store")) }
    }

    /// Empties `benchmark_batch`.
    fn pool_batch_reset(&mut self) -> impl Future<Output = Result<()>> + Send {
        async { Err(anyhow!("the pool suite is not applicable to this store")) }
    }

    /// Inserts `rows` into `benchmark_batch` with the store's batch path.
    fn pool_batch_insert(&mut self, _rows: &[BenchRow]) -> impl Future<Output = Result<()>> + Send {
        async { Err(anyhow!("the pool suite is not applicable to this store")) }
    }

    /// Rows in `benchmark_batch`.
    fn pool_batch_count(&mut self) -> impl Future<Output = Result<u64>> + Send {
        async { Err(anyhow!("the pool suite is not applicable to this store")) }
    }

    /// Ends the connection with the driver's goodbye to the server, where it has one (by
    /// default the store is simply dropped). The suites call it after a connection's last
    /// operation, on the event loop the connection was opened on.
    fn close(self) -> impl Future<Output = Result<()>> + Send
    where
        Self: Sized,
    {
        async { Ok(()) }
    }
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

/// Every store dbcompare knows, in the order `all` runs them.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    /// Embedded SQLite (bundled): runs anywhere, no server.
    Sqlite,
    /// PostgreSQL, records in a JSONB column.
    Postgres,
    /// MySQL, Percona or MariaDB, records in a JSON column.
    Mysql,
    /// MongoDB, records as BSON documents (URL only: no server is packaged here).
    Mongodb,
    /// Redis, records bincode-encoded under their unique_id.
    Redis,
    /// Aerospike, records as bins (URL only).
    Aerospike,
    /// Couchbase, records as JSON documents (URL only).
    Couchbase,
}

impl StoreKind {
    pub const ALL: [StoreKind; 7] = [
        StoreKind::Sqlite,
        StoreKind::Postgres,
        StoreKind::Mysql,
        StoreKind::Mongodb,
        StoreKind::Redis,
        StoreKind::Aerospike,
        StoreKind::Couchbase,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            StoreKind::Sqlite => "sqlite",
            StoreKind::Postgres => "postgres",
            StoreKind::Mysql => "mysql",
            StoreKind::Mongodb => "mongodb",
            StoreKind::Redis => "redis",
            StoreKind::Aerospike => "aerospike",
            StoreKind::Couchbase => "couchbase",
        }
    }

    /// The URL schemes this store accepts (none for an embedded store).
    pub fn schemes(self) -> &'static [&'static str] {
        match self {
            StoreKind::Sqlite => &[],
            StoreKind::Postgres => postgres::SCHEMES,
            StoreKind::Mysql => mysql::SCHEMES,
            StoreKind::Mongodb => mongodb::SCHEMES,
            StoreKind::Redis => redis::SCHEMES,
            StoreKind::Aerospike => aerospike::SCHEMES,
            StoreKind::Couchbase => couchbase::SCHEMES,
        }
    }

    /// The environment variable that may hold this store's URL.
    pub fn url_env(self) -> String {
        format!("DBCOMPARE_{}_URL", self.name().to_uppercase())
    }

    /// Whether the store is embedded (no server, no URL).
    pub fn is_embedded(self) -> bool {
        self == StoreKind::Sqlite
    }
}

impl std::fmt::Display for StoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether commits must be on disk before they are acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// A commit is on disk before it is acknowledged (fsync on every commit).
    #[default]
    Durable,
    /// Each store's documented fast mode (commits flushed in the background).
    Relaxed,
}

impl Durability {
    pub fn name(self) -> &'static str {
        match self {
            Durability::Durable => "durable",
            Durability::Relaxed => "relaxed",
        }
    }
}

/// A server URL given for a store, checked against that store's schemes and driver.
#[derive(Clone, PartialEq, Eq)]
pub struct StoreUrl {
    raw: String,
    masked: String,
    host: String,
    port: u16,
    password: Option<String>,
}

impl std::fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.masked)
    }
}

impl StoreUrl {
    /// Parses `raw` as a URL for `kind`; refuses another store's scheme and anything the
    /// store's driver would refuse. Errors never show the password.
    pub fn parse(kind: StoreKind, raw: &str) -> Result<Self, UsageError> {
        let bad = |why: String| UsageError::new(format!("--url {kind}=...: {why}"));
        if kind.is_embedded() {
            return Err(bad(format!("{kind} is embedded and takes no URL")));
        }
        let url = url::Url::parse(raw).map_err(|e| bad(format!("not a valid URL ({e})")))?;
        let mut masked_url = url.clone();
        if url.password().is_some() {
            let _ = masked_url.set_password(Some("***"));
        }
        let masked = masked_url.to_string();
        if !kind.schemes().contains(&url.scheme()) {
            let owner = StoreKind::ALL
                .into_iter()
                .find(|k| k.schemes().contains(&url.scheme()));
            let hint = owner.map_or(String::new(), |k| format!(" (that is a {k} URL)"));
            return Err(bad(format!(
                "{masked}: scheme '{}' is not one of {}{hint}",
                url.scheme(),
                kind.schemes().join(", ")
            )));
        }
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| bad(format!("{masked}: no host")))?
            .to_string();
        let port = url.port().unwrap_or(match kind {
            StoreKind::Postgres => 5432,
            StoreKind::Mysql => 3306,
            StoreKind::Mongodb => 27017,
            StoreKind::Aerospike => 3000,
            StoreKind::Couchbase => 11210,
            _ => 6379,
        });
        let checked = match kind {
            StoreKind::Postgres => postgres::check_url(raw),
            StoreKind::Mysql => mysql::check_url(raw),
            StoreKind::Mongodb => mongodb::check_url(raw),
            StoreKind::Redis => redis::check_url(raw),
            StoreKind::Aerospike => aerospike::check_url(raw),
            StoreKind::Couchbase => couchbase::check_url(raw),
            StoreKind::Sqlite => Ok(()),
        };
        checked.map_err(|e| bad(format!("{masked}: {e}")))?;
        Ok(StoreUrl {
            raw: raw.to_string(),
            masked,
            host,
            port,
            password: url.password().map(str::to_string).filter(|p| !p.is_empty()),
        })
    }

    /// The URL itself, password included: only for the driver.
    pub fn expose(&self) -> &str {
        &self.raw
    }

    /// The URL with its password replaced by `***`: for every message and report.
    pub fn masked(&self) -> &str {
        &self.masked
    }

    /// `host:port`, for messages.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The password, so that reports can be scrubbed of it.
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }
}

/// A URL's percent-encoded user or password, decoded (`p%40ss` -> `p@ss`).
pub fn percent_decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={s}").as_bytes())
        .next()
        .map_or_else(|| s.to_string(), |(_, v)| v.into_owned())
}

/// `text` with the password of every `scheme://user:password@` in it replaced by `***`.
pub fn mask_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail.find(['/', ' ', '\'', '"']).unwrap_or(tail.len());
        match tail[..end].rfind('@') {
            Some(at) => {
                let userinfo = &tail[..at];
                match userinfo.find(':') {
                    Some(colon) => {
                        out.push_str(&userinfo[..colon]);
                        out.push_str(":***");
                    }
                    None => out.push_str(userinfo),
                }
                out.push_str(&tail[at..end]);
            }
            None => out.push_str(&tail[..end]),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
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
    /// `--sqlite-path`.
    pub sqlite_path: Option<PathBuf>,
    /// `--couchbase-query`: search through SQL++ instead of KV get.
    pub couchbase_query: bool,
    /// `--mongodb-transactions`: when inserts run in a session transaction.
    pub mongodb_transactions: mongodb::Transactions,
}

impl StoreKind {
    /// Opens a connection ready for [`Store::reset`], within the connect timeout.
    pub async fn connect(self, spec: &ConnectSpec) -> Result<AnyStore> {
        if self.is_embedded() {
            return Ok(AnyStore::Sqlite(sqlite::SqliteStore::open(spec)?));
        }
        let url = spec
            .url
            .as_ref()
            .ok_or_else(|| anyhow!("{self} needs a server URL"))?;
        let connecting = async {
            anyhow::Ok(match self {
                StoreKind::Postgres => {
                    AnyStore::Postgres(postgres::PostgresStore::connect(url, spec).await?)
                }
                StoreKind::Mysql => AnyStore::Mysql(mysql::MysqlStore::connect(url, spec).await?),
                StoreKind::Mongodb => {
                    AnyStore::Mongodb(mongodb::MongoStore::connect(url, spec).await?)
                }
                StoreKind::Redis => AnyStore::Redis(redis::RedisStore::connect(url, spec).await?),
                StoreKind::Aerospike => {
                    AnyStore::Aerospike(aerospike::AerospikeStore::connect(url, spec).await?)
                }
                StoreKind::Couchbase => {
                    AnyStore::Couchbase(couchbase::CouchbaseStore::connect(url, spec).await?)
                }
                StoreKind::Sqlite => unreachable!("handled above"),
            })
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

/// An open store of any kind (static dispatch: no allocation per operation).
pub enum AnyStore {
    Sqlite(sqlite::SqliteStore),
    Postgres(postgres::PostgresStore),
    Mysql(mysql::MysqlStore),
    Mongodb(mongodb::MongoStore),
    Redis(redis::RedisStore),
    Aerospike(aerospike::AerospikeStore),
    Couchbase(couchbase::CouchbaseStore),
}

macro_rules! dispatch {
    ($self:ident, $store:ident => $call:expr) => {
        match $self {
            AnyStore::Sqlite($store) => $call,
            AnyStore::Postgres($store) => $call,
            AnyStore::Mysql($store) => $call,
            AnyStore::Mongodb($store) => $call,
            AnyStore::Redis($store) => $call,
            AnyStore::Aerospike($store) => $call,
            AnyStore::Couchbase($store) => $call,
        }
    };
}

impl Store for AnyStore {
    async fn describe(&mut self) -> Result<StoreInfo> {
        dispatch!(self, s => s.describe().await)
    }
    async fn reset(&mut self) -> Result<()> {
        dispatch!(self, s => s.reset().await)
    }
    async fn insert(&mut self, record: &Record) -> Result<()> {
        dispatch!(self, s => s.insert(record).await)
    }
    async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
        dispatch!(self, s => s.find(unique_id).await)
    }
    async fn disk_usage(&mut self) -> Result<DiskUsage> {
        dispatch!(self, s => s.disk_usage().await)
    }
    async fn close(self) -> Result<()> {
        dispatch!(self, s => s.close().await)
    }
    fn driver_operation(&self, test: DriverTest) -> Option<&'static str> {
        dispatch!(self, s => s.driver_operation(test))
    }
    async fn driver(&mut self, test: DriverTest, i: u64) -> Result<()> {
        dispatch!(self, s => s.driver(test, i).await)
    }
    fn pool_operation(&self, test: PoolTest) -> Option<&'static str> {
        dispatch!(self, s => s.pool_operation(test))
    }
    async fn pool_load(&mut self, rows: &[BenchRow]) -> Result<()> {
        dispatch!(self, s => s.pool_load(rows).await)
    }
    async fn pool_large(&mut self, max_id: u32) -> Result<Vec<BenchRow>> {
        dispatch!(self, s => s.pool_large(max_id).await)
    }
    async fn pool_point(&mut self, id: i32) -> Result<Option<BenchRow>> {
        dispatch!(self, s => s.pool_point(id).await)
    }
    async fn pool_batch_reset(&mut self) -> Result<()> {
        dispatch!(self, s => s.pool_batch_reset().await)
    }
    async fn pool_batch_insert(&mut self, rows: &[BenchRow]) -> Result<()> {
        dispatch!(self, s => s.pool_batch_insert(rows).await)
    }
    async fn pool_batch_count(&mut self) -> Result<u64> {
        dispatch!(self, s => s.pool_batch_count().await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_in_text_are_masked() {
        assert_eq!(
            mask_userinfo("x redis://:pw@h:1/0 and postgres://u:p@ss@h/db, mysql://root@h/db"),
            "x redis://:***@h:1/0 and postgres://u:***@h/db, mysql://root@h/db"
        );
        assert_eq!(mask_userinfo("no url"), "no url");
    }

    #[test]
    fn urls_are_masked_and_checked_against_their_store() {
        let u = StoreUrl::parse(
            StoreKind::Postgres,
            "postgres://bob:s3cret@db.example:6000/x",
        )
        .unwrap();
        assert_eq!(u.masked(), "postgres://bob:***@db.example:6000/x");
        assert_eq!(u.address(), "db.example:6000");
        assert_eq!(u.password(), Some("s3cret"));
        assert!(!format!("{u:?}").contains("s3cret"));

        let wrong = StoreUrl::parse(StoreKind::Postgres, "redis://:pw@h/0")
            .unwrap_err()
            .to_string();
        assert!(wrong.contains("that is a redis URL"), "{wrong}");
        assert!(!wrong.contains("pw@"), "{wrong}");

        let e = StoreUrl::parse(StoreKind::Mysql, "not a url")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--url mysql=...: not a valid URL"), "{e}");
        assert!(StoreUrl::parse(StoreKind::Sqlite, "sqlite://x").is_err());
        assert_eq!(
            StoreUrl::parse(StoreKind::Redis, "redis://127.0.0.1/0")
                .unwrap()
                .address(),
            "127.0.0.1:6379"
        );
        assert_eq!(
            StoreUrl::parse(StoreKind::Mysql, "mysql://root@h/db")
                .unwrap()
                .address(),
            "h:3306"
        );
    }
}
