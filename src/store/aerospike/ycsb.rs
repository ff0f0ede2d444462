//! Aerospike's YCSB suite, as YCSB's aerospike binding keeps a record: one record per key in
//! the table's set, one bin per field; get with the bins asked for, put of the bins changed.
//! Keys are hashed into partitions: there is no key-ordered scan, so SCAN is not applicable
//! (as in YCSB's binding).

use aerospike::{Bin, Bins, Key, ResultCode, Value};
use anyhow::{Context, Result, anyhow, bail};

use super::AerospikeStore;
use crate::store::{YcsbFields, YcsbStore, YcsbTable};
use crate::workload::ycsb::OpKind;

impl AerospikeStore {
    fn ycsb_key(&self, key: &str) -> Result<Key> {
        let table = self
            .ycsb
            .as_ref()
            .context("the YCSB table is not in use yet")?;
        Ok(Key::new(
            self.target.namespace.as_str(),
            table.name.as_str(),
            Value::from(key),
        )?)
    }
}

impl YcsbStore for AerospikeStore {
    fn ycsb_operation(&self, op: OpKind) -> Option<&'static str> {
        Some(match op {
            OpKind::Read => "get of the record's bins",
            OpKind::Update => "put of the bin (single-record atomic write)",
            OpKind::Insert => "put of every bin (single-record atomic write)",
            OpKind::Scan => return None,
            OpKind::ReadModifyWrite => "the get, then the put (two commands, as YCSB)",
        })
    }

    fn ycsb_lacking(&self, op: OpKind) -> String {
        match op {
            OpKind::Scan => {
                "keys are hashed into partitions, in no key order (as YCSB's binding)".to_string()
            }
            op => format!("the store has no {} operation", op.name()),
        }
    }

    async fn ycsb_reset(&mut self, table: &YcsbTable) -> Result<()> {
        self.client
            .truncate(&self.admin, &self.target.namespace, &table.name, 0)
            .await
            .with_context(|| format!("truncating the set {}", table.name))?;
        self.ycsb = Some(table.clone());
        Ok(())
    }

    async fn ycsb_use(&mut self, table: &YcsbTable) -> Result<()> {
        self.ycsb = Some(table.clone());
        Ok(())
    }

    async fn ycsb_insert(&mut self, key: &str, values: &[String]) -> Result<()> {
        let k = self.ycsb_key(key)?;
        let table = self
            .ycsb
            .as_ref()
            .context("the YCSB table is not in use yet")?;
        let bins: Vec<Bin> = table
            .fields
            .iter()
            .zip(values)
            .map(|(f, v)| Bin::new(f.as_str(), Value::from(v.as_str())))
            .collect();
        self.client.put(&self.write, &k, &bins).await?;
        Ok(())
    }

    async fn ycsb_read(&mut self, key: &str, field: Option<u16>) -> Result<Option<YcsbFields>> {
        let k = self.ycsb_key(key)?;
        let table = self
            .ycsb
            .as_ref()
            .context("the YCSB table is not in use yet")?;
        let bins = match field {
            Some(f) => Bins::Some(vec![table.fields[usize::from(f)].clone()]),
            None => Bins::All,
        };
        let found = match self.client.get(&self.read, &k, bins).await {
            Ok(found) => found,
            Err(e) if e.matches(&[ResultCode::KeyNotFoundError]) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let value = |i: usize| -> Result<Option<String>> {
            match found.bins.get(&table.fields[i]) {
                Some(Value::String(s)) => Ok(Some(s.clone())),
                other => bail!("bin {} holds {other:?}", table.fields[i]),
            }
        };
        let mut fields = vec![None; table.fields.len()];
        match field {
            Some(f) => fields[usize::from(f)] = value(usize::from(f))?,
            None => {
                for (i, slot) in fields.iter_mut().enumerate() {
                    *slot = value(i)?;
                }
            }
        }
        Ok(Some(fields))
    }

    async fn ycsb_update(&mut self, key: &str, values: &[(u16, String)]) -> Result<()> {
        let k = self.ycsb_key(key)?;
        let table = self
            .ycsb
            .as_ref()
            .context("the YCSB table is not in use yet")?;
        let bins: Vec<Bin> = values
            .iter()
            .map(|(f, v)| {
                Bin::new(
                    table.fields[usize::from(*f)].as_str(),
                    Value::from(v.as_str()),
                )
            })
            .collect();
        self.client.put(&self.write, &k, &bins).await?;
        Ok(())
    }

    async fn ycsb_scan(
        &mut self,
        _start: &str,
        _count: u32,
        _field: Option<u16>,
    ) -> Result<Vec<(String, YcsbFields)>> {
        Err(anyhow!(
            "SCAN is not applicable to aerospike: its keys are hashed, with no key order"
        ))
    }
}
