//! The pool suite's `benchmark_data` row as a MongoDB document (`_id` = id, BSON dates,
//! score as Decimal128), and its conversions from and to the seed's row.

use anyhow::{Context, Result};
use chrono::NaiveDateTime;
use mongodb::bson::{self, Decimal128};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::workload::pool::BenchRow;

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
}
