//! Redis's YCSB suite, as YCSB's redis binding keeps a record: a hash of the record's
//! fields under its key, and a sorted set of the keys for scans. The set orders the keys
//! by their bytes (`ZRANGEBYLEX`), so that scans run in the same key order on every store;
//! an insert writes the hash and the set entry in one MULTI/EXEC.

use anyhow::{Context, Result};

use super::RedisStore;
use super::conn::Conn;
use super::keys::YcsbKeys;
use crate::store::{YcsbFields, YcsbStore, YcsbTable};
use crate::workload::ycsb::OpKind;

/// An HMGET's answer as a record's fields (`None`: no such record).
fn fields_of(values: Vec<Option<String>>, count: usize, field: Option<u16>) -> Option<YcsbFields> {
    if values.iter().all(Option::is_none) {
        return None;
    }
    Some(match field {
        Some(f) => {
            let mut fields = vec![None; count];
            fields[usize::from(f)] = values.into_iter().next().flatten();
            fields
        }
        None => values,
    })
}

/// The error of an operation before the table is in use.
const NOT_IN_USE: &str = "the YCSB table is not in use yet (ycsb_reset or ycsb_use first)";

impl YcsbStore for RedisStore {
    fn ycsb_operation(&self, op: OpKind) -> Option<&'static str> {
        Some(match op {
            OpKind::Read => "HMGET of the record's fields",
            OpKind::Update => "HSET of the field",
            OpKind::Insert if self.cluster.is_some() => {
                "HSET of every field, then ZADD of the key to the index (two commands, as \
                 YCSB's binding: in a cluster the index is one key, on one master)"
            }
            OpKind::Insert => "MULTI; HSET of every field; ZADD of the key to the index; EXEC",
            OpKind::Scan if self.cluster.is_some() => {
                "ZRANGEBYLEX of the index from the start key, then HMGET of each record, all at \
                 once (each on the master of its slot)"
            }
            OpKind::Scan => {
                "ZRANGEBYLEX of the index from the start key, then HMGET of each record in one \
                 pipeline"
            }
            OpKind::ReadModifyWrite => "the read, then the update (two commands, as YCSB)",
        })
    }

    async fn ycsb_reset(&mut self, table: &YcsbTable) -> Result<()> {
        let keys = YcsbKeys::new(table);
        self.unlink_all(&keys.record)
            .await
            .context("deleting the previous YCSB records")?;
        self.conn
            .query::<()>(redis::cmd("UNLINK").arg(&keys.index))
            .await?;
        self.ycsb = Some(keys);
        Ok(())
    }

    async fn ycsb_use(&mut self, table: &YcsbTable) -> Result<()> {
        self.ycsb = Some(YcsbKeys::new(table));
        Ok(())
    }

    async fn ycsb_insert(&mut self, key: &str, values: &[String]) -> Result<()> {
        let keys = self.ycsb.as_ref().context(NOT_IN_USE)?;
        let pairs: Vec<(&str, &str)> = keys
            .fields
            .iter()
            .map(String::as_str)
            .zip(values.iter().map(String::as_str))
            .collect();
        if self.cluster.is_some() {
            self.conn
                .query::<()>(redis::cmd("HSET").arg(keys.record(key)).arg(&pairs))
                .await?;
            self.conn
                .query::<()>(redis::cmd("ZADD").arg(&keys.index).arg(0).arg(key))
                .await?;
            return Ok(());
        }
        let mut pipe = redis::pipe();
        pipe.atomic()
            .hset_multiple(keys.record(key), &pairs)
            .ignore()
            .zadd(&keys.index, key, 0)
            .ignore();
        pipe.query_async::<()>(&mut self.conn).await?;
        Ok(())
    }

    async fn ycsb_read(&mut self, key: &str, field: Option<u16>) -> Result<Option<YcsbFields>> {
        let keys = self.ycsb.as_ref().context(NOT_IN_USE)?;
        let values: Vec<Option<String>> = self
            .conn
            .query(
                redis::cmd("HMGET")
                    .arg(keys.record(key))
                    .arg(keys.asked(field)),
            )
            .await?;
        Ok(fields_of(values, keys.fields.len(), field))
    }

    async fn ycsb_update(&mut self, key: &str, values: &[(u16, String)]) -> Result<()> {
        let keys = self.ycsb.as_ref().context(NOT_IN_USE)?;
        let pairs: Vec<(&str, &str)> = values
            .iter()
            .map(|(f, v)| (keys.fields[usize::from(*f)].as_str(), v.as_str()))
            .collect();
        self.conn
            .query::<()>(redis::cmd("HSET").arg(keys.record(key)).arg(&pairs))
            .await?;
        Ok(())
    }

    async fn ycsb_scan(
        &mut self,
        start: &str,
        count: u32,
        field: Option<u16>,
    ) -> Result<Vec<(String, YcsbFields)>> {
        let keys = self.ycsb.as_ref().context(NOT_IN_USE)?;
        let found: Vec<String> = self
            .conn
            .query(
                redis::cmd("ZRANGEBYLEX")
                    .arg(&keys.index)
                    .arg(format!("[{start}"))
                    .arg("+")
                    .arg("LIMIT")
                    .arg(0)
                    .arg(count),
            )
            .await?;
        let answers: Vec<Vec<Option<String>>> = if found.is_empty() {
            Vec::new()
        } else if let Conn::Cluster(cluster) = &self.conn {
            // A pipeline goes to one node: one command per record, sent at once.
            let reads = found.iter().map(|key| {
                let mut conn = cluster.clone();
                let mut cmd = redis::cmd("HMGET");
                cmd.arg(keys.record(key)).arg(keys.asked(field));
                async move { cmd.query_async::<Vec<Option<String>>>(&mut conn).await }
            });
            futures::future::try_join_all(reads).await?
        } else {
            let mut pipe = redis::pipe();
            for key in &found {
                pipe.cmd("HMGET")
                    .arg(keys.record(key))
                    .arg(keys.asked(field));
            }
            pipe.query_async(&mut self.conn).await?
        };
        let count = keys.fields.len();
        found
            .into_iter()
            .zip(answers)
            .map(|(key, values)| {
                let fields = fields_of(values, count, field)
                    .with_context(|| format!("{key} is in the index but has no record"))?;
                Ok((key, fields))
            })
            .collect()
    }
}
