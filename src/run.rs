//! The runner: a resolved plan in, a report out. Every store of the plan in turn: where its
//! server comes from (a URL, a throw-away local server, or embedded), its connections and
//! the client's event loops, its suite under the stall watchdog, then the server stopped;
//! the report written after every phase, so a run killed at any point keeps what it
//! finished.

use std::sync::Arc;

use anyhow::Result;
use chrono::{SecondsFormat, Utc};

use crate::catalog::StoreKind;
use crate::cli::Suite;
use crate::interrupt;
use crate::machine::Machine;
use crate::plan::{RunPlan, Target};
use crate::report::model::{
    PhaseKind, PhaseResult, Report, RunStatus, StoreResult, StoreStatus, Tool,
};
use crate::report::{Format, OutputDir};
use crate::setup::Setup;
use crate::store::url::scrub;
use crate::suite::clients::Clients;
use crate::suite::{Observer, classic, driver, pool, watchdog, ycsb};

/// Now, as RFC 3339 (seconds).
fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// What a checkpoint says of the store still running: if the file is read after the run
/// died, this is why the store has no more phases.
pub const UNFINISHED: &str = "not finished when this file was written: the run was still \
     going, or was killed; the phases shown are the ones it finished";

/// Passes everything on to the console and, each time a store's finished phases change,
/// writes run.json and results.md with them (the stores before it, then it, marked
/// interrupted with [`UNFINISHED`]): a kill -9 of dbcompare loses only the phase it was in.
struct Checkpoints<'a> {
    inner: &'a mut dyn Observer,
    out: Option<&'a OutputDir>,
    report: &'a Report,
    secrets: &'a [String],
}

impl Observer for Checkpoints<'_> {
    fn floor_measured(&mut self, floor: &crate::report::model::Floor) {
        self.inner.floor_measured(floor);
    }
    fn store_started(&mut self, store: &str) {
        self.inner.store_started(store);
    }
    fn run_started(&mut self, label: &str) {
        self.inner.run_started(label);
    }
    fn store_described(&mut self, result: &StoreResult) {
        self.inner.store_described(result);
    }
    fn size_measured(&mut self, which: &str, bytes: Option<u64>) {
        self.inner.size_measured(which, bytes);
    }
    fn phase_started(&mut self, kind: PhaseKind, size: &crate::workload::record::Size, ops: u64) {
        self.inner.phase_started(kind, size, ops);
    }
    fn progress(&mut self, done: u64) {
        self.inner.progress(done);
    }
    fn phase_finished(&mut self, phase: &PhaseResult) {
        self.inner.phase_finished(phase);
    }
    fn phases_recorded(&mut self, result: &StoreResult) {
        self.inner.phases_recorded(result);
        let Some(out) = self.out else { return };
        let mut report = self.report.clone();
        let mut unfinished = result.clone();
        unfinished.status = StoreStatus::Interrupted;
        unfinished.error = Some(scrub(UNFINISHED, self.secrets));
        report.stores.push(unfinished);
        report.finished_at = now();
        // The quick formats only: the charts and the HTML page come with the store's end.
        if let Err(e) = out.write_formats(&report, &[Format::Json, Format::Markdown]) {
            eprintln!("warning: could not write the phases finished so far: {e:#}");
        }
    }
    fn store_finished(&mut self, result: &StoreResult) {
        self.inner.store_finished(result);
    }
    fn not_applicable(&mut self, test: &str) {
        self.inner.not_applicable(test);
    }
    fn status(&mut self, line: &str) {
        self.inner.status(line);
    }
}

/// Runs every store of the plan in turn. A store that fails is reported as failed and the
/// next one runs; Ctrl-C stops the run after the current operation. After each phase and
/// each store the report so far is written to `out` (marked partial until the run ends).
pub async fn run_plan(
    plan: &RunPlan,
    out: Option<&OutputDir>,
    observer: &mut dyn Observer,
) -> Result<Report> {
    let mut report = Report {
        schema_version: crate::report::model::SCHEMA_VERSION,
        tool: Tool::current(),
        status: RunStatus::Partial,
        started_at: now(),
        finished_at: now(),
        plan: plan.summary(),
        machine: Machine::detect(),
        floor: None,
        client_peak_rss_bytes: None,
        stores: Vec::new(),
        shares: Vec::new(),
    };
    if plan.alloc_sites {
        if crate::measure::allocations().is_none() {
            anyhow::bail!(
                "--alloc-sites needs the counting allocator, which is off \
                 (DBCOMPARE_ALLOC_COUNTING=off)"
            );
        }
        crate::measure::sites::enable();
    }
    if plan.floor {
        // The directory the throw-away servers (and SQLite's temporary file) keep data in.
        let dir = plan.data_dirs.under.clone();
        match tokio::task::spawn_blocking(move || crate::measure::floor::measure(&dir)).await {
            Ok(Ok(floor)) => {
                observer.floor_measured(&floor);
                report.floor = Some(floor);
            }
            Ok(Err(e)) => eprintln!("warning: the machine's floor was not measured: {e:#}"),
            Err(e) => eprintln!("warning: the machine's floor was not measured: {e}"),
        }
    }
    let work = Work::of(plan);
    let secrets = plan.secrets();
    for (kind, target) in &plan.stores {
        if interrupt::requested() {
            break;
        }
        let mut result = StoreResult::new(kind.name());
        observer.store_started(kind.name());
        let mut checkpoints = Checkpoints {
            inner: &mut *observer,
            out,
            report: &report,
            secrets: &secrets,
        };
        let outcome = run_store(*kind, target, plan, &work, &mut result, &mut checkpoints).await;
        if let Err(e) = outcome {
            result.status = if interrupt::requested() {
                StoreStatus::Interrupted
            } else if matches!(target, Target::Unavailable(_)) {
                StoreStatus::Skipped
            } else {
                StoreStatus::Failed
            };
            result.error = Some(scrub(&crate::error::chain(&e), &secrets));
        }
        let embedded = kind.server().is_none();
        let loops = plan.client_threads as u32;
        for p in &mut result.phases {
            p.client_bound = p.client_bound_reason(loops, embedded);
        }
        observer.store_finished(&result);
        report.stores.push(result);
        report.finished_at = now();
        report.client_peak_rss_bytes = crate::measure::peak_rss_bytes();
        if let Some(Err(e)) = out.map(|o| o.write(&report)) {
            eprintln!("warning: could not write the partial results: {e:#}");
        }
    }
    report.status = if interrupt::requested() {
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    };
    report.finished_at = now();
    report.client_peak_rss_bytes = crate::measure::peak_rss_bytes();
    if let Some(out) = out {
        out.write(&report)?;
    }
    Ok(report)
}

/// What every store of the run is given to do: the classic suite's records and searches
/// are made once, for all of them; the other suites work from their plans.
enum Work {
    Classic(classic::Workload),
    Driver,
    Pool,
    Ycsb,
}

impl Work {
    fn of(plan: &RunPlan) -> Work {
        match plan.suite {
            Suite::Classic => Work::Classic(classic::Workload::generate(&plan.classic)),
            Suite::Driver => Work::Driver,
            Suite::Pool => Work::Pool,
            Suite::Ycsb => Work::Ycsb,
        }
    }
}

/// One store: start its server if it needs one, connect, run the suite, stop the server.
async fn run_store(
    kind: StoreKind,
    target: &Target,
    plan: &RunPlan,
    work: &Work,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    let setup = Setup::start(
        kind,
        target,
        plan.durability,
        plan.connect_timeout,
        &plan.data_dirs,
        plan.serve,
        &plan.options,
    )
    .await?;
    result.deployment = Some(setup.deployment.clone());
    // The classic suite's connections, and the other suites' (another client on some
    // stores: `Adapter::DriverSuites`).
    let spec = Arc::new(setup.spec.clone());
    let records = {
        let spec = Arc::clone(&spec);
        move || {
            let spec = Arc::clone(&spec);
            async move { kind.connect(&spec).await }
        }
    };
    let drivers = move || {
        let spec = Arc::clone(&spec);
        async move { kind.connect_for_drivers(&spec).await }
    };
    let threads = plan.client_threads;
    let watch = setup.watch();
    // The client's loops end with the suite, before the server stops.
    let suite = async {
        match work {
            Work::Classic(workload) => {
                let clients = Clients::start(records, threads)?.watching(watch);
                classic::run(&clients, workload, result, observer).await
            }
            Work::Driver => {
                let clients = Clients::start(drivers, threads)?.watching(watch);
                driver::run(&clients, &plan.driver, result, observer).await
            }
            Work::Pool => {
                let clients = Clients::start(drivers, threads)?.watching(watch);
                pool::run(&clients, &plan.pool, result, observer).await
            }
            Work::Ycsb => {
                let clients = Clients::start(drivers, threads)?.watching(watch);
                ycsb::run(&clients, &plan.ycsb, result, observer).await
            }
        }
    };
    let outcome = watchdog::guard(plan.stall_timeout, suite).await;
    setup.stop().await;
    outcome
}
