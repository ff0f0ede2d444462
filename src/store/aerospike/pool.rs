//! Aerospike's pool suite: each `benchmark_data` row a record keyed by its id (the shared
//! [`StoredRow`] as bins), written with batch writes and read with batch gets (no range
//! query without a secondary index).

use aerospike::{
    BatchOperation, BatchPolicy, BatchReadPolicy, BatchWritePolicy, Bin, Bins, Key, ResultCode,
    Value, operations,
};
use anyhow::{Context, Result, bail};

use super::{AerospikeStore, int, string};
use crate::store::PoolStore;
use crate::workload::pool::{BATCH_ROWS, BATCH_TABLE, BenchRow, DATA_TABLE, PoolTest, StoredRow};

/// The pool suite's sets: `benchmark_data` and the Batch Insert's `benchmark_batch`.
const POOL_DATA: &str = DATA_TABLE;
const POOL_BATCH: &str = BATCH_TABLE;
/// Records per batch call when the pool suite writes or reads many.
const BATCH_CHUNK: usize = 5_000;

/// A `benchmark_data` row's bins: the [`StoredRow`]'s fields, the score as its exact text,
/// `is_active` as an integer (boolean bins need server 5.6 or later), `data` absent when
/// NULL.
pub fn row_bins(r: &BenchRow) -> Vec<Bin> {
    let s = StoredRow::from(r);
    let mut bins = vec![
        Bin::new("id", Value::from(i64::from(s.id))),
        Bin::new("user_id", Value::from(i64::from(s.user_id))),
        Bin::new("username", Value::from(s.username)),
        Bin::new("email", Value::from(s.email)),
        Bin::new("created_at", Value::from(s.created_at_us)),
        Bin::new("updated_at", Value::from(s.updated_at_us)),
        Bin::new("score", Value::from(s.score.to_string())),
        Bin::new("is_active", Value::from(i64::from(s.is_active))),
    ];
    if let Some(data) = s.data {
        bins.push(Bin::new("data", Value::from(data)));
    }
    bins
}

/// A row read back from its bins, every bin checked.
pub fn bench_row(bins: &indexmap::IndexMap<String, Value>) -> Result<BenchRow> {
    let int32 = |name: &str| -> Result<i32> {
        i32::try_from(int(bins, name)?).with_context(|| format!("bin {name} out of range"))
    };
    BenchRow::try_from(StoredRow {
        id: int32("id")?,
        user_id: int32("user_id")?,
        username: string(bins.get("username"), "username")?,
        email: string(bins.get("email"), "email")?,
        created_at_us: int(bins, "created_at")?,
        updated_at_us: int(bins, "updated_at")?,
        score: string(bins.get("score"), "score")?
            .parse()
            .context("bin score is not a decimal")?,
        is_active: match bins.get("is_active") {
            Some(Value::Bool(b)) => *b,
            Some(Value::Int(i)) => *i != 0,
            other => bail!("bin is_active holds {other:?}"),
        },
        data: match bins.get("data") {
            None | Some(Value::Nil) => None,
            value => Some(string(value, "data")?),
        },
    })
}

impl AerospikeStore {
    fn pool_key(&self, set: &str, id: i32) -> Result<Key> {
        Ok(Key::new(
            self.target.namespace.as_str(),
            set,
            Value::from(i64::from(id)),
        )?)
    }

    /// Writes rows into `set` with batch writes of `BATCH_CHUNK` records.
    async fn write_rows(&self, set: &str, rows: &[BenchRow]) -> Result<()> {
        let policy = BatchWritePolicy::default();
        for chunk in rows.chunks(BATCH_CHUNK) {
            let mut ops = chunk
                .iter()
                .map(|r| {
                    let puts: Vec<_> = row_bins(r).iter().map(operations::put).collect();
                    Ok(BatchOperation::write(
                        &policy,
                        self.pool_key(set, r.id)?,
                        puts,
                    ))
                })
                .collect::<Result<Vec<_>>>()?;
            self.client.batch(&BatchPolicy::default(), &mut ops).await?;
            crate::liveness::alive();
            if let Some(failed) = ops
                .iter()
                .find(|op| op.result_code() != Some(ResultCode::Ok))
            {
                bail!(
                    "a batch write failed: {:?} ({:?})",
                    failed.batch_record().key,
                    failed.result_code()
                );
            }
        }
        Ok(())
    }

    /// Batch-reads ids `1..=count` of `set`: each row's bins, or None where it is missing.
    async fn read_rows(
        &self,
        set: &str,
        count: u32,
        bins: Bins,
    ) -> Result<Vec<Option<aerospike::Record>>> {
        let policy = BatchReadPolicy::default();
        let mut found = Vec::with_capacity(count as usize);
        let ids: Vec<i32> = (1..=count as i32).collect();
        for chunk in ids.chunks(BATCH_CHUNK) {
            let mut ops = chunk
                .iter()
                .map(|&id| {
                    Ok(BatchOperation::read(
                        &policy,
                        self.pool_key(set, id)?,
                        bins.clone(),
                    ))
                })
                .collect::<Result<Vec<_>>>()?;
            self.client.batch(&BatchPolicy::default(), &mut ops).await?;
            for op in &mut ops {
                match op.result_code() {
                    Some(ResultCode::Ok) => found.push(op.take_record()),
                    Some(ResultCode::KeyNotFoundError) => found.push(None),
                    other => bail!("a batch read failed: {other:?}"),
                }
            }
        }
        Ok(found)
    }
}

impl PoolStore for AerospikeStore {
    fn pool_operation(&self, test: PoolTest) -> Option<&'static str> {
        Some(match test {
            PoolTest::LargeResultSet => {
                "batch get of the rows' keys (ids 1..=33,000, 5,000 per batch; no range query \
                 without a secondary index), every bin decoded"
            }
            PoolTest::ConcurrentQueries => "connect + get of a row's key, 50 at once",
            PoolTest::ConnectionPool => "get of a row's key over a 5-20 client pool, 50 workers",
            PoolTest::BatchInsert => "batch writes of 5,000 records (single-record atomic each)",
        })
    }

    async fn pool_load(&mut self, rows: &[BenchRow]) -> Result<()> {
        for set in [POOL_DATA, POOL_BATCH] {
            self.client
                .truncate(&self.admin, &self.target.namespace, set, 0)
                .await
                .with_context(|| format!("truncating {set}"))?;
        }
        self.write_rows(POOL_DATA, rows).await
    }

    async fn pool_large(&mut self, max_id: u32) -> Result<Vec<BenchRow>> {
        self.read_rows(POOL_DATA, max_id, Bins::All)
            .await?
            .into_iter()
            .zip(1..)
            .map(|(found, id)| {
                bench_row(&found.with_context(|| format!("row {id} is missing"))?.bins)
            })
            .collect()
    }

    async fn pool_point(&mut self, id: i32) -> Result<Option<BenchRow>> {
        let key = self.pool_key(POOL_DATA, id)?;
        match self.client.get(&self.read, &key, Bins::All).await {
            Ok(found) => bench_row(&found.bins).map(Some),
            Err(e) if e.matches(&[ResultCode::KeyNotFoundError]) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    async fn pool_batch_reset(&mut self) -> Result<()> {
        self.client
            .truncate(&self.admin, &self.target.namespace, POOL_BATCH, 0)
            .await
            .context("truncating benchmark_batch")?;
        Ok(())
    }

    async fn pool_batch_insert(&mut self, rows: &[BenchRow]) -> Result<()> {
        self.write_rows(POOL_BATCH, rows).await
    }

    async fn pool_batch_count(&mut self) -> Result<u64> {
        // The batch's ids run from 1: count those that exist (a header-only batch read).
        let found = self.read_rows(POOL_BATCH, BATCH_ROWS, Bins::None).await?;
        Ok(found.iter().filter(|r| r.is_some()).count() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_rows_round_trip_every_column() {
        let rows = crate::workload::pool::rows(4, 200, 1);
        assert!(rows.iter().any(|r| r.data.is_none()));
        for r in &rows {
            let map: indexmap::IndexMap<String, Value> = row_bins(r)
                .into_iter()
                .map(|b| (b.name.to_string(), b.value))
                .collect();
            let back = bench_row(&map).unwrap();
            assert_eq!(&back, r);
            assert_eq!(back.score.scale(), 2, "the decimal keeps its scale");
        }
        let mut map: indexmap::IndexMap<String, Value> = row_bins(&rows[0])
            .into_iter()
            .map(|b| (b.name.to_string(), b.value))
            .collect();
        map.insert("score".into(), Value::from("not a number"));
        assert!(bench_row(&map).is_err());
    }
}
