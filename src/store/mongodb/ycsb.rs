//! MongoDB's YCSB suite, as YCSB's mongodb binding keeps a record: one document per key
//! (`_id` = the key, one string per field) in the table's collection; reads by `_id` with a
//! projection, updates with `$set`, scans as a range find sorted by `_id` (strings compare
//! by their bytes, as on every store). Single-document writes with the store's write
//! concern, no transaction, as YCSB.

use anyhow::{Context, Result};
use futures::TryStreamExt;
use mongodb::bson::{Document, doc};
use mongodb::options::CollectionOptions;

use super::collections::Table;
use super::{MongoStore, drop_or_empty, write_concern};
use crate::store::{YcsbFields, YcsbStore, YcsbTable};
use crate::workload::ycsb::OpKind;

impl MongoStore {
    fn ycsb_table(&self, table: &YcsbTable) -> Table {
        let options = CollectionOptions::builder()
            .write_concern(write_concern(self.durability))
            .build();
        Table {
            collection: self.db.collection_with_options(&table.name, options),
            fields: table.fields.clone(),
        }
    }

    fn table(&self) -> Result<&Table> {
        self.ycsb
            .as_ref()
            .context("the YCSB table is not in use yet (ycsb_reset or ycsb_use first)")
    }
}

impl YcsbStore for MongoStore {
    fn ycsb_operation(&self, op: OpKind) -> Option<&'static str> {
        Some(match op {
            OpKind::Read => "find_one by _id, the fields projected",
            OpKind::Update => "update_one by _id, $set of the field",
            OpKind::Insert => "insert_one of { _id: key, fields }",
            OpKind::Scan => "find { _id: { $gte: start } } sorted by _id, limited",
            OpKind::ReadModifyWrite => "the read, then the update (two commands, as YCSB)",
        })
    }

    async fn ycsb_reset(&mut self, table: &YcsbTable) -> Result<()> {
        let t = self.ycsb_table(table);
        drop_or_empty(&t.collection).await?;
        self.ycsb = Some(t);
        Ok(())
    }

    async fn ycsb_use(&mut self, table: &YcsbTable) -> Result<()> {
        self.ycsb = Some(self.ycsb_table(table));
        Ok(())
    }

    async fn ycsb_insert(&mut self, key: &str, values: &[String]) -> Result<()> {
        let t = self.table()?;
        let mut document = doc! { "_id": key };
        for (name, value) in t.fields.iter().zip(values) {
            document.insert(name, value);
        }
        t.collection.insert_one(document).await?;
        Ok(())
    }

    async fn ycsb_read(&mut self, key: &str, field: Option<u16>) -> Result<Option<YcsbFields>> {
        let t = self.table()?;
        let found = t
            .collection
            .find_one(doc! { "_id": key })
            .projection(t.projection(field))
            .await?;
        found.map(|d| t.fields_of(&d, field)).transpose()
    }

    async fn ycsb_update(&mut self, key: &str, values: &[(u16, String)]) -> Result<()> {
        let t = self.table()?;
        let set: Document = values
            .iter()
            .map(|(f, v)| (t.fields[usize::from(*f)].clone(), v.clone().into()))
            .collect();
        let updated = t
            .collection
            .update_one(doc! { "_id": key }, doc! { "$set": set })
            .await?;
        anyhow::ensure!(updated.matched_count == 1, "no record {key} to update");
        Ok(())
    }

    async fn ycsb_scan(
        &mut self,
        start: &str,
        count: u32,
        field: Option<u16>,
    ) -> Result<Vec<(String, YcsbFields)>> {
        let t = self.table()?;
        let mut cursor = t
            .collection
            .find(doc! { "_id": { "$gte": start } })
            .sort(doc! { "_id": 1 })
            .limit(i64::from(count))
            .projection(t.projection(field))
            .await?;
        let mut found = Vec::new();
        while let Some(document) = cursor.try_next().await? {
            let key = document
                .get_str("_id")
                .with_context(|| format!("_id is not a string in {document}"))?
                .to_string();
            found.push((key, t.fields_of(&document, field)?));
        }
        Ok(found)
    }
}
