//! PostgreSQL over tokio-postgres ([`TokioPostgres`]), for the driver, pool and YCSB suites,
//! which measure the driver: its client, the task that drives its connection, and the
//! statements those suites prepare on it. It serves no records: the classic suite's go over
//! dbcompare's own connection.

use anyhow::{Context, Result, bail};
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};
use tokio_postgres::{Client, Config, NoTls, SimpleQueryMessage, Socket, Statement};

use super::wire::TextRow;
use super::{Opening, PostgresStore, Session};
use crate::catalog::StoreInfo;
use crate::store::sql::Prepared;
use crate::store::{Adapter, ConnectSpec, DiskUsage, Store, Supported};
use crate::workload::record::Record;

/// tokio-postgres's client and the task that drives its connection, with the suites'
/// statements once prepared.
pub struct TokioPostgres {
    pub(super) client: Client,
    task: tokio::task::JoinHandle<()>,
    /// The driver suite's statements, prepared on first use.
    pub(super) driver: Option<DriverStatements>,
    /// The YCSB table's statements, once it is in use.
    pub(super) ycsb: Option<Prepared<Statement>>,
}

impl Session for TokioPostgres {
    const CLIENT: &'static str = "tokio-postgres";

    async fn simple(&mut self, sql: &str) -> Result<Vec<TextRow>> {
        Ok(self
            .client
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
            .collect())
    }
}

/// The driver suite's statements, prepared on first use.
pub(super) struct DriverStatements {
    pub(super) exec: Statement,
    pub(super) one: Statement,
    pub(super) param: Statement,
    pub(super) echo: Statement,
    pub(super) large_text: Statement,
    pub(super) large_bytes: Statement,
}

/// Connects tokio-postgres with `tls`, and spawns the connection's task.
async fn open<T>(config: &Config, tls: T) -> Result<TokioPostgres>
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
    Ok(TokioPostgres {
        client,
        task,
        driver: None,
        ycsb: None,
    })
}

impl Adapter for PostgresStore<TokioPostgres> {
    type DriverSuites = Self;

    fn check_url(raw: &str) -> Result<()> {
        super::check_url(raw)
    }

    async fn connect(spec: &ConnectSpec) -> Result<Self> {
        let mut opening = Opening::new(spec)?;
        let conn = match &opening.split.tls {
            None => open(&opening.config, NoTls).await?,
            Some(tls) => {
                opening.config.ssl_mode(if opening.split.optional {
                    tokio_postgres::config::SslMode::Prefer
                } else {
                    tokio_postgres::config::SslMode::Require
                });
                let connector = tokio_postgres_rustls::MakeRustlsConnect::new(tls.client_config()?);
                open(&opening.config, connector).await?
            }
        };
        conn.client
            .batch_execute(&opening.set)
            .await
            .context("setting synchronous_commit")?;
        opening.store(conn, spec)
    }
}

/// The refusal of the records on a connection for the driver suites.
fn no_records<T>() -> Result<T> {
    bail!(
        "this PostgreSQL connection was opened for the driver, pool or YCSB suite; \
         the records go over dbcompare's own"
    )
}

/// The driver, pool and YCSB suites; the records are refused.
impl Store for PostgresStore<TokioPostgres> {
    type Driver = Supported;
    type Pool = Supported;
    type Ycsb = Supported;

    async fn counters(&mut self) -> Result<std::collections::BTreeMap<String, u64>> {
        self.wal_counters().await
    }

    async fn describe(&mut self) -> Result<StoreInfo> {
        self.description().await
    }

    async fn reset(&mut self) -> Result<()> {
        self.create_schema().await
    }

    async fn insert(&mut self, _: &Record) -> Result<()> {
        no_records()
    }

    async fn find(&mut self, _: &str) -> Result<Option<Record>> {
        no_records()
    }

    async fn disk_usage(&mut self) -> Result<DiskUsage> {
        self.size().await
    }

    /// Drops the client, whose connection task then sends Terminate and ends, and waits
    /// for the task.
    async fn close(self) -> Result<()> {
        let TokioPostgres { client, task, .. } = self.conn;
        drop(client);
        task.await.context("the connection task")
    }
}
