//! PostgreSQL's driver suite: the seed's SQL over the simple and the extended protocol.

use anyhow::{Result, bail};

use super::PostgresStore;
use super::client::{DriverStatements, TokioPostgres};
use crate::store::DriverStore;
use crate::workload::driver::{DriverOp, check_large};

const LARGE_TEXT: &str = "SELECT repeat('A', 10000)";
const LARGE_BYTES: &str = "SELECT convert_to(repeat('A', 10000), 'UTF8')";

impl DriverStore for PostgresStore<TokioPostgres> {
    fn driver_operation(&self, op: DriverOp) -> Option<&'static str> {
        use DriverOp::*;
        Some(match op {
            SimpleExec => "SELECT 1, simple query protocol, result discarded",
            PreparedExec => "SELECT 1, prepared, execute (row count only)",
            SimpleQueryRow => "SELECT 1, simple query protocol (text)",
            PreparedQueryRow => "SELECT 1, prepared",
            PreparedQueryRowParam => "SELECT $1::int8, prepared",
            EchoMixed5 => "SELECT $1::text, $2::int8, $3::text, $4::float8, $5::bytea (NULL third)",
            SelectLargeString => "repeat('A', 10000), unnamed statement per query",
            SelectPreparedLargeString => "repeat('A', 10000), prepared",
            SelectLargeBytes => "10,000-byte bytea copied out, unnamed statement per query",
            SelectPreparedLargeBytes => "10,000-byte bytea copied out, prepared",
            SelectLargeRaw => {
                "10,000-byte bytea borrowed from the row, unnamed statement per query"
            }
            SelectPreparedLargeRaw => "10,000-byte bytea borrowed from the row, prepared",
        })
    }

    async fn driver(&mut self, op: DriverOp, i: u64) -> Result<()> {
        use DriverOp::*;
        if self.conn.driver.is_none() {
            let c = &self.conn.client;
            self.conn.driver = Some(DriverStatements {
                exec: c.prepare("SELECT 1").await?,
                one: c.prepare("SELECT 1").await?,
                param: c.prepare("SELECT $1::int8").await?,
                echo: c
                    .prepare("SELECT $1::text, $2::int8, $3::text, $4::float8, $5::bytea")
                    .await?,
                large_text: c.prepare(LARGE_TEXT).await?,
                large_bytes: c.prepare(LARGE_BYTES).await?,
            });
        }
        let (c, st) = (
            &self.conn.client,
            self.conn.driver.as_ref().expect("prepared above"),
        );
        let one = |n: i32| {
            if n == 1 {
                Ok(())
            } else {
                Err(anyhow::anyhow!("SELECT 1 gave {n}"))
            }
        };
        match op {
            SimpleExec => c.batch_execute("SELECT 1").await?,
            PreparedExec => {
                c.execute(&st.exec, &[]).await?;
            }
            SimpleQueryRow => {
                let messages = c.simple_query("SELECT 1").await?;
                let value = messages.iter().find_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0),
                    _ => None,
                });
                if value != Some("1") {
                    bail!("SELECT 1 gave {value:?}");
                }
            }
            PreparedQueryRow => one(c.query_one(&st.one, &[]).await?.try_get(0)?)?,
            PreparedQueryRowParam => {
                let n: i64 = c.query_one(&st.param, &[&(i as i64)]).await?.try_get(0)?;
                if n != i as i64 {
                    bail!("SELECT {i} gave {n}");
                }
            }
            EchoMixed5 => {
                let row = c
                    .query_one(
                        &st.echo,
                        &[
                            &"abc",
                            &(i as i64),
                            &None::<String>,
                            &1.024f64,
                            &&b"xyz"[..],
                        ],
                    )
                    .await?;
                // Read borrowed from the row: the text and the bytes are not copied out.
                let echoed: (&str, i64, Option<&str>, f64, &[u8]) = (
                    row.try_get(0)?,
                    row.try_get(1)?,
                    row.try_get(2)?,
                    row.try_get(3)?,
                    row.try_get(4)?,
                );
                if echoed != ("abc", i as i64, None, 1.024, &b"xyz"[..]) {
                    bail!("echo gave {echoed:?}");
                }
            }
            SelectLargeString => {
                let s: String = c.query_one(LARGE_TEXT, &[]).await?.try_get(0)?;
                check_large(s.as_bytes())?;
            }
            SelectPreparedLargeString => {
                let s: String = c.query_one(&st.large_text, &[]).await?.try_get(0)?;
                check_large(s.as_bytes())?;
            }
            SelectLargeBytes => {
                let b: Vec<u8> = c.query_one(LARGE_BYTES, &[]).await?.try_get(0)?;
                check_large(&b)?;
            }
            SelectPreparedLargeBytes => {
                let b: Vec<u8> = c.query_one(&st.large_bytes, &[]).await?.try_get(0)?;
                check_large(&b)?;
            }
            SelectLargeRaw => {
                let row = c.query_one(LARGE_BYTES, &[]).await?;
                check_large(row.try_get::<_, &[u8]>(0)?)?;
            }
            SelectPreparedLargeRaw => {
                let row = c.query_one(&st.large_bytes, &[]).await?;
                check_large(row.try_get::<_, &[u8]>(0)?)?;
            }
        }
        Ok(())
    }
}
