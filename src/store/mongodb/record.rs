//! The classic suite's record as a MongoDB document (`created_at` a BSON date), its indexes
//! and its search.

use anyhow::{Context, Result};
use chrono::{TimeZone, Utc};
use mongodb::IndexModel;
use mongodb::bson::{self, Document, doc};
use mongodb::options::IndexOptions;
use serde::{Deserialize, Serialize};

use crate::workload::record::{Data, Record};

/// The document as stored: the record's fields with `created_at` as a BSON date.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Doc {
    pub id: i64,
    pub unique_id: String,
    pub created_by: i64,
    pub updated_by: i64,
    pub deleted_by: i64,
    pub created_at: bson::DateTime,
    pub data: Data,
}

impl From<&Record> for Doc {
    fn from(r: &Record) -> Self {
        Doc {
            id: r.id,
            unique_id: r.unique_id.clone(),
            created_by: r.created_by,
            updated_by: r.updated_by,
            deleted_by: r.deleted_by,
            created_at: bson::DateTime::from_millis(r.created_at.timestamp_millis()),
            data: r.data.clone(),
        }
    }
}

impl TryFrom<Doc> for Record {
    type Error = anyhow::Error;

    fn try_from(d: Doc) -> Result<Self> {
        Ok(Record {
            id: d.id,
            unique_id: d.unique_id,
            created_by: d.created_by,
            updated_by: d.updated_by,
            deleted_by: d.deleted_by,
            created_at: Utc
                .timestamp_millis_opt(d.created_at.timestamp_millis())
                .single()
                .context("created_at out of range")?,
            data: d.data,
        })
    }
}

/// The indexes reset creates: unique on unique_id, plain on data.name and data.age.
pub fn index_models() -> Vec<IndexModel> {
    let unique = IndexOptions::builder()
        .unique(true)
        .name("dbcompare_records_unique_id".to_string())
        .build();
    let named = |name: &str| IndexOptions::builder().name(name.to_string()).build();
    vec![
        IndexModel::builder()
            .keys(doc! { "unique_id": 1 })
            .options(unique)
            .build(),
        IndexModel::builder()
            .keys(doc! { "data.name": 1 })
            .options(named("dbcompare_records_name"))
            .build(),
        IndexModel::builder()
            .keys(doc! { "data.age": 1 })
            .options(named("dbcompare_records_age"))
            .build(),
    ]
}

/// The filter of a search.
pub fn search_filter(unique_id: &str) -> Document {
    doc! { "unique_id": unique_id }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::record::generate;

    #[test]
    fn documents_round_trip_every_field_through_bson() {
        for r in generate(4, &"micro".parse().unwrap(), 1) {
            let bytes = bson::to_vec(&Doc::from(&r)).unwrap();
            let back: Doc = bson::from_slice(&bytes).unwrap();
            assert_eq!(Record::try_from(back).unwrap(), r);
        }
    }

    #[test]
    fn documents_carry_native_dates_and_nested_data() {
        let r = &generate(4, &"micro".parse().unwrap(), 1)[0];
        let doc = bson::to_document(&Doc::from(r)).unwrap();
        assert!(matches!(
            doc.get("created_at"),
            Some(bson::Bson::DateTime(_))
        ));
        assert_eq!(
            doc.get_document("data").unwrap().get_str("name").unwrap(),
            r.data.name
        );
        assert_eq!(
            doc.get_document("data").unwrap().get_i64("age").unwrap(),
            r.data.age
        );
        assert_eq!(doc.get_str("unique_id").unwrap(), "micro-1");
    }
}
