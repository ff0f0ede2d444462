//! PostgreSQL's pool suite: the asyncmy seed's schema in PostgreSQL types, loaded and
//! batch-inserted with binary COPY.

use anyhow::Result;
use tokio_postgres::Client;

use super::PostgresStore;
use super::client::TokioPostgres;
use crate::store::PoolStore;
use crate::workload::pool::{BenchRow, POOL_COLUMNS, PoolTest};

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

/// The Connection Pool's point query, built once.
const POINT_SQL: &str = concat!(
    "SELECT ",
    crate::workload::pool::pool_columns!(),
    " FROM benchmark_data WHERE id = $1"
);

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
        crate::liveness::alive();
    }
    writer.finish().await?;
    Ok(())
}

impl PoolStore for PostgresStore<TokioPostgres> {
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
        let client = &self.conn.client;
        client.batch_execute(POOL_SCHEMA).await?;
        copy_rows(client, "benchmark_data", rows).await?;
        client.batch_execute("ANALYZE benchmark_data").await?;
        Ok(())
    }

    async fn pool_large(&mut self, max_id: u32) -> Result<Vec<BenchRow>> {
        let sql = format!("SELECT {POOL_COLUMNS} FROM benchmark_data WHERE id <= $1 ORDER BY id");
        let rows = self.conn.client.query(&sql, &[&(max_id as i32)]).await?;
        rows.iter().map(bench_row).collect()
    }

    async fn pool_point(&mut self, id: i32) -> Result<Option<BenchRow>> {
        let row = self.conn.client.query_opt(POINT_SQL, &[&id]).await?;
        row.as_ref().map(bench_row).transpose()
    }

    async fn pool_batch_reset(&mut self) -> Result<()> {
        Ok(self
            .conn
            .client
            .batch_execute("TRUNCATE benchmark_batch")
            .await?)
    }

    async fn pool_batch_insert(&mut self, rows: &[BenchRow]) -> Result<()> {
        copy_rows(&self.conn.client, "benchmark_batch", rows).await
    }

    async fn pool_batch_count(&mut self) -> Result<u64> {
        let n: i64 = self
            .conn
            .client
            .query_one("SELECT count(*) FROM benchmark_batch", &[])
            .await?
            .try_get(0)?;
        Ok(n as u64)
    }
}
