//! A record as the Redis store keeps it: every field encoded with bincode 2, `created_at` as
//! Unix milliseconds.

use anyhow::{Context, Result, bail};
use bincode::{Decode, Encode};
use chrono::{TimeZone, Utc};

use crate::workload::record::{Data, Record};

/// The value stored under a record's key: every field, `created_at` as Unix milliseconds.
#[derive(Debug, PartialEq, Eq, Encode, Decode)]
struct Value {
    id: i64,
    unique_id: String,
    created_by: i64,
    updated_by: i64,
    deleted_by: i64,
    created_at_ms: i64,
    name: String,
    age: i64,
}

/// [`Value`] borrowing the record's strings, for writing: the same bytes, no copies.
#[derive(Encode)]
struct ValueRef<'a> {
    id: i64,
    unique_id: &'a str,
    created_by: i64,
    updated_by: i64,
    deleted_by: i64,
    created_at_ms: i64,
    name: &'a str,
    age: i64,
}

/// The bytes stored under a record's key.
pub(super) fn encode(r: &Record) -> Result<Vec<u8>> {
    let value = ValueRef {
        id: r.id,
        unique_id: &r.unique_id,
        created_by: r.created_by,
        updated_by: r.updated_by,
        deleted_by: r.deleted_by,
        created_at_ms: r.created_at.timestamp_millis(),
        name: &r.data.name,
        age: r.data.age,
    };
    Ok(bincode::encode_to_vec(&value, bincode::config::standard())?)
}

/// The record stored as `bytes`.
pub(super) fn decode(bytes: &[u8]) -> Result<Record> {
    let (v, read): (Value, usize) = bincode::decode_from_slice(bytes, bincode::config::standard())?;
    if read != bytes.len() {
        bail!("{} trailing bytes after the record", bytes.len() - read);
    }
    Ok(Record {
        id: v.id,
        unique_id: v.unique_id,
        created_by: v.created_by,
        updated_by: v.updated_by,
        deleted_by: v.deleted_by,
        created_at: Utc
            .timestamp_millis_opt(v.created_at_ms)
            .single()
            .context("created_at out of range")?,
        data: Data {
            name: v.name,
            age: v.age,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::record::generate;

    #[test]
    fn values_round_trip_every_field() {
        for r in generate(9, &"micro".parse().unwrap(), 1) {
            let bytes = encode(&r).unwrap();
            assert_eq!(decode(&bytes).unwrap(), r);
            // What is written borrowed is what an owned value encodes to.
            let owned = Value {
                id: r.id,
                unique_id: r.unique_id.clone(),
                created_by: r.created_by,
                updated_by: r.updated_by,
                deleted_by: r.deleted_by,
                created_at_ms: r.created_at.timestamp_millis(),
                name: r.data.name.clone(),
                age: r.data.age,
            };
            let config = bincode::config::standard();
            assert_eq!(bincode::encode_to_vec(&owned, config).unwrap(), bytes);
        }
    }

    #[test]
    fn truncated_values_are_errors() {
        let r = &generate(9, &"micro".parse().unwrap(), 1)[0];
        let bytes = encode(r).unwrap();
        assert!(decode(&bytes[..bytes.len() - 3]).is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
    }
}
