//! MySQL's classic suite, on dbcompare's own connection ([`Own`]): the records' statements
//! prepared once per connection, each insert in START TRANSACTION/COMMIT, each search one
//! execution of the prepared FIND with every column decoded from the binary protocol. Also
//! what `dbcompare check` opens.

use anyhow::{Context, Result, bail};
use chrono::{TimeZone, Timelike, Utc};
use mysql_common::constants::ColumnType;
use mysql_common::value::Value;

use super::binary::BinaryRow;
use super::client::MysqlAsync;
use super::handshake::{self, Target};
use super::wire::{Statement, Table, Wire};
use super::{FIND, INSERT, MysqlStore, Session, check_url, tcp_as_named, tls_of, verified};
use crate::catalog::{StoreInfo, StoreKind};
use crate::store::{Adapter, ConnectSpec, DiskUsage, NotApplicable, Store};
use crate::workload::record::{Data, Record};

/// The record statements, once prepared on the connection.
struct Statements {
    insert: Statement,
    find: Statement,
}

/// dbcompare's own connection, with the record statements once prepared on it.
pub struct Own {
    wire: Wire,
    prepared: Option<Statements>,
}

impl Session for Own {
    const CLIENT: &'static str = "dbcompare's own connection (mysql_common's codecs)";

    async fn query(&mut self, sql: &str) -> Result<Table> {
        self.wire.query(sql).await
    }
}

/// The types FIND's columns must have: BIGINT, a string, three BIGINTs, DATETIME, and
/// the JSON (a JSON column on MySQL, LONGTEXT on MariaDB).
fn check_columns(find: &Statement) -> Result<()> {
    use ColumnType::{
        MYSQL_TYPE_BLOB, MYSQL_TYPE_DATETIME, MYSQL_TYPE_JSON, MYSQL_TYPE_LONG_BLOB,
        MYSQL_TYPE_LONGLONG, MYSQL_TYPE_STRING, MYSQL_TYPE_VAR_STRING, MYSQL_TYPE_VARCHAR,
    };
    let types: Vec<ColumnType> = find.columns.iter().map(|c| c.column_type()).collect();
    let text = |t: &ColumnType| {
        matches!(
            t,
            MYSQL_TYPE_VARCHAR
                | MYSQL_TYPE_VAR_STRING
                | MYSQL_TYPE_STRING
                | MYSQL_TYPE_BLOB
                | MYSQL_TYPE_LONG_BLOB
                | MYSQL_TYPE_JSON
        )
    };
    let fits = types.len() == 7
        && [0, 2, 3, 4]
            .iter()
            .all(|&i| types[i] == MYSQL_TYPE_LONGLONG)
        && text(&types[1])
        && types[5] == MYSQL_TYPE_DATETIME
        && text(&types[6]);
    if !fits {
        bail!("the search returns columns of types {types:?}");
    }
    Ok(())
}

impl MysqlStore<Own> {
    /// Prepares the record statements on the connection (after a reset; on first use on
    /// other connections), checking the columns FIND returns.
    async fn prepare(&mut self) -> Result<&mut Own> {
        let own = &mut self.conn;
        if own.prepared.is_none() {
            let insert = own.wire.prepare(INSERT).await?;
            let find = match own.wire.prepare(FIND).await {
                Ok(find) => find,
                Err(e) => {
                    own.wire.close_statement(insert).await?;
                    return Err(e);
                }
            };
            if let Err(e) = check_columns(&find) {
                own.wire.close_statement(insert).await?;
                own.wire.close_statement(find).await?;
                return Err(e);
            }
            own.prepared = Some(Statements { insert, find });
        }
        Ok(own)
    }
}

/// Whether `host` is this machine (where a server's Unix socket can be reached).
fn loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl Adapter for MysqlStore<Own> {
    type DriverSuites = MysqlStore<MysqlAsync>;

    fn check_url(raw: &str) -> Result<()> {
        check_url(raw)
    }

    async fn connect(spec: &ConnectSpec) -> Result<Self> {
        let url = spec.server_url(StoreKind::Mysql)?;
        let opts = tcp_as_named(url.expose())?;
        if opts.compression().is_some() {
            bail!("compression is not supported by dbcompare's MySQL connection");
        }
        if !opts.tcp_nodelay() {
            bail!("tcp_nodelay=false is not supported by dbcompare's MySQL connection");
        }
        let tls = tls_of(url.expose())?;
        let mut target = Target {
            host: opts.ip_or_hostname(),
            port: opts.tcp_port(),
            socket: opts.socket(),
            user: opts.user().unwrap_or_default(),
            password: opts.pass(),
            database: opts.db_name(),
            tls: tls.as_ref(),
        };
        let mut wire = handshake::connect(&target, spec.connect_timeout).await?;
        // As the driver does: a loopback URL that prefers the socket goes on over the
        // server's, when it can be reached (else over TCP, which the report then names).
        if opts.prefer_socket() && target.socket.is_none() && tls.is_none() && loopback(target.host)
        {
            let socket = wire.query("SELECT @@socket").await?.value();
            if let Some(path) = socket.filter(|p| !p.is_empty()) {
                target.socket = Some(&path);
                if let Ok(over_socket) = handshake::connect(&target, spec.connect_timeout).await {
                    wire.close().await?;
                    wire = over_socket;
                }
            }
        }
        let own = Own {
            wire,
            prepared: None,
        };
        let database = opts.db_name().unwrap_or_default().to_string();
        Ok(MysqlStore::over(own, spec, database, verified(&opts)))
    }
}

/// The record in a row of FIND.
fn decode(body: &[u8], columns: &[mysql_common::packets::Column]) -> Result<Record> {
    let mut row = BinaryRow::new(body, columns)?;
    let record = Record {
        id: row.int("id")?,
        unique_id: row.text("unique_id")?.to_string(),
        created_by: row.int("created_by")?,
        updated_by: row.int("updated_by")?,
        deleted_by: row.int("deleted_by")?,
        created_at: Utc.from_utc_datetime(&row.datetime("created_at")?),
        // serde_json checks the UTF-8 as it reads.
        data: serde_json::from_slice::<Data>(row.bytes("data")?).context("decoding data")?,
    };
    row.end()?;
    Ok(record)
}

/// The classic suite only: the others measure mysql_async ([`Adapter::DriverSuites`]).
impl Store for MysqlStore<Own> {
    type Driver = NotApplicable;
    type Pool = NotApplicable;
    type Ycsb = NotApplicable;

    async fn counters(&mut self) -> Result<std::collections::BTreeMap<String, u64>> {
        self.innodb_counters().await
    }

    async fn describe(&mut self) -> Result<StoreInfo> {
        self.description().await
    }

    async fn reset(&mut self) -> Result<()> {
        if let Some(Statements { insert, find }) = self.conn.prepared.take() {
            self.conn.wire.close_statement(insert).await?;
            self.conn.wire.close_statement(find).await?;
        }
        self.create_schema().await?;
        self.prepare().await?;
        Ok(())
    }

    async fn insert(&mut self, r: &Record) -> Result<()> {
        let own = self.prepare().await?;
        let at = r.created_at.naive_utc();
        let (date, time) = (at.date(), at.time());
        use chrono::Datelike;
        let params = [
            Value::Int(r.id),
            Value::Bytes(r.unique_id.as_bytes().to_vec()),
            Value::Int(r.created_by),
            Value::Int(r.updated_by),
            Value::Int(r.deleted_by),
            Value::Date(
                date.year() as u16,
                date.month() as u8,
                date.day() as u8,
                time.hour() as u8,
                time.minute() as u8,
                time.second() as u8,
                time.nanosecond() / 1000,
            ),
            Value::Bytes(serde_json::to_vec(&r.data)?),
        ];
        let statement = &own.prepared.as_ref().expect("prepared above").insert;
        own.wire.query("START TRANSACTION").await?;
        let inserted = own.wire.execute(statement, &params, |_| Ok(())).await;
        let inserted = inserted.and_then(|done| match done {
            Some(done) if done.affected_rows == 1 => Ok(()),
            Some(done) => bail!(
                "the insert of {} affected {} rows",
                r.id,
                done.affected_rows
            ),
            None => bail!("the insert of {} returned rows", r.id),
        });
        match inserted {
            Ok(()) => {
                own.wire.query("COMMIT").await?;
                Ok(())
            }
            Err(e) => {
                // End the transaction so that the connection can go on (a connection the
                // server ended has nothing to end).
                let _ = own.wire.query("ROLLBACK").await;
                Err(e)
            }
        }
    }

    async fn find(&mut self, unique_id: &str) -> Result<Option<Record>> {
        let own = self.prepare().await?;
        let find = &own.prepared.as_ref().expect("prepared above").find;
        let params = [Value::Bytes(unique_id.as_bytes().to_vec())];
        let mut found = None;
        let mut rows = 0;
        let done = own
            .wire
            .execute(find, &params, |body| {
                rows += 1;
                if rows == 1 {
                    found = Some(decode(body, &find.columns)?);
                }
                Ok(())
            })
            .await?;
        if rows > 1 {
            bail!("{rows} records have unique_id {unique_id}");
        }
        if done.is_some() {
            bail!("the search returned no result set");
        }
        Ok(found)
    }

    async fn disk_usage(&mut self) -> Result<DiskUsage> {
        self.size().await
    }

    async fn setting(&mut self, name: &str) -> Result<Option<String>> {
        self.read_setting(name).await
    }

    async fn set_setting(&mut self, name: &str, value: &str) -> Result<()> {
        self.write_setting(name, value).await
    }

    /// COM_QUIT, then the socket is closed.
    async fn close(self) -> Result<()> {
        self.conn.wire.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server;

    /// A refused insert ends its transaction: the connection goes on inserting and finding,
    /// and nothing of the refused record is left; every column comes back as it went in.
    #[tokio::test]
    async fn a_refused_insert_leaves_the_connection_usable() {
        let local = server::throwaway(StoreKind::Mysql, server::Serve::default());
        let spec = ConnectSpec::for_test(StoreKind::Mysql, &local.url());
        let mut store = MysqlStore::<Own>::connect(&spec).await.unwrap();
        store.reset().await.unwrap();
        let records = crate::workload::record::generate(7, &"micro".parse().unwrap(), 1);
        store.insert(&records[0]).await.unwrap();
        let mut twin = records[1].clone();
        twin.unique_id = records[0].unique_id.clone();
        let e = format!("{:#}", store.insert(&twin).await.unwrap_err());
        assert!(e.contains("ERROR 1062 (23000): Duplicate entry"), "{e}");
        store.insert(&records[2]).await.unwrap();
        for r in [&records[0], &records[2]] {
            assert_eq!(store.find(&r.unique_id).await.unwrap().as_ref(), Some(r));
        }
        assert_eq!(store.find(&records[1].unique_id).await.unwrap(), None);
        let count = store
            .query("SELECT count(*) FROM dbcompare_records")
            .await
            .unwrap();
        assert_eq!(count.columns, ["count(*)"]);
        assert_eq!(count.rows, vec![vec![Some("2".to_string())]]);
        // A statement the server refuses is its error, and the connection goes on.
        let e = format!("{:#}", store.query("SELECT nosuch").await.unwrap_err());
        assert!(e.contains("ERROR 1054 (42S22): Unknown column"), "{e}");
        assert!(store.find(&records[0].unique_id).await.unwrap().is_some());
        // A reset closes the statements it prepares again: the server holds two.
        let held = |table: Table| table.pairs()[0].1.clone();
        store.reset().await.unwrap();
        store.reset().await.unwrap();
        let status = "SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'";
        assert_eq!(held(store.query(status).await.unwrap()), "2");
        // A column whose type changed under the prepared search is an error, never a value
        // read by the old type.
        store.insert(&records[0]).await.unwrap();
        store
            .query("ALTER TABLE dbcompare_records MODIFY created_by VARCHAR(20) NOT NULL")
            .await
            .unwrap();
        let e = format!("{:#}", store.find(&records[0].unique_id).await.unwrap_err());
        assert!(
            e.contains("not those the statement was prepared with"),
            "{e}"
        );
        store.close().await.unwrap();
    }
}
