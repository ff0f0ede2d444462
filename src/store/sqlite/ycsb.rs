//! SQLite's YCSB suite: YCSB's JDBC table as a `WITHOUT ROWID` table (the rows stored in key
//! order, as a key-value store keeps them), each statement its own transaction.

use anyhow::{Context, Result};
use rusqlite::{OptionalExtension, params_from_iter};

use super::SqliteStore;
use crate::store::sql::{Placeholders, YcsbStatements};
use crate::store::{YcsbFields, YcsbStore, YcsbTable, ycsb_fields};
use crate::workload::ycsb::OpKind;

impl SqliteStore {
    fn statements(&self) -> Result<&YcsbStatements> {
        self.ycsb
            .as_ref()
            .context("the YCSB table is not created yet (ycsb_reset first)")
    }
}

/// A row's fields: every one, or the one asked for at its index.
fn fields_of(
    row: &rusqlite::Row<'_>,
    first: usize,
    count: usize,
    field: Option<u16>,
) -> rusqlite::Result<YcsbFields> {
    ycsb_fields(count, field, |position, _| row.get(first + position))
}

impl YcsbStore for SqliteStore {
    fn ycsb_operation(&self, op: OpKind) -> Option<&'static str> {
        Some(match op {
            OpKind::Read => "SELECT the fields WHERE ycsb_key = ?1 (cached statement)",
            OpKind::Update => "UPDATE ... SET field = ?1 WHERE ycsb_key = ?2 (its own transaction)",
            OpKind::Insert => "INSERT of the key and every field (its own transaction)",
            OpKind::Scan => "SELECT ... WHERE ycsb_key >= ?1 ORDER BY ycsb_key LIMIT ?2",
            OpKind::ReadModifyWrite => "the read, then the update (two statements, as YCSB)",
        })
    }

    async fn ycsb_reset(&mut self, table: &YcsbTable) -> Result<()> {
        let st = YcsbStatements::new(table, Placeholders::NumberedQuestion);
        self.conn.flush_prepared_statement_cache();
        self.conn
            .execute_batch(&format!(
                "DROP TABLE IF EXISTS {t}; CREATE TABLE {t} ({}) WITHOUT ROWID;",
                st.columns("TEXT", "TEXT"),
                t = table.name
            ))
            .context("creating the YCSB table")?;
        self.ycsb = Some(st);
        Ok(())
    }

    async fn ycsb_use(&mut self, table: &YcsbTable) -> Result<()> {
        self.ycsb = Some(YcsbStatements::new(table, Placeholders::NumberedQuestion));
        Ok(())
    }

    async fn ycsb_insert(&mut self, key: &str, values: &[String]) -> Result<()> {
        let sql = &self.statements()?.insert;
        let params = std::iter::once(key).chain(values.iter().map(String::as_str));
        self.conn
            .prepare_cached(sql)?
            .execute(params_from_iter(params))?;
        Ok(())
    }

    async fn ycsb_read(&mut self, key: &str, field: Option<u16>) -> Result<Option<YcsbFields>> {
        let st = self.statements()?;
        let sql = st.read(field);
        let count = st.fields.len();
        Ok(self
            .conn
            .prepare_cached(sql)?
            .query_row([key], |row| fields_of(row, 0, count, field))
            .optional()?)
    }

    async fn ycsb_update(&mut self, key: &str, values: &[(u16, String)]) -> Result<()> {
        let fields: Vec<u16> = values.iter().map(|(f, _)| *f).collect();
        let sql = self.statements()?.update(&fields);
        let params = values
            .iter()
            .map(|(_, v)| v.as_str())
            .chain(std::iter::once(key));
        self.conn
            .prepare_cached(&sql)?
            .execute(params_from_iter(params))?;
        Ok(())
    }

    async fn ycsb_scan(
        &mut self,
        start: &str,
        count: u32,
        field: Option<u16>,
    ) -> Result<Vec<(String, YcsbFields)>> {
        let st = self.statements()?;
        let sql = st.scan(field);
        let fields = st.fields.len();
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map(rusqlite::params![start, count], |row| {
            Ok((row.get(0)?, fields_of(row, 1, fields, field)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}
