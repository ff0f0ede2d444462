//! MySQL's driver suite: the seed's SQL (`DO 1` for the Exec tests) over the text and the
//! binary (prepared) protocol.

use anyhow::{Context, Result, bail};
use mysql_async::prelude::Queryable;
use mysql_async::{Row, Value};

use super::client::MysqlAsync;
use super::driver_statements::DriverStatements;
use super::{MysqlStore, rows};
use crate::store::DriverStore;
use crate::workload::driver::{DriverOp, check_large};

const LARGE_TEXT: &str = "SELECT REPEAT('A', 10000)";
const LARGE_BYTES: &str = "SELECT CAST(REPEAT('A', 10000) AS BINARY)";

impl DriverStore for MysqlStore<MysqlAsync> {
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
        if self.conn.driver.is_none() {
            let c = &mut self.conn.conn;
            self.conn.driver = Some(DriverStatements {
                exec: c.prep("DO 1").await?,
                one: c.prep("SELECT 1").await?,
                param: c.prep("SELECT ?").await?,
                echo: c.prep("SELECT ?, ?, ?, ?, ?").await?,
                large_text: c.prep(LARGE_TEXT).await?,
                large_bytes: c.prep(LARGE_BYTES).await?,
            });
        }
        let (c, st) = (
            &mut self.conn.conn,
            self.conn.driver.as_ref().expect("prepared above"),
        );
        let one = |n: Option<i64>| {
            if n == Some(1) {
                Ok(())
            } else {
                Err(anyhow::anyhow!("SELECT 1 gave {n:?}"))
            }
        };
        match op {
            SimpleExec => rows::query_drop(c, "DO 1").await?,
            PreparedExec => rows::exec_drop(c, &st.exec, ()).await?,
            SimpleQueryRow => one(rows::query_first(c, "SELECT 1").await?)?,
            PreparedQueryRow => one(rows::exec_first(c, &st.one, ()).await?)?,
            PreparedQueryRowParam => {
                let n: Option<i64> = rows::exec_first(c, &st.param, (i as i64,)).await?;
                if n != Some(i as i64) {
                    bail!("SELECT {i} gave {n:?}");
                }
            }
            EchoMixed5 => {
                let row: Option<Row> = rows::exec_first(
                    c,
                    &st.echo,
                    ("abc", i as i64, None::<String>, 1.024f64, &b"xyz"[..]),
                )
                .await?;
                let row = row.context("no row")?;
                // The text and the bytes checked where the driver decoded them, without
                // copying them out; the numbers converted as `from_row` would (a server
                // may send them as another type).
                let number = |k: usize| row.get_opt::<i64, _>(k).and_then(Result::ok);
                let real = |k: usize| row.get_opt::<f64, _>(k).and_then(Result::ok);
                let echoed = row.len() == 5
                    && matches!(row.as_ref(0), Some(Value::Bytes(b)) if b == b"abc")
                    && number(1) == Some(i as i64)
                    && matches!(row.as_ref(2), Some(Value::NULL))
                    && real(3) == Some(1.024)
                    && matches!(row.as_ref(4), Some(Value::Bytes(b)) if b == b"xyz");
                if !echoed {
                    bail!("echo gave {row:?}");
                }
            }
            SelectLargeString => {
                let s: Option<String> = rows::query_first(c, LARGE_TEXT).await?;
                check_large(s.context("no row")?.as_bytes())?;
            }
            SelectPreparedLargeString => {
                let s: Option<String> = rows::exec_first(c, &st.large_text, ()).await?;
                check_large(s.context("no row")?.as_bytes())?;
            }
            SelectLargeBytes => {
                let b: Option<Vec<u8>> = rows::query_first(c, LARGE_BYTES).await?;
                check_large(&b.context("no row")?)?;
            }
            SelectPreparedLargeBytes => {
                let b: Option<Vec<u8>> = rows::exec_first(c, &st.large_bytes, ()).await?;
                check_large(&b.context("no row")?)?;
            }
            SelectLargeRaw | SelectPreparedLargeRaw => {
                let row: Option<Row> = if op == SelectLargeRaw {
                    rows::query_first(c, LARGE_BYTES).await?
                } else {
                    rows::exec_first(c, &st.large_bytes, ()).await?
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
