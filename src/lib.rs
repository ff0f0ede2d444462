//! dbcompare benchmarks key/document stores side by side on the same workload and publishes
//! the results as tables, charts and reports.
//!
//! # Layout
//! Floors from the top down: a module imports only modules on the floors below it (and none
//! imports a module that imports it back).
//! - `main.rs`: parses the command line, calls [`run()`], turns the result into an exit code.
//! - [`run`][mod@run]: the runner: a resolved plan in, every store through its suite (the
//!   variants of one store together, taking turns run by run: `run/group.rs`), the report
//!   out (written after every store).
//! - [`check`]: `dbcompare check`, each store's setup checked without benchmarking it.
//! - [`saved`]: the commands on saved runs (`report`, `compare`, `merge`, `schema`): no
//!   database.
//! - [`setup`]: where a store runs, made ready (its throw-away server started, its
//!   connection spec), and stopped again.
//! - [`plan`]: raw arguments and environment -> a validated [`plan::RunPlan`] (which
//!   stores and variants of them, where each one's server comes from, its `--config` and
//!   `--set`).
//! - [`console`]: lines and progress bars while a run goes.
//! - [`cli`]: the command line (clap derive), no I/O.
//! - [`server`]: throw-away local servers (find, initialise, start, wait, stop, delete):
//!   `server/mod.rs` picks the launcher for a store and owns the running server; one
//!   launcher per server below it; their toolkit (the installation, the process, the
//!   registry a second Ctrl-C empties, certificates, the marks a killed run leaves) below
//!   them.
//! - [`suite`]: the suites (classic, driver, pool, YCSB), each saying what one operation of
//!   a phase is, over the one phase executor ([`suite::executor`]: tasks, pacing, timing,
//!   errors, progress, the phase's run); the client's event loops, open-loop pacing, the
//!   stall watchdog, the turns the variants of one store take ([`suite::turns`]) and the
//!   meeting points of several load clients ([`suite::rendezvous`]).
//! - [`measure`]: timers, latency histograms, time series, errors, CPU time, the counting
//!   allocator and its call sites (`--alloc-sites`), and the machine's floor (loopback
//!   round trip, durable write).
//! - [`store`]: the [`store::Store`] trait and the suites' capability traits, the registry
//!   of adapters ([`store::registry`]), URLs ([`store::url`]), the one request at a time
//!   connection core under the stores' own connections ([`store::conn`]), one folder per
//!   store.
//! - [`report`]: the `run.json` model and its schema ([`report::model`]), its renderers
//!   (text, markdown, HTML, CSV, JSON, SVG charts in [`report::chart`]: no I/O) over what
//!   they share (the verdict they open with in [`report::verdict`], the blog's lines, the
//!   recap tables' rows, the run's facts, the warnings, the number formats in
//!   [`report::format`]), the statistics of repeated figures, the comparison of two runs,
//!   a store's variants side by side ([`report::variants`]), N load clients' runs
//!   (`--client K/N`) merged as one ([`report::merge`]), and the one place that writes
//!   files.
//! - [`workload`]: the vocabulary stores and suites share: the classic record and its
//!   generator, the driver suite's operations, the pool suite's rows, YCSB's workloads,
//!   generators and values, a concurrency level and a suite's repetitions
//!   ([`workload::levels`]).
//! - [`variant`]: a store of a run, a kind or a labelled variant of one
//!   ([`variant::StoreId`]), and what a variant runs with ([`variant::Variant`]).
//! - [`catalog`]: the store kinds and every per-kind fact, durability, each store's own
//!   options, and what a store reports about itself.
//! - [`counters`]: the names of the counters a server keeps about itself that the cost
//!   figures read.
//! - [`machine`]: what the run was made on. [`interrupt`]: Ctrl-C, SIGTERM, SIGHUP.
//!   [`liveness`]: the heartbeat the watchdog reads. [`error`]: usage errors (exit 2).

// The classic suite's future nests the runner's, the watchdog's, the suite's, `AnyStore`'s
// and each driver's own; computing its layout takes more than the default 128 levels.
#![recursion_limit = "256"]

pub mod catalog;
pub mod check;
pub mod cli;
pub mod console;
pub mod counters;
pub mod error;
pub mod interrupt;
pub mod liveness;
pub mod machine;
pub mod measure;
pub mod output;
pub mod plan;
pub mod report;
pub mod run;
pub mod saved;
pub mod server;
pub mod setup;
pub mod store;
pub mod suite;
pub mod variant;
pub mod workload;

use anyhow::{Context, Result};

use catalog::StoreKind;
use cli::{Cli, Command};
use plan::RunPlan;
use report::OutputDir;
use report::model::{Report, RunStatus, StoreStatus};
use variant::StoreId;

/// How a run ended, as a process exit code.
pub fn exit_code(report: &Report) -> u8 {
    if report.status == RunStatus::Interrupted {
        interrupt::exit_code()
    } else if report
        .stores
        .iter()
        .any(|s| matches!(s.status, StoreStatus::Failed | StoreStatus::Interrupted))
    {
        1
    } else {
        0
    }
}

/// Runs a parsed command line; returns the process exit code. Errors are usage errors
/// ([`error::UsageError`], exit 2) or failures to write results (exit 1).
pub fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Some(Command::List(args)) => {
            list(&args)?;
            Ok(0)
        }
        Some(Command::Run(args)) => run_benchmarks(&args),
        Some(Command::Check(args)) => check::run(&args),
        Some(Command::Server(args)) => serve(&args),
        Some(Command::Report(args)) => saved::report(&args),
        Some(Command::Compare(args)) => saved::compare(&args),
        Some(Command::Merge(args)) => saved::merge(&args),
        Some(Command::Schema) => saved::schema(),
        Some(Command::Clean(args)) => {
            if let Some(dir) = args.data_dir.as_deref().filter(|d| !d.is_dir()) {
                return Err(error::UsageError::new(format!(
                    "--data-dir {}: not an existing directory",
                    dir.display()
                ))
                .into());
            }
            let removed = clean(args.data_dir.as_deref())?;
            for r in &removed {
                crate::output::outln!("{r}")?;
            }
            if removed.is_empty() {
                crate::output::outln!(
                    "nothing to clean: no throw-away server or directory of a killed run"
                )?;
            }
            Ok(0)
        }
        None => run_benchmarks(&cli.run),
    }
}

fn list(args: &cli::ListArgs) -> Result<()> {
    let urls = plan::resolve_urls(&args.server, &plan::system_env)?;
    // Every kind, then the variants --url, --config and --set name.
    let mut ids: Vec<StoreId> = StoreKind::all().iter().map(|&k| StoreId::of(k)).collect();
    for id in plan::named_variants(&args.server) {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    // Planned as a run would plan them: a --config file that cannot be read, or a setting a
    // store cannot take, is refused here as there.
    let selected = ids.into_iter().map(|id| (id, Default::default())).collect();
    let planned = plan::plan_stores(selected, &args.server, &urls, &server::find)?;
    let rows: Vec<Vec<String>> = planned
        .into_iter()
        .map(|p| {
            let (status, how) = p.target.describe();
            vec![p.id.to_string(), status.to_string(), how]
        })
        .collect();
    crate::output::out!(
        "{}",
        report::text::table(&["store", "status", "how"], &rows, &[])
    )?;
    Ok(())
}

fn serve(args: &cli::ServerCommandArgs) -> Result<u8> {
    let kind = match &args.store {
        cli::StoreSelector::One(StoreId { kind, label: None }) => *kind,
        _ => {
            return Err(error::UsageError::new(
                "server: name one store (postgres, mysql, redis or redis-cluster), no label",
            )
            .into());
        }
    };
    let installation = server::find(kind).ok_or_else(|| {
        error::UsageError::new(format!("server {kind}: {}", server::install_hint(kind)))
    })?;
    // Refused as a run refuses it: bad usage, before anything starts.
    let installation = match plan::served(plan::Target::Local(installation), kind, args.serve.tls) {
        plan::Target::Local(installation) => installation,
        plan::Target::Unavailable(why) => {
            return Err(error::UsageError::new(format!("server {kind}: {why}")).into());
        }
        _ => unreachable!("served keeps a local server's target or refuses it"),
    };
    interrupt::install(server::kill_all);
    let started = server::start(
        kind,
        &installation,
        args.durability,
        &server::DataDirs::temporary(),
        args.serve.serve(),
    );
    let interrupted = || {
        crate::output::errln!("the {kind} server's start was interrupted; nothing is left running");
        Ok(interrupt::exit_code())
    };
    let local = match started {
        Ok(local) => local,
        // Its setup was cut short and its directory deleted: an interruption, not a failure.
        Err(_) if interrupt::requested() => return interrupted(),
        Err(e) => return Err(e),
    };
    // Ctrl-C while it started (its last steps are not cut short): no URL of a server about
    // to stop, and an interruption's exit.
    if interrupt::requested() {
        local.stop()?;
        return interrupted();
    }
    // The password is in the URL: it is this server's alone, and goes with it.
    crate::output::outln!("{}", local.url())?;
    crate::output::errln!(
        "{kind} ({}) ready in {:.2} s; Ctrl-C stops it and deletes its directory",
        installation.version,
        local.start_time.as_secs_f64()
    );
    while !interrupt::requested() {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    local.stop()?;
    crate::output::errln!("stopped the {kind} server and deleted its directory");
    Ok(0)
}

/// Stops the servers and deletes the directories a killed run left in the temporary
/// directory and in `data_dir`.
fn clean(data_dir: Option<&std::path::Path>) -> Result<Vec<server::leftovers::Removed>> {
    let mut bases = vec![std::env::temp_dir()];
    bases.extend(data_dir.map(std::path::Path::to_path_buf));
    bases.dedup();
    let mut removed = Vec::new();
    for base in bases {
        removed.extend(server::leftovers::clean(&base)?);
    }
    Ok(removed)
}

fn run_benchmarks(args: &cli::RunArgs) -> Result<u8> {
    let plan = RunPlan::resolve(args, &plan::system_env, &server::find)?;
    let out = OutputDir::prepare(&plan.out)?;
    let _lock = out.lock()?;
    // What a killed run left does not stop this one: a warning, then the run.
    match clean(Some(&plan.data_dirs.under)) {
        Ok(removed) => removed.iter().for_each(|r| crate::output::errln!("{r}")),
        Err(e) => crate::output::errln!("warning: {e:#}"),
    }
    interrupt::install(server::kill_all);
    suite::clients::raise_open_file_limit();
    // The run's own event loop, on this thread: the first of the client's loops (see
    // `suite::clients`, which starts one more per further `--client-threads`).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let quiet = plan.quiet;
    let out_dir = out.path().to_path_buf();
    let report = runtime.block_on(async move {
        tokio::spawn(async move {
            let mut console = console::Console::new(plan.quiet, plan.verbose);
            run::run_plan(&plan, Some(&out), &mut console).await
        })
        .await
        .context("the run panicked")?
    })?;
    if quiet {
        // Quiet still says what a reader must know before trusting a figure.
        let warnings = report::notices::warnings(&report);
        if !warnings.is_empty() {
            crate::output::errln!("{}", report::notices::warnings_summary(&report, &warnings));
            for (store, lines) in &warnings {
                for line in lines {
                    crate::output::errln!("{store}: {line}");
                }
            }
        }
        if let Some(line) = report::notices::skipped_line(&report) {
            crate::output::errln!("{line}");
        }
    } else {
        crate::output::out!("{}", report::text::recap(&report))?;
        crate::output::outln!(
            "\nwrote run.json, results.md, report.html, results.csv, series.csv and the charts in {}",
            out_dir.display()
        )?;
    }
    Ok(exit_code(&report))
}
