//! Couchbase's YCSB suite, as YCSB's couchbase binding keeps a record: a JSON document per
//! key (`<table>:<key>`, its table in `tbl` and one string per field) in the URL's
//! collection; KV get, a sub-document upsert of the fields changed, an upsert of the whole
//! document for an insert (each with the mode's durability), and scans through SQL++ on an
//! index on the table and the document key (key order is the keys' bytes, as on every store).

use anyhow::{Context, Result, anyhow, bail};
use couchbase::error::ErrorKind;
use couchbase::options::kv_options::{MutateInOptions, UpsertOptions};
use couchbase::options::query_options::{QueryOptions, ScanConsistency};
use couchbase::subdoc::mutate_in_specs::MutateInSpec;
use futures::TryStreamExt;
use serde_json::{Map, Value};

use super::{CouchbaseStore, OPERATION_TIMEOUT, Target, bounded, durability_level, keyspace};
use crate::store::{Store, YcsbFields, YcsbStore, YcsbTable, ycsb_fields};
use crate::workload::ycsb::OpKind;

/// The SQL++ statements of the YCSB suite: its index, and a scan.
pub fn ycsb_statements(t: &Target) -> (String, String) {
    let ks = keyspace(t);
    (
        format!("CREATE INDEX dbcompare_ycsb IF NOT EXISTS ON {ks}(tbl, META().id)"),
        format!(
            "SELECT META(u).id AS id, u.* FROM {ks} AS u WHERE u.tbl = $1 AND META(u).id >= $2 \
             ORDER BY META(u).id LIMIT $3"
        ),
    )
}

/// Whether `e` says the cluster runs no query service: the SDK's own error, or the HTTP
/// status a node without the service answers SQL++ with (501 Not Implemented).
fn no_query_service(e: &couchbase::error::Error) -> bool {
    let text = e.to_string();
    matches!(e.kind(), ErrorKind::ServiceNotAvailable(_))
        || text.contains("501")
        || text.contains("Not Implemented")
}

/// A document's fields: every one, or the one asked for.
fn fields_of(
    document: &Map<String, Value>,
    names: &[String],
    field: Option<u16>,
) -> Result<YcsbFields> {
    ycsb_fields(names.len(), field, |_, i| match document.get(&names[i]) {
        Some(Value::String(s)) => Ok(s.clone()),
        other => bail!("{} holds {other:?}", names[i]),
    })
}

impl CouchbaseStore {
    fn ycsb_table(&self) -> Result<&YcsbTable> {
        self.ycsb
            .as_ref()
            .context("the YCSB table is not in use yet (ycsb_reset or ycsb_use first)")
    }
}

impl YcsbStore for CouchbaseStore {
    fn ycsb_operation(&self, op: OpKind) -> Option<&'static str> {
        if op == OpKind::Scan && self.ycsb_no_scans.is_some() {
            return None;
        }
        Some(match op {
            OpKind::Read => "KV get of the record's document",
            OpKind::Update => "sub-document upsert of the field, with the mode's durability",
            OpKind::Insert => "upsert of the document, with the mode's durability",
            OpKind::Scan => {
                "SQL++ SELECT ... WHERE tbl = $1 AND META().id >= $2 ORDER BY META().id LIMIT $3 \
                 (request_plus, index on tbl and META().id)"
            }
            OpKind::ReadModifyWrite => "the get, then the update (two commands, as YCSB)",
        })
    }

    fn ycsb_lacking(&self, op: OpKind) -> String {
        match (op, &self.ycsb_no_scans) {
            (OpKind::Scan, Some(why)) => why.clone(),
            (op, _) => format!("the store has no {} operation", op.name()),
        }
    }

    async fn ycsb_reset(&mut self, table: &YcsbTable) -> Result<()> {
        // The benchmark's collection is emptied as for the other suites, then indexed for
        // the scans: a cluster without the query service has none, and runs the workloads
        // without scans all the same.
        self.reset().await?;
        let (index, _) = ycsb_statements(&self.target);
        let created = tokio::time::timeout(OPERATION_TIMEOUT, self.cluster.query(index, None));
        self.ycsb_no_scans = match created.await {
            Ok(Ok(_)) => None,
            Ok(Err(e)) if no_query_service(&e) => Some(format!(
                "the cluster has no query service for the scans' SQL++ (creating their index \
                 answered: {e})"
            )),
            Ok(Err(e)) => bail!("creating the YCSB index: {e}"),
            Err(_) => bail!("creating the YCSB index: no answer within {OPERATION_TIMEOUT:?}"),
        };
        self.ycsb = Some(table.clone());
        Ok(())
    }

    async fn ycsb_use(&mut self, table: &YcsbTable) -> Result<()> {
        self.ycsb = Some(table.clone());
        Ok(())
    }

    async fn ycsb_insert(&mut self, key: &str, values: &[String]) -> Result<()> {
        let table = self.ycsb_table()?;
        let mut document = Map::new();
        document.insert("tbl".into(), Value::String(table.name.clone()));
        for (name, value) in table.fields.iter().zip(values) {
            document.insert(name.clone(), Value::String(value.clone()));
        }
        let options = UpsertOptions::new().durability_level(durability_level(self.durability));
        let id = format!("{}:{key}", table.name);
        bounded("upsert", self.collection.upsert(id, &document, options)).await?;
        Ok(())
    }

    async fn ycsb_read(&mut self, key: &str, field: Option<u16>) -> Result<Option<YcsbFields>> {
        let table = self.ycsb_table()?;
        let id = format!("{}:{key}", table.name);
        match tokio::time::timeout(OPERATION_TIMEOUT, self.collection.get(id, None)).await {
            Ok(Ok(found)) => {
                let document: Map<String, Value> = found.content_as()?;
                fields_of(&document, &table.fields, field).map(Some)
            }
            Ok(Err(e)) if *e.kind() == ErrorKind::DocumentNotFound => Ok(None),
            Ok(Err(e)) => Err(anyhow!("get: {e}")),
            Err(_) => Err(anyhow!("get: no answer within {OPERATION_TIMEOUT:?}")),
        }
    }

    async fn ycsb_update(&mut self, key: &str, values: &[(u16, String)]) -> Result<()> {
        let table = self.ycsb_table()?;
        let specs = values
            .iter()
            .map(|(f, v)| MutateInSpec::upsert(table.fields[usize::from(*f)].as_str(), v, None))
            .collect::<couchbase::error::Result<Vec<_>>>()?;
        let options = MutateInOptions::new().durability_level(durability_level(self.durability));
        let id = format!("{}:{key}", table.name);
        bounded("mutate_in", self.collection.mutate_in(id, &specs, options)).await?;
        Ok(())
    }

    async fn ycsb_scan(
        &mut self,
        start: &str,
        count: u32,
        field: Option<u16>,
    ) -> Result<Vec<(String, YcsbFields)>> {
        let table = self.ycsb_table()?;
        let (_, scan) = ycsb_statements(&self.target);
        let options = QueryOptions::new()
            .add_positional_parameter(&table.name)?
            .add_positional_parameter(format!("{}:{start}", table.name))?
            .add_positional_parameter(count)?
            .scan_consistency(ScanConsistency::RequestPlus);
        let mut result = bounded("query", self.scope.query(scan, options)).await?;
        let rows: Vec<Map<String, Value>> =
            bounded("query rows", result.rows().try_collect()).await?;
        let prefix = format!("{}:", table.name);
        rows.iter()
            .map(|row| {
                let id = row
                    .get("id")
                    .and_then(Value::as_str)
                    .context("a scanned row without its id")?;
                let key = id
                    .strip_prefix(&prefix)
                    .with_context(|| format!("{id} is not a key of {}", table.name))?;
                Ok((key.to_string(), fields_of(row, &table.fields, field)?))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::couchbase::parse_url;

    #[test]
    fn scans_go_through_their_own_index_in_key_order() {
        let t = parse_url("couchbase://u:p@h/b/s/c").unwrap();
        let (index, scan) = ycsb_statements(&t);
        assert_eq!(
            index,
            "CREATE INDEX dbcompare_ycsb IF NOT EXISTS ON `b`.`s`.`c`(tbl, META().id)"
        );
        assert!(scan.ends_with("ORDER BY META(u).id LIMIT $3"), "{scan}");
        let names = vec!["field0".to_string(), "field1".to_string()];
        let doc: Map<String, Value> =
            serde_json::from_str(r#"{"tbl":"usertable","field0":"a","field1":"b"}"#).unwrap();
        assert_eq!(
            fields_of(&doc, &names, None).unwrap(),
            [Some("a".to_string()), Some("b".to_string())]
        );
        assert_eq!(
            fields_of(&doc, &names, Some(1)).unwrap(),
            [None, Some("b".to_string())]
        );
        let broken: Map<String, Value> = serde_json::from_str(r#"{"field0":1}"#).unwrap();
        assert!(fields_of(&broken, &names, Some(0)).is_err());
    }
}
