//! PostgreSQL's YCSB suite: YCSB's JDBC table, its key compared byte by byte (`COLLATE "C"`,
//! so that scans run in the same key order on every store), every statement prepared.

use anyhow::{Context, Result};
use tokio_postgres::Statement;
use tokio_postgres::types::ToSql;

use super::PostgresStore;
use super::client::TokioPostgres;
use crate::store::sql::{Placeholders, Prepared, YcsbStatements};
use crate::store::{YcsbFields, YcsbStore, YcsbTable, ycsb_fields};
use crate::workload::ycsb::OpKind;

impl PostgresStore<TokioPostgres> {
    async fn prepare_ycsb(&mut self, table: &YcsbTable) -> Result<()> {
        let text = YcsbStatements::new(table, Placeholders::Dollar);
        let mut prepared = Vec::new();
        for sql in text.to_prepare() {
            prepared.push(self.conn.client.prepare(sql).await?);
        }
        self.conn.ycsb = Some(Prepared::new(text, prepared));
        Ok(())
    }

    fn prepared(&self) -> Result<&Prepared<Statement>> {
        self.conn
            .ycsb
            .as_ref()
            .context("the YCSB table is not in use yet (ycsb_reset or ycsb_use first)")
    }
}

/// A row's fields from column `first` on: every one, or the one asked for.
fn fields_of(
    row: &tokio_postgres::Row,
    first: usize,
    count: usize,
    field: Option<u16>,
) -> Result<YcsbFields> {
    Ok(ycsb_fields(count, field, |position, _| {
        row.try_get(first + position)
    })?)
}

impl YcsbStore for PostgresStore<TokioPostgres> {
    fn ycsb_operation(&self, op: OpKind) -> Option<&'static str> {
        Some(match op {
            OpKind::Read => "SELECT the fields WHERE ycsb_key = $1 (prepared)",
            OpKind::Update => "UPDATE ... SET field = $1 WHERE ycsb_key = $2 (prepared)",
            OpKind::Insert => "INSERT of the key and every field (prepared)",
            OpKind::Scan => "SELECT ... WHERE ycsb_key >= $1 ORDER BY ycsb_key LIMIT $2 (prepared)",
            OpKind::ReadModifyWrite => "the read, then the update (two statements, as YCSB)",
        })
    }

    async fn ycsb_reset(&mut self, table: &YcsbTable) -> Result<()> {
        let text = YcsbStatements::new(table, Placeholders::Dollar);
        self.conn
            .client
            .batch_execute(&format!(
                "DROP TABLE IF EXISTS {t}; CREATE TABLE {t} ({})",
                text.columns("VARCHAR(255) COLLATE \"C\"", "TEXT"),
                t = table.name
            ))
            .await
            .context("creating the YCSB table")?;
        self.prepare_ycsb(table).await
    }

    async fn ycsb_use(&mut self, table: &YcsbTable) -> Result<()> {
        self.prepare_ycsb(table).await
    }

    async fn ycsb_insert(&mut self, key: &str, values: &[String]) -> Result<()> {
        let p = self.prepared()?;
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(values.len() + 1);
        params.push(&key);
        params.extend(values.iter().map(|v| v as &(dyn ToSql + Sync)));
        self.conn.client.execute(&p.insert, &params).await?;
        Ok(())
    }

    async fn ycsb_read(&mut self, key: &str, field: Option<u16>) -> Result<Option<YcsbFields>> {
        let p = self.prepared()?;
        let row = self.conn.client.query_opt(p.read(field), &[&key]).await?;
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
                let prepared = self.conn.client.prepare(&p.text.update(&fields)).await?;
                p.add_update(fields, prepared)
            }
        };
        let mut params: Vec<&(dyn ToSql + Sync)> = values
            .iter()
            .map(|(_, v)| v as &(dyn ToSql + Sync))
            .collect();
        params.push(&key);
        let updated = self.conn.client.execute(statement, &params).await?;
        anyhow::ensure!(updated == 1, "no record {key} to update");
        Ok(())
    }

    async fn ycsb_scan(
        &mut self,
        start: &str,
        count: u32,
        field: Option<u16>,
    ) -> Result<Vec<(String, YcsbFields)>> {
        let p = self.prepared()?;
        let rows = self
            .conn
            .client
            .query(p.scan(field), &[&start, &i64::from(count)])
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, fields_of(r, 1, p.text.fields.len(), field)?)))
            .collect()
    }
}
