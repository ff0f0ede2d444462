//! The flags one suite takes and another would ignore: refused there, instead of run
//! without them while the run's plan records them (a classic `--sizes` on a driver run,
//! whose results then said sizes and a concurrency it never ran). A flag left at its
//! default passes on every suite.

use crate::catalog::{StoreKind, StoreOptions, Transactions};
use crate::cli::{RunArgs, ServeArgs, Suite};
use crate::error::UsageError;
use crate::workload::levels::Concurrency;

/// `--sizes`' default.
const DEFAULT_SIZES: [&str; 3] = ["micro", "tiny", "small"];
/// `--searches-per-insert`'s default (the blog's).
const DEFAULT_SEARCHES_PER_INSERT: u64 = 40;
/// `--scale`'s default.
const DEFAULT_SCALE: f64 = 0.1;

/// Refuses the first flag given away from its default that `args.suite` does not use,
/// naming the flag and what the suite goes by instead.
pub(super) fn suite_flags(args: &RunArgs) -> Result<(), UsageError> {
    let suite = args.suite;
    let sizes = args.sizes.iter().map(|s| s.name.as_str()).ne(DEFAULT_SIZES);
    let given = [
        ("--sizes", sizes, suite != Suite::Classic),
        (
            "--searches-per-insert",
            args.searches_per_insert.get() != DEFAULT_SEARCHES_PER_INSERT,
            suite != Suite::Classic,
        ),
        (
            "--scale",
            args.scale != DEFAULT_SCALE,
            suite != Suite::Driver,
        ),
        (
            "--concurrency",
            args.concurrency.iter().any(|&c| c != Concurrency::ONE),
            suite == Suite::Driver,
        ),
        (
            "--rate",
            args.rate.is_some(),
            matches!(suite, Suite::Driver | Suite::Pool),
        ),
    ];
    let Some((flag, ..)) = given.iter().find(|(_, given, unused)| *given && *unused) else {
        return Ok(());
    };
    let instead = match (suite, *flag) {
        (Suite::Ycsb, "--sizes") => "its records are -p recordcount=N",
        (Suite::Ycsb, "--searches-per-insert") => "its operations are -p operationcount=N",
        (Suite::Driver, "--sizes" | "--searches-per-insert") => {
            "its tests have their own sizes, and --scale scales them"
        }
        (Suite::Pool, "--sizes" | "--searches-per-insert") => "it runs the seed's own workload",
        (_, "--scale") => "it scales the driver suite's tests (--suite driver)",
        (Suite::Driver, "--concurrency") => "each of its tests runs at its own concurrency",
        (_, "--rate") => "its tests run closed-loop, each as its seed does",
        _ => "it belongs to another suite",
    };
    Err(UsageError::new(format!(
        "{flag}: the {suite} suite does not use it ({instead})"
    )))
}

/// Refuses the first store's own flag given away from its default when no store of the run
/// (`kinds`) uses it, as `--url`, `--config` and `--set` for a store not in the run are: a
/// `--sqlite-path` on a Redis run would otherwise be dropped without a word.
pub fn store_flags(
    options: &StoreOptions,
    serve: &ServeArgs,
    kinds: &[StoreKind],
) -> Result<(), UsageError> {
    use StoreKind::{Couchbase, Mongodb, Mysql, Postgres, Redis, RedisCluster, Sqlite};
    let given: [(&str, bool, &[StoreKind]); 5] = [
        ("--sqlite-path", options.sqlite_path.is_some(), &[Sqlite]),
        ("--couchbase-query", options.couchbase_query, &[Couchbase]),
        (
            "--mongodb-transactions",
            options.mongodb_transactions != Transactions::default(),
            &[Mongodb],
        ),
        ("--tls", serve.tls, &[Postgres, Mysql, Redis, RedisCluster]),
        (
            "--redis-cluster-masters",
            serve.redis_cluster_masters != crate::server::CLUSTER_MASTERS,
            &[RedisCluster],
        ),
    ];
    for (flag, given, users) in given {
        if given && !kinds.iter().any(|k| users.contains(k)) {
            let users: Vec<&str> = users.iter().map(|k| k.name()).collect();
            return Err(UsageError::new(format!(
                "{flag}: none of the stores given uses it (it is for {})",
                users.join(", ")
            )));
        }
    }
    Ok(())
}
