//! MySQL's pool suite: the asyncmy seed's own schema, loaded and batch-inserted with
//! multi-row INSERTs.

use anyhow::{Context, Result};
use chrono::NaiveDateTime;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Row, TxOpts, Value};

use super::MysqlStore;
use super::client::MysqlAsync;
use crate::store::PoolStore;
use crate::workload::pool::{BenchRow, POOL_COLUMNS, PoolTest};

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

/// The Connection Pool's point query, built once.
const POINT_SQL: &str = concat!(
    "SELECT ",
    crate::workload::pool::pool_columns!(),
    " FROM benchmark_data WHERE id = ?"
);

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
        super::rows::exec_drop(&mut tx, sql, params).await?;
        crate::liveness::alive();
    }
    tx.commit().await?;
    Ok(())
}

impl PoolStore for MysqlStore<MysqlAsync> {
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
            self.conn.conn.query_drop(*sql).await?;
        }
        insert_rows(&mut self.conn.conn, "benchmark_data", rows).await?;
        for sql in analyze {
            self.conn.conn.query_drop(*sql).await?;
        }
        Ok(())
    }

    async fn pool_large(&mut self, max_id: u32) -> Result<Vec<BenchRow>> {
        let sql = format!("SELECT {POOL_COLUMNS} FROM benchmark_data WHERE id <= ? ORDER BY id");
        super::rows::exec_map(
            &mut self.conn.conn,
            sql,
            (max_id,),
            max_id as usize,
            bench_row,
        )
        .await
    }

    async fn pool_point(&mut self, id: i32) -> Result<Option<BenchRow>> {
        let row: Option<Row> =
            super::rows::exec_first(&mut self.conn.conn, POINT_SQL, (id,)).await?;
        row.map(bench_row).transpose()
    }

    async fn pool_batch_reset(&mut self) -> Result<()> {
        Ok(self
            .conn
            .conn
            .query_drop("TRUNCATE TABLE benchmark_batch")
            .await?)
    }

    async fn pool_batch_insert(&mut self, rows: &[BenchRow]) -> Result<()> {
        insert_rows(&mut self.conn.conn, "benchmark_batch", rows).await
    }

    async fn pool_batch_count(&mut self) -> Result<u64> {
        let n: Option<u64> = self
            .conn
            .conn
            .query_first("SELECT COUNT(*) FROM benchmark_batch")
            .await?;
        n.context("no count")
    }
}
