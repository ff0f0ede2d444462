//! How a MongoDB store is opened: the driver's client with the URL's options, the
//! deployment read from `hello` (whether inserts run in session transactions), and the
//! collections with the write concern asked for.

use anyhow::Result;
use mongodb::Client;
use mongodb::bson::{Document, doc};
use mongodb::options::{ClientOptions, CollectionOptions};

use super::bench_doc::BenchDoc;
use super::record::Doc;
use super::{MongoStore, write_concern};
use crate::catalog::{StoreKind, Transactions};
use crate::store::{Adapter, ConnectSpec};
use crate::workload::pool::{BATCH_TABLE, DATA_TABLE};
use crate::workload::record::TABLE;

/// The database used when the URL names none.
const DEFAULT_DATABASE: &str = "dbcompare";

/// A replica set's members as the server's `hello` lists them, the primary marked.
fn members(hello: &Document) -> Option<String> {
    let hosts = hello.get_array("hosts").ok()?;
    let primary = hello.get_str("primary").ok();
    let listed: Vec<String> = hosts
        .iter()
        .filter_map(|h| h.as_str())
        .map(|h| match primary {
            Some(p) if p == h => format!("{h} (primary)"),
            _ => h.to_string(),
        })
        .collect();
    (!listed.is_empty()).then(|| listed.join(", "))
}

/// How the server is deployed, from `hello`: transactions need a replica set or mongos.
fn topology(hello: &Document) -> (&'static str, Option<String>) {
    if hello.get_str("msg") == Ok("isdbgrid") {
        ("sharded cluster", None)
    } else if let Ok(set) = hello.get_str("setName") {
        ("replica set", Some(set.to_string()))
    } else {
        ("standalone", None)
    }
}

/// The driver's TLS options in dbcompare's terms, for the report.
fn tls_of(options: &ClientOptions) -> Option<crate::store::tls::Tls> {
    use crate::store::tls::{Tls, Verify};
    let Some(mongodb::options::Tls::Enabled(tls)) = &options.tls else {
        return None;
    };
    let verify = if tls.allow_invalid_certificates == Some(true) {
        Verify::Nothing
    } else {
        Verify::Full
    };
    Some(Tls {
        verify,
        ca: tls.ca_file_path.clone(),
    })
}

impl Adapter for MongoStore {
    type DriverSuites = Self;

    /// Checks a URL the way the driver will read it (no DNS lookups for +srv here).
    fn check_url(raw: &str) -> Result<()> {
        // The driver's own parser: several hosts, replicaSet, tls and every other option.
        mongodb::options::ConnectionString::parse(raw)?;
        Ok(())
    }

    async fn connect(spec: &ConnectSpec) -> Result<Self> {
        let url = spec.server_url(StoreKind::Mongodb)?;
        let mut options = ClientOptions::parse(url.expose()).await?;
        let tls = tls_of(&options);
        options.connect_timeout = Some(spec.connect_timeout);
        // A little shorter than the connect timeout around the whole open: a server the
        // driver cannot select then fails with the driver's reason (a certificate refused,
        // a connection refused), not with the bare timeout, on a loaded machine too.
        options.server_selection_timeout = Some(spec.connect_timeout.mul_f64(0.8));
        options.app_name = Some("dbcompare".to_string());
        let database = options
            .default_database
            .clone()
            .unwrap_or_else(|| DEFAULT_DATABASE.to_string());
        let client = Client::with_options(options)?;
        let db = client.database(&database);
        let hello = db.run_command(doc! { "hello": 1 }).await?;
        let (kind, set) = topology(&hello);
        let members = members(&hello);
        let transactions = match spec.options.mongodb_transactions {
            Transactions::Auto => kind != "standalone",
            Transactions::Always => true,
            Transactions::Never => false,
        };
        let session = match transactions {
            true => Some(client.start_session().await?),
            false => None,
        };
        let with_write_concern = || {
            CollectionOptions::builder()
                .write_concern(write_concern(spec.durability))
                .build()
        };
        let records = db.collection_with_options::<Doc>(TABLE, with_write_concern());
        let pool_data = db.collection_with_options::<BenchDoc>(DATA_TABLE, with_write_concern());
        let pool_batch = db.collection_with_options::<BenchDoc>(BATCH_TABLE, with_write_concern());
        Ok(MongoStore {
            client,
            db,
            records,
            durability: spec.durability,
            session,
            driver_docs: None,
            ycsb: None,
            pool_data,
            pool_batch,
            topology: match set {
                Some(set) => format!("{kind} {set}"),
                None => kind.to_string(),
            },
            members,
            tls,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topology_decides_transactions() {
        assert_eq!(
            topology(&doc! { "isWritablePrimary": true }).0,
            "standalone"
        );
        assert_eq!(
            topology(&doc! { "setName": "rs0" }),
            ("replica set", Some("rs0".into()))
        );
        assert_eq!(topology(&doc! { "msg": "isdbgrid" }).0, "sharded cluster");
        assert_eq!(
            members(&doc! { "hosts": ["a:1", "b:2"], "primary": "b:2" }).as_deref(),
            Some("a:1, b:2 (primary)")
        );
        assert_eq!(members(&doc! { "isWritablePrimary": true }), None);
    }
}
