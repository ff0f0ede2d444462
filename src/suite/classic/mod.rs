//! The classic suite, the blog's sequence: reset, initial size, INSERT per size (one record
//! per transaction, one connection), final size, SEARCH 40 x N random lookups per size at
//! each concurrency level, every answer checked. The whole sequence is repeated: warm-up
//! runs first (discarded), then measured runs whose figures become medians.

use std::sync::Arc;

use anyhow::Result;

use super::Observer;
use super::clients::{Clients, Connect};
use super::executor::{self, Executed, Phase};
use crate::measure::{self, PhaseRun};
use crate::report::model::{PhaseKind, StoreResult};
use crate::store::{DiskUsage, Store};
use crate::workload::levels::{Concurrency, Repetitions};
use crate::workload::record::{Records, SearchOrder, Size};
use crate::workload::share::Share;

mod phases;

use super::rendezvous::{self, Rendezvous};
use phases::{Insert, Retry, Search};

/// What the classic suite runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassicPlan {
    pub sizes: Vec<Size>,
    pub searches_per_insert: u64,
    pub seed: u64,
    /// Whole-suite runs: warm-ups (discarded), then measured ones.
    pub repetitions: Repetitions,
    /// Concurrency levels of the search phases.
    pub concurrency: Vec<Concurrency>,
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
            repetitions: Repetitions::ONCE,
            concurrency: vec![Concurrency::ONE],
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
    let mut outcome = Ok(());
    for rep in plan.repetitions.iter() {
        super::turns::next_run(|| rep.label.to_string()).await;
        executor::announce(&rep, None, observer);
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
                counted: rep.counted(),
                rendezvous: rendezvous.as_mut(),
            },
            rep.is_first(),
        )
        .await;
        let failed = outcome.is_err();
        if let (true, Some(r), Some(store)) = (failed, &rendezvous, connections.first_mut()) {
            // The others stop waiting for this client at once.
            r.give_up(store).await;
        }
        if rep.counted() {
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
        meet(
            &mut rendezvous,
            &mut connections[0],
            &format!("INSERT {}", work.size.name),
        )
        .await?;
        let ops = share.len_of(work.records.len() as u64);
        let mut phase = Phase::new(PhaseKind::Insert, work.size.clone(), ops, Concurrency::ONE);
        let inserted = work.share.of(0..work.records.len());
        phase.logical_bytes = Some(work.records.logical_bytes(inserted));
        let insert = Insert::new(retry(clients, workload), &work.records, work.share);
        let insert = Arc::new(insert);
        let ran = executor::execute(clients, connections, &phase, insert, observer).await?;
        finish_phase(ran, &mut runs, result, observer)?;
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
        while connections.len() < concurrency.tasks() {
            connections.push(clients.open(connections.len()).await?);
        }
        for work in &workload.sizes {
            let point = format!("SEARCH {} x{concurrency}", work.size.name);
            meet(&mut rendezvous, &mut connections[0], &point).await?;
            let ops = share.len_of(work.order.len());
            let mut phase = Phase::new(PhaseKind::Search, work.size.clone(), ops, concurrency);
            phase.rate = workload.plan.rate;
            let how = (&work.records, &work.order);
            let search = Arc::new(Search::new(retry(clients, workload), how, work.share));
            let ran = executor::execute(clients, connections, &phase, search, observer).await?;
            finish_phase(ran, &mut runs, result, observer)?;
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

/// How the phases of a run reconnect after an error: `--retries` times, on a new
/// connection from the client's connector.
fn retry<C: Connect + Send + 'static>(clients: &Clients<C>, workload: &Workload) -> Retry<C> {
    Retry {
        connector: clients.shared_connector(),
        retries: workload.plan.retries,
    }
}

/// Reports a phase run, adds it to this run's phases and `result` (so that it is kept if
/// the run is abandoned later), and fails on its first wrong answer or an interruption.
fn finish_phase<T>(
    ran: Executed<T>,
    runs: &mut Runs<'_>,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    observer.phase_finished(&measure::aggregate(std::slice::from_ref(&ran.run)));
    let label = format!("{} {}", ran.run.kind.label(), ran.run.size.name);
    let failure = ran.failure(&label);
    runs.this.push(ran.run);
    if runs.counted {
        result.phases = measure::aggregate_by_phase(&[runs.before, runs.this.as_slice()].concat());
        observer.phases_recorded(result);
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
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
