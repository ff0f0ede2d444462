//! Faults of server stores: an unreachable server, a server that never answers, a wrong
//! password, a missing database, a local server that cannot start. Each fails its store
//! with a clear message, the other stores still run, the exit code is 1, and no password
//! appears anywhere.

mod common;

use std::ffi::OsStr;
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use dbcompare::catalog::{Durability, StoreKind};
use dbcompare::report::json;
use dbcompare::report::model::{PhaseKind, Report, StoreStatus};
use dbcompare::server::{self, Installation};
use predicates::prelude::PredicateBooleanExt;

struct Run {
    code: i32,
    output: String,
    report: Report,
    files: String,
}

fn run(args: &[&str]) -> Run {
    let out = tempfile::tempdir().unwrap();
    let assert = Command::cargo_bin("dbcompare")
        .unwrap()
        .args(args)
        .args(["--sizes", "micro", "--searches-per-insert", "2", "--out"])
        .arg(out.path())
        .env_remove("DBCOMPARE_POSTGRES_URL")
        .env_remove("DBCOMPARE_MYSQL_URL")
        .env_remove("DBCOMPARE_REDIS_URL")
        .timeout(Duration::from_secs(120))
        .assert();
    let o = assert.get_output();
    let read = |name: &str| std::fs::read_to_string(out.path().join(name)).unwrap();
    Run {
        code: o.status.code().unwrap_or(-1),
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        report: json::parse(&read("run.json")).unwrap(),
        files: read("run.json") + &read("results.md"),
    }
}

fn store<'a>(report: &'a Report, name: &str) -> &'a dbcompare::report::model::StoreResult {
    report.stores.iter().find(|s| s.store == name).unwrap()
}

fn assert_never_shown(run: &Run, secret: &str) {
    assert!(
        !run.output.contains(secret),
        "password in output:\n{}",
        run.output
    );
    assert!(
        !run.files.contains(secret),
        "password in run.json or results.md"
    );
}

#[test]
fn an_unreachable_server_fails_its_store_and_the_others_run() {
    let r = run(&[
        "--store",
        "sqlite,redis",
        "--url",
        "redis=redis://:pw-unreachable@127.0.0.1:1/0",
    ]);
    assert_eq!(r.code, 1, "{}", r.output);
    assert_eq!(store(&r.report, "sqlite").status, StoreStatus::Ok);
    let redis = store(&r.report, "redis");
    assert_eq!(redis.status, StoreStatus::Failed);
    let error = redis.error.as_deref().unwrap();
    assert!(error.contains("127.0.0.1:1"), "{error}");
    assert!(error.contains("redis://:***@127.0.0.1:1/0"), "{error}");
    assert_never_shown(&r, "pw-unreachable");
}

#[test]
fn a_server_that_never_answers_fails_within_the_connect_timeout() {
    // Accepts connections (the kernel does) but never says a word.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let url = format!("postgres=postgres://bench:pw-silent@127.0.0.1:{port}/db");
    let started = Instant::now();
    let r = run(&[
        "--store",
        "postgres",
        "--url",
        &url,
        "--connect-timeout",
        "1",
    ]);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r.code, 1, "{}", r.output);
    let error = store(&r.report, "postgres").error.clone().unwrap();
    assert!(error.contains(&format!("127.0.0.1:{port}")), "{error}");
    assert_never_shown(&r, "pw-silent");
}

#[test]
fn a_wrong_password_shows_the_servers_message_and_never_the_password() {
    let server = common::start(StoreKind::Mysql, Durability::Durable);
    let url = format!(
        "mysql=mysql://root:pw-wrong@127.0.0.1:{}/dbcompare",
        server.port()
    );
    let r = run(&["--store", "mysql", "--url", &url]);
    assert_eq!(r.code, 1, "{}", r.output);
    let error = store(&r.report, "mysql").error.clone().unwrap();
    // Once: the driver's error repeats its source in its own text.
    assert_eq!(error.matches("Access denied").count(), 1, "{error}");
    assert!(error.contains("mysql://root:***@127.0.0.1"), "{error}");
    assert_never_shown(&r, "pw-wrong");
}

#[test]
fn a_missing_database_shows_the_servers_message() {
    let server = common::start(StoreKind::Postgres, Durability::Durable);
    // The server's own password, so that the server gets as far as the database.
    let url = format!(
        "postgres={}",
        server.url().replace("/postgres", "/nosuchdb")
    );
    let r = run(&["--store", "postgres", "--url", &url]);
    assert_eq!(r.code, 1, "{}", r.output);
    let error = store(&r.report, "postgres").error.clone().unwrap();
    assert!(error.contains("\"nosuchdb\" does not exist"), "{error}");
    assert_never_shown(&r, server.password());
}

#[test]
fn a_url_for_another_store_is_refused_before_anything_starts() {
    let out = tempfile::tempdir().unwrap();
    Command::cargo_bin("dbcompare")
        .unwrap()
        .args([
            "--store",
            "redis",
            "--url",
            "redis=postgres://u:pw-x@h/db",
            "--out",
        ])
        .arg(out.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("that is a postgres URL"))
        .stderr(predicates::str::contains("pw-x").not());
    assert!(!out.path().join("run.json").exists());
}

/// A fake redis-server that writes a fatal error to the log its config names, then exits.
///
/// The executable is written by a child process (`install`), never through a file descriptor
/// of this test process: other tests fork servers concurrently, and a child forked while this
/// process held the script open for writing would make executing it fail with "Text file
/// busy" (ETXTBSY) until that child execs.
fn failing_installation(dir: &Path) -> Installation {
    let source = dir.join("fake-redis-server.sh");
    let script = dir.join("fake-redis-server");
    std::fs::write(
        &source,
        "#!/bin/sh\nlog=$(sed -n 's/^logfile //p' \"$1\")\necho 'FATAL CONFIG FILE ERROR (fake)' >> \"$log\"\nexit 1\n",
    )
    .unwrap();
    let installed = std::process::Command::new("install")
        .arg("-m")
        .arg("755")
        .arg(&source)
        .arg(&script)
        .status()
        .unwrap();
    assert!(
        installed.success(),
        "install {}: {installed}",
        script.display()
    );
    Installation {
        server: script,
        tools: Vec::new(),
        version: "fake".into(),
    }
}

#[test]
fn a_server_that_fails_to_start_shows_its_log_and_leaves_nothing() {
    let scratch = tempfile::tempdir().unwrap();
    // Its own directory for the server's: other tests start servers at the same time.
    let under = tempfile::tempdir().unwrap();
    let dirs = server::DataDirs {
        under: under.path().to_path_buf(),
        keep: false,
    };
    let error = server::start(
        StoreKind::Redis,
        &failing_installation(scratch.path()),
        Durability::Durable,
        &dirs,
        server::Serve::default(),
    )
    .err()
    .expect("the fake server cannot start");
    let message = format!("{error:#}");
    assert!(message.contains("exited"), "{message}");
    assert!(
        message.contains("FATAL CONFIG FILE ERROR (fake)"),
        "{message}"
    );
    let leftovers = common::dirs_in(under.path(), "redis");
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn redis_dirs() -> Vec<std::path::PathBuf> {
    common::dirs_of("redis")
}

/// Ctrl-C (or SIGTERM) once (stop after the current operation) or twice (stop now): either
/// way exit 128 and the signal's number and no server process or directory is left; once,
/// the results say which signal stopped the run, and the store whose turn never came is in
/// them, skipped.
fn interrupt_a_local_server_run(signal: i32, signals: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let args = [
        "--verbose",
        "--store",
        "redis,sqlite",
        "--sizes",
        "200000",
        "--out",
    ]
    .map(OsStr::new);
    let (mut child, lines) = common::spawn_until_in(
        tmp.path(),
        args.into_iter().chain([out.path().as_os_str()]),
        "initial database size",
    );
    let server_dir = common::dirs_in(tmp.path(), "redis")
        .into_iter()
        .find(|d| common::processes_in(d).len() == 1)
        .expect("the running server's directory");
    for _ in 0..signals {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, signal) };
        std::thread::sleep(Duration::from_millis(20));
    }
    let _rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert_eq!(child.wait().unwrap().code(), Some(128 + signal));
    let survivors: Vec<String> = common::processes_in(&server_dir)
        .into_iter()
        .map(|pid| std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default())
        .collect();
    assert!(
        survivors.is_empty(),
        "after {signals} signal(s) {signal}, the server survived: {survivors:?}"
    );
    assert!(!server_dir.exists(), "{} survived", server_dir.display());
    if signals == 1 {
        let report =
            json::parse(&std::fs::read_to_string(out.path().join("run.json")).unwrap()).unwrap();
        assert_eq!(store(&report, "redis").status, StoreStatus::Interrupted);
        let by = if signal == libc::SIGTERM {
            "SIGTERM"
        } else {
            "Ctrl-C"
        };
        assert_eq!(report.stopped_by.as_deref(), Some(by));
        let md = std::fs::read_to_string(out.path().join("results.md")).unwrap();
        assert!(
            md.contains(&format!("**INTERRUPTED RUN**: stopped by {by};")),
            "{md}"
        );
        let sqlite = store(&report, "sqlite");
        assert_eq!(sqlite.status, StoreStatus::Skipped);
        assert_eq!(
            sqlite.error.as_deref(),
            Some("the run was interrupted before its turn")
        );
        let csv = std::fs::read_to_string(out.path().join("results.csv")).unwrap();
        assert!(
            csv.lines()
                .any(|l| l.starts_with("classic,sqlite,skipped,")),
            "{csv}"
        );
    }
}

/// One test, so that the two runs' servers cannot be mistaken for each other.
#[test]
fn ctrl_c_once_or_twice_stops_local_servers_and_deletes_their_directories() {
    interrupt_a_local_server_run(libc::SIGINT, 1);
    interrupt_a_local_server_run(libc::SIGINT, 2);
    // A service manager's SIGTERM is handled like Ctrl-C, and named.
    interrupt_a_local_server_run(libc::SIGTERM, 1);
    interrupt_a_local_server_run(libc::SIGTERM, 2);
}

/// (The three stores are built in on request: `--features all-stores`.)
#[cfg(feature = "all-stores")]
#[test]
fn unreachable_document_stores_fail_with_their_host_and_the_others_run() {
    let r = run(&[
        "--store",
        "sqlite,mongodb,aerospike,couchbase",
        "--url",
        "mongodb=mongodb://bob:pw-mongo@127.0.0.1:1/dbcompare",
        "--url",
        "aerospike=aerospike://bob:pw-aero@127.0.0.1:1/test",
        "--url",
        "couchbase=couchbase://bob:pw-couch@127.0.0.1:1/bench",
        "--connect-timeout",
        "3",
    ]);
    assert_eq!(r.code, 1, "{}", r.output);
    assert_eq!(store(&r.report, "sqlite").status, StoreStatus::Ok);
    for name in ["mongodb", "aerospike", "couchbase"] {
        let s = store(&r.report, name);
        assert_eq!(s.status, StoreStatus::Failed, "{name}");
        let error = s.error.as_deref().unwrap();
        assert!(error.contains("127.0.0.1:1"), "{name}: {error}");
    }
    for secret in ["pw-mongo", "pw-aero", "pw-couch"] {
        assert_never_shown(&r, secret);
    }
}

/// (The three stores are built in on request: `--features all-stores`.)
#[cfg(feature = "all-stores")]
#[test]
fn silent_document_stores_fail_within_the_connect_timeout() {
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let started = Instant::now();
    let r = run(&[
        "--store",
        "mongodb,aerospike,couchbase",
        "--url",
        &format!("mongodb=mongodb://127.0.0.1:{port}/dbcompare"),
        "--url",
        &format!("aerospike=aerospike://127.0.0.1:{port}/test"),
        "--url",
        &format!("couchbase=couchbase://bob:pw@127.0.0.1:{port}/bench"),
        "--connect-timeout",
        "1",
    ]);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r.code, 1, "{}", r.output);
    for name in ["mongodb", "aerospike", "couchbase"] {
        let s = store(&r.report, name);
        assert_eq!(s.status, StoreStatus::Failed, "{name}: {:?}", s.error);
        assert!(
            s.error
                .as_deref()
                .unwrap()
                .contains(&format!("127.0.0.1:{port}")),
            "{name}: {:?}",
            s.error
        );
    }
}

/// Runs dbcompare with `args` on a real Redis server, freezes the server (SIGSTOP) once
/// dbcompare printed a line starting with `trigger`, calls `then` with dbcompare's pid,
/// checks that dbcompare ended within 30 s of the freeze, and returns its exit code and
/// its report.
fn freeze_the_server_mid_run(
    args: &[&str],
    trigger: &str,
    then: impl FnOnce(u32),
) -> (i32, Report) {
    let server = common::start(StoreKind::Redis, Durability::Durable);
    let pid = server.pid().expect("a local server has a pid");
    let out = tempfile::tempdir().unwrap();
    let url = format!("redis={}", server.url());
    let all = ["--store", "redis", "--url", &url]
        .into_iter()
        .chain(args.iter().copied())
        .map(OsStr::new)
        .chain([OsStr::new("--out"), out.path().as_os_str()]);
    let (mut child, lines) = common::spawn_until(all, trigger);
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling the server this test started.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let frozen = Instant::now();
    then(child.id());
    // A run that never ends fails the test rather than hanging it.
    let ended = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (flag, dbcompare) = (ended.clone(), child.id() as i32);
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(90));
        if !flag.load(std::sync::atomic::Ordering::SeqCst) {
            // SAFETY: our own child, not yet waited for (so its pid is still its own).
            unsafe { libc::kill(dbcompare, libc::SIGKILL) };
        }
    });
    let _rest: Vec<String> = lines.map_while(Result::ok).collect();
    let code = child.wait().unwrap().code().unwrap_or(-1);
    ended.store(true, std::sync::atomic::Ordering::SeqCst);
    let took = frozen.elapsed();
    // SAFETY: as above; the server is then stopped and deleted by its guard.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let report = json::parse(&std::fs::read_to_string(out.path().join("run.json")).unwrap())
        .expect("the run wrote its report");
    assert!(
        took < Duration::from_secs(30),
        "ended {took:?} after the freeze"
    );
    (code, report)
}

#[test]
fn a_server_that_stops_answering_mid_run_fails_its_store_after_the_stall_timeout() {
    // Short runs, many of them: the freeze falls in the second run or a later one.
    let args = [
        "--sizes",
        "micro",
        "--searches-per-insert",
        "10",
        "--warmup-runs",
        "0",
        "--runs",
        "100000",
        "--stall-timeout",
        "2",
        "--verbose",
    ];
    let (code, report) = freeze_the_server_mid_run(&args, "-- run 2/", |_| {});
    assert_eq!(code, 1);
    let redis = store(&report, "redis");
    assert_eq!(redis.status, StoreStatus::Failed);
    let error = redis.error.as_deref().unwrap();
    assert!(error.contains("no operation finished for 2s"), "{error}");
    assert!(error.contains("--stall-timeout 2"), "{error}");
    // The phases of the runs before the freeze are kept, with every answer right.
    for (kind, ops) in [(PhaseKind::Insert, 100), (PhaseKind::Search, 1000)] {
        let phase = redis
            .phases
            .iter()
            .find(|p| p.kind == kind)
            .unwrap_or_else(|| panic!("no {kind:?} phase kept: {:?}", redis.phases));
        assert!(phase.ops >= ops, "{kind:?}: {} ops", phase.ops);
        assert_eq!(phase.errors, 0, "{kind:?}");
    }
}

#[test]
fn a_stall_in_a_concurrent_phase_on_several_event_loops_is_abandoned_too() {
    // Searches dominate each run (100 per insert), four tasks on two client loops: the
    // freeze most likely catches tasks waiting on both loops, which must all be abandoned
    // and the loops' threads ended for the run to finish.
    let args = [
        "--sizes",
        "micro",
        "--searches-per-insert",
        "100",
        "--concurrency",
        "4",
        "--client-threads",
        "2",
        "--warmup-runs",
        "0",
        "--runs",
        "100000",
        "--stall-timeout",
        "2",
        "--verbose",
    ];
    let (code, report) = freeze_the_server_mid_run(&args, "-- run 2/", |_| {});
    assert_eq!(code, 1);
    let redis = store(&report, "redis");
    assert_eq!(redis.status, StoreStatus::Failed);
    let error = redis.error.as_deref().unwrap();
    assert!(error.contains("no operation finished for 2s"), "{error}");
    let search = redis
        .phases
        .iter()
        .find(|p| p.kind == PhaseKind::Search && p.concurrency == 4)
        .unwrap_or_else(|| panic!("no search phase kept: {:?}", redis.phases));
    assert!(search.ops >= 10_000, "{} ops", search.ops);
    assert_eq!(search.errors, 0);
}

#[test]
fn ctrl_c_during_a_stalled_operation_ends_the_run_within_seconds() {
    let args = [
        "--sizes",
        "200000",
        "--warmup-runs",
        "0",
        "--runs",
        "1",
        "--stall-timeout",
        "0",
        "--verbose",
    ];
    let trigger = "initial database size";
    let (code, report) = freeze_the_server_mid_run(&args, trigger, |dbcompare| {
        std::thread::sleep(Duration::from_millis(500));
        // SAFETY: signalling our own child.
        unsafe { libc::kill(dbcompare as i32, libc::SIGINT) };
    });
    assert_eq!(code, 130);
    let redis = store(&report, "redis");
    assert_eq!(redis.status, StoreStatus::Interrupted);
    let error = redis.error.as_deref().unwrap();
    assert!(error.contains("did not end"), "{error}");
}

/// `dbcompare server`: the URL of a server that answers, kept until Ctrl-C, which stops it,
/// deletes its directory and says so.
#[test]
fn the_server_command_serves_until_ctrl_c_then_leaves_nothing() {
    use std::io::{Read, Write};
    let before = redis_dirs();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbcompare"))
        .args(["server", "redis"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut url = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut url).unwrap();
    let url = url.trim();
    assert!(url.starts_with("redis://"), "{url}");
    let address = url.rsplit_once('@').map_or(url, |(_, a)| a);
    let address = address
        .trim_start_matches("redis://")
        .split('/')
        .next()
        .unwrap();
    let password = url
        .split_once("://:")
        .and_then(|(_, rest)| rest.split_once('@'))
        .map(|(pw, _)| pw);
    let mut socket = std::net::TcpStream::connect(address).unwrap();
    if let Some(pw) = password {
        write!(socket, "AUTH {pw}\r\n").unwrap();
    }
    socket.write_all(b"PING\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let mut answer = [0u8; 64];
    let n = socket.read(&mut answer).unwrap();
    assert!(
        String::from_utf8_lossy(&answer[..n]).contains("PONG"),
        "{}",
        String::from_utf8_lossy(&answer[..n])
    );
    // This server's directory (other tests start servers at the same time): its port's.
    let port = address.rsplit_once(':').unwrap().1;
    let dir = redis_dirs()
        .into_iter()
        .filter(|d| !before.contains(d))
        .find(|d| {
            std::fs::read_to_string(d.join("redis.conf"))
                .is_ok_and(|c| c.lines().any(|l| l == format!("port {port}")))
        })
        .expect("the server's directory");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("stopped the redis server and deleted its directory"),
        "{stderr}"
    );
    assert!(!dir.exists(), "{} survived", dir.display());
}

/// A `--sqlite-path` file that is not a database fails SQLite naming the file and the flag.
#[test]
fn a_sqlite_path_that_is_not_a_database_names_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "not a database, only words that fill a first page").unwrap();
    let r = run(&[
        "--store",
        "sqlite",
        "--no-floor",
        "--warmup-runs",
        "0",
        "--runs",
        "1",
        "--sqlite-path",
        file.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{}", r.output);
    let error = store(&r.report, "sqlite").error.clone().unwrap();
    assert!(
        error.contains(&format!("{} (--sqlite-path)", file.display())),
        "{error}"
    );
}

/// The processes whose command line names `dir`.
fn processes_naming(dir: &Path) -> Vec<String> {
    let dir = dir.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            (cmdline.contains(&dir) && server::process_alive(pid)).then_some(cmdline)
        })
        .collect()
}

/// Ctrl-C while a throw-away server's data directory is being initialised (MariaDB's
/// install script, PostgreSQL's initdb) cuts the initialisation short: exit 130 at once,
/// said to be an interruption, with no process and no directory left.
#[test]
fn ctrl_c_during_a_servers_initialisation_stops_it_and_leaves_nothing() {
    let results = tempfile::tempdir().unwrap();
    let run = |kind: &str| {
        // A store with settings of its own is started before the run's first phase.
        let set = format!("{kind}:max_connections=150");
        [
            "run", "--store", kind, "--set", &set, "--sizes", "micro", "--out",
        ]
        .map(String::from)
        .into_iter()
        .chain([results.path().display().to_string()])
        .collect::<Vec<_>>()
    };
    let server = |kind: &str| vec!["server".to_string(), kind.to_string()];
    for (kind, args) in [
        ("mysql", server("mysql")),
        ("postgres", server("postgres")),
        ("postgres", run("postgres")),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbcompare"))
            .args(&args)
            .env("TMPDIR", tmp.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The data directory appears when the initialisation starts.
        let deadline = Instant::now() + Duration::from_secs(60);
        while !common::dirs_in(tmp.path(), kind)
            .iter()
            .any(|d| d.join("data").exists())
        {
            assert!(Instant::now() < deadline, "{kind}: no data directory");
            std::thread::sleep(Duration::from_millis(5));
        }
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{args:?}: {stderr}");
        if args[0] == "server" {
            assert!(
                stderr.contains(&format!("the {kind} server's start was interrupted")),
                "{kind}: {stderr}"
            );
        }
        assert!(!stderr.contains("error:"), "{args:?}: {stderr}");
        if args[0] == "run" {
            let saved = std::fs::read_to_string(results.path().join("run.json")).unwrap();
            let report = json::parse(&saved).unwrap();
            assert_eq!(report.stopped_by.as_deref(), Some("Ctrl-C"));
        }
        assert_eq!(processes_naming(tmp.path()), Vec::<String>::new(), "{kind}");
        assert_eq!(
            common::dirs_in(tmp.path(), kind),
            Vec::<std::path::PathBuf>::new(),
            "{kind}"
        );
    }
}

/// A server given by URL is used as it is: asked for relaxed, a durable one runs durable,
/// and every report says so beside its figures.
#[test]
fn a_url_server_in_another_mode_than_asked_is_a_warning() {
    let server = common::start(StoreKind::Redis, Durability::Durable);
    let url = format!("redis={}", server.url());
    let r = run(&[
        "--store",
        "redis",
        "--url",
        &url,
        "--durability",
        "relaxed",
        "--no-floor",
    ]);
    assert_eq!(r.code, 0, "{}", r.output);
    let said = "it ran durable where relaxed was asked (a server given by URL is used as it is)";
    assert!(r.output.contains(said), "{}", r.output);
    assert!(r.files.contains(said), "{}", r.files);
    let info = store(&r.report, "redis").info.as_ref().unwrap();
    assert_eq!(info.durability, "durable");
    assert_never_shown(&r, server.password());
    // Settings of its own make the mode the user's: no warning.
    let r = run(&[
        "--store",
        "redis",
        "--url",
        &url,
        "--set",
        "redis:appendfsync=always",
        "--durability",
        "relaxed",
        "--no-floor",
    ]);
    assert_eq!(r.code, 0, "{}", r.output);
    assert!(!r.output.contains("was asked"), "{}", r.output);
}
