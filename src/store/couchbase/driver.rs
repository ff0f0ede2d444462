//! Couchbase's driver suite: the nearest native operations (exists and KV gets of fixed
//! documents, through the string and binary transcoders and as raw content).

use anyhow::{Result, bail};
use couchbase::options::kv_options::UpsertOptions;

use super::{CouchbaseStore, bounded, durability_level};
use crate::store::DriverStore;
use crate::workload::driver::{DriverOp, check_large, large_string};

/// The driver suite's fixed documents: `{"v": 1}`, a 10 kB string and 10 kB of binary.
const DRIVER_ONE: &str = "dbcompare:driver:one";
const DRIVER_STRING: &str = "dbcompare:driver:string";
const DRIVER_BINARY: &str = "dbcompare:driver:binary";

impl DriverStore for CouchbaseStore {
    fn driver_operation(&self, op: DriverOp) -> Option<&'static str> {
        use DriverOp::*;
        Some(match op {
            SimpleExec | PreparedExec => {
                "exists of a fixed key: a KV round trip with no body (no statements in KV)"
            }
            SimpleQueryRow | PreparedQueryRow => "KV get of a fixed JSON document {\"v\": 1}",
            SelectLargeString | SelectPreparedLargeString => {
                "KV get of a 10 kB string document, through the raw-string transcoder"
            }
            SelectLargeBytes | SelectPreparedLargeBytes => {
                "KV get of a 10 kB binary document, through the raw-binary transcoder"
            }
            SelectLargeRaw | SelectPreparedLargeRaw => {
                "KV get of the 10 kB string document, content as raw bytes (no transcoder)"
            }
            _ => return None,
        })
    }

    async fn driver(&mut self, op: DriverOp, _i: u64) -> Result<()> {
        use DriverOp::*;
        use couchbase::transcoding::{raw_binary, raw_string};
        if !self.driver_docs {
            // Every connection of a concurrent test writes them once: upserts are idempotent.
            let options =
                || UpsertOptions::new().durability_level(durability_level(self.durability));
            let one = serde_json::json!({ "v": 1 });
            bounded(
                "upsert",
                self.collection.upsert(DRIVER_ONE, &one, options()),
            )
            .await?;
            let text = large_string();
            let (content, flags) = raw_string::encode(&text)?;
            let upsert = self
                .collection
                .upsert_raw(DRIVER_STRING, content, flags, options());
            bounded("upsert", upsert).await?;
            let (content, flags) = raw_binary::encode(text.as_bytes())?;
            let upsert = self
                .collection
                .upsert_raw(DRIVER_BINARY, content, flags, options());
            bounded("upsert", upsert).await?;
            self.driver_docs = true;
        }
        let c = &self.collection;
        match op {
            SimpleExec | PreparedExec => {
                if !bounded("exists", c.exists(DRIVER_ONE, None))
                    .await?
                    .exists()
                {
                    bail!("the fixed document is missing");
                }
            }
            SimpleQueryRow | PreparedQueryRow => {
                let found = bounded("get", c.get(DRIVER_ONE, None)).await?;
                let doc: serde_json::Value = found.content_as()?;
                if doc["v"] != 1 {
                    bail!("the fixed document is {doc}");
                }
            }
            SelectLargeString | SelectPreparedLargeString => {
                let found = bounded("get", c.get(DRIVER_STRING, None)).await?;
                let (content, flags) = found.content_as_raw();
                check_large(raw_string::decode(content, flags)?.as_bytes())?;
            }
            SelectLargeBytes | SelectPreparedLargeBytes => {
                let found = bounded("get", c.get(DRIVER_BINARY, None)).await?;
                let (content, flags) = found.content_as_raw();
                check_large(raw_binary::decode(content, flags)?)?;
            }
            SelectLargeRaw | SelectPreparedLargeRaw => {
                let found = bounded("get", c.get(DRIVER_STRING, None)).await?;
                check_large(found.content_as_raw().0)?;
            }
            other => bail!("{} is not applicable to couchbase", other.name()),
        }
        Ok(())
    }
}
