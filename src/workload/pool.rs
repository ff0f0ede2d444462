//! The pool suite's vocabulary, after the asyncmy benchmark suite (seed 003): the seed's
//! `benchmark_data` table and its rows, the suite's tests and sizes, and [`StoredRow`], the
//! one form of a row for the stores that keep it without typed columns.

use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{NaiveDate, NaiveDateTime};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use rust_decimal::Decimal;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The seed's table: loaded once, read by the Large Result Set and the point queries.
pub const DATA_TABLE: &str = "benchmark_data";
/// The Batch Insert's table (the seed's schema, emptied before each Batch Insert).
pub const BATCH_TABLE: &str = "benchmark_batch";

/// The seed's table size.
pub const ROWS: u32 = 100_000;
/// Rows the Large Result Set fetches (`id <= LARGE_RESULT`).
pub const LARGE_RESULT: u32 = 33_000;
/// Concurrent Queries: SELECTs at once, each on a new connection.
pub const CONCURRENT: usize = 50;
/// Connection Pool: queries, and the pool's bounds.
pub const POOL_QUERIES: u32 = 2_000;
pub const POOL_MIN: usize = 5;
pub const POOL_MAX: usize = 20;
/// Batch Insert: rows.
pub const BATCH_ROWS: u32 = 10_000;

/// The sizes the suite runs at: the seed's, or smaller ones for tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSizes {
    /// Rows of `benchmark_data`.
    pub rows: u32,
    /// Rows the Large Result Set fetches (`id <= large_result`).
    pub large_result: u32,
    /// Rows of a Batch Insert.
    pub batch_rows: u32,
}

impl PoolSizes {
    /// The seed's: 100,000 rows, 33,000 of them fetched at once, 10,000 inserted.
    pub const SEED: PoolSizes = PoolSizes {
        rows: ROWS,
        large_result: LARGE_RESULT,
        batch_rows: BATCH_ROWS,
    };
}

/// The columns of `benchmark_data` in the order of [`BenchRow`]'s fields, as a literal for
/// `concat!` (the SQL stores' statements, built once).
macro_rules! pool_columns {
    () => {
        "id, user_id, username, email, created_at, updated_at, score, is_active, data"
    };
}
pub(crate) use pool_columns;

/// The columns of `benchmark_data`, as a constant.
pub const POOL_COLUMNS: &str = pool_columns!();

/// One row of `benchmark_data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchRow {
    pub id: i32,
    pub user_id: i32,
    pub username: String,
    pub email: String,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
    pub score: Decimal,
    pub is_active: bool,
    pub data: Option<String>,
}

/// The suite's tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolTest {
    LargeResultSet,
    ConcurrentQueries,
    ConnectionPool,
    BatchInsert,
}

impl PoolTest {
    pub const ALL: [PoolTest; 4] = [
        PoolTest::LargeResultSet,
        PoolTest::ConcurrentQueries,
        PoolTest::ConnectionPool,
        PoolTest::BatchInsert,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PoolTest::LargeResultSet => "LargeResultSet",
            PoolTest::ConcurrentQueries => "ConcurrentQueries",
            PoolTest::ConnectionPool => "ConnectionPool",
            PoolTest::BatchInsert => "BatchInsert",
        }
    }
}

/// A row's time as Unix microseconds (the times are naive: taken as UTC), how the stores
/// without a time type keep it.
pub fn unix_micros(t: NaiveDateTime) -> i64 {
    t.and_utc().timestamp_micros()
}

/// A time kept as Unix microseconds.
pub fn from_unix_micros(us: i64) -> Result<NaiveDateTime> {
    chrono::DateTime::from_timestamp_micros(us)
        .map(|t| t.naive_utc())
        .with_context(|| format!("time {us} us out of range"))
}

/// A row as the stores without typed columns keep it (Redis as bincode, Couchbase as JSON,
/// Aerospike as bins): times as Unix microseconds, the decimal exact (see
/// [`exact_decimal`]), `data` as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRow {
    pub id: i32,
    pub user_id: i32,
    pub username: String,
    pub email: String,
    pub created_at_us: i64,
    pub updated_at_us: i64,
    #[serde(with = "exact_decimal")]
    pub score: Decimal,
    pub is_active: bool,
    pub data: Option<String>,
}

/// A decimal kept exactly: as its text (`123.40`, the scale kept) in a format people read
/// (JSON), as its own 16 bytes in a binary one (bincode), so that decoding a row costs no
/// more than its fields.
pub mod exact_decimal {
    use super::*;

    pub fn serialize<S: Serializer>(d: &Decimal, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.collect_str(d)
        } else {
            Decimal::serialize(d).serialize(serializer)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Decimal, D::Error> {
        if deserializer.is_human_readable() {
            deserializer.deserialize_str(Text)
        } else {
            <[u8; 16]>::deserialize(deserializer).map(Decimal::deserialize)
        }
    }

    /// Reads the text form without copying it.
    struct Text;

    impl serde::de::Visitor<'_> for Text {
        type Value = Decimal;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a decimal as text")
        }

        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Decimal, E> {
            text.parse()
                .map_err(|e| E::custom(format!("score '{text}' is not a decimal ({e})")))
        }
    }
}

impl From<&BenchRow> for StoredRow {
    fn from(r: &BenchRow) -> Self {
        StoredRow {
            id: r.id,
            user_id: r.user_id,
            username: r.username.clone(),
            email: r.email.clone(),
            created_at_us: unix_micros(r.created_at),
            updated_at_us: unix_micros(r.updated_at),
            score: r.score,
            is_active: r.is_active,
            data: r.data.clone(),
        }
    }
}

impl TryFrom<StoredRow> for BenchRow {
    type Error = anyhow::Error;

    /// The row back, refused when a time is out of range.
    fn try_from(s: StoredRow) -> Result<Self> {
        Ok(BenchRow {
            id: s.id,
            user_id: s.user_id,
            created_at: from_unix_micros(s.created_at_us)?,
            updated_at: from_unix_micros(s.updated_at_us)?,
            score: s.score,
            username: s.username,
            email: s.email,
            is_active: s.is_active,
            data: s.data,
        })
    }
}

/// The rows of `benchmark_data` (ids from 1), the same for a seed everywhere.
pub fn rows(seed: u64, count: u32, first_id: i32) -> Vec<BenchRow> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(0x0b0b_da7a);
    let mut below = |n: u64| ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64;
    let base = NaiveDate::from_ymd_opt(2024, 1, 1)
        .expect("a valid date")
        .and_hms_opt(0, 0, 0)
        .expect("a valid time");
    (0..count)
        .map(|i| {
            let id = first_id + i as i32;
            let created_at = base + Duration::from_secs(below(365 * 86_400));
            let data_len = below(200) as usize;
            BenchRow {
                id,
                user_id: 1 + below(10_000) as i32,
                username: format!("user_{id}"),
                email: format!("user_{id}@example.com"),
                created_at,
                updated_at: created_at + Duration::from_secs(below(86_400)),
                score: Decimal::new(below(10_000_000) as i64, 2),
                is_active: below(2) == 1,
                data: (below(10) != 0).then(|| "x".repeat(data_len)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_stable_and_in_range() {
        let a = rows(3, 1000, 1);
        assert_eq!(a, rows(3, 1000, 1));
        assert_ne!(a, rows(4, 1000, 1));
        assert_eq!(a[0].id, 1);
        assert_eq!(a[999].id, 1000);
        for r in &a {
            assert!(r.updated_at >= r.created_at);
            assert!(r.score >= Decimal::ZERO && r.score < Decimal::new(100_000, 0));
            assert_eq!(r.score.scale(), 2);
            assert!(r.data.as_ref().is_none_or(|d| d.len() < 200));
        }
        assert!(a.iter().any(|r| r.data.is_none()) && a.iter().any(|r| r.is_active));
    }

    #[test]
    fn stored_rows_round_trip_exactly_and_refuse_what_is_not_a_row() {
        for r in rows(4, 500, 1) {
            let stored = StoredRow::from(&r);
            assert_eq!(stored.created_at_us, unix_micros(r.created_at));
            let back = BenchRow::try_from(stored).unwrap();
            assert_eq!(back, r);
            assert_eq!(back.score.scale(), 2, "the decimal keeps its scale");
        }
        let mut bad = StoredRow::from(&rows(4, 1, 1)[0]);
        bad.created_at_us = i64::MAX;
        assert!(BenchRow::try_from(bad).is_err());
    }

    #[test]
    fn the_score_is_text_in_json_and_its_own_bytes_in_bincode() {
        let mut stored = StoredRow::from(&rows(4, 1, 1)[0]);
        stored.score = Decimal::new(12_340, 2);
        let json = serde_json::to_value(&stored).unwrap();
        assert_eq!(json["score"], "123.40");
        let back: StoredRow = serde_json::from_value(json.clone()).unwrap();
        assert_eq!((back.score, back.score.scale()), (stored.score, 2));
        let mut wrong = json;
        wrong["score"] = "not a number".into();
        let e = serde_json::from_value::<StoredRow>(wrong).unwrap_err();
        assert!(e.to_string().contains("is not a decimal"), "{e}");

        let config = bincode::config::standard();
        let bytes = bincode::serde::encode_to_vec(&stored, config).unwrap();
        let raw = stored.score.serialize();
        assert!(
            bytes.windows(16).any(|w| w == raw),
            "the 16 bytes, unprefixed"
        );
        let (back, _): (StoredRow, usize) =
            bincode::serde::decode_from_slice(&bytes, config).unwrap();
        assert_eq!(back, stored);
    }
}
