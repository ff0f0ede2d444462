//! Redis's driver suite: the nearest native commands (PING, GET of fixed keys, ECHO).

use anyhow::{Result, bail};

use super::RedisStore;
use crate::store::DriverStore;
use crate::workload::driver::{DriverOp, check_large, large_string};

/// The driver suite's fixed keys: a small value and a 10 kB one.
const DRIVER_ONE: &str = "dbcompare:driver:one";
const DRIVER_LARGE: &str = "dbcompare:driver:large";

impl DriverStore for RedisStore {
    fn driver_operation(&self, op: DriverOp) -> Option<&'static str> {
        use DriverOp::*;
        Some(match op {
            SimpleExec | PreparedExec if self.cluster.is_some() => {
                "PING to the master of the fixed key's slot (no prepared statements in Redis)"
            }
            SimpleExec | PreparedExec => "PING (no prepared statements in Redis)",
            SimpleQueryRow | PreparedQueryRow => "GET of a fixed key holding \"1\"",
            PreparedQueryRowParam => "ECHO <iteration>",
            SelectLargeString | SelectPreparedLargeString => "GET of a 10 kB value as a String",
            SelectLargeBytes | SelectPreparedLargeBytes => "GET of a 10 kB value as bytes",
            EchoMixed5 | SelectLargeRaw | SelectPreparedLargeRaw => return None,
        })
    }

    async fn driver(&mut self, op: DriverOp, i: u64) -> Result<()> {
        use DriverOp::*;
        if !self.driver_keys {
            // Two commands: in a cluster the keys may be in different slots.
            self.conn
                .query::<()>(redis::cmd("SET").arg(DRIVER_ONE).arg("1"))
                .await?;
            self.conn
                .query::<()>(redis::cmd("SET").arg(DRIVER_LARGE).arg(large_string()))
                .await?;
            self.driver_keys = true;
        }
        // A cluster client sends a keyless PING to every master: this one goes to one.
        let node = self
            .cluster
            .as_ref()
            .and_then(|t| t.node_of(super::cluster::slot(DRIVER_ONE.as_bytes())));
        let c = &mut self.conn;
        match op {
            SimpleExec | PreparedExec => {
                let pong: String = c.on(node, &redis::cmd("PING")).await?;
                if pong != "PONG" {
                    bail!("PING gave {pong}");
                }
            }
            SimpleQueryRow | PreparedQueryRow => {
                let v: Option<String> = c.query(redis::cmd("GET").arg(DRIVER_ONE)).await?;
                if v.as_deref() != Some("1") {
                    bail!("GET gave {v:?}");
                }
            }
            PreparedQueryRowParam => {
                let v: u64 = c.query(redis::cmd("ECHO").arg(i)).await?;
                if v != i {
                    bail!("ECHO {i} gave {v}");
                }
            }
            SelectLargeString | SelectPreparedLargeString => {
                let v: String = c.query(redis::cmd("GET").arg(DRIVER_LARGE)).await?;
                check_large(v.as_bytes())?;
            }
            SelectLargeBytes | SelectPreparedLargeBytes => {
                let v: Vec<u8> = c.query(redis::cmd("GET").arg(DRIVER_LARGE)).await?;
                check_large(&v)?;
            }
            EchoMixed5 | SelectLargeRaw | SelectPreparedLargeRaw => {
                bail!("{} is not applicable to redis", op.name())
            }
        }
        Ok(())
    }
}
