//! PostgreSQL (tokio-postgres): the original benchmark's table with a JSONB `data` column,
//! a unique index on unique_id and expression indexes on `data->>'name'` and
//! `(data->>'age')::bigint`; prepared statements; each insert in BEGIN/COMMIT.

use std::collections::BTreeMap;
use std::str::FromStr;

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use tokio_postgres::types::Json;
use tokio_postgres::{Client, NoTls, Statement};

use super::{ConnectSpec, DiskUsage, Durability, Store, StoreUrl, dir_bytes};
use crate::record::{Data, Record};
use crate::report::model::StoreInfo;
use crate::suite::driver::{DriverTest, check_large};
use crate::suite::pool::{BenchRow, PoolTest};
use crate::suite::watchdog;

pub const SCHEMES: &[&str] = &["postgres", "postgresql"];

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

/// Checks a URL the way the driver will read it.
pub fn check_url(raw: &str) -> Result<()> {
    tokio_postgres::Config::from_str(raw)?;
    Ok(())
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

const LARGE_TEXT: &str = "SELECT repeat('A', 10000)";

/// The pool suite's tables (the asyncmy seed's schema in PostgreSQL types).
const POOL_SCHEMA: &str = "
    DROP TABLE IF EXISTS benchmark_data, benchmark_batch;
    CREATE TABLE benchmark_data (
        id          INT           NOT NULL PRIMARY KEY,
        user_id     INT           NOT NULL,
        username    VARCHAR(50)   NOT NULL,
        email       VARCHAR(100)  NOT NULL,
        created_at  TIMESTAMP     NOT NULL,
        updated_at  TIMESTAMP     NOT NULL,
        score       NUMERIC(10,2) NOT NULL,
        is_active   BOOLEAN       NOT NULL,
        data        TEXT
    );
    CREATE INDEX idx_user_id ON benchmark_data (user_id);
    CREATE INDEX idx_created_at ON benchmark_data (created_at);
    CREATE TABLE benchmark_batch (LIKE benchmark_data INCLUDING ALL);
";

const POOL_COLUMNS: &str =
    "id, user_id, username, email, created_at, updated_at, score, is_active, data";

fn bench_row(row: &tokio_postgres::Row) -> Result<BenchRow> {
    Ok(BenchRow {
        id: row.try_get(0)?,
        user_id: row.try_get(1)?,
        username: row.try_get(2)?,
        email: row.try_get(3)?,
        created_at: row.try_get(4)?,
        updated_at: row.try_get(5)?,
        score: row.try_get(6)?,
        is_active: row.try_get(7)?,
        data: row.try_get(8)?,
    })
}

/// `COPY table FROM STDIN (FORMAT binary)` of `rows`.
async fn copy_rows(client: &Client, table: &str, rows: &[BenchRow]) -> Result<()> {
    use tokio_postgres::binary_copy::BinaryCopyInWriter;
    use tokio_postgres::types::Type;
    let sink = client
        .copy_in(&format!(
            "COPY {table} ({POOL_COLUMNS}) FROM STDIN (FORMAT binary)"
        ))
        .await?;
    let types = [
        Type::INT4,
        Type::INT4,
        Type::VARCHAR,
        Type::VARCHAR,
        Type::TIMESTAMP,
        Type::TIMESTAMP,
        Type::NUMERIC,
        Type::BOOL,
        Type::TEXT,
    ];
    let writer = BinaryCopyInWriter::new(sink, &types);
    futures::pin_mut!(writer);
    for r in rows {
        writer
            .as_mut()
            .write(&[
                &r.id,
                &r.user_id,
                &r.username,
                &r.email,
                &r.created_at,
                &r.updated_at,
                &r.score,
                &r.is_active,
                &r.data,
            ])
            .await?;
        watchdog::alive();
    }
    writer.finish().await?;
    Ok(())
}
const LARGE_BYTES: &str = "SELECT convert_to(repeat('A', 10000), 'UTF8')";

/// Statements prepared after the schema exists.
struct Prepared {
    insert: Statement,
    find: Statement,
}

pub struct PostgresStore {
    client: Client,
    prepared: Option<Prepared>,
    driver: Option<DriverStatements>,
    /// A local server's data directory, measured beside pg_database_size.
    data_dir: Option<std::path::PathBuf>,
    /// The driver's connection task, on the event loop the connection was opened on.
    connection: tokio::task::JoinHandle<()>,
}

impl PostgresStore {
    pub async fn connect(url: &StoreUrl, spec: &ConnectSpec) -> Result<Self> {
        let mut config = tokio_postgres::Config::from_str(url.expose())?;
        config.connect_timeout(spec.connect_timeout);
        let (client, connection) = config.connect(NoTls).await?;
        let connection = tokio::spawn(async move {
            if let Err(e) = connection.await {
                eprintln!("warning: postgres connection ended: {e}");
            }
        });
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
            data_dir: spec.data_dir.clone(),
            connection,
        })
    }

    async fn show(&self, setting: &str) -> Result<String> {
        let row = self
            .client
            .query_one(&format!("SHOW {setting}"), &[])
            .await?;
        Ok(row.get(0))
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

impl Store for PostgresStore {
    async fn describe(&mut self) -> Result<StoreInfo> {
        let version = self.show("server_version").await?;
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
            version: format!("PostgreSQL {version}"),
            durability: if durable { "durable" } else { "relaxed" }.to_string(),
            settings,
            search_path,
            write_path: "BEGIN; INSERT (prepared); COMMIT (one transaction per record)".to_string(),
            size_method: "pg_database_size after CHECKPOINT".to_string(),
        })
    }

    async fn reset(&mut self) -> Result<()> {
        self.prepared = None;
        self.client
            .batch_execute(SCHEMA)
            .await
            .context("creating the benchmark table and its indexes")?;
        self.prepare().await
    }

    async fn insert(&mut self, r: &Record) -> Result<()> {
        if self.prepared.is_none() {
            self.prepare().await?;
        }
        let prepared = self.prepared.as_ref().expect("prepared above");
        let tx = self.client.transaction().await?;
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
        tx.commit().await?;
        Ok(())
    }

    async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
        if self.prepared.is_none() {
            self.prepare().await?;
        }
        let find = &self.prepared.as_ref().expect("prepared above").find;
        let Some(row) = self.client.query_opt(find, &[&unique_id]).await? else {
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

    fn driver_operation(&self, test: DriverTest) -> Option<&'static str> {
        use DriverTest::*;
        Some(match test {
            SimpleExec => "SELECT 1, simple query protocol, result discarded",
            PreparedExec => "SELECT 1, prepared, execute (row count only)",
            SimpleQueryRow => "SELECT 1, simple query protocol (text)",
            PreparedQueryRow => "SELECT 1, prepared",
            PreparedQueryRowParam => "SELECT $1::int8, prepared",
            EchoMixed5 => "SELECT $1::text, $2::int8, $3::text, $4::float8, $5::bytea (NULL third)",
            SelectLargeString => "repeat('A', 10000), unnamed statement per query",
            SelectPreparedLargeString => "repeat('A', 10000), prepared",
            SelectLargeBytes => "10,000-byte bytea copied out, unnamed statement per query",
            SelectPreparedLargeBytes => "10,000-byte bytea copied out, prepared",
            SelectLargeRaw => {
                "10,000-byte bytea borrowed from the row, unnamed statement per query"
            }
            SelectPreparedLargeRaw => "10,000-byte bytea borrowed from the row, prepared",
            PreparedExecConcurrent(_) | PreparedQueryConcurrent(_) => return None,
        })
    }

    async fn driver(&mut self, test: DriverTest, i: u64) -> Result<()> {
        use DriverTest::*;
        if self.driver.is_none() {
            let c = &self.client;
            self.driver = Some(DriverStatements {
                exec: c.prepare("SELECT 1").await?,
                one: c.prepare("SELECT 1").await?,
                param: c.prepare("SELECT $1::int8").await?,
                echo: c
                    .prepare("SELECT $1::text, $2::int8, $3::text, $4::float8, $5::bytea")
                    .await?,
                large_text: c.prepare(LARGE_TEXT).await?,
                large_bytes: c.prepare(LARGE_BYTES).await?,
            });
        }
        let (c, st) = (&self.client, self.driver.as_ref().expect("prepared above"));
        let one = |n: i32| {
            if n == 1 {
                Ok(())
            } else {
                Err(anyhow::anyhow!("SELECT 1 gave {n}"))
            }
        };
        match test {
            SimpleExec => c.batch_execute("SELECT 1").await?,
            PreparedExec => {
                c.execute(&st.exec, &[]).await?;
            }
            SimpleQueryRow => {
                let messages = c.simple_query("SELECT 1").await?;
                let value = messages.iter().find_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                    _ => None,
                });
                if value.as_deref() != Some("1") {
                    bail!("SELECT 1 gave {value:?}");
                }
            }
            PreparedQueryRow => one(c.query_one(&st.one, &[]).await?.try_get(0)?)?,
            PreparedQueryRowParam => {
                let n: i64 = c.query_one(&st.param, &[&(i as i64)]).await?.try_get(0)?;
                if n != i as i64 {
                    bail!("SELECT {i} gave {n}");
                }
            }
            EchoMixed5 => {
                let row = c
                    .query_one(
                        &st.echo,
                        &[
                            &"abc",
                            &(i as i64),
                            &None::<String>,
                            &1.024f64,
                            &&b"xyz"[..],
                        ],
                    )
                    .await?;
                let echoed: (String, i64, Option<String>, f64, Vec<u8>) = (
                    row.try_get(0)?,
                    row.try_get(1)?,
                    row.try_get(2)?,
                    row.try_get(3)?,
                    row.try_get(4)?,
                );
                if echoed != ("abc".to_string(), i as i64, None, 1.024, b"xyz".to_vec()) {
                    bail!("echo gave {echoed:?}");
                }
            }
            SelectLargeString => {
                let s: String = c.query_one(LARGE_TEXT, &[]).await?.try_get(0)?;
                check_large(s.as_bytes())?;
            }
            SelectPreparedLargeString => {
                let s: String = c.query_one(&st.large_text, &[]).await?.try_get(0)?;
                check_large(s.as_bytes())?;
            }
            SelectLargeBytes => {
                let b: Vec<u8> = c.query_one(LARGE_BYTES, &[]).await?.try_get(0)?;
                check_large(&b)?;
            }
            SelectPreparedLargeBytes => {
                let b: Vec<u8> = c.query_one(&st.large_bytes, &[]).await?.try_get(0)?;
                check_large(&b)?;
            }
            SelectLargeRaw => {
                let row = c.query_one(LARGE_BYTES, &[]).await?;
                check_large(row.try_get::<_, &[u8]>(0)?)?;
            }
            SelectPreparedLargeRaw => {
                let row = c.query_one(&st.large_bytes, &[]).await?;
                check_large(row.try_get::<_, &[u8]>(0)?)?;
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
                "SELECT 9 columns WHERE id <= $1 ORDER BY id, every column decoded"
            }
            PoolTest::ConcurrentQueries => "connect + SELECT ... WHERE id = $1, 50 at once",
            PoolTest::ConnectionPool => {
                "SELECT ... WHERE id = $1 over a 5-20 connection pool, 50 workers"
            }
            PoolTest::BatchInsert => "COPY FROM STDIN (FORMAT binary)",
        })
    }

    async fn pool_load(&mut self, rows: &[BenchRow]) -> Result<()> {
        self.client.batch_execute(POOL_SCHEMA).await?;
        copy_rows(&self.client, "benchmark_data", rows).await?;
        self.client.batch_execute("ANALYZE benchmark_data").await?;
        Ok(())
    }

    async fn pool_large(&mut self, max_id: u32) -> Result<Vec<BenchRow>> {
        let sql = format!("SELECT {POOL_COLUMNS} FROM benchmark_data WHERE id <= $1 ORDER BY id");
        let rows = self.client.query(&sql, &[&(max_id as i32)]).await?;
        rows.iter().map(bench_row).collect()
    }

    async fn pool_point(&mut self, id: i32) -> Result<Option<BenchRow>> {
        let sql = format!("SELECT {POOL_COLUMNS} FROM benchmark_data WHERE id = $1");
        let row = self.client.query_opt(&sql, &[&id]).await?;
        row.as_ref().map(bench_row).transpose()
    }

    async fn pool_batch_reset(&mut self) -> Result<()> {
        Ok(self
            .client
            .batch_execute("TRUNCATE benchmark_batch")
            .await?)
    }

    async fn pool_batch_insert(&mut self, rows: &[BenchRow]) -> Result<()> {
        copy_rows(&self.client, "benchmark_batch", rows).await
    }

    async fn pool_batch_count(&mut self) -> Result<u64> {
        let n: i64 = self
            .client
            .query_one("SELECT count(*) FROM benchmark_batch", &[])
            .await?
            .try_get(0)?;
        Ok(n as u64)
    }

    async fn disk_usage(&mut self) -> Result<DiskUsage> {
        self.client
            .batch_execute("CHECKPOINT")
            .await
            .context("CHECKPOINT (needs superuser or pg_checkpoint)")?;
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
            connection,
            ..
        } = self;
        drop((prepared, driver, client));
        connection.await.context("the connection task")
    }
}
