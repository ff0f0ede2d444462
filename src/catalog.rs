//! The catalog of stores: the suites a run can make of them, the closed set of kinds, every fact dbcompare keeps about each
//! kind in one table ([`StoreKind::facts`], which the compiler makes complete), the
//! durability modes, each store's own options, and what a running store reports about
//! itself ([`StoreInfo`]). Everything else (the adapters, the local servers, the plan)
//! reads these facts here rather than matching on a kind of its own.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};

/// The suite to run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Suite {
    /// The blog's sequence: INSERT micro/tiny/small one per transaction, then 40 x N searches.
    Classic,
    /// Driver micro-benchmarks after the Go SQL driver benchmark: tiny queries, large
    /// values, prepared and concurrent (1 to 16), with allocations per query.
    Driver,
    /// After the asyncmy suite: a large result set, 50 concurrent connections, a
    /// connection pool, a batch insert, on a 100,000-row table.
    Pool,
    /// YCSB's core workloads A to F (`--workload`, `--workload-file`, `--property`), every
    /// answer checked: throughput and latency percentiles per operation type.
    Ycsb,
}

impl std::fmt::Display for Suite {
    /// Its name on the command line and in run.json (the same): `classic`, `ycsb`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = self.to_possible_value().expect("no suite is skipped");
        f.write_str(value.get_name())
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
    /// A Redis Cluster, through the redis crate's cluster client: a record's keys share one
    /// hash slot.
    #[serde(rename = "redis-cluster")]
    RedisCluster,
    /// Aerospike, records as bins (URL only).
    Aerospike,
    /// Couchbase, records as JSON documents (URL only).
    Couchbase,
}

/// What dbcompare knows about one kind of store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// The name used on the command line, in environment variables and in reports.
    pub name: &'static str,
    /// How the store is reached.
    pub access: Access,
}

/// How a store is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Inside dbcompare's own process: no server and no URL.
    Embedded,
    /// A server, by URL.
    Server(ServerFacts),
}

/// The facts of a store that runs as a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerFacts {
    /// The URL schemes its URLs use (the first is the one examples use).
    pub schemes: &'static [&'static str],
    /// The port a URL without one means.
    pub default_port: u16,
    /// An example URL for messages.
    pub url_example: &'static str,
    /// How dbcompare starts a throw-away local server of it, or `None` when it starts none
    /// (the store then runs only with a URL).
    pub launcher: Option<Launcher>,
    /// Whether its URL may name several hosts (`h1:27017,h2:27017`): a replica set, a
    /// cluster's seeds or fail-over hosts, which its driver discovers or tries in order.
    pub hosts: Hosts,
}

/// How many hosts a store's URL may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hosts {
    /// One; why not more (for the refusal).
    One(&'static str),
    Several,
}

/// The throw-away local servers dbcompare can start (one launcher each in `server/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launcher {
    /// initdb + pg_ctl, configs/postgresql.conf.
    Postgres,
    /// mariadb-install-db (or mysqld --initialize-insecure) + mariadbd, configs/my.cnf.
    Mysql,
    /// redis-server, configs/redis.conf.
    Redis,
    /// N redis-server masters with `cluster-enabled yes` (configs/redis.conf), joined with
    /// `redis-cli --cluster create`.
    RedisCluster,
}

impl Launcher {
    /// The settings file of `configs/` the throw-away server starts with (and that
    /// `dbcompare check` holds a server given by URL against).
    pub const fn config(self) -> ConfigFile {
        match self {
            Launcher::Postgres => ConfigFile {
                path: "configs/postgresql.conf",
                text: include_str!("../configs/postgresql.conf"),
            },
            Launcher::Mysql => ConfigFile {
                path: "configs/my.cnf",
                text: include_str!("../configs/my.cnf"),
            },
            Launcher::Redis | Launcher::RedisCluster => ConfigFile {
                path: "configs/redis.conf",
                text: include_str!("../configs/redis.conf"),
            },
        }
    }
}

/// A settings file of `configs/`: `key = value` or `key value` lines, `#` comments, and
/// the durability settings after a comment line that starts with `# Durability`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigFile {
    /// Its path in the repository, for messages.
    pub path: &'static str,
    pub text: &'static str,
}

/// One setting of a [`ConfigFile`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigSetting {
    pub key: String,
    /// The value, without quotes.
    pub value: String,
    /// Whether it is one of the file's durability settings.
    pub durability: bool,
}

impl ConfigFile {
    /// The settings that have a value (flags such as `skip-name-resolve` and `[sections]`
    /// are left out).
    pub fn settings(&self) -> Vec<ConfigSetting> {
        parse_settings(self.text)
    }
}

/// The settings of a configuration file's text, as [`ConfigFile::settings`] reads them (a
/// variant's `--config` file too).
pub fn parse_settings(text: &str) -> Vec<ConfigSetting> {
    let mut durability = false;
    let mut settings = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with("# Durability") {
            durability = true;
        }
        if line.is_empty() || line.starts_with('#') || line.starts_with('[') {
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => match line.split_once(char::is_whitespace) {
                Some((k, v)) => (k.trim(), v.trim()),
                None => continue,
            },
        };
        settings.push(ConfigSetting {
            key: key.to_string(),
            value: value.trim_matches(|c| c == '"' || c == '\'').to_string(),
            durability,
        });
    }
    settings
}

impl StoreKind {
    /// Every kind, in the order `all` runs them (the enum's own order).
    pub fn all() -> &'static [StoreKind] {
        StoreKind::value_variants()
    }

    /// The one table of per-kind facts.
    pub const fn facts(self) -> Facts {
        const fn server(
            schemes: &'static [&'static str],
            default_port: u16,
            url_example: &'static str,
            launcher: Option<Launcher>,
            hosts: Hosts,
        ) -> Access {
            Access::Server(ServerFacts {
                schemes,
                default_port,
                url_example,
                launcher,
                hosts,
            })
        }
        let (name, access) = match self {
            StoreKind::Sqlite => ("sqlite", Access::Embedded),
            StoreKind::Postgres => (
                "postgres",
                server(
                    &["postgres", "postgresql"],
                    5432,
                    "postgres://user:pass@host:5432/db",
                    Some(Launcher::Postgres),
                    // tokio-postgres tries them in order (libpq's fail-over list).
                    Hosts::Several,
                ),
            ),
            StoreKind::Mysql => (
                "mysql",
                server(
                    &["mysql"],
                    3306,
                    "mysql://user:pass@host:3306/db",
                    Some(Launcher::Mysql),
                    Hosts::One("MySQL connections (dbcompare's and mysql_async) go to one host"),
                ),
            ),
            StoreKind::Mongodb => (
                "mongodb",
                server(
                    &["mongodb", "mongodb+srv"],
                    27017,
                    "mongodb://host:27017/dbcompare",
                    None,
                    Hosts::Several,
                ),
            ),
            StoreKind::Redis => (
                "redis",
                server(
                    &["redis", "rediss"],
                    6379,
                    "redis://host:6379/0",
                    Some(Launcher::Redis),
                    Hosts::One(
                        "a redis:// URL names one server (a Redis Cluster is the \
                         redis-cluster store: --url redis-cluster=redis+cluster://h1:7000,h2:7001)",
                    ),
                ),
            ),
            StoreKind::RedisCluster => (
                "redis-cluster",
                server(
                    &["redis+cluster", "rediss+cluster"],
                    6379,
                    "redis+cluster://:pass@h1:7000,h2:7001,h3:7002",
                    Some(Launcher::RedisCluster),
                    // Seeds: the cluster client discovers every node from any of them.
                    Hosts::Several,
                ),
            ),
            StoreKind::Aerospike => (
                "aerospike",
                server(
                    &["aerospike"],
                    3000,
                    "aerospike://host:3000/namespace",
                    None,
                    Hosts::Several,
                ),
            ),
            StoreKind::Couchbase => (
                "couchbase",
                server(
                    &["couchbase", "couchbases"],
                    11210,
                    "couchbase://user:pass@host/bucket",
                    None,
                    Hosts::Several,
                ),
            ),
        };
        Facts { name, access }
    }

    /// The name used on the command line and in reports.
    pub const fn name(self) -> &'static str {
        self.facts().name
    }

    /// The facts of a server store; `None` for an embedded one.
    pub const fn server(self) -> Option<ServerFacts> {
        match self.facts().access {
            Access::Embedded => None,
            Access::Server(facts) => Some(facts),
        }
    }

    /// Whether the store is embedded (no server, no URL).
    pub const fn is_embedded(self) -> bool {
        self.server().is_none()
    }

    /// Whether the store serves each connection on a thread of its own: the embedded store's
    /// calls run on the client's thread that makes them, PostgreSQL's backends are a process
    /// per connection, MySQL's and MongoDB's servers a thread per connection. Such a store
    /// keeps the machine's cores busy only when its connections' answers are read on as many
    /// client threads; one client event loop leaves them idle part of the time while it gets
    /// round to each connection. Redis's server is one event loop, Aerospike's and
    /// Couchbase's a few, and a second client loop takes a core they need (see
    /// docs/performance.md, "Client event loops"). The client's default loops follow it.
    pub const fn serves_a_thread_per_connection(self) -> bool {
        matches!(
            self,
            StoreKind::Sqlite | StoreKind::Postgres | StoreKind::Mysql | StoreKind::Mongodb
        )
    }

    /// The URL schemes this store accepts (none for an embedded store).
    pub fn schemes(self) -> &'static [&'static str] {
        self.server().map_or(&[], |s| s.schemes)
    }

    /// How dbcompare starts a local server of this store, if it can.
    pub fn launcher(self) -> Option<Launcher> {
        self.server().and_then(|s| s.launcher)
    }

    /// The environment variable that may hold this store's URL.
    pub fn url_env(self) -> String {
        let name = self.name().to_uppercase().replace('-', "_");
        format!("DBCOMPARE_{name}_URL")
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

/// The options that belong to one store each (flattened into `dbcompare run`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct StoreOptions {
    /// SQLite: use (and keep) this database file instead of a temporary one. Its
    /// dbcompare_records table is dropped and recreated.
    #[arg(long, value_name = "FILE")]
    pub sqlite_path: Option<PathBuf>,

    /// Couchbase: search through a SQL++ query on an index on unique_id (created by the
    /// reset) instead of a KV get by key.
    #[arg(long)]
    pub couchbase_query: bool,

    /// MongoDB: when each insert runs in a session transaction (`auto`: on a replica set
    /// or sharded cluster).
    #[arg(long, value_enum, default_value_t)]
    pub mongodb_transactions: Transactions,

    /// A variant's own settings (`--set`), by name: a store that sets a durability setting
    /// on each connection leaves one of these alone, and sets them all itself on each
    /// connection when `set_on_connect` says so. Not a flag of its own.
    #[arg(skip)]
    pub settings: BTreeMap<String, String>,

    /// Whether the store sets `settings` on each connection (`SET` on a PostgreSQL server
    /// given by URL) rather than its server having them already.
    #[arg(skip)]
    pub set_on_connect: bool,
}

/// When MongoDB inserts run in a session transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Transactions {
    /// On a replica set or sharded cluster; a single-document write on a standalone server.
    #[default]
    Auto,
    /// Always (a standalone MongoDB refuses them: the store fails).
    Always,
    /// Never: single-document atomic writes everywhere, like the other document stores.
    Never,
}

/// A store's own description of itself, read back from it at the start of its run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StoreInfo {
    /// Product and version as the store reports it (`SQLite 3.46.0`).
    pub version: String,
    /// `durable` (a commit is on disk before it is acknowledged) or `relaxed`.
    pub durability: String,
    /// The settings behind `durability`, read back from the store.
    pub settings: BTreeMap<String, String>,
    /// How a search finds its record (index used, as the store's planner reports it).
    pub search_path: String,
    /// How an insert is committed (transaction, atomic single write, ...).
    pub write_path: String,
    /// How the on-disk size is measured.
    pub size_method: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_agree_with_the_command_line_and_the_reports() {
        for &kind in StoreKind::all() {
            let value = kind.to_possible_value().expect("no variant is skipped");
            assert_eq!(value.get_name(), kind.name());
            assert_eq!(
                serde_json::to_string(&kind).unwrap(),
                format!("\"{}\"", kind.name())
            );
        }
        assert_eq!(StoreKind::all()[0], StoreKind::Sqlite);
        assert_eq!(StoreKind::all().len(), 8);
    }

    #[test]
    fn every_server_store_has_its_own_schemes_and_a_matching_example() {
        let mut seen = std::collections::HashSet::new();
        for &kind in StoreKind::all() {
            let Some(server) = kind.server() else {
                assert!(kind.schemes().is_empty());
                continue;
            };
            for scheme in server.schemes {
                assert!(seen.insert(*scheme), "{scheme} is claimed twice");
            }
            let first = crate::store::url::HostList::of(server.url_example).first;
            let example = url::Url::parse(&first).unwrap();
            assert!(server.schemes.contains(&example.scheme()), "{kind}");
        }
        assert!(StoreKind::Sqlite.is_embedded());
        assert_eq!(StoreKind::Redis.launcher(), Some(Launcher::Redis));
        assert_eq!(StoreKind::Mongodb.launcher(), None);
        assert_eq!(StoreKind::Couchbase.url_env(), "DBCOMPARE_COUCHBASE_URL");
        assert_eq!(
            StoreKind::RedisCluster.url_env(),
            "DBCOMPARE_REDIS_CLUSTER_URL"
        );
    }

    #[test]
    fn config_files_read_as_settings_with_their_durability_lines() {
        let redis = Launcher::Redis.config().settings();
        let get = |key: &str| redis.iter().find(|s| s.key == key).cloned().unwrap();
        assert_eq!(get("maxmemory").value, "4gb");
        assert!(!get("maxmemory").durability);
        assert_eq!(get("save").value, "");
        assert_eq!(get("appendfsync").value, "always");
        assert!(get("appendfsync").durability);
        let mysql = Launcher::Mysql.config().settings();
        assert!(
            mysql
                .iter()
                .any(|s| s.key == "innodb_buffer_pool_size" && s.value == "4G")
        );
        assert!(
            !mysql
                .iter()
                .any(|s| s.key == "skip-name-resolve" || s.key.starts_with('['))
        );
        let pg = Launcher::Postgres.config().settings();
        assert!(
            pg.iter()
                .any(|s| s.key == "datestyle" && s.value == "iso, dmy")
        );
        assert!(pg.iter().any(|s| s.key == "fsync" && s.durability));
    }
}
