//! A run that survives what happens to long benchmarks: dbcompare itself killed with
//! SIGKILL in the middle of a phase (every finished phase is on disk, and the server it left
//! is removed by the next `dbcompare clean`), two runs given the same `--out` (the second
//! is refused), two runs at once with different `--out` (no collision), and a full disk
//! under `--data-dir` (that store fails with the server's own error, the others run).
//! Each against real throw-away servers.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use dbcompare::report::json;
use dbcompare::report::model::{PhaseKind, Report, RunStatus, StoreResult, StoreStatus};

fn dbcompare() -> Command {
    let mut c = Command::cargo_bin("dbcompare").unwrap();
    c.env_remove("DBCOMPARE_POSTGRES_URL")
        .env_remove("DBCOMPARE_MYSQL_URL")
        .env_remove("DBCOMPARE_REDIS_URL")
        .timeout(Duration::from_secs(300));
    c
}

/// One measured run, no warm-up, no floor: the shortest run with every phase.
const ONE_RUN: [&str; 5] = ["--runs", "1", "--warmup-runs", "0", "--no-floor"];

fn store<'a>(report: &'a Report, name: &str) -> &'a StoreResult {
    report
        .stores
        .iter()
        .find(|s| s.store == name)
        .unwrap_or_else(|| panic!("{name} is not in the report"))
}

fn phases(result: &StoreResult) -> Vec<(PhaseKind, String)> {
    result
        .phases
        .iter()
        .map(|p| (p.kind, p.size.name.clone()))
        .collect()
}

fn read_report(out: &Path) -> Option<Report> {
    json::parse(&std::fs::read_to_string(out.join("run.json")).ok()?).ok()
}

fn schema_errors(out: &Path) -> Vec<String> {
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    common::schema_validator()
        .iter_errors(&value)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn a_kill_9_mid_phase_keeps_every_finished_phase_and_clean_removes_the_server_it_left() {
    // A data directory of this test's own: the runs of the other tests clean what killed
    // runs left in the shared temporary directory when they start.
    let data = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let args = [
        "--verbose",
        "--store",
        "redis",
        "--sizes",
        "micro,30000",
        "--searches-per-insert",
        "2",
    ];
    let (mut child, _lines) = common::spawn_until(
        args.iter()
            .chain(&ONE_RUN)
            .map(std::ffi::OsStr::new)
            .chain([
                "--data-dir".as_ref(),
                data.path().as_os_str(),
                "--out".as_ref(),
                out.path().as_os_str(),
            ]),
        "SEARCH micro",
    );
    // The line is printed as the phase ends; the checkpoint follows it.
    let deadline = Instant::now() + Duration::from_secs(30);
    let searched = |r: &Report| {
        r.stores.first().is_some_and(|s| {
            s.phases
                .iter()
                .any(|p| p.kind == PhaseKind::Search && p.size.name == "micro")
        })
    };
    while !read_report(out.path()).is_some_and(|r| searched(&r)) {
        assert!(
            Instant::now() < deadline,
            "no checkpoint after SEARCH micro"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // This run's server: its directory's marker names this dbcompare.
    let owner = format!("owner_pid={}\n", child.id());
    let server_dir = common::dirs_in(data.path(), "redis")
        .into_iter()
        .find(|d| {
            std::fs::read_to_string(d.join(dbcompare::server::leftovers::MARKER))
                .is_ok_and(|m| m.contains(&owner))
        })
        .expect("the running server's directory");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();

    // What it left: valid JSON of the current schema, every finished phase, and the store
    // marked as not finished.
    let report = read_report(out.path()).expect("run.json parses after the kill");
    assert_eq!(schema_errors(out.path()), Vec::<String>::new());
    assert_eq!(report.status, RunStatus::Partial);
    let redis = store(&report, "redis");
    assert_eq!(redis.status, StoreStatus::Interrupted);
    assert!(
        redis
            .error
            .as_deref()
            .unwrap_or("")
            .contains("not finished"),
        "{:?}",
        redis.error
    );
    assert_eq!(
        phases(redis),
        [
            (PhaseKind::Insert, "micro".to_string()),
            (PhaseKind::Insert, "30000".to_string()),
            (PhaseKind::Search, "micro".to_string()),
        ]
    );
    assert!(redis.phases.iter().all(|p| p.ops > 0));
    let md = std::fs::read_to_string(out.path().join("results.md")).unwrap();
    assert!(md.contains("not finished"), "results.md:\n{md}");
    let rendered = dbcompare()
        .args(["report", "--format", "text"])
        .arg(out.path().join("run.json"))
        .assert()
        .success();
    let text = String::from_utf8_lossy(&rendered.get_output().stdout).into_owned();
    assert!(text.contains("INTERRUPTED"), "{text}");

    // The server outlived its dbcompare; `clean` stops it and deletes its directory.
    assert!(
        !common::processes_in(&server_dir).is_empty(),
        "the server should outlive a kill -9 of dbcompare"
    );
    let cleaned = dbcompare()
        .args(["clean", "--data-dir"])
        .arg(data.path())
        .assert()
        .success();
    let said = String::from_utf8_lossy(&cleaned.get_output().stdout).into_owned();
    assert!(
        said.contains("stopped a redis server") && said.contains(&*server_dir.to_string_lossy()),
        "{said}"
    );
    assert!(
        common::processes_in(&server_dir).is_empty(),
        "still running"
    );
    assert!(!server_dir.exists(), "{} survived", server_dir.display());
    let again = dbcompare()
        .args(["clean", "--data-dir"])
        .arg(data.path())
        .assert()
        .success();
    let said = String::from_utf8_lossy(&again.get_output().stdout).into_owned();
    assert!(!said.contains(&*server_dir.to_string_lossy()), "{said}");
    // A directory that is not there (a typo) is a usage error, not "nothing to clean".
    let missing = dbcompare()
        .args(["clean", "--data-dir"])
        .arg(data.path().join("not-there"))
        .assert()
        .code(2);
    let said = String::from_utf8_lossy(&missing.get_output().stderr).into_owned();
    assert!(said.contains("not an existing directory"), "{said}");
}

#[test]
fn a_second_run_on_the_same_out_is_refused_and_runs_on_different_outs_both_finish() {
    let shared = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let first_args = [
        "--verbose",
        "--store",
        "redis",
        "--sizes",
        "micro,tiny",
        "--searches-per-insert",
        "2",
    ];
    let (mut first, lines) = common::spawn_until(
        first_args
            .iter()
            .chain(&ONE_RUN)
            .map(std::ffi::OsStr::new)
            .chain(["--out".as_ref(), shared.path().as_os_str()]),
        "initial database size",
    );
    // Held still while the others run, so that it is surely still going.
    // SAFETY: signalling our own child.
    unsafe { libc::kill(first.id() as i32, libc::SIGSTOP) };
    let refused = dbcompare()
        .args(["--store", "sqlite", "--sizes", "micro", "--out"])
        .arg(shared.path())
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        stderr.contains("another dbcompare run") && stderr.contains(&first.id().to_string()),
        "{stderr}"
    );
    // Meanwhile a second Redis run with its own --out: its own port and directory.
    dbcompare()
        .args([
            "--store",
            "redis",
            "--sizes",
            "micro",
            "--searches-per-insert",
            "2",
        ])
        .args(ONE_RUN)
        .arg("--out")
        .arg(other.path())
        .assert()
        .success();
    // SAFETY: as above.
    unsafe { libc::kill(first.id() as i32, libc::SIGCONT) };
    let _rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert_eq!(first.wait().unwrap().code(), Some(0));
    for out in [shared.path(), other.path()] {
        let report = read_report(out).unwrap();
        assert_eq!(report.status, RunStatus::Complete);
        assert_eq!(store(&report, "redis").status, StoreStatus::Ok);
        assert!(!out.join(dbcompare::report::LOCK_FILE).exists());
    }
    let first_report = read_report(shared.path()).unwrap();
    assert_eq!(
        first_report.stores.len(),
        1,
        "the refused run wrote nothing"
    );
}

/// A small tmpfs as `--data-dir`: PostgreSQL's data directory does not fit, so its store
/// fails with the server's own error; Redis and SQLite fit and run; the results go to
/// `--out` on another disk; nothing is left on the tmpfs.
#[test]
fn a_full_disk_fails_its_store_with_the_servers_error_and_the_others_run() {
    let mount = tempfile::tempdir().unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=24m", "tmpfs"])
        .arg(mount.path())
        .status()
        .unwrap();
    assert!(
        mounted.success(),
        "mounting a tmpfs (the tests run as root, as CI does)"
    );
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(mount.path());
    let out = tempfile::tempdir().unwrap();
    let run = dbcompare()
        .args(["--store", "postgres,redis,sqlite", "--sizes", "micro"])
        .args(["--searches-per-insert", "2"])
        .args(ONE_RUN)
        .arg("--data-dir")
        .arg(mount.path())
        .arg("--out")
        .arg(out.path())
        .assert()
        .code(1);
    let output = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    let report = read_report(out.path()).expect("results written to --out");
    assert_eq!(report.status, RunStatus::Complete);
    let postgres = store(&report, "postgres");
    assert_eq!(postgres.status, StoreStatus::Failed, "{output}");
    let error = postgres.error.as_deref().unwrap();
    assert!(error.contains("No space left on device"), "{error}");
    for name in ["redis", "sqlite"] {
        let s = store(&report, name);
        assert_eq!(s.status, StoreStatus::Ok, "{name}: {:?}", s.error);
        let data_dir = s.deployment.as_ref().and_then(|d| d.data_dir.as_deref());
        if name == "redis" {
            assert!(
                data_dir.is_some_and(|d| d.starts_with(&*mount.path().to_string_lossy())),
                "redis ran under --data-dir: {data_dir:?}"
            );
        }
    }
    let left: Vec<_> = std::fs::read_dir(mount.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left on the data disk: {left:?}");
}

#[test]
fn a_data_dir_that_does_not_exist_is_a_usage_error() {
    let missing = tempfile::tempdir().unwrap().path().join("missing");
    let run = dbcompare()
        .args(["--store", "sqlite", "--data-dir"])
        .arg(&missing)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    assert!(
        stderr.contains("--data-dir") && stderr.contains("not an existing directory"),
        "{stderr}"
    );
}

/// A kill during a warm-up run: the warm-up's phases are not measured ones, so none shows.
#[test]
fn a_kill_9_during_the_warm_up_leaves_no_warm_up_figures() {
    let out = tempfile::tempdir().unwrap();
    let args = [
        "--verbose",
        "--store",
        "sqlite",
        "--sizes",
        "micro,30000",
        "--searches-per-insert",
        "2",
        "--warmup-runs",
        "1",
        "--runs",
        "1",
        "--no-floor",
    ];
    let data = tempfile::tempdir().unwrap();
    let (mut child, _lines) = common::spawn_until(
        args.iter().map(std::ffi::OsStr::new).chain([
            "--data-dir".as_ref(),
            data.path().as_os_str(),
            "--out".as_ref(),
            out.path().as_os_str(),
        ]),
        "INSERT micro",
    );
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    if let Some(report) = read_report(out.path()) {
        let phases: Vec<_> = report.stores.iter().flat_map(phases).collect();
        assert!(phases.is_empty(), "warm-up figures shown: {phases:?}");
    }
    // The SQLite file's directory it left is cleaned like a server's.
    let owner = format!("owner_pid={}\n", child.id());
    let left = || {
        common::dirs_in(data.path(), "sqlite")
            .into_iter()
            .find(|d| {
                std::fs::read_to_string(d.join(dbcompare::server::leftovers::MARKER))
                    .is_ok_and(|m| m.contains(&owner))
            })
    };
    let dir = left().expect("the killed run's SQLite directory");
    dbcompare()
        .args(["clean", "--data-dir"])
        .arg(data.path())
        .assert()
        .success();
    assert!(
        !dir.exists() && left().is_none(),
        "{} survived",
        dir.display()
    );
}
