//! MongoDB (the official `mongodb` driver): the original benchmark's document, a unique
//! index on unique_id and indexes on data.name and data.age; insert_one per record inside a
//! session transaction on a replica set or sharded cluster, otherwise a single-document
//! atomic write (reported as such); write concern `w:1, j:true` (durable) or `j:false`
//! (relaxed); find_one by unique_id, every field decoded.
//!
//! The driver suite runs the nearest native operations (ping, find_one of fixed documents,
//! aggregate `$replaceRoot` for the echoes, raw BSON for the Raw tests); the pool suite keeps
//! the asyncmy seed's table as the `benchmark_data` collection (`_id` = id, BSON dates,
//! score as Decimal128), loaded and batch-inserted with insert_many.

use std::collections::BTreeMap;

use anyhow::{Context, Result, bail};
use chrono::{NaiveDateTime, TimeZone, Utc};
use futures::TryStreamExt;
use mongodb::bson::{self, Decimal128, Document, RawDocumentBuf, doc};
use mongodb::options::{
    Acknowledgment, ClientOptions, CollectionOptions, IndexOptions, WriteConcern,
};
use mongodb::{Client, ClientSession, Collection, Database, IndexModel};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::{ConnectSpec, DiskUsage, Durability, Store, StoreUrl, TABLE};
use crate::record::{Data, Record};
use crate::report::model::StoreInfo;
use crate::suite::driver::{DriverTest, check_large, large_string};
use crate::suite::pool::{BenchRow, PoolTest};
use crate::suite::watchdog;

pub const SCHEMES: &[&str] = &["mongodb", "mongodb+srv"];

/// When MongoDB inserts run in a session transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Transactions {
    /// On a replica set or sharded cluster; a single-document write on a standalone server.
    #[default]
    Auto,
    /// Always (a standalone MongoDB refuses them: the store fails).
    Always,
    /// Never: single-document atomic writes everywhere, like the other document stores.
    Never,
}

/// The database used when the URL names none.
const DEFAULT_DATABASE: &str = "dbcompare";

/// Server error code of a command the server does not have.
const COMMAND_NOT_FOUND: i32 = 59;

/// Checks a URL the way the driver will read it (no DNS lookups for +srv here).
pub fn check_url(raw: &str) -> Result<()> {
    let parsed = url::Url::parse(raw)?;
    if parsed.host_str().is_none_or(str::is_empty) {
        bail!("no host");
    }
    Ok(())
}

/// The document as stored: the record's fields with `created_at` as a BSON date.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Doc {
    pub id: i64,
    pub unique_id: String,
    pub created_by: i64,
    pub updated_by: i64,
    pub deleted_by: i64,
    pub created_at: bson::DateTime,
    pub data: Data,
}

impl From<&Record> for Doc {
    fn from(r: &Record) -> Self {
        Doc {
            id: r.id,
            unique_id: r.unique_id.clone(),
            created_by: r.created_by,
            updated_by: r.updated_by,
            deleted_by: r.deleted_by,
            created_at: bson::DateTime::from_millis(r.created_at.timestamp_millis()),
            data: r.data.clone(),
        }
    }
}

impl TryFrom<Doc> for Record {
    type Error = anyhow::Error;

    fn try_from(d: Doc) -> Result<Self> {
        Ok(Record {
            id: d.id,
            unique_id: d.unique_id,
            created_by: d.created_by,
            updated_by: d.updated_by,
            deleted_by: d.deleted_by,
            created_at: Utc
                .timestamp_millis_opt(d.created_at.timestamp_millis())
                .single()
                .context("created_at out of range")?,
            data: d.data,
        })
    }
}

/// The indexes reset creates: unique on unique_id, plain on data.name and data.age.
pub fn index_models() -> Vec<IndexModel> {
    let unique = IndexOptions::builder()
        .unique(true)
        .name("dbcompare_records_unique_id".to_string())
        .build();
    let named = |name: &str| IndexOptions::builder().name(name.to_string()).build();
    vec![
        IndexModel::builder()
            .keys(doc! { "unique_id": 1 })
            .options(unique)
            .build(),
        IndexModel::builder()
            .keys(doc! { "data.name": 1 })
            .options(named("dbcompare_records_name"))
            .build(),
        IndexModel::builder()
            .keys(doc! { "data.age": 1 })
            .options(named("dbcompare_records_age"))
            .build(),
    ]
}

/// The write concern of a durability mode.
pub fn write_concern(durability: Durability) -> WriteConcern {
    WriteConcern::builder()
        .w(Acknowledgment::Nodes(1))
        .journal(durability == Durability::Durable)
        .build()
}

/// The filter of a search.
pub fn search_filter(unique_id: &str) -> Document {
    doc! { "unique_id": unique_id }
}

/// How the server is deployed, from `hello`: transactions need a replica set or mongos.
fn topology(hello: &Document) -> (&'static str, Option<String>) {
    if hello.get_str("msg") == Ok("isdbgrid") {
        ("sharded cluster", None)
    } else if let Ok(set) = hello.get_str("setName") {
        ("replica set", Some(set.to_string()))
    } else {
        ("standalone", None)
    }
}

/// The pool suite's collections (the asyncmy seed's tables).
const POOL_DATA: &str = "benchmark_data";
const POOL_BATCH: &str = "benchmark_batch";

/// Documents per insert_many while loading `benchmark_data` (ordered, outside the timings).
const LOAD_CHUNK: usize = 10_000;

/// A `benchmark_data` row as stored: `_id` is the id, the timestamps are BSON dates (the
/// rows' naive times taken as UTC), the score a Decimal128 (exact: it goes through the
/// decimal's text), `data` absent when there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchDoc {
    #[serde(rename = "_id")]
    pub id: i32,
    pub user_id: i32,
    pub username: String,
    pub email: String,
    pub created_at: bson::DateTime,
    pub updated_at: bson::DateTime,
    pub score: Decimal128,
    pub is_active: bool,
    /// Absent (or null) for no data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}

/// A naive time (taken as UTC) as a BSON date.
fn bson_date(t: NaiveDateTime) -> bson::DateTime {
    bson::DateTime::from_millis(t.and_utc().timestamp_millis())
}

/// A BSON date as the naive UTC time it was written from.
fn naive_utc(t: bson::DateTime) -> Result<NaiveDateTime> {
    chrono::DateTime::from_timestamp_millis(t.timestamp_millis())
        .map(|d| d.naive_utc())
        .with_context(|| format!("date {t} out of range"))
}

/// A decimal as a Decimal128 with the same digits and scale (`123.40` stays `123.40`).
pub fn decimal128(d: Decimal) -> Result<Decimal128> {
    d.to_string()
        .parse()
        .with_context(|| format!("{d} as a Decimal128"))
}

/// A Decimal128 as a decimal, refused if it does not fit exactly.
pub fn decimal(d: Decimal128) -> Result<Decimal> {
    let text = d.to_string();
    Decimal::from_str_exact(&text).with_context(|| format!("Decimal128 {text} as a decimal"))
}

impl TryFrom<&BenchRow> for BenchDoc {
    type Error = anyhow::Error;

    fn try_from(r: &BenchRow) -> Result<Self> {
        Ok(BenchDoc {
            id: r.id,
            user_id: r.user_id,
            username: r.username.clone(),
            email: r.email.clone(),
            created_at: bson_date(r.created_at),
            updated_at: bson_date(r.updated_at),
            score: decimal128(r.score)?,
            is_active: r.is_active,
            data: r.data.clone(),
        })
    }
}

impl TryFrom<BenchDoc> for BenchRow {
    type Error = anyhow::Error;

    fn try_from(d: BenchDoc) -> Result<Self> {
        Ok(BenchRow {
            id: d.id,
            user_id: d.user_id,
            username: d.username,
            email: d.email,
            created_at: naive_utc(d.created_at)?,
            updated_at: naive_utc(d.updated_at)?,
            score: decimal(d.score)?,
            is_active: d.is_active,
            data: d.data,
        })
    }
}

/// The pool suite's indexes (the seed's idx_user_id and idx_created_at; `_id` is the key).
pub fn pool_index_models() -> Vec<IndexModel> {
    let named = |name: &str| IndexOptions::builder().name(name.to_string()).build();
    vec![
        IndexModel::builder()
            .keys(doc! { "user_id": 1 })
            .options(named("idx_user_id"))
            .build(),
        IndexModel::builder()
            .keys(doc! { "created_at": 1 })
            .options(named("idx_created_at"))
            .build(),
    ]
}

/// The Large Result Set filter: `_id <= max_id`.
pub fn pool_range_filter(max_id: u32) -> Result<Document> {
    let max_id = i32::try_from(max_id).with_context(|| format!("id {max_id} beyond int32"))?;
    Ok(doc! { "_id": { "$lte": max_id } })
}

pub struct MongoStore {
    client: Client,
    db: Database,
    records: Collection<Doc>,
    durability: Durability,
    /// A session when the server runs transactions (replica set or sharded cluster).
    session: Option<ClientSession>,
    topology: String,
    /// The driver suite's fixed documents, once written.
    driver_docs: Option<DriverDocs>,
    /// The pool suite's collections, with the store's write concern.
    pool_data: Collection<BenchDoc>,
    pool_batch: Collection<BenchDoc>,
}

/// The driver suite's collection: a small document and one with 10 kB values.
const DRIVER_COLLECTION: &str = "dbcompare_driver";

/// The driver suite's collection, decoded as documents or left as raw BSON.
struct DriverDocs {
    docs: Collection<Document>,
    raw: Collection<RawDocumentBuf>,
}

/// The date EchoMixed5 sends: this many milliseconds after the epoch, plus the iteration.
const ECHO_DATE_MILLIS: i64 = 1_700_000_000_000;

/// The pipeline PreparedQueryRowParam sends: the fixed small document replaced by the
/// iteration, an Int64. An aggregate rather than find_one with a `$literal` projection,
/// and plain values rather than `$literal`: MongoDB takes the values of a `$replaceRoot`
/// document as constants (none is a `$` string or a document), and so does jongodb, which
/// ignores find projections and copies expression operators unevaluated.
pub fn param_pipeline(i: i64) -> Vec<Document> {
    echo_pipeline_of(doc! { "v": i })
}

/// The five values EchoMixed5 sends, of mixed BSON types.
pub fn echo_values(i: i64) -> Document {
    doc! {
        "i": i,
        "s": "abc",
        "t": bson::DateTime::from_millis(ECHO_DATE_MILLIS + i),
        "f": 1.024_f64,
        "b": i % 2 == 0,
    }
}

/// The pipeline EchoMixed5 sends.
pub fn echo_pipeline(i: i64) -> Vec<Document> {
    echo_pipeline_of(echo_values(i))
}

fn echo_pipeline_of(values: Document) -> Vec<Document> {
    vec![
        doc! { "$match": { "_id": "one" } },
        doc! { "$replaceRoot": { "newRoot": values } },
    ]
}

/// Checks an EchoMixed5 answer: each value decoded with its own BSON type.
pub fn check_echo(found: &Document, i: i64) -> Result<()> {
    let echoed = (
        found.get_i64("i").ok(),
        found.get_str("s").ok(),
        found.get_datetime("t").ok().map(|t| t.timestamp_millis()),
        found.get_f64("f").ok(),
        found.get_bool("b").ok(),
    );
    let expected = (
        Some(i),
        Some("abc"),
        Some(ECHO_DATE_MILLIS + i),
        Some(1.024),
        Some(i % 2 == 0),
    );
    if echoed != expected || found.len() != 5 {
        bail!("echo {i} gave {found}");
    }
    Ok(())
}

fn is_duplicate_key(e: &mongodb::error::Error) -> bool {
    match e.kind.as_ref() {
        mongodb::error::ErrorKind::Write(mongodb::error::WriteFailure::WriteError(w)) => {
            w.code == 11000
        }
        mongodb::error::ErrorKind::Command(c) => c.code == 11000,
        _ => false,
    }
}

fn is_command_not_found(e: &mongodb::error::Error) -> bool {
    matches!(e.kind.as_ref(), mongodb::error::ErrorKind::Command(c) if c.code == COMMAND_NOT_FOUND)
}

impl MongoStore {
    pub async fn connect(url: &StoreUrl, spec: &ConnectSpec) -> Result<Self> {
        let mut options = ClientOptions::parse(url.expose()).await?;
        options.connect_timeout = Some(spec.connect_timeout);
        options.server_selection_timeout = Some(spec.connect_timeout);
        options.app_name = Some("dbcompare".to_string());
        let database = options
            .default_database
            .clone()
            .unwrap_or_else(|| DEFAULT_DATABASE.to_string());
        let client = Client::with_options(options)?;
        let db = client.database(&database);
        let hello = db.run_command(doc! { "hello": 1 }).await?;
        let (kind, set) = topology(&hello);
        let transactions = match spec.mongodb_transactions {
            Transactions::Auto => kind != "standalone",
            Transactions::Always => true,
            Transactions::Never => false,
        };
        let session = match transactions {
            true => Some(client.start_session().await?),
            false => None,
        };
        let with_write_concern = || {
            CollectionOptions::builder()
                .write_concern(write_concern(spec.durability))
                .build()
        };
        let records = db.collection_with_options::<Doc>(TABLE, with_write_concern());
        let pool_data = db.collection_with_options::<BenchDoc>(POOL_DATA, with_write_concern());
        let pool_batch = db.collection_with_options::<BenchDoc>(POOL_BATCH, with_write_concern());
        Ok(MongoStore {
            client,
            db,
            records,
            durability: spec.durability,
            session,
            driver_docs: None,
            pool_data,
            pool_batch,
            topology: match set {
                Some(set) => format!("{kind} {set}"),
                None => kind.to_string(),
            },
        })
    }

    /// A command's answer, or `None` if the server does not have that command.
    async fn optional_command(&self, command: Document) -> Result<Option<Document>> {
        match self.db.run_command(command).await {
            Ok(answer) => Ok(Some(answer)),
            Err(e) if is_command_not_found(&e) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// insert_many of `rows` into `benchmark_batch` (ordered): inside a session transaction
    /// when the store runs its inserts in one, otherwise with the collection's write concern.
    async fn insert_batch(&mut self, rows: &[BenchRow]) -> Result<()> {
        let docs = rows
            .iter()
            .map(BenchDoc::try_from)
            .collect::<Result<Vec<_>>>()?;
        match &mut self.session {
            Some(session) => {
                session
                    .start_transaction()
                    .write_concern(write_concern(self.durability))
                    .await?;
                let inserted = self
                    .pool_batch
                    .insert_many(&docs)
                    .ordered(true)
                    .session(&mut *session)
                    .await;
                if let Err(e) = inserted {
                    let _ = session.abort_transaction().await;
                    return Err(e.into());
                }
                session.commit_transaction().await?;
            }
            None => {
                self.pool_batch.insert_many(&docs).ordered(true).await?;
            }
        }
        Ok(())
    }
}

/// Drops a collection; on servers without `drop` (for example in-memory test servers),
/// empties it instead.
async fn drop_or_empty<T: Send + Sync>(collection: &Collection<T>) -> Result<()> {
    match collection.drop().await {
        Ok(()) => Ok(()),
        Err(e) if is_command_not_found(&e) => {
            collection
                .delete_many(doc! {})
                .await
                .with_context(|| format!("emptying {}", collection.name()))?;
            Ok(())
        }
        Err(e) => Err(e).with_context(|| format!("dropping {}", collection.name())),
    }
}

impl Store for MongoStore {
    async fn describe(&mut self) -> Result<StoreInfo> {
        let build = self
            .client
            .database("admin")
            .run_command(doc! { "buildInfo": 1 })
            .await?;
        let version = build.get_str("version").unwrap_or("unknown").to_string();
        let product = if version.contains("jongodb") {
            "jongodb (MongoDB wire-compatible, in-memory; not MongoDB)"
        } else if build.get_document("psmdbVersion").is_ok() || version.contains("percona") {
            "Percona Server for MongoDB"
        } else {
            "MongoDB"
        };
        let wc = self.records.write_concern().cloned().unwrap_or_default();
        let mut settings = BTreeMap::from([
            ("topology".to_string(), self.topology.clone()),
            (
                "write_concern".to_string(),
                format!("w:1, j:{}", wc.journal.unwrap_or(false)),
            ),
        ]);
        let status = self.optional_command(doc! { "serverStatus": 1 }).await?;
        if let Some(engine) = status
            .as_ref()
            .and_then(|s| s.get_document("storageEngine").ok())
        {
            settings.insert(
                "storage_engine".to_string(),
                engine.get_str("name").unwrap_or("unknown").to_string(),
            );
        }
        let explain = self
            .optional_command(doc! {
                "explain": { "find": TABLE, "filter": search_filter("x"), "limit": 1 },
                "verbosity": "queryPlanner",
            })
            .await?;
        let search_path = explain
            .and_then(|e| {
                let plan = e
                    .get_document("queryPlanner")
                    .ok()?
                    .get_document("winningPlan")
                    .ok()?;
                Some(describe_plan(plan))
            })
            .unwrap_or_else(|| "find_one by unique_id (the server gave no query plan)".to_string());
        let durable = wc.journal == Some(true);
        Ok(StoreInfo {
            version: format!("{product} {version}"),
            durability: if durable { "durable" } else { "relaxed" }.to_string(),
            settings,
            search_path,
            write_path: if self.session.is_some() {
                "session transaction: insert_one; commitTransaction (one per record)".to_string()
            } else {
                format!(
                    "insert_one: single-document atomic write ({} server, no transaction)",
                    self.topology
                )
            },
            size_method: "dbStats storageSize + indexSize after fsync".to_string(),
        })
    }

    async fn reset(&mut self) -> Result<()> {
        drop_or_empty(&self.records).await?;
        self.records
            .create_indexes(index_models())
            .await
            .context("creating the benchmark indexes")?;
        Ok(())
    }

    async fn insert(&mut self, r: &Record) -> Result<()> {
        let doc = Doc::from(r);
        match &mut self.session {
            Some(session) => {
                session
                    .start_transaction()
                    .write_concern(write_concern(self.durability))
                    .await?;
                if let Err(e) = self.records.insert_one(&doc).session(&mut *session).await {
                    let _ = session.abort_transaction().await;
                    return Err(e.into());
                }
                session.commit_transaction().await?;
            }
            None => {
                self.records.insert_one(&doc).await?;
            }
        }
        Ok(())
    }

    async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
        let found = self.records.find_one(search_filter(unique_id)).await?;
        found.map(Record::try_from).transpose()
    }

    fn driver_operation(&self, test: DriverTest) -> Option<&'static str> {
        use DriverTest::*;
        Some(match test {
            SimpleExec | PreparedExec => "ping command (no prepared statements in MongoDB)",
            SimpleQueryRow | PreparedQueryRow => "find_one of a fixed small document by _id",
            SelectLargeString | SelectPreparedLargeString => {
                "find_one of a document holding a 10 kB string"
            }
            SelectLargeBytes | SelectPreparedLargeBytes => {
                "find_one of a document holding 10 kB of binary"
            }
            PreparedQueryRowParam => {
                "aggregate: $match the fixed small document, $replaceRoot { v: <iteration> }"
            }
            EchoMixed5 => {
                "aggregate: $match, $replaceRoot with 5 values: Int64, String, DateTime, Double, \
                 Boolean"
            }
            SelectLargeRaw | SelectPreparedLargeRaw => {
                "find_one of the 10 kB binary document as raw BSON, bytes borrowed (no Document)"
            }
            PreparedExecConcurrent(_) | PreparedQueryConcurrent(_) => return None,
        })
    }

    async fn driver(&mut self, test: DriverTest, i: u64) -> Result<()> {
        use DriverTest::*;
        if self.driver_docs.is_none() {
            let docs = self.db.collection::<Document>(DRIVER_COLLECTION);
            let fixed = [
                doc! { "_id": "one", "v": 1_i64 },
                doc! {
                    "_id": "large",
                    "s": large_string(),
                    "b": bson::Binary {
                        subtype: bson::spec::BinarySubtype::Generic,
                        bytes: large_string().into_bytes(),
                    },
                },
            ];
            // Every connection of a concurrent test gets here: the first one writes them.
            for d in fixed {
                match docs.insert_one(d).await {
                    Ok(_) => {}
                    Err(e) if is_duplicate_key(&e) => {}
                    Err(e) => return Err(e).context("writing the driver suite's documents"),
                }
            }
            self.driver_docs = Some(DriverDocs {
                raw: docs.clone_with_type(),
                docs,
            });
        }
        let DriverDocs { docs, raw } = self.driver_docs.as_ref().expect("written above");
        match test {
            SimpleExec | PreparedExec => {
                self.db.run_command(doc! { "ping": 1 }).await?;
            }
            SimpleQueryRow | PreparedQueryRow => {
                let found = docs
                    .find_one(doc! { "_id": "one" })
                    .await?
                    .context("no document")?;
                if found.get_i64("v") != Ok(1) {
                    bail!("the fixed document is {found}");
                }
            }
            SelectLargeString | SelectPreparedLargeString => {
                let found = docs
                    .find_one(doc! { "_id": "large" })
                    .await?
                    .context("no document")?;
                check_large(found.get_str("s")?.as_bytes())?;
            }
            SelectLargeBytes | SelectPreparedLargeBytes => {
                let found = docs
                    .find_one(doc! { "_id": "large" })
                    .await?
                    .context("no document")?;
                check_large(found.get_binary_generic("b")?)?;
            }
            PreparedQueryRowParam => {
                let i = i64::try_from(i)?;
                let mut cursor = docs.aggregate(param_pipeline(i)).await?;
                let found = cursor.try_next().await?.context("no document")?;
                if found.get_i64("v") != Ok(i) || found.len() != 1 {
                    bail!("echo {i} gave {found}");
                }
            }
            EchoMixed5 => {
                let i = i64::try_from(i)?;
                let mut cursor = docs.aggregate(echo_pipeline(i)).await?;
                let found = cursor.try_next().await?.context("no document")?;
                check_echo(&found, i)?;
            }
            SelectLargeRaw | SelectPreparedLargeRaw => {
                let found = raw
                    .find_one(doc! { "_id": "large" })
                    .await?
                    .context("no document")?;
                check_large(found.get_binary("b")?.bytes)?;
            }
            other => bail!("{} is not applicable to mongodb", other.name()),
        }
        Ok(())
    }

    fn pool_operation(&self, test: PoolTest) -> Option<&'static str> {
        Some(match test {
            PoolTest::LargeResultSet => {
                "find { _id: { $lte: <max> } } sorted by _id, every field decoded \
                 (BSON dates, score as Decimal128)"
            }
            PoolTest::ConcurrentQueries => "connect (new client) + find_one by _id, 50 at once",
            PoolTest::ConnectionPool => "find_one by _id over a 5-20 client pool, 50 workers",
            PoolTest::BatchInsert => match self.session {
                Some(_) => "insert_many of the whole batch, ordered, in one session transaction",
                None => "insert_many of the whole batch, ordered (no transaction)",
            },
        })
    }

    async fn pool_load(&mut self, rows: &[BenchRow]) -> Result<()> {
        drop_or_empty(&self.pool_data).await?;
        self.pool_data
            .create_indexes(pool_index_models())
            .await
            .context("creating the indexes of benchmark_data")?;
        for chunk in rows.chunks(LOAD_CHUNK) {
            let docs = chunk
                .iter()
                .map(BenchDoc::try_from)
                .collect::<Result<Vec<_>>>()?;
            self.pool_data
                .insert_many(&docs)
                .ordered(true)
                .await
                .context("loading benchmark_data")?;
            watchdog::alive();
        }
        self.pool_batch_reset().await
    }

    async fn pool_large(&mut self, max_id: u32) -> Result<Vec<BenchRow>> {
        let mut cursor = self
            .pool_data
            .find(pool_range_filter(max_id)?)
            .sort(doc! { "_id": 1 })
            .await?;
        let mut rows = Vec::new();
        while let Some(doc) = cursor.try_next().await? {
            rows.push(BenchRow::try_from(doc)?);
        }
        Ok(rows)
    }

    async fn pool_point(&mut self, id: i32) -> Result<Option<BenchRow>> {
        let found = self.pool_data.find_one(doc! { "_id": id }).await?;
        found.map(BenchRow::try_from).transpose()
    }

    async fn pool_batch_reset(&mut self) -> Result<()> {
        drop_or_empty(&self.pool_batch).await?;
        self.pool_batch
            .create_indexes(pool_index_models())
            .await
            .context("creating the indexes of benchmark_batch")?;
        Ok(())
    }

    async fn pool_batch_insert(&mut self, rows: &[BenchRow]) -> Result<()> {
        self.insert_batch(rows).await
    }

    async fn pool_batch_count(&mut self) -> Result<u64> {
        Ok(self.pool_batch.count_documents(doc! {}).await?)
    }

    /// Ends the session, then shuts the client down (its monitors and connection pool).
    async fn close(self) -> Result<()> {
        let MongoStore {
            client, session, ..
        } = self;
        drop(session);
        client.shutdown().await;
        Ok(())
    }

    async fn disk_usage(&mut self) -> Result<DiskUsage> {
        // fsync flushes every write to disk first (it needs the admin database).
        let fsync = self
            .client
            .database("admin")
            .run_command(doc! { "fsync": 1 })
            .await;
        match fsync {
            Err(e) if !is_command_not_found(&e) => return Err(e).context("fsync"),
            _ => {}
        }
        let stats = self
            .optional_command(doc! { "dbStats": 1 })
            .await?
            .context("the server has no dbStats command: no on-disk size to report")?;
        let number = |key: &str| -> Result<u64> {
            let value = stats
                .get(key)
                .with_context(|| format!("dbStats has no {key}"))?;
            let n = match value {
                bson::Bson::Int32(i) => f64::from(*i),
                bson::Bson::Int64(i) => *i as f64,
                bson::Bson::Double(d) => *d,
                other => bail!("dbStats {key} is {other}"),
            };
            Ok(n as u64)
        };
        Ok(DiskUsage::bytes(
            number("storageSize")? + number("indexSize")?,
        ))
    }
}

/// `IXSCAN dbcompare_records_unique_id` from a winning plan (stages nest via inputStage).
pub fn describe_plan(plan: &Document) -> String {
    let mut stages = Vec::new();
    let mut node = Some(plan);
    while let Some(n) = node {
        let stage = n.get_str("stage").unwrap_or("?");
        match n.get_str("indexName") {
            Ok(index) => stages.push(format!("{stage} {index}")),
            Err(_) => stages.push(stage.to_string()),
        }
        node = n.get_document("inputStage").ok();
    }
    stages.join(" <- ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::generate;

    #[test]
    fn documents_round_trip_every_field_through_bson() {
        for r in generate(4, &"micro".parse().unwrap(), 1) {
            let bytes = bson::to_vec(&Doc::from(&r)).unwrap();
            let back: Doc = bson::from_slice(&bytes).unwrap();
            assert_eq!(Record::try_from(back).unwrap(), r);
        }
    }

    #[test]
    fn documents_carry_native_dates_and_nested_data() {
        let r = &generate(4, &"micro".parse().unwrap(), 1)[0];
        let doc = bson::to_document(&Doc::from(r)).unwrap();
        assert!(matches!(
            doc.get("created_at"),
            Some(bson::Bson::DateTime(_))
        ));
        assert_eq!(
            doc.get_document("data").unwrap().get_str("name").unwrap(),
            r.data.name
        );
        assert_eq!(
            doc.get_document("data").unwrap().get_i64("age").unwrap(),
            r.data.age
        );
        assert_eq!(doc.get_str("unique_id").unwrap(), "micro-1");
    }

    #[test]
    fn indexes_and_queries_are_the_benchmarks() {
        let models = index_models();
        assert_eq!(models[0].keys, doc! { "unique_id": 1 });
        assert_eq!(models[0].options.as_ref().unwrap().unique, Some(true));
        assert_eq!(models[1].keys, doc! { "data.name": 1 });
        assert_eq!(models[2].keys, doc! { "data.age": 1 });
        assert_eq!(search_filter("tiny-4"), doc! { "unique_id": "tiny-4" });
        assert_eq!(write_concern(Durability::Durable).journal, Some(true));
        assert_eq!(write_concern(Durability::Relaxed).journal, Some(false));
    }

    #[test]
    fn topology_decides_transactions() {
        assert_eq!(
            topology(&doc! { "isWritablePrimary": true }).0,
            "standalone"
        );
        assert_eq!(
            topology(&doc! { "setName": "rs0" }),
            ("replica set", Some("rs0".into()))
        );
        assert_eq!(topology(&doc! { "msg": "isdbgrid" }).0, "sharded cluster");
    }

    #[test]
    fn bench_rows_round_trip_exactly_through_bson() {
        let rows = crate::suite::pool::rows(7, 10_000, 1);
        let edges = [0, 5, 150, 10_000, 9_999_999].map(|cents| Decimal::new(cents, 2));
        for score in rows.iter().map(|r| r.score).chain(edges) {
            // The Decimal128 keeps the digits and the scale (`1.50`, not `1.5`).
            let stored = decimal128(score).unwrap();
            assert_eq!(stored.to_string(), score.to_string());
            let back = decimal(stored).unwrap();
            assert_eq!((back, back.scale()), (score, score.scale()));
        }
        for r in &rows[..2_000] {
            let bytes = bson::to_vec(&BenchDoc::try_from(r).unwrap()).unwrap();
            let back: BenchDoc = bson::from_slice(&bytes).unwrap();
            assert_eq!(BenchRow::try_from(back).unwrap(), *r);
        }
    }

    #[test]
    fn bench_documents_carry_native_types() {
        let rows = crate::suite::pool::rows(7, 100, 1);
        let with_data = rows.iter().find(|r| r.data.is_some()).unwrap();
        let doc = bson::to_document(&BenchDoc::try_from(with_data).unwrap()).unwrap();
        assert_eq!(doc.keys().next().map(String::as_str), Some("_id"));
        assert_eq!(doc.get_i32("_id"), Ok(with_data.id));
        assert_eq!(doc.get_i32("user_id"), Ok(with_data.user_id));
        assert!(matches!(
            doc.get("created_at"),
            Some(bson::Bson::DateTime(_))
        ));
        assert!(matches!(
            doc.get("updated_at"),
            Some(bson::Bson::DateTime(_))
        ));
        assert!(matches!(doc.get("score"), Some(bson::Bson::Decimal128(_))));
        assert_eq!(doc.get_bool("is_active"), Ok(with_data.is_active));
        assert_eq!(doc.get_str("data").ok(), with_data.data.as_deref());

        let without = rows.iter().find(|r| r.data.is_none()).unwrap();
        let doc = bson::to_document(&BenchDoc::try_from(without).unwrap()).unwrap();
        assert!(!doc.contains_key("data"), "{doc}");
        // A null data (written by another client) reads back as none too.
        let mut with_null = doc.clone();
        with_null.insert("data", bson::Bson::Null);
        let back: BenchDoc = bson::from_document(with_null).unwrap();
        assert_eq!(BenchRow::try_from(back).unwrap(), *without);
    }

    #[test]
    fn decimals_that_do_not_fit_are_refused() {
        let big: Decimal128 = "1E+40".parse().unwrap();
        assert!(decimal(big).is_err());
        let nan: Decimal128 = "NaN".parse().unwrap();
        assert!(decimal(nan).is_err());
        assert_eq!(
            decimal(decimal128(Decimal::new(-12_340, 2)).unwrap()).unwrap(),
            Decimal::new(-12_340, 2)
        );
    }

    #[test]
    fn pool_indexes_and_filters_are_the_seeds() {
        let models = pool_index_models();
        assert_eq!(models[0].keys, doc! { "user_id": 1 });
        assert_eq!(models[1].keys, doc! { "created_at": 1 });
        assert_eq!(
            pool_range_filter(33_000).unwrap(),
            doc! { "_id": { "$lte": 33_000_i32 } }
        );
        assert!(pool_range_filter(u32::MAX).is_err());
    }

    #[test]
    fn echoes_are_checked_value_and_type() {
        assert_eq!(
            param_pipeline(7),
            [
                doc! { "$match": { "_id": "one" } },
                doc! { "$replaceRoot": { "newRoot": { "v": 7_i64 } } }
            ]
        );
        // What a server answers for echo_pipeline(i): the values themselves.
        let answer = echo_values;
        assert_eq!(
            echo_pipeline(3)[1],
            doc! { "$replaceRoot": { "newRoot": echo_values(3) } }
        );
        assert!(check_echo(&answer(5), 5).is_ok());
        assert!(check_echo(&answer(4), 4).is_ok());
        assert!(
            check_echo(&answer(5), 6).is_err(),
            "another iteration's answer"
        );
        let mut int32 = answer(5);
        int32.insert("i", 5_i32);
        assert!(check_echo(&int32, 5).is_err(), "Int32 is not Int64");
        let mut text_date = answer(5);
        text_date.insert("t", "2023-11-14");
        assert!(check_echo(&text_date, 5).is_err(), "a string is not a date");
        let mut missing = answer(5);
        missing.remove("b");
        assert!(check_echo(&missing, 5).is_err());
        let mut more = answer(5);
        more.insert("_id", "one");
        assert!(
            check_echo(&more, 5).is_err(),
            "the stored document came back too"
        );
    }

    #[test]
    fn plans_read_from_the_leaf_up() {
        let plan = doc! { "stage": "FETCH", "inputStage": { "stage": "IXSCAN", "indexName": "dbcompare_records_unique_id" } };
        assert_eq!(
            describe_plan(&plan),
            "FETCH <- IXSCAN dbcompare_records_unique_id"
        );
    }
}
