//! The `Store` trait every store implements, the closed set of stores, and how to open one.

use std::future::Future;
use std::path::PathBuf;

use anyhow::Result;
use clap::ValueEnum;

use crate::record::Record;
use crate::report::model::StoreInfo;

pub mod sqlite;

/// One connection to a store, as the benchmark drives it. Every method is one round of work
/// the suites time; implementations do nothing else on these paths (no logging, no
/// re-preparing statements).
pub trait Store: Send {
    /// Version, deployment, durability settings read back from the store, search and write
    /// paths and how the size is measured.
    fn describe(&mut self) -> impl Future<Output = Result<StoreInfo>> + Send;

    /// Drops and recreates the benchmark's schema with every index, empty.
    fn reset(&mut self) -> impl Future<Output = Result<()>> + Send;

    /// Inserts one record in its own transaction (or the store's atomic single write).
    fn insert(&mut self, record: &Record) -> impl Future<Output = Result<()>> + Send;

    /// Finds the record with this `unique_id` through the store's index, fully decoded.
    fn find(&mut self, unique_id: &str) -> impl Future<Output = Result<Option<Record>>> + Send;

    /// Flushes what the store buffers, then measures its on-disk size in bytes.
    fn disk_usage(&mut self) -> impl Future<Output = Result<u64>> + Send;
}

/// Every store dbcompare knows, in the order `all` runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum)]
pub enum StoreKind {
    /// Embedded SQLite (bundled): runs anywhere, no server.
    Sqlite,
}

impl StoreKind {
    pub const ALL: [StoreKind; 1] = [StoreKind::Sqlite];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            StoreKind::Sqlite => "sqlite",
        }
    }
}

impl std::fmt::Display for StoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything a store needs to open, resolved from flags before any store starts.
#[derive(Debug, Clone, Default)]
pub struct StoreOptions {
    /// `--sqlite-path`: a database file to use (and keep) instead of a temporary one.
    pub sqlite_path: Option<PathBuf>,
}

/// Whether and how a store can run on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Ready to run; says how (`embedded SQLite 3.46.0`).
    Available(String),
    /// Cannot run here; says what would fix it.
    Unavailable(String),
}

impl StoreKind {
    /// Whether this store can run with these options, without starting anything.
    pub fn availability(self, _options: &StoreOptions) -> Availability {
        match self {
            StoreKind::Sqlite => Availability::Available(sqlite::availability()),
        }
    }

    /// Opens a connection ready for [`Store::reset`].
    pub async fn connect(self, options: &StoreOptions) -> Result<AnyStore> {
        Ok(match self {
            StoreKind::Sqlite => AnyStore::Sqlite(sqlite::SqliteStore::open(options)?),
        })
    }
}

/// An open store of any kind (static dispatch: no allocation per operation).
pub enum AnyStore {
    Sqlite(sqlite::SqliteStore),
}

macro_rules! dispatch {
    ($self:ident, $store:ident => $call:expr) => {
        match $self {
            AnyStore::Sqlite($store) => $call,
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
    async fn disk_usage(&mut self) -> Result<u64> {
        dispatch!(self, s => s.disk_usage().await)
    }
}
