//! MongoDB's pool suite: the asyncmy seed's table as the `benchmark_data` collection (`_id` =
//! id, BSON dates, score as Decimal128), loaded and batch-inserted with insert_many.

use anyhow::{Context, Result};
use futures::TryStreamExt;
use mongodb::IndexModel;
use mongodb::bson::{Document, doc};
use mongodb::options::IndexOptions;

use super::bench_doc::BenchDoc;
use super::{MongoStore, drop_or_empty, write_concern};
use crate::store::PoolStore;
use crate::workload::pool::{BenchRow, PoolTest};

/// Documents per insert_many while loading `benchmark_data` (ordered, outside the timings).
const LOAD_CHUNK: usize = 10_000;

/// The pool suite's indexes (the seed's idx_user_id and idx_created_at; `_id` is the key).
pub fn pool_index_models() -> Vec<IndexModel> {
    let named = |name: &str| IndexOptions::builder().name(name.to_string()).build();
    vec![
        IndexModel::builder()
            .keys(doc! { "user_id": 1 })
            .options(named("idx_user_id"))
            .build(),
        IndexModel::builder()
            .keys(doc! { "created_at": 1 })
            .options(named("idx_created_at"))
            .build(),
    ]
}

/// The Large Result Set filter: `_id <= max_id`.
pub fn pool_range_filter(max_id: u32) -> Result<Document> {
    let max_id = i32::try_from(max_id).with_context(|| format!("id {max_id} beyond int32"))?;
    Ok(doc! { "_id": { "$lte": max_id } })
}

impl MongoStore {
    /// insert_many of `rows` into `benchmark_batch` (ordered): inside a session transaction
    /// when the store runs its inserts in one, otherwise with the collection's write concern.
    async fn insert_batch(&mut self, rows: &[BenchRow]) -> Result<()> {
        let docs = rows
            .iter()
            .map(BenchDoc::try_from)
            .collect::<Result<Vec<_>>>()?;
        match &mut self.session {
            Some(session) => {
                session
                    .start_transaction()
                    .write_concern(write_concern(self.durability))
                    .await?;
                let inserted = self
                    .pool_batch
                    .insert_many(&docs)
                    .ordered(true)
                    .session(&mut *session)
                    .await;
                if let Err(e) = inserted {
                    let _ = session.abort_transaction().await;
                    return Err(e.into());
                }
                session.commit_transaction().await?;
            }
            None => {
                self.pool_batch.insert_many(&docs).ordered(true).await?;
            }
        }
        Ok(())
    }
}

impl PoolStore for MongoStore {
    fn pool_operation(&self, test: PoolTest) -> Option<&'static str> {
        Some(match test {
            PoolTest::LargeResultSet => {
                "find { _id: { $lte: <max> } } sorted by _id, every field decoded \
                 (BSON dates, score as Decimal128)"
            }
            PoolTest::ConcurrentQueries => "connect (new client) + find_one by _id, 50 at once",
            PoolTest::ConnectionPool => "find_one by _id over a 5-20 client pool, 50 workers",
            PoolTest::BatchInsert => match self.session {
                Some(_) => "insert_many of the whole batch, ordered, in one session transaction",
                None => "insert_many of the whole batch, ordered (no transaction)",
            },
        })
    }

    async fn pool_load(&mut self, rows: &[BenchRow]) -> Result<()> {
        drop_or_empty(&self.pool_data).await?;
        self.pool_data
            .create_indexes(pool_index_models())
            .await
            .context("creating the indexes of benchmark_data")?;
        for chunk in rows.chunks(LOAD_CHUNK) {
            let docs = chunk
                .iter()
                .map(BenchDoc::try_from)
                .collect::<Result<Vec<_>>>()?;
            self.pool_data
                .insert_many(&docs)
                .ordered(true)
                .await
                .context("loading benchmark_data")?;
            crate::liveness::alive();
        }
        self.pool_batch_reset().await
    }

    async fn pool_large(&mut self, max_id: u32) -> Result<Vec<BenchRow>> {
        let mut cursor = self
            .pool_data
            .find(pool_range_filter(max_id)?)
            .sort(doc! { "_id": 1 })
            .await?;
        let mut rows = Vec::new();
        while let Some(doc) = cursor.try_next().await? {
            rows.push(BenchRow::try_from(doc)?);
        }
        Ok(rows)
    }

    async fn pool_point(&mut self, id: i32) -> Result<Option<BenchRow>> {
        let found = self.pool_data.find_one(doc! { "_id": id }).await?;
        found.map(BenchRow::try_from).transpose()
    }

    async fn pool_batch_reset(&mut self) -> Result<()> {
        drop_or_empty(&self.pool_batch).await?;
        self.pool_batch
            .create_indexes(pool_index_models())
            .await
            .context("creating the indexes of benchmark_batch")?;
        Ok(())
    }

    async fn pool_batch_insert(&mut self, rows: &[BenchRow]) -> Result<()> {
        self.insert_batch(rows).await
    }

    async fn pool_batch_count(&mut self) -> Result<u64> {
        Ok(self.pool_batch.count_documents(doc! {}).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_indexes_and_filters_are_the_seeds() {
        let models = pool_index_models();
        assert_eq!(models[0].keys, doc! { "user_id": 1 });
        assert_eq!(models[1].keys, doc! { "created_at": 1 });
        assert_eq!(
            pool_range_filter(33_000).unwrap(),
            doc! { "_id": { "$lte": 33_000_i32 } }
        );
        assert!(pool_range_filter(u32::MAX).is_err());
    }
}
