//! PostgreSQL: the original benchmark's table with a JSONB `data` column, a unique index on
//! unique_id and expression indexes on `data->>'name'` and `(data->>'age')::bigint`;
//! prepared statements; each insert in BEGIN/COMMIT. A connection is a [`PostgresStore`]
//! over one of two clients, and has the traits of the suites that measure that client:
//! dbcompare's own connection ([`records::Own`], `wire`) for the classic suite's records
//! and `dbcompare check`, and tokio-postgres ([`client::TokioPostgres`]) for the driver,
//! pool and YCSB suites, which measure the driver (the registry opens it for them:
//! [`Adapter::DriverSuites`](crate::store::Adapter::DriverSuites)). What both do alike is
//! here.

use std::collections::BTreeMap;
use std::future::Future;
use std::str::FromStr;

use anyhow::{Context, Result};
use tokio_postgres::Config;

use crate::catalog::{Durability, StoreInfo, StoreKind};
use crate::store::{ConnectSpec, DiskUsage, dir_bytes};

pub mod client;
mod driver;
mod pool;
pub mod records;
pub mod tls;
mod wire;
mod ycsb;

use wire::TextRow;

const SCHEMA: &str = "
    DROP TABLE IF EXISTS dbcompare_records;
    CREATE TABLE dbcompare_records (
        id          BIGINT      PRIMARY KEY,
        unique_id   TEXT        NOT NULL,
        created_by  BIGINT      NOT NULL,
        updated_by  BIGINT      NOT NULL,
        deleted_by  BIGINT      NOT NULL,
        created_at  TIMESTAMPTZ NOT NULL,
        data        JSONB       NOT NULL
    );
    CREATE UNIQUE INDEX dbcompare_records_unique_id ON dbcompare_records (unique_id);
    CREATE INDEX dbcompare_records_name ON dbcompare_records ((data->>'name'));
    CREATE INDEX dbcompare_records_age ON dbcompare_records (((data->>'age')::bigint));
";

const FIND: &str = "SELECT id, unique_id, created_by, updated_by, deleted_by, created_at, data \
    FROM dbcompare_records WHERE unique_id = $1";

/// A connection to PostgreSQL over the client `C`.
pub struct PostgresStore<C> {
    conn: C,
    /// A local server's data directory, measured beside pg_database_size.
    data_dir: Option<std::path::PathBuf>,
    /// The TLS the URL asked for.
    tls: Option<crate::store::tls::Tls>,
    /// The hosts the URL names (tried in order; the report says which one answered).
    hosts: Vec<String>,
}

/// What both clients do alike.
pub trait Session: Send {
    /// The client, as the store's description names it.
    const CLIENT: &'static str;

    /// Runs `sql` (one statement or several) over the simple query protocol; every row it
    /// gave, as text.
    fn simple(&mut self, sql: &str) -> impl Future<Output = Result<Vec<TextRow>>> + Send;
}

/// What either client is opened with: the URL's settings, the TLS it asks for, and the
/// statement that sets the durability asked for.
struct Opening {
    config: Config,
    split: tls::Split,
    /// Run first on every connection: set per session, so it holds for a `--url` server
    /// too; SHOW reads it back.
    set: String,
}

impl Opening {
    fn new(spec: &ConnectSpec) -> Result<Opening> {
        let url = spec.server_url(StoreKind::Postgres)?;
        let split = tls::split(url.expose())?;
        let mut config = Config::from_str(&split.url)?;
        config.connect_timeout(spec.connect_timeout);
        Ok(Opening {
            config,
            split,
            set: session_settings(spec),
        })
    }

    /// The store over `conn`, opened as `spec` asked.
    fn store<C>(self, conn: C, spec: &ConnectSpec) -> Result<PostgresStore<C>> {
        Ok(PostgresStore {
            conn,
            data_dir: spec.data_dir.clone(),
            tls: self.split.tls,
            hosts: spec.server_url(StoreKind::Postgres)?.hosts().to_vec(),
        })
    }
}

/// What every connection runs first: the durability mode's `synchronous_commit` (the
/// server's own when the variant sets it), then the variant's own settings when the store
/// sets them (never empty).
fn session_settings(spec: &ConnectSpec) -> String {
    let own = &spec.options.settings;
    let mut set = Vec::new();
    match (
        own.contains_key("synchronous_commit"),
        spec.options.set_on_connect,
    ) {
        (false, _) => {
            let commit = match spec.durability {
                Durability::Durable => "on",
                Durability::Relaxed => "off",
            };
            set.push(format!("SET synchronous_commit = {commit}"));
        }
        // The variant's, as its server started with it.
        (true, false) => set.push("SET synchronous_commit = DEFAULT".to_string()),
        (true, true) => {}
    }
    if spec.options.set_on_connect {
        set.extend(own.iter().map(|(k, v)| format!("SET {k} = '{v}'")));
    }
    set.join("; ")
}

/// Checks a URL the way the driver will read it.
fn check_url(raw: &str) -> Result<()> {
    Config::from_str(&tls::split(raw)?.url)?;
    Ok(())
}

impl<C: Session> PostgresStore<C> {
    /// Runs `sql` over the simple query protocol; every row, as text.
    async fn simple(&mut self, sql: &str) -> Result<Vec<TextRow>> {
        self.conn.simple(sql).await
    }

    /// The first column of the first row `sql` returns, not NULL.
    async fn value(&mut self, sql: &str) -> Result<String> {
        self.simple(sql)
            .await?
            .into_iter()
            .next()
            .and_then(|row| row.into_iter().next().flatten())
            .with_context(|| format!("{sql} returned no value"))
    }

    async fn show(&mut self, setting: &str) -> Result<String> {
        self.value(&format!("SHOW {setting}")).await
    }

    /// The WAL the server wrote and synced, named with their source (see
    /// [`crate::counters`]): `pg_stat_wal` (PostgreSQL 14 on), its syncs from `pg_stat_io`
    /// on 18, which moved them there. This connection's pending statistics are flushed
    /// first (PostgreSQL 15 on); another connection's reach the view within a second, or
    /// when it is next idle.
    async fn wal_counters(&mut self) -> Result<BTreeMap<String, u64>> {
        use crate::counters::{BYTES_WRITTEN, SYNCS, named};
        // Absent before PostgreSQL 15, where the statistics are sent at once anyway.
        let _ = self.simple("SELECT pg_stat_force_next_flush()").await;
        let row = self
            .simple(
                "SELECT to_jsonb(w) ->> 'wal_bytes', to_jsonb(w) ->> 'wal_sync' \
                 FROM pg_stat_wal w",
            )
            .await?
            .into_iter()
            .next()
            .context("pg_stat_wal has no row")?;
        let count = |i: usize| -> Option<u64> { row.get(i)?.as_deref()?.parse().ok() };
        let mut counts = BTreeMap::new();
        let bytes = count(0).context("pg_stat_wal has no wal_bytes")?;
        counts.insert(named(BYTES_WRITTEN, "pg_stat_wal.wal_bytes"), bytes);
        match count(1) {
            Some(syncs) => {
                counts.insert(named(SYNCS, "pg_stat_wal.wal_sync"), syncs);
            }
            None => {
                let syncs = self
                    .value("SELECT sum(fsyncs)::bigint FROM pg_stat_io WHERE object = 'wal'")
                    .await
                    .ok()
                    .and_then(|v| v.parse().ok());
                if let Some(syncs) = syncs {
                    counts.insert(named(SYNCS, "pg_stat_io.fsyncs of wal"), syncs);
                }
            }
        }
        Ok(counts)
    }

    /// The TLS this connection uses, as the server reports it (pg_stat_ssl), with what the
    /// client verified.
    async fn tls_in_use(&mut self) -> String {
        let rows = self
            .simple("SELECT ssl, version, cipher FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            .await;
        let verified = self.tls.as_ref().map(|t| t.verify.name());
        let row = rows.map(|rows| rows.into_iter().next());
        match (row, verified) {
            (Ok(Some(r)), Some(verified)) if r.first() == Some(&Some("t".to_string())) => {
                let text = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
                format!("{} {}, {verified}", text(1), text(2))
            }
            (Ok(Some(_)), _) => "off".to_string(),
            // A server without pg_stat_ssl (another PostgreSQL-protocol server).
            (_, Some(verified)) => format!("TLS, {verified}"),
            (_, None) => "off".to_string(),
        }
    }

    /// The store's description, for either client.
    async fn description(&mut self) -> Result<StoreInfo> {
        let full = self.value("SELECT version()").await?;
        let version = server_name(&self.show("server_version").await?, &full);
        let mut settings = BTreeMap::new();
        for name in [
            "fsync",
            "synchronous_commit",
            "wal_sync_method",
            "full_page_writes",
            "shared_buffers",
        ] {
            settings.insert(name.to_string(), self.show(name).await?);
        }
        // NULL over a Unix socket.
        let tcp = self.value("SELECT inet_client_addr() IS NOT NULL").await?;
        let transport = if tcp == "t" { "TCP" } else { "Unix socket" };
        settings.insert("transport".to_string(), transport.to_string());
        settings.insert("client".to_string(), C::CLIENT.to_string());
        let tls = self.tls_in_use().await;
        settings.insert("tls".to_string(), tls);
        if self.hosts.len() > 1 {
            let row = self
                .simple("SELECT host(inet_server_addr()), inet_server_port()")
                .await?
                .into_iter()
                .next()
                .unwrap_or_default();
            let text = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
            settings.insert(
                "hosts".to_string(),
                format!(
                    "{} (answered: {}:{})",
                    self.hosts.join(", "),
                    text(0),
                    text(1)
                ),
            );
        }
        let durable = settings["fsync"] == "on" && settings["synchronous_commit"] != "off";
        let plan = self
            .value(&format!("EXPLAIN {}", FIND.replace("$1", "'x'")))
            .await
            .unwrap_or_default();
        // Keep the plan node, not the planner's cost guesses.
        let search_path = plan
            .split("  (cost=")
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        Ok(StoreInfo {
            version,
            durability: if durable { "durable" } else { "relaxed" }.to_string(),
            settings,
            search_path,
            write_path: "BEGIN; INSERT (prepared); COMMIT (one transaction per record)".to_string(),
            size_method: "pg_database_size after CHECKPOINT".to_string(),
        })
    }

    /// Drops and recreates the benchmark's table with every index, empty.
    async fn create_schema(&mut self) -> Result<()> {
        self.simple(SCHEMA).await.context(
            "creating the benchmark table and its indexes (the user needs CREATE on the \
                 database's public schema: GRANT CREATE ON SCHEMA public TO <user>, or to own \
                 the database)",
        )?;
        Ok(())
    }

    /// The database's size after a checkpoint, and the data directory's beside it.
    async fn size(&mut self) -> Result<DiskUsage> {
        self.simple("CHECKPOINT").await.context(
            "CHECKPOINT, which the size is measured after (the user needs to be a \
                 superuser or have the pg_checkpoint role: GRANT pg_checkpoint TO <user>)",
        )?;
        let bytes = self
            .value("SELECT pg_database_size(current_database())")
            .await?;
        let mut usage = DiskUsage::bytes(
            bytes
                .parse()
                .with_context(|| format!("pg_database_size gave {bytes}"))?,
        );
        if let Some(dir) = &self.data_dir {
            usage
                .extra
                .insert("data directory (with WAL)".to_string(), dir_bytes(dir));
        }
        Ok(usage)
    }
}

/// The server that answered, named for what it is, from `server_version` and `version()`:
/// CockroachDB and YugabyteDB speak PostgreSQL's protocol and report a PostgreSQL version.
pub fn server_name(server_version: &str, full: &str) -> String {
    if let Some(rest) = full.strip_prefix("CockroachDB ") {
        let own = rest.split_whitespace().nth(1).unwrap_or(rest);
        return format!("CockroachDB {own} (PostgreSQL protocol, reports {server_version})");
    }
    if let Some((reports, yb)) = server_version.split_once("-YB-") {
        let own = yb.split(['-', ' ']).next().unwrap_or(yb);
        return format!("YugabyteDB {own} (PostgreSQL protocol, reports {reports})");
    }
    format!("PostgreSQL {server_version}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_are_named_for_what_they_are() {
        assert_eq!(
            server_name(
                "15.18 (Debian 15.18-0+deb12u1)",
                "PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu"
            ),
            "PostgreSQL 15.18 (Debian 15.18-0+deb12u1)"
        );
        assert_eq!(
            server_name(
                "13.0.0",
                "CockroachDB CCL v23.1.11 (x86_64-pc-linux-gnu, built 2023/09/27 01:53:43)"
            ),
            "CockroachDB v23.1.11 (PostgreSQL protocol, reports 13.0.0)"
        );
        assert_eq!(
            server_name(
                "11.2-YB-2.18.0.0-b0",
                "PostgreSQL 11.2-YB-2.18.0.0-b0 on x86_64-pc-linux-gnu"
            ),
            "YugabyteDB 2.18.0.0 (PostgreSQL protocol, reports 11.2)"
        );
    }
}
