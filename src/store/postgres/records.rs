//! PostgreSQL's classic suite, on dbcompare's own connection ([`Own`]): the records'
//! statements prepared once per connection, each insert in BEGIN/COMMIT, each search one
//! execution of the prepared FIND with every column decoded from binary. Also what
//! `dbcompare check` opens.

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use tokio_postgres::types::{FromSql, Json, ToSql, Type};

use super::client::TokioPostgres;
use super::wire::{self, TextRow, Wire};
use super::{FIND, Opening, PostgresStore, Session};
use crate::catalog::StoreInfo;
use crate::store::{Adapter, ConnectSpec, DiskUsage, NotApplicable, Store};
use crate::workload::record::{Data, Record};

const INSERT: &str = "INSERT INTO dbcompare_records \
    (id, unique_id, created_by, updated_by, deleted_by, created_at, data) \
    VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// The record's columns, in the order INSERT takes them and FIND returns them.
const COLUMNS: [Type; 7] = [
    Type::INT8,
    Type::TEXT,
    Type::INT8,
    Type::INT8,
    Type::INT8,
    Type::TIMESTAMPTZ,
    Type::JSONB,
];

/// The prepared statements' names on dbcompare's own connection.
const INSERT_NAME: &str = "dbcompare_insert";
const FIND_NAME: &str = "dbcompare_find";

/// dbcompare's own connection, with whether the record statements are prepared on it.
pub struct Own {
    wire: Wire,
    prepared: bool,
}

impl Session for Own {
    const CLIENT: &'static str = "dbcompare's own connection (postgres-protocol's codecs)";

    async fn simple(&mut self, sql: &str) -> Result<Vec<TextRow>> {
        self.wire.simple(sql).await
    }
}

/// A column of a binary row, of the type `ty` it was checked to have; an error for NULL.
fn column<'a, T: FromSql<'a>>(raw: Option<&'a [u8]>, ty: &Type, name: &str) -> Result<T> {
    let raw = raw.with_context(|| format!("{name} is NULL"))?;
    T::from_sql(ty, raw).map_err(|e| anyhow::anyhow!(e).context(format!("decoding {name}")))
}

impl PostgresStore<Own> {
    /// Prepares the record statements on dbcompare's own connection (after a reset; on
    /// first use on other connections), checking the columns FIND returns.
    async fn prepare(&mut self) -> Result<&mut Wire> {
        let Own { wire, prepared } = &mut self.conn;
        if !*prepared {
            wire.prepare(INSERT_NAME, INSERT, &COLUMNS).await?;
            let columns = wire.prepare(FIND_NAME, FIND, &[Type::TEXT]).await?;
            let want: Vec<u32> = COLUMNS.iter().map(Type::oid).collect();
            if columns != want {
                bail!("the search returns columns of types {columns:?}, not {want:?}");
            }
            *prepared = true;
        }
        Ok(wire)
    }
}

impl Adapter for PostgresStore<Own> {
    type DriverSuites = PostgresStore<TokioPostgres>;

    fn check_url(raw: &str) -> Result<()> {
        super::check_url(raw)
    }

    async fn connect(spec: &ConnectSpec) -> Result<Self> {
        let opening = Opening::new(spec)?;
        let ask = opening.split.tls.as_ref().map(|tls| wire::TlsAsk {
            tls,
            optional: opening.split.optional,
        });
        let mut wire = Wire::connect(&opening.config, ask, spec.connect_timeout).await?;
        wire.simple(&opening.set)
            .await
            .with_context(|| format!("setting up the session: {}", opening.set))?;
        let own = Own {
            wire,
            prepared: false,
        };
        opening.store(own, spec)
    }
}

/// The classic suite only: the others measure tokio-postgres ([`Adapter::DriverSuites`]).
impl Store for PostgresStore<Own> {
    type Driver = NotApplicable;
    type Pool = NotApplicable;
    type Ycsb = NotApplicable;

    async fn counters(&mut self) -> Result<std::collections::BTreeMap<String, u64>> {
        self.wal_counters().await
    }

    async fn describe(&mut self) -> Result<StoreInfo> {
        self.description().await
    }

    async fn reset(&mut self) -> Result<()> {
        self.conn.prepared = false;
        self.create_schema().await?;
        self.prepare().await?;
        Ok(())
    }

    async fn insert(&mut self, r: &Record) -> Result<()> {
        let wire = self.prepare().await?;
        let params: [&(dyn ToSql + Sync); 7] = [
            &r.id,
            &r.unique_id,
            &r.created_by,
            &r.updated_by,
            &r.deleted_by,
            &r.created_at,
            &Json(&r.data),
        ];
        wire.simple("BEGIN").await?;
        match wire
            .execute(INSERT_NAME, &params, &COLUMNS, |_| Ok(()))
            .await
        {
            Ok(_) => {
                wire.simple("COMMIT").await?;
                Ok(())
            }
            Err(e) => {
                // The transaction has failed; end it so that the connection can go on (a
                // connection the server ended has nothing to end).
                let _ = wire.simple("ROLLBACK").await;
                Err(e)
            }
        }
    }

    async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
        let wire = self.prepare().await?;
        let mut found = None;
        let rows = wire
            .execute(FIND_NAME, &[&unique_id], &[Type::TEXT], |row| {
                let [id, key, created, updated, deleted, at, data] = wire::columns::<7>(row)?;
                let Json(data): Json<Data> = column(data, &Type::JSONB, "data")?;
                found = Some(Record {
                    id: column(id, &Type::INT8, "id")?,
                    unique_id: column(key, &Type::TEXT, "unique_id")?,
                    created_by: column(created, &Type::INT8, "created_by")?,
                    updated_by: column(updated, &Type::INT8, "updated_by")?,
                    deleted_by: column(deleted, &Type::INT8, "deleted_by")?,
                    created_at: column::<DateTime<Utc>>(at, &Type::TIMESTAMPTZ, "created_at")?,
                    data,
                });
                Ok(())
            })
            .await?;
        if rows > 1 {
            bail!("{rows} records have unique_id {unique_id}");
        }
        Ok(found)
    }

    async fn disk_usage(&mut self) -> Result<DiskUsage> {
        self.size().await
    }

    /// Ends the connection with Terminate.
    async fn setting(&mut self, name: &str) -> Result<Option<String>> {
        self.show(name).await.map(Some)
    }

    async fn close(self) -> Result<()> {
        self.conn.wire.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::StoreKind;
    use crate::server;

    /// A refused insert ends its transaction: the connection goes on inserting and finding,
    /// and nothing of the refused record is left.
    #[tokio::test]
    async fn a_refused_insert_leaves_the_connection_usable() {
        let local = server::throwaway(StoreKind::Postgres, server::Serve::default());
        let spec = ConnectSpec::for_test(StoreKind::Postgres, &local.url());
        let mut store = PostgresStore::<Own>::connect(&spec).await.unwrap();
        store.reset().await.unwrap();
        let records = crate::workload::record::generate(7, &"micro".parse().unwrap(), 1);
        store.insert(&records[0]).await.unwrap();
        let mut twin = records[1].clone();
        twin.unique_id = records[0].unique_id.clone();
        let e = format!("{:#}", store.insert(&twin).await.unwrap_err());
        assert!(e.contains("duplicate key value"), "{e}");
        assert!(e.contains("SQLSTATE 23505"), "{e}");
        store.insert(&records[2]).await.unwrap();
        for r in [&records[0], &records[2]] {
            assert_eq!(store.find(&r.unique_id).await.unwrap().as_ref(), Some(r));
        }
        assert_eq!(store.find(&records[1].unique_id).await.unwrap(), None);
        let rows = store
            .simple("SELECT count(*) FROM dbcompare_records")
            .await
            .unwrap();
        assert_eq!(rows, vec![vec![Some("2".to_string())]]);
        store.close().await.unwrap();
    }
}
