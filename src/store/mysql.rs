//! MySQL, Percona and MariaDB (mysql_async): a JSON `data` column with generated columns
//! indexed for name and age, a unique index on unique_id, InnoDB; each insert in
//! START TRANSACTION/COMMIT with prepared statements.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use chrono::{NaiveDateTime, TimeZone, Utc};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder, Row, Statement, TxOpts, Value};

use super::{ConnectSpec, DiskUsage, Store, StoreUrl, dir_bytes};
use crate::record::{Data, Record};
use crate::report::model::StoreInfo;
use crate::suite::driver::{DriverTest, check_large};
use crate::suite::pool::{BenchRow, PoolTest};
use crate::suite::watchdog;

pub const SCHEMES: &[&str] = &["mysql"];

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

/// Checks a URL the way the driver will read it; it must name a database.
pub fn check_url(raw: &str) -> Result<()> {
    let opts = Opts::from_url(raw)?;
    if opts.db_name().is_none_or(str::is_empty) {
        bail!("the URL must name a database (mysql://user@host:3306/dbname)");
    }
    Ok(())
}

/// The driver's options for `raw`, on the transport the URL names. The driver, given a
/// loopback address, would otherwise reconnect through the server's Unix socket unseen
/// (its `prefer_socket`, on by default): a faster path than the TCP the other stores and
/// the native tools use, which would skew every comparison. A URL that asks for the
/// socket (`?socket=PATH` or `?prefer_socket=true`) gets it; the report says which it was.
fn tcp_as_named(raw: &str) -> Result<Opts> {
    let opts = Opts::from_url(raw)?;
    let asks = url::Url::parse(raw)?
        .query_pairs()
        .any(|(key, _)| key == "prefer_socket" || key == "socket");
    Ok(if asks {
        opts
    } else {
        OptsBuilder::from_opts(opts).prefer_socket(false).into()
    })
}

struct Prepared {
    insert: Statement,
    find: Statement,
}

/// The driver suite's statements, prepared on first use.
struct DriverStatements {
    exec: Statement,
    one: Statement,
    param: Statement,
    echo: Statement,
    large_text: Statement,
    large_bytes: Statement,
}

const LARGE_TEXT: &str = "SELECT REPEAT('A', 10000)";

/// The pool suite's tables: the asyncmy seed's schema.
const POOL_SCHEMA: [&str; 4] = [
    "DROP TABLE IF EXISTS benchmark_data, benchmark_batch",
    "CREATE TABLE benchmark_data (
        id INT NOT NULL AUTO_INCREMENT,
        user_id INT NOT NULL,
        username VARCHAR(50) NOT NULL,
        email VARCHAR(100) NOT NULL,
        created_at DATETIME NOT NULL,
        updated_at DATETIME NOT NULL,
        score DECIMAL(10,2) NOT NULL,
        is_active TINYINT NOT NULL,
        data TEXT,
        PRIMARY KEY (id),
        INDEX idx_user_id (user_id),
        INDEX idx_created_at (created_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    "CREATE TABLE benchmark_batch LIKE benchmark_data",
    "ANALYZE TABLE benchmark_data",
];

const POOL_COLUMNS: &str =
    "id, user_id, username, email, created_at, updated_at, score, is_active, data";

/// Rows per multi-row INSERT of the batch path.
const ROWS_PER_INSERT: usize = 1_000;

fn bench_row(row: Row) -> Result<BenchRow> {
    type Columns = (
        i32,
        i32,
        String,
        String,
        NaiveDateTime,
        NaiveDateTime,
        rust_decimal::Decimal,
        bool,
        Option<String>,
    );
    let (id, user_id, username, email, created_at, updated_at, score, is_active, data): Columns =
        mysql_async::from_row_opt(row).map_err(|e| anyhow::anyhow!("decoding a row: {e}"))?;
    Ok(BenchRow {
        id,
        user_id,
        username,
        email,
        created_at,
        updated_at,
        score,
        is_active,
        data,
    })
}

/// Multi-row INSERTs of `ROWS_PER_INSERT` rows each, in one transaction.
async fn insert_rows(conn: &mut Conn, table: &str, rows: &[BenchRow]) -> Result<()> {
    let mut tx = conn.start_transaction(TxOpts::default()).await?;
    for chunk in rows.chunks(ROWS_PER_INSERT) {
        let placeholders = vec!["(?, ?, ?, ?, ?, ?, ?, ?, ?)"; chunk.len()].join(", ");
        let sql = format!("INSERT INTO {table} ({POOL_COLUMNS}) VALUES {placeholders}");
        let params: Vec<Value> = chunk
            .iter()
            .flat_map(|r| {
                [
                    Value::from(r.id),
                    Value::from(r.user_id),
                    Value::from(r.username.as_str()),
                    Value::from(r.email.as_str()),
                    Value::from(r.created_at),
                    Value::from(r.updated_at),
                    Value::from(r.score),
                    Value::from(r.is_active),
                    Value::from(r.data.as_deref()),
                ]
            })
            .collect();
        tx.exec_drop(sql, params).await?;
        watchdog::alive();
    }
    tx.commit().await?;
    Ok(())
}
const LARGE_BYTES: &str = "SELECT CAST(REPEAT('A', 10000) AS BINARY)";

pub struct MysqlStore {
    conn: Conn,
    prepared: Option<Prepared>,
    driver: Option<DriverStatements>,
    /// A local server's data directory, measured beside information_schema.
    data_dir: Option<PathBuf>,
    database: String,
}

/// A server value as text, for settings read back.
fn text(value: &Value) -> String {
    match value {
        Value::NULL => "NULL".to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        other => other.as_sql(true),
    }
}

impl MysqlStore {
    pub async fn connect(url: &StoreUrl, spec: &ConnectSpec) -> Result<Self> {
        let opts = tcp_as_named(url.expose())?;
        let database = opts.db_name().unwrap_or_default().to_string();
        let conn = Conn::new(opts).await?;
        Ok(MysqlStore {
            conn,
            prepared: None,
            driver: None,
            data_dir: spec.data_dir.clone(),
            database,
        })
    }

    /// Prepares the record statements (after a reset; on first use on other connections).
    async fn prepare(&mut self) -> Result<()> {
        self.prepared = Some(Prepared {
            insert: self.conn.prep(INSERT).await?,
            find: self.conn.prep(FIND).await?,
        });
        Ok(())
    }

    async fn variables(&mut self, names: &[&str]) -> Result<BTreeMap<String, String>> {
        let select: Vec<String> = names.iter().map(|n| format!("@@{n}")).collect();
        let row: Row = self
            .conn
            .query_first(format!("SELECT {}", select.join(", ")))
            .await?
            .context("no row from SELECT @@...")?;
        Ok(names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.to_string(), row.as_ref(i).map_or_else(String::new, text)))
            .collect())
    }
}

fn decode(row: Row) -> Result<Record> {
    type Columns = (i64, String, i64, i64, i64, NaiveDateTime, String);
    let (id, unique_id, created_by, updated_by, deleted_by, created_at, data): Columns =
        mysql_async::from_row_opt(row).map_err(|e| anyhow::anyhow!("decoding a row: {e}"))?;
    Ok(Record {
        id,
        unique_id,
        created_by,
        updated_by,
        deleted_by,
        created_at: Utc.from_utc_datetime(&created_at),
        data: serde_json::from_str::<Data>(&data).context("decoding data")?,
    })
}

impl Store for MysqlStore {
    async fn describe(&mut self) -> Result<StoreInfo> {
        let about = self.variables(&["version", "version_comment"]).await?;
        let flavour = if about["version"].contains("MariaDB") {
            "MariaDB"
        } else if about["version_comment"].contains("Percona") {
            "Percona Server"
        } else {
            "MySQL"
        };
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
        let client: Option<String> = self
            .conn
            .query_first(
                "SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()",
            )
            .await?;
        let transport = match client.context("this connection is not in PROCESSLIST")? {
            host if host.contains(':') => "TCP",
            _ => "Unix socket",
        };
        settings.insert("transport".to_string(), transport.to_string());
        let binlog_off = matches!(settings["log_bin"].as_str(), "0" | "OFF");
        let durable = settings["innodb_flush_log_at_trx_commit"] == "1"
            && (binlog_off || settings["sync_binlog"] == "1");
        // MySQL reads a unique-key row while planning: explain a key that exists, if any.
        let some_id: Option<String> = self
            .conn
            .query_first("SELECT unique_id FROM dbcompare_records LIMIT 1")
            .await?;
        let explain: Option<Row> = self
            .conn
            .exec_first(
                format!("EXPLAIN {FIND}"),
                (some_id.unwrap_or_else(|| "none".to_string()),),
            )
            .await?;
        let search_path = explain.map_or_else(String::new, |row| {
            let column = |name: &str| {
                row.columns_ref()
                    .iter()
                    .position(|c| c.name_str().eq_ignore_ascii_case(name))
                    .and_then(|i| row.as_ref(i))
                    .map_or_else(|| "NULL".to_string(), text)
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
            // `10.11.6-MariaDB-0+deb12u1` -> `MariaDB 10.11.6 (10.11.6-MariaDB-0+deb12u1)`.
            version: format!(
                "{flavour} {} ({})",
                about["version"].split('-').next().unwrap_or_default(),
                about["version"]
            ),
            durability: if durable { "durable" } else { "relaxed" }.to_string(),
            settings,
            search_path,
            write_path: "START TRANSACTION; INSERT (prepared); COMMIT (one transaction per record)"
                .to_string(),
            size_method: "information_schema data_length + index_length after ANALYZE TABLE"
                .to_string(),
        })
    }

    async fn reset(&mut self) -> Result<()> {
        self.prepared = None;
        for statement in SCHEMA {
            self.conn
                .query_drop(statement)
                .await
                .context("creating the benchmark table and its indexes")?;
        }
        self.prepare().await
    }

    async fn insert(&mut self, r: &Record) -> Result<()> {
        if self.prepared.is_none() {
            self.prepare().await?;
        }
        let prepared = self.prepared.as_ref().expect("prepared above");
        let data = serde_json::to_string(&r.data)?;
        let mut tx = self.conn.start_transaction(TxOpts::default()).await?;
        tx.exec_drop(
            &prepared.insert,
            (
                r.id,
                r.unique_id.as_str(),
                r.created_by,
                r.updated_by,
                r.deleted_by,
                r.created_at.naive_utc(),
                data,
            ),
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
        if self.prepared.is_none() {
            self.prepare().await?;
        }
        let prepared = self.prepared.as_ref().expect("prepared above");
        let row: Option<Row> = self.conn.exec_first(&prepared.find, (unique_id,)).await?;
        row.map(decode).transpose()
    }

    fn driver_operation(&self, test: DriverTest) -> Option<&'static str> {
        use DriverTest::*;
        Some(match test {
            SimpleExec => "DO 1, text protocol",
            PreparedExec => "DO 1, prepared (binary protocol)",
            SimpleQueryRow => "SELECT 1, text protocol",
            PreparedQueryRow => "SELECT 1, prepared",
            PreparedQueryRowParam => "SELECT ?, prepared",
            EchoMixed5 => "SELECT ?, ?, ?, ?, ?: text, integer, NULL, double, bytes",
            SelectLargeString => "REPEAT('A', 10000), text protocol",
            SelectPreparedLargeString => "REPEAT('A', 10000), prepared",
            SelectLargeBytes => "10,000 binary bytes copied out, text protocol",
            SelectPreparedLargeBytes => "10,000 binary bytes copied out, prepared",
            SelectLargeRaw => "10,000 binary bytes borrowed from the row, text protocol",
            SelectPreparedLargeRaw => "10,000 binary bytes borrowed from the row, prepared",
            PreparedExecConcurrent(_) | PreparedQueryConcurrent(_) => return None,
        })
    }

    async fn driver(&mut self, test: DriverTest, i: u64) -> Result<()> {
        use DriverTest::*;
        if self.driver.is_none() {
            let c = &mut self.conn;
            self.driver = Some(DriverStatements {
                exec: c.prep("DO 1").await?,
                one: c.prep("SELECT 1").await?,
                param: c.prep("SELECT ?").await?,
                echo: c.prep("SELECT ?, ?, ?, ?, ?").await?,
                large_text: c.prep(LARGE_TEXT).await?,
                large_bytes: c.prep(LARGE_BYTES).await?,
            });
        }
        let (c, st) = (
            &mut self.conn,
            self.driver.as_ref().expect("prepared above"),
        );
        let one = |n: Option<i64>| {
            if n == Some(1) {
                Ok(())
            } else {
                Err(anyhow::anyhow!("SELECT 1 gave {n:?}"))
            }
        };
        match test {
            SimpleExec => c.query_drop("DO 1").await?,
            PreparedExec => c.exec_drop(&st.exec, ()).await?,
            SimpleQueryRow => one(c.query_first("SELECT 1").await?)?,
            PreparedQueryRow => one(c.exec_first(&st.one, ()).await?)?,
            PreparedQueryRowParam => {
                let n: Option<i64> = c.exec_first(&st.param, (i as i64,)).await?;
                if n != Some(i as i64) {
                    bail!("SELECT {i} gave {n:?}");
                }
            }
            EchoMixed5 => {
                let row: Option<Row> = c
                    .exec_first(
                        &st.echo,
                        ("abc", i as i64, None::<String>, 1.024f64, &b"xyz"[..]),
                    )
                    .await?;
                let row = row.context("no row")?;
                type Echo = (String, i64, Option<String>, f64, Vec<u8>);
                let echoed: Echo = mysql_async::from_row_opt(row)
                    .map_err(|e| anyhow::anyhow!("decoding the echo: {e}"))?;
                if echoed != ("abc".to_string(), i as i64, None, 1.024, b"xyz".to_vec()) {
                    bail!("echo gave {echoed:?}");
                }
            }
            SelectLargeString => {
                let s: Option<String> = c.query_first(LARGE_TEXT).await?;
                check_large(s.context("no row")?.as_bytes())?;
            }
            SelectPreparedLargeString => {
                let s: Option<String> = c.exec_first(&st.large_text, ()).await?;
                check_large(s.context("no row")?.as_bytes())?;
            }
            SelectLargeBytes => {
                let b: Option<Vec<u8>> = c.query_first(LARGE_BYTES).await?;
                check_large(&b.context("no row")?)?;
            }
            SelectPreparedLargeBytes => {
                let b: Option<Vec<u8>> = c.exec_first(&st.large_bytes, ()).await?;
                check_large(&b.context("no row")?)?;
            }
            SelectLargeRaw | SelectPreparedLargeRaw => {
                let row: Option<Row> = if test == SelectLargeRaw {
                    c.query_first(LARGE_BYTES).await?
                } else {
                    c.exec_first(&st.large_bytes, ()).await?
                };
                match row.context("no row")?.as_ref(0) {
                    Some(Value::Bytes(b)) => check_large(b)?,
                    other => bail!("expected bytes, got {other:?}"),
                }
            }
            PreparedExecConcurrent(_) | PreparedQueryConcurrent(_) => {
                bail!("run as PreparedExec / PreparedQueryRow on several connections")
            }
        }
        Ok(())
    }

    fn pool_operation(&self, test: PoolTest) -> Option<&'static str> {
        Some(match test {
            PoolTest::LargeResultSet => {
                "SELECT 9 columns WHERE id <= ? ORDER BY id, every column decoded"
            }
            PoolTest::ConcurrentQueries => "connect + SELECT ... WHERE id = ?, 50 at once",
            PoolTest::ConnectionPool => {
                "SELECT ... WHERE id = ? over a 5-20 connection pool, 50 workers"
            }
            PoolTest::BatchInsert => "multi-row INSERT, 1,000 rows per statement, one transaction",
        })
    }

    async fn pool_load(&mut self, rows: &[BenchRow]) -> Result<()> {
        let (create, analyze) = POOL_SCHEMA.split_at(3);
        for sql in create {
            self.conn.query_drop(*sql).await?;
        }
        insert_rows(&mut self.conn, "benchmark_data", rows).await?;
        for sql in analyze {
            self.conn.query_drop(*sql).await?;
        }
        Ok(())
    }

    async fn pool_large(&mut self, max_id: u32) -> Result<Vec<BenchRow>> {
        let sql = format!("SELECT {POOL_COLUMNS} FROM benchmark_data WHERE id <= ? ORDER BY id");
        let rows: Vec<Row> = self.conn.exec(sql, (max_id,)).await?;
        rows.into_iter().map(bench_row).collect()
    }

    async fn pool_point(&mut self, id: i32) -> Result<Option<BenchRow>> {
        let sql = format!("SELECT {POOL_COLUMNS} FROM benchmark_data WHERE id = ?");
        let row: Option<Row> = self.conn.exec_first(sql, (id,)).await?;
        row.map(bench_row).transpose()
    }

    async fn pool_batch_reset(&mut self) -> Result<()> {
        Ok(self
            .conn
            .query_drop("TRUNCATE TABLE benchmark_batch")
            .await?)
    }

    async fn pool_batch_insert(&mut self, rows: &[BenchRow]) -> Result<()> {
        insert_rows(&mut self.conn, "benchmark_batch", rows).await
    }

    async fn pool_batch_count(&mut self) -> Result<u64> {
        let n: Option<u64> = self
            .conn
            .query_first("SELECT COUNT(*) FROM benchmark_batch")
            .await?;
        n.context("no count")
    }

    /// COM_QUIT, then the socket is closed.
    async fn close(self) -> Result<()> {
        Ok(self.conn.disconnect().await?)
    }

    async fn disk_usage(&mut self) -> Result<DiskUsage> {
        self.conn
            .query_drop("ANALYZE TABLE dbcompare_records")
            .await
            .context("ANALYZE TABLE")?;
        let bytes: Option<u64> = self
            .conn
            .query_first(
                "SELECT CAST(data_length + index_length AS UNSIGNED) FROM information_schema.tables \
                 WHERE table_schema = DATABASE() AND table_name = 'dbcompare_records'",
            )
            .await?;
        let mut usage = DiskUsage::bytes(bytes.context("the benchmark table is missing")?);
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
