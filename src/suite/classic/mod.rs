//! The classic suite, the blog's sequence: reset, initial size, INSERT per size (one record
//! per transaction, one connection), final size, SEARCH 40 x N random lookups per size at
//! each concurrency level, every answer checked. The whole sequence is repeated: warm-up
//! runs first (discarded), then measured runs whose figures become medians.

use std::sync::Arc;

use anyhow::{Result, anyhow, bail};

use super::Observer;
use super::clients::{Clients, Connect};
use crate::measure::{self, PhaseRun};
use crate::report::model::StoreResult;
use crate::store::{DiskUsage, Store};
use crate::workload::record::{Records, SearchOrder, Size};
use crate::workload::share::Share;

mod phases;
pub mod rendezvous;

use phases::{Measured, Retry, insert_phase, search_phase_closed, search_phase_tasks};
use rendezvous::Rendezvous;

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
    /// Times an operation that failed may be made again on a new connection.
    pub retries: u32,
    /// With several load clients (`--client K/N`): this client's share and where the
    /// clients meet; `None`: the whole workload, alone.
    pub rendezvous: Option<Rendezvous>,
}

impl ClassicPlan {
    /// This client's share of the work (the whole of it when alone).
    pub fn share(&self) -> Share {
        self.rendezvous
            .as_ref()
            .map_or(Share::WHOLE, Rendezvous::share)
    }
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
            retries: 0,
            rendezvous: None,
        }
    }
}

/// One size's records and search order, shared with the search tasks; each record is made
/// again from the seed when it is needed, so memory does not grow with the run.
struct SizeWork {
    size: Size,
    /// This client's share of the records to insert and of the searches.
    share: Share,
    records: Arc<Records>,
    order: Arc<SearchOrder>,
}

/// The records and search orders of a plan.
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
                let records = Records::new(plan.seed, size, next_id);
                next_id += records.len() as i64;
                let order =
                    SearchOrder::new(plan.seed, size, size.records * plan.searches_per_insert);
                SizeWork {
                    size: size.clone(),
                    share: plan.share(),
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
    let mut rendezvous = plan.rendezvous.clone();
    if let Some(r) = &rendezvous {
        observer.status(&format!(
            "client {}: waiting until {} (--start-at)",
            r.share(),
            r.start_at().to_rfc3339()
        ));
        rendezvous::sleep_until(r.start_at()).await;
    }
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
            Runs {
                before: &measured,
                this: &mut this_run,
                counted: matches!(label, RunLabel::Measured { .. }),
                rendezvous: rendezvous.as_mut(),
            },
            rep == 0,
        )
        .await;
        let failed = outcome.is_err();
        if let (true, Some(r), Some(store)) = (failed, &rendezvous, connections.first_mut()) {
            // The others stop waiting for this client at once.
            r.give_up(store).await;
        }
        if matches!(label, RunLabel::Measured { .. }) {
            measured.extend(this_run);
        } else if failed {
            // A failed warm-up shows only the phase that failed (its errors, how far it
            // got), never its finished phases as measured ones.
            measured.extend(this_run.pop());
        }
        if failed {
            break;
        }
    }
    result.phases = measure::aggregate_by_phase(&measured);
    clients.close(connections).await;
    outcome
}

/// One run of the whole sequence. Sizes and settings are reported from the first run,
/// warm-up or not: it is the one that starts from an empty store (later runs can find an
/// append-only file or a WAL that remembers the runs before them).
///
/// The phase runs a run of the suite adds to: the measured runs' before it, and its own.
struct Runs<'a> {
    before: &'a [PhaseRun],
    this: &'a mut Vec<PhaseRun>,
    /// A measured run (not a warm-up): its phases count in the figures.
    counted: bool,
    /// Where this load client meets the others before each phase, when there are others.
    rendezvous: Option<&'a mut Rendezvous>,
}

/// `runs` holds the measured runs before this one and receives this one's phases. Each
/// phase of a measured run is in `result` as soon as it ends, with the runs before it: a
/// run abandoned in the middle (a stalled store, see `watchdog`, or dbcompare killed) keeps
/// every phase it finished. A warm-up run's phases never show as measured ones.
async fn run_once<C: Connect + Send + 'static>(
    clients: &Clients<C>,
    connections: &mut Vec<C::Store>,
    workload: &Workload,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
    mut runs: Runs<'_>,
    first_run: bool,
) -> Result<()> {
    let mut rendezvous = runs.rendezvous.take();
    let share = workload.plan.share();
    let main = &mut connections[0];
    // One client resets the store and measures its sizes (before the others write, and
    // once they all have); the others meet it after the reset.
    if share.is_first() {
        main.reset().await?;
    } else {
        meet(&mut rendezvous, main, "the reset").await?;
    }
    let info = main.describe().await?;
    if result.info.is_none() || first_run {
        result.info = Some(info);
        observer.store_described(result);
    }
    let initial = sized(share, main, "initial", result, observer).await;
    if first_run || result.initial_size_bytes.is_none() {
        result.initial_size_bytes = initial.map(|u| u.bytes);
    }
    if share.is_first() {
        meet(&mut rendezvous, main, "the reset").await?;
    }

    for work in &workload.sizes {
        let retry = Retry {
            connector: clients.connector(),
            retries: workload.plan.retries,
        };
        meet(&mut rendezvous, main, &format!("INSERT {}", work.size.name)).await?;
        let counted = super::counters_now(main).await;
        let mut run = insert_phase(main, retry, work, observer).await;
        run.run.counters = super::counters_since(&counted, super::counters_now(main).await);
        finish_phase(run, &mut runs, result, observer)?;
    }

    let main = &mut connections[0];
    meet(&mut rendezvous, main, "the final size").await?;
    let fin = sized(share, main, "final", result, observer).await;
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
            let point = format!("SEARCH {} x{concurrency}", work.size.name);
            meet(&mut rendezvous, &mut connections[0], &point).await?;
            let counted = super::counters_now(&mut connections[0]).await;
            let mut run = if concurrency == 1 && workload.plan.rate.is_none() {
                let retry = Retry {
                    connector: clients.connector(),
                    retries: workload.plan.retries,
                };
                search_phase_closed(&mut connections[0], retry, work, observer).await
            } else {
                let how = (workload.plan.rate, workload.plan.retries);
                search_phase_tasks(clients, connections, concurrency, work, how, observer).await?
            };
            let now = super::counters_now(&mut connections[0]).await;
            run.run.counters = super::counters_since(&counted, now);
            finish_phase(run, &mut runs, result, observer)?;
        }
    }
    // Nobody resets for the next run while another client still searches.
    if let Some(r) = rendezvous {
        r.finish(&mut connections[0], "the end of the run").await?;
    }
    Ok(())
}

/// Meets the other load clients, when there are any.
async fn meet<S: Store>(
    rendezvous: &mut Option<&mut Rendezvous>,
    store: &mut S,
    what: &str,
) -> Result<()> {
    match rendezvous {
        Some(r) => r.meet(store, what).await,
        None => Ok(()),
    }
}

/// The store's size now, measured by the first client only (the others' would count
/// records still being written).
async fn sized<S: Store>(
    share: Share,
    store: &mut S,
    which: &str,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Option<DiskUsage> {
    if share.is_first() {
        return measure_size(store, which, result, observer).await;
    }
    result
        .size_error
        .get_or_insert_with(|| format!("measured by client 1/{}", share.count()));
    None
}

/// Reports a phase run, adds it to this run's phases and `result` (so that it is kept if
/// the run is abandoned later), and fails on its first wrong answer or an interruption.
fn finish_phase(
    measured: Measured,
    runs: &mut Runs<'_>,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    let Measured { run, first_error } = measured;
    observer.phase_finished(&measure::aggregate(std::slice::from_ref(&run)));
    let label = format!("{} {}", run.kind.label(), run.size.name);
    let errors: u64 = run.errors.values().sum();
    let reached = run.ops;
    let stopped = run.incomplete;
    runs.this.push(run);
    if runs.counted {
        result.phases = measure::aggregate_by_phase(&[runs.before, runs.this.as_slice()].concat());
        observer.phases_recorded(result);
    }
    if let Some(first) = first_error {
        return Err(anyhow!(
            "{label}: failed after {reached} operations ({errors} error(s)); first: {first}"
        ));
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
) -> Option<DiskUsage> {
    match store.disk_usage().await {
        Ok(usage) => {
            observer.size_measured(which, Some(usage.bytes));
            Some(usage)
        }
        Err(e) => {
            observer.size_measured(which, None);
            result
                .size_error
                .get_or_insert_with(|| format!("{which} size: {}", crate::error::chain(&e)));
            None
        }
    }
}
