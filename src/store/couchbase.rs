//! Couchbase (the official `couchbase` SDK): bucket, scope and collection from the URL
//! (scope and collection default to `_default`), key = unique_id, the record as a JSON
//! document; upsert with the durability level of the mode (`majorityAndPersistToActive`
//! when durable, `none` when relaxed); KV get by key, or with `--couchbase-query` a SQL++
//! query through an index on unique_id created by reset; size = the bucket's disk usage
//! from the management REST API.
//!
//! URL: `couchbase://user:password@host[:11210]/bucket[/scope/collection]`
//! (`couchbases://` for TLS). The management API is on port 8091 (18091 with TLS).

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use couchbase::authenticator::PasswordAuthenticator;
use couchbase::cluster::Cluster;
use couchbase::collection::Collection;
use couchbase::durability_level::DurabilityLevel;
use couchbase::error::ErrorKind;
use couchbase::options::cluster_options::{ClusterOptions, KvOptions};
use couchbase::options::diagnostic_options::{ClusterState, WaitUntilReadyOptions};
use couchbase::options::kv_options::UpsertOptions;
use couchbase::options::query_options::{QueryOptions, ScanConsistency};
use couchbase::scope::Scope;
use couchbase::service_type::ServiceType;
use futures::{StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};

use super::{ConnectSpec, DiskUsage, Durability, Store, StoreUrl, percent_decode};
use crate::record::Record;
use crate::report::model::StoreInfo;
use crate::suite::driver::{DriverTest, check_large, large_string};
use crate::suite::pool::{BenchRow, PoolTest, from_unix_micros, unix_micros};
use crate::suite::watchdog;

pub const SCHEMES: &[&str] = &["couchbase", "couchbases"];

const DEFAULT: &str = "_default";

/// The SDK has no per-operation timeout: every call is bounded by this.
const OPERATION_TIMEOUT: Duration = Duration::from_secs(30);

/// What a URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The connection string for the SDK: scheme, host and port, no credentials or path.
    pub connection: String,
    /// `http(s)://host:8091` (or 18091): the management REST API.
    pub management: String,
    pub bucket: String,
    pub scope: String,
    pub collection: String,
    pub user: String,
    pub password: String,
}

/// Reads a `couchbase://` URL.
pub fn parse_url(raw: &str) -> Result<Target> {
    let url = url::Url::parse(raw)?;
    let host = url
        .host_str()
        .filter(|h| !h.is_empty())
        .context("no host")?;
    let parts: Vec<&str> = url.path().split('/').filter(|p| !p.is_empty()).collect();
    let (bucket, scope, collection) = match parts.as_slice() {
        [bucket] => (*bucket, DEFAULT, DEFAULT),
        [bucket, scope, collection] => (*bucket, *scope, *collection),
        _ => bail!(
            "the URL must name a bucket: couchbase://user:pass@host/bucket[/scope/collection]"
        ),
    };
    if url.username().is_empty() {
        bail!("the URL must carry the credentials: couchbase://user:pass@host/bucket");
    }
    let tls = url.scheme() == "couchbases";
    let connection = match url.port() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    };
    Ok(Target {
        connection,
        management: if tls {
            format!("https://{host}:18091")
        } else {
            format!("http://{host}:8091")
        },
        bucket: bucket.to_string(),
        scope: scope.to_string(),
        collection: collection.to_string(),
        user: percent_decode(url.username()),
        password: percent_decode(url.password().unwrap_or_default()),
    })
}

/// Checks a URL the way the adapter will read it.
pub fn check_url(raw: &str) -> Result<()> {
    parse_url(raw).map(|_| ())
}

/// The durability level of a mode.
pub fn durability_level(durability: Durability) -> DurabilityLevel {
    match durability {
        Durability::Durable => DurabilityLevel::MAJORITY_AND_PERSIST_ACTIVE,
        Durability::Relaxed => DurabilityLevel::NONE,
    }
}

/// The name dbcompare reports for a durability level.
fn level_name(durability: Durability) -> &'static str {
    match durability {
        Durability::Durable => "majorityAndPersistToActive",
        Durability::Relaxed => "none",
    }
}

/// `bucket`.`scope`.`collection`, quoted for SQL++.
pub fn keyspace(t: &Target) -> String {
    format!("`{}`.`{}`.`{}`", t.bucket, t.scope, t.collection)
}

/// The SQL++ statements of the query search path: the index reset creates, and the search.
pub fn query_statements(t: &Target) -> (String, String) {
    let ks = keyspace(t);
    (
        format!("CREATE INDEX dbcompare_records_unique_id IF NOT EXISTS ON {ks}(unique_id)"),
        format!("SELECT c.* FROM {ks} AS c WHERE c.unique_id = $1"),
    )
}

/// The pool suite's tables, as the `tbl` field of documents keyed `<tbl>:<id>`.
const POOL_DATA: &str = "benchmark_data";
const POOL_BATCH: &str = "benchmark_batch";
/// Upserts in flight when the pool suite writes many documents (the SDK has no batch call;
/// it pipelines concurrent operations on its connections).
const UPSERTS_IN_FLIGHT: usize = 64;

/// A `benchmark_data` row as a JSON document: times as Unix microseconds, the decimal as
/// its exact text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolDoc {
    pub tbl: String,
    pub id: i32,
    pub user_id: i32,
    pub username: String,
    pub email: String,
    pub created_at_us: i64,
    pub updated_at_us: i64,
    pub score: String,
    pub is_active: bool,
    pub data: Option<String>,
}

impl PoolDoc {
    pub fn new(tbl: &str, r: &BenchRow) -> Self {
        PoolDoc {
            tbl: tbl.to_string(),
            id: r.id,
            user_id: r.user_id,
            username: r.username.clone(),
            email: r.email.clone(),
            created_at_us: unix_micros(r.created_at),
            updated_at_us: unix_micros(r.updated_at),
            score: r.score.to_string(),
            is_active: r.is_active,
            data: r.data.clone(),
        }
    }

    pub fn row(self) -> Result<BenchRow> {
        Ok(BenchRow {
            id: self.id,
            user_id: self.user_id,
            username: self.username,
            email: self.email,
            created_at: from_unix_micros(self.created_at_us)?,
            updated_at: from_unix_micros(self.updated_at_us)?,
            score: self.score.parse().context("score is not a decimal")?,
            is_active: self.is_active,
            data: self.data,
        })
    }
}

/// The SQL++ statements of the pool suite: its index, the Large Result Set, and the count
/// of a table's documents.
pub fn pool_statements(t: &Target) -> (String, String, String) {
    let ks = keyspace(t);
    (
        format!("CREATE INDEX dbcompare_pool IF NOT EXISTS ON {ks}(tbl, id)"),
        format!(
            "SELECT p.* FROM {ks} AS p WHERE p.tbl = \"{POOL_DATA}\" AND p.id <= $1 ORDER BY p.id"
        ),
        format!("SELECT RAW COUNT(*) FROM {ks} AS p WHERE p.tbl = $1"),
    )
}

async fn bounded<T>(what: &str, f: impl Future<Output = couchbase::error::Result<T>>) -> Result<T> {
    match tokio::time::timeout(OPERATION_TIMEOUT, f).await {
        Ok(result) => result.map_err(|e| anyhow!("{what}: {e}")),
        Err(_) => Err(anyhow!("{what}: no answer within {OPERATION_TIMEOUT:?}")),
    }
}

pub struct CouchbaseStore {
    /// Kept alive: collections fail once their cluster is dropped.
    cluster: Cluster,
    scope: Scope,
    collection: Collection,
    target: Target,
    http: reqwest::Client,
    durability: Durability,
    /// Search through SQL++ instead of KV get (`--couchbase-query`).
    query: bool,
    /// Whether the driver suite's fixed documents were written.
    driver_docs: bool,
}

/// The driver suite's fixed documents: `{"v": 1}`, a 10 kB string and 10 kB of binary.
const DRIVER_ONE: &str = "dbcompare:driver:one";
const DRIVER_STRING: &str = "dbcompare:driver:string";
const DRIVER_BINARY: &str = "dbcompare:driver:binary";

impl CouchbaseStore {
    /// Upserts rows as `<tbl>:<id>` documents, `UPSERTS_IN_FLIGHT` at a time.
    async fn upsert_rows(&self, tbl: &str, rows: &[BenchRow]) -> Result<()> {
        let level = durability_level(self.durability);
        let pending: Vec<_> = rows
            .iter()
            .map(|r| {
                let doc = PoolDoc::new(tbl, r);
                let key = format!("{tbl}:{}", doc.id);
                let options = UpsertOptions::new().durability_level(level.clone());
                let collection = self.collection.clone();
                async move { bounded("upsert", collection.upsert(key, &doc, options)).await }
            })
            .collect();
        let mut upserts = futures::stream::iter(pending).buffer_unordered(UPSERTS_IN_FLIGHT);
        while let Some(done) = upserts.next().await {
            done?;
            watchdog::alive();
        }
        Ok(())
    }

    async fn query_rows<T: serde::de::DeserializeOwned + Send + 'static>(
        &self,
        statement: String,
        parameter: impl Serialize,
    ) -> Result<Vec<T>> {
        let options = QueryOptions::new()
            .add_positional_parameter(parameter)?
            .scan_consistency(ScanConsistency::RequestPlus);
        let mut result = bounded("query", self.scope.query(statement, options)).await?;
        bounded("query rows", result.rows().try_collect()).await
    }

    pub async fn connect(url: &StoreUrl, spec: &ConnectSpec) -> Result<Self> {
        let target = parse_url(url.expose())?;
        let http = reqwest::Client::builder()
            .timeout(spec.connect_timeout)
            .build()?;
        let store_http = http.clone();
        // The management API tells a wrong password or a missing bucket plainly; the SDK
        // would retry until its own deadline.
        let bucket_url = format!(
            "{}/pools/default/buckets/{}",
            target.management, target.bucket
        );
        let answer = http
            .get(&bucket_url)
            .basic_auth(&target.user, Some(&target.password))
            .send()
            .await
            .with_context(|| format!("the management API at {}", target.management))?;
        match answer.status().as_u16() {
            200 => {}
            401 => bail!("wrong username or password for {}", target.management),
            404 => bail!(
                "bucket '{}' does not exist on {}",
                target.bucket,
                target.management
            ),
            code => bail!(
                "the management API answered {code} for bucket '{}'",
                target.bucket
            ),
        }
        let options = ClusterOptions::new(
            PasswordAuthenticator::new(target.user.clone(), target.password.clone()).into(),
        )
        .kv_options(KvOptions::new().connect_timeout(spec.connect_timeout));
        let cluster = Cluster::connect(&target.connection, options).await?;
        let bucket = cluster.bucket(&target.bucket);
        let mut services = vec![ServiceType::KV];
        if spec.couchbase_query {
            services.push(ServiceType::QUERY);
        }
        bounded(
            "waiting for the bucket",
            bucket.wait_until_ready(
                WaitUntilReadyOptions::new()
                    .desired_state(ClusterState::Online)
                    .service_types(services),
            ),
        )
        .await?;
        let scope = bucket.scope(&target.scope);
        let collection = scope.collection(&target.collection);
        Ok(CouchbaseStore {
            cluster,
            scope,
            collection,
            target,
            http: store_http,
            durability: spec.durability,
            query: spec.couchbase_query,
            driver_docs: false,
        })
    }

    async fn management(&self, path: &str) -> Result<serde_json::Value> {
        let url = format!("{}{path}", self.target.management);
        let answer = self
            .http
            .get(&url)
            .basic_auth(&self.target.user, Some(&self.target.password))
            .send()
            .await?
            .error_for_status()?;
        Ok(answer.json().await?)
    }
}

impl Store for CouchbaseStore {
    async fn describe(&mut self) -> Result<StoreInfo> {
        let pools = self.management("/pools").await?;
        let version = pools["implementationVersion"]
            .as_str()
            .unwrap_or("unknown")
            .to_string();
        let bucket = self
            .management(&format!("/pools/default/buckets/{}", self.target.bucket))
            .await?;
        let mut settings = BTreeMap::from([
            (
                "durability_level".to_string(),
                level_name(self.durability).to_string(),
            ),
            ("keyspace".to_string(), keyspace(&self.target)),
        ]);
        for key in [
            "durabilityMinLevel",
            "replicaNumber",
            "evictionPolicy",
            "storageBackend",
        ] {
            if let Some(v) = bucket.get(key) {
                settings.insert(key.to_string(), v.to_string().trim_matches('"').to_string());
            }
        }
        let (_, search) = query_statements(&self.target);
        Ok(StoreInfo {
            version: format!("Couchbase Server {version} (SDK {})", couchbase::VERSION),
            durability: self.durability.name().to_string(),
            settings,
            search_path: if self.query {
                format!("SQL++ (request_plus) through index dbcompare_records_unique_id: {search}")
            } else {
                "KV get by key".to_string()
            },
            write_path: format!(
                "upsert with durability {}: single-document atomic write",
                level_name(self.durability)
            ),
            size_method: "bucket basicStats.diskUsed from the management REST API".to_string(),
        })
    }

    async fn reset(&mut self) -> Result<()> {
        if self.target.collection == DEFAULT {
            // The default collection cannot be dropped: flush the bucket (flush must be
            // enabled on it; use a bucket of its own for benchmarks).
            bounded(
                "flushing the bucket",
                self.cluster
                    .buckets()
                    .flush_bucket(&self.target.bucket, None),
            )
            .await?;
        } else {
            let manager = self.cluster.bucket(&self.target.bucket).collections();
            match tokio::time::timeout(
                OPERATION_TIMEOUT,
                manager.drop_collection(&self.target.scope, &self.target.collection, None),
            )
            .await
            {
                Ok(Ok(())) => {}
                Ok(Err(e)) if *e.kind() == ErrorKind::CollectionNotFound => {}
                Ok(Err(e)) => bail!("dropping the benchmark collection: {e}"),
                Err(_) => bail!("dropping the benchmark collection: no answer"),
            }
            bounded(
                "creating the benchmark collection",
                manager.create_collection(&self.target.scope, &self.target.collection, None, None),
            )
            .await?;
        }
        if self.query {
            let (index, _) = query_statements(&self.target);
            bounded(
                "creating the unique_id index",
                self.cluster.query(index, None),
            )
            .await?;
        }
        Ok(())
    }

    async fn insert(&mut self, r: &Record) -> Result<()> {
        let options = UpsertOptions::new().durability_level(durability_level(self.durability));
        bounded("upsert", self.collection.upsert(&r.unique_id, r, options)).await?;
        Ok(())
    }

    async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
        if self.query {
            let (_, search) = query_statements(&self.target);
            let options = QueryOptions::new()
                .add_positional_parameter(unique_id)?
                .scan_consistency(ScanConsistency::RequestPlus);
            let mut result = bounded("query", self.scope.query(search, options)).await?;
            let rows: Vec<Record> = bounded("query rows", result.rows().try_collect()).await?;
            return match rows.len() {
                0 => Ok(None),
                1 => Ok(rows.into_iter().next()),
                n => bail!("{n} documents have unique_id {unique_id}"),
            };
        }
        match tokio::time::timeout(OPERATION_TIMEOUT, self.collection.get(unique_id, None)).await {
            Ok(Ok(found)) => Ok(Some(found.content_as::<Record>()?)),
            Ok(Err(e)) if *e.kind() == ErrorKind::DocumentNotFound => Ok(None),
            Ok(Err(e)) => Err(anyhow!("get: {e}")),
            Err(_) => Err(anyhow!("get: no answer within {OPERATION_TIMEOUT:?}")),
        }
    }

    fn driver_operation(&self, test: DriverTest) -> Option<&'static str> {
        use DriverTest::*;
        Some(match test {
            SimpleExec | PreparedExec => {
                "exists of a fixed key: a KV round trip with no body (no statements in KV)"
            }
            SimpleQueryRow | PreparedQueryRow => "KV get of a fixed JSON document {\"v\": 1}",
            SelectLargeString | SelectPreparedLargeString => {
                "KV get of a 10 kB string document, through the raw-string transcoder"
            }
            SelectLargeBytes | SelectPreparedLargeBytes => {
                "KV get of a 10 kB binary document, through the raw-binary transcoder"
            }
            SelectLargeRaw | SelectPreparedLargeRaw => {
                "KV get of the 10 kB string document, content as raw bytes (no transcoder)"
            }
            _ => return None,
        })
    }

    async fn driver(&mut self, test: DriverTest, _i: u64) -> Result<()> {
        use DriverTest::*;
        use couchbase::transcoding::{raw_binary, raw_string};
        if !self.driver_docs {
            // Every connection of a concurrent test writes them once: upserts are idempotent.
            let options =
                || UpsertOptions::new().durability_level(durability_level(self.durability));
            let one = serde_json::json!({ "v": 1 });
            bounded(
                "upsert",
                self.collection.upsert(DRIVER_ONE, &one, options()),
            )
            .await?;
            let text = large_string();
            let (content, flags) = raw_string::encode(&text)?;
            let upsert = self
                .collection
                .upsert_raw(DRIVER_STRING, content, flags, options());
            bounded("upsert", upsert).await?;
            let (content, flags) = raw_binary::encode(text.as_bytes())?;
            let upsert = self
                .collection
                .upsert_raw(DRIVER_BINARY, content, flags, options());
            bounded("upsert", upsert).await?;
            self.driver_docs = true;
        }
        let c = &self.collection;
        match test {
            SimpleExec | PreparedExec => {
                if !bounded("exists", c.exists(DRIVER_ONE, None))
                    .await?
                    .exists()
                {
                    bail!("the fixed document is missing");
                }
            }
            SimpleQueryRow | PreparedQueryRow => {
                let found = bounded("get", c.get(DRIVER_ONE, None)).await?;
                let doc: serde_json::Value = found.content_as()?;
                if doc["v"] != 1 {
                    bail!("the fixed document is {doc}");
                }
            }
            SelectLargeString | SelectPreparedLargeString => {
                let found = bounded("get", c.get(DRIVER_STRING, None)).await?;
                let (content, flags) = found.content_as_raw();
                check_large(raw_string::decode(content, flags)?.as_bytes())?;
            }
            SelectLargeBytes | SelectPreparedLargeBytes => {
                let found = bounded("get", c.get(DRIVER_BINARY, None)).await?;
                let (content, flags) = found.content_as_raw();
                check_large(raw_binary::decode(content, flags)?)?;
            }
            SelectLargeRaw | SelectPreparedLargeRaw => {
                let found = bounded("get", c.get(DRIVER_STRING, None)).await?;
                check_large(found.content_as_raw().0)?;
            }
            other => bail!("{} is not applicable to couchbase", other.name()),
        }
        Ok(())
    }

    fn pool_operation(&self, test: PoolTest) -> Option<&'static str> {
        Some(match test {
            PoolTest::LargeResultSet => {
                "SQL++ SELECT ... WHERE tbl = \"benchmark_data\" AND id <= $1 ORDER BY id \
                 (request_plus, index on tbl and id), every field decoded"
            }
            PoolTest::ConcurrentQueries => "connect + KV get of a row's document, 50 at once",
            PoolTest::ConnectionPool => {
                "KV get of a row's document over a 5-20 cluster-connection pool, 50 workers"
            }
            PoolTest::BatchInsert => {
                "upserts with the mode's durability, 64 in flight (the SDK has no batch call)"
            }
        })
    }

    async fn pool_load(&mut self, rows: &[BenchRow]) -> Result<()> {
        // The suite's reset emptied the collection; the index serves the range query.
        let (index, _, _) = pool_statements(&self.target);
        bounded("creating the pool index", self.cluster.query(index, None)).await?;
        self.upsert_rows(POOL_DATA, rows).await
    }

    async fn pool_large(&mut self, max_id: u32) -> Result<Vec<BenchRow>> {
        let (_, large, _) = pool_statements(&self.target);
        let docs: Vec<PoolDoc> = self.query_rows(large, max_id).await?;
        docs.into_iter().map(PoolDoc::row).collect()
    }

    async fn pool_point(&mut self, id: i32) -> Result<Option<BenchRow>> {
        let key = format!("{POOL_DATA}:{id}");
        match tokio::time::timeout(OPERATION_TIMEOUT, self.collection.get(key, None)).await {
            Ok(Ok(found)) => Ok(Some(found.content_as::<PoolDoc>()?.row()?)),
            Ok(Err(e)) if *e.kind() == ErrorKind::DocumentNotFound => Ok(None),
            Ok(Err(e)) => Err(anyhow!("get: {e}")),
            Err(_) => Err(anyhow!("get: no answer within {OPERATION_TIMEOUT:?}")),
        }
    }

    async fn pool_batch_reset(&mut self) -> Result<()> {
        let statement = format!(
            "DELETE FROM {} AS p WHERE p.tbl = $1",
            keyspace(&self.target)
        );
        let _: Vec<serde_json::Value> = self.query_rows(statement, POOL_BATCH).await?;
        Ok(())
    }

    async fn pool_batch_insert(&mut self, rows: &[BenchRow]) -> Result<()> {
        self.upsert_rows(POOL_BATCH, rows).await
    }

    async fn pool_batch_count(&mut self) -> Result<u64> {
        let (_, _, count) = pool_statements(&self.target);
        let counts: Vec<u64> = self.query_rows(count, POOL_BATCH).await?;
        counts.first().copied().context("no count")
    }

    async fn disk_usage(&mut self) -> Result<DiskUsage> {
        let bucket = self
            .management(&format!("/pools/default/buckets/{}", self.target.bucket))
            .await?;
        let used = bucket["basicStats"]["diskUsed"]
            .as_u64()
            .context("the bucket's basicStats has no diskUsed")?;
        Ok(DiskUsage::bytes(used))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::generate;

    #[test]
    fn urls_name_bucket_scope_collection_and_credentials() {
        let t = parse_url("couchbase://admin:p%40ss@db1/bench").unwrap();
        assert_eq!(t.connection, "couchbase://db1");
        assert_eq!(t.management, "http://db1:8091");
        assert_eq!(
            (t.bucket.as_str(), t.scope.as_str(), t.collection.as_str()),
            ("bench", "_default", "_default")
        );
        assert_eq!((t.user.as_str(), t.password.as_str()), ("admin", "p@ss"));
        let t = parse_url("couchbases://u:p@db2:11207/b/s/c").unwrap();
        assert_eq!(t.connection, "couchbases://db2:11207");
        assert_eq!(t.management, "https://db2:18091");
        assert_eq!(keyspace(&t), "`b`.`s`.`c`");
        assert!(parse_url("couchbase://u:p@db1").is_err());
        assert!(parse_url("couchbase://u:p@db1/b/s").is_err());
        assert!(
            parse_url("couchbase://db1/b")
                .unwrap_err()
                .to_string()
                .contains("credentials")
        );
    }

    #[test]
    fn documents_round_trip_every_field_through_json() {
        for r in generate(8, &"micro".parse().unwrap(), 1) {
            let json = serde_json::to_vec(&r).unwrap();
            assert_eq!(serde_json::from_slice::<Record>(&json).unwrap(), r);
        }
    }

    #[test]
    fn pool_rows_round_trip_through_json_and_the_range_query_uses_its_index() {
        for r in crate::suite::pool::rows(4, 200, 1) {
            let json = serde_json::to_string(&PoolDoc::new(POOL_DATA, &r)).unwrap();
            let back: PoolDoc = serde_json::from_str(&json).unwrap();
            assert_eq!(back.tbl, POOL_DATA);
            let row = back.row().unwrap();
            assert_eq!(row, r);
            assert_eq!(row.score.scale(), 2);
        }
        let t = parse_url("couchbase://u:p@h/b/s/c").unwrap();
        let (index, large, count) = pool_statements(&t);
        assert_eq!(
            index,
            "CREATE INDEX dbcompare_pool IF NOT EXISTS ON `b`.`s`.`c`(tbl, id)"
        );
        assert_eq!(
            large,
            "SELECT p.* FROM `b`.`s`.`c` AS p WHERE p.tbl = \"benchmark_data\" AND p.id <= $1 \
             ORDER BY p.id"
        );
        assert_eq!(
            count,
            "SELECT RAW COUNT(*) FROM `b`.`s`.`c` AS p WHERE p.tbl = $1"
        );
    }

    #[test]
    fn query_path_uses_its_index_and_a_parameter() {
        let t = parse_url("couchbase://u:p@h/b").unwrap();
        let (index, search) = query_statements(&t);
        assert_eq!(
            index,
            "CREATE INDEX dbcompare_records_unique_id IF NOT EXISTS ON `b`.`_default`.`_default`(unique_id)"
        );
        assert_eq!(
            search,
            "SELECT c.* FROM `b`.`_default`.`_default` AS c WHERE c.unique_id = $1"
        );
        assert_eq!(
            durability_level(Durability::Durable),
            DurabilityLevel::MAJORITY_AND_PERSIST_ACTIVE
        );
        assert_eq!(durability_level(Durability::Relaxed), DurabilityLevel::NONE);
    }
}
