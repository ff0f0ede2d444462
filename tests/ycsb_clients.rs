//! The YCSB suite shared by two load clients: two dbcompare processes (`--client 1/2`,
//! `--client 2/2`, one `--start-at`) run workloads A, D and E against one real throw-away
//! PostgreSQL and one Redis, each loading half of the records, reading and scanning the
//! other's records and inserts with every answer checked; `dbcompare merge` makes one run of
//! them whose operation counts are those of one client alone running the whole workload.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use dbcompare::catalog::{Durability, StoreKind};
use dbcompare::report::json;
use dbcompare::report::model::{PhaseKind, PhaseResult, Report, StoreStatus, decode_histogram};

const RECORDS: u64 = 300;
const OPERATIONS: u64 = 600;
const RUNS: usize = 2;

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("dbcompare")
}

fn load(path: &Path) -> Report {
    json::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `dbcompare run` of the YCSB suite on both servers, with `extra` arguments, into `out`.
fn ycsb_run(urls: &[String], extra: &[&str], out: &Path) -> Command {
    let mut c = Command::new(bin());
    c.args(["--store", "postgres,redis", "--suite", "ycsb"])
        .args(["--workload", "a,d,e", "--concurrency", "4"])
        .args(["--property", &format!("recordcount={RECORDS}")])
        .args(["--property", &format!("operationcount={OPERATIONS}")])
        .args([
            "--runs",
            &RUNS.to_string(),
            "--warmup-runs",
            "0",
            "--no-floor",
        ])
        .args(extra)
        .arg("--out")
        .arg(out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for url in urls {
        c.args(["--url", url]);
    }
    c
}

fn succeeded(o: std::process::Output) {
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn phase<'a>(r: &'a Report, store: usize, name: &str) -> &'a PhaseResult {
    let s = &r.stores[store];
    s.phases
        .iter()
        .find(|p| p.kind == PhaseKind::Ycsb && p.size.name == name)
        .unwrap_or_else(|| panic!("{} has no phase {name}", s.store))
}

#[test]
fn two_clients_share_a_ycsb_run_and_merge_into_one() {
    let postgres = common::start(StoreKind::Postgres, Durability::Relaxed);
    let redis = common::start(StoreKind::Redis, Durability::Relaxed);
    let urls = [
        format!("postgres={}", postgres.url()),
        format!("redis={}", redis.url()),
    ];
    let dir = tempfile::tempdir().unwrap();
    let start_at = (chrono::Utc::now() + chrono::Duration::seconds(3)).to_rfc3339();
    let children: Vec<_> = [1, 2]
        .into_iter()
        .map(|k| {
            let out = dir.path().join(k.to_string());
            let share = format!("{k}/2");
            let extra = ["--client", &share, "--start-at", &start_at];
            (out.clone(), ycsb_run(&urls, &extra, &out).spawn().unwrap())
        })
        .collect();
    let mut files = Vec::new();
    for (out, child) in children {
        succeeded(child.wait_with_output().unwrap());
        files.push(out.join("run.json"));
    }
    let clients: Vec<Report> = files.iter().map(|f| load(f)).collect();
    for (k, r) in clients.iter().enumerate() {
        let client = r.plan.client.as_ref().unwrap();
        assert_eq!((client.index, client.of), (k as u32 + 1, 2));
        for (i, store) in r.stores.iter().enumerate() {
            let who = format!("client {}, {}", k + 1, store.store);
            assert_eq!(store.status, StoreStatus::Ok, "{who}: {:?}", store.error);
            assert!(store.not_applicable.is_empty(), "{who}");
            // Every read and scan checked, the other client's records among them.
            for p in &store.phases {
                assert_eq!(p.errors, 0, "{who} {}: {:?}", p.size.name, p.error_kinds);
            }
            // Each loaded its half and made its half of every run's operations (a phase's
            // count is one run's).
            assert_eq!(phase(r, i, "load INSERT").ops, RECORDS / 2, "{who}");
            for w in ["a", "d", "e"] {
                let p = phase(r, i, w);
                assert_eq!((p.ops, p.runs.len()), (OPERATIONS / 2, RUNS), "{who} {w}");
            }
            assert!(phase(r, i, "d INSERT").ops > 0, "{who}");
            assert!(phase(r, i, "e SCAN").ops > 0, "{who}");
        }
    }

    let merged_dir = dir.path().join("merged");
    let o = Command::new(bin())
        .arg("merge")
        .args(&files)
        .arg("--out")
        .arg(&merged_dir)
        .output()
        .unwrap();
    succeeded(o);
    let merged = load(&merged_dir.join("run.json"));
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(merged_dir.join("run.json")).unwrap())
            .unwrap();
    assert!(common::schema_validator().is_valid(&value));
    assert_eq!(merged.plan.concurrency, [8]);

    // One client alone, the whole workload, on the same servers.
    let lone_dir = dir.path().join("lone");
    succeeded(ycsb_run(&urls, &[], &lone_dir).output().unwrap());
    let lone = load(&lone_dir.join("run.json"));

    for (i, store) in merged.stores.iter().enumerate() {
        assert_eq!(store.status, StoreStatus::Ok, "{}", store.store);
        for name in ["load INSERT", "a", "d", "e"] {
            let p = phase(&merged, i, name);
            assert_eq!(p.ops, phase(&lone, i, name).ops, "{} {name}", store.store);
        }
        assert_eq!(phase(&merged, i, "load INSERT").ops, RECORDS);
        for w in ["a", "d", "e"] {
            assert_eq!(phase(&merged, i, w).ops, OPERATIONS, "{} {w}", store.store);
        }
        for p in &store.phases {
            let who = format!("{} {}", store.store, p.size.name);
            assert_eq!(p.errors, 0, "{who}");
            let theirs: Vec<&PhaseResult> = clients
                .iter()
                .map(|r| {
                    let s = &r.stores[i];
                    s.phases
                        .iter()
                        .find(|q| q.size.name == p.size.name)
                        .unwrap()
                })
                .collect();
            assert_eq!(p.ops, theirs.iter().map(|q| q.ops).sum::<u64>(), "{who}");
            // The histograms added exactly.
            let h = |q: &PhaseResult| decode_histogram(q.histogram.as_deref().unwrap()).unwrap();
            let mut added = h(theirs[0]);
            added.add(h(theirs[1])).unwrap();
            let hm = h(p);
            assert_eq!(hm.len(), added.len(), "{who}");
            for q in [0.5, 0.99, 1.0] {
                assert_eq!(hm.value_at_quantile(q), added.value_at_quantile(q), "{who}");
            }
        }
    }
}
