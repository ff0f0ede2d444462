//! MySQL's YCSB suite: YCSB's JDBC table in InnoDB, its key compared byte by byte
//! (`utf8mb4_bin`, so that scans run in the same key order on every store), every statement
//! prepared.

use anyhow::{Context, Result};
use mysql_async::prelude::Queryable;
use mysql_async::{Params, Row, Value};

use super::client::MysqlAsync;
use super::{MysqlStore, STATEMENT_CACHE};
use crate::store::sql::{Placeholders, Prepared, YcsbStatements};
use crate::store::{YcsbFields, YcsbStore, YcsbTable, ycsb_fields};
use crate::workload::ycsb::OpKind;

impl MysqlStore<MysqlAsync> {
    async fn prepare_ycsb(&mut self, table: &YcsbTable) -> Result<()> {
        let text = YcsbStatements::new(table, Placeholders::Question);
        // Every statement, and an update of each field and of all of them.
        let needed = text.to_prepare().len() + text.fields.len() + 1;
        anyhow::ensure!(
            needed <= STATEMENT_CACHE,
            "{} fields need {needed} prepared statements on a connection; the driver keeps \
             {STATEMENT_CACHE} (fewer fields: -p fieldcount=...)",
            text.fields.len()
        );
        let mut prepared = Vec::new();
        for sql in text.to_prepare() {
            prepared.push(self.conn.conn.prep(sql).await?);
        }
        self.conn.ycsb = Some(Prepared::new(text, prepared));
        Ok(())
    }
}

/// A row's fields from column `first` on: every one, or the one asked for.
fn fields_of(row: &Row, first: usize, count: usize, field: Option<u16>) -> Result<YcsbFields> {
    ycsb_fields(count, field, |position, _| -> Result<String> {
        let i = first + position;
        row.get_opt::<String, _>(i)
            .context("a missing column")?
            .map_err(|e| anyhow::anyhow!("column {i}: {e}"))
    })
}

impl YcsbStore for MysqlStore<MysqlAsync> {
    fn ycsb_operation(&self, op: OpKind) -> Option<&'static str> {
        Some(match op {
            OpKind::Read => "SELECT the fields WHERE ycsb_key = ? (prepared)",
            OpKind::Update => "UPDATE ... SET field = ? WHERE ycsb_key = ? (prepared)",
            OpKind::Insert => "INSERT of the key and every field (prepared)",
            OpKind::Scan => "SELECT ... WHERE ycsb_key >= ? ORDER BY ycsb_key LIMIT ? (prepared)",
            OpKind::ReadModifyWrite => "the read, then the update (two statements, as YCSB)",
        })
    }

    async fn ycsb_reset(&mut self, table: &YcsbTable) -> Result<()> {
        let text = YcsbStatements::new(table, Placeholders::Question);
        let t = &table.name;
        self.conn
            .conn
            .query_drop(format!("DROP TABLE IF EXISTS {t}"))
            .await
            .context("dropping the YCSB table")?;
        self.conn
            .conn
            .query_drop(format!(
                "CREATE TABLE {t} ({}) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 \
                 COLLATE=utf8mb4_bin",
                text.columns("VARCHAR(255)", "TEXT")
            ))
            .await
            .context(
                "creating the YCSB table (the user needs every privilege on the URL's \
                 database: GRANT ALL ON <database>.* TO <user>)",
            )?;
        self.prepare_ycsb(table).await
    }

    async fn ycsb_use(&mut self, table: &YcsbTable) -> Result<()> {
        self.prepare_ycsb(table).await
    }

    async fn ycsb_insert(&mut self, key: &str, values: &[String]) -> Result<()> {
        let p = self
            .conn
            .ycsb
            .as_ref()
            .context("the YCSB table is not in use yet")?;
        let mut params = Vec::with_capacity(values.len() + 1);
        params.push(Value::from(key));
        params.extend(values.iter().map(|v| Value::from(v.as_str())));
        super::rows::exec_drop(&mut self.conn.conn, &p.insert, Params::Positional(params)).await
    }

    async fn ycsb_read(&mut self, key: &str, field: Option<u16>) -> Result<Option<YcsbFields>> {
        let p = self
            .conn
            .ycsb
            .as_ref()
            .context("the YCSB table is not in use yet")?;
        let row: Option<Row> =
            super::rows::exec_first(&mut self.conn.conn, p.read(field), (key,)).await?;
        row.map(|r| fields_of(&r, 0, p.text.fields.len(), field))
            .transpose()
    }

    async fn ycsb_update(&mut self, key: &str, values: &[(u16, String)]) -> Result<()> {
        let fields: Vec<u16> = values.iter().map(|(f, _)| *f).collect();
        let p = self
            .conn
            .ycsb
            .as_mut()
            .context("the YCSB table is not in use yet")?;
        let statement = match p.update(&fields) {
            Some(prepared) => prepared,
            None => {
                let prepared = self.conn.conn.prep(p.text.update(&fields)).await?;
                p.add_update(fields, prepared)
            }
        };
        let mut params: Vec<Value> = values
            .iter()
            .map(|(_, v)| Value::from(v.as_str()))
            .collect();
        params.push(Value::from(key));
        super::rows::exec_drop(&mut self.conn.conn, statement, Params::Positional(params)).await?;
        // Rows changed: every update writes a value the record did not hold (a new version).
        anyhow::ensure!(
            self.conn.conn.affected_rows() == 1,
            "no record {key} to update"
        );
        Ok(())
    }

    async fn ycsb_scan(
        &mut self,
        start: &str,
        count: u32,
        field: Option<u16>,
    ) -> Result<Vec<(String, YcsbFields)>> {
        let p = self
            .conn
            .ycsb
            .as_ref()
            .context("the YCSB table is not in use yet")?;
        let fields = p.text.fields.len();
        // Sized for a scan of up to 1,024 records; a longer one grows as it arrives.
        let expected = count.min(1024) as usize;
        super::rows::exec_map(
            &mut self.conn.conn,
            p.scan(field),
            (start, count),
            expected,
            |r| {
                let key: String = r
                    .get_opt(0)
                    .context("a missing key")?
                    .map_err(|e| anyhow::anyhow!("the key: {e}"))?;
                Ok((key, fields_of(&r, 1, fields, field)?))
            },
        )
        .await
    }
}
