//! The YCSB suite on SQLite (embedded: no server needed): the six core workloads, a stored
//! value changed or deleted behind the tool's back failing the run, and one connection
//! making the seed's operations, a store without scans running the workloads it can; on a
//! throw-away PostgreSQL, workload D at sixteen connections with no operation waiting for
//! an insert; and the property table of docs/suites.md against YCSB's template and the code.

// The suite's future nests the executor's task, the YCSB operation's and each driver's own.
#![recursion_limit = "256"]

mod common;

use std::path::{Path, PathBuf};

use dbcompare::catalog::{Durability, StoreKind, StoreOptions};
use dbcompare::report::model::{PhaseKind, PhaseResult, StoreResult};
use dbcompare::store::{ConnectSpec, YcsbFields, YcsbStore, YcsbTable};
use dbcompare::suite::Observer;
use dbcompare::suite::clients::Connect;
use dbcompare::suite::ycsb::YcsbPlan;
use dbcompare::workload::levels::{Concurrency, Repetitions};
use dbcompare::workload::ycsb::{Op, OpKind, Workload, properties};

/// Connections to the SQLite file `path`, for the YCSB suite.
fn sqlite_at(
    path: &Path,
) -> impl Connect<Store = dbcompare::store::registry::AnyDriverStore> + use<> {
    let path = path.to_path_buf();
    move || {
        let spec = ConnectSpec {
            url: None,
            data_dir: None,
            durability: Durability::Durable,
            connect_timeout: std::time::Duration::from_secs(10),
            options: StoreOptions {
                sqlite_path: Some(path.clone()),
                ..Default::default()
            },
        };
        async move { StoreKind::Sqlite.connect_for_drivers(&spec).await }
    }
}

#[tokio::test]
async fn sqlite_runs_the_six_core_workloads() {
    let dir = tempfile::tempdir().unwrap();
    let result = common::ycsb_small(sqlite_at(&dir.path().join("y.sqlite")), "sqlite", &[]).await;
    // As in YCSB, workload F's read-modify-writes count as reads and updates too: every
    // operation of F reads.
    let f = |name: &str| {
        result
            .phase_at(
                PhaseKind::Ycsb,
                name,
                dbcompare::workload::levels::Concurrency::ONE,
            )
            .unwrap()
            .ops
    };
    assert!(
        f("f READ-MODIFY-WRITE") > 100,
        "{}",
        f("f READ-MODIFY-WRITE")
    );
    assert_eq!(f("f READ"), 400);
    assert_eq!(f("f UPDATE"), f("f READ-MODIFY-WRITE"));
    // Workload E scans: its inserts and scans add up to the run.
    assert_eq!(f("e SCAN") + f("e INSERT"), 400);
}

fn workload(letter: char) -> Workload {
    let overrides = [
        properties::flag("recordcount=100").unwrap(),
        properties::flag("operationcount=200").unwrap(),
    ];
    Workload::core(letter, &overrides).unwrap()
}

/// Changes the stored data with its own connection once the load is done, as something
/// other than the tool would.
struct BehindTheBack {
    path: PathBuf,
    sql: String,
    done: bool,
}

impl Observer for BehindTheBack {
    fn phase_finished(&mut self, phase: &PhaseResult) {
        if phase.size.name.starts_with("load") && !self.done {
            let conn = rusqlite::Connection::open(&self.path).unwrap();
            let changed = conn.execute(&self.sql, []).unwrap();
            assert_eq!(changed, 1, "{}", self.sql);
            self.done = true;
        }
    }
}

/// Runs `w` (after its load) on SQLite, changing the data with `sql` after the load: the
/// run's error and its result.
async fn tampered(w: Workload, sql: impl FnOnce(&Workload) -> String) -> (String, StoreResult) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("y.sqlite");
    let plan = YcsbPlan {
        workloads: vec![w.clone()],
        seed: 3,
        repetitions: dbcompare::workload::levels::Repetitions::ONCE,
        concurrency: common::levels(&[1]),
        rate: None,
        rendezvous: None,
    };
    let mut observer = BehindTheBack {
        path: path.clone(),
        sql: sql(&w),
        done: false,
    };
    let mut result = StoreResult::new("sqlite");
    let e = dbcompare::suite::ycsb::run(
        &common::clients(sqlite_at(&path)),
        &plan,
        &mut result,
        &mut observer,
    )
    .await
    .expect_err("a changed value must fail the run");
    assert!(observer.done);
    (format!("{e:#}"), result)
}

/// The record the run's first operation of its kind works on (the run's operations are
/// seeded: the suite draws the same ones).
fn first_record(w: &Workload, pick: impl Fn(&Op) -> Option<i64>) -> i64 {
    w.operations(w.record_count as i64, 3)
        .iter()
        .find_map(pick)
        .unwrap()
}

#[tokio::test]
async fn a_value_changed_behind_the_tools_back_fails_the_run() {
    let (e, result) = tampered(workload('c'), |w| {
        let record = first_record(w, |op| match op {
            Op::Read { key, .. } => Some(*key),
            _ => None,
        });
        // One character of one field of the record read first.
        format!(
            "UPDATE usertable SET field3 = 'X' || substr(field3, 2) WHERE ycsb_key = '{}'",
            w.key_name(record)
        )
    })
    .await;
    assert!(e.contains("wrong value") && e.contains("field 3"), "{e}");
    let read = result.phase(PhaseKind::Ycsb, "c READ").unwrap();
    assert!(read.errors >= 1, "{read:?}");
}

#[tokio::test]
async fn a_record_deleted_behind_the_tools_back_fails_reads_and_scans() {
    let (e, _) = tampered(workload('c'), |w| {
        let record = first_record(w, |op| match op {
            Op::Read { key, .. } => Some(*key),
            _ => None,
        });
        format!(
            "DELETE FROM usertable WHERE ycsb_key = '{}'",
            w.key_name(record)
        )
    })
    .await;
    assert!(e.contains("missing record"), "{e}");
    // A scan that should have returned the record, and did not.
    let (e, _) = tampered(workload('e'), |w| {
        let start = first_record(w, |op| match op {
            Op::Scan { start, len, .. } if *len > 1 => Some(*start),
            _ => None,
        });
        format!(
            "DELETE FROM usertable WHERE ycsb_key = '{}'",
            w.key_name(start)
        )
    })
    .await;
    assert!(e.contains("wrong scan") && e.contains("is missing"), "{e}");
}

/// Runs `workloads` once each at `level` connections and gives the store's result.
async fn run_once<C: Connect<Store: dbcompare::store::YcsbStore> + Send + 'static>(
    connect: C,
    workloads: &[Workload],
    level: u32,
) -> StoreResult {
    run_paced(connect, workloads, level, None).await
}

/// [`run_once`], on an open loop at `rate` operations a second when given.
async fn run_paced<C: Connect<Store: dbcompare::store::YcsbStore> + Send + 'static>(
    connect: C,
    workloads: &[Workload],
    level: u32,
    rate: Option<f64>,
) -> StoreResult {
    let plan = YcsbPlan {
        workloads: workloads.to_vec(),
        seed: 5,
        repetitions: Repetitions::ONCE,
        concurrency: common::levels(&[level]),
        rate,
        rendezvous: None,
    };
    let mut result = StoreResult::new("store");
    dbcompare::suite::ycsb::run(
        &common::clients(connect),
        &plan,
        &mut result,
        &mut dbcompare::suite::Silent,
    )
    .await
    .unwrap_or_else(|e| panic!("{e:#}"));
    result
}

/// The operations of each kind a run made, by YCSB's name.
fn ops_of(result: &StoreResult, workload: &str, level: u32) -> Vec<(String, u64)> {
    let level = Concurrency::new(level).unwrap();
    result
        .phases
        .iter()
        .filter(|p| p.concurrency == level)
        .filter_map(|p| {
            let kind = p.size.name.strip_prefix(&format!("{workload} "))?;
            Some((kind.to_string(), p.ops))
        })
        .collect()
}

#[tokio::test]
async fn one_connection_makes_the_seeds_operations() {
    // Operations are drawn as they are made; on one connection every insert is acknowledged
    // before the next is drawn, so the run is the seed's whole sequence.
    let dir = tempfile::tempdir().unwrap();
    let workloads = [workload('d'), workload('f')];
    let result = run_once(sqlite_at(&dir.path().join("y.sqlite")), &workloads, 1).await;
    let mut present = 100;
    for w in &workloads {
        let ops = w.operations(present, 5);
        present += ops
            .iter()
            .filter(|op| matches!(op, Op::Insert { .. }))
            .count() as i64;
        let mut want: Vec<(String, u64)> = Vec::new();
        for op in &ops {
            let mut kinds = vec![op.kind().name()];
            // A read-modify-write counts as a read and an update as well.
            if let Op::ReadModifyWrite { .. } = op {
                kinds.extend(["READ", "UPDATE"]);
            }
            for kind in kinds {
                match want.iter_mut().find(|(k, _)| k == kind) {
                    Some((_, n)) => *n += 1,
                    None => want.push((kind.to_string(), 1)),
                }
            }
        }
        let mut got = ops_of(&result, &w.name, 1);
        got.sort();
        want.sort();
        assert_eq!(got, want, "workload {}", w.name);
    }
}

/// On an open loop, each operation type has response times of its own, as YCSB's intended
/// latencies: from when its operation was due, over the share of the schedule it had.
#[tokio::test]
async fn an_open_loop_gives_each_operation_type_its_response_times() {
    let dir = tempfile::tempdir().unwrap();
    let f = workload('f');
    let result = run_paced(
        sqlite_at(&dir.path().join("y.sqlite")),
        std::slice::from_ref(&f),
        1,
        // Slow enough to be kept: responses of tens of microseconds, where the check after
        // a call would show.
        Some(2_000.0),
    )
    .await;
    let level = Concurrency::new(1).unwrap();
    let whole = result.phase_at(PhaseKind::Ycsb, "f", level).unwrap();
    let rate = whole.open_loop.as_ref().expect("an open loop").rate;
    let mut types = 0;
    let (mut lowest, mut highest) = (u64::MAX, 0);
    for name in ["f READ", "f UPDATE", "f READ-MODIFY-WRITE"] {
        let p = result.phase_at(PhaseKind::Ycsb, name, level).unwrap();
        let ol = p
            .open_loop
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: none"));
        let expected = rate * p.ops as f64 / whole.ops as f64;
        assert!(
            (ol.rate - expected).abs() < 1e-6,
            "{name}: {} {expected}",
            ol.rate
        );
        let response = dbcompare::measure::decode_histogram(&ol.response_histogram).unwrap();
        assert_eq!(response.len(), p.ops, "{name}: one response per operation");
        lowest = lowest.min(response.min());
        highest = highest.max(response.max());
        assert!(
            ol.response_us.p50 >= p.latency_us.p50 * 0.99,
            "{name}: response {} under the call's {}",
            ol.response_us.p50,
            p.latency_us.p50
        );
        // Its own, not the whole workload's.
        assert_ne!(
            ol.response_histogram,
            whole.open_loop.as_ref().unwrap().response_histogram
        );
        types += 1;
    }
    assert_eq!(types, 3);
    // An operation's response ends with its last store call, as its last part's does: the
    // check after it is not the store's.
    let whole_response =
        dbcompare::measure::decode_histogram(&whole.open_loop.as_ref().unwrap().response_histogram)
            .unwrap();
    assert!(
        whole_response.min() >= lowest,
        "{} {lowest}",
        whole_response.min()
    );
    assert!(
        whole_response.max() <= highest,
        "{} {highest}",
        whole_response.max()
    );
    // Where every operation is one call, the workload's responses are its types' together.
    let a = workload('a');
    let result = run_paced(
        sqlite_at(&dir.path().join("a.sqlite")),
        std::slice::from_ref(&a),
        1,
        Some(2_000.0),
    )
    .await;
    let response = |name: &str| {
        let p = result.phase_at(PhaseKind::Ycsb, name, level).unwrap();
        dbcompare::measure::decode_histogram(&p.open_loop.as_ref().unwrap().response_histogram)
            .unwrap()
    };
    let mut both = response("a READ");
    both.add(response("a UPDATE")).unwrap();
    assert!(response("a") == both);
}

#[tokio::test]
async fn workload_d_at_sixteen_connections_never_waits_and_checks_every_read() {
    let server = common::start(StoreKind::Postgres, Durability::Relaxed);
    let connect = common::connector_for_drivers(&server, Durability::Relaxed);
    let overrides = [
        properties::flag("recordcount=300").unwrap(),
        properties::flag("operationcount=6000").unwrap(),
    ];
    let d = Workload::core('d', &overrides).unwrap();
    let result = run_once(connect, std::slice::from_ref(&d), 16).await;
    let level = Concurrency::new(16).unwrap();
    let whole = result.phase_at(PhaseKind::Ycsb, "d", level).unwrap();
    // A record chosen before its insert was acknowledged would be an error of its own kind
    // ("unacknowledged record"): none is, and none was left out.
    assert_eq!(
        (whole.errors, whole.ops, whole.incomplete),
        (0, 6000, false),
        "{:?}",
        whole.error_kinds
    );
    let of = |kind: &str| result.phase_at(PhaseKind::Ycsb, kind, level).unwrap().ops;
    let (reads, inserts) = (of("d READ"), of("d INSERT"));
    assert_eq!(reads + inserts, 6000);
    assert!((200..=400).contains(&inserts), "{inserts} inserts");
}

/// The keys of a YCSB workload file: those it sets, and those its comments show as
/// `#key=value` (YCSB's template shows the keys with no default so).
fn template_keys(text: &str) -> (Vec<properties::Property>, Vec<String>) {
    let set = properties::parse(text, "workload_template").unwrap();
    let mut keys: Vec<String> = set.iter().map(|p| p.key.clone()).collect();
    for line in text.lines() {
        let Some(comment) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some((key, _)) = comment.split_once('=') else {
            continue;
        };
        let key = key.trim();
        let keyish = key.starts_with(|c: char| c.is_ascii_lowercase())
            && key
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.');
        if keyish {
            keys.push(key.to_string());
        }
    }
    keys.dedup();
    (set, keys)
}

/// The rows of docs/suites.md's property table: key, YCSB's default, what dbcompare does.
fn property_table() -> Vec<(String, String, String)> {
    let docs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/suites.md"),
    )
    .unwrap();
    let table = docs
        .split_once("| key | YCSB's default | dbcompare |\n|---|---|---|\n")
        .expect("docs/suites.md has the property table")
        .1;
    table
        .lines()
        .take_while(|l| l.starts_with("| "))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            assert_eq!(cells.len(), 3, "{l}");
            (
                cells[0].trim_matches('`').to_string(),
                cells[1].to_string(),
                cells[2].to_string(),
            )
        })
        .collect()
}

#[test]
fn the_property_table_covers_ycsbs_template_and_says_what_the_code_does() {
    use properties::Handling;
    let template = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/ycsb_workload_template"),
    )
    .unwrap();
    let (set, template_keys) = template_keys(&template);
    assert!(template_keys.len() >= 30, "{template_keys:?}");
    let rows = property_table();
    let documented: Vec<&str> = rows.iter().map(|(k, _, _)| k.as_str()).collect();
    // Every key of YCSB's template is one the code knows and the table has.
    for key in &template_keys {
        assert!(properties::handling(key).is_some(), "{key}: not in KEYS");
        assert!(
            documented.contains(&key.as_str()),
            "{key}: not in the table"
        );
    }
    // The table has every key the code knows, once, and no other.
    let mut code: Vec<&str> = properties::KEYS.iter().map(|(k, _)| *k).collect();
    let mut table = documented.clone();
    code.sort_unstable();
    table.sort_unstable();
    assert_eq!(table, code);
    // Each row says what the code does: honoured, some values only, or refused and why.
    for (key, _, does) in &rows {
        match properties::handling(key).unwrap() {
            Handling::Honoured => assert!(does.starts_with("honoured"), "{key}: {does}"),
            Handling::Only(values) => {
                assert!(does.starts_with("only "), "{key}: {does}");
                for value in values
                    .split([',', ' '])
                    .filter(|v| v.contains(|c: char| c.is_alphabetic()) && *v != "or")
                {
                    assert!(
                        does.contains(&format!("`{value}`")),
                        "{key}: {value} in {does}"
                    );
                }
            }
            Handling::Refused(why) => {
                assert_eq!(does, &format!("refused: {why}"), "{key}");
            }
        }
    }
    // And the code does it: each value the template sets is taken unless its key is
    // refused, which names the reason.
    for p in set {
        let outcome = Workload::defaults("t").apply(std::slice::from_ref(&p));
        match properties::handling(&p.key).unwrap() {
            Handling::Refused(why) => {
                let e = outcome.unwrap_err();
                assert!(e.ends_with(why), "{e}");
            }
            _ => outcome.unwrap_or_else(|e| panic!("{e}")),
        }
    }
}

/// SQLite with its scans hidden: what a store without key order (Aerospike) or without its
/// query service (a Couchbase cluster without it) looks like to the suite.
struct NoScans(dbcompare::store::registry::AnyDriverStore);

/// Why [`NoScans`] has no scans.
const NO_SCANS: &str = "keys in no order, for this test";

impl dbcompare::store::Store for NoScans {
    type Driver = dbcompare::store::NotApplicable;
    type Pool = dbcompare::store::NotApplicable;
    type Ycsb = dbcompare::store::Supported;

    async fn describe(&mut self) -> anyhow::Result<dbcompare::report::model::StoreInfo> {
        self.0.describe().await
    }
    async fn reset(&mut self) -> anyhow::Result<()> {
        self.0.reset().await
    }
    async fn insert(&mut self, record: &dbcompare::workload::record::Record) -> anyhow::Result<()> {
        self.0.insert(record).await
    }
    async fn find(
        &mut self,
        unique_id: &str,
    ) -> anyhow::Result<Option<dbcompare::workload::record::Record>> {
        self.0.find(unique_id).await
    }
    async fn disk_usage(&mut self) -> anyhow::Result<dbcompare::store::DiskUsage> {
        self.0.disk_usage().await
    }
}

impl YcsbStore for NoScans {
    fn ycsb_operation(&self, op: OpKind) -> Option<&'static str> {
        (op != OpKind::Scan)
            .then(|| self.0.ycsb_operation(op))
            .flatten()
    }
    fn ycsb_lacking(&self, _op: OpKind) -> String {
        NO_SCANS.to_string()
    }
    async fn ycsb_reset(&mut self, table: &YcsbTable) -> anyhow::Result<()> {
        self.0.ycsb_reset(table).await
    }
    async fn ycsb_use(&mut self, table: &YcsbTable) -> anyhow::Result<()> {
        self.0.ycsb_use(table).await
    }
    async fn ycsb_insert(&mut self, key: &str, values: &[String]) -> anyhow::Result<()> {
        self.0.ycsb_insert(key, values).await
    }
    async fn ycsb_read(
        &mut self,
        key: &str,
        field: Option<u16>,
    ) -> anyhow::Result<Option<YcsbFields>> {
        self.0.ycsb_read(key, field).await
    }
    async fn ycsb_update(&mut self, key: &str, values: &[(u16, String)]) -> anyhow::Result<()> {
        self.0.ycsb_update(key, values).await
    }
    async fn ycsb_scan(
        &mut self,
        _start: &str,
        _count: u32,
        _field: Option<u16>,
    ) -> anyhow::Result<Vec<(String, YcsbFields)>> {
        anyhow::bail!("no scans here")
    }
}

#[tokio::test]
async fn a_store_without_scans_runs_the_other_workloads_and_says_why_not_e() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = std::sync::Arc::new(sqlite_at(&dir.path().join("y.sqlite")));
    let connect = move || {
        let sqlite = std::sync::Arc::clone(&sqlite);
        async move { sqlite.connect().await.map(NoScans) }
    };
    let workloads = [workload('a'), workload('e'), workload('f')];
    let result = run_once(connect, &workloads, 2).await;
    assert_eq!(result.not_applicable, ["e INSERT", "e SCAN", "e"]);
    for row in &result.not_applicable {
        assert_eq!(
            result.not_applicable_why[row],
            format!("no SCAN: {NO_SCANS}"),
            "{row}"
        );
    }
    // The others ran whole, and nothing of e did.
    let level = Concurrency::new(2).unwrap();
    for w in ["a", "f"] {
        let whole = result.phase_at(PhaseKind::Ycsb, w, level).unwrap();
        assert_eq!((whole.ops, whole.errors), (200, 0), "{w}");
    }
    assert!(
        result.phases.iter().all(|p| !p.size.name.starts_with("e")),
        "{:?}",
        result.phases
    );
}
