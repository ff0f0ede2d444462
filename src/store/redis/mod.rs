//! Redis (redis crate, async): the record encoded with bincode 2 under its unique_id, plus
//! the original benchmark's hand-made secondary indexes (a hash per name and per age), all
//! in one MULTI/EXEC. Every key carries the `dbcompare:` prefix, so a reset deletes only
//! the benchmark's keys.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::catalog::StoreInfo;
use crate::store::tls::Tls;
use crate::store::{DiskUsage, Store, Supported, dir_bytes};
use crate::workload::record::Record;

mod cluster;
mod conn;
mod connect;
mod direct;
mod driver;
mod keys;
mod pool;
mod record;
mod resp2;
mod ycsb;

use cluster::{Node, Topology};
use conn::Conn;
use keys::{KeyBuffers, PREFIX, YcsbKeys};
use record::{decode, encode};

pub struct RedisStore {
    conn: Conn,
    /// The cluster's masters, when this is a Redis Cluster (read again at every reset and
    /// description, outside the measured phases).
    cluster: Option<Topology>,
    data_dir: Option<PathBuf>,
    /// Whether the driver suite's fixed keys were written.
    driver_keys: bool,
    /// The YCSB table's keys, once it is in use.
    ycsb: Option<YcsbKeys>,
    /// The TLS the URL asked for.
    tls: Option<Tls>,
    keys: KeyBuffers,
}

impl RedisStore {
    /// The masters a command for every node goes to: the cluster's, or the one server
    /// (`None`).
    fn targets(&self) -> Vec<Option<Node>> {
        match &self.cluster {
            Some(t) => t.masters.iter().cloned().map(Some).collect(),
            None => vec![None],
        }
    }

    /// The classic suite's key prefix of a record: `dbcompare:`, and in a cluster its hash
    /// tag (`dbcompare:{17}:`), so that its value and index entries share a slot.
    fn scope_into(&self, out: &mut String, unique_id: &str) {
        out.clear();
        out.push_str(PREFIX);
        if self.cluster.is_some() {
            out.push_str(cluster::tag(unique_id));
            out.push(':');
        }
    }

    /// Reads the cluster's topology again (a no-op on one server).
    async fn refresh_topology(&mut self) -> Result<()> {
        if self.cluster.is_some() {
            self.cluster = Some(topology(&mut self.conn).await?);
        }
        Ok(())
    }

    /// A configuration setting: the one server's, or the masters' when they all agree
    /// (else each master's, by address).
    async fn config(&mut self, name: &str) -> Result<String> {
        let mut values: Vec<(String, String)> = Vec::new();
        for node in self.targets() {
            let pair: Vec<String> = self
                .conn
                .on(node.as_ref(), redis::cmd("CONFIG").arg("GET").arg(name))
                .await
                .with_context(|| {
                    format!(
                        "CONFIG GET {name} (dbcompare reads the persistence settings back; a \
                         server that renamed or disabled CONFIG cannot tell them)"
                    )
                })?;
            let address = node.as_ref().map(Node::address).unwrap_or_default();
            values.push((address, pair.get(1).cloned().unwrap_or_default()));
        }
        let first = values[0].1.clone();
        if values.iter().all(|(_, v)| *v == first) {
            return Ok(first);
        }
        let each: Vec<String> = values.iter().map(|(a, v)| format!("{v} ({a})")).collect();
        Ok(each.join(", "))
    }

    /// Every key starting with `prefix`, on every master (SCAN, which may repeat a key:
    /// deduplicated).
    async fn keys(&mut self, prefix: &str) -> Result<Vec<String>> {
        let mut all = Vec::new();
        for node in self.targets() {
            let mut cursor: u64 = 0;
            loop {
                let (next, keys): (u64, Vec<String>) = self
                    .conn
                    .on(
                        node.as_ref(),
                        redis::cmd("SCAN")
                            .arg(cursor)
                            .arg("MATCH")
                            .arg(format!("{prefix}*"))
                            .arg("COUNT")
                            .arg(1000),
                    )
                    .await?;
                all.extend(keys);
                if next == 0 {
                    break;
                }
                cursor = next;
            }
        }
        all.sort_unstable();
        all.dedup();
        Ok(all)
    }

    /// Deletes every key starting with `prefix` (the cluster client splits each UNLINK by
    /// slot).
    async fn unlink_all(&mut self, prefix: &str) -> Result<()> {
        let keys = self.keys(prefix).await?;
        for chunk in keys.chunks(1000) {
            self.conn
                .query::<()>(redis::cmd("UNLINK").arg(chunk))
                .await?;
        }
        Ok(())
    }

    /// A section of `INFO` from one master (the one server).
    async fn info_of(
        &mut self,
        node: Option<&Node>,
        section: &str,
    ) -> Result<BTreeMap<String, String>> {
        let text: String = self.conn.on(node, redis::cmd("INFO").arg(section)).await?;
        Ok(text
            .lines()
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.to_string(), v.trim().to_string()))
            .collect())
    }

    /// A section of `INFO` from the server, or from the cluster's first master.
    async fn info(&mut self, section: &str) -> Result<BTreeMap<String, String>> {
        let first = self.targets().swap_remove(0);
        self.info_of(first.as_ref(), section).await
    }

    /// In a cluster, names the master serving `key` beside a failed command's error.
    fn on_node(&self, key: &str, e: redis::RedisError) -> anyhow::Error {
        let node = self
            .cluster
            .as_ref()
            .and_then(|t| t.node_of(cluster::slot(key.as_bytes())));
        match node {
            Some(node) => anyhow::Error::new(e).context(format!(
                "on {} (the master of slot {} when dbcompare last read the topology)",
                node.address(),
                cluster::slot(key.as_bytes())
            )),
            None => e.into(),
        }
    }
}

/// The cluster's topology, as the node the client picks reports it.
async fn topology(conn: &mut Conn) -> Result<Topology> {
    let text: String = redis::cmd("CLUSTER")
        .arg("NODES")
        .query_async(conn)
        .await
        .context("CLUSTER NODES")?;
    Topology::parse(&text)
}

/// The server's CPU time from `INFO cpu` (seconds, to the microsecond), in microseconds,
/// named with their source (see [`crate::counters`]).
fn cpu_counters(info: &str) -> Result<Vec<(String, u64)>> {
    use crate::counters::{CPU_SYSTEM_US, CPU_USER_US, named};
    let mut counts = Vec::new();
    for (field, figure) in [
        ("used_cpu_user", CPU_USER_US),
        ("used_cpu_sys", CPU_SYSTEM_US),
    ] {
        let seconds: f64 = info
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .with_context(|| format!("INFO cpu has no {field}"))?
            .trim()
            .parse()
            .with_context(|| format!("INFO cpu's {field} is not a number"))?;
        counts.push((
            named(figure, &format!("INFO {field}")),
            (seconds * 1e6).round() as u64,
        ));
    }
    Ok(counts)
}

impl Store for RedisStore {
    type Driver = Supported;
    type Pool = Supported;
    type Ycsb = Supported;

    async fn describe(&mut self) -> Result<StoreInfo> {
        self.refresh_topology().await?;
        // KeyDB keeps its own fields in a section of its own (none on other servers).
        let mut about = self.info("server").await?;
        about.extend(self.info("keydb").await?);
        let version = server_name(&about);
        let mut settings = BTreeMap::new();
        for name in ["appendonly", "appendfsync", "save", "maxmemory"] {
            let value = self.config(name).await?;
            settings.insert(name.to_string(), value);
        }
        let tls = self
            .tls
            .as_ref()
            .map_or_else(|| "off".to_string(), Tls::describe);
        settings.insert("tls".to_string(), tls);
        let durable = settings["appendonly"] == "yes" && settings["appendfsync"] == "always";
        let (search_path, write_path) = match &self.cluster {
            Some(topology) => {
                settings.insert("cluster".to_string(), topology.describe());
                settings.insert(
                    "hash tags".to_string(),
                    format!(
                        "a record's value and index entries share one slot: \
                         dbcompare:{{<tag>}}:<unique_id>, names_<name> and ages_<age> under \
                         the same tag, one of {} tags by the unique_id, their slots evenly spaced",
                        cluster::PARTITIONS
                    ),
                );
                (
                    "GET dbcompare:{<tag>}:<unique_id> on the master of its slot (primary key; \
                     the name and age hashes are written, not searched)",
                    "MULTI; SET value; HSET names_<name>; HSET ages_<age>; EXEC, on the master \
                     of the record's slot",
                )
            }
            None => (
                "GET dbcompare:<unique_id> (primary key; the name and age hashes are written, \
                 not searched)",
                "MULTI; SET value; HSET names_<name>; HSET ages_<age>; EXEC",
            ),
        };
        Ok(StoreInfo {
            version,
            durability: if durable { "durable" } else { "relaxed" }.to_string(),
            settings,
            search_path: search_path.to_string(),
            write_path: write_path.to_string(),
            size_method: "AOF bytes (aof_current_size) after SAVE, plus the RDB file when local \
                          (summed over the masters of a cluster)"
                .to_string(),
        })
    }

    async fn reset(&mut self) -> Result<()> {
        self.refresh_topology().await?;
        self.unlink_all(PREFIX)
            .await
            .context("deleting the previous run's keys")?;
        Ok(())
    }

    async fn insert(&mut self, r: &Record) -> Result<()> {
        let value = encode(r)?;
        let mut keys = std::mem::take(&mut self.keys);
        self.scope_into(&mut keys.record, &r.unique_id);
        keys.names.clone_from(&keys.record);
        keys.ages.clone_from(&keys.record);
        keys.record.push_str(&r.unique_id);
        keys.names.push_str("names_");
        keys.names.push_str(&r.data.name);
        let _ = write!(keys.ages, "ages_{}", r.data.age);
        let written = redis::pipe()
            .atomic()
            .set(&keys.record, value)
            .ignore()
            .hset(&keys.names, &r.unique_id, r.id)
            .ignore()
            .hset(&keys.ages, &r.unique_id, r.id)
            .ignore()
            .query_async::<()>(&mut self.conn)
            .await;
        let written = written.map_err(|e| self.on_node(&keys.record, e));
        self.keys = keys;
        written
    }

    async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
        let mut key = std::mem::take(&mut self.keys.record);
        self.scope_into(&mut key, unique_id);
        key.push_str(unique_id);
        let read: redis::RedisResult<Option<Vec<u8>>> =
            self.conn.query(redis::cmd("GET").arg(&key)).await;
        let found = match read {
            Ok(bytes) => bytes.map(|b| decode(&b)).transpose(),
            Err(e) => Err(self.on_node(&key, e)),
        };
        self.keys.record = key;
        found
    }

    async fn disk_usage(&mut self) -> Result<DiskUsage> {
        self.refresh_topology().await?;
        let mut aof_total: Option<u64> = None;
        let mut rdb_total: Option<u64> = None;
        for node in self.targets() {
            let node = node.as_ref();
            self.conn
                .on::<()>(node, &redis::cmd("SAVE"))
                .await
                .context(
                    "SAVE, which the size is measured after (a server that renamed or disabled \
                     SAVE cannot tell its size)",
                )?;
            let persistence = self.info_of(node, "persistence").await?;
            if let Some(aof) = persistence
                .get("aof_current_size")
                .and_then(|v| v.parse::<u64>().ok())
            {
                *aof_total.get_or_insert(0) += aof;
            }
            if self.data_dir.is_some() {
                // A local server: its RDB file, where the server says it keeps it.
                let mut file = PathBuf::new();
                for name in ["dir", "dbfilename"] {
                    let pair: Vec<String> = self
                        .conn
                        .on(node, redis::cmd("CONFIG").arg("GET").arg(name))
                        .await?;
                    file.push(pair.get(1).cloned().unwrap_or_default());
                }
                *rdb_total.get_or_insert(0) += dir_bytes(&file);
            }
        }
        let mut usage = DiskUsage::default();
        match (aof_total, rdb_total) {
            (Some(aof), rdb) => {
                usage.bytes = aof;
                if let Some(rdb) = rdb {
                    usage.extra.insert("RDB file".to_string(), rdb);
                }
            }
            (None, Some(rdb)) => usage.bytes = rdb,
            (None, None) => {
                bail!("AOF is off and the RDB file is on another machine: no size to report")
            }
        }
        if let Some(dir) = &self.data_dir {
            usage
                .extra
                .insert("data directory".to_string(), dir_bytes(dir));
        }
        Ok(usage)
    }

    async fn counters(&mut self) -> Result<BTreeMap<String, u64>> {
        let mut counts = BTreeMap::new();
        for node in self.targets() {
            let cpu: String = self
                .conn
                .on(node.as_ref(), redis::cmd("INFO").arg("cpu"))
                .await?;
            for (name, n) in cpu_counters(&cpu)? {
                *counts.entry(name).or_insert(0) += n;
            }
            if self.cluster.is_none() {
                continue;
            }
            let text: String = self
                .conn
                .on(node.as_ref(), redis::cmd("INFO").arg("errorstats"))
                .await?;
            if !text.contains("# Errorstats") {
                bail!("no INFO errorstats (Redis before 6.2): the redirects are not counted");
            }
            let errors: BTreeMap<&str, &str> =
                text.lines().filter_map(|l| l.split_once(':')).collect();
            for (code, name) in [("MOVED", "MOVED redirects"), ("ASK", "ASK redirects")] {
                let count = errors
                    .get(format!("errorstat_{code}").as_str())
                    .and_then(|v| v.strip_prefix("count="))
                    .and_then(|v| v.split(',').next())
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0);
                *counts.entry(name.to_string()).or_insert(0) += count;
            }
        }
        Ok(counts)
    }
}

/// The server that answered, named for what it is, from its `INFO`: Valkey, Dragonfly and
/// KeyDB speak Redis's protocol and report a Redis version beside (or instead of) their own.
pub fn server_name(info: &BTreeMap<String, String>) -> String {
    let field = |name: &str| info.get(name).map(String::as_str).filter(|v| !v.is_empty());
    let reports = field("redis_version").unwrap_or("unknown");
    let executable = field("executable").unwrap_or_default().to_lowercase();
    if let Some(valkey) = field("valkey_version") {
        format!("Valkey {valkey} (Redis protocol, reports {reports})")
    } else if field("server_name").is_some_and(|n| n.eq_ignore_ascii_case("valkey")) {
        format!("Valkey (Redis protocol, reports {reports})")
    } else if let Some(dragonfly) = field("dragonfly_version") {
        let own = dragonfly.trim_start_matches("df-");
        format!("Dragonfly {own} (Redis protocol, reports {reports})")
    } else if info.contains_key("mvcc_depth") || executable.contains("keydb") {
        format!("KeyDB {reports}")
    } else {
        format!("Redis {reports}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_cpu_is_read_from_info_in_microseconds() {
        let info = "# CPU\r\nused_cpu_sys:1.250000\r\nused_cpu_user:0.004321\r\n\
                    used_cpu_sys_children:9.000000\r\nused_cpu_user_children:9.000000\r\n";
        let counts = cpu_counters(info).unwrap();
        assert_eq!(
            counts,
            vec![
                ("cpu user us (INFO used_cpu_user)".to_string(), 4321),
                ("cpu system us (INFO used_cpu_sys)".to_string(), 1_250_000),
            ]
        );
        assert!(cpu_counters("# CPU\r\n").is_err());
    }

    #[test]
    fn servers_are_named_for_what_they_are() {
        let info = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            server_name(&info(&[
                ("redis_version", "7.0.15"),
                ("executable", "/usr/bin/redis-server")
            ])),
            "Redis 7.0.15"
        );
        assert_eq!(
            server_name(&info(&[
                ("redis_version", "7.2.4"),
                ("server_name", "valkey"),
                ("valkey_version", "8.0.1")
            ])),
            "Valkey 8.0.1 (Redis protocol, reports 7.2.4)"
        );
        assert_eq!(
            server_name(&info(&[
                ("redis_version", "7.4.0"),
                ("dragonfly_version", "df-v1.25.1")
            ])),
            "Dragonfly v1.25.1 (Redis protocol, reports 7.4.0)"
        );
        assert_eq!(
            server_name(&info(&[("redis_version", "6.3.4"), ("mvcc_depth", "0")])),
            "KeyDB 6.3.4"
        );
        assert_eq!(
            server_name(&info(&[
                ("redis_version", "6.3.4"),
                ("executable", "/data/keydb-server")
            ])),
            "KeyDB 6.3.4"
        );
    }
}
