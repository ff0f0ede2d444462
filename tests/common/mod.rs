//! Shared helpers of the integration tests: throw-away servers through `src/server/`.

#![allow(dead_code)]

use std::time::Duration;

use dbcompare::server::{self, LocalServer};
use dbcompare::store::{AnyStore, ConnectSpec, Durability, StoreKind, StoreUrl};

/// Starts a throw-away server. A missing server is a failure, never a skip: CI installs
/// every server these tests need (provisioning/install.sh).
pub fn start(kind: StoreKind, durability: Durability) -> LocalServer {
    let installation = server::find(kind).unwrap_or_else(|| {
        panic!("no {kind} server is installed: run 'provisioning/install.sh {kind}' (these tests do not skip)")
    });
    server::start(kind, &installation, durability, false)
        .unwrap_or_else(|e| panic!("starting a local {kind} server: {e:#}"))
}

/// Connects to a local server the way the runner does.
pub async fn connect(server: &LocalServer, durability: Durability) -> AnyStore {
    let url = StoreUrl::parse(server.kind(), &server.url()).unwrap();
    let data_dir = server.data_dir();
    let spec = ConnectSpec {
        url: Some(&url),
        data_dir: Some(&data_dir),
        durability,
        connect_timeout: Duration::from_secs(10),
        sqlite_path: None,
    };
    server
        .kind()
        .connect(&spec)
        .await
        .unwrap_or_else(|e| panic!("connecting to the local {}: {e:#}", server.kind()))
}
