//! Couchbase (the official `couchbase` SDK): bucket, scope and collection from the URL
//! (scope and collection default to `_default`), key = unique_id, the record as a JSON
//! document; upsert with the durability level of the mode (`majorityAndPersistToActive`
//! when durable, `none` when relaxed); KV get by key, or with `--couchbase-query` a SQL++
//! query through an index on unique_id created by reset; size = the bucket's disk usage
//! from the management REST API; the cost of a phase from each node's Prometheus statistics
//! (`counters`).
//!
//! URL: `couchbase://user:password@host[:11210]/bucket[/scope/collection][?management=URL]`
//! (`couchbases://` for TLS). The management REST API is taken at `management` when the URL
//! gives one (a cluster whose management port is not the default, a load balancer), else at
//! the KV host's port 8091 (18091 with TLS); the report says which.

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
use futures::TryStreamExt;

use crate::catalog::{Durability, StoreInfo, StoreKind};
use crate::store::url::percent_decode;
use crate::store::{Adapter, ConnectSpec, DiskUsage, Store, Supported};
use crate::workload::record::Record;

mod counters;
mod driver;
mod pool;
mod ycsb;

const DEFAULT: &str = "_default";

/// The SDK has no per-operation timeout: every call is bounded by this.
const OPERATION_TIMEOUT: Duration = Duration::from_secs(30);

/// What a URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The connection string for the SDK: scheme, host and port, no credentials or path.
    pub connection: String,
    /// The management REST API: the URL's `management`, or `http(s)://host:8091` (18091).
    pub management: String,
    /// Where `management` came from, for the report and for messages.
    pub management_from: &'static str,
    pub bucket: String,
    pub scope: String,
    pub collection: String,
    pub user: String,
    pub password: String,
}

/// Reads a `couchbase://` URL.
pub fn parse_url(raw: &str) -> Result<Target> {
    // Several seed hosts (`couchbase://h1,h2/bucket`): the SDK's connection string takes
    // them as they are; the management API is asked on the first.
    let list = crate::store::url::HostList::of(raw);
    let url = url::Url::parse(&list.first)?;
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
        _ if list.hosts.len() > 1 => format!("{}://{}", url.scheme(), list.hosts.join(",")),
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    };
    let given = url.query_pairs().find(|(k, _)| k == "management");
    let (management, management_from) = match given {
        Some((_, m)) => {
            let m = url::Url::parse(&m)
                .ok()
                .filter(|m| matches!(m.scheme(), "http" | "https") && m.host_str().is_some())
                .with_context(|| format!("management={m} is not an http(s)://host:port URL"))?;
            (
                m.as_str().trim_end_matches('/').to_string(),
                "the URL's management option",
            )
        }
        None if tls => (
            format!("https://{host}:18091"),
            "the KV host's port 18091 (TLS)",
        ),
        None => (format!("http://{host}:8091"), "the KV host's port 8091"),
    };
    Ok(Target {
        connection,
        management,
        management_from,
        bucket: bucket.to_string(),
        scope: scope.to_string(),
        collection: collection.to_string(),
        user: percent_decode(url.username()),
        password: percent_decode(url.password().unwrap_or_default()),
    })
}

/// Whether a failed drop of the benchmark's collection means there was nothing to drop (the
/// collection, or its whole scope, does not exist yet).
fn nothing_to_drop(kind: &ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::CollectionNotFound | ErrorKind::ScopeNotFound
    )
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

pub(super) async fn bounded<T>(
    what: &str,
    f: impl Future<Output = couchbase::error::Result<T>>,
) -> Result<T> {
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
    /// The YCSB table, once it is in use.
    ycsb: Option<crate::store::YcsbTable>,
    /// Why the YCSB suite has no scans here (the cluster has no query service), once
    /// `ycsb_reset` found out.
    ycsb_no_scans: Option<String>,
}

impl CouchbaseStore {
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

impl Adapter for CouchbaseStore {
    type DriverSuites = Self;

    /// Checks a URL the way the adapter will read it.
    fn check_url(raw: &str) -> Result<()> {
        parse_url(raw).map(|_| ())
    }

    async fn connect(spec: &ConnectSpec) -> Result<Self> {
        let url = spec.server_url(StoreKind::Couchbase)?;
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
            .with_context(|| {
                format!(
                    "the management API at {} ({}; another can be given with \
                     ?management=http://host:port)",
                    target.management, target.management_from
                )
            })?;
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
        if spec.options.couchbase_query {
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
            query: spec.options.couchbase_query,
            driver_docs: false,
            ycsb: None,
            ycsb_no_scans: None,
        })
    }
}

impl Store for CouchbaseStore {
    type Driver = Supported;
    type Pool = Supported;
    type Ycsb = Supported;

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
            (
                "management".to_string(),
                format!(
                    "{} ({})",
                    self.target.management, self.target.management_from
                ),
            ),
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
            // The collection the URL names is the benchmark's: dropped and created again, in
            // a scope created first when it does not exist yet.
            let manager = self.cluster.bucket(&self.target.bucket).collections();
            let dropped = tokio::time::timeout(
                OPERATION_TIMEOUT,
                manager.drop_collection(&self.target.scope, &self.target.collection, None),
            )
            .await;
            match dropped {
                Ok(Ok(())) => {}
                Ok(Err(e)) if nothing_to_drop(e.kind()) => {}
                Ok(Err(e)) => bail!("dropping the benchmark collection: {e}"),
                Err(_) => bail!("dropping the benchmark collection: no answer"),
            }
            if self.target.scope != DEFAULT {
                let created = tokio::time::timeout(
                    OPERATION_TIMEOUT,
                    manager.create_scope(&self.target.scope, None),
                )
                .await;
                match created {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) if *e.kind() == ErrorKind::ScopeExists => {}
                    Ok(Err(e)) => bail!("creating the scope {}: {e}", self.target.scope),
                    Err(_) => bail!("creating the scope {}: no answer", self.target.scope),
                }
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

    async fn counters(&mut self) -> Result<BTreeMap<String, u64>> {
        counters::read(&self.http, &self.target).await
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
    use crate::workload::record::generate;

    #[test]
    fn urls_name_bucket_scope_collection_and_credentials() {
        let t = parse_url("couchbase://admin:p%40ss@db1/bench").unwrap();
        assert_eq!(t.connection, "couchbase://db1");
        assert_eq!(t.management, "http://db1:8091");
        assert_eq!(t.management_from, "the KV host's port 8091");
        assert_eq!(
            (t.bucket.as_str(), t.scope.as_str(), t.collection.as_str()),
            ("bench", "_default", "_default")
        );
        assert_eq!((t.user.as_str(), t.password.as_str()), ("admin", "p@ss"));
        let t = parse_url("couchbases://u:p@db2:11207/b/s/c").unwrap();
        assert_eq!(t.connection, "couchbases://db2:11207");
        assert_eq!(t.management, "https://db2:18091");
        assert_eq!(keyspace(&t), "`b`.`s`.`c`");
        let t = parse_url("couchbase://u:p@127.0.0.1:43599,127.0.0.1:39497/bucket").unwrap();
        assert_eq!(
            t.connection, "couchbase://127.0.0.1:43599,127.0.0.1:39497",
            "seeds"
        );
        assert_eq!(t.management, "http://127.0.0.1:8091", "asked on the first");
        assert_eq!(t.bucket, "bucket");
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
    fn the_management_api_can_be_named_in_the_url() {
        let t =
            parse_url("couchbase://u:p@db1:12000/b?management=http://127.0.0.1:39497/").unwrap();
        assert_eq!(t.connection, "couchbase://db1:12000");
        assert_eq!(t.management, "http://127.0.0.1:39497");
        assert_eq!(t.management_from, "the URL's management option");
        let e = parse_url("couchbase://u:p@db1/b?management=db2:8091").unwrap_err();
        assert!(e.to_string().contains("http(s)://host:port"), "{e}");
        let t = parse_url("couchbases://u:p@db1/b").unwrap();
        assert_eq!(t.management, "https://db1:18091");
    }

    #[test]
    fn a_missing_scope_or_collection_is_nothing_to_drop() {
        assert!(nothing_to_drop(&ErrorKind::CollectionNotFound));
        assert!(nothing_to_drop(&ErrorKind::ScopeNotFound));
        assert!(!nothing_to_drop(&ErrorKind::AuthenticationFailure));
    }

    #[test]
    fn documents_round_trip_every_field_through_json() {
        for r in generate(8, &"micro".parse().unwrap(), 1) {
            let json = serde_json::to_vec(&r).unwrap();
            assert_eq!(serde_json::from_slice::<Record>(&json).unwrap(), r);
        }
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
