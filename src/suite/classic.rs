//! The classic suite, the blog's sequence: reset, initial size, INSERT per size (one record
//! per transaction, one connection), final size, SEARCH 40 x N random lookups per size at
//! each concurrency level, every answer checked. The whole sequence is repeated: warm-up
//! runs first (discarded), then measured runs whose figures become medians.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, anyhow, bail};

use super::Observer;
use super::clients::{Clients, Connect};
use super::open_loop::Pacer;
use super::watchdog::AbortOnDrop;
use crate::interrupt;
use crate::measure::{self, Errors, Meter, OpenLoopRun, PhaseRun};
use crate::record::{self, Record, Size};
use crate::report::model::{PhaseKind, PhaseResult, StoreResult};
use crate::store::Store;

/// Operations between two progress updates.
const PROGRESS_EVERY: usize = 512;

/// What the classic suite runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassicPlan {
    pub sizes: Vec<Size>,
    pub searches_per_insert: u64,
    pub seed: u64,
    /// Whole-suite runs made first and discarded.
    pub warmup_runs: u32,
    /// Measured whole-suite runs (at least 1).
    pub runs: u32,
    /// Concurrency levels of the search phases.
    pub concurrency: Vec<u32>,
    /// Open-loop search rate (operations per second), or closed loop.
    pub rate: Option<f64>,
}

impl ClassicPlan {
    /// One measured run, no warm-up, one connection, closed loop: the blog's plan.
    pub fn once(sizes: Vec<Size>, searches_per_insert: u64, seed: u64) -> Self {
        ClassicPlan {
            sizes,
            searches_per_insert,
            seed,
            warmup_runs: 0,
            runs: 1,
            concurrency: vec![1],
            rate: None,
        }
    }
}

/// One size's records and search order, shared with the search tasks.
struct SizeWork {
    size: Size,
    records: Arc<Vec<Record>>,
    order: Arc<Vec<u32>>,
}

/// The records and search orders of a plan, generated before anything is timed.
pub struct Workload {
    plan: ClassicPlan,
    sizes: Vec<SizeWork>,
}

impl Workload {
    pub fn generate(plan: &ClassicPlan) -> Self {
        let mut next_id = 1;
        let sizes = plan
            .sizes
            .iter()
            .map(|size| {
                let records = record::generate(plan.seed, size, next_id);
                next_id += records.len() as i64;
                let order =
                    record::search_order(plan.seed, size, size.records * plan.searches_per_insert);
                SizeWork {
                    size: size.clone(),
                    records: Arc::new(records),
                    order: Arc::new(order),
                }
            })
            .collect();
        Workload {
            plan: plan.clone(),
            sizes,
        }
    }
}

/// Which run of the suite is going.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunLabel {
    Warmup { index: u32, of: u32 },
    Measured { index: u32, of: u32 },
}

impl std::fmt::Display for RunLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunLabel::Warmup { index, of } => write!(f, "warm-up run {index}/{of} (discarded)"),
            RunLabel::Measured { index, of } => write!(f, "run {index}/{of}"),
        }
    }
}

/// Runs the suite on a store, filling `result` as it goes (so a failure keeps what was
/// measured before it). An error fails the store's run; a wrong or missing answer is an
/// error naming the unique_id it was searched by.
pub async fn run<C: Connect + Send + 'static>(
    clients: &Clients<C>,
    workload: &Workload,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    let plan = &workload.plan;
    let mut connections = vec![clients.open(0).await?];
    let mut measured: Vec<PhaseRun> = Vec::new();
    let total = plan.warmup_runs + plan.runs.max(1);
    let mut outcome = Ok(());
    for rep in 0..total {
        let label = if rep < plan.warmup_runs {
            RunLabel::Warmup {
                index: rep + 1,
                of: plan.warmup_runs,
            }
        } else {
            RunLabel::Measured {
                index: rep - plan.warmup_runs + 1,
                of: plan.runs.max(1),
            }
        };
        if total > 1 {
            observer.run_started(&label.to_string());
        }
        let mut this_run = Vec::new();
        outcome = run_once(
            clients,
            &mut connections,
            workload,
            result,
            observer,
            (&measured, &mut this_run),
            rep == 0,
        )
        .await;
        let failed = outcome.is_err();
        if matches!(label, RunLabel::Measured { .. }) || failed {
            measured.extend(this_run);
        }
        if failed {
            break;
        }
    }
    result.phases = aggregate_by_phase(&measured);
    clients.close(connections).await;
    outcome
}

/// Groups runs by phase (kind, size, concurrency), in first-run order, and aggregates each.
fn aggregate_by_phase(runs: &[PhaseRun]) -> Vec<PhaseResult> {
    let mut order: Vec<(PhaseKind, String, u32)> = Vec::new();
    let mut groups: BTreeMap<(PhaseKind, String, u32), Vec<PhaseRun>> = BTreeMap::new();
    for r in runs {
        let key = (r.kind, r.size.name.clone(), r.concurrency);
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(r.clone());
    }
    order
        .iter()
        .map(|key| measure::aggregate(&groups[key]))
        .collect()
}

/// One run of the whole sequence. Sizes and settings are reported from the first run,
/// warm-up or not: it is the one that starts from an empty store (later runs can find an
/// append-only file or a WAL that remembers the runs before them).
///
/// `runs` holds the measured runs before this one and receives this one's phases. Each
/// phase is in `result` as soon as it ends, with the runs before it: a run abandoned in the
/// middle (a stalled store, see `watchdog`) keeps every phase it finished.
async fn run_once<C: Connect + Send + 'static>(
    clients: &Clients<C>,
    connections: &mut Vec<C::Store>,
    workload: &Workload,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
    runs: (&[PhaseRun], &mut Vec<PhaseRun>),
    first_run: bool,
) -> Result<()> {
    let (before, runs) = runs;
    let main = &mut connections[0];
    main.reset().await?;
    let info = main.describe().await?;
    if result.info.is_none() || first_run {
        result.info = Some(info);
        observer.store_described(result);
    }
    let initial = measure_size(main, "initial", result, observer).await;
    if first_run || result.initial_size_bytes.is_none() {
        result.initial_size_bytes = initial.map(|u| u.bytes);
    }

    for work in &workload.sizes {
        let run = insert_phase(main, work, observer).await;
        finish_phase(run, (before, runs), result, observer)?;
    }

    let main = &mut connections[0];
    let fin = measure_size(main, "final", result, observer).await;
    if first_run || result.final_size_bytes.is_none() {
        result.final_size_bytes = fin.as_ref().map(|u| u.bytes);
        result.final_size_extra = fin.map(|u| u.extra).unwrap_or_default();
    }
    // Read the store again now that it holds data: planners choose their search path by it.
    if first_run || result.info.is_none() {
        result.info = Some(main.describe().await?);
    }

    for &concurrency in &workload.plan.concurrency {
        let concurrency = concurrency.max(1) as usize;
        while connections.len() < concurrency {
            connections.push(clients.open(connections.len()).await?);
        }
        for work in &workload.sizes {
            let run = if concurrency == 1 && workload.plan.rate.is_none() {
                search_phase_closed(&mut connections[0], work, observer).await
            } else {
                let rate = workload.plan.rate;
                search_phase_tasks(clients, connections, concurrency, work, rate, observer).await?
            };
            finish_phase(run, (before, runs), result, observer)?;
        }
    }
    Ok(())
}

/// The outcome of a phase run, before it is checked.
struct Measured {
    run: PhaseRun,
    first_error: Option<String>,
}

async fn insert_phase<S: Store>(
    store: &mut S,
    work: &SizeWork,
    observer: &mut dyn Observer,
) -> Measured {
    observer.phase_started(PhaseKind::Insert, &work.size, work.records.len() as u64);
    let mut histogram = measure::new_histogram();
    let mut errors = Errors::default();
    let mut stopped = false;
    let meter = Meter::start();
    for (i, r) in work.records.iter().enumerate() {
        if interrupt::requested() {
            stopped = true;
            break;
        }
        let t = Instant::now();
        let outcome = store.insert(r).await;
        measure::record(&mut histogram, t.elapsed());
        if let Err(e) = outcome {
            let message = || format!("inserting {}: {e:#}", r.unique_id);
            if errors.count(format!("store error: {e:#}"), message) {
                stopped = true;
                break;
            }
        }
        if i % PROGRESS_EVERY == 0 {
            observer.progress(i as u64);
        }
    }
    one_connection_run(
        PhaseKind::Insert,
        &work.size,
        errors,
        stopped,
        meter,
        histogram,
    )
}

/// Checks one answer; `Some((kind, message))` when it is wrong.
fn check(expected: &Record, outcome: Result<Option<Record>>) -> Option<(&'static str, String)> {
    let (kind, detail) = match outcome {
        Ok(Some(found)) if found == *expected => return None,
        Ok(Some(found)) => (
            "wrong record",
            format!("expected {expected:?}, got {found:?}"),
        ),
        Ok(None) => ("missing record", "no record found".to_string()),
        Err(e) => ("store error", format!("{e:#}")),
    };
    Some((
        kind,
        format!("{kind} for unique_id {}: {detail}", expected.unique_id),
    ))
}

/// The blog's search phase: one connection, one search after another.
async fn search_phase_closed<S: Store>(
    store: &mut S,
    work: &SizeWork,
    observer: &mut dyn Observer,
) -> Measured {
    observer.phase_started(PhaseKind::Search, &work.size, work.order.len() as u64);
    let mut histogram = measure::new_histogram();
    let mut errors = Errors::default();
    let mut stopped = false;
    let meter = Meter::start();
    for (i, &index) in work.order.iter().enumerate() {
        if interrupt::requested() {
            stopped = true;
            break;
        }
        let expected = &work.records[index as usize];
        let t = Instant::now();
        let outcome = store.find(&expected.unique_id).await;
        measure::record(&mut histogram, t.elapsed());
        if let Some((kind, message)) = check(expected, outcome)
            && errors.count(kind, || message)
        {
            stopped = true;
            break;
        }
        if i % PROGRESS_EVERY == 0 {
            observer.progress(i as u64);
        }
    }
    one_connection_run(
        PhaseKind::Search,
        &work.size,
        errors,
        stopped,
        meter,
        histogram,
    )
}

/// The run of a phase made on one connection, one operation after another.
fn one_connection_run(
    kind: PhaseKind,
    size: &Size,
    errors: Errors,
    stopped: bool,
    meter: Meter,
    histogram: hdrhistogram::Histogram<u64>,
) -> Measured {
    let ops = histogram.len();
    Measured {
        run: PhaseRun {
            kind,
            size: size.clone(),
            concurrency: 1,
            ops,
            errors: errors.by_kind,
            incomplete: stopped,
            figures: meter.finish(ops, &histogram),
            histogram,
            open_loop: None,
        },
        first_error: errors.first,
    }
}

/// What one search task brings back.
struct TaskResult<S> {
    store: S,
    histogram: hdrhistogram::Histogram<u64>,
    errors: Errors,
    stopped: bool,
    pacer: Option<Pacer>,
}

/// One task of a concurrent or open-loop search phase: searches `task`, `task + tasks`, ...
async fn search_task<S: Store>(
    mut store: S,
    records: Arc<Vec<Record>>,
    order: Arc<Vec<u32>>,
    task: usize,
    tasks: usize,
    mut pacer: Option<Pacer>,
) -> TaskResult<S> {
    let mut histogram = measure::new_histogram();
    let mut errors = Errors::default();
    let mut stopped = false;
    for i in (task..order.len()).step_by(tasks) {
        if interrupt::requested() {
            stopped = true;
            break;
        }
        let expected = &records[order[i] as usize];
        let intended = match &pacer {
            Some(p) => Some(p.wait_turn(i as u64).await),
            None => None,
        };
        let start = tokio::time::Instant::now();
        let outcome = store.find(&expected.unique_id).await;
        let end = tokio::time::Instant::now();
        measure::record(&mut histogram, end - start);
        if let (Some(p), Some(intended)) = (pacer.as_mut(), intended) {
            p.finished(intended, start, end);
        }
        if let Some((kind, message)) = check(expected, outcome)
            && errors.count(kind, || message)
        {
            stopped = true;
            break;
        }
    }
    TaskResult {
        store,
        histogram,
        errors,
        stopped,
        pacer,
    }
}

/// A search phase over `concurrency` tasks, each on its own connection (and that
/// connection's event loop), closed loop or on the open-loop schedule of `rate`.
async fn search_phase_tasks<C: Connect + Send + 'static>(
    clients: &Clients<C>,
    connections: &mut Vec<C::Store>,
    concurrency: usize,
    work: &SizeWork,
    rate: Option<f64>,
    observer: &mut dyn Observer,
) -> Result<Measured> {
    observer.phase_started(PhaseKind::Search, &work.size, work.order.len() as u64);
    let stores: Vec<C::Store> = connections.drain(..concurrency).collect();
    let meter = Meter::start();
    let start = tokio::time::Instant::now();
    let handles: Vec<_> = stores
        .into_iter()
        .enumerate()
        .map(|(task, store)| {
            let pacer = rate.map(|r| Pacer::new(r, start));
            clients.spawn(
                task,
                search_task(
                    store,
                    Arc::clone(&work.records),
                    Arc::clone(&work.order),
                    task,
                    concurrency,
                    pacer,
                ),
            )
        })
        .collect();
    let _abort = AbortOnDrop::new(&handles);
    let mut histogram = measure::new_histogram();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let mut first_error = None;
    let mut stopped = false;
    let mut open_loop: Option<OpenLoopRun> = None;
    let mut returned = Vec::with_capacity(concurrency);
    let mut panicked = None;
    for handle in handles {
        match handle.await {
            Ok(t) => {
                histogram
                    .add(&t.histogram)
                    .expect("histograms of one shape merge");
                for (k, n) in t.errors.by_kind {
                    *errors.entry(k).or_default() += n;
                }
                if first_error.is_none() {
                    first_error = t.errors.first;
                }
                stopped |= t.stopped;
                if let Some(p) = t.pacer {
                    let ol = open_loop.get_or_insert_with(|| OpenLoopRun {
                        rate: p.rate(),
                        response: measure::new_histogram(),
                        max_behind: std::time::Duration::ZERO,
                    });
                    ol.response
                        .add(p.response())
                        .expect("histograms of one shape merge");
                    ol.max_behind = ol.max_behind.max(p.max_behind());
                }
                returned.push(t.store);
            }
            Err(e) => panicked = Some(e),
        }
    }
    let ops = histogram.len();
    let figures = meter.finish(ops, &histogram);
    // Connections return to the pool in task order; one lost to a panic is not reused.
    let mut rest: Vec<C::Store> = std::mem::take(connections);
    returned.append(&mut rest);
    *connections = returned;
    if let Some(e) = panicked {
        bail!("a search task failed: {e}");
    }
    observer.progress(ops);
    Ok(Measured {
        run: PhaseRun {
            kind: PhaseKind::Search,
            size: work.size.clone(),
            concurrency: concurrency as u32,
            ops,
            errors,
            incomplete: stopped,
            figures,
            histogram,
            open_loop,
        },
        first_error,
    })
}

/// Reports a phase run, adds it to this run's phases and `result` (so that it is kept if
/// the run is abandoned later), and fails on its first wrong answer or an interruption.
fn finish_phase(
    measured: Measured,
    (before, runs): (&[PhaseRun], &mut Vec<PhaseRun>),
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    let Measured { run, first_error } = measured;
    observer.phase_finished(&measure::aggregate(std::slice::from_ref(&run)));
    let label = format!("{} {}", run.kind.label(), run.size.name);
    let errors: u64 = run.errors.values().sum();
    let stopped = run.incomplete;
    runs.push(run);
    result.phases = aggregate_by_phase(&[before, runs.as_slice()].concat());
    if let Some(first) = first_error {
        return Err(anyhow!("{label}: {errors} error(s); first: {first}"));
    }
    if stopped {
        bail!("{label}: interrupted");
    }
    Ok(())
}

/// The store's size now. A store that cannot tell its size (a server without the command,
/// a user without the privilege) keeps running: the size shows as `-` with the reason.
async fn measure_size<S: Store>(
    store: &mut S,
    which: &str,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Option<crate::store::DiskUsage> {
    match store.disk_usage().await {
        Ok(usage) => {
            observer.size_measured(which, Some(usage.bytes));
            Some(usage)
        }
        Err(e) => {
            observer.size_measured(which, None);
            result
                .size_error
                .get_or_insert_with(|| format!("{which} size: {e:#}"));
            None
        }
    }
}
