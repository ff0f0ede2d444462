//! PostgreSQL: the original benchmark's table with a JSONB `data` column, a unique index on
//! unique_id and expression indexes on `data->>'name'` and `(data->>'age')::bigint`;
//! prepared statements; each insert in BEGIN/COMMIT. The records go over dbcompare's own
//! connection ([`wire`]); the driver, pool and YCSB suites measure tokio-postgres.

use std::collections::BTreeMap;
use std::str::FromStr;

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};
use tokio_postgres::types::{FromSql, Json, ToSql, Type};
use tokio_postgres::{Client, Config, NoTls, SimpleQueryMessage, Socket};

use crate::catalog::{Durability, StoreInfo, StoreKind};
use crate::store::{Adapter, ConnectSpec, DiskUsage, Purpose, Store, Supported, dir_bytes};
use crate::workload::record::{Data, Record};

mod driver;
mod pool;
pub mod tls;
mod wire;
mod ycsb;

use wire::{TextRow, Wire};

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

/// The record's columns, in the order INSERT takes them and FIND returns them.
const COLUMNS: [Type; 7] = [
    Type::INT8,
    Type::TEXT,
    Type::INT8,
    Type::INT8,
    Type::INT8,
    Type::TIMESTAMPTZ,
    Type::JSONB,
];

/// The prepared statements' names on dbcompare's own connection.
const INSERT_NAME: &str = "dbcompare_insert";
const FIND_NAME: &str = "dbcompare_find";

/// A connection: dbcompare's own for the records, or tokio-postgres's with the task that
/// drives it, for the suites that measure the driver.
enum Conn {
    Own(Wire),
    Driver(Client, tokio::task::JoinHandle<()>),
}

pub struct PostgresStore {
    conn: Conn,
    /// Whether the record statements are prepared on [`Conn::Own`].
    prepared: bool,
    driver: Option<driver::DriverStatements>,
    /// The YCSB table's statements, once it is in use.
    ycsb: Option<crate::store::sql::Prepared<tokio_postgres::Statement>>,
    /// A local server's data directory, measured beside pg_database_size.
    data_dir: Option<std::path::PathBuf>,
    /// The TLS the URL asked for.
    tls: Option<crate::store::tls::Tls>,
    /// The hosts the URL names (tried in order; the report says which one answered).
    hosts: Vec<String>,
}

/// The tokio-postgres client of a connection opened for the driver suites.
fn client(conn: &Conn) -> Result<&Client> {
    match conn {
        Conn::Driver(client, _) => Ok(client),
        Conn::Own(_) => bail!(
            "this PostgreSQL connection was opened for the records (the classic suite), \
             not for the driver, pool or YCSB suite"
        ),
    }
}

/// Connects tokio-postgres with `tls`, and spawns the connection's task.
async fn open<T>(config: &Config, tls: T) -> Result<Conn>
where
    T: MakeTlsConnect<Socket>,
    T::Stream: Send + 'static,
    <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
{
    let (client, connection) = config.connect(tls).await?;
    let task = tokio::spawn(async move {
        // The next request fails with the connection's error.
        let _ = connection.await;
    });
    Ok(Conn::Driver(client, task))
}

/// A column of a binary row, of the type `ty` it was checked to have; an error for NULL.
fn column<'a, T: FromSql<'a>>(raw: Option<&'a [u8]>, ty: &Type, name: &str) -> Result<T> {
    let raw = raw.with_context(|| format!("{name} is NULL"))?;
    T::from_sql(ty, raw).map_err(|e| anyhow::anyhow!(e).context(format!("decoding {name}")))
}

impl PostgresStore {
    /// Runs `sql` over the simple query protocol; every row, as text.
    async fn simple(&mut self, sql: &str) -> Result<Vec<TextRow>> {
        match &mut self.conn {
            Conn::Own(wire) => wire.simple(sql).await,
            Conn::Driver(client, _) => Ok(client
                .simple_query(sql)
                .await?
                .iter()
                .filter_map(|m| match m {
                    SimpleQueryMessage::Row(row) => Some(
                        (0..row.len())
                            .map(|i| row.get(i).map(str::to_string))
                            .collect(),
                    ),
                    _ => None,
                })
                .collect()),
        }
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

    /// Prepares the record statements on dbcompare's own connection (after a reset; on
    /// first use on other connections), checking the columns FIND returns.
    async fn prepare(&mut self) -> Result<&mut Wire> {
        let Conn::Own(wire) = &mut self.conn else {
            bail!(
                "this PostgreSQL connection was opened for the driver, pool or YCSB suite; \
                 the records go over dbcompare's own"
            );
        };
        if !self.prepared {
            wire.prepare(INSERT_NAME, INSERT, &COLUMNS).await?;
            let columns = wire.prepare(FIND_NAME, FIND, &[Type::TEXT]).await?;
            let want: Vec<u32> = COLUMNS.iter().map(Type::oid).collect();
            if columns != want {
                bail!("the search returns columns of types {columns:?}, not {want:?}");
            }
            self.prepared = true;
        }
        Ok(wire)
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
        // Set per session, so it holds for a --url server too; SHOW reads it back.
        let commit = match spec.durability {
            Durability::Durable => "on",
            Durability::Relaxed => "off",
        };
        let set = format!("SET synchronous_commit = {commit}");
        let conn = match (spec.purpose, &split.tls) {
            (Purpose::Records, tls) => {
                let ask = tls.as_ref().map(|tls| wire::TlsAsk {
                    tls,
                    optional: split.optional,
                });
                let mut wire = Wire::connect(&config, ask, spec.connect_timeout).await?;
                wire.simple(&set)
                    .await
                    .context("setting synchronous_commit")?;
                Conn::Own(wire)
            }
            (Purpose::DriverSuites, tls) => {
                let conn = match tls {
                    None => open(&config, NoTls).await?,
                    Some(tls) => {
                        config.ssl_mode(if split.optional {
                            tokio_postgres::config::SslMode::Prefer
                        } else {
                            tokio_postgres::config::SslMode::Require
                        });
                        let connector =
                            tokio_postgres_rustls::MakeRustlsConnect::new(tls.client_config()?);
                        open(&config, connector).await?
                    }
                };
                client(&conn)?
                    .batch_execute(&set)
                    .await
                    .context("setting synchronous_commit")?;
                conn
            }
        };
        Ok(PostgresStore {
            conn,
            prepared: false,
            driver: None,
            ycsb: None,
            data_dir: spec.data_dir.clone(),
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
        let client = match self.conn {
            Conn::Own(_) => "dbcompare's own connection (postgres-protocol's codecs)",
            Conn::Driver(..) => "tokio-postgres",
        };
        settings.insert("client".to_string(), client.to_string());
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

    async fn reset(&mut self) -> Result<()> {
        self.prepared = false;
        self.simple(SCHEMA).await.context(
            "creating the benchmark table and its indexes (the user needs CREATE on the \
                 database's public schema: GRANT CREATE ON SCHEMA public TO <user>, or to own \
                 the database)",
        )?;
        if let Conn::Own(_) = self.conn {
            self.prepare().await?;
        }
        Ok(())
    }

    async fn insert(&mut self, r: &Record) -> Result<()> {
        let wire = self.prepare().await?;
        let params: [&(dyn ToSql + Sync); 7] = [
            &r.id,
            &r.unique_id,
            &r.created_by,
            &r.updated_by,
            &r.deleted_by,
            &r.created_at,
            &Json(&r.data),
        ];
        wire.simple("BEGIN").await?;
        match wire
            .execute(INSERT_NAME, &params, &COLUMNS, |_| Ok(()))
            .await
        {
            Ok(_) => {
                wire.simple("COMMIT").await?;
                Ok(())
            }
            Err(e) => {
                // The transaction has failed; end it so that the connection can go on (a
                // connection the server ended has nothing to end).
                let _ = wire.simple("ROLLBACK").await;
                Err(e)
            }
        }
    }

    async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
        let wire = self.prepare().await?;
        let mut found = None;
        let rows = wire
            .execute(FIND_NAME, &[&unique_id], &[Type::TEXT], |row| {
                let [id, key, created, updated, deleted, at, data] = wire::columns::<7>(row)?;
                let Json(data): Json<Data> = column(data, &Type::JSONB, "data")?;
                found = Some(Record {
                    id: column(id, &Type::INT8, "id")?,
                    unique_id: column(key, &Type::TEXT, "unique_id")?,
                    created_by: column(created, &Type::INT8, "created_by")?,
                    updated_by: column(updated, &Type::INT8, "updated_by")?,
                    deleted_by: column(deleted, &Type::INT8, "deleted_by")?,
                    created_at: column::<DateTime<Utc>>(at, &Type::TIMESTAMPTZ, "created_at")?,
                    data,
                });
                Ok(())
            })
            .await?;
        if rows > 1 {
            bail!("{rows} records have unique_id {unique_id}");
        }
        Ok(found)
    }

    async fn disk_usage(&mut self) -> Result<DiskUsage> {
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

    /// Ends the connection with Terminate; for tokio-postgres, drops the client, whose
    /// connection task then sends it and ends, and waits for the task.
    async fn close(self) -> Result<()> {
        let PostgresStore {
            conn, driver, ycsb, ..
        } = self;
        drop((driver, ycsb));
        match conn {
            Conn::Own(wire) => wire.close().await,
            Conn::Driver(client, task) => {
                drop(client);
                task.await.context("the connection task")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server;
    use crate::store::url::StoreUrl;

    /// A refused insert ends its transaction: the connection goes on inserting and finding,
    /// and nothing of the refused record is left.
    #[tokio::test]
    async fn a_refused_insert_leaves_the_connection_usable() {
        let installation = server::find(StoreKind::Postgres)
            .expect("no PostgreSQL server is installed: run 'provisioning/install.sh postgres'");
        let local = server::start(
            StoreKind::Postgres,
            &installation,
            Durability::Relaxed,
            &server::DataDirs::temporary(),
            server::Serve::default(),
        )
        .expect("starting a local PostgreSQL server");
        let spec = ConnectSpec {
            url: Some(StoreUrl::parse(StoreKind::Postgres, &local.url()).unwrap()),
            data_dir: None,
            durability: Durability::Relaxed,
            connect_timeout: std::time::Duration::from_secs(10),
            options: Default::default(),
            purpose: Purpose::Records,
        };
        let mut store = PostgresStore::connect(&spec).await.unwrap();
        store.reset().await.unwrap();
        let records = crate::workload::record::generate(7, &"micro".parse().unwrap(), 1);
        store.insert(&records[0]).await.unwrap();
        let mut twin = records[1].clone();
        twin.unique_id = records[0].unique_id.clone();
        let e = format!("{:#}", store.insert(&twin).await.unwrap_err());
        assert!(e.contains("duplicate key value"), "{e}");
        assert!(e.contains("SQLSTATE 23505"), "{e}");
        store.insert(&records[2]).await.unwrap();
        for r in [&records[0], &records[2]] {
            assert_eq!(store.find(&r.unique_id).await.unwrap().as_ref(), Some(r));
        }
        assert_eq!(store.find(&records[1].unique_id).await.unwrap(), None);
        let rows = store
            .simple("SELECT count(*) FROM dbcompare_records")
            .await
            .unwrap();
        assert_eq!(rows, vec![vec![Some("2".to_string())]]);
        store.close().await.unwrap();
    }

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
