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
            redis::pipe()
                .set(DRIVER_ONE, "1")
                .ignore()
                .set(DRIVER_LARGE, large_string())
                .ignore()
                .query_async::<()>(&mut self.conn)
                .await?;
            self.driver_keys = true;
        }
        let c = &mut self.conn;
        match op {
            SimpleExec | PreparedExec => {
                let pong: String = redis::cmd("PING").query_async(c).await?;
                if pong != "PONG" {
                    bail!("PING gave {pong}");
                }
            }
            SimpleQueryRow | PreparedQueryRow => {
                let v: Option<String> = redis::cmd("GET").arg(DRIVER_ONE).query_async(c).await?;
                if v.as_deref() != Some("1") {
                    bail!("GET gave {v:?}");
                }
            }
            PreparedQueryRowParam => {
                let v: u64 = redis::cmd("ECHO").arg(i).query_async(c).await?;
                if v != i {
                    bail!("ECHO {i} gave {v}");
                }
            }
            SelectLargeString | SelectPreparedLargeString => {
                let v: String = redis::cmd("GET").arg(DRIVER_LARGE).query_async(c).await?;
                check_large(v.as_bytes())?;
            }
            SelectLargeBytes | SelectPreparedLargeBytes => {
                let v: Vec<u8> = redis::cmd("GET").arg(DRIVER_LARGE).query_async(c).await?;
                check_large(&v)?;
            }
            EchoMixed5 | SelectLargeRaw | SelectPreparedLargeRaw => {
                bail!("{} is not applicable to redis", op.name())
            }
        }
        Ok(())
    }
}
