//! MySQL, Percona and MariaDB: a JSON `data` column with generated columns indexed for
//! name and age, a unique index on unique_id, InnoDB; each insert in START
//! TRANSACTION/COMMIT with prepared statements. A connection is a [`MysqlStore`] over one
//! of two clients, and has the traits of the suites that measure that client: dbcompare's
//! own connection ([`records::Own`], `wire`) for the classic suite's records and
//! `dbcompare check`, and mysql_async ([`client::MysqlAsync`]) for the driver, pool and
//! YCSB suites, which measure the driver (the registry opens it for them:
//! [`Adapter::DriverSuites`](crate::store::Adapter::DriverSuites)). What both do alike is
//! here.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use mysql_async::{Opts, OptsBuilder};

use crate::catalog::StoreInfo;
use crate::store::tls::{self, Tls, Verify};
use crate::store::{ConnectSpec, DiskUsage, dir_bytes};

mod binary;
pub mod client;
mod driver;
mod driver_statements;
mod handshake;
mod pool;
pub mod records;
mod rows;
mod wire;
mod ycsb;

pub use wire::{Table, TextRow};

/// JSON_UNQUOTE(JSON_EXTRACT(...)) works on MySQL 5.7+, 8.x and MariaDB alike
/// (MariaDB has no `->>`).
const SCHEMA: [&str; 2] = [
    "DROP TABLE IF EXISTS dbcompare_records",
    "CREATE TABLE dbcompare_records (
        id          BIGINT      NOT NULL PRIMARY KEY,
        unique_id   VARCHAR(64) NOT NULL,
        created_by  BIGINT      NOT NULL,
        updated_by  BIGINT      NOT NULL,
        deleted_by  BIGINT      NOT NULL,
        created_at  DATETIME(3) NOT NULL,
        data        JSON        NOT NULL,
        data_name   VARCHAR(64) AS (JSON_UNQUOTE(JSON_EXTRACT(data, '$.name'))) VIRTUAL,
        data_age    BIGINT      AS (JSON_EXTRACT(data, '$.age')) VIRTUAL,
        UNIQUE KEY dbcompare_records_unique_id (unique_id),
        KEY dbcompare_records_name (data_name),
        KEY dbcompare_records_age (data_age)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
];

const INSERT: &str = "INSERT INTO dbcompare_records \
    (id, unique_id, created_by, updated_by, deleted_by, created_at, data) \
    VALUES (?, ?, ?, ?, ?, ?, ?)";

const FIND: &str = "SELECT id, unique_id, created_by, updated_by, deleted_by, created_at, data \
    FROM dbcompare_records WHERE unique_id = ?";

/// Statements a connection keeps prepared at least. The driver closes the least recently
/// used statement beyond its cache (32 by default) even while it is held, and its next use
/// fails; the YCSB suite holds 3 + 3 x fieldcount + 1 of them (34 for YCSB's 10 fields).
pub(super) const STATEMENT_CACHE: usize = 256;

/// The driver's options for `raw`, on the transport the URL names. The driver, given a
/// loopback address, would otherwise reconnect through the server's Unix socket unseen
/// (its `prefer_socket`, on by default): a faster path than the TCP the other stores and
/// the native tools use, which would skew every comparison. A URL that asks for the
/// socket (`?socket=PATH` or `?prefer_socket=true`) gets it; the report says which it was.
fn tcp_as_named(raw: &str) -> Result<Opts> {
    let opts = options(raw)?;
    let asks = url::Url::parse(raw)?
        .query_pairs()
        .any(|(key, _)| key == "prefer_socket" || key == "socket");
    let cache = opts.stmt_cache_size().max(STATEMENT_CACHE);
    let builder = OptsBuilder::from_opts(opts).stmt_cache_size(cache);
    Ok(if asks {
        builder.into()
    } else {
        builder.prefer_socket(false).into()
    })
}

/// The TLS `raw` asks for (`require_ssl=true`, with `verify_ca`, `verify_identity` and
/// dbcompare's `ssl_ca`), for dbcompare's own connection.
fn tls_of(raw: &str) -> Result<Option<Tls>> {
    let (_, [ca]) = tls::take_query(raw, ["ssl_ca"])?;
    Ok(verified(&options(raw)?).map(|verify| Tls {
        verify,
        ca: ca.map(PathBuf::from),
    }))
}

/// The driver's options for `raw`, with dbcompare's `ssl_ca=FILE` (the mysql client's
/// `--ssl-ca`: trust only the CA in FILE), which the driver's URL lacks.
fn options(raw: &str) -> Result<Opts> {
    let (raw, [ca]) = tls::take_query(raw, ["ssl_ca"])?;
    let opts = Opts::from_url(&raw)?;
    if opts
        .ssl_opts()
        .is_some_and(|s| s.skip_domain_validation() && !s.accept_invalid_certs())
    {
        // The driver matches rustls's old error text, which rustls no longer gives: the
        // host name would still be checked.
        bail!(
            "verify_identity=false does not take effect with this driver version: use the host \
             name the certificate names, or verify_ca=false"
        );
    }
    let Some(ca) = ca else {
        return Ok(opts);
    };
    let Some(ssl) = opts.ssl_opts().cloned() else {
        bail!("ssl_ca is given without require_ssl=true");
    };
    tls::certificates(std::path::Path::new(&ca))?;
    let ssl = ssl
        .with_root_certs(vec![std::path::PathBuf::from(ca).into()])
        .with_disable_built_in_roots(true);
    Ok(OptsBuilder::from_opts(opts).ssl_opts(ssl).into())
}

/// Checks a URL the way the driver will read it; it must name a database.
fn check_url(raw: &str) -> Result<()> {
    let opts = options(raw)?;
    if opts.db_name().is_none_or(str::is_empty) {
        bail!("the URL must name a database (mysql://user@host:3306/dbname)");
    }
    Ok(())
}

/// How much of the server's certificate the options verify, when they use TLS.
fn verified(opts: &Opts) -> Option<Verify> {
    opts.ssl_opts().map(|ssl| {
        if ssl.accept_invalid_certs() {
            Verify::Nothing
        } else if ssl.skip_domain_validation() {
            Verify::Chain
        } else {
            Verify::Full
        }
    })
}

/// A connection to MySQL over the client `C`.
pub struct MysqlStore<C> {
    conn: C,
    /// A local server's data directory, measured beside information_schema.
    data_dir: Option<PathBuf>,
    database: String,
    /// What the client verified, when the connection uses TLS.
    tls: Option<Verify>,
}

/// What both clients do alike.
pub trait Session: Send {
    /// The client, as the store's description names it.
    const CLIENT: &'static str;

    /// Runs `sql` over the text protocol; every row it gave, as text, with its columns.
    fn query(&mut self, sql: &str) -> impl Future<Output = Result<Table>> + Send;
}

/// `text` as a string literal of SQL (quotes and backslashes escaped).
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

impl<C: Session> MysqlStore<C> {
    /// The store over `conn`, opened as `spec` asked.
    fn over(conn: C, spec: &ConnectSpec, database: String, tls: Option<Verify>) -> Self {
        MysqlStore {
            conn,
            data_dir: spec.data_dir.clone(),
            database,
            tls,
        }
    }

    async fn query(&mut self, sql: &str) -> Result<Table> {
        self.conn.query(sql).await
    }

    /// The TLS this connection uses, as the server reports it, with what the client verified.
    async fn tls_in_use(&mut self) -> Result<String> {
        let rows = self
            .query("SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')")
            .await?
            .pairs();
        let value = |name: &str| {
            rows.iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let (version, cipher) = (value("Ssl_version"), value("Ssl_cipher"));
        Ok(match self.tls {
            Some(verify) if !version.is_empty() => format!("{version} {cipher}, {}", verify.name()),
            _ => "off".to_string(),
        })
    }

    async fn variables(&mut self, names: &[&str]) -> Result<BTreeMap<String, String>> {
        let select: Vec<String> = names.iter().map(|n| format!("@@{n}")).collect();
        let row = self
            .query(&format!("SELECT {}", select.join(", ")))
            .await?
            .rows
            .into_iter()
            .next()
            .context("no row from SELECT @@...")?;
        Ok(names
            .iter()
            .zip(row)
            .map(|(n, v)| (n.to_string(), v.unwrap_or_else(|| "NULL".to_string())))
            .collect())
    }

    /// InnoDB's own counts of its bytes to and from storage and its fsyncs (`SHOW GLOBAL
    /// STATUS`), named with their source (see [`crate::counters`]).
    async fn innodb_counters(&mut self) -> Result<BTreeMap<String, u64>> {
        use crate::counters::{BYTES_READ, BYTES_WRITTEN, SYNCS, named};
        let rows = self
            .query(
                "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_data_written', \
                 'Innodb_os_log_written', 'Innodb_data_fsyncs', 'Innodb_data_read')",
            )
            .await?
            .pairs();
        let mut counts = BTreeMap::new();
        for (name, value) in rows {
            let figure = match name.as_str() {
                "Innodb_data_written" => BYTES_WRITTEN,
                "Innodb_os_log_written" => "log bytes written",
                "Innodb_data_fsyncs" => SYNCS,
                "Innodb_data_read" => BYTES_READ,
                _ => continue,
            };
            let value = value
                .parse()
                .with_context(|| format!("{name} is not a count: {value:?}"))?;
            counts.insert(named(figure, &name), value);
        }
        Ok(counts)
    }

    /// The store's description, for either client.
    async fn description(&mut self) -> Result<StoreInfo> {
        let about = self.variables(&["version", "version_comment"]).await?;
        let mut settings = self
            .variables(&[
                "innodb_flush_log_at_trx_commit",
                "sync_binlog",
                "log_bin",
                "innodb_flush_method",
                "innodb_doublewrite",
                "innodb_buffer_pool_size",
            ])
            .await?;
        // The server's view of this connection: `host:port` over TCP, `localhost` over the
        // Unix socket.
        let client = self
            .query("SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()")
            .await?
            .value();
        let transport = match client.context("this connection is not in PROCESSLIST")? {
            host if host.contains(':') => "TCP",
            _ => "Unix socket",
        };
        settings.insert("transport".to_string(), transport.to_string());
        settings.insert("client".to_string(), C::CLIENT.to_string());
        settings.insert("tls".to_string(), self.tls_in_use().await?);
        let binlog_off = matches!(settings["log_bin"].as_str(), "0" | "OFF");
        let durable = settings["innodb_flush_log_at_trx_commit"] == "1"
            && (binlog_off || settings["sync_binlog"] == "1");
        // MySQL reads a unique-key row while planning: explain a key that exists, if any.
        let some_id = self
            .query("SELECT unique_id FROM dbcompare_records LIMIT 1")
            .await?
            .value();
        let key = literal(&some_id.unwrap_or_else(|| "none".to_string()));
        let plan = self
            .query(&format!("EXPLAIN {}", FIND.replace('?', &key)))
            .await?;
        let search_path = plan.rows.first().map_or_else(String::new, |row| {
            let column = |name: &str| {
                plan.columns
                    .iter()
                    .position(|c| c.eq_ignore_ascii_case(name))
                    .and_then(|i| row.get(i).cloned().flatten())
                    .unwrap_or_else(|| "NULL".to_string())
            };
            format!(
                "EXPLAIN: type={} key={} rows={} {}",
                column("type"),
                column("key"),
                column("rows"),
                column("Extra")
            )
            .trim_end()
            .trim_end_matches(" NULL")
            .to_string()
        });
        Ok(StoreInfo {
            version: server_name(&about["version"], &about["version_comment"]),
            durability: if durable { "durable" } else { "relaxed" }.to_string(),
            settings,
            search_path,
            write_path: "START TRANSACTION; INSERT (prepared); COMMIT (one transaction per record)"
                .to_string(),
            size_method: "information_schema data_length + index_length after ANALYZE TABLE"
                .to_string(),
        })
    }

    /// Drops and recreates the benchmark's table with every index, empty.
    async fn create_schema(&mut self) -> Result<()> {
        for statement in SCHEMA {
            self.query(statement).await.context(
                "creating the benchmark table and its indexes (the user needs every \
                     privilege on the URL's database: GRANT ALL ON <database>.* TO <user>)",
            )?;
        }
        Ok(())
    }

    async fn read_setting(&mut self, name: &str) -> Result<Option<String>> {
        // Options take `-` and `_` alike; variables only `_`.
        let name = name.replace('-', "_");
        Ok(self.variables(&[&name]).await?.remove(&name))
    }

    async fn write_setting(&mut self, name: &str, value: &str) -> Result<()> {
        let name = name.replace('-', "_");
        // A number or a word as it is (`2`, `ON`); anything else as a string.
        let plain = !value.is_empty()
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'));
        let value = if plain {
            value.to_string()
        } else {
            literal(value)
        };
        self.query(&format!("SET GLOBAL {name} = {value}"))
            .await
            .with_context(|| format!("SET GLOBAL {name} = {value}"))?;
        Ok(())
    }

    /// The table's size after ANALYZE TABLE, and the data directory's beside it.
    async fn size(&mut self) -> Result<DiskUsage> {
        self.query("ANALYZE TABLE dbcompare_records")
            .await
            .context(
                "ANALYZE TABLE, which the size is read after (the user needs SELECT and INSERT \
             on the benchmark's table: GRANT ALL ON <database>.* TO <user>)",
            )?;
        let bytes = self
            .query(
                "SELECT CAST(data_length + index_length AS UNSIGNED) FROM information_schema.tables \
                 WHERE table_schema = DATABASE() AND table_name = 'dbcompare_records'",
            )
            .await?
            .value()
            .context("the benchmark table is missing")?;
        let mut usage = DiskUsage::bytes(
            bytes
                .parse()
                .with_context(|| format!("the table's size is {bytes:?}"))?,
        );
        if let Some(dir) = &self.data_dir {
            usage.extra.insert(
                "database directory".to_string(),
                dir_bytes(&dir.join(&self.database)),
            );
            usage
                .extra
                .insert("data directory".to_string(), dir_bytes(dir));
        }
        Ok(usage)
    }
}

/// The server that answered, named for what it is, from `@@version` and
/// `@@version_comment`: `10.11.6-MariaDB-0+deb12u1` is `MariaDB 10.11.6
/// (10.11.6-MariaDB-0+deb12u1)`; TiDB speaks MySQL's protocol and reports a MySQL version.
pub fn server_name(version: &str, comment: &str) -> String {
    let number = version.split('-').next().unwrap_or_default();
    if let Some((_, tidb)) = version.split_once("-TiDB-") {
        return format!("TiDB {tidb} (MySQL protocol, reports {number})");
    }
    let flavour = if version.contains("MariaDB") {
        "MariaDB"
    } else if comment.contains("Percona") {
        "Percona Server"
    } else {
        "MySQL"
    };
    format!("{flavour} {number} ({version})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_are_named_for_what_they_are() {
        assert_eq!(
            server_name("10.11.19-MariaDB-0+deb12u1", "Debian 12"),
            "MariaDB 10.11.19 (10.11.19-MariaDB-0+deb12u1)"
        );
        assert_eq!(
            server_name("8.0.39-30", "Percona Server (GPL), Release 30"),
            "Percona Server 8.0.39 (8.0.39-30)"
        );
        assert_eq!(
            server_name("8.4.3", "MySQL Community Server - GPL"),
            "MySQL 8.4.3 (8.4.3)"
        );
        assert_eq!(
            server_name("8.0.11-TiDB-v7.5.1", "TiDB Server (Apache License 2.0)"),
            "TiDB v7.5.1 (MySQL protocol, reports 8.0.11)"
        );
    }
}
