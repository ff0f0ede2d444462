//! A real throw-away Redis Cluster through the command line: the classic suite and the
//! YCSB workloads with every answer right, the topology and the redirect counts in the
//! report, no node or directory left; a node killed mid-run fails the store with that node
//! named; the cluster URL refused where it does not belong.

mod common;

use std::ffi::OsStr;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use dbcompare::catalog::{Durability, StoreKind};
use dbcompare::report::json;
use dbcompare::report::model::{PhaseKind, StoreStatus};

fn dbcompare() -> Command {
    let mut cmd = Command::cargo_bin("dbcompare").unwrap();
    cmd.env_remove("DBCOMPARE_REDIS_CLUSTER_URL")
        .timeout(Duration::from_secs(300));
    cmd
}

#[test]
fn a_throw_away_cluster_runs_the_suites_and_leaves_nothing() {
    let data = tempfile::tempdir().unwrap();
    for (suite, extra) in [
        (
            "classic",
            &["--sizes", "micro,tiny", "--searches-per-insert", "2"][..],
        ),
        (
            "ycsb",
            &["-p", "recordcount=300", "-p", "operationcount=600"][..],
        ),
    ] {
        let out = tempfile::tempdir().unwrap();
        let assert = dbcompare()
            .args(["--store", "redis-cluster", "--suite", suite])
            .args([
                "--redis-cluster-masters",
                "4",
                "--runs",
                "1",
                "--warmup-runs",
                "0",
            ])
            .args(extra)
            .arg("--data-dir")
            .arg(data.path())
            .arg("--out")
            .arg(out.path())
            .assert();
        let output = assert.get_output();
        assert!(
            output.status.success(),
            "{suite}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let report =
            json::parse(&std::fs::read_to_string(out.path().join("run.json")).unwrap()).unwrap();
        let store = &report.stores[0];
        assert_eq!(store.store, "redis-cluster");
        assert_eq!(store.status, StoreStatus::Ok, "{suite}: {:?}", store.error);
        let info = store.info.as_ref().unwrap();
        let cluster = &info.settings["cluster"];
        assert!(
            cluster.starts_with("4 masters, 0 replicas; 127.0.0.1:"),
            "{cluster}"
        );
        assert_eq!(cluster.matches(" slots ").count(), 4, "{cluster}");
        assert!(!store.phases.is_empty(), "{suite}");
        for p in &store.phases {
            assert_eq!(p.errors, 0, "{suite} {}", p.size.name);
            // A YCSB workload's counts are its whole run's, not one operation type's.
            let whole = !p.size.name.contains(' ') || p.size.name == "load INSERT";
            assert!(
                !whole
                    || p.server_counters.contains_key("MOVED redirects")
                        && p.server_counters.contains_key("ASK redirects"),
                "{suite} {}: {:?}",
                p.size.name,
                p.server_counters
            );
        }
        if suite == "classic" {
            let tags = &info.settings["hash tags"];
            assert!(tags.contains("share one slot"), "{tags}");
            let inserts = store.phase(PhaseKind::Insert, "tiny").unwrap();
            assert_eq!(inserts.ops, 1000);
            let md = std::fs::read_to_string(out.path().join("results.md")).unwrap();
            assert!(
                md.contains("redis-cluster INSERT tiny x1: ASK redirects"),
                "{md}"
            );
        } else {
            assert!(store.phases.iter().any(|p| p.size.name == "e SCAN"));
        }
    }
    // Every node stopped, every directory deleted.
    assert!(common::dirs_in(data.path(), "redis-cluster").is_empty());
    assert!(common::processes_in(data.path()).is_empty());
}

#[test]
fn a_node_killed_mid_run_fails_the_store_with_the_node_named() {
    let server = common::start(StoreKind::RedisCluster, Durability::Relaxed);
    let nodes = server.nodes();
    assert_eq!(nodes.len(), 3, "{nodes:?}");
    let (port, pid) = nodes[1];
    let out = tempfile::tempdir().unwrap();
    let url = format!("redis-cluster={}", server.url());
    let args = [
        "--store",
        "redis-cluster",
        "--url",
        &url,
        "--sizes",
        "micro",
        "--searches-per-insert",
        "200",
        "--warmup-runs",
        "0",
        "--runs",
        "3",
        "--verbose",
    ]
    .into_iter()
    .map(OsStr::new)
    .chain([OsStr::new("--out"), out.path().as_os_str()]);
    // The inserts are done, and the store described again: the node dies during the
    // 20,000 searches (a few seconds).
    let (mut child, lines) = common::spawn_until(args, "final database size");
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: killing a node of the cluster this test started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let killed = Instant::now();
    let dbcompare = child.id() as i32;
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(120));
        // SAFETY: our own child; if it ended, the test has already read its status.
        unsafe { libc::kill(dbcompare, libc::SIGKILL) };
    });
    let _rest: Vec<String> = lines.map_while(Result::ok).collect();
    let code = child.wait().unwrap().code().unwrap_or(-1);
    drop(watchdog);
    assert!(
        killed.elapsed() < Duration::from_secs(60),
        "{:?}",
        killed.elapsed()
    );
    assert_eq!(code, 1);
    let report =
        json::parse(&std::fs::read_to_string(out.path().join("run.json")).unwrap()).unwrap();
    let store = &report.stores[0];
    assert_eq!(store.status, StoreStatus::Failed);
    let error = store.error.as_deref().unwrap();
    assert!(error.starts_with("SEARCH micro: failed after"), "{error}");
    assert!(error.contains(&format!("on 127.0.0.1:{port}")), "{error}");
    // The inserts before the kill are kept, every one right.
    let inserts = store.phase(PhaseKind::Insert, "micro").unwrap();
    assert_eq!((inserts.ops, inserts.errors), (100, 0));
}

#[test]
fn cluster_urls_belong_to_the_cluster_store() {
    let assert = dbcompare()
        .args([
            "--store",
            "redis",
            "--url",
            "redis=redis://:pw@h1:7000,h2:7001/0",
        ])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(err.contains("redis-cluster"), "{err}");
    assert!(!err.contains(":pw@"), "{err}");
    let assert = dbcompare()
        .args([
            "--store",
            "redis",
            "--url",
            "redis=redis+cluster://h1:7000/",
        ])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(err.contains("that is a redis-cluster URL"), "{err}");
    // A throw-away cluster serving TLS is not made yet: said before anything starts, not
    // faked.
    let out = tempfile::tempdir().unwrap();
    let assert = dbcompare()
        .args([
            "--store",
            "redis-cluster",
            "--tls",
            "--sizes",
            "micro",
            "--out",
        ])
        .arg(out.path())
        .assert()
        .code(2);
    let text = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        text.starts_with(
            "error: --store redis-cluster: dbcompare does not start a Redis Cluster serving TLS"
        ),
        "{text}"
    );
    assert!(!out.path().join("run.json").exists());
}

/// Ctrl-C once (stop after the current operation) or twice (stop now, the second one's
/// cleanup killing the nodes' process group): exit 130, no node and no directory left.
#[test]
fn ctrl_c_once_or_twice_stops_every_node() {
    for signals in [1, 2] {
        let data = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let args = ["--verbose", "--store", "redis-cluster", "--sizes", "200000"]
            .map(OsStr::new)
            .into_iter()
            .chain([OsStr::new("--data-dir"), data.path().as_os_str()])
            .chain([OsStr::new("--out"), out.path().as_os_str()]);
        let (mut child, lines) = common::spawn_until(args, "initial database size");
        let nodes = common::processes_in(data.path());
        assert_eq!(nodes.len(), 3, "{nodes:?}");
        for _ in 0..signals {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            std::thread::sleep(Duration::from_millis(20));
        }
        let _rest: Vec<String> = lines.map_while(Result::ok).collect();
        assert_eq!(child.wait().unwrap().code(), Some(130), "{signals} Ctrl-C");
        let deadline = Instant::now() + Duration::from_secs(5);
        while !common::processes_in(data.path()).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            common::processes_in(data.path()).is_empty(),
            "{signals} Ctrl-C: nodes survived"
        );
        assert!(
            common::dirs_in(data.path(), "redis-cluster").is_empty(),
            "{signals} Ctrl-C: a directory survived"
        );
    }
}
