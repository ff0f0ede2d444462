//! Raw command-line arguments and environment -> a resolved [`RunPlan`], checked before
//! anything starts: which stores (kinds, or labelled variants of them: `variants.rs`), and
//! for each where its server comes from and what it runs with.

use std::collections::HashSet;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use crate::catalog::{Durability, StoreKind, StoreOptions};
use crate::cli::{RunArgs, Suite};
use crate::error::UsageError;
use crate::report::model::{ClientShare, PlanSummary};
use crate::server::DataDirs;
use crate::suite::classic::ClassicPlan;
use crate::suite::driver::DriverPlan;
use crate::suite::pool::{PoolPlan, SEED_LEVEL};
use crate::suite::rendezvous::Rendezvous;
use crate::suite::ycsb::YcsbPlan;
use crate::workload::driver::DriverTest;
use crate::workload::levels::{Concurrency, Repetitions};
use crate::workload::ycsb::Workload;

mod flags;
pub use flags::store_flags;
mod targets;
mod variants;
mod ycsb;

use targets::client_targets;
pub use targets::{Env, Locate, PlannedStore, Target, resolve_urls, served, system_env, target};
pub use variants::{named_variants, plan_stores, select};
use ycsb::ycsb_workloads;

/// The most client threads (`--client-threads`) a run takes: each is an event loop with
/// descriptors of its own (a hundred thousand ran out of them), and 1,024 is far more than
/// any machine has cores to drive.
pub const MAX_CLIENT_THREADS: usize = 1024;

/// The highest `--rate`: a billion operations a second, beyond any client (a rate the run
/// cannot keep is a warning; one past this is a typo).
pub const MAX_RATE: u64 = 1_000_000_000;

/// Concurrency levels in the order given, each once.
fn dedup_levels(levels: &[Concurrency]) -> Vec<Concurrency> {
    let mut seen = HashSet::new();
    levels.iter().copied().filter(|l| seen.insert(*l)).collect()
}

/// Everything a run does, resolved and validated.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub suite: Suite,
    /// Stores in run order, without duplicates, each with where it runs and what it runs
    /// with (the variants of one store next to each other, in the order given).
    pub stores: Vec<PlannedStore>,
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
    /// The durability modes asked for (each store's own is in its variant).
    pub durability: Vec<Durability>,
    pub connect_timeout: Duration,
    /// How long a store may go without finishing an operation before its run is abandoned.
    pub stall_timeout: Option<Duration>,
    /// `--client-threads` (1 for the pool suite, which allows no other); `None`: each
    /// store's default ([`RunPlan::client_threads`]).
    pub client_threads_given: Option<usize>,
    /// Where the throw-away directories go, and whether they are kept.
    pub data_dirs: DataDirs,
    /// How the throw-away servers serve (`--tls`, `--redis-cluster-masters`).
    pub serve: crate::server::Serve,
    /// Each store's own options.
    pub options: StoreOptions,
}

impl RunPlan {
    /// Resolves and validates the arguments. A store named explicitly that cannot run is an
    /// error; with `all` it is kept, to be reported as skipped.
    pub fn resolve(args: &RunArgs, env: Env<'_>, locate: Locate<'_>) -> Result<Self, UsageError> {
        let (named, selected) = select(&args.stores, &args.durability)?;
        let mut names = HashSet::new();
        for (i, size) in args.sizes.iter().enumerate() {
            if !names.insert(size.name.as_str()) {
                return Err(UsageError::new(format!(
                    "--sizes: '{}' is given twice (each size's records have their own unique_ids)",
                    size.name
                )));
            }
            if let Some(same) = args.sizes[..i].iter().find(|s| s.records == size.records) {
                return Err(UsageError::new(format!(
                    "--sizes: '{}' and '{}' are the same size, {} records: give it once",
                    same.name, size.name, size.records
                )));
            }
        }
        if args.sizes.is_empty() {
            return Err(UsageError::new("--sizes: at least one size is needed"));
        }
        let urls = resolve_urls(&args.server, env)?;
        let stores = plan_stores(selected, &args.server, &urls, locate)?;
        let kinds: Vec<StoreKind> = stores.iter().map(|s| s.id.kind).collect();
        flags::store_flags(&args.options, &args.server.serve, &kinds)?;
        // Whether a store keeps its data on this machine: a throw-away server's directory,
        // SQLite's file.
        let local = stores
            .iter()
            .any(|s| matches!(s.target, Target::Local(_) | Target::Embedded));
        let data_dirs = data_dirs(args, local)?;
        let unavailable = stores
            .iter()
            .find(|s| matches!(s.target, Target::Unavailable(_)));
        if let (
            true,
            Some(PlannedStore {
                id,
                target: Target::Unavailable(why),
                ..
            }),
        ) = (named, unavailable)
        {
            return Err(UsageError::new(format!("--store {id}: {why}")));
        }
        let client_threads_given = match (args.suite, args.client_threads) {
            (Suite::Pool, Some(n)) if n.get() > 1 => {
                return Err(UsageError::new(
                    "--client-threads: the pool suite runs on one event loop, as its seed's \
                     asyncio client does; more apply to the classic and driver suites",
                ));
            }
            (Suite::Pool, _) => Some(1),
            (_, Some(n)) if n.get() as usize > MAX_CLIENT_THREADS => {
                return Err(UsageError::new(format!(
                    "--client-threads {n}: at most {MAX_CLIENT_THREADS} (each is an event loop \
                     with descriptors of its own; more than the connections would idle)"
                )));
            }
            (_, n) => n.map(|n| n.get() as usize),
        };
        if let Some(rate) = args.rate.filter(|r| r.get() > MAX_RATE) {
            return Err(UsageError::new(format!(
                "--rate {rate}: at most {MAX_RATE} operations a second"
            )));
        }
        flags::suite_flags(args)?;
        // Checked where SQLite runs, for a file name (a `file:` URI is SQLite's to read).
        if let Some(path) = &args.options.sqlite_path
            && stores.iter().any(|s| s.id.kind == StoreKind::Sqlite)
            && !path.to_string_lossy().starts_with("file:")
        {
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
            if dir.is_some_and(|d| !d.is_dir()) || path.is_dir() {
                return Err(UsageError::new(format!(
                    "--sqlite-path {}: {}",
                    path.display(),
                    if path.is_dir() {
                        "a directory; give a file in it"
                    } else {
                        "its directory does not exist"
                    }
                )));
            }
        }
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
        // Tasks beyond a phase's operations would each open a connection to make none.
        let highest = levels.iter().map(|c| u64::from(c.get())).max().unwrap_or(1);
        let first = levels.first().map_or(1, |c| u64::from(c.get()));
        // Each phase's operations (a load client's share of them), the tasks it runs with,
        // and its name.
        let clients = args.client.map_or(1, |s| u64::from(s.count()));
        let phases: Vec<(u64, u64, String)> = match args.suite {
            Suite::Classic => args
                .sizes
                .iter()
                .map(|s| {
                    let searches = s.records.saturating_mul(args.searches_per_insert.get());
                    (
                        searches,
                        highest,
                        format!("{}'s {searches} searches", s.name),
                    )
                })
                .collect(),
            Suite::Ycsb => workloads
                .iter()
                .flat_map(|w| {
                    [
                        (
                            w.record_count,
                            first,
                            format!("the load's {} inserts", w.record_count),
                        ),
                        (
                            w.operation_count,
                            highest,
                            format!("workload {}'s {} operations", w.name, w.operation_count),
                        ),
                    ]
                })
                .collect(),
            Suite::Driver | Suite::Pool => Vec::new(),
        };
        let phases = phases.into_iter().map(|(ops, tasks, what)| match clients {
            1 => (ops, tasks, what),
            n => (ops / n, tasks, format!("this client's 1/{n} of {what}")),
        });
        if let Some((ops, tasks, what)) = phases.into_iter().find(|(ops, tasks, _)| tasks > ops) {
            return Err(UsageError::new(format!(
                "--concurrency {tasks}: more tasks than {what}, so {} would make none (at \
                 most {ops})",
                tasks - ops
            )));
        }
        if args.suite == Suite::Driver {
            driver_scale_fits(args.scale)?;
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
                if start_at > chrono::Utc::now() + chrono::Duration::days(1) {
                    return Err(UsageError::new(format!(
                        "--start-at {}: more than a day ahead (a mistyped date would wait \
                         that long); give the time the clients are to begin",
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
                rendezvous: rendezvous.clone(),
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
                rendezvous,
            },
            out: args.out.clone(),
            quiet: args.quiet,
            verbose: args.verbose,
            blog_reference: !args.no_blog_reference,
            floor: !args.no_floor,
            alloc_sites: args.alloc_sites,
            // Each mode once, as the stores run them (`durable,durable` is one).
            durability: args.durability.iter().fold(Vec::new(), |mut modes, &d| {
                if !modes.contains(&d) {
                    modes.push(d);
                }
                modes
            }),
            connect_timeout: Duration::from_secs(args.connect_timeout.get()),
            stall_timeout: (args.stall_timeout > 0).then(|| {
                let limit = Duration::from_secs(args.stall_timeout);
                // An open-loop schedule leaves gaps between operations on purpose.
                match args.rate {
                    Some(rate) => limit.max(Duration::from_secs_f64(4.0 / rate.get() as f64)),
                    None => limit,
                }
            }),
            client_threads_given,
            data_dirs,
            serve: args.server.serve.serve(),
            options: args.options.clone(),
        })
    }

    /// Passwords of every URL, so that nothing written can contain them.
    pub fn secrets(&self) -> Vec<String> {
        self.stores
            .iter()
            .filter_map(|s| match &s.target {
                Target::Url(u) => u.password().map(str::to_string),
                _ => None,
            })
            .collect()
    }

    /// The client's event loops (threads, one loop each) for a store of `kind`: as given,
    /// else one per core up to the highest concurrency (the driver suite's concurrent tests
    /// go to 16) for a store that serves each connection on a thread of its own, one loop
    /// for the others (`StoreKind::serves_a_thread_per_connection`).
    pub fn client_threads(&self, kind: StoreKind) -> usize {
        if let Some(n) = self.client_threads_given {
            return n;
        }
        let mut highest = self.levels().iter().map(|l| l.tasks()).max().unwrap_or(1);
        if self.suite == Suite::Driver {
            highest = highest.max(16);
        }
        if kind.serves_a_thread_per_connection() && highest > 1 {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            highest.min(cores)
        } else {
            1
        }
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
            stores: self.stores.iter().map(|s| s.id.to_string()).collect(),
            sizes: self.classic.sizes.clone(),
            searches_per_insert: self.classic.searches_per_insert,
            seed: self.classic.seed,
            durability: self
                .durability
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(","),
            warmup_runs: self.classic.repetitions.warmup,
            runs: self.classic.repetitions.measured,
            concurrency: self.levels().to_vec(),
            rate: self.classic.rate,
            client_threads: self.client_threads_given.map(|n| n as u32),
            workloads: self.ycsb.workloads.iter().map(Workload::brief).collect(),
            blog_reference: self.blog_reference,
            retries: self.classic.retries,
            alloc_sites: self.alloc_sites,
            client: (self.classic.rendezvous.as_ref())
                .or(self.ycsb.rendezvous.as_ref())
                .map(|r| ClientShare {
                    index: r.share().number(),
                    of: r.share().count(),
                    start_at: r
                        .start_at()
                        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                }),
        }
    }
}

/// `--data-dir` (which must be an existing, writable directory) and `--keep-data`; without
/// `--data-dir`, the temporary directory, which must be one where a store keeps its data
/// here (`local`).
fn data_dirs(args: &RunArgs, local: bool) -> Result<DataDirs, UsageError> {
    let Some(dir) = &args.data_dir else {
        let temporary = DataDirs::temporary();
        if let Some(why) = crate::error::unwritable(&temporary.under).filter(|_| local) {
            return Err(UsageError::new(format!(
                "the temporary directory {} ($TMPDIR): {why}; the servers' data and SQLite's \
                 file go there: set TMPDIR, or give --data-dir",
                temporary.under.display()
            )));
        }
        return Ok(DataDirs {
            keep: args.keep_data,
            ..temporary
        });
    };
    let unusable = |why: String| UsageError::new(format!("--data-dir {}: {why}", dir.display()));
    if let Some(why) = crate::error::unwritable(dir) {
        return Err(unusable(why));
    }
    // Absolute: the servers run in their own directories.
    let under = std::path::absolute(dir).map_err(|e| unusable(e.to_string()))?;
    Ok(DataDirs {
        under,
        keep: args.keep_data,
    })
}

/// Refuses a `--scale` at which a concurrent driver test has fewer iterations than
/// connections, as the other suites refuse more tasks than operations: the connections
/// left without one would be measured doing nothing.
fn driver_scale_fits(scale: f64) -> Result<(), UsageError> {
    let plan = DriverPlan {
        scale,
        repetitions: Repetitions::ONCE,
    };
    let short: Vec<_> = DriverTest::all()
        .into_iter()
        .map(|t| (t, plan.iterations(t), t.concurrency().tasks() as u64))
        .filter(|(_, iterations, tasks)| iterations < tasks)
        .collect();
    // The tests at the most connections need the most iterations.
    let Some(&(test, iterations, tasks)) = short.iter().max_by_key(|(_, _, tasks)| *tasks) else {
        return Ok(());
    };
    let names: Vec<String> = short
        .iter()
        .filter(|(_, _, t)| *t == tasks)
        .map(|(t, _, _)| t.name())
        .collect();
    Err(UsageError::new(format!(
        "--scale {scale}: {} would {}run {iterations} iterations on {tasks} connections, so \
         {} would make none (at least --scale {})",
        names.join(" and "),
        if names.len() > 1 { "each " } else { "" },
        tasks - iterations,
        // Iterations are rounded: half an iteration short still makes one.
        (tasks as f64 - 0.5) / test.seed_iterations() as f64
    )))
}

#[cfg(test)]
mod tests;
