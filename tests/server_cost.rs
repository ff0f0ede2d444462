//! What each phase cost the server, measured on real throw-away servers: the bytes a
//! durable insert writes, the syncs (or bytes) a relaxed one spares, a warm search that
//! reads nothing from storage, CPU time that adds up, a known load read as what it is, and
//! a server given by URL whose figures say where they come from.

mod common;

use std::time::Duration;

use clap::Parser;
use dbcompare::catalog::{Durability, StoreKind};
use dbcompare::cli::Cli;
use dbcompare::measure::processes::Processes;
use dbcompare::report::json;
use dbcompare::report::model::{CostSource, PhaseKind, Report, ServerCost, StoreStatus};

/// A classic run of `stores` at `small` (two searches per record), as run.json has it: long
/// enough that each phase's server spends the ten clock ticks of CPU a figure needs.
fn run(stores: &str, durability: &str, urls: &[String]) -> Report {
    let out = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = [
        "dbcompare",
        "run",
        "--store",
        stores,
        "--sizes",
        "small",
        "--searches-per-insert",
        "2",
        "--durability",
        durability,
        "--warmup-runs",
        "0",
        "--runs",
        "1",
        "--no-floor",
        "--quiet",
        "--out",
        out.path().to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    for url in urls {
        args.extend(["--url".to_string(), url.clone()]);
    }
    assert_eq!(dbcompare::run(Cli::parse_from(&args)).unwrap(), 0);
    json::parse(&std::fs::read_to_string(out.path().join("run.json")).unwrap()).unwrap()
}

/// The cost of `store`'s `kind` phase.
fn cost(report: &Report, store: &str, kind: PhaseKind) -> (ServerCost, u64, f64) {
    let s = report.stores.iter().find(|s| s.store == store).unwrap();
    assert_eq!(s.status, StoreStatus::Ok, "{store}: {:?}", s.error);
    let p = s.phase(kind, "small").unwrap();
    let cost = p
        .server
        .clone()
        .unwrap_or_else(|| panic!("{store} {kind:?}: no server cost"));
    (cost, p.ops, p.wall_ms)
}

#[test]
fn throw_away_servers_show_what_durable_and_relaxed_inserts_and_warm_searches_cost() {
    let stores = "postgres,mysql,redis";
    let durable = run(stores, "durable", &[]);
    let relaxed = run(stores, "relaxed", &[]);
    let cores = std::thread::available_parallelism().unwrap().get() as f64;
    for store in ["postgres", "mysql", "redis"] {
        let (insert, ops, wall_ms) = cost(&durable, store, PhaseKind::Insert);
        assert_eq!(insert.source, CostSource::Processes, "{store}");
        // The WAL, redo log or AOF holds every record.
        let amplification = insert.write_amplification.unwrap();
        assert!(
            amplification >= 1.0,
            "{store}: write amplification {amplification}"
        );
        let cpu = insert.cpu_us_per_op().unwrap();
        assert!(cpu > 0.0, "{store}: no server CPU");
        let most = wall_ms * 1e3 * cores / ops as f64;
        assert!(
            cpu < most,
            "{store}: {cpu} us/op of CPU in a phase of {most} core-us/op"
        );
        assert!(insert.peak_memory_bytes.unwrap() >= insert.end_memory_bytes.unwrap());
        assert!(insert.peak_memory_bytes.unwrap() > 1 << 20, "{store}");

        let (search, ops, _) = cost(&durable, store, PhaseKind::Search);
        let read = search.read_bytes_per_op.unwrap() * ops as f64;
        // A table of 10,000 records just written is in memory.
        assert!(
            read < 64.0 * 1024.0,
            "{store}: a warm search phase read {read} bytes"
        );
        assert!(search.cpu_us_per_op().unwrap() > 0.0, "{store}");

        let (loose, _, _) = cost(&relaxed, store, PhaseKind::Insert);
        match store {
            // Redis counts no syncs: with appendfsync always each append dirties its page
            // anew after the sync cleaned it, so it writes more bytes.
            "redis" => {
                let (d, r) = (
                    insert.write_bytes_per_op.unwrap(),
                    loose.write_bytes_per_op.unwrap(),
                );
                assert!(r < d, "redis: relaxed wrote {r} B/op, durable {d}");
                assert_eq!(insert.syncs_per_op, None, "redis counts no syncs");
            }
            _ => {
                let (d, r) = (insert.syncs_per_op.unwrap(), loose.syncs_per_op.unwrap());
                assert!(d >= 0.9, "{store}: durable inserts made {d} syncs each");
                assert!(r < d, "{store}: relaxed {r} syncs/op, durable {d}");
            }
        }
    }
}

/// The CPU time a backend spent so far, from the scheduler's own count in nanoseconds
/// (`/proc/PID/schedstat`): another reading than the clock ticks of `/proc/PID/stat`.
fn scheduler_cpu(pid: i32) -> Duration {
    let text = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).unwrap();
    Duration::from_nanos(text.split_whitespace().next().unwrap().parse().unwrap())
}

#[tokio::test]
async fn a_known_load_on_the_server_reads_as_what_it_is() {
    let server = common::start(StoreKind::Postgres, Durability::Relaxed);
    let tree = Processes::of(server.nodes().into_iter().map(|(_, pid)| pid).collect());
    let (client, connection) = tokio_postgres::connect(&server.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let backend: i32 = client
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0);
    let (before, backend_before) = (tree.read().unwrap(), scheduler_cpu(backend));
    // About a second of CPU on one backend, whatever the machine's speed.
    client
        .execute(
            "DO $$ DECLARE t timestamptz := clock_timestamp(); x float8 := 0; BEGIN \
             WHILE clock_timestamp() < t + interval '1 second' LOOP x := x + sqrt(random()); \
             END LOOP; END $$",
            &[],
        )
        .await
        .unwrap();
    let (after, backend_after) = (tree.read().unwrap(), scheduler_cpu(backend));
    let read = after.since(&before).cpu().as_secs_f64();
    let independent = (backend_after - backend_before).as_secs_f64();
    assert!(independent > 0.2, "the backend ran {independent} s");
    // The tree's reading holds the backend's and a little of the other processes'.
    assert!(
        (read - independent).abs() <= 0.2 * independent,
        "the tree spent {read} s, the backend {independent} s"
    );
}

/// A plain TCP forward (socat) to `backend`: a port on the loopback that no server
/// program listens on. Killed when dropped.
struct Forward {
    child: std::process::Child,
    port: u16,
}

impl Drop for Forward {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn forward(backend: u16) -> Forward {
    let port = dbcompare::server::free_port().unwrap();
    let child = std::process::Command::new("socat")
        .arg(format!("TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork"))
        .arg(format!("TCP:127.0.0.1:{backend}"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect(
            "socat is not installed: run 'provisioning/install.sh socat' (these tests do not skip)",
        );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "socat did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    Forward { child, port }
}

#[test]
fn a_server_given_by_url_is_read_as_a_throw_away_one_on_this_machine_and_by_its_counters_behind_a_forward()
 {
    let redis = common::start(StoreKind::Redis, Durability::Durable);
    let postgres = common::start(StoreKind::Postgres, Durability::Durable);
    // The server's own port: its processes are found and read.
    let direct = run(
        "redis,postgres",
        "durable",
        &[
            format!("redis={}", redis.url()),
            format!("postgres={}", postgres.url()),
        ],
    );
    for store in ["redis", "postgres"] {
        let (insert, _, _) = cost(&direct, store, PhaseKind::Insert);
        assert_eq!(insert.source, CostSource::Processes, "{store}");
        assert!(insert.cpu_us_per_op().unwrap() > 0.0, "{store}");
        assert!(insert.peak_memory_bytes.is_some(), "{store}");
    }
    // Behind a forward the listening process is socat, not the server: never read as it.
    let (redis_front, pg_front) = (forward(redis.port()), forward(postgres.port()));
    let through = |url: String, port: u16, front: u16| {
        url.replace(&format!(":{port}/"), &format!(":{front}/"))
    };
    let report = run(
        "redis,postgres",
        "durable",
        &[
            format!(
                "redis={}",
                through(redis.url(), redis.port(), redis_front.port)
            ),
            format!(
                "postgres={}",
                through(postgres.url(), postgres.port(), pg_front.port)
            ),
        ],
    );
    let (redis_insert, _, _) = cost(&report, "redis", PhaseKind::Insert);
    assert_eq!(redis_insert.source, CostSource::ServerCounters);
    assert!(redis_insert.cpu_us_per_op().unwrap() > 0.0);
    assert!(
        redis_insert
            .reported_per_op
            .contains_key("cpu user us (INFO used_cpu_user)"),
        "{:?}",
        redis_insert.reported_per_op
    );
    // What the server does not count is n/a, never zero.
    assert_eq!(redis_insert.write_bytes_per_op, None);
    assert_eq!(redis_insert.peak_memory_bytes, None);
    let (pg_insert, _, _) = cost(&report, "postgres", PhaseKind::Insert);
    assert_eq!(pg_insert.source, CostSource::ServerCounters);
    assert!(pg_insert.syncs_per_op.unwrap() >= 0.9);
    assert!(pg_insert.write_amplification.unwrap() >= 1.0);
    assert_eq!(pg_insert.cpu_us_per_op(), None);
    let markdown = dbcompare::report::markdown::render(&report);
    assert!(markdown.contains("| server counters |"), "{markdown}");
}
