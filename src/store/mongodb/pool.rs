//! MongoDB's pool suite: the asyncmy seed's table as the `benchmark_data` collection (`_id` =
//! id, BSON dates, score as Decimal128), loaded and batch-inserted with insert_many.

use anyhow::{Context, Result};
use chrono::NaiveDateTime;
use futures::TryStreamExt;
use mongodb::IndexModel;
use mongodb::bson::{self, Decimal128, Document, doc};
use mongodb::options::IndexOptions;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::{MongoStore, drop_or_empty, write_concern};
use crate::store::PoolStore;
use crate::workload::pool::{BenchRow, PoolTest};

/// Documents per insert_many while loading `benchmark_data` (ordered, outside the timings).
const LOAD_CHUNK: usize = 10_000;

/// A `benchmark_data` row as stored: `_id` is the id, the timestamps are BSON dates (the
/// rows' naive times taken as UTC), the score a Decimal128 (exact: it goes through the
/// decimal's text), `data` absent when there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchDoc {
    #[serde(rename = "_id")]
    pub id: i32,
    pub user_id: i32,
    pub username: String,
    pub email: String,
    pub created_at: bson::DateTime,
    pub updated_at: bson::DateTime,
    pub score: Decimal128,
    pub is_active: bool,
    /// Absent (or null) for no data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}

/// A naive time (taken as UTC) as a BSON date.
fn bson_date(t: NaiveDateTime) -> bson::DateTime {
    bson::DateTime::from_millis(t.and_utc().timestamp_millis())
}

/// A BSON date as the naive UTC time it was written from.
fn naive_utc(t: bson::DateTime) -> Result<NaiveDateTime> {
    chrono::DateTime::from_timestamp_millis(t.timestamp_millis())
        .map(|d| d.naive_utc())
        .with_context(|| format!("date {t} out of range"))
}

/// A decimal as a Decimal128 with the same digits and scale (`123.40` stays `123.40`).
pub fn decimal128(d: Decimal) -> Result<Decimal128> {
    d.to_string()
        .parse()
        .with_context(|| format!("{d} as a Decimal128"))
}

/// A Decimal128 as a decimal, refused if it does not fit exactly.
pub fn decimal(d: Decimal128) -> Result<Decimal> {
    let text = d.to_string();
    Decimal::from_str_exact(&text).with_context(|| format!("Decimal128 {text} as a decimal"))
}

impl TryFrom<&BenchRow> for BenchDoc {
    type Error = anyhow::Error;

    fn try_from(r: &BenchRow) -> Result<Self> {
        Ok(BenchDoc {
            id: r.id,
            user_id: r.user_id,
            username: r.username.clone(),
            email: r.email.clone(),
            created_at: bson_date(r.created_at),
            updated_at: bson_date(r.updated_at),
            score: decimal128(r.score)?,
            is_active: r.is_active,
            data: r.data.clone(),
        })
    }
}

impl TryFrom<BenchDoc> for BenchRow {
    type Error = anyhow::Error;

    fn try_from(d: BenchDoc) -> Result<Self> {
        Ok(BenchRow {
            id: d.id,
            user_id: d.user_id,
            username: d.username,
            email: d.email,
            created_at: naive_utc(d.created_at)?,
            updated_at: naive_utc(d.updated_at)?,
            score: decimal(d.score)?,
            is_active: d.is_active,
            data: d.data,
        })
    }
}

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
    fn bench_rows_round_trip_exactly_through_bson() {
        let rows = crate::workload::pool::rows(7, 10_000, 1);
        let edges = [0, 5, 150, 10_000, 9_999_999].map(|cents| Decimal::new(cents, 2));
        for score in rows.iter().map(|r| r.score).chain(edges) {
            // The Decimal128 keeps the digits and the scale (`1.50`, not `1.5`).
            let stored = decimal128(score).unwrap();
            assert_eq!(stored.to_string(), score.to_string());
            let back = decimal(stored).unwrap();
            assert_eq!((back, back.scale()), (score, score.scale()));
        }
        for r in &rows[..2_000] {
            let bytes = bson::to_vec(&BenchDoc::try_from(r).unwrap()).unwrap();
            let back: BenchDoc = bson::from_slice(&bytes).unwrap();
            assert_eq!(BenchRow::try_from(back).unwrap(), *r);
        }
    }

    #[test]
    fn bench_documents_carry_native_types() {
        let rows = crate::workload::pool::rows(7, 100, 1);
        let with_data = rows.iter().find(|r| r.data.is_some()).unwrap();
        let doc = bson::to_document(&BenchDoc::try_from(with_data).unwrap()).unwrap();
        assert_eq!(doc.keys().next().map(String::as_str), Some("_id"));
        assert_eq!(doc.get_i32("_id"), Ok(with_data.id));
        assert_eq!(doc.get_i32("user_id"), Ok(with_data.user_id));
        assert!(matches!(
            doc.get("created_at"),
            Some(bson::Bson::DateTime(_))
        ));
        assert!(matches!(
            doc.get("updated_at"),
            Some(bson::Bson::DateTime(_))
        ));
        assert!(matches!(doc.get("score"), Some(bson::Bson::Decimal128(_))));
        assert_eq!(doc.get_bool("is_active"), Ok(with_data.is_active));
        assert_eq!(doc.get_str("data").ok(), with_data.data.as_deref());

        let without = rows.iter().find(|r| r.data.is_none()).unwrap();
        let doc = bson::to_document(&BenchDoc::try_from(without).unwrap()).unwrap();
        assert!(!doc.contains_key("data"), "{doc}");
        // A null data (written by another client) reads back as none too.
        let mut with_null = doc.clone();
        with_null.insert("data", bson::Bson::Null);
        let back: BenchDoc = bson::from_document(with_null).unwrap();
        assert_eq!(BenchRow::try_from(back).unwrap(), *without);
    }

    #[test]
    fn decimals_that_do_not_fit_are_refused() {
        let big: Decimal128 = "1E+40".parse().unwrap();
        assert!(decimal(big).is_err());
        let nan: Decimal128 = "NaN".parse().unwrap();
        assert!(decimal(nan).is_err());
        assert_eq!(
            decimal(decimal128(Decimal::new(-12_340, 2)).unwrap()).unwrap(),
            Decimal::new(-12_340, 2)
        );
    }

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
