//! Several load clients: two dbcompare processes share the classic suite against one real
//! throw-away Redis (`--client 1/2`, `--client 2/2`, one `--start-at`), each searching the
//! other's records too; `dbcompare merge` makes one run of them, its counts and histograms
//! those of the two added, and the merged run renders. Merges that are not one run are
//! refused.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use dbcompare::catalog::{Durability, StoreKind};
use dbcompare::report::json;
use dbcompare::report::model::{PhaseKind, Report, StoreStatus, decode_histogram};

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("dbcompare")
}

fn load(path: &Path) -> Report {
    json::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Runs `dbcompare merge` on `runs`: exit code, output, the merged report if written.
fn merge(runs: &[&Path], out: &Path) -> (i32, String, Option<Report>) {
    let o = Command::new(bin())
        .arg("merge")
        .args(runs)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let report = std::fs::read_to_string(out.join("run.json"))
        .ok()
        .map(|t| json::parse(&t).unwrap());
    (o.status.code().unwrap_or(-1), text, report)
}

/// Two clients' runs of one coordinated run, in `dir/1` and `dir/2`.
fn two_clients(dir: &Path) -> [PathBuf; 2] {
    let server = common::start(StoreKind::Redis, Durability::Relaxed);
    let url = format!("redis={}", server.url());
    let start_at = (chrono::Utc::now() + chrono::Duration::seconds(3)).to_rfc3339();
    let clients: Vec<_> = [1, 2]
        .into_iter()
        .map(|k| {
            let out = dir.join(k.to_string());
            let child = Command::new(bin())
                .args(["--store", "redis", "--url", &url])
                .args(["--client", &format!("{k}/2"), "--start-at", &start_at])
                .args(["--sizes", "micro,tiny", "--searches-per-insert", "4"])
                .args(["--runs", "2", "--warmup-runs", "0", "--no-floor", "--out"])
                .arg(&out)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (out, child)
        })
        .collect();
    let mut runs = Vec::new();
    for (out, child) in clients {
        let o = child.wait_with_output().unwrap();
        assert!(
            o.status.success(),
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        runs.push(out.join("run.json"));
    }
    [runs[0].clone(), runs[1].clone()]
}

#[test]
fn two_clients_on_one_server_merge_into_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let [a, b] = two_clients(dir.path());
    let (ra, rb) = (load(&a), load(&b));
    for (k, r) in [(1, &ra), (2, &rb)] {
        let client = r.plan.client.as_ref().unwrap();
        assert_eq!((client.index, client.of), (k, 2));
        // The server's figures per operation are the whole server's over this client's.
        let md = std::fs::read_to_string(dir.path().join(k.to_string()).join("results.md"));
        let said = format!("This is load client {k} of 2: the server's figures per operation");
        assert!(md.as_ref().unwrap().contains(&said), "{md:?}");
        let store = &r.stores[0];
        assert_eq!(
            store.status,
            StoreStatus::Ok,
            "client {k}: {:?}",
            store.error
        );
        // Every search found its record, the other client's too: the searches began only
        // once both had inserted.
        for p in &store.phases {
            assert_eq!(p.errors, 0, "client {k} {:?} {}", p.kind, p.size.name);
        }
        assert_eq!(store.phase(PhaseKind::Insert, "tiny").unwrap().ops, 500);
        assert_eq!(store.phase(PhaseKind::Search, "tiny").unwrap().ops, 2000);
    }
    // Client 1 measured the sizes; client 2 says who did.
    assert!(ra.stores[0].final_size_bytes.is_some());
    assert_eq!(
        rb.stores[0].size_error.as_deref(),
        Some("measured by client 1/2")
    );

    let out = dir.path().join("merged");
    // In any order.
    let (code, text, merged) = merge(&[&b, &a], &out);
    assert_eq!(code, 0, "{text}");
    let merged = merged.unwrap();
    let validator = common::schema_validator();
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert!(
        validator.is_valid(&value),
        "the merged run.json fits the schema"
    );
    assert_eq!(merged.plan.client, None);
    assert_eq!(merged.plan.concurrency, [2]);
    let indexes: Vec<u32> = merged.shares.iter().map(|s| s.index).collect();
    assert_eq!(indexes, [1, 2]);
    let store = &merged.stores[0];
    assert_eq!(store.status, StoreStatus::Ok);
    // Both clients ran on as many loops: the merged store keeps the number.
    assert!(ra.stores[0].client_threads.is_some());
    assert_eq!(store.client_threads, ra.stores[0].client_threads);
    assert_eq!(store.phases.len(), ra.stores[0].phases.len());
    for p in &store.phases {
        let find = |r: &Report| {
            r.stores[0]
                .phases
                .iter()
                .find(|q| q.kind == p.kind && q.size.name == p.size.name)
                .unwrap()
                .clone()
        };
        let (pa, pb) = (find(&ra), find(&rb));
        assert_eq!(p.concurrency, 2);
        assert_eq!(p.ops, pa.ops + pb.ops, "{:?} {}", p.kind, p.size.name);
        assert_eq!(p.errors, 0);
        // The histogram is the two added, exactly.
        let h = |q: &dbcompare::report::model::PhaseResult| {
            decode_histogram(q.histogram.as_deref().unwrap()).unwrap()
        };
        let (hm, ha, hb) = (h(p), h(&pa), h(&pb));
        assert_eq!(hm.len(), ha.len() + hb.len());
        let mut added = ha.clone();
        added.add(&hb).unwrap();
        for q in [0.5, 0.9, 0.99, 1.0] {
            assert_eq!(
                hm.value_at_quantile(q),
                added.value_at_quantile(q),
                "{:?} {} q{q}",
                p.kind,
                p.size.name
            );
        }
        assert_eq!(p.client_wall_ms, [pa.wall_ms, pb.wall_ms]);
        assert!(p.wall_ms >= pa.wall_ms.min(pb.wall_ms));
        let series_ops: u64 = p.series[0].points.iter().map(|pt| pt.ops).sum();
        let series_a: u64 = pa.series[0].points.iter().map(|pt| pt.ops).sum();
        let series_b: u64 = pb.series[0].points.iter().map(|pt| pt.ops).sum();
        assert_eq!(series_ops, series_a + series_b);
    }
    // The merged run renders like any other.
    let o = Command::new(bin())
        .args(["report", "--format", "md"])
        .arg(out.join("run.json"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(md.contains("redis") && md.contains("SEARCH"), "{md}");
    assert!(md.contains("merged from 2 load clients"), "{md}");
    assert!(md.contains("redis SEARCH tiny x2: clients "), "{md}");
    let tiny = store.phase(PhaseKind::Search, "tiny").unwrap();
    assert!(tiny.common_ops_per_s.is_some_and(|r| r > 0.0), "{tiny:?}");
    let own = std::fs::read_to_string(a.with_file_name("results.md")).unwrap();
    assert!(own.contains("load client 1/2 of the run"), "{own}");

    // Merges that are not one run.
    let bad = dir.path().join("bad");
    let (code, text, _) = merge(&[&a, &a], &bad);
    assert_eq!(code, 2);
    assert!(text.contains("client 1/2 is given twice"), "{text}");
    let (code, text, _) = merge(&[&a], &bad);
    assert_eq!(code, 2);
    assert!(text.contains("client(s) 2/2 missing"), "{text}");
    let mut other_seed = rb.clone();
    other_seed.plan.seed += 1;
    let c = dir.path().join("other-seed.json");
    std::fs::write(&c, json::render(&other_seed)).unwrap();
    let (code, text, _) = merge(&[&a, &c], &bad);
    assert_eq!(code, 2);
    assert!(text.contains("not shares of one run: seed"), "{text}");
    let mut alone = ra.clone();
    alone.plan.client = None;
    let d = dir.path().join("alone.json");
    std::fs::write(&d, json::render(&alone)).unwrap();
    let (code, text, _) = merge(&[&d, &b], &bad);
    assert_eq!(code, 2);
    assert!(text.contains("not one client's share"), "{text}");
    assert!(!bad.join("run.json").exists());

    // A client whose run stopped before the store: merged, the store failed with the reason,
    // and the exit code says so, as a run's would.
    let mut short = rb.clone();
    short.stores.clear();
    let e = dir.path().join("short.json");
    std::fs::write(&e, json::render(&short)).unwrap();
    let partial = dir.path().join("partial");
    let (code, text, merged) = merge(&[&a, &e], &partial);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("error: "), "{text}");
    let store = &merged.unwrap().stores[0];
    assert_eq!(store.status, StoreStatus::Failed);
    let error = store.error.as_deref().unwrap();
    assert!(
        error.contains("client 2/2: no result for this store"),
        "{error}"
    );
    assert!(store.phases.iter().all(|p| p.incomplete));

    // A client that skipped the store (interrupted before its turn) while the other ran it:
    // the store failed, its measured phases kept in the tables, not skipped and hidden.
    let mut skipped = rb.clone();
    skipped.stores[0].status = StoreStatus::Skipped;
    skipped.stores[0].error = Some("the run was interrupted before its turn".into());
    skipped.stores[0].phases.clear();
    let f = dir.path().join("skipped.json");
    std::fs::write(&f, json::render(&skipped)).unwrap();
    let (code, text, merged) = merge(&[&a, &f], &dir.path().join("half"));
    assert_eq!(code, 1, "{text}");
    let store = &merged.unwrap().stores[0];
    assert_eq!(store.status, StoreStatus::Failed);
    assert!(!store.phases.is_empty());
}

#[test]
fn clients_need_a_shared_server_and_a_shared_suite() {
    let run = |args: &[&str]| {
        let out = tempfile::tempdir().unwrap();
        let o = Command::new(bin())
            .args(args)
            .arg("--out")
            .arg(out.path())
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, err) = run(&["--store", "redis", "--client", "1/2", "--start-at", "0"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("give it with --url redis=URL"), "{err}");
    let (code, err) = run(&["--store", "sqlite", "--client", "1/2", "--start-at", "0"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--sqlite-path"), "{err}");
    let (code, err) = run(&[
        "--store",
        "sqlite",
        "--sqlite-path",
        "x.db",
        "--suite",
        "driver",
        "--client",
        "1/2",
        "--start-at",
        "0",
    ]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("the classic and YCSB suites are shared"),
        "{err}"
    );
    let (code, err) = run(&["--store", "sqlite", "--client", "3/2", "--start-at", "0"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("K is 1 to 2"), "{err}");
    let (code, err) = run(&["--store", "sqlite", "--client", "1/2"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--start-at"), "{err}");
    let (code, err) = run(&["--store", "sqlite", "--client", "1/2", "--start-at", "soon"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("RFC 3339"), "{err}");
    let (code, err) = run(&["--client", "1/2", "--start-at", "0"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("name the stores"), "{err}");
    let (code, err) = run(&[
        "--store",
        "sqlite",
        "--sqlite-path",
        "x.db",
        "--client",
        "1/2",
        "--start-at",
        "0",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("more than 10 minutes ago"), "{err}");
    // A mistyped year would wait that long.
    let (code, err) = run(&[
        "--store",
        "sqlite",
        "--sqlite-path",
        "x.db",
        "--client",
        "1/2",
        "--start-at",
        "2099-01-01T00:00:00Z",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("more than a day ahead"), "{err}");
}
