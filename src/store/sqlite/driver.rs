//! SQLite's driver suite: the seed's SQL on the embedded engine, each operation prepared
//! every time or through rusqlite's statement cache.

use anyhow::{Result, bail};

use super::SqliteStore;
use crate::store::DriverStore;
use crate::workload::driver::{DriverOp, check_large};

impl DriverStore for SqliteStore {
    fn driver_operation(&self, op: DriverOp) -> Option<&'static str> {
        use DriverOp::*;
        Some(match op {
            SimpleExec => "SELECT 1 WHERE 0 (prepared each time)",
            PreparedExec => "SELECT 1 WHERE 0 (cached statement)",
            SimpleQueryRow => "SELECT 1 (prepared each time)",
            PreparedQueryRow => "SELECT 1 (cached statement)",
            PreparedQueryRowParam => "SELECT ?1 (cached statement)",
            EchoMixed5 => "SELECT ?1, ?2, ?3, ?4, ?5: text, integer, NULL, real, blob",
            SelectLargeString => "10,000-character text, prepared each time",
            SelectPreparedLargeString => "10,000-character text, cached statement",
            SelectLargeBytes => "10,000-byte blob copied out, prepared each time",
            SelectPreparedLargeBytes => "10,000-byte blob copied out, cached statement",
            SelectLargeRaw => "10,000-byte blob borrowed, prepared each time",
            SelectPreparedLargeRaw => "10,000-byte blob borrowed, cached statement",
        })
    }

    async fn driver(&mut self, op: DriverOp, i: u64) -> Result<()> {
        use DriverOp::*;
        const EXEC: &str = "SELECT 1 WHERE 0";
        const LARGE_TEXT: &str = "SELECT replace(hex(zeroblob(5000)), '0', 'A')";
        const LARGE_BLOB: &str = "SELECT CAST(replace(hex(zeroblob(5000)), '0', 'A') AS BLOB)";
        let c = &self.conn;
        let one = |n: i64| {
            if n == 1 {
                Ok(())
            } else {
                Err(anyhow::anyhow!("SELECT 1 gave {n}"))
            }
        };
        match op {
            SimpleExec => {
                c.execute(EXEC, [])?;
            }
            PreparedExec => {
                c.prepare_cached(EXEC)?.execute([])?;
            }
            SimpleQueryRow => one(c.query_row("SELECT 1", [], |r| r.get(0))?)?,
            PreparedQueryRow => one(c.prepare_cached("SELECT 1")?.query_row([], |r| r.get(0))?)?,
            PreparedQueryRowParam => {
                let n: i64 = c
                    .prepare_cached("SELECT ?1")?
                    .query_row([i as i64], |r| r.get(0))?;
                if n != i as i64 {
                    bail!("SELECT {i} gave {n}");
                }
            }
            EchoMixed5 => {
                // Checked in the row, borrowed: the text and the blob are not copied out.
                let wrong: Option<String> =
                    c.prepare_cached("SELECT ?1, ?2, ?3, ?4, ?5")?.query_row(
                        rusqlite::params!["abc", i as i64, None::<String>, 1.024f64, &b"xyz"[..]],
                        |r| {
                            let echoed = (
                                r.get_ref(0)?.as_str()?,
                                r.get::<_, i64>(1)?,
                                r.get_ref(2)?.as_str_or_null()?,
                                r.get::<_, f64>(3)?,
                                r.get_ref(4)?.as_blob()?,
                            );
                            let right = ("abc", i as i64, None, 1.024, &b"xyz"[..]);
                            Ok((echoed != right).then(|| format!("{echoed:?}")))
                        },
                    )?;
                if let Some(echoed) = wrong {
                    bail!("echo gave {echoed}");
                }
            }
            SelectLargeString => {
                let s: String = c.query_row(LARGE_TEXT, [], |r| r.get(0))?;
                check_large(s.as_bytes())?;
            }
            SelectPreparedLargeString => {
                let s: String = c.prepare_cached(LARGE_TEXT)?.query_row([], |r| r.get(0))?;
                check_large(s.as_bytes())?;
            }
            SelectLargeBytes => {
                let b: Vec<u8> = c.query_row(LARGE_BLOB, [], |r| r.get(0))?;
                check_large(&b)?;
            }
            SelectPreparedLargeBytes => {
                let b: Vec<u8> = c.prepare_cached(LARGE_BLOB)?.query_row([], |r| r.get(0))?;
                check_large(&b)?;
            }
            SelectLargeRaw => {
                let mut stmt = c.prepare(LARGE_BLOB)?;
                stmt.query_row([], |r| Ok(check_large(r.get_ref(0)?.as_blob()?)))??;
            }
            SelectPreparedLargeRaw => {
                let mut stmt = c.prepare_cached(LARGE_BLOB)?;
                stmt.query_row([], |r| Ok(check_large(r.get_ref(0)?.as_blob()?)))??;
            }
        }
        Ok(())
    }
}
