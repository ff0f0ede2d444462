//! Aerospike's driver suite: the nearest native operations (exists and gets of fixed
//! records in the benchmark's set).

use aerospike::{Bin, Bins, Value};
use anyhow::{Context, Result, bail};

use super::AerospikeStore;
use crate::store::DriverStore;
use crate::workload::driver::{DriverOp, check_large, large_string};

/// The driver suite's fixed records (in the benchmark's set): a small one and a 10 kB one.
const DRIVER_ONE: &str = "dbcompare:driver:one";
const DRIVER_LARGE: &str = "dbcompare:driver:large";

impl DriverStore for AerospikeStore {
    fn driver_operation(&self, op: DriverOp) -> Option<&'static str> {
        use DriverOp::*;
        Some(match op {
            SimpleExec | PreparedExec => {
                "exists() of a fixed key: a round trip with no bins (no statements in Aerospike)"
            }
            SimpleQueryRow | PreparedQueryRow => "get of a fixed key holding the bin v = 1",
            SelectLargeString | SelectPreparedLargeString => {
                "get of a fixed key holding a 10 kB string bin"
            }
            SelectLargeBytes | SelectPreparedLargeBytes => {
                "get of a fixed key holding a 10 kB blob bin"
            }
            _ => return None,
        })
    }

    async fn driver(&mut self, op: DriverOp, _i: u64) -> Result<()> {
        use DriverOp::*;
        let one = self.key(DRIVER_ONE)?;
        let large = self.key(DRIVER_LARGE)?;
        if !self.driver_records {
            // Every connection of a concurrent test writes them once: puts are idempotent.
            self.client
                .put(&self.write, &one, &[Bin::new("v", Value::Int(1))])
                .await
                .context("writing the driver suite's records")?;
            let bins = [
                Bin::new("s", Value::String(large_string())),
                Bin::new("b", Value::Blob(large_string().into_bytes())),
            ];
            self.client
                .put(&self.write, &large, &bins)
                .await
                .context("writing the driver suite's records")?;
            self.driver_records = true;
        }
        match op {
            SimpleExec | PreparedExec => {
                if !self.client.exists(&self.read, &one).await? {
                    bail!("the fixed record is missing");
                }
            }
            SimpleQueryRow | PreparedQueryRow => {
                let found = self.client.get(&self.read, &one, Bins::All).await?;
                if found.bins.get("v") != Some(&Value::Int(1)) {
                    bail!("the fixed record holds {:?}", found.bins);
                }
            }
            SelectLargeString | SelectPreparedLargeString => {
                let found = self.client.get(&self.read, &large, ["s"]).await?;
                match found.bins.get("s") {
                    Some(Value::String(s)) => check_large(s.as_bytes())?,
                    other => bail!("bin s holds {other:?}"),
                }
            }
            SelectLargeBytes | SelectPreparedLargeBytes => {
                let found = self.client.get(&self.read, &large, ["b"]).await?;
                match found.bins.get("b") {
                    Some(Value::Blob(b)) => check_large(b)?,
                    other => bail!("bin b holds {other:?}"),
                }
            }
            other => bail!("{} is not applicable to aerospike", other.name()),
        }
        Ok(())
    }
}
