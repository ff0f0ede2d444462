//! Redis's pool suite: each `benchmark_data` row bincode-encoded under its id, written with
//! MSETs in one pipeline, the Large Result Set one MGET (Redis has no range query).

use anyhow::{Context, Result, bail};

use super::RedisStore;
use crate::store::PoolStore;
use crate::workload::pool::{BenchRow, PoolTest, StoredRow};

/// The pool suite's keys: `benchmark_data` rows and the Batch Insert's rows, by id.
const POOL_DATA: &str = "dbcompare:benchmark_data:";
const POOL_BATCH: &str = "dbcompare:benchmark_batch:";
/// Keys per MSET when the pool suite writes rows (one pipeline of these).
const MSET_KEYS: usize = 1_000;

/// A row as stored: the shared [`StoredRow`], bincode-encoded.
fn encode_row(r: &BenchRow) -> Result<Vec<u8>> {
    Ok(bincode::serde::encode_to_vec(
        StoredRow::from(r),
        bincode::config::standard(),
    )?)
}

fn decode_row(bytes: &[u8]) -> Result<BenchRow> {
    let (stored, read): (StoredRow, usize) =
        bincode::serde::decode_from_slice(bytes, bincode::config::standard())?;
    if read != bytes.len() {
        bail!("{} trailing bytes after the row", bytes.len() - read);
    }
    BenchRow::try_from(stored)
}

impl RedisStore {
    /// Writes rows under `prefix<id>`: MSETs of `MSET_KEYS` keys, in one pipeline (in a
    /// cluster one after the other, each split by the client into one per slot: a pipeline
    /// goes to one node).
    async fn write_rows(&mut self, prefix: &str, rows: &[BenchRow]) -> Result<()> {
        let mut pipe = redis::pipe();
        for chunk in rows.chunks(MSET_KEYS) {
            let pairs = chunk
                .iter()
                .map(|r| Ok((format!("{prefix}{}", r.id), encode_row(r)?)))
                .collect::<Result<Vec<_>>>()?;
            if self.cluster.is_some() {
                self.conn
                    .query::<()>(redis::cmd("MSET").arg(&pairs))
                    .await?;
            } else {
                pipe.mset(&pairs).ignore();
            }
        }
        if self.cluster.is_none() {
            pipe.query_async::<()>(&mut self.conn).await?;
        }
        Ok(())
    }
}

impl PoolStore for RedisStore {
    fn pool_operation(&self, test: PoolTest) -> Option<&'static str> {
        Some(match test {
            PoolTest::LargeResultSet if self.cluster.is_some() => {
                "MGET of the rows' keys (ids 1..=33,000; no range query in Redis), split by the \
                 cluster client into one per hash slot, every value decoded"
            }
            PoolTest::LargeResultSet => {
                "MGET of the rows' keys (ids 1..=33,000; no range query in Redis), every \
                 value decoded"
            }
            PoolTest::ConcurrentQueries => "connect + GET of a row's key, 50 at once",
            PoolTest::ConnectionPool => {
                "GET of a row's key over a 5-20 connection pool, 50 workers"
            }
            PoolTest::BatchInsert if self.cluster.is_some() => {
                "MSET of 1,000 keys per command, 10 commands, each split by the cluster client \
                 into one per hash slot"
            }
            PoolTest::BatchInsert => "MSET of 1,000 keys per command, 10 commands in one pipeline",
        })
    }

    async fn pool_load(&mut self, rows: &[BenchRow]) -> Result<()> {
        self.unlink_all(POOL_DATA).await?;
        for chunk in rows.chunks(10 * MSET_KEYS) {
            self.write_rows(POOL_DATA, chunk).await?;
            crate::liveness::alive();
        }
        Ok(())
    }

    async fn pool_large(&mut self, max_id: u32) -> Result<Vec<BenchRow>> {
        let keys: Vec<String> = (1..=max_id).map(|id| format!("{POOL_DATA}{id}")).collect();
        let values: Vec<Option<Vec<u8>>> = self.conn.query(redis::cmd("MGET").arg(&keys)).await?;
        values
            .into_iter()
            .zip(1..)
            .map(|(v, id)| decode_row(&v.with_context(|| format!("row {id} is missing"))?))
            .collect()
    }

    async fn pool_point(&mut self, id: i32) -> Result<Option<BenchRow>> {
        let value: Option<Vec<u8>> = self
            .conn
            .query(redis::cmd("GET").arg(format!("{POOL_DATA}{id}")))
            .await?;
        value.map(|v| decode_row(&v)).transpose()
    }

    async fn pool_batch_reset(&mut self) -> Result<()> {
        self.unlink_all(POOL_BATCH).await
    }

    async fn pool_batch_insert(&mut self, rows: &[BenchRow]) -> Result<()> {
        self.write_rows(POOL_BATCH, rows).await
    }

    async fn pool_batch_count(&mut self) -> Result<u64> {
        Ok(self.keys(POOL_BATCH).await?.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_every_column_and_refuse_trailing_bytes() {
        for r in crate::workload::pool::rows(4, 200, 1) {
            let bytes = encode_row(&r).unwrap();
            assert_eq!(decode_row(&bytes).unwrap(), r);
            let mut longer = bytes.clone();
            longer.push(0);
            assert!(decode_row(&longer).is_err());
            assert!(decode_row(&bytes[..bytes.len() - 2]).is_err());
        }
    }
}
