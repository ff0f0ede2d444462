//! The plan's resolution from command lines and environments.

use super::*;
use crate::catalog::StoreKind;
use crate::cli::Cli;
use crate::server::Installation;
use clap::Parser;

fn args(argv: &[&str]) -> RunArgs {
    let mut full = vec!["dbcompare"];
    full.extend_from_slice(argv);
    Cli::parse_from(full).run
}

fn installed(kind: StoreKind) -> Option<Installation> {
    (kind == StoreKind::Redis).then(|| Installation {
        server: "/opt/redis-server".into(),
        tools: Vec::new(),
        version: "Redis server v=7".into(),
    })
}

fn no_env(_: &str) -> Option<String> {
    None
}

/// Where the plan runs its store of `kind`.
fn target_of(plan: &RunPlan, kind: StoreKind) -> &Target {
    &plan
        .stores
        .iter()
        .find(|s| s.id.kind == kind)
        .unwrap()
        .target
}

#[test]
fn all_keeps_unavailable_stores_to_skip_them() {
    let plan = RunPlan::resolve(&args(&[]), &no_env, &installed).unwrap();
    let kinds: Vec<_> = plan.stores.iter().map(|s| s.id.kind).collect();
    assert_eq!(kinds, StoreKind::all());
    assert_eq!(plan.stores[0].target, Target::Embedded);
    assert!(
        matches!(plan.stores[1].target, Target::Unavailable(ref why) if why.contains("provisioning/install.sh postgres"))
    );
    let of = |kind: StoreKind| target_of(&plan, kind);
    assert!(matches!(of(StoreKind::Redis), Target::Local(_)));
    // Without a URL, or (in a build without it) without its cargo feature.
    let fix = if cfg!(feature = "mongodb") {
        "DBCOMPARE_MONGODB_URL"
    } else {
        "--features mongodb"
    };
    assert!(
        matches!(of(StoreKind::Mongodb), Target::Unavailable(why) if why.contains(fix)),
        "{:?}",
        of(StoreKind::Mongodb)
    );
}

/// In a build without Couchbase: naming it, or giving its URL, is a usage error that says
/// how to build it; its variable in the environment stops nothing else
/// (`cargo test --lib` without features runs this).
#[cfg(not(feature = "couchbase"))]
#[test]
fn a_store_not_built_is_refused_by_name_and_by_url_and_its_variable_ignored() {
    let e = RunPlan::resolve(&args(&["--store", "couchbase"]), &no_env, &installed).unwrap_err();
    assert!(e.0.contains("--features couchbase"), "{e}");
    let url = ["--store", "redis", "--url", "couchbase=couchbase://h/b"];
    let e = RunPlan::resolve(&args(&url), &no_env, &installed).unwrap_err();
    assert!(e.0.contains("--features couchbase"), "{e}");
    let env =
        |name: &str| (name == "DBCOMPARE_COUCHBASE_URL").then(|| "couchbase://u:p@h/b".to_string());
    let plan = RunPlan::resolve(&args(&["--store", "redis"]), &env, &installed).unwrap();
    assert!(matches!(plan.stores[0].target, Target::Local(_)));
}

#[test]
fn the_stall_timeout_leaves_room_for_an_open_loop_schedule() {
    let stall = |argv: &[&str]| {
        RunPlan::resolve(&args(argv), &no_env, &installed)
            .unwrap()
            .stall_timeout
    };
    assert_eq!(stall(&[]), Some(Duration::from_secs(300)));
    assert_eq!(stall(&["--stall-timeout", "0"]), None);
    assert_eq!(
        stall(&["--stall-timeout", "2", "--rate", "1000"]),
        Some(Duration::from_secs(2))
    );
    // One operation a second: four seconds at least between looks.
    assert_eq!(
        stall(&["--stall-timeout", "1", "--rate", "1"]),
        Some(Duration::from_secs(4))
    );
}

#[test]
fn client_threads_default_to_a_loop_per_core_for_stores_with_a_thread_per_connection() {
    let plan = |argv: &[&str]| RunPlan::resolve(&args(argv), &no_env, &installed).unwrap();
    let threads = |argv: &[&str]| {
        let plan = plan(argv);
        plan.client_threads(plan.stores[0].id.kind)
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(threads(&["--store", "redis", "--concurrency", "1,8"]), 1);
    assert_eq!(threads(&["--store", "sqlite"]), 1);
    assert_eq!(
        threads(&["--store", "sqlite", "--concurrency", "1,8"]),
        cores.min(8)
    );
    assert_eq!(
        threads(&["--store", "sqlite", "--suite", "driver"]),
        cores.min(16)
    );
    for url in ["postgres=postgres://u@h/db", "mysql=mysql://u@h/db"] {
        let store = url.split('=').next().unwrap();
        let at = |levels: &str| threads(&["--store", store, "--url", url, "--concurrency", levels]);
        assert_eq!(at("1"), 1, "{store}");
        assert_eq!(at("1,8"), cores.min(8), "{store}");
    }
    // One run, each store its own; the report records them by store, not in the plan.
    let both = plan(&["--store", "sqlite,redis", "--concurrency", "8"]);
    let each: Vec<usize> = both
        .stores
        .iter()
        .map(|s| both.client_threads(s.id.kind))
        .collect();
    assert_eq!(each, [cores.min(8), 1]);
    assert_eq!(both.summary().client_threads, None);
    let given = [
        "--store",
        "sqlite",
        "--concurrency",
        "8",
        "--client-threads",
        "3",
    ];
    assert_eq!(threads(&given), 3);
    assert_eq!(plan(&given).summary().client_threads, Some(3));
    assert_eq!(threads(&["--store", "redis", "--suite", "pool"]), 1);
    let pool = [
        "--store",
        "redis",
        "--suite",
        "pool",
        "--client-threads",
        "3",
    ];
    let e = RunPlan::resolve(&args(&pool), &no_env, &installed).unwrap_err();
    assert!(e.to_string().contains("one event loop"), "{e}");
}

#[test]
fn a_named_store_that_cannot_run_is_a_usage_error() {
    let e = RunPlan::resolve(&args(&["--store", "mysql"]), &no_env, &installed).unwrap_err();
    assert!(e.0.contains("provisioning/install.sh mysql"), "{e}");
}

#[test]
fn urls_come_from_flags_then_environment() {
    let env =
        |name: &str| (name == "DBCOMPARE_POSTGRES_URL").then(|| "postgres://env@h1/db".to_string());
    let plan = RunPlan::resolve(&args(&["--store", "postgres"]), &env, &installed).unwrap();
    assert!(
        matches!(&plan.stores[0].target, Target::Url(u) if u.masked() == "postgres://env@h1/db")
    );
    let plan = RunPlan::resolve(
        &args(&[
            "--store",
            "postgres",
            "--url",
            "postgres=postgres://u:pw@h2/db",
        ]),
        &env,
        &installed,
    )
    .unwrap();
    assert!(matches!(&plan.stores[0].target, Target::Url(u) if u.address() == "h2:5432"));
    assert_eq!(plan.secrets(), vec!["pw".to_string()]);
}

#[test]
fn bad_urls_are_usage_errors_that_hide_passwords() {
    let e = RunPlan::resolve(
        &args(&["--url", "postgres=mysql://u:topsecret@h/db"]),
        &no_env,
        &installed,
    )
    .unwrap_err()
    .0;
    assert!(
        e.contains("that is a mysql URL") && !e.contains("topsecret"),
        "{e}"
    );
    let e = RunPlan::resolve(&args(&["--url", "nosuch=redis://h"]), &no_env, &installed)
        .unwrap_err()
        .0;
    assert!(e.contains("unknown store 'nosuch'"), "{e}");
    let e = RunPlan::resolve(
        &args(&["--url", "redis://:topsecret@h"]),
        &no_env,
        &installed,
    )
    .unwrap_err()
    .0;
    assert!(
        e.contains("expected STORE=URL") && !e.contains("topsecret"),
        "{e}"
    );
    let env = |_: &str| Some("postgres://u:topsecret@".to_string());
    let e = RunPlan::resolve(&args(&[]), &env, &installed)
        .unwrap_err()
        .0;
    assert!(e.contains("DBCOMPARE_") && !e.contains("topsecret"), "{e}");
}

#[test]
fn a_flag_the_suite_would_ignore_is_refused_and_a_default_passes() {
    let refused = |argv: &[&str]| {
        RunPlan::resolve(&args(argv), &no_env, &installed)
            .map(|_| ())
            .unwrap_err()
            .0
    };
    let resolves = |argv: &[&str]| RunPlan::resolve(&args(argv), &no_env, &installed).is_ok();
    assert_eq!(
        refused(&["--suite", "driver", "--concurrency", "4"]),
        "--concurrency: the driver suite does not use it (each of its tests runs at its own \
         concurrency)"
    );
    assert!(refused(&["--suite", "driver", "--sizes", "micro"]).starts_with("--sizes: "));
    assert!(
        refused(&["--suite", "ycsb", "--sizes", "micro"]).contains("-p recordcount=N"),
        "{}",
        refused(&["--suite", "ycsb", "--sizes", "micro"])
    );
    assert!(refused(&["--suite", "pool", "--rate", "100"]).starts_with("--rate: "));
    assert!(refused(&["--scale", "0.5"]).starts_with("--scale: the classic suite"));
    assert!(refused(&["--suite", "ycsb", "--searches-per-insert", "5"]).starts_with("--searches"));
    // What each suite uses, and every default, pass.
    for argv in [
        &["--store", "redis", "--suite", "driver", "--scale", "0.5"][..],
        &[
            "--store",
            "redis",
            "--suite",
            "driver",
            "--sizes",
            "micro,tiny,small",
        ],
        &[
            "--store",
            "redis",
            "--suite",
            "ycsb",
            "--concurrency",
            "1,4",
            "--rate",
            "10",
        ],
        &["--store", "redis", "--suite", "pool", "--concurrency", "8"],
        &[
            "--store",
            "redis",
            "--sizes",
            "micro",
            "--searches-per-insert",
            "5",
            "--rate",
            "9",
        ],
    ] {
        assert!(resolves(argv), "{argv:?}");
    }
}

#[test]
fn a_sqlite_path_that_cannot_be_a_file_is_refused_before_the_run() {
    let refused = |path: &str| {
        RunPlan::resolve(
            &args(&["--store", "sqlite", "--sqlite-path", path]),
            &no_env,
            &installed,
        )
        .map(|_| ())
        .unwrap_err()
        .0
    };
    assert_eq!(
        refused("/nonexistent/dir/db"),
        "--sqlite-path /nonexistent/dir/db: its directory does not exist"
    );
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().to_str().unwrap();
    assert!(refused(dir).ends_with(": a directory; give a file in it"));
    let file = format!("{dir}/db.sqlite");
    assert!(
        RunPlan::resolve(
            &args(&["--store", "sqlite", "--sqlite-path", &file]),
            &no_env,
            &installed
        )
        .is_ok()
    );
}

#[test]
fn more_tasks_than_a_phase_has_operations_is_refused() {
    let refused = |argv: &[&str]| {
        RunPlan::resolve(&args(argv), &no_env, &installed)
            .map(|_| ())
            .unwrap_err()
            .0
    };
    assert_eq!(
        refused(&[
            "--store",
            "redis",
            "--sizes",
            "micro,tiny",
            "--concurrency",
            "1,5000"
        ]),
        "--concurrency 5000: more tasks than micro's 4000 searches, so 1000 would make none \
         (at most 4000)"
    );
    assert!(
        refused(&[
            "--store",
            "redis",
            "--suite",
            "ycsb",
            "-p",
            "operationcount=10",
            "--concurrency",
            "20"
        ])
        .contains("workload a's 10 operations"),
    );
    // A driver test at concurrency 16 needs 16 iterations: --scale 0.00003 gives it 15.
    let driver = |scale: &str| {
        let argv = ["--store", "redis", "--suite", "driver", "--scale", scale];
        RunPlan::resolve(&args(&argv), &no_env, &installed).map(|_| ())
    };
    assert_eq!(
        driver("0.00003").unwrap_err().0,
        "--scale 0.00003: PreparedExecConcurrent16 and PreparedQueryConcurrent16 would each run \
         15 iterations on 16 connections, so 1 would make none (at least --scale 0.000031)"
    );
    assert!(driver("0.000031").is_ok());
    // The load runs at the first level only.
    let load = |levels: &str| {
        RunPlan::resolve(
            &args(&[
                "--store",
                "redis",
                "--suite",
                "ycsb",
                "-p",
                "recordcount=5",
                "--concurrency",
                levels,
            ]),
            &no_env,
            &installed,
        )
    };
    assert!(load("1,8").is_ok());
    assert!(load("8").unwrap_err().0.contains("the load's 5 inserts"));
    assert!(
        RunPlan::resolve(
            &args(&[
                "--store",
                "redis",
                "--sizes",
                "micro",
                "--concurrency",
                "4000"
            ]),
            &no_env,
            &installed
        )
        .is_ok()
    );
}

/// A flag for a store the run does not have, or a store given twice in one flag, is a usage
/// error (the value would be dropped without a word); a variable in the environment for a
/// store not in the run is not.
#[test]
fn flags_for_stores_not_in_the_run_or_given_twice_are_refused() {
    let refused = |argv: &[&str], says: &str| {
        let e = RunPlan::resolve(&args(argv), &no_env, &installed).unwrap_err();
        assert!(e.0.contains(says), "{argv:?}: {e}");
    };
    let redis = ["--store", "redis"];
    refused(
        &[&redis[..], &["--url", "postgres=postgres://u@h/db"]].concat(),
        "--url postgres: no store of --store is postgres (the run has no postgres store)",
    );
    refused(
        &[&redis[..], &["--set", "postgres:synchronous_commit=off"]].concat(),
        "the run has no postgres store",
    );
    refused(
        &[
            &redis[..],
            &[
                "--url",
                "redis=redis://h:1/0",
                "--url",
                "redis=redis://h:2/0",
            ],
        ]
        .concat(),
        "--url redis: given twice",
    );
    refused(
        &[
            &redis[..],
            &[
                "--set",
                "redis:maxmemory=1mb",
                "--set",
                "redis:maxmemory=2mb",
            ],
        ]
        .concat(),
        "maxmemory is set twice for redis",
    );
    refused(
        &[
            &redis[..],
            &["--config", "redis=a.conf", "--config", "redis=b.conf"],
        ]
        .concat(),
        "--config redis: given twice",
    );
    // A variable for a store not in the run, and a setting of each of two variants.
    let env = |name: &str| (name == "DBCOMPARE_POSTGRES_URL").then(|| "postgres://u@h/db".into());
    assert!(RunPlan::resolve(&args(&redis), &env, &installed).is_ok());
    let two = [
        "--store",
        "redis@a,redis@b",
        "--set",
        "redis@a:maxmemory=1mb",
        "--set",
        "redis@b:maxmemory=1mb",
    ];
    assert!(RunPlan::resolve(&args(&two), &no_env, &installed).is_ok());
}

/// dbcompare starts no Redis Cluster serving TLS: with --tls, `all` skips it and naming it
/// is a usage error, both saying to give one by URL.
#[test]
fn tls_skips_the_throw_away_redis_cluster() {
    let both = |kind: StoreKind| {
        matches!(kind, StoreKind::Redis | StoreKind::RedisCluster).then(|| Installation {
            server: "/opt/redis-server".into(),
            tools: Vec::new(),
            version: "Redis server v=7".into(),
        })
    };
    let plan = RunPlan::resolve(&args(&["--tls"]), &no_env, &both).unwrap();
    let of = |kind: StoreKind| target_of(&plan, kind);
    assert!(matches!(of(StoreKind::Redis), Target::Local(_)));
    assert!(
        matches!(of(StoreKind::RedisCluster), Target::Unavailable(why) if why.contains("--url redis-cluster=rediss+cluster://")),
        "{:?}",
        of(StoreKind::RedisCluster)
    );
    let e = RunPlan::resolve(
        &args(&["--tls", "--store", "redis-cluster"]),
        &no_env,
        &both,
    )
    .unwrap_err();
    assert!(
        e.0.starts_with("--store redis-cluster: dbcompare does not start"),
        "{e}"
    );
    let plan = RunPlan::resolve(&args(&["--store", "redis-cluster"]), &no_env, &both).unwrap();
    assert!(matches!(plan.stores[0].target, Target::Local(_)));
}

/// More client threads than any machine drives, or one YCSB workload given twice in
/// another case, are usage errors.
#[test]
fn too_many_client_threads_and_a_workload_in_two_cases_are_refused() {
    let e = RunPlan::resolve(
        &args(&["--store", "redis", "--client-threads", "100000"]),
        &no_env,
        &installed,
    )
    .unwrap_err();
    assert!(
        e.0.starts_with("--client-threads 100000: at most 1024"),
        "{e}"
    );
    let most = MAX_CLIENT_THREADS.to_string();
    let plan = RunPlan::resolve(
        &args(&["--store", "redis", "--client-threads", &most]),
        &no_env,
        &installed,
    )
    .unwrap();
    assert_eq!(plan.client_threads_given, Some(MAX_CLIENT_THREADS));
    let e = RunPlan::resolve(
        &args(&["--store", "redis", "--suite", "ycsb", "--workload", "d,D"]),
        &no_env,
        &installed,
    )
    .unwrap_err();
    assert!(e.0.contains("is given twice"), "{e}");
}

/// A durability mode given twice is one mode, in the plan as in the stores it runs.
#[test]
fn a_durability_given_twice_is_one() {
    let plan = RunPlan::resolve(
        &args(&["--store", "redis", "--durability", "durable,durable"]),
        &no_env,
        &installed,
    )
    .unwrap();
    assert_eq!(plan.durability, vec![Durability::Durable]);
    assert_eq!(plan.stores.len(), 1);
}

/// A malformed URL in a variable is named as that variable, not as a `--url` never given.
#[test]
fn a_bad_url_variable_is_named_as_the_variable() {
    let env = |name: &str| (name == "DBCOMPARE_POSTGRES_URL").then(|| "mysql://u@h/db".into());
    let e = RunPlan::resolve(&args(&["--store", "redis"]), &env, &installed).unwrap_err();
    assert!(
        e.0.starts_with("DBCOMPARE_POSTGRES_URL: mysql://u@h/db: scheme"),
        "{e}"
    );
    assert!(!e.0.contains("--url"), "{e}");
}
