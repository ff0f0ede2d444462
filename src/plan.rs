//! Raw command-line arguments and environment -> a resolved [`RunPlan`], checked before
//! anything starts: which stores, and for each where its server comes from.

use std::collections::{BTreeMap, HashSet};
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use crate::catalog::{Durability, StoreKind, StoreOptions};
use crate::cli::{RunArgs, ServerArgs, StoreSelector, Suite};
use crate::error::UsageError;
use crate::report::model::{ClientShare, PlanSummary};
use crate::server::{self, DataDirs, Installation};
use crate::store::registry::parse_url;
use crate::store::url::{StoreUrl, mask_userinfo};
use crate::suite::classic::ClassicPlan;
use crate::suite::classic::rendezvous::Rendezvous;
use crate::suite::driver::DriverPlan;
use crate::suite::pool::{PoolPlan, SEED_LEVEL};
use crate::suite::ycsb::YcsbPlan;
use crate::workload::levels::{Concurrency, Repetitions};
use crate::workload::ycsb::{Workload, properties};

/// Concurrency levels in the order given, each once.
fn dedup_levels(levels: &[Concurrency]) -> Vec<Concurrency> {
    let mut seen = HashSet::new();
    levels.iter().copied().filter(|l| seen.insert(*l)).collect()
}

/// Where a store's server comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An embedded store: no server.
    Embedded,
    /// A server given with `--url` or `DBCOMPARE_<STORE>_URL`, used as it is.
    Url(StoreUrl),
    /// A throw-away local server started from this installation.
    Local(Installation),
    /// Cannot run here; says what would fix it.
    Unavailable(String),
}

impl Target {
    /// One line for `dbcompare list`.
    pub fn describe(&self) -> (&'static str, String) {
        match self {
            Target::Embedded => ("available", crate::store::sqlite::availability()),
            Target::Url(u) => ("available", format!("url {}", u.masked())),
            Target::Local(i) => {
                let cli = i.tools.iter().find(|(role, _)| *role == "cli");
                let what = match cli {
                    Some((_, cli)) => format!(
                        "local throw-away cluster: {} nodes joined by {}",
                        i.server.display(),
                        cli.display()
                    ),
                    None => format!("local throw-away server: {}", i.server.display()),
                };
                ("available", format!("{what} ({})", i.version))
            }
            Target::Unavailable(why) => ("unavailable", why.clone()),
        }
    }
}

/// Everything a run does, resolved and validated.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub suite: Suite,
    /// Stores in run order, without duplicates, each with where it runs.
    pub stores: Vec<(StoreKind, Target)>,
    pub classic: ClassicPlan,
    pub driver: DriverPlan,
    pub pool: PoolPlan,
    /// Its workloads are empty unless the suite is `ycsb`.
    pub ycsb: YcsbPlan,
    pub out: PathBuf,
    pub quiet: bool,
    /// Every run's lines on the console, not only the medians.
    pub verbose: bool,
    /// Show the 2016 blog's figures beside a classic run at its sizes.
    pub blog_reference: bool,
    /// Measure the machine's floor before the stores.
    pub floor: bool,
    /// Capture every allocation's call site (`--alloc-sites`).
    pub alloc_sites: bool,
    pub durability: Durability,
    pub connect_timeout: Duration,
    /// How long a store may go without finishing an operation before its run is abandoned.
    pub stall_timeout: Option<Duration>,
    /// Threads of the client's async runtime.
    pub client_threads: usize,
    /// Where the throw-away directories go, and whether they are kept.
    pub data_dirs: DataDirs,
    /// How the throw-away servers serve (`--tls`, `--redis-cluster-masters`).
    pub serve: crate::server::Serve,
    /// Each store's own options.
    pub options: StoreOptions,
}

/// Reads the environment (a function, so tests can give their own).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Finds a store's installed server (a function, so tests can give their own).
pub type Locate<'a> = &'a dyn Fn(StoreKind) -> Option<Installation>;

/// The process environment and the installed servers: what a real run uses.
pub fn system_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// `--url STORE=URL` entries and `DBCOMPARE_<STORE>_URL` variables, checked; `--url` wins.
pub fn resolve_urls(
    args: &ServerArgs,
    env: Env<'_>,
) -> Result<BTreeMap<StoreKind, StoreUrl>, UsageError> {
    let mut urls = BTreeMap::new();
    for &kind in StoreKind::all().iter().filter(|k| !k.is_embedded()) {
        if let Some(raw) = env(&kind.url_env()) {
            let url = parse_url(kind, &raw)
                .map_err(|e| UsageError::new(format!("{} (from {})", e.0, kind.url_env())))?;
            urls.insert(kind, url);
        }
    }
    for entry in &args.urls {
        let expected = || {
            UsageError::new(format!(
                "--url: expected STORE=URL (for example postgres=postgres://user@host/db), got '{}'",
                mask_userinfo(entry)
            ))
        };
        let (name, raw) = entry.split_once('=').ok_or_else(expected)?;
        // A URL given without its store (`--url postgres://u:pw@h/db?sslmode=x`): its first
        // '=' is in the query, and the "name" holds the password.
        if name.contains("://") {
            return Err(expected());
        }
        let kind = crate::cli::parse_store(name)
            .ok()
            .and_then(|s| match s {
                StoreSelector::One(k) => Some(k),
                StoreSelector::All => None,
            })
            .ok_or_else(|| {
                let names: Vec<&str> = StoreKind::all().iter().map(|k| k.name()).collect();
                UsageError::new(format!(
                    "--url: unknown store '{name}'; valid names: {}",
                    names.join(", ")
                ))
            })?;
        urls.insert(kind, parse_url(kind, raw)?);
    }
    Ok(urls)
}

/// The stores `--store` names, in order and each once, and whether they were named (rather
/// than `all`).
pub fn select(stores: &[StoreSelector]) -> (bool, Vec<StoreKind>) {
    let named = !stores.contains(&StoreSelector::All);
    if !named {
        return (false, StoreKind::all().to_vec());
    }
    let mut seen = HashSet::new();
    let kinds = stores
        .iter()
        .filter_map(|s| match s {
            StoreSelector::One(k) => seen.insert(*k).then_some(*k),
            StoreSelector::All => None,
        })
        .collect();
    (true, kinds)
}

/// Where `kind` runs, given the URLs and the installed servers.
pub fn target(kind: StoreKind, urls: &BTreeMap<StoreKind, StoreUrl>, locate: Locate<'_>) -> Target {
    if kind.is_embedded() {
        return Target::Embedded;
    }
    if let Some(url) = urls.get(&kind) {
        return Target::Url(url.clone());
    }
    match locate(kind) {
        Some(installation) => Target::Local(installation),
        None if server::can_start(kind) => Target::Unavailable(format!(
            "no {kind} server is installed here: {}",
            server::install_hint(kind)
        )),
        None => Target::Unavailable(server::install_hint(kind)),
    }
}

impl RunPlan {
    /// Resolves and validates the arguments. A store named explicitly that cannot run is an
    /// error; with `all` it is kept, to be reported as skipped.
    pub fn resolve(args: &RunArgs, env: Env<'_>, locate: Locate<'_>) -> Result<Self, UsageError> {
        let (named, kinds) = select(&args.stores);
        let mut names = HashSet::new();
        for size in &args.sizes {
            if !names.insert(size.name.as_str()) {
                return Err(UsageError::new(format!(
                    "--sizes: '{}' is given twice (each size's records have their own unique_ids)",
                    size.name
                )));
            }
        }
        if args.sizes.is_empty() {
            return Err(UsageError::new("--sizes: at least one size is needed"));
        }
        let urls = resolve_urls(&args.server, env)?;
        let stores: Vec<(StoreKind, Target)> = kinds
            .iter()
            .map(|&k| (k, target(k, &urls, locate)))
            .collect();
        let unavailable = stores
            .iter()
            .find(|(_, t)| matches!(t, Target::Unavailable(_)));
        if let (true, Some((kind, Target::Unavailable(why)))) = (named, unavailable) {
            return Err(UsageError::new(format!("--store {kind}: {why}")));
        }
        let client_threads = match (args.suite, args.client_threads) {
            (Suite::Pool, Some(n)) if n.get() > 1 => {
                return Err(UsageError::new(
                    "--client-threads: the pool suite runs on one event loop, as its seed's \
                     asyncio client does; more apply to the classic and driver suites",
                ));
            }
            (Suite::Pool, _) => 1,
            (_, Some(n)) => n.get() as usize,
            (suite, None) => default_client_threads(suite, &stores, &args.concurrency),
        };
        let workloads = ycsb_workloads(args)?;
        let measured = u32::try_from(args.runs.get())
            .ok()
            .and_then(NonZeroU32::new)
            .ok_or_else(|| UsageError::new(format!("--runs: at most {} runs", u32::MAX)))?;
        let repetitions = Repetitions {
            warmup: args.warmup_runs,
            measured,
        };
        let levels = dedup_levels(&args.concurrency);
        for size in &args.sizes {
            if size
                .records
                .checked_mul(args.searches_per_insert.get())
                .is_none_or(|n| n > u64::from(u32::MAX) * 16)
            {
                return Err(UsageError::new(format!(
                    "--searches-per-insert: {} searches for each of {}'s {} records is more \
                     than a run can make",
                    args.searches_per_insert, size.name, size.records
                )));
            }
        }
        let rendezvous = match (args.client, args.start_at) {
            (Some(share), Some(start_at)) => {
                if !named {
                    return Err(UsageError::new(
                        "--client: name the stores (--store postgres,redis): every one must be \
                         a server all the clients reach, given with --url",
                    ));
                }
                client_targets(args.suite, &stores, &args.options)?;
                if start_at < chrono::Utc::now() - chrono::Duration::minutes(10) {
                    return Err(UsageError::new(format!(
                        "--start-at {}: more than 10 minutes ago; it names the coordinated \
                         run, so give every run a new one",
                        start_at.to_rfc3339()
                    )));
                }
                let limit = (args.meet_timeout > 0).then(|| Duration::from_secs(args.meet_timeout));
                Some(Rendezvous::new(share, start_at, limit))
            }
            _ => None,
        };
        if args.retries > 0 && args.suite != Suite::Classic {
            return Err(UsageError::new(format!(
                "--retries: the classic suite retries on a new connection; the {} suite \
                 fails a phase at its first error",
                args.suite
            )));
        }
        Ok(RunPlan {
            suite: args.suite,
            stores,
            classic: ClassicPlan {
                sizes: args.sizes.clone(),
                searches_per_insert: args.searches_per_insert.get(),
                seed: args.seed,
                repetitions,
                concurrency: levels.clone(),
                rate: args.rate.map(|r| r.get() as f64),
                retries: args.retries,
                rendezvous,
            },
            driver: DriverPlan {
                scale: args.scale,
                repetitions,
            },
            pool: PoolPlan {
                seed: args.seed,
                repetitions,
                // The seed's 50 connections and workers, unless other levels are asked for.
                concurrency: if levels == [Concurrency::ONE] {
                    vec![SEED_LEVEL]
                } else {
                    levels.clone()
                },
            },
            ycsb: YcsbPlan {
                workloads,
                seed: args.seed,
                repetitions,
                concurrency: levels,
                rate: args.rate.map(|r| r.get() as f64),
            },
            out: args.out.clone(),
            quiet: args.quiet,
            verbose: args.verbose,
            blog_reference: !args.no_blog_reference,
            floor: !args.no_floor,
            alloc_sites: args.alloc_sites,
            durability: args.durability,
            connect_timeout: Duration::from_secs(args.connect_timeout.get()),
            stall_timeout: (args.stall_timeout > 0).then(|| {
                let limit = Duration::from_secs(args.stall_timeout);
                // An open-loop schedule leaves gaps between operations on purpose.
                match args.rate {
                    Some(rate) => limit.max(Duration::from_secs_f64(4.0 / rate.get() as f64)),
                    None => limit,
                }
            }),
            client_threads,
            data_dirs: data_dirs(args)?,
            serve: args.server.serve.serve(),
            options: args.options.clone(),
        })
    }

    /// Passwords of every URL, so that nothing written can contain them.
    pub fn secrets(&self) -> Vec<String> {
        self.stores
            .iter()
            .filter_map(|(_, t)| match t {
                Target::Url(u) => u.password().map(str::to_string),
                _ => None,
            })
            .collect()
    }

    /// The concurrency levels the suite runs at (the driver suite's are its tests').
    pub fn levels(&self) -> &[Concurrency] {
        match self.suite {
            Suite::Pool => &self.pool.concurrency,
            Suite::Ycsb => &self.ycsb.concurrency,
            Suite::Classic | Suite::Driver => &self.classic.concurrency,
        }
    }

    /// The part of the plan a report carries.
    pub fn summary(&self) -> PlanSummary {
        PlanSummary {
            suite: self.suite,
            scale: (self.suite == Suite::Driver).then_some(self.driver.scale),
            stores: self
                .stores
                .iter()
                .map(|(k, _)| k.name().to_string())
                .collect(),
            sizes: self.classic.sizes.clone(),
            searches_per_insert: self.classic.searches_per_insert,
            seed: self.classic.seed,
            durability: self.durability.name().to_string(),
            warmup_runs: self.classic.repetitions.warmup,
            runs: self.classic.repetitions.measured,
            concurrency: self.levels().to_vec(),
            rate: self.classic.rate,
            client_threads: Some(self.client_threads as u32),
            workloads: self.ycsb.workloads.iter().map(Workload::brief).collect(),
            blog_reference: self.blog_reference,
            retries: self.classic.retries,
            alloc_sites: self.alloc_sites,
            client: self.classic.rendezvous.as_ref().map(|r| ClientShare {
                index: r.share().number(),
                of: r.share().count(),
                start_at: r
                    .start_at()
                    .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            }),
        }
    }
}

/// With `--client`: the classic suite, and every store on a server all the clients reach.
fn client_targets(
    suite: Suite,
    stores: &[(StoreKind, Target)],
    options: &StoreOptions,
) -> Result<(), UsageError> {
    if suite != Suite::Classic {
        return Err(UsageError::new(format!(
            "--client: the classic suite is shared between load clients; the {} suite \
             checks each answer against what this client alone wrote",
            format!("{suite:?}").to_lowercase()
        )));
    }
    for (kind, target) in stores {
        match target {
            Target::Url(_) => {}
            Target::Embedded if options.sqlite_path.is_some() => {}
            Target::Embedded => {
                return Err(UsageError::new(format!(
                    "--client: the clients must share one {kind} database: give it with \
                     --sqlite-path FILE"
                )));
            }
            // Skipped (named, it was refused already).
            Target::Unavailable(_) => {}
            Target::Local(_) => {
                return Err(UsageError::new(format!(
                    "--client: every client must use the same {kind} server: give it with \
                     --url {kind}=URL (a throw-away server would be this client's alone)"
                )));
            }
        }
    }
    Ok(())
}

/// YCSB's core workload letters in YCSB's recommended order (the inserting ones last).
const DEFAULT_WORKLOADS: [&str; 6] = ["a", "b", "c", "f", "d", "e"];

/// The YCSB suite's workloads (none for the other suites, which refuse its flags), each
/// with `--property` on top, checked to share one load.
fn ycsb_workloads(args: &RunArgs) -> Result<Vec<Workload>, UsageError> {
    if args.suite != Suite::Ycsb {
        let given = [
            ("--workload", args.workloads.is_some()),
            ("--workload-file", !args.workload_files.is_empty()),
            ("--property", !args.properties.is_empty()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            return Err(UsageError::new(format!(
                "{flag} belongs to the YCSB suite: add --suite ycsb"
            )));
        }
        return Ok(Vec::new());
    }
    let overrides = args
        .properties
        .iter()
        .map(|p| properties::flag(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(UsageError::new)?;
    let letters: Vec<String> = match &args.workloads {
        Some(given) => given.clone(),
        None if args.workload_files.is_empty() => {
            DEFAULT_WORKLOADS.iter().map(|l| l.to_string()).collect()
        }
        None => Vec::new(),
    };
    let mut workloads = Vec::new();
    for letter in &letters {
        let mut chars = letter.trim().chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return Err(UsageError::new(format!(
                "--workload {letter}: YCSB's core workloads are a, b, c, d, e and f (a file of \
                 your own goes to --workload-file)"
            )));
        };
        workloads.push(Workload::core(c, &overrides).map_err(UsageError::new)?);
    }
    for path in &args.workload_files {
        let text = std::fs::read_to_string(path)
            .map_err(|e| UsageError::new(format!("--workload-file {}: {e}", path.display())))?;
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let source = path.display().to_string();
        workloads
            .push(Workload::from_text(&name, &text, &source, &overrides).map_err(UsageError::new)?);
    }
    let mut names = HashSet::new();
    for w in &workloads {
        if !names.insert(w.name.as_str()) {
            return Err(UsageError::new(format!(
                "workload {} is given twice (a workload that inserts would insert its records \
                 twice)",
                w.name
            )));
        }
    }
    if let Some(first) = workloads.first() {
        for w in &workloads[1..] {
            first.same_load(w).map_err(UsageError::new)?;
        }
    }
    Ok(workloads)
}

/// One event loop, unless an embedded store runs at a concurrency above 1 (or the driver
/// suite, whose concurrent tests go to 16): its calls hold the thread they run on, so its
/// connections get one loop per core (up to the concurrency). A server store's client stays
/// one loop by default: on a machine whose cores the server shares, a second loop helped
/// one server and slowed another (see the README); `--client-threads` chooses.
fn default_client_threads(
    suite: Suite,
    stores: &[(StoreKind, Target)],
    levels: &[Concurrency],
) -> usize {
    let mut highest = levels.iter().map(|l| l.tasks()).max().unwrap_or(1);
    if suite == Suite::Driver {
        highest = highest.max(16);
    }
    let embedded = stores.iter().any(|(k, _)| k.is_embedded());
    if embedded && highest > 1 {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        highest.min(cores)
    } else {
        1
    }
}

/// `--data-dir` (which must be an existing, writable directory) and `--keep-data`.
fn data_dirs(args: &RunArgs) -> Result<DataDirs, UsageError> {
    let Some(dir) = &args.data_dir else {
        return Ok(DataDirs {
            keep: args.keep_data,
            ..DataDirs::temporary()
        });
    };
    let unusable = |why: String| UsageError::new(format!("--data-dir {}: {why}", dir.display()));
    if !dir.is_dir() {
        return Err(unusable("not an existing directory".into()));
    }
    tempfile::Builder::new()
        .prefix(".dbcompare-probe")
        .tempfile_in(dir)
        .map_err(|e| unusable(format!("cannot write there: {e}")))?;
    // Absolute: the servers run in their own directories.
    let under = std::path::absolute(dir).map_err(|e| unusable(e.to_string()))?;
    Ok(DataDirs {
        under,
        keep: args.keep_data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
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

    #[test]
    fn all_keeps_unavailable_stores_to_skip_them() {
        let plan = RunPlan::resolve(&args(&[]), &no_env, &installed).unwrap();
        let kinds: Vec<_> = plan.stores.iter().map(|(k, _)| *k).collect();
        assert_eq!(kinds, StoreKind::all());
        assert_eq!(plan.stores[0].1, Target::Embedded);
        assert!(
            matches!(plan.stores[1].1, Target::Unavailable(ref why) if why.contains("provisioning/install.sh postgres"))
        );
        let of = |kind: StoreKind| &plan.stores.iter().find(|(k, _)| *k == kind).unwrap().1;
        assert!(matches!(of(StoreKind::Redis), Target::Local(_)));
        assert!(
            matches!(of(StoreKind::Mongodb), Target::Unavailable(why) if why.contains("DBCOMPARE_MONGODB_URL"))
        );
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
    fn client_threads_default_to_one_event_loop_except_for_concurrent_embedded_stores() {
        let threads = |argv: &[&str]| {
            RunPlan::resolve(&args(argv), &no_env, &installed)
                .unwrap()
                .client_threads
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
        let given = [
            "--store",
            "sqlite",
            "--concurrency",
            "8",
            "--client-threads",
            "3",
        ];
        assert_eq!(threads(&given), 3);
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
        let env = |name: &str| {
            (name == "DBCOMPARE_POSTGRES_URL").then(|| "postgres://env@h1/db".to_string())
        };
        let plan = RunPlan::resolve(&args(&["--store", "postgres"]), &env, &installed).unwrap();
        assert!(
            matches!(&plan.stores[0].1, Target::Url(u) if u.masked() == "postgres://env@h1/db")
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
        assert!(matches!(&plan.stores[0].1, Target::Url(u) if u.address() == "h2:5432"));
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
}
