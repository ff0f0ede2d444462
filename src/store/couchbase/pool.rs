//! Couchbase's pool suite: each `benchmark_data` row a JSON document `<tbl>:<id>` (the
//! shared [`StoredRow`] and its table), upserted 64 in flight; the Large Result Set a SQL++
//! range query through an index on the table and id.

use anyhow::{Context, Result, anyhow};
use couchbase::error::ErrorKind;
use couchbase::options::kv_options::UpsertOptions;
use couchbase::options::query_options::{QueryOptions, ScanConsistency};
use futures::{StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};

use super::{CouchbaseStore, OPERATION_TIMEOUT, Target, bounded, durability_level, keyspace};
use crate::store::PoolStore;
use crate::workload::pool::{BATCH_TABLE, BenchRow, DATA_TABLE, PoolTest, StoredRow};

/// The pool suite's tables, as the `tbl` field of documents keyed `<tbl>:<id>`.
const POOL_DATA: &str = DATA_TABLE;
const POOL_BATCH: &str = BATCH_TABLE;
/// Upserts in flight when the pool suite writes many documents (the SDK has no batch call;
/// it pipelines concurrent operations on its connections).
const UPSERTS_IN_FLIGHT: usize = 64;

/// A `benchmark_data` row as a JSON document: its table and the shared [`StoredRow`]'s
/// fields beside it. Read back as a [`StoredRow`] alone (the table is in the key and the
/// query), so that decoding a row buffers nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolDoc {
    pub tbl: String,
    #[serde(flatten)]
    pub row: StoredRow,
}

impl PoolDoc {
    pub fn new(tbl: &str, r: &BenchRow) -> Self {
        PoolDoc {
            tbl: tbl.to_string(),
            row: StoredRow::from(r),
        }
    }
}

/// The SQL++ statements of the pool suite: its index, the Large Result Set, and the count
/// of a table's documents.
pub fn pool_statements(t: &Target) -> (String, String, String) {
    let ks = keyspace(t);
    (
        format!("CREATE INDEX dbcompare_pool IF NOT EXISTS ON {ks}(tbl, id)"),
        format!(
            "SELECT p.* FROM {ks} AS p WHERE p.tbl = \"{POOL_DATA}\" AND p.id <= $1 ORDER BY p.id"
        ),
        format!("SELECT RAW COUNT(*) FROM {ks} AS p WHERE p.tbl = $1"),
    )
}

impl CouchbaseStore {
    /// Upserts rows as `<tbl>:<id>` documents, `UPSERTS_IN_FLIGHT` at a time.
    async fn upsert_rows(&self, tbl: &str, rows: &[BenchRow]) -> Result<()> {
        let level = durability_level(self.durability);
        let pending: Vec<_> = rows
            .iter()
            .map(|r| {
                let doc = PoolDoc::new(tbl, r);
                let key = format!("{tbl}:{}", doc.row.id);
                let options = UpsertOptions::new().durability_level(level.clone());
                let collection = self.collection.clone();
                async move { bounded("upsert", collection.upsert(key, &doc, options)).await }
            })
            .collect();
        let mut upserts = futures::stream::iter(pending).buffer_unordered(UPSERTS_IN_FLIGHT);
        while let Some(done) = upserts.next().await {
            done?;
            crate::liveness::alive();
        }
        Ok(())
    }

    async fn query_rows<T: serde::de::DeserializeOwned + Send + 'static>(
        &self,
        statement: String,
        parameter: impl Serialize,
    ) -> Result<Vec<T>> {
        let options = QueryOptions::new()
            .add_positional_parameter(parameter)?
            .scan_consistency(ScanConsistency::RequestPlus);
        let mut result = bounded("query", self.scope.query(statement, options)).await?;
        bounded("query rows", result.rows().try_collect()).await
    }
}

impl PoolStore for CouchbaseStore {
    fn pool_operation(&self, test: PoolTest) -> Option<&'static str> {
        Some(match test {
            PoolTest::LargeResultSet => {
                "SQL++ SELECT ... WHERE tbl = \"benchmark_data\" AND id <= $1 ORDER BY id \
                 (request_plus, index on tbl and id), every field decoded"
            }
            PoolTest::ConcurrentQueries => "connect + KV get of a row's document, 50 at once",
            PoolTest::ConnectionPool => {
                "KV get of a row's document over a 5-20 cluster-connection pool, 50 workers"
            }
            PoolTest::BatchInsert => {
                "upserts with the mode's durability, 64 in flight (the SDK has no batch call)"
            }
        })
    }

    async fn pool_load(&mut self, rows: &[BenchRow]) -> Result<()> {
        // The suite's reset emptied the collection; the index serves the range query.
        let (index, _, _) = pool_statements(&self.target);
        bounded("creating the pool index", self.cluster.query(index, None)).await?;
        self.upsert_rows(POOL_DATA, rows).await
    }

    async fn pool_large(&mut self, max_id: u32) -> Result<Vec<BenchRow>> {
        let (_, large, _) = pool_statements(&self.target);
        let docs: Vec<StoredRow> = self.query_rows(large, max_id).await?;
        docs.into_iter().map(BenchRow::try_from).collect()
    }

    async fn pool_point(&mut self, id: i32) -> Result<Option<BenchRow>> {
        let key = format!("{POOL_DATA}:{id}");
        match tokio::time::timeout(OPERATION_TIMEOUT, self.collection.get(key, None)).await {
            Ok(Ok(found)) => Ok(Some(BenchRow::try_from(found.content_as::<StoredRow>()?)?)),
            Ok(Err(e)) if *e.kind() == ErrorKind::DocumentNotFound => Ok(None),
            Ok(Err(e)) => Err(anyhow!("get: {e}")),
            Err(_) => Err(anyhow!("get: no answer within {OPERATION_TIMEOUT:?}")),
        }
    }

    async fn pool_batch_reset(&mut self) -> Result<()> {
        let statement = format!(
            "DELETE FROM {} AS p WHERE p.tbl = $1",
            keyspace(&self.target)
        );
        let _: Vec<serde_json::Value> = self.query_rows(statement, POOL_BATCH).await?;
        Ok(())
    }

    async fn pool_batch_insert(&mut self, rows: &[BenchRow]) -> Result<()> {
        self.upsert_rows(POOL_BATCH, rows).await
    }

    async fn pool_batch_count(&mut self) -> Result<u64> {
        let (_, _, count) = pool_statements(&self.target);
        let counts: Vec<u64> = self.query_rows(count, POOL_BATCH).await?;
        counts.first().copied().context("no count")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::couchbase::parse_url;

    #[test]
    fn pool_rows_round_trip_through_json_and_the_range_query_uses_its_index() {
        for r in crate::workload::pool::rows(4, 200, 1) {
            let json = serde_json::to_string(&PoolDoc::new(POOL_DATA, &r)).unwrap();
            let back: PoolDoc = serde_json::from_str(&json).unwrap();
            assert_eq!(back.tbl, POOL_DATA);
            // As the store reads it: the row alone.
            let row =
                BenchRow::try_from(serde_json::from_str::<StoredRow>(&json).unwrap()).unwrap();
            assert_eq!(row, r);
            assert_eq!(row.score.scale(), 2);
        }
        let t = parse_url("couchbase://u:p@h/b/s/c").unwrap();
        let (index, large, count) = pool_statements(&t);
        assert_eq!(
            index,
            "CREATE INDEX dbcompare_pool IF NOT EXISTS ON `b`.`s`.`c`(tbl, id)"
        );
        assert_eq!(
            large,
            "SELECT p.* FROM `b`.`s`.`c` AS p WHERE p.tbl = \"benchmark_data\" AND p.id <= $1 \
             ORDER BY p.id"
        );
        assert_eq!(
            count,
            "SELECT RAW COUNT(*) FROM `b`.`s`.`c` AS p WHERE p.tbl = $1"
        );
    }
}
