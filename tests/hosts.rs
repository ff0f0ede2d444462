//! URLs that name several hosts, written the way each store's users write them: a
//! PostgreSQL fail-over list against real throw-away servers, and the MongoDB replica set and
//! Couchbase cluster URLs that used to be refused before anything started ("invalid port
//! number"). Stores whose driver connects to one host refuse several, saying why.

mod common;

use std::process::Output;
use std::time::Duration;

use assert_cmd::Command;
use dbcompare::catalog::{Durability, StoreKind};
use dbcompare::report::json;
use dbcompare::store::Store;

fn dbcompare(args: &[&str], out: &std::path::Path) -> Output {
    Command::cargo_bin("dbcompare")
        .unwrap()
        .args(args)
        .args([
            "--sizes",
            "micro",
            "--searches-per-insert",
            "2",
            "--no-floor",
            "--out",
        ])
        .arg(out)
        .timeout(Duration::from_secs(180))
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `postgres://...@dead,live/db`: the driver tries the hosts in order, the run uses the one
/// that answers, and the report names the hosts and which one answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_fail_over_list_uses_the_host_that_answers() {
    let server = common::start(StoreKind::Postgres, Durability::Relaxed);
    let dead = dbcompare::server::free_port().unwrap();
    let live = format!("127.0.0.1:{}", server.port());
    let url = server
        .url()
        .replace(&live, &format!("127.0.0.1:{dead},{live}"));
    let mut store = common::connect_url(StoreKind::Postgres, &url, Durability::Relaxed, None).await;
    store.reset().await.unwrap();
    let hosts = store.describe().await.unwrap().settings["hosts"].clone();
    assert_eq!(
        hosts,
        format!("127.0.0.1:{dead}, {live} (answered: {live})")
    );
    drop(store);

    let out = tempfile::tempdir().unwrap();
    let o = dbcompare(
        &["--store", "postgres", "--url", &format!("postgres={url}")],
        out.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let report =
        json::parse(&std::fs::read_to_string(out.path().join("run.json")).unwrap()).unwrap();
    let shown = report.stores[0]
        .deployment
        .as_ref()
        .unwrap()
        .url
        .clone()
        .unwrap();
    assert_eq!(
        shown,
        format!("postgres://bench:***@127.0.0.1:{dead},{live}/postgres")
    );
    assert!(!text(&o).contains(server.password()));
}

/// The replica set and cluster URLs their users write are read by the drivers, not refused
/// as malformed: with nothing listening there, the store fails at connect (exit 1), naming
/// every host, and the password masked. (The three stores are built in on request.)
#[cfg(feature = "all-stores")]
#[test]
fn replica_set_and_cluster_urls_reach_the_driver() {
    let (a, b) = (
        dbcompare::server::free_port().unwrap(),
        dbcompare::server::free_port().unwrap(),
    );
    for (store, url) in [
        (
            "mongodb",
            format!("mongodb://bob:Pw-multi1@127.0.0.1:{a},127.0.0.1:{b}/dbcompare?replicaSet=rs0"),
        ),
        (
            "couchbase",
            format!("couchbase://bob:Pw-multi1@127.0.0.1:{a},127.0.0.1:{b}/bucket"),
        ),
        (
            "aerospike",
            format!("aerospike://bob:Pw-multi1@127.0.0.1:{a},127.0.0.1:{b}/test"),
        ),
    ] {
        let out = tempfile::tempdir().unwrap();
        let o = dbcompare(
            &[
                "--store",
                store,
                "--connect-timeout",
                "2",
                "--url",
                &format!("{store}={url}"),
            ],
            out.path(),
        );
        let all = text(&o);
        assert_eq!(o.status.code(), Some(1), "{store}: {all}");
        assert!(!all.contains("invalid port number"), "{store}: {all}");
        assert!(
            all.contains(&format!("127.0.0.1:{a},127.0.0.1:{b}")),
            "{store}: every host named: {all}"
        );
        assert!(!all.contains("Pw-multi1"), "{store}: {all}");
    }
}

/// A driver that connects to one host: several are refused before anything starts (exit 2),
/// with the reason.
#[test]
fn one_host_stores_refuse_several() {
    for (store, url, why) in [
        (
            "mysql",
            "mysql://root:Pw-multi2@h1,h2/db",
            "MySQL connections (dbcompare's and mysql_async) go to one host",
        ),
        (
            "redis",
            "redis://:Pw-multi2@h1:1,h2:2/0",
            "a Redis Cluster is the redis-cluster store",
        ),
    ] {
        let out = tempfile::tempdir().unwrap();
        let o = dbcompare(
            &["--store", store, "--url", &format!("{store}={url}")],
            out.path(),
        );
        let all = text(&o);
        assert_eq!(o.status.code(), Some(2), "{store}: {all}");
        assert!(all.contains(why), "{store}: {all}");
        assert!(!all.contains("Pw-multi2"), "{store}: {all}");
    }
}
