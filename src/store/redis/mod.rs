//! Redis (redis crate, async): the record encoded with bincode 2 under its unique_id, plus
//! the original benchmark's hand-made secondary indexes (a hash per name and per age), all
//! in one MULTI/EXEC. Every key carries the `dbcompare:` prefix, so a reset deletes only
//! the benchmark's keys.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use bincode::{Decode, Encode};
use chrono::{TimeZone, Utc};
use redis::AsyncConnectionConfig;
use redis::aio::MultiplexedConnection;

use crate::catalog::{StoreInfo, StoreKind};
use crate::store::tls::{self, Tls, Verify};
use crate::store::{Adapter, ConnectSpec, DiskUsage, Store, Supported, dir_bytes};
use crate::workload::record::{Data, Record};

mod driver;
mod pool;
mod ycsb;

/// Every key of the benchmark starts with this.
const PREFIX: &str = "dbcompare:";

/// The value stored under a record's key: every field, `created_at` as Unix milliseconds.
#[derive(Debug, PartialEq, Eq, Encode, Decode)]
struct Value {
    id: i64,
    unique_id: String,
    created_by: i64,
    updated_by: i64,
    deleted_by: i64,
    created_at_ms: i64,
    name: String,
    age: i64,
}

fn encode(r: &Record) -> Result<Vec<u8>> {
    let value = Value {
        id: r.id,
        unique_id: r.unique_id.clone(),
        created_by: r.created_by,
        updated_by: r.updated_by,
        deleted_by: r.deleted_by,
        created_at_ms: r.created_at.timestamp_millis(),
        name: r.data.name.clone(),
        age: r.data.age,
    };
    Ok(bincode::encode_to_vec(&value, bincode::config::standard())?)
}

fn decode(bytes: &[u8]) -> Result<Record> {
    let (v, read): (Value, usize) = bincode::decode_from_slice(bytes, bincode::config::standard())?;
    if read != bytes.len() {
        bail!("{} trailing bytes after the record", bytes.len() - read);
    }
    Ok(Record {
        id: v.id,
        unique_id: v.unique_id,
        created_by: v.created_by,
        updated_by: v.updated_by,
        deleted_by: v.deleted_by,
        created_at: Utc
            .timestamp_millis_opt(v.created_at_ms)
            .single()
            .context("created_at out of range")?,
        data: Data {
            name: v.name,
            age: v.age,
        },
    })
}

pub struct RedisStore {
    conn: MultiplexedConnection,
    data_dir: Option<PathBuf>,
    /// Whether the driver suite's fixed keys were written.
    driver_keys: bool,
    /// The YCSB table's keys, once it is in use.
    ycsb: Option<ycsb::Keys>,
    /// The TLS the URL asked for.
    tls: Option<Tls>,
}

impl RedisStore {
    async fn config(&mut self, name: &str) -> Result<String> {
        let pair: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg(name)
            .query_async(&mut self.conn)
            .await
            .with_context(|| {
                format!(
                    "CONFIG GET {name} (dbcompare reads the persistence settings back; a \
                     server that renamed or disabled CONFIG cannot tell them)"
                )
            })?;
        Ok(pair.get(1).cloned().unwrap_or_default())
    }

    /// Every key starting with `prefix` (SCAN, which may repeat a key: deduplicated).
    async fn keys(&mut self, prefix: &str) -> Result<Vec<String>> {
        let mut cursor: u64 = 0;
        let mut all = Vec::new();
        loop {
            let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(format!("{prefix}*"))
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut self.conn)
                .await?;
            all.extend(keys);
            if next == 0 {
                all.sort_unstable();
                all.dedup();
                return Ok(all);
            }
            cursor = next;
        }
    }

    /// Deletes every key starting with `prefix`.
    async fn unlink_all(&mut self, prefix: &str) -> Result<()> {
        let keys = self.keys(prefix).await?;
        for chunk in keys.chunks(1000) {
            redis::cmd("UNLINK")
                .arg(chunk)
                .query_async::<()>(&mut self.conn)
                .await?;
        }
        Ok(())
    }

    async fn info(&mut self, section: &str) -> Result<BTreeMap<String, String>> {
        let text: String = redis::cmd("INFO")
            .arg(section)
            .query_async(&mut self.conn)
            .await?;
        Ok(text
            .lines()
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.to_string(), v.trim().to_string()))
            .collect())
    }
}

impl Adapter for RedisStore {
    /// Checks a URL the way the driver will read it.
    fn check_url(raw: &str) -> Result<()> {
        let (raw, [ca]) = tls::take_query(raw, ["cacert"])?;
        tls_of(&raw, ca.as_deref())?;
        redis::Client::open(raw)?;
        Ok(())
    }

    async fn connect(spec: &ConnectSpec) -> Result<Self> {
        let url = spec.server_url(StoreKind::Redis)?;
        // TCP_NODELAY, as the other stores' drivers and redis-benchmark set it (this
        // driver's default leaves Nagle's algorithm on).
        // dbcompare's `cacert=FILE` (redis-cli's `--cacert`): the CA to verify the server
        // with, which the driver's URL lacks.
        let (raw, [ca]) = tls::take_query(url.expose(), ["cacert"])?;
        let tls = tls_of(&raw, ca.as_deref())?;
        let info = redis::IntoConnectionInfo::into_connection_info(raw.as_str())?;
        let tcp = info.tcp_settings().clone().set_nodelay(true);
        let info = info.set_tcp_settings(tcp);
        // The driver builds its TLS configuration with the process's provider.
        tls::provider();
        let client = match &tls {
            Some(Tls { ca: Some(ca), .. }) => {
                let root_cert = std::fs::read(ca)
                    .with_context(|| format!("reading the CA file {}", ca.display()))?;
                tls::certificates(ca)?;
                redis::Client::build_with_tls(
                    info,
                    redis::TlsCertificates {
                        client_tls: None,
                        root_cert: Some(root_cert),
                    },
                )?
            }
            _ => redis::Client::open(info)?,
        };
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(spec.connect_timeout))
            // No timer per command (the driver's default arms one on every request): it cost
            // about 1 us of client CPU per GET, which the other stores' drivers do not pay and
            // redis-benchmark does not either. A stalled server is left to Ctrl-C, as for them.
            .set_response_timeout(None);
        let mut conn = client
            .get_multiplexed_async_connection_with_config(&config)
            .await?;
        redis::cmd("PING").query_async::<()>(&mut conn).await?;
        Ok(RedisStore {
            conn,
            driver_keys: false,
            ycsb: None,
            data_dir: spec.data_dir.clone(),
            tls,
        })
    }
}

/// The TLS a Redis URL asks for: `rediss://`, verified unless `#insecure`.
fn tls_of(raw: &str, ca: Option<&str>) -> Result<Option<Tls>> {
    let url = url::Url::parse(raw)?;
    if url.scheme() != "rediss" {
        if ca.is_some() {
            bail!("cacert is given for a plain redis:// URL: use rediss://");
        }
        return Ok(None);
    }
    let verify = if url.fragment() == Some("insecure") {
        Verify::Nothing
    } else {
        Verify::Full
    };
    Ok(Some(Tls {
        verify,
        ca: ca.map(std::path::PathBuf::from),
    }))
}

impl Store for RedisStore {
    type Driver = Supported;
    type Pool = Supported;
    type Ycsb = Supported;

    async fn describe(&mut self) -> Result<StoreInfo> {
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
        Ok(StoreInfo {
            version,
            durability: if durable { "durable" } else { "relaxed" }.to_string(),
            settings,
            search_path: "GET dbcompare:<unique_id> (primary key; the name and age hashes are \
                          written, not searched)"
                .to_string(),
            write_path: "MULTI; SET value; HSET names_<name>; HSET ages_<age>; EXEC".to_string(),
            size_method: "AOF bytes (aof_current_size) after SAVE, plus the RDB file when local"
                .to_string(),
        })
    }

    async fn reset(&mut self) -> Result<()> {
        self.unlink_all(PREFIX)
            .await
            .context("deleting the previous run's keys")?;
        Ok(())
    }

    async fn insert(&mut self, r: &Record) -> Result<()> {
        let value = encode(r)?;
        let key = format!("{PREFIX}{}", r.unique_id);
        redis::pipe()
            .atomic()
            .set(&key, value)
            .ignore()
            .hset(format!("{PREFIX}names_{}", r.data.name), &r.unique_id, r.id)
            .ignore()
            .hset(format!("{PREFIX}ages_{}", r.data.age), &r.unique_id, r.id)
            .ignore()
            .query_async::<()>(&mut self.conn)
            .await?;
        Ok(())
    }

    async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
        let key = format!("{PREFIX}{unique_id}");
        let bytes: Option<Vec<u8>> = redis::cmd("GET")
            .arg(key)
            .query_async(&mut self.conn)
            .await?;
        bytes.map(|b| decode(&b)).transpose()
    }

    async fn disk_usage(&mut self) -> Result<DiskUsage> {
        redis::cmd("SAVE")
            .query_async::<()>(&mut self.conn)
            .await
            .context(
                "SAVE, which the size is measured after (a server that renamed or disabled SAVE \
                 cannot tell its size)",
            )?;
        let persistence = self.info("persistence").await?;
        let aof = persistence
            .get("aof_current_size")
            .and_then(|v| v.parse::<u64>().ok());
        let mut usage = DiskUsage::default();
        let rdb = match self.data_dir.clone() {
            Some(dir) => Some(dir_bytes(&dir.join(self.config("dbfilename").await?))),
            None => None,
        };
        match (aof, rdb) {
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
    use crate::workload::record::generate;

    #[test]
    fn values_round_trip_every_field() {
        for r in generate(9, &"micro".parse().unwrap(), 1) {
            let bytes = encode(&r).unwrap();
            assert_eq!(decode(&bytes).unwrap(), r);
        }
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

    #[test]
    fn truncated_values_are_errors() {
        let r = &generate(9, &"micro".parse().unwrap(), 1)[0];
        let bytes = encode(r).unwrap();
        assert!(decode(&bytes[..bytes.len() - 3]).is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
    }
}
