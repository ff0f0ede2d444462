//! Embedded SQLite (rusqlite, bundled): the store that runs with no server at all.
//!
//! One file in a temporary directory (or `--sqlite-path`), WAL journal, `synchronous=FULL`
//! so every commit is on disk before it returns. The record's `data` is a JSON text column
//! with expression indexes on its name and age, as the original benchmark indexed them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::{Connection, OptionalExtension, params};
use tempfile::TempDir;

use crate::catalog::{Durability, StoreInfo};
use crate::store::{Adapter, ConnectSpec, DiskUsage, NotApplicable, Store, Supported};
use crate::workload::record::{Data, Record, TABLE};

mod driver;
mod ycsb;

const INSERT: &str = "INSERT INTO dbcompare_records \
    (id, unique_id, created_by, updated_by, deleted_by, created_at, data) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";

const FIND: &str = "SELECT id, unique_id, created_by, updated_by, deleted_by, created_at, data \
    FROM dbcompare_records WHERE unique_id = ?1";

const SCHEMA: &str = "
    CREATE TABLE dbcompare_records (
        id          INTEGER PRIMARY KEY,
        unique_id   TEXT    NOT NULL,
        created_by  INTEGER NOT NULL,
        updated_by  INTEGER NOT NULL,
        deleted_by  INTEGER NOT NULL,
        created_at  TEXT    NOT NULL,
        data        TEXT    NOT NULL
    );
    CREATE UNIQUE INDEX dbcompare_records_unique_id ON dbcompare_records (unique_id);
    CREATE INDEX dbcompare_records_name ON dbcompare_records (json_extract(data, '$.name'));
    CREATE INDEX dbcompare_records_age ON dbcompare_records (json_extract(data, '$.age'));
";

/// How `dbcompare list` describes this store.
pub fn availability() -> String {
    format!("embedded SQLite {} (bundled)", rusqlite::version())
}

/// An open SQLite database file.
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    /// The temporary directory holding `path`, deleted on drop; `None` for `--sqlite-path`.
    _dir: Option<TempDir>,
    /// The YCSB table's statements, once it is created.
    ycsb: Option<crate::store::sql::YcsbStatements>,
}

impl SqliteStore {
    /// Opens (creating if needed) the database file and sets WAL + `synchronous=FULL`.
    pub fn open(spec: &ConnectSpec) -> Result<Self> {
        let (dir, path) = match &spec.options.sqlite_path {
            Some(path) => (None, path.clone()),
            None => {
                let dir = tempfile::Builder::new()
                    .prefix("dbcompare-sqlite-")
                    .tempdir()
                    .context("creating a temporary directory for the SQLite database")?;
                let path = dir.path().join("dbcompare.sqlite");
                (Some(dir), path)
            }
        };
        let conn = Connection::open(&path)
            .with_context(|| format!("opening SQLite database {}", path.display()))?;
        // The first statement reads the file: a file that is not a database fails here.
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .with_context(|| {
                let given = if spec.options.sqlite_path.is_some() {
                    " (--sqlite-path)"
                } else {
                    ""
                };
                format!("reading SQLite database {}{given}", path.display())
            })?;
        if !mode.eq_ignore_ascii_case("wal") {
            bail!(
                "SQLite refused WAL mode for {} (journal_mode={mode})",
                path.display()
            );
        }
        let synchronous = match spec.durability {
            Durability::Durable => "FULL",
            Durability::Relaxed => "NORMAL",
        };
        conn.pragma_update(None, "synchronous", synchronous)?;
        conn.set_prepared_statement_cache_capacity(16);
        Ok(SqliteStore {
            conn,
            path,
            _dir: dir,
            ycsb: None,
        })
    }

    fn wal_path(&self) -> PathBuf {
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        wal.into()
    }

    fn pragma(&self, name: &str) -> Result<String> {
        let value: rusqlite::types::Value =
            self.conn
                .query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))?;
        Ok(match value {
            rusqlite::types::Value::Integer(i) => i.to_string(),
            rusqlite::types::Value::Text(t) => t,
            other => format!("{other:?}"),
        })
    }
}

fn file_len(path: &Path) -> Result<u64> {
    match std::fs::metadata(path) {
        Ok(m) => Ok(m.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e).with_context(|| format!("reading the size of {}", path.display())),
    }
}

/// `PRAGMA synchronous` as its documented name.
fn synchronous_name(level: &str) -> &str {
    match level {
        "0" => "OFF",
        "1" => "NORMAL",
        "2" => "FULL",
        "3" => "EXTRA",
        other => other,
    }
}

impl Adapter for SqliteStore {
    type DriverSuites = Self;

    /// Never called: an embedded store takes no URL.
    fn check_url(_: &str) -> Result<()> {
        Ok(())
    }

    async fn connect(spec: &ConnectSpec) -> Result<Self> {
        SqliteStore::open(spec)
    }
}

impl Store for SqliteStore {
    type Driver = Supported;
    /// One file, no connections to pool.
    type Pool = NotApplicable;
    type Ycsb = Supported;

    async fn describe(&mut self) -> Result<StoreInfo> {
        let version: String = self
            .conn
            .query_row("SELECT sqlite_version()", [], |r| r.get(0))?;
        let journal_mode = self.pragma("journal_mode")?;
        let synchronous = synchronous_name(&self.pragma("synchronous")?).to_string();
        let durable = journal_mode.eq_ignore_ascii_case("wal")
            && matches!(synchronous.as_str(), "FULL" | "EXTRA");
        let mut plan = self.conn.prepare(&format!("EXPLAIN QUERY PLAN {FIND}"))?;
        let search_path = plan
            .query_map(["x"], |r| r.get::<_, String>(3))?
            .collect::<rusqlite::Result<Vec<_>>>()?
            .join("; ");
        let settings = BTreeMap::from([
            ("journal_mode".to_string(), journal_mode),
            ("synchronous".to_string(), synchronous),
            (
                "wal_autocheckpoint".to_string(),
                self.pragma("wal_autocheckpoint")?,
            ),
        ]);
        Ok(StoreInfo {
            version: format!("SQLite {version}"),
            durability: if durable { "durable" } else { "relaxed" }.to_string(),
            settings,
            search_path,
            write_path: "BEGIN; INSERT; COMMIT (one transaction per record)".to_string(),
            size_method: "database file + WAL after wal_checkpoint(TRUNCATE)".to_string(),
        })
    }

    async fn reset(&mut self) -> Result<()> {
        self.conn.flush_prepared_statement_cache();
        self.conn
            .execute_batch(&format!("DROP TABLE IF EXISTS {TABLE}; VACUUM;"))
            .context("dropping the previous benchmark table")?;
        self.conn
            .execute_batch(SCHEMA)
            .context("creating the benchmark table and its indexes")?;
        Ok(())
    }

    async fn insert(&mut self, r: &Record) -> Result<()> {
        let data = serde_json::to_string(&r.data)?;
        let created_at = r.created_at.to_rfc3339_opts(SecondsFormat::Millis, true);
        let tx = self.conn.transaction()?;
        tx.prepare_cached(INSERT)?.execute(params![
            r.id,
            r.unique_id,
            r.created_by,
            r.updated_by,
            r.deleted_by,
            created_at,
            data
        ])?;
        tx.commit()?;
        Ok(())
    }

    async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
        let mut stmt = self.conn.prepare_cached(FIND)?;
        let row = stmt
            .query_row([unique_id], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, i64>(2)?,
                    row.get::<_, i64>(3)?,
                    row.get::<_, i64>(4)?,
                    DateTime::parse_from_rfc3339(row.get_ref(5)?.as_str()?)
                        .map(|t| t.with_timezone(&Utc)),
                    serde_json::from_str::<Data>(row.get_ref(6)?.as_str()?),
                ))
            })
            .optional()?;
        let Some((id, unique_id, created_by, updated_by, deleted_by, created_at, data)) = row
        else {
            return Ok(None);
        };
        Ok(Some(Record {
            id,
            unique_id,
            created_by,
            updated_by,
            deleted_by,
            created_at: created_at.context("decoding created_at")?,
            data: data.context("decoding data")?,
        }))
    }

    async fn disk_usage(&mut self) -> Result<DiskUsage> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .context("checkpointing the WAL")?;
        Ok(DiskUsage::bytes(
            file_len(&self.path)? + file_len(&self.wal_path())?,
        ))
    }
}
