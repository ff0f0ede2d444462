//! MySQL's driver suite: the seed's SQL (`DO 1` for the Exec tests) over the text and the
//! binary (prepared) protocol.

use anyhow::{Context, Result, bail};
use mysql_async::prelude::Queryable;
use mysql_async::{Row, Statement, Value};

use super::MysqlStore;
use crate::store::DriverStore;
use crate::workload::driver::{DriverOp, check_large};

/// The driver suite's statements, prepared on first use.
pub(super) struct DriverStatements {
    exec: Statement,
    one: Statement,
    param: Statement,
    echo: Statement,
    large_text: Statement,
    large_bytes: Statement,
}

const LARGE_TEXT: &str = "SELECT REPEAT('A', 10000)";
const LARGE_BYTES: &str = "SELECT CAST(REPEAT('A', 10000) AS BINARY)";

impl DriverStore for MysqlStore {
    fn driver_operation(&self, op: DriverOp) -> Option<&'static str> {
        use DriverOp::*;
        Some(match op {
            SimpleExec => "DO 1, text protocol",
            PreparedExec => "DO 1, prepared (binary protocol)",
            SimpleQueryRow => "SELECT 1, text protocol",
            PreparedQueryRow => "SELECT 1, prepared",
            PreparedQueryRowParam => "SELECT ?, prepared",
            EchoMixed5 => "SELECT ?, ?, ?, ?, ?: text, integer, NULL, double, bytes",
            SelectLargeString => "REPEAT('A', 10000), text protocol",
            SelectPreparedLargeString => "REPEAT('A', 10000), prepared",
            SelectLargeBytes => "10,000 binary bytes copied out, text protocol",
            SelectPreparedLargeBytes => "10,000 binary bytes copied out, prepared",
            SelectLargeRaw => "10,000 binary bytes borrowed from the row, text protocol",
            SelectPreparedLargeRaw => "10,000 binary bytes borrowed from the row, prepared",
        })
    }

    async fn driver(&mut self, op: DriverOp, i: u64) -> Result<()> {
        use DriverOp::*;
        if self.driver.is_none() {
            let c = &mut self.conn;
            self.driver = Some(DriverStatements {
                exec: c.prep("DO 1").await?,
                one: c.prep("SELECT 1").await?,
                param: c.prep("SELECT ?").await?,
                echo: c.prep("SELECT ?, ?, ?, ?, ?").await?,
                large_text: c.prep(LARGE_TEXT).await?,
                large_bytes: c.prep(LARGE_BYTES).await?,
            });
        }
        let (c, st) = (
            &mut self.conn,
            self.driver.as_ref().expect("prepared above"),
        );
        let one = |n: Option<i64>| {
            if n == Some(1) {
                Ok(())
            } else {
                Err(anyhow::anyhow!("SELECT 1 gave {n:?}"))
            }
        };
        match op {
            SimpleExec => c.query_drop("DO 1").await?,
            PreparedExec => c.exec_drop(&st.exec, ()).await?,
            SimpleQueryRow => one(c.query_first("SELECT 1").await?)?,
            PreparedQueryRow => one(c.exec_first(&st.one, ()).await?)?,
            PreparedQueryRowParam => {
                let n: Option<i64> = c.exec_first(&st.param, (i as i64,)).await?;
                if n != Some(i as i64) {
                    bail!("SELECT {i} gave {n:?}");
                }
            }
            EchoMixed5 => {
                let row: Option<Row> = c
                    .exec_first(
                        &st.echo,
                        ("abc", i as i64, None::<String>, 1.024f64, &b"xyz"[..]),
                    )
                    .await?;
                let row = row.context("no row")?;
                type Echo = (String, i64, Option<String>, f64, Vec<u8>);
                let echoed: Echo = mysql_async::from_row_opt(row)
                    .map_err(|e| anyhow::anyhow!("decoding the echo: {e}"))?;
                if echoed != ("abc".to_string(), i as i64, None, 1.024, b"xyz".to_vec()) {
                    bail!("echo gave {echoed:?}");
                }
            }
            SelectLargeString => {
                let s: Option<String> = c.query_first(LARGE_TEXT).await?;
                check_large(s.context("no row")?.as_bytes())?;
            }
            SelectPreparedLargeString => {
                let s: Option<String> = c.exec_first(&st.large_text, ()).await?;
                check_large(s.context("no row")?.as_bytes())?;
            }
            SelectLargeBytes => {
                let b: Option<Vec<u8>> = c.query_first(LARGE_BYTES).await?;
                check_large(&b.context("no row")?)?;
            }
            SelectPreparedLargeBytes => {
                let b: Option<Vec<u8>> = c.exec_first(&st.large_bytes, ()).await?;
                check_large(&b.context("no row")?)?;
            }
            SelectLargeRaw | SelectPreparedLargeRaw => {
                let row: Option<Row> = if op == SelectLargeRaw {
                    c.query_first(LARGE_BYTES).await?
                } else {
                    c.exec_first(&st.large_bytes, ()).await?
                };
                match row.context("no row")?.as_ref(0) {
                    Some(Value::Bytes(b)) => check_large(b)?,
                    other => bail!("expected bytes, got {other:?}"),
                }
            }
        }
        Ok(())
    }
}
