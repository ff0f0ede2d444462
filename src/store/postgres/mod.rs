//! PostgreSQL (tokio-postgres): the original benchmark's table with a JSONB `data` column,
//! a unique index on unique_id and expression indexes on `data->>'name'` and
//! `(data->>'age')::bigint`; prepared statements; each insert in BEGIN/COMMIT.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use tokio::sync::watch;
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};
use tokio_postgres::types::Json;
use tokio_postgres::{Client, Config, NoTls, Socket, Statement};

use crate::catalog::{Durability, StoreInfo, StoreKind};
use crate::store::{Adapter, ConnectSpec, DiskUsage, Store, Supported, dir_bytes};
use crate::workload::record::{Data, Record};

mod driver;
mod pool;
pub mod tls;
mod ycsb;

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

const INSERT: &str = "INSERT INTO dbcompare_records \
    (id, unique_id, created_by, updated_by, deleted_by, created_at, data) \
    VALUES ($1, $2, $3, $4, $5, $6, $7)";

const FIND: &str = "SELECT id, unique_id, created_by, updated_by, deleted_by, created_at, data \
    FROM dbcompare_records WHERE unique_id = $1";

/// Statements prepared after the schema exists.
struct Prepared {
    insert: Statement,
    find: Statement,
}

pub struct PostgresStore {
    client: Client,
    prepared: Option<Prepared>,
    driver: Option<driver::DriverStatements>,
    /// The YCSB table's statements, once it is in use.
    ycsb: Option<crate::store::sql::Prepared<Statement>>,
    /// A local server's data directory, measured beside pg_database_size.
    data_dir: Option<std::path::PathBuf>,
    /// The driver's connection task, on the event loop the connection was opened on.
    connection: tokio::task::JoinHandle<()>,
    /// Why the connection ended, when the server ended it (`FATAL: terminating connection
    /// due to administrator command`): the driver gives the request only "connection
    /// closed", and its connection task the server's message.
    ended: watch::Receiver<Option<String>>,
    /// The TLS the URL asked for.
    tls: Option<crate::store::tls::Tls>,
    /// The hosts the URL names (tried in order; the report says which one answered).
    hosts: Vec<String>,
}

/// A connection task: the driver's connection, driven on this event loop.
type Task = (tokio::task::JoinHandle<()>, watch::Receiver<Option<String>>);

/// Connects with `tls`, and spawns the connection's task, which keeps why it ended.
async fn open<T>(config: &Config, tls: T) -> Result<(Client, Task)>
where
    T: MakeTlsConnect<Socket>,
    T::Stream: Send + 'static,
    <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
{
    let (client, connection) = config.connect(tls).await?;
    let (why, ended) = watch::channel(None);
    let task = tokio::spawn(async move {
        if let Err(e) = connection.await {
            // The next request fails with "connection closed"; this says why.
            let _ = why.send(Some(format!("{:#}", anyhow::Error::new(e))));
        }
    });
    Ok((client, (task, ended)))
}

/// A driver error, with the server's reason when the server ended the connection (waiting
/// a moment for the connection task to hear it).
async fn lost(ended: &watch::Receiver<Option<String>>, e: tokio_postgres::Error) -> anyhow::Error {
    if !e.is_closed() {
        return e.into();
    }
    let mut ended = ended.clone();
    let why = tokio::time::timeout(Duration::from_millis(500), ended.wait_for(Option::is_some));
    match why.await {
        Ok(Ok(why)) => {
            let why = why.clone().unwrap_or_default();
            anyhow::Error::new(e).context(format!("the server ended the connection: {why}"))
        }
        _ => e.into(),
    }
}

impl PostgresStore {
    async fn show(&self, setting: &str) -> Result<String> {
        let row = self
            .client
            .query_one(&format!("SHOW {setting}"), &[])
            .await?;
        Ok(row.get(0))
    }

    /// The TLS this connection uses, as the server reports it (pg_stat_ssl), with what the
    /// client verified.
    async fn tls_in_use(&self) -> String {
        let row = self
            .client
            .query_opt(
                "SELECT ssl, version, cipher FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                &[],
            )
            .await;
        let verified = self.tls.as_ref().map(|t| t.verify.name());
        match (row, verified) {
            (Ok(Some(r)), Some(verified)) if r.get::<_, bool>(0) => {
                let (version, cipher): (Option<String>, Option<String>) = (r.get(1), r.get(2));
                format!(
                    "{} {}, {verified}",
                    version.unwrap_or_default(),
                    cipher.unwrap_or_default()
                )
            }
            (Ok(Some(_)), _) => "off".to_string(),
            // A server without pg_stat_ssl (another PostgreSQL-protocol server).
            (_, Some(verified)) => format!("TLS, {verified}"),
            (_, None) => "off".to_string(),
        }
    }

    /// Prepares the record statements (after a reset; on first use on other connections).
    async fn prepare(&mut self) -> Result<()> {
        self.prepared = Some(Prepared {
            insert: self.client.prepare(INSERT).await?,
            find: self.client.prepare(FIND).await?,
        });
        Ok(())
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

impl Adapter for PostgresStore {
    /// Checks a URL the way the driver will read it.
    fn check_url(raw: &str) -> Result<()> {
        Config::from_str(&tls::split(raw)?.url)?;
        Ok(())
    }

    async fn connect(spec: &ConnectSpec) -> Result<Self> {
        let url = spec.server_url(StoreKind::Postgres)?;
        let split = tls::split(url.expose())?;
        let mut config = Config::from_str(&split.url)?;
        config.connect_timeout(spec.connect_timeout);
        let (client, (connection, ended)) = match &split.tls {
            None => open(&config, NoTls).await?,
            Some(tls) => {
                config.ssl_mode(if split.optional {
                    tokio_postgres::config::SslMode::Prefer
                } else {
                    tokio_postgres::config::SslMode::Require
                });
                let connector = tokio_postgres_rustls::MakeRustlsConnect::new(tls.client_config()?);
                open(&config, connector).await?
            }
        };
        // Set per session, so it holds for a --url server too; SHOW reads it back.
        let commit = match spec.durability {
            Durability::Durable => "on",
            Durability::Relaxed => "off",
        };
        client
            .batch_execute(&format!("SET synchronous_commit = {commit}"))
            .await
            .context("setting synchronous_commit")?;
        Ok(PostgresStore {
            client,
            prepared: None,
            driver: None,
            ycsb: None,
            data_dir: spec.data_dir.clone(),
            connection,
            ended,
            tls: split.tls,
            hosts: url.hosts().to_vec(),
        })
    }
}

impl Store for PostgresStore {
    type Driver = Supported;
    type Pool = Supported;
    type Ycsb = Supported;

    async fn describe(&mut self) -> Result<StoreInfo> {
        let full: String = self.client.query_one("SELECT version()", &[]).await?.get(0);
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
        let tcp: bool = self
            .client
            .query_one("SELECT inet_client_addr() IS NOT NULL", &[])
            .await?
            .get(0);
        let transport = if tcp { "TCP" } else { "Unix socket" };
        settings.insert("transport".to_string(), transport.to_string());
        settings.insert("tls".to_string(), self.tls_in_use().await);
        if self.hosts.len() > 1 {
            let row = self
                .client
                .query_one("SELECT host(inet_server_addr()), inet_server_port()", &[])
                .await?;
            let (addr, port): (Option<String>, Option<i32>) = (row.get(0), row.get(1));
            settings.insert(
                "hosts".to_string(),
                format!(
                    "{} (answered: {}:{})",
                    self.hosts.join(", "),
                    addr.unwrap_or_default(),
                    port.unwrap_or_default()
                ),
            );
        }
        let durable = settings["fsync"] == "on" && settings["synchronous_commit"] != "off";
        let plan = self
            .client
            .query(&format!("EXPLAIN {}", FIND.replace("$1", "'x'")), &[])
            .await?;
        let search_path = plan
            .first()
            .map(|r| {
                let line: String = r.get(0);
                // Keep the plan node, not the planner's cost guesses.
                line.split("  (cost=")
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_string()
            })
            .unwrap_or_default();
        Ok(StoreInfo {
            version,
            durability: if durable { "durable" } else { "relaxed" }.to_string(),
            settings,
            search_path,
            write_path: "BEGIN; INSERT (prepared); COMMIT (one transaction per record)".to_string(),
            size_method: "pg_database_size after CHECKPOINT".to_string(),
        })
    }

    async fn reset(&mut self) -> Result<()> {
        self.prepared = None;
        self.client.batch_execute(SCHEMA).await.context(
            "creating the benchmark table and its indexes (the user needs CREATE on the \
                 database's public schema: GRANT CREATE ON SCHEMA public TO <user>, or to own \
                 the database)",
        )?;
        self.prepare().await
    }

    async fn insert(&mut self, r: &Record) -> Result<()> {
        if self.prepared.is_none() {
            self.prepare().await?;
        }
        let prepared = self.prepared.as_ref().expect("prepared above");
        let client = &mut self.client;
        let written = async {
            let tx = client.transaction().await?;
            tx.execute(
                &prepared.insert,
                &[
                    &r.id,
                    &r.unique_id,
                    &r.created_by,
                    &r.updated_by,
                    &r.deleted_by,
                    &r.created_at,
                    &Json(&r.data),
                ],
            )
            .await?;
            tx.commit().await
        };
        match written.await {
            Ok(()) => Ok(()),
            Err(e) => Err(lost(&self.ended, e).await),
        }
    }

    async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
        if self.prepared.is_none() {
            self.prepare().await?;
        }
        let find = &self.prepared.as_ref().expect("prepared above").find;
        let row = match self.client.query_opt(find, &[&unique_id]).await {
            Ok(row) => row,
            Err(e) => return Err(lost(&self.ended, e).await),
        };
        let Some(row) = row else {
            return Ok(None);
        };
        let Json(data): Json<Data> = row.try_get(6)?;
        Ok(Some(Record {
            id: row.try_get(0)?,
            unique_id: row.try_get(1)?,
            created_by: row.try_get(2)?,
            updated_by: row.try_get(3)?,
            deleted_by: row.try_get(4)?,
            created_at: row.try_get::<_, DateTime<Utc>>(5)?,
            data,
        }))
    }

    async fn disk_usage(&mut self) -> Result<DiskUsage> {
        self.client.batch_execute("CHECKPOINT").await.context(
            "CHECKPOINT, which the size is measured after (the user needs to be a \
                 superuser or have the pg_checkpoint role: GRANT pg_checkpoint TO <user>)",
        )?;
        let row = self
            .client
            .query_one("SELECT pg_database_size(current_database())", &[])
            .await?;
        let mut usage = DiskUsage::bytes(row.get::<_, i64>(0) as u64);
        if let Some(dir) = &self.data_dir {
            usage
                .extra
                .insert("data directory (with WAL)".to_string(), dir_bytes(dir));
        }
        Ok(usage)
    }

    /// Drops the client, whose connection task then sends Terminate and ends; waits for it.
    async fn close(self) -> Result<()> {
        let PostgresStore {
            client,
            prepared,
            driver,
            ycsb,
            connection,
            ..
        } = self;
        drop((prepared, driver, ycsb, client));
        connection.await.context("the connection task")
    }
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
