//! MySQL over mysql_async ([`MysqlAsync`]), for the driver, pool and YCSB suites, which
//! measure the driver: its connection and the statements those suites prepare on it. It
//! serves no records: the classic suite's go over dbcompare's own connection.

use anyhow::{Result, bail};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Row, Statement, Value};

use super::driver_statements::DriverStatements;
use super::{MysqlStore, Session, Table, tcp_as_named, verified};
use crate::catalog::{StoreInfo, StoreKind};
use crate::store::sql::Prepared;
use crate::store::{Adapter, ConnectSpec, DiskUsage, Store, Supported, tls};
use crate::workload::record::Record;

/// mysql_async's connection, with the suites' statements once prepared.
pub struct MysqlAsync {
    pub(super) conn: Conn,
    /// The driver suite's statements, prepared on first use.
    pub(super) driver: Option<DriverStatements>,
    /// The YCSB table's statements, once it is in use.
    pub(super) ycsb: Option<Prepared<Statement>>,
}

/// A server value as text, for settings read back.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::NULL => None,
        Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::Int(i) => Some(i.to_string()),
        Value::UInt(u) => Some(u.to_string()),
        other => Some(other.as_sql(true)),
    }
}

impl Session for MysqlAsync {
    const CLIENT: &'static str = "mysql_async";

    async fn query(&mut self, sql: &str) -> Result<Table> {
        let rows: Vec<Row> = self.conn.query(sql).await?;
        let columns = rows.first().map_or_else(Vec::new, |row| {
            row.columns_ref()
                .iter()
                .map(|c| c.name_str().into_owned())
                .collect()
        });
        let rows = rows
            .iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| row.as_ref(i).and_then(text))
                    .collect()
            })
            .collect();
        Ok(Table { columns, rows })
    }
}

impl Adapter for MysqlStore<MysqlAsync> {
    type DriverSuites = Self;

    /// Checks a URL the way the driver will read it; it must name a database.
    fn check_url(raw: &str) -> Result<()> {
        super::check_url(raw)
    }

    async fn connect(spec: &ConnectSpec) -> Result<Self> {
        let url = spec.server_url(StoreKind::Mysql)?;
        let opts = tcp_as_named(url.expose())?;
        let database = opts.db_name().unwrap_or_default().to_string();
        let verify = verified(&opts);
        // The driver builds its TLS configuration with the process's provider.
        tls::provider();
        let conn = MysqlAsync {
            conn: Conn::new(opts).await?,
            driver: None,
            ycsb: None,
        };
        Ok(MysqlStore::over(conn, spec, database, verify))
    }
}

/// The refusal of the records on a connection for the driver suites.
fn no_records<T>() -> Result<T> {
    bail!(
        "this MySQL connection was opened for the driver, pool or YCSB suite; \
         the records go over dbcompare's own"
    )
}

/// The driver, pool and YCSB suites; the records are refused.
impl Store for MysqlStore<MysqlAsync> {
    type Driver = Supported;
    type Pool = Supported;
    type Ycsb = Supported;

    async fn counters(&mut self) -> Result<std::collections::BTreeMap<String, u64>> {
        self.innodb_counters().await
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

    async fn setting(&mut self, name: &str) -> Result<Option<String>> {
        self.read_setting(name).await
    }

    async fn set_setting(&mut self, name: &str, value: &str) -> Result<()> {
        self.write_setting(name, value).await
    }

    /// COM_QUIT, then the socket is closed.
    async fn close(self) -> Result<()> {
        Ok(self.conn.conn.disconnect().await?)
    }
}
