//! Aerospike (the official `aerospike` client, async): namespace and set from the URL,
//! key = unique_id, one bin per field with `data` as a map bin; one put per record (a
//! single-record atomic write); secondary indexes on the map's name and age values when the
//! server accepts them (reported either way); get by key. The cost of a phase is read from
//! every node's namespace statistics (`counters`).
//!
//! URL: `aerospike://[user:password@]host[:3000]/namespace[?set=dbcompare_records]`.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use aerospike::{
    AdminPolicy, AuthMode, Bin, Bins, Client, ClientPolicy, CollectionIndexType, IndexType, Key,
    ReadPolicy, ResultCode, Task, Value, WritePolicy,
};
use anyhow::{Context, Result, anyhow, bail};
use chrono::{TimeZone, Utc};

use crate::catalog::{StoreInfo, StoreKind};
use crate::store::url::percent_decode;
use crate::store::{Adapter, ConnectSpec, DiskUsage, Store, Supported};
use crate::workload::record::{Data, Record, TABLE};

mod counters;
mod driver;
mod pool;
mod ycsb;

/// Secondary indexes reset creates on the `data` map's values, named after the set (index
/// names are the namespace's, so two sets need names of their own): `<set>_name`,
/// `<set>_age`.
const INDEXES: [(&str, IndexType); 2] = [("name", IndexType::String), ("age", IndexType::Numeric)];

/// The name of the index on `field` of `set`'s records.
fn index_name(set: &str, field: &str) -> String {
    format!("{set}_{field}")
}

/// The namespace statistics that hold the bytes a namespace uses, newest servers first.
const SIZE_STATISTICS: [&str; 4] = [
    "data_used_bytes",
    "device_used_bytes",
    "pmem_used_bytes",
    "memory_used_bytes",
];

/// Where the records go, from the URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub host: String,
    pub namespace: String,
    pub set: String,
    pub user: Option<(String, String)>,
}

/// Reads an `aerospike://` URL.
pub fn parse_url(raw: &str) -> Result<Target> {
    // Several seed hosts (`aerospike://h1:3000,h2:3000/ns`): the client takes them as a
    // comma list and discovers the rest of the cluster from them.
    let list = crate::store::url::HostList::of(raw);
    let url = url::Url::parse(&list.first)?;
    url.host_str()
        .filter(|h| !h.is_empty())
        .context("no host")?;
    let hosts: Vec<String> = list
        .hosts
        .iter()
        .map(|h| match h.rsplit_once(':') {
            Some((_, port)) if port.parse::<u16>().is_ok() => h.clone(),
            _ => format!("{h}:3000"),
        })
        .collect();
    let namespace = url.path().trim_matches('/');
    if namespace.is_empty() || namespace.contains('/') {
        bail!("the URL must name one namespace: aerospike://host:3000/namespace");
    }
    let set = url
        .query_pairs()
        .find(|(k, _)| k == "set")
        .map_or_else(|| TABLE.to_string(), |(_, v)| v.into_owned());
    let user = (!url.username().is_empty()).then(|| {
        (
            percent_decode(url.username()),
            percent_decode(url.password().unwrap_or_default()),
        )
    });
    Ok(Target {
        host: hosts.join(","),
        namespace: namespace.to_string(),
        set,
        user,
    })
}

/// The bins of a record: every field, `created_at` as Unix milliseconds (Aerospike has no
/// time type), `data` as a map bin.
pub fn bins(r: &Record) -> Vec<Bin> {
    let data: HashMap<Value, Value> = HashMap::from([
        (Value::from("name"), Value::from(r.data.name.as_str())),
        (Value::from("age"), Value::from(r.data.age)),
    ]);
    vec![
        Bin::new("id", Value::from(r.id)),
        Bin::new("unique_id", Value::from(r.unique_id.as_str())),
        Bin::new("created_by", Value::from(r.created_by)),
        Bin::new("updated_by", Value::from(r.updated_by)),
        Bin::new("deleted_by", Value::from(r.deleted_by)),
        Bin::new("created_at", Value::from(r.created_at.timestamp_millis())),
        Bin::new("data", Value::HashMap(data)),
    ]
}

pub(super) fn int(bins: &indexmap::IndexMap<String, Value>, name: &str) -> Result<i64> {
    match bins.get(name) {
        Some(Value::Int(i)) => Ok(*i),
        other => Err(anyhow!("bin {name} is {other:?}, not an integer")),
    }
}

pub(super) fn string(value: Option<&Value>, name: &str) -> Result<String> {
    match value {
        Some(Value::String(s)) => Ok(s.clone()),
        other => Err(anyhow!("{name} is {other:?}, not a string")),
    }
}

/// A record from its bins, every field checked.
pub fn record(bins: &indexmap::IndexMap<String, Value>) -> Result<Record> {
    let map_get = |key: &str| -> Option<Value> {
        let key = Value::from(key);
        match bins.get("data")? {
            Value::HashMap(m) => m.get(&key).cloned(),
            Value::OrderedMap(m) => m.get(&key).cloned(),
            Value::SortedMap(m) => m.get(&key).cloned(),
            _ => None,
        }
    };
    let age = match map_get("age") {
        Some(Value::Int(i)) => i,
        other => bail!("data.age is {other:?}, not an integer"),
    };
    Ok(Record {
        id: int(bins, "id")?,
        unique_id: string(bins.get("unique_id"), "bin unique_id")?,
        created_by: int(bins, "created_by")?,
        updated_by: int(bins, "updated_by")?,
        deleted_by: int(bins, "deleted_by")?,
        created_at: Utc
            .timestamp_millis_opt(int(bins, "created_at")?)
            .single()
            .context("created_at out of range")?,
        data: Data {
            name: string(map_get("name").as_ref(), "data.name")?,
            age,
        },
    })
}

/// `key=value;key=value` (an info answer) as a map.
pub fn parse_info(text: &str) -> BTreeMap<String, String> {
    text.split(';')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The first size statistic a namespace reports, and its value.
pub fn used_bytes(stats: &BTreeMap<String, String>) -> Option<(&'static str, u64)> {
    SIZE_STATISTICS
        .into_iter()
        .find_map(|name| Some((name, stats.get(name)?.parse().ok()?)))
}

pub struct AerospikeStore {
    client: Client,
    target: Target,
    write: WritePolicy,
    read: ReadPolicy,
    admin: AdminPolicy,
    /// Whether the secondary indexes were created, or why not.
    indexes: std::result::Result<(), String>,
    /// Whether the driver suite's fixed records were written.
    driver_records: bool,
    /// Whether [`Store::close`] closed the client (so dropping it need not).
    closed: bool,
    /// The YCSB table (a set of the namespace), once it is in use.
    ycsb: Option<crate::store::YcsbTable>,
}

impl AerospikeStore {
    fn key(&self, unique_id: &str) -> Result<Key> {
        Ok(Key::new(
            self.target.namespace.as_str(),
            self.target.set.as_str(),
            Value::from(unique_id),
        )?)
    }

    async fn info(&self, command: &str) -> Result<String> {
        let answer = self.client.info(&self.admin, &[command]).await?;
        Ok(answer.get(command).cloned().unwrap_or_default())
    }

    async fn create_indexes(&self) -> std::result::Result<(), String> {
        for (field, kind) in INDEXES {
            let name = &index_name(&self.target.set, field);
            let task = self
                .client
                .create_index_on_bin(
                    &self.admin,
                    &self.target.namespace,
                    &self.target.set,
                    "data",
                    name,
                    kind,
                    CollectionIndexType::MapValues,
                    None,
                )
                .await
                .map_err(|e| format!("{name}: {e}"))?;
            task.wait_till_complete(Some(Duration::from_secs(60)))
                .await
                .map_err(|e| format!("{name}: {e}"))?;
        }
        Ok(())
    }
}

impl Drop for AerospikeStore {
    fn drop(&mut self) {
        if self.closed {
            return;
        }
        // The client's cluster-tending task runs until close(); close it in the background.
        let client = self.client.clone();
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move { client.close().await.ok() });
        }
    }
}

impl Adapter for AerospikeStore {
    type DriverSuites = Self;

    /// Checks a URL the way the adapter will read it.
    fn check_url(raw: &str) -> Result<()> {
        parse_url(raw).map(|_| ())
    }

    async fn connect(spec: &ConnectSpec) -> Result<Self> {
        let url = spec.server_url(StoreKind::Aerospike)?;
        let target = parse_url(url.expose())?;
        let mut policy = ClientPolicy::default();
        let ms = u32::try_from(spec.connect_timeout.as_millis()).unwrap_or(u32::MAX);
        policy.timeout = ms;
        if let Some((user, password)) = &target.user {
            policy.set_auth_mode(AuthMode::Internal(user.clone(), password.clone()));
        }
        // Fails at once when no node answers (fail_if_not_connected is on by default).
        let client = Client::new(&policy, &target.host.as_str()).await?;
        let admin = AdminPolicy { timeout: ms };
        let namespaces = client.info(&admin, &["namespaces"]).await?;
        let known = namespaces.get("namespaces").cloned().unwrap_or_default();
        if !known.split(';').any(|n| n == target.namespace) {
            client.close().await.ok();
            bail!(
                "namespace '{}' does not exist on {} (namespaces: {known})",
                target.namespace,
                target.host
            );
        }
        let write = WritePolicy {
            send_key: true,
            ..Default::default()
        };
        Ok(AerospikeStore {
            client,
            target,
            write,
            read: ReadPolicy::default(),
            admin,
            indexes: Err("not created yet".to_string()),
            driver_records: false,
            ycsb: None,
            closed: false,
        })
    }
}

impl Store for AerospikeStore {
    type Driver = Supported;
    type Pool = Supported;
    type Ycsb = Supported;

    async fn describe(&mut self) -> Result<StoreInfo> {
        let build = self.info("build").await?;
        let edition = self.info("edition").await.unwrap_or_default();
        let ns = parse_info(
            &self
                .info(&format!("namespace/{}", self.target.namespace))
                .await?,
        );
        let mut settings = BTreeMap::new();
        for key in [
            "replication-factor",
            "storage-engine",
            "storage-engine.commit-to-device",
            "default-ttl",
        ] {
            if let Some(v) = ns.get(key) {
                settings.insert(key.to_string(), v.clone());
            }
        }
        settings.insert("namespace".to_string(), self.target.namespace.clone());
        settings.insert("set".to_string(), self.target.set.clone());
        // The cluster the client discovered from its seed hosts.
        let nodes: Vec<String> = self
            .client
            .nodes()
            .iter()
            .map(|n| format!("{} at {}", n.name(), n.address()))
            .collect();
        settings.insert(
            "nodes".to_string(),
            format!("{}: {}", nodes.len(), nodes.join(", ")),
        );
        let durable = ns
            .get("storage-engine.commit-to-device")
            .map(String::as_str)
            == Some("true");
        let statistic = used_bytes(&ns).map_or("data_used_bytes", |(name, _)| name);
        Ok(StoreInfo {
            version: format!(
                "{} {build}",
                if edition.is_empty() {
                    "Aerospike"
                } else {
                    &edition
                }
            ),
            durability: if durable { "durable" } else { "relaxed" }.to_string(),
            settings,
            search_path: match &self.indexes {
                Ok(()) => "get by primary key (secondary indexes on data.name and data.age \
                           created, not searched)"
                    .to_string(),
                Err(why) => format!("get by primary key (no secondary index: {why})"),
            },
            write_path: "put: single-record atomic write (Aerospike has no multi-statement \
                         transaction here)"
                .to_string(),
            size_method: format!("namespace statistic {statistic}"),
        })
    }

    async fn reset(&mut self) -> Result<()> {
        for (field, _) in INDEXES {
            let name = &index_name(&self.target.set, field);
            let dropped = self
                .client
                .drop_index(&self.admin, &self.target.namespace, &self.target.set, name)
                .await;
            match dropped {
                Err(e) if !e.matches(&[ResultCode::IndexNotFound]) => {
                    return Err(e).context("dropping the previous secondary indexes");
                }
                _ => {}
            }
        }
        // Deletes every record last updated before the server received this; later
        // inserts are untouched even while the truncation is still going.
        self.client
            .truncate(&self.admin, &self.target.namespace, &self.target.set, 0)
            .await
            .context("truncating the benchmark set")?;
        self.indexes = self.create_indexes().await;
        Ok(())
    }

    async fn insert(&mut self, r: &Record) -> Result<()> {
        let key = self.key(&r.unique_id)?;
        self.client.put(&self.write, &key, &bins(r)).await?;
        Ok(())
    }

    async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
        let key = self.key(unique_id)?;
        match self.client.get(&self.read, &key, Bins::All).await {
            Ok(found) => record(&found.bins).map(Some),
            Err(e) if e.matches(&[ResultCode::KeyNotFoundError]) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Stops the cluster-tending task and closes the client's connections.
    async fn close(mut self) -> Result<()> {
        self.closed = true;
        Ok(self.client.close().await?)
    }

    /// The storage work every node of the cluster counted for the namespace (see
    /// the `counters` module), summed over the nodes.
    async fn counters(&mut self) -> Result<BTreeMap<String, u64>> {
        let command = format!("namespace/{}", self.target.namespace);
        let mut total = BTreeMap::new();
        for node in self.client.nodes() {
            let answer = node.info(&self.admin, &[command.as_str()]).await?;
            let stats = parse_info(answer.get(&command).map_or("", String::as_str));
            counters::add(&mut total, counters::storage_counters(&stats));
        }
        Ok(total)
    }

    async fn disk_usage(&mut self) -> Result<DiskUsage> {
        let ns = parse_info(
            &self
                .info(&format!("namespace/{}", self.target.namespace))
                .await?,
        );
        let (name, bytes) = used_bytes(&ns).with_context(|| {
            format!(
                "namespace statistics name none of {}",
                SIZE_STATISTICS.join(", ")
            )
        })?;
        let mut usage = DiskUsage::bytes(bytes);
        usage
            .extra
            .insert(format!("namespace statistic {name}"), bytes);
        Ok(usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::record::generate;

    #[test]
    fn urls_name_host_namespace_set_and_user() {
        let t = parse_url("aerospike://bob:p%40ss@db1/test2?set=things").unwrap();
        assert_eq!(t.host, "db1:3000");
        assert_eq!(t.namespace, "test2");
        assert_eq!(t.set, "things");
        assert_eq!(t.user, Some(("bob".to_string(), "p@ss".to_string())));
        let t = parse_url("aerospike://bob:pw@db1:3001,db2,[::1]/test2").unwrap();
        assert_eq!(t.host, "db1:3001,db2:3000,[::1]:3000", "seed hosts");
        assert_eq!(t.namespace, "test2");
        let t = parse_url("aerospike://127.0.0.1:4000/ns").unwrap();
        assert_eq!(
            (t.host.as_str(), t.set.as_str(), t.user),
            ("127.0.0.1:4000", TABLE, None)
        );
        assert!(
            parse_url("aerospike://db1")
                .unwrap_err()
                .to_string()
                .contains("namespace")
        );
        assert!(parse_url("aerospike://db1/a/b").is_err());
        assert!(parse_url("aerospike:///ns").is_err());
    }

    #[test]
    fn bins_round_trip_every_field() {
        for r in generate(6, &"micro".parse().unwrap(), 1) {
            let map: indexmap::IndexMap<String, Value> = bins(&r)
                .into_iter()
                .map(|b| (b.name.to_string(), b.value))
                .collect();
            assert_eq!(record(&map).unwrap(), r);
        }
    }

    #[test]
    fn maps_read_back_in_any_server_order() {
        let r = &generate(6, &"micro".parse().unwrap(), 1)[0];
        let mut map: indexmap::IndexMap<String, Value> = bins(r)
            .into_iter()
            .map(|b| (b.name.to_string(), b.value))
            .collect();
        let ordered: indexmap::IndexMap<Value, Value> = indexmap::IndexMap::from([
            (Value::from("age"), Value::from(r.data.age)),
            (Value::from("name"), Value::from(r.data.name.as_str())),
        ]);
        map.insert("data".to_string(), Value::OrderedMap(ordered));
        assert_eq!(record(&map).unwrap(), *r);
        map.insert("id".to_string(), Value::from("not a number"));
        assert!(record(&map).unwrap_err().to_string().contains("bin id"));
    }

    #[test]
    fn index_names_are_the_sets_own() {
        // The default set keeps the names the indexes always had.
        assert_eq!(index_name(TABLE, "name"), "dbcompare_records_name");
        assert_eq!(index_name("other", "age"), "other_age");
    }

    #[test]
    fn namespace_statistics_pick_the_used_bytes() {
        let stats = parse_info("objects=10;device_used_bytes=4096;storage-engine=device");
        assert_eq!(used_bytes(&stats), Some(("device_used_bytes", 4096)));
        let stats = parse_info("data_used_bytes=100;memory_used_bytes=7");
        assert_eq!(used_bytes(&stats), Some(("data_used_bytes", 100)));
        assert_eq!(used_bytes(&parse_info("objects=1")), None);
    }
}
