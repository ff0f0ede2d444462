//! The YCSB suite: YCSB's core workloads on a store, measured the way YCSB measures them
//! (per operation type: count, throughput, latency percentiles) and more honestly: every
//! answer checked against what was last written, open-loop latency from each operation's
//! intended start (`--rate`), repetitions and their medians.
//!
//! Per store: the load (`recordcount` inserts), then each workload in turn, at each
//! concurrency level, `--warmup-runs` discarded runs then `--runs` measured ones, each a
//! fresh operation sequence from the seed over the records present (a workload that
//! inserts leaves its records to the next). A workload that needs an operation the store
//! does not have (a scan without ordered keys, or without the store's query service) is not
//! run: its rows are reported as not applicable, with the store's reason. Variants of one
//! store take turns ([`super::turns`]): the load of each, then each run of each.
//!
//! Several load clients (`--client K/N`) share the run (`shared`): client 1 resets the
//! store, each loads its share, they meet before the load and before every run, and each
//! makes its share of every run's operations, drawn from the seed varied per client.

use std::sync::Arc;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;

use super::Observer;
use super::clients::{Clients, Connect};
use super::executor::{self, Phase};
use super::rendezvous::{self, Rendezvous};
use crate::measure::{self, PhaseRun, Series};
use crate::report::model::{PhaseKind, StoreResult};
use crate::store::{Store, YcsbStore, YcsbTable};
use crate::workload::levels::{Concurrency, Repetition, Repetitions};
use crate::workload::record::Size;
use crate::workload::share::Share;
use crate::workload::ycsb::{Op, OpKind, Workload};

mod call;
mod ops;
mod shared;
pub mod truth;

use shared::{Shared, Versions};
use truth::Truth;

/// What the YCSB suite runs.
#[derive(Debug, Clone, PartialEq)]
pub struct YcsbPlan {
    /// In run order; they share the load (checked when the plan is made).
    pub workloads: Vec<Workload>,
    pub seed: u64,
    pub repetitions: Repetitions,
    /// Connections at once (each its own task).
    pub concurrency: Vec<Concurrency>,
    /// Open loop: operations per second on a fixed schedule.
    pub rate: Option<f64>,
    /// With several load clients (`--client K/N`): this client's share and where the
    /// clients meet; `None`: the whole run, alone.
    pub rendezvous: Option<Rendezvous>,
}

impl YcsbPlan {
    /// Every run of every workload, in order: (workload, concurrency, repetition).
    fn runs(&self) -> Vec<(&Workload, Concurrency, Repetition)> {
        let mut runs = Vec::new();
        for w in &self.workloads {
            for &level in &self.concurrency {
                for rep in self.repetitions.iter() {
                    runs.push((w, level, rep));
                }
            }
        }
        runs
    }

    /// This client's share of the run (the whole of it when alone).
    pub fn share(&self) -> Share {
        self.rendezvous
            .as_ref()
            .map_or(Share::WHOLE, Rendezvous::share)
    }

    /// Records the runs can hold at most: the load's and every insert they may make (each
    /// of `n` clients up to its largest share of a run's operations).
    fn capacity(&self) -> u64 {
        let load = self.workloads.first().map_or(0, |w| w.record_count);
        load + self
            .runs()
            .iter()
            .filter(|(w, _, _)| w.proportions.insert > 0.0)
            .map(|(w, _, _)| self.largest_share(w) * u64::from(self.share().count()))
            .sum::<u64>()
    }

    /// The most operations one client makes in a run of `w`.
    fn largest_share(&self, w: &Workload) -> u64 {
        let n = self.share().count();
        Share::new(1, n).map_or(w.operation_count, |s| s.len_of(w.operation_count))
    }

    /// The versions of a field this client writes: each of its operations updates a field
    /// once at most.
    fn versions(&self) -> Versions {
        let updates = self
            .runs()
            .iter()
            .map(|(w, _, _)| self.largest_share(w))
            .sum();
        Versions::new(self.share(), updates)
    }

    /// This client's seed of a run: the plan's, varied for each client but the first.
    fn seed_of(&self, rep: &Repetition) -> u64 {
        let seed = self.seed ^ u64::from(rep.index).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let index = u64::from(self.share().number() - 1);
        seed ^ index.wrapping_mul(0xd1b5_4a32_d192_ed03)
    }
}

/// Runs the suite on a store, filling `result` (phases of kind `ycsb`).
pub async fn run<C: Connect<Store: YcsbStore> + Send + 'static>(
    clients: &Clients<C>,
    plan: &YcsbPlan,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    let table = plan.workloads.first().map(|w| YcsbTable {
        name: w.table.clone(),
        fields: w.field_names(),
    });
    let mut shared = (plan.rendezvous.clone())
        .zip(table)
        .map(|(r, table)| Shared::new(r, table));
    if let Some(s) = &shared {
        let r = s.rendezvous();
        let (share, at) = (r.share(), r.start_at().to_rfc3339());
        observer.status(&format!("client {share}: waiting until {at} (--start-at)"));
        rendezvous::sleep_until(r.start_at()).await;
    }
    let mut connections = vec![clients.open(0).await?];
    let outcome = run_workloads(
        clients,
        &mut connections,
        plan,
        &mut shared,
        result,
        observer,
    )
    .await;
    if let (Err(_), Some(s), Some(store)) = (&outcome, &mut shared, connections.first_mut()) {
        // The others stop waiting for this client at once.
        s.give_up(store).await;
    }
    clients.close(connections).await;
    outcome
}

async fn run_workloads<C: Connect<Store: YcsbStore> + Send + 'static>(
    clients: &Clients<C>,
    connections: &mut Vec<C::Store>,
    plan: &YcsbPlan,
    shared: &mut Option<Shared>,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    let first = plan.workloads.first().context("no workload to run")?;
    let share = plan.share();
    let table = YcsbTable {
        name: first.table.clone(),
        fields: first.field_names(),
    };
    let main = &mut connections[0];
    // The store's own schema first: the description reads it. One client makes both; the
    // others meet it once it has.
    if share.is_first() {
        main.reset().await?;
    } else {
        shared::meet(shared, main, "the reset").await?;
    }
    result.info = Some(super::per_test_paths(main.describe().await?));
    observer.store_described(result);
    if share.is_first() {
        main.ycsb_reset(&table)
            .await
            .with_context(|| format!("creating the YCSB table {}", table.name))?;
        shared::meet(shared, main, "the reset").await?;
    } else {
        main.ycsb_use(&table).await?;
    }
    let operations: Vec<(OpKind, Option<&'static str>)> = OpKind::ALL
        .into_iter()
        .map(|k| (k, main.ycsb_operation(k)))
        .collect();
    // The workloads that need an operation the store lacks are not run: n/a, saying why.
    let lacking: Vec<(OpKind, String)> = operations
        .iter()
        .filter(|(_, how)| how.is_none())
        .map(|&(k, _)| (k, main.ycsb_lacking(k)))
        .collect();
    let mut runnable = Vec::new();
    for w in &plan.workloads {
        match not_runnable(w, &lacking) {
            None => runnable.push(w.name.clone()),
            Some(why) => {
                observer.not_applicable(&format!("workload {} ({why})", w.name));
                for name in rows_of(w) {
                    result.not_applicable_why.insert(name.clone(), why.clone());
                    result.not_applicable.push(name);
                }
            }
        }
    }
    let scans = plan.workloads.iter().any(|w| w.proportions.scan > 0.0);
    let truth = Arc::new(Truth::new(plan.capacity(), table.fields.len(), scans));
    let versions = plan.versions();
    let run = Execution {
        truth: &truth,
        versions,
    };
    let mut measured: Vec<PhaseRun> = Vec::new();

    // The load: every record once, on the first level's connections.
    let level = plan
        .concurrency
        .first()
        .copied()
        .unwrap_or(Concurrency::ONE);
    open_connections(clients, connections, level, &table).await?;
    super::turns::next_run(|| "load".to_string()).await;
    shared::meet(shared, &mut connections[0], "the load").await?;
    let load: Vec<Op> = share
        .of(0..first.record_count as i64)
        .map(|key| Op::Insert { key })
        .collect();
    let how = ("load", level, None);
    let load = ops::Source::Given(Arc::new(load));
    let ran = execute(clients, connections, first, run, load, how, observer).await?;
    measured.extend(ran.runs);
    result.phases = phases(&measured, &operations);
    observer.phases_recorded(result);
    if let Some(e) = ran.failure {
        return Err(e);
    }

    let mut present = first.record_count as i64;
    let mut loaded = false;
    for (w, level, rep) in plan.runs() {
        if !runnable.contains(&w.name) {
            continue;
        }
        let what = format!("workload {}, concurrency {level}", w.name);
        super::turns::next_run(|| format!("{what}: {}", rep.label)).await;
        executor::announce(&rep, Some(&what), observer);
        open_connections(clients, connections, level, &table).await?;
        let mut inserting = None;
        if let Some(s) = shared.as_mut() {
            let point = format!("{what}, {}", rep.label);
            present = s
                .before_run(&mut connections[0], &truth, &point, present)
                .await?;
            if !std::mem::replace(&mut loaded, true) {
                s.loaded(&truth, first)?;
            }
            inserting = Some(s.run_starts(&truth, w, present)?);
        }
        let mut draw = w.draw(present, plan.seed_of(&rep));
        if let Some((from, stride)) = inserting {
            draw = draw.inserting(from, stride);
        }
        let count = share.len_of(w.operation_count);
        let source = ops::Source::drawn(draw, count);
        let how = (w.name.as_str(), level, plan.rate);
        let ran = execute(clients, connections, w, run, source, how, observer).await?;
        match shared.as_mut() {
            Some(s) => s.run_ended(w, present, ran.inserts)?,
            None => present = ran.issued.unwrap_or(present),
        }
        if rep.counted() || ran.failure.is_some() {
            measured.extend(ran.runs);
        }
        result.phases = phases(&measured, &operations);
        observer.phases_recorded(result);
        if let Some(e) = ran.failure {
            return Err(e);
        }
    }
    // Nobody goes on to the next store's reset while another client still runs this one.
    match shared.as_mut() {
        Some(s) => s.finish(&mut connections[0]).await,
        None => Ok(()),
    }
}

/// Why the store cannot run `w`: the operations it needs that the store lacks, each with
/// the store's reason (`lacking`); `None` when it can.
fn not_runnable(w: &Workload, lacking: &[(OpKind, String)]) -> Option<String> {
    let missing: Vec<String> = lacking
        .iter()
        .filter(|(kind, _)| kind.share_in(w) > 0.0)
        .map(|(kind, why)| format!("no {}: {why}", kind.name()))
        .collect();
    (!missing.is_empty()).then(|| missing.join("; "))
}

/// The report rows of a workload: one per operation type it makes (a read-modify-write's
/// read and update counted too), then its total when it makes more than one.
fn rows_of(w: &Workload) -> Vec<String> {
    let makes = |kind: OpKind| {
        kind.share_in(w) > 0.0
            || (matches!(kind, OpKind::Read | OpKind::Update)
                && OpKind::ReadModifyWrite.share_in(w) > 0.0)
    };
    let mut rows: Vec<String> = OpKind::ALL
        .into_iter()
        .filter(|&k| makes(k))
        .map(|k| format!("{} {}", w.name, k.name()))
        .collect();
    if rows.len() > 1 {
        rows.push(w.name.clone());
    }
    rows
}

/// The measured runs, aggregated per phase, each operation type's phase naming how the
/// store does it.
fn phases(
    measured: &[PhaseRun],
    operations: &[(OpKind, Option<&'static str>)],
) -> Vec<crate::report::model::PhaseResult> {
    let mut phases = measure::aggregate_by_phase(measured);
    for p in &mut phases {
        p.operation = operations
            .iter()
            .find(|(k, _)| p.size.name.ends_with(&format!(" {}", k.name())))
            .and_then(|(_, how)| how.map(str::to_string));
    }
    phases
}

/// Opens connections up to `count`, each using the table.
async fn open_connections<C: Connect<Store: YcsbStore> + Send + 'static>(
    clients: &Clients<C>,
    connections: &mut Vec<C::Store>,
    level: Concurrency,
    table: &YcsbTable,
) -> Result<()> {
    while connections.len() < level.tasks() {
        let mut store = clients.open(connections.len()).await?;
        store.ycsb_use(table).await?;
        connections.push(store);
    }
    Ok(())
}

/// One run's outcome: its phase runs (one per operation type, and the whole run), its
/// first failure, and the records inserted or handed out to insert at its end (of a run
/// whose operations were drawn).
struct Ran {
    runs: Vec<PhaseRun>,
    failure: Option<anyhow::Error>,
    issued: Option<i64>,
    /// The inserts this client made.
    inserts: u64,
}

/// What every phase of a run checks its answers against, and the versions it writes.
#[derive(Clone, Copy)]
struct Execution<'a> {
    truth: &'a Arc<Truth>,
    versions: Versions,
}

/// Runs the operations of `source` over `concurrency` tasks (each on its own connection and
/// its connection's event loop, `rate`: open loop), checking every answer; the run is split
/// into one phase per operation type, and the whole run.
async fn execute<C: Connect<Store: YcsbStore> + Send + 'static>(
    clients: &Clients<C>,
    connections: &mut Vec<C::Store>,
    workload: &Workload,
    Execution { truth, versions }: Execution<'_>,
    source: ops::Source,
    (name, concurrency, rate): (&str, Concurrency, Option<f64>),
    observer: &mut dyn Observer,
) -> Result<Ran> {
    let total_ops = match &source {
        ops::Source::Given(ops) => ops.len() as u64,
        ops::Source::Drawn { count, .. } => *count,
    };
    let size = Size {
        name: name.to_string(),
        records: total_ops,
    };
    let mut phase = Phase::new(PhaseKind::Ycsb, size, total_ops, concurrency);
    phase.rate = rate;
    if let ops::Source::Given(given) = &source {
        // The load: what its bytes written are compared with.
        let keys = given.iter().filter_map(|op| match op {
            Op::Insert { key } => Some(*key),
            _ => None,
        });
        phase.logical_bytes = Some(workload.logical_bytes(keys));
    }
    let op = Arc::new(ops::Operations::<C> {
        workload: Arc::new(workload.clone()),
        truth: Arc::clone(truth),
        deal: source.deal(),
        source,
        versions,
        store: std::marker::PhantomData,
    });
    let ran = executor::execute(clients, connections, &phase, Arc::clone(&op), observer).await?;
    let failure = ran.failure(name);
    let total = ran.run;
    let merged = |of: fn(&ops::Kinds) -> &Vec<Histogram<u64>>| {
        let mut all: Vec<Histogram<u64>> = OpKind::ALL
            .iter()
            .map(|_| measure::new_histogram())
            .collect();
        for task in &ran.tasks {
            for (merged, h) in all.iter_mut().zip(of(task)) {
                measure::uncounted(|| merged.add(h).expect("histograms of one shape merge"));
            }
        }
        all
    };
    let histograms = merged(|k| &k.calls);
    let mut responses = merged(|k| &k.responses).into_iter();
    // One phase per operation type, sharing the run's wall time and CPU, then the whole run.
    let wall_s = total.figures.wall_ms / 1e3;
    let kinds = histograms.iter().filter(|h| !h.is_empty()).count();
    let mut runs = Vec::new();
    for (kind, h) in OpKind::ALL.iter().zip(histograms) {
        let response = responses.next().expect("one per kind");
        if h.is_empty() {
            continue;
        }
        // An open loop's schedule, the share of it this type's operations had.
        let open_loop = total.open_loop.as_ref().map(|o| measure::OpenLoopRun {
            rate: o.rate * h.len() as f64 / total.ops.max(1) as f64,
            response,
            max_behind: o.max_behind,
        });
        let mut f = total.figures.clone();
        // The server's cost is the whole run's (below).
        (f.server_cpu_us_per_op, f.write_bytes_per_op) = (None, None);
        f.ops_per_s = if wall_s > 0.0 {
            h.len() as f64 / wall_s
        } else {
            0.0
        };
        let l = measure::latency(&h);
        (f.p50_us, f.p99_us) = (l.p50, l.p99);
        let r = open_loop.as_ref().map(|o| measure::latency(&o.response));
        (f.response_p50_us, f.response_p99_us) = (r.as_ref().map(|r| r.p50), r.map(|r| r.p99));
        runs.push(PhaseRun {
            kind: PhaseKind::Ycsb,
            size: Size {
                name: format!("{name} {}", kind.name()),
                records: h.len(),
            },
            concurrency: total.concurrency,
            ops: h.len(),
            errors: Default::default(),
            incomplete: total.incomplete,
            figures: f,
            histogram: h,
            // The series is the whole run's (below).
            series: Series::new(total.series.start()),
            open_loop,
            retries: 0,
            counters: Default::default(),
            // The sites are the whole run's (below).
            alloc_sites: None,
            server: None,
            logical_bytes: None,
        });
    }
    match runs.as_mut_slice() {
        // One operation type (a load, workload C): it is the whole run, with its errors.
        [only] if kinds == 1 => {
            only.errors = total.errors;
            only.open_loop = total.open_loop;
            only.series = total.series;
            only.counters = total.counters;
            only.alloc_sites = total.alloc_sites;
            only.figures.server_cpu_us_per_op = total.figures.server_cpu_us_per_op;
            // The whole operation's response, as the open loop above.
            only.figures.response_p50_us = total.figures.response_p50_us;
            only.figures.response_p99_us = total.figures.response_p99_us;
            only.figures.write_bytes_per_op = total.figures.write_bytes_per_op;
            only.server = total.server;
            only.logical_bytes = total.logical_bytes;
        }
        _ => runs.push(total),
    }
    for run in &runs {
        observer.phase_finished(&measure::aggregate(std::slice::from_ref(run)));
    }
    Ok(Ran {
        runs,
        failure,
        issued: op.source.issued(),
        inserts: op.source.inserts(),
    })
}
