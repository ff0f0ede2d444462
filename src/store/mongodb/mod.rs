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
use mongodb::bson::{self, Document, doc};
use mongodb::options::{Acknowledgment, WriteConcern};
use mongodb::{Client, ClientSession, Collection, Database};

use crate::catalog::{Durability, StoreInfo};
use crate::store::{DiskUsage, Store, Supported};
use crate::workload::record::{Record, TABLE};

mod bench_doc;
mod collections;
mod connect;
mod driver;
mod pool;
mod record;
mod ycsb;

use bench_doc::BenchDoc;
use collections::{DriverDocs, Table};
use record::{Doc, index_models, search_filter};

/// Server error code of a command the server does not have.
const COMMAND_NOT_FOUND: i32 = 59;

/// The write concern of a durability mode.
pub fn write_concern(durability: Durability) -> WriteConcern {
    WriteConcern::builder()
        .w(Acknowledgment::Nodes(1))
        .journal(durability == Durability::Durable)
        .build()
}

pub struct MongoStore {
    client: Client,
    db: Database,
    records: Collection<Doc>,
    durability: Durability,
    /// A session when the server runs transactions (replica set or sharded cluster).
    session: Option<ClientSession>,
    topology: String,
    /// A replica set's members, as the server listed them.
    members: Option<String>,
    /// The driver suite's fixed documents, once written.
    driver_docs: Option<DriverDocs>,
    /// The pool suite's collections, with the store's write concern.
    pool_data: Collection<BenchDoc>,
    pool_batch: Collection<BenchDoc>,
    /// The YCSB table's collection, once it is in use.
    ycsb: Option<Table>,
    /// The TLS the URL asked for (`tls=true`, `tlsCAFile`, `tlsInsecure`...).
    tls: Option<crate::store::tls::Tls>,
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
    /// A command's answer, or `None` if the server does not have that command.
    async fn optional_command(&self, command: Document) -> Result<Option<Document>> {
        match self.db.run_command(command).await {
            Ok(answer) => Ok(Some(answer)),
            Err(e) if is_command_not_found(&e) => Ok(None),
            Err(e) => Err(e.into()),
        }
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

/// What `serverStatus` counts of the server's CPU time, its storage bytes and its log syncs
/// (MongoDB on Linux, WiredTiger), named with their source (see [`crate::counters`]); a
/// field the server does not report is left out (n/a).
fn status_counters(status: &Document) -> BTreeMap<String, u64> {
    use crate::counters::{BYTES_READ, BYTES_WRITTEN, CPU_SYSTEM_US, CPU_USER_US, SYNCS, named};
    let fields = [
        (CPU_USER_US, &["extra_info", "user_time_us"][..]),
        (CPU_SYSTEM_US, &["extra_info", "system_time_us"][..]),
        (
            BYTES_WRITTEN,
            &["wiredTiger", "block-manager", "bytes written"][..],
        ),
        (
            BYTES_READ,
            &["wiredTiger", "block-manager", "bytes read"][..],
        ),
        (SYNCS, &["wiredTiger", "log", "log sync operations"][..]),
    ];
    let mut counts = BTreeMap::new();
    for (figure, path) in fields {
        let (last, parents) = path.split_last().expect("a path has a field");
        let mut doc = Some(status);
        for parent in parents {
            doc = doc.and_then(|d| d.get_document(parent).ok());
        }
        let value = doc.and_then(|d| d.get(last)).and_then(|v| match v {
            bson::Bson::Int64(n) => u64::try_from(*n).ok(),
            bson::Bson::Int32(n) => u64::try_from(*n).ok(),
            bson::Bson::Double(x) if *x >= 0.0 => Some(*x as u64),
            _ => None,
        });
        if let Some(value) = value {
            counts.insert(
                named(figure, &format!("serverStatus {}", path.join("."))),
                value,
            );
        }
    }
    counts
}

impl Store for MongoStore {
    type Driver = Supported;
    type Pool = Supported;
    type Ycsb = Supported;

    async fn counters(&mut self) -> Result<BTreeMap<String, u64>> {
        let status = self
            .client
            .database("admin")
            .run_command(doc! { "serverStatus": 1 })
            .await?;
        Ok(status_counters(&status))
    }

    async fn describe(&mut self) -> Result<StoreInfo> {
        let build = self
            .client
            .database("admin")
            .run_command(doc! { "buildInfo": 1 })
            .await?;
        let version = server_name(&build);
        let wc = self.records.write_concern().cloned().unwrap_or_default();
        let mut settings = BTreeMap::from([
            ("topology".to_string(), self.topology.clone()),
            (
                "write_concern".to_string(),
                format!("w:1, j:{}", wc.journal.unwrap_or(false)),
            ),
            (
                "tls".to_string(),
                self.tls
                    .as_ref()
                    .map_or_else(|| "off".to_string(), crate::store::tls::Tls::describe),
            ),
        ]);
        if let Some(members) = &self.members {
            settings.insert("members".to_string(), members.clone());
        }
        if self.topology == "sharded cluster"
            && let Ok(Some(shards)) = self.optional_command(doc! { "listShards": 1 }).await
        {
            let hosts: Vec<String> = shards
                .get_array("shards")
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_document())
                        .map(|s| {
                            format!(
                                "{} {}",
                                s.get_str("_id").unwrap_or("?"),
                                s.get_str("host").unwrap_or("?")
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            settings.insert("shards".to_string(), hosts.join(", "));
        }
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
            version,
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
            Err(e) if !is_command_not_found(&e) => {
                return Err(e).context(
                    "fsync on the admin database, which the size is measured after (the user \
                     needs the fsync privilege, for example the clusterManager role)",
                );
            }
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

/// The server that answered, named for what it is, from its `buildInfo`: a server that
/// speaks MongoDB's protocol but is not MongoDB says so, with the MongoDB version it reports.
pub fn server_name(build: &Document) -> String {
    let reports = build.get_str("version").unwrap_or("unknown");
    let compatible = |name: &str, own: Option<&str>| match own {
        Some(own) => format!("{name} {own} (MongoDB wire protocol, reports {reports})"),
        None => format!("{name} (MongoDB wire protocol, reports {reports})"),
    };
    if let Ok(secantus) = build.get_str("secantusVersion") {
        compatible("SecantusDB", Some(secantus))
    } else if let Some(ferret) = build.get("ferretdb") {
        let own = match ferret {
            bson::Bson::Document(d) => d.get_str("version").ok(),
            bson::Bson::String(s) => Some(s.as_str()),
            _ => None,
        };
        compatible("FerretDB", own)
    } else if reports.contains("jongodb") {
        format!("jongodb (in-memory; MongoDB wire protocol, reports {reports})")
    } else if build.get_document("psmdbVersion").is_ok() || reports.contains("percona") {
        format!("Percona Server for MongoDB {reports}")
    } else {
        format!("MongoDB {reports}")
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

    #[test]
    fn server_status_gives_cpu_bytes_and_syncs_and_leaves_out_what_it_lacks() {
        let status = doc! {
            "extra_info": { "user_time_us": 1500_i64, "system_time_us": 500_i64 },
            "wiredTiger": {
                "block-manager": { "bytes written": 8192_i64, "bytes read": 4096_i32 },
                "log": { "log sync operations": 12_i64 },
            },
        };
        let counts = status_counters(&status);
        assert_eq!(
            counts["cpu user us (serverStatus extra_info.user_time_us)"],
            1500
        );
        assert_eq!(
            counts["bytes written (serverStatus wiredTiger.block-manager.bytes written)"],
            8192
        );
        assert_eq!(
            counts["syncs (serverStatus wiredTiger.log.log sync operations)"],
            12
        );
        assert_eq!(counts.len(), 5);
        // A wire-compatible server without WiredTiger: only what it has.
        let bare = status_counters(&doc! { "extra_info": { "user_time_us": 7_i32 } });
        assert_eq!(bare.len(), 1);
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
    fn servers_are_named_for_what_they_are() {
        assert_eq!(
            server_name(&doc! { "version": "8.0.4", "gitVersion": "bc35ab4" }),
            "MongoDB 8.0.4"
        );
        assert_eq!(
            server_name(&doc! { "version": "8.2.11", "secantusVersion": "0.7.0b3" }),
            "SecantusDB 0.7.0b3 (MongoDB wire protocol, reports 8.2.11)"
        );
        assert_eq!(
            server_name(&doc! { "version": "7.0.77", "ferretdb": { "version": "v2.1.0" } }),
            "FerretDB v2.1.0 (MongoDB wire protocol, reports 7.0.77)"
        );
        assert_eq!(
            server_name(&doc! { "version": "8.0.0-jongodb" }),
            "jongodb (in-memory; MongoDB wire protocol, reports 8.0.0-jongodb)"
        );
        assert_eq!(
            server_name(&doc! { "version": "7.0.14-8", "psmdbVersion": { "version": "7.0.14-8" } }),
            "Percona Server for MongoDB 7.0.14-8"
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
