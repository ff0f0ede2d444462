//! The Redis store's keys: the benchmark's prefix, the classic suite's keys of one
//! operation, and the YCSB table's.

use crate::store::YcsbTable;

/// Every key of the benchmark starts with this.
pub(super) const PREFIX: &str = "dbcompare:";

/// The classic suite's keys of one operation, written into buffers kept from one
/// operation to the next (the client's own allocations are in every figure).
#[derive(Debug, Default)]
pub(super) struct KeyBuffers {
    pub(super) record: String,
    pub(super) names: String,
    pub(super) ages: String,
}

/// The YCSB table's keys: records under `dbcompare:ycsb:<table>:<key>`, the scan index at
/// `dbcompare:ycsbindex:<table>`.
pub(super) struct YcsbKeys {
    pub(super) record: String,
    pub(super) index: String,
    pub(super) fields: Vec<String>,
}

impl YcsbKeys {
    pub(super) fn new(table: &YcsbTable) -> Self {
        YcsbKeys {
            record: format!("dbcompare:ycsb:{}:", table.name),
            index: format!("dbcompare:ycsbindex:{}", table.name),
            fields: table.fields.clone(),
        }
    }

    pub(super) fn record(&self, key: &str) -> String {
        format!("{}{key}", self.record)
    }

    /// The fields to ask for: every one, or one.
    pub(super) fn asked(&self, field: Option<u16>) -> Vec<&str> {
        match field {
            Some(f) => vec![self.fields[usize::from(f)].as_str()],
            None => self.fields.iter().map(String::as_str).collect(),
        }
    }
}
