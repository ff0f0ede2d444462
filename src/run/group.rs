//! One store of the run with its variants (every store of one kind: a group), from start to
//! end: each variant's server started (or the one started before the run taken over), the
//! settings it was asked for read back (one not read back as asked fails that variant),
//! their suites run together taking turns run by run (`suite::turns`), the order of their
//! runs written down, their servers stopped. A store without variants is a group of one.
//! Also the start before the run of every store with settings of its own ([`prepare`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use anyhow::Result;
use chrono::{SecondsFormat, Utc};

use crate::check::same_value;
use crate::cli::Suite;
use crate::error::UsageError;
use crate::interrupt;
use crate::plan::{PlannedStore, RunPlan, Target};
use crate::report::model::{PhaseKind, PhaseResult, Report, RunTurn, StoreResult, StoreStatus};
use crate::report::{Format, OutputDir};
use crate::setup::Setup;
use crate::store::url::scrub;
use crate::suite::clients::Clients;
use crate::suite::turns::{Turns, take_turns};
use crate::suite::{Observer, classic, driver, pool, watchdog, ycsb};

/// Now, as RFC 3339 (seconds).
pub(super) fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// What a checkpoint says of the store still running: if the file is read after the run
/// died, this is why the store has no more phases.
pub const UNFINISHED: &str = "not finished when this file was written: the run was still \
     going, or was killed; the phases shown are the ones it finished";

/// What every store of the run is given to do: the classic suite's records and searches
/// are made once, for all of them; the other suites work from their plans.
pub(super) enum Work {
    Classic(classic::Workload),
    Driver,
    Pool,
    Ycsb,
}

impl Work {
    pub(super) fn of(plan: &RunPlan) -> Work {
        match plan.suite {
            Suite::Classic => Work::Classic(classic::Workload::generate(&plan.classic)),
            Suite::Driver => Work::Driver,
            Suite::Pool => Work::Pool,
            Suite::Ycsb => Work::Ycsb,
        }
    }
}

/// A store made ready, with settings read back from it by name (`None`: it cannot tell).
pub(super) struct Prepared {
    setup: Setup,
    read_back: BTreeMap<String, Option<String>>,
}

/// Starts every store that has settings of its own (`--config`, `--set`) and reads them
/// back, before anything is measured; the stores are kept for their turn. A store whose
/// server does not start with them, or refuses them, stops the run: a usage error naming
/// the flag (every store started is stopped first).
pub(super) async fn prepare(plan: &RunPlan, secrets: &[String]) -> Result<Vec<Option<Prepared>>> {
    let mut prepared: Vec<Option<Prepared>> = Vec::new();
    for store in &plan.stores {
        let runnable = !matches!(store.target, Target::Unavailable(_));
        if !store.variant.has_own_settings() || !runnable || interrupt::requested() {
            prepared.push(None);
            continue;
        }
        match start(store, plan).await {
            Ok(p) => prepared.push(Some(p)),
            // Cut short by Ctrl-C, not refused: the run ends as an interrupted one, every
            // store not run.
            Err(_) if interrupt::requested() => {
                for p in prepared.into_iter().flatten() {
                    p.setup.stop().await;
                }
                return Ok(plan.stores.iter().map(|_| None).collect());
            }
            Err(e) => {
                for p in prepared.into_iter().flatten() {
                    p.setup.stop().await;
                }
                return Err(refused(store, &e, secrets).into());
            }
        }
    }
    Ok(prepared)
}

/// Makes a store ready and reads back its own settings.
async fn start(store: &PlannedStore, plan: &RunPlan) -> Result<Prepared> {
    let setup = Setup::start(
        store,
        plan.connect_timeout,
        &plan.data_dirs,
        plan.serve,
        &plan.options,
    )
    .await?;
    match setup.read_back(store.variant.settings.keys()).await {
        Ok(read_back) => Ok(Prepared { setup, read_back }),
        Err(e) => {
            setup.stop().await;
            Err(e)
        }
    }
}

/// A store's own settings that its server did not take, as a usage error naming the flags.
fn refused(store: &PlannedStore, error: &anyhow::Error, secrets: &[String]) -> UsageError {
    let v = &store.variant;
    let mut asked = Vec::new();
    if let Some(config) = &v.config {
        asked.push(format!("--config {}={}", store.id, config.path.display()));
    }
    if !v.settings.is_empty() {
        let settings: Vec<String> = v.settings.iter().map(|(k, x)| format!("{k}={x}")).collect();
        asked.push(format!("--set {}:{}", store.id, settings.join(",")));
    }
    UsageError::new(scrub(
        &format!(
            "{}: {} did not take them: {}",
            asked.join(" and "),
            store.id,
            crate::error::chain(error)
        ),
        secrets,
    ))
}

/// Each setting asked for that was not read back as asked, with both values.
fn not_as_asked(
    asked: &BTreeMap<String, String>,
    found: &BTreeMap<String, Option<String>>,
) -> Vec<String> {
    asked
        .iter()
        .filter_map(|(key, value)| match found.get(key) {
            Some(Some(read)) if same_value(value, read) => None,
            Some(Some(read)) => Some(format!("{key}: asked {value}, read back {read}")),
            _ => Some(format!(
                "{key}: asked {value}, and the store cannot read it back"
            )),
        })
        .collect()
}

/// The stores of the plan by group, in run order: the indexes of one kind's stores each
/// (the plan keeps them side by side).
pub(super) fn store_groups(plan: &RunPlan) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, store) in plan.stores.iter().enumerate() {
        match groups.last_mut() {
            Some(group) if plan.stores[group[0]].id.kind == store.id.kind => group.push(i),
            _ => groups.push(vec![i]),
        }
    }
    groups
}

/// A store of a group whose suite runs.
struct Live<'a> {
    index: usize,
    store: &'a PlannedStore,
    prepared: Prepared,
    result: StoreResult,
}

/// Runs one group: every member made ready (a member of `members` prepared before the run
/// is taken as it is), checked, its suite run in turns with the others, stopped; every
/// member's result added to `report` in plan order, and the report written.
pub(super) async fn run_group(
    members: Vec<(usize, Option<Prepared>)>,
    plan: &RunPlan,
    work: &Work,
    report: &mut Report,
    out: Option<&OutputDir>,
    observer: &mut dyn Observer,
    secrets: &[String],
) {
    // Every setting one member asked for is read back from all of them: the report shows
    // how they differ.
    let names: BTreeSet<&String> = members
        .iter()
        .flat_map(|(i, _)| plan.stores[*i].variant.settings.keys())
        .collect();
    let mut done: Vec<(usize, StoreResult)> = Vec::new();
    let mut live: Vec<Live<'_>> = Vec::new();
    for (index, prepared) in members {
        if interrupt::requested() {
            break;
        }
        let store = &plan.stores[index];
        let mut result = StoreResult::new(&store.id.to_string());
        observer.store_started(&result.store);
        let started = match prepared {
            Some(p) => Ok(p),
            None => start(store, plan).await,
        };
        let mut prepared = match started {
            Ok(p) => p,
            Err(e) => {
                result.status = if matches!(store.target, Target::Unavailable(_)) {
                    StoreStatus::Skipped
                } else if interrupt::requested() {
                    StoreStatus::Interrupted
                } else {
                    StoreStatus::Failed
                };
                result.error = Some(scrub(&crate::error::chain(&e), secrets));
                observer.store_finished(&result);
                done.push((index, result));
                continue;
            }
        };
        result.deployment = Some(prepared.setup.deployment.clone());
        result.client_threads = Some(plan.client_threads(store.id.kind) as u32);
        let others: Vec<&String> = names
            .iter()
            .copied()
            .filter(|n| !prepared.read_back.contains_key(*n))
            .collect();
        // For the report only: a store that cannot tell shows none.
        if let Ok(more) = prepared.setup.read_back(others).await {
            prepared.read_back.extend(more);
        }
        let wrong = not_as_asked(&store.variant.settings, &prepared.read_back);
        if !wrong.is_empty() {
            result.status = StoreStatus::Failed;
            result.error = Some(scrub(
                &format!(
                    "its settings were not read back as asked (--set): {}",
                    wrong.join("; ")
                ),
                secrets,
            ));
            observer.store_finished(&result);
            prepared.setup.stop().await;
            done.push((index, result));
            continue;
        }
        live.push(Live {
            index,
            store,
            prepared,
            result,
        });
    }
    if !live.is_empty() {
        let turns = Turns::new(live.len());
        let shared = Shared {
            observer: Mutex::new(&mut *observer),
            speaking: Mutex::new(None),
            unfinished: Mutex::new(vec![None; live.len()]),
            names: live.iter().map(|l| l.result.store.clone()).collect(),
            report,
            out,
            secrets,
        };
        let runs = live.iter_mut().enumerate().map(|(slot, l)| {
            let turns = Arc::clone(&turns);
            let shared = &shared;
            async move {
                let mut observer = Member { shared, slot };
                let setup = &l.prepared.setup;
                // On the heap at once: the suites' futures are large, and are handed down
                // through the watchdog and the turns.
                let suite = Box::pin(run_suite(
                    setup,
                    l.store,
                    plan,
                    work,
                    &mut l.result,
                    &mut observer,
                ));
                take_turns(turns, slot, watchdog::guard(plan.stall_timeout, suite)).await
            }
        });
        let outcomes = futures::future::join_all(runs).await;
        drop(shared);
        if live.len() > 1 {
            report
                .interleaved
                .extend(turns.order().into_iter().map(|(slot, run)| RunTurn {
                    store: live[slot].result.store.clone(),
                    run,
                }));
        }
        for (l, outcome) in live.iter_mut().zip(outcomes) {
            let result = &mut l.result;
            if let Err(e) = outcome {
                result.status = if interrupt::requested() {
                    StoreStatus::Interrupted
                } else {
                    StoreStatus::Failed
                };
                result.error = Some(scrub(&crate::error::chain(&e), secrets));
            }
            let embedded = l.store.id.kind.is_embedded();
            let loops = plan.client_threads(l.store.id.kind) as u32;
            for p in &mut result.phases {
                p.client_bound = p.client_bound_reason(loops, embedded);
            }
            // The settings read back by name beside the ones the store reads itself.
            if let Some(info) = &mut result.info {
                for (name, value) in &l.prepared.read_back {
                    if let Some(value) = value {
                        info.settings
                            .entry(name.clone())
                            .or_insert_with(|| value.clone());
                    }
                }
            }
            observer.store_finished(result);
        }
    }
    for l in live {
        l.prepared.setup.stop().await;
        done.push((l.index, l.result));
    }
    done.sort_by_key(|(index, _)| *index);
    report.stores.extend(done.into_iter().map(|(_, r)| r));
    report.finished_at = now();
    report.client_peak_rss_bytes = crate::measure::peak_rss_bytes();
    if let Some(Err(e)) = out.map(|o| o.write(report)) {
        crate::output::errln!("warning: could not write the partial results: {e:#}");
    }
}

/// One store's suite, on its connections and the client's event loops; the loops end with
/// the suite, before the server stops.
async fn run_suite(
    setup: &Setup,
    store: &PlannedStore,
    plan: &RunPlan,
    work: &Work,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    let kind = store.id.kind;
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
    let threads = plan.client_threads(kind);
    // What each phase cost the store's server is read around it.
    let watch = setup.watch();
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
}

/// What the members of a group share while their suites run: the run's observer (one
/// member speaks at a time: the console is told whose lines follow), and the checkpoints:
/// each time a member's finished phases change, run.json and results.md are written with
/// the stores before the group and every member's phases so far, marked interrupted with
/// [`UNFINISHED`] (a kill -9 of dbcompare loses only the phases it was in).
struct Shared<'a> {
    observer: Mutex<&'a mut dyn Observer>,
    /// The member the console heard from last.
    speaking: Mutex<Option<usize>>,
    /// Each member's phases so far.
    unfinished: Mutex<Vec<Option<StoreResult>>>,
    names: Vec<String>,
    report: &'a Report,
    out: Option<&'a OutputDir>,
    secrets: &'a [String],
}

impl Shared<'_> {
    /// Passes an event of member `slot` on, telling the console first when another member
    /// spoke last.
    fn tell(&self, slot: usize, event: impl FnOnce(&mut dyn Observer)) {
        let mut observer = self.observer.lock().unwrap_or_else(|e| e.into_inner());
        let mut speaking = self.speaking.lock().unwrap_or_else(|e| e.into_inner());
        if *speaking != Some(slot) {
            if speaking.is_some() {
                observer.store_started(&self.names[slot]);
            }
            *speaking = Some(slot);
        }
        event(&mut **observer);
    }

    /// Writes run.json and results.md with every member's phases so far.
    fn checkpoint(&self, slot: usize, result: &StoreResult) {
        let Some(out) = self.out else { return };
        let mut unfinished = self.unfinished.lock().unwrap_or_else(|e| e.into_inner());
        unfinished[slot] = Some(result.clone());
        let mut report = self.report.clone();
        for r in unfinished.iter().flatten() {
            let mut r = r.clone();
            r.status = StoreStatus::Interrupted;
            r.error = Some(scrub(UNFINISHED, self.secrets));
            report.stores.push(r);
        }
        report.finished_at = now();
        // The quick formats only: the charts and the HTML page come with the store's end.
        if let Err(e) = out.write_formats(&report, &[Format::Json, Format::Markdown]) {
            crate::output::errln!("warning: could not write the phases finished so far: {e:#}");
        }
    }
}

/// One member's observer: its events go to the run's through [`Shared`].
struct Member<'s, 'a> {
    shared: &'s Shared<'a>,
    slot: usize,
}

impl Observer for Member<'_, '_> {
    fn floor_measured(&mut self, floor: &crate::report::model::Floor) {
        self.shared.tell(self.slot, |o| o.floor_measured(floor));
    }
    fn store_started(&mut self, store: &str) {
        self.shared.tell(self.slot, |o| o.store_started(store));
    }
    fn run_started(&mut self, label: &str) {
        self.shared.tell(self.slot, |o| o.run_started(label));
    }
    fn store_described(&mut self, result: &StoreResult) {
        self.shared.tell(self.slot, |o| o.store_described(result));
    }
    fn size_measured(&mut self, which: &str, bytes: Option<u64>) {
        self.shared
            .tell(self.slot, |o| o.size_measured(which, bytes));
    }
    fn phase_started(&mut self, kind: PhaseKind, size: &crate::workload::record::Size, ops: u64) {
        self.shared
            .tell(self.slot, |o| o.phase_started(kind, size, ops));
    }
    fn progress(&mut self, done: u64) {
        self.shared.tell(self.slot, |o| o.progress(done));
    }
    fn phase_finished(&mut self, phase: &PhaseResult) {
        self.shared.tell(self.slot, |o| o.phase_finished(phase));
    }
    fn phases_recorded(&mut self, result: &StoreResult) {
        self.shared.tell(self.slot, |o| o.phases_recorded(result));
        self.shared.checkpoint(self.slot, result);
    }
    fn store_finished(&mut self, result: &StoreResult) {
        self.shared.tell(self.slot, |o| o.store_finished(result));
    }
    fn not_applicable(&mut self, test: &str) {
        self.shared.tell(self.slot, |o| o.not_applicable(test));
    }
    fn status(&mut self, line: &str) {
        self.shared.tell(self.slot, |o| o.status(line));
    }
}
