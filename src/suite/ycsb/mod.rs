//! The YCSB suite: YCSB's core workloads on a store, measured the way YCSB measures them
//! (per operation type: count, throughput, latency percentiles) and more honestly: every
//! answer checked against what was last written, open-loop latency from each operation's
//! intended start (`--rate`), repetitions and their medians.
//!
//! Per store: the load (`recordcount` inserts), then each workload in turn, at each
//! concurrency level, `--warmup-runs` discarded runs then `--runs` measured ones, each a
//! fresh operation sequence from the seed over the records present (a workload that
//! inserts leaves its records to the next). An operation the store does not have (a scan
//! without ordered keys) is left out of the run and reported as not applicable.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;

use super::Observer;
use super::clients::{Clients, Connect};
use super::open_loop::Pacer;
use super::ticker::Ticker;
use super::watchdog::AbortOnDrop;
use crate::measure::{self, Errors, Meter, OpenLoopRun, PhaseRun, Recorder, Series};
use crate::report::model::{PhaseKind, StoreResult};
use crate::store::{Store, YcsbStore, YcsbTable};
use crate::workload::record::Size;
use crate::workload::ycsb::{Op, OpKind, Workload};

mod ops;
pub mod truth;

use truth::Truth;

/// How often a long phase says how far it is.
const STATUS_EVERY: Duration = Duration::from_secs(10);

/// What the YCSB suite runs.
#[derive(Debug, Clone, PartialEq)]
pub struct YcsbPlan {
    /// In run order; they share the load (checked when the plan is made).
    pub workloads: Vec<Workload>,
    pub seed: u64,
    pub warmup_runs: u32,
    pub runs: u32,
    /// Connections at once (each its own task).
    pub concurrency: Vec<u32>,
    /// Open loop: operations per second on a fixed schedule.
    pub rate: Option<f64>,
}

impl YcsbPlan {
    /// Every run of every workload, in order: (workload, concurrency, repetition).
    fn runs(&self) -> Vec<(&Workload, u32, u32)> {
        let total = self.warmup_runs + self.runs.max(1);
        let mut runs = Vec::new();
        for w in &self.workloads {
            for &level in &self.concurrency {
                for rep in 0..total {
                    runs.push((w, level.max(1), rep));
                }
            }
        }
        runs
    }

    /// Records the runs can hold at most: the load's and every insert they may make.
    fn capacity(&self) -> u64 {
        let load = self.workloads.first().map_or(0, |w| w.record_count);
        load + self
            .runs()
            .iter()
            .filter(|(w, _, _)| w.proportions.insert > 0.0)
            .map(|(w, _, _)| w.operation_count)
            .sum::<u64>()
    }
}

/// Runs the suite on a store, filling `result` (phases of kind `ycsb`).
pub async fn run<C: Connect<Store: YcsbStore> + Send + 'static>(
    clients: &Clients<C>,
    plan: &YcsbPlan,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    let mut connections = vec![clients.open(0).await?];
    let outcome = run_workloads(clients, &mut connections, plan, result, observer).await;
    clients.close(connections).await;
    outcome
}

async fn run_workloads<C: Connect<Store: YcsbStore> + Send + 'static>(
    clients: &Clients<C>,
    connections: &mut Vec<C::Store>,
    plan: &YcsbPlan,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    let first = plan.workloads.first().context("no workload to run")?;
    let table = YcsbTable {
        name: first.table.clone(),
        fields: first.field_names(),
    };
    let main = &mut connections[0];
    // The store's own schema first: the description reads it.
    main.reset().await?;
    result.info = Some(super::per_test_paths(main.describe().await?));
    observer.store_described(result);
    main.ycsb_reset(&table)
        .await
        .with_context(|| format!("creating the YCSB table {}", table.name))?;
    let operations: Vec<(OpKind, Option<&'static str>)> = OpKind::ALL
        .into_iter()
        .map(|k| (k, main.ycsb_operation(k)))
        .collect();
    let lacking: Vec<OpKind> = operations
        .iter()
        .filter(|(_, how)| how.is_none())
        .map(|(k, _)| *k)
        .collect();
    let scans = plan.workloads.iter().any(|w| w.proportions.scan > 0.0);
    let truth = Arc::new(Truth::new(plan.capacity(), table.fields.len(), scans));
    let mut measured: Vec<PhaseRun> = Vec::new();

    // The load: every record once, on the first level's connections.
    let level = plan.concurrency.first().copied().unwrap_or(1).max(1) as usize;
    open_connections(clients, connections, level, &table).await?;
    let load: Vec<Op> = (0..first.record_count as i64)
        .map(|key| Op::Insert { key })
        .collect();
    let ran = execute(
        clients,
        connections,
        first,
        &truth,
        load,
        level,
        None,
        "load",
        observer,
    )
    .await?;
    measured.extend(ran.runs);
    result.phases = phases(&measured, &operations);
    observer.phases_recorded(result);
    if let Some(e) = ran.failure {
        return Err(e);
    }

    let mut present = first.record_count as i64;
    let mut not_applicable = Vec::new();
    let reps = plan.warmup_runs + plan.runs.max(1);
    for (w, level, rep) in plan.runs() {
        if reps > 1 {
            let run = if rep < plan.warmup_runs {
                format!("warm-up run {}/{} (discarded)", rep + 1, plan.warmup_runs)
            } else {
                format!("run {}/{}", rep - plan.warmup_runs + 1, plan.runs.max(1))
            };
            observer.run_started(&format!("workload {}, concurrency {level}: {run}", w.name));
        }
        let level = level as usize;
        open_connections(clients, connections, level, &table).await?;
        let seed = plan.seed ^ u64::from(rep).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut ops = w.operations(present, seed);
        present += ops
            .iter()
            .filter(|op| matches!(op, Op::Insert { .. }))
            .count() as i64;
        for kind in &lacking {
            if ops.iter().any(|op| op.kind() == *kind) {
                let name = format!("{} {}", w.name, kind.name());
                if !not_applicable.contains(&name) {
                    observer.not_applicable(&name);
                    not_applicable.push(name);
                }
            }
        }
        ops.retain(|op| !lacking.contains(&op.kind()));
        let ran = execute(
            clients,
            connections,
            w,
            &truth,
            ops,
            level,
            plan.rate,
            &w.name,
            observer,
        )
        .await?;
        if rep >= plan.warmup_runs || ran.failure.is_some() {
            measured.extend(ran.runs);
        }
        result.phases = phases(&measured, &operations);
        result.not_applicable.clone_from(&not_applicable);
        observer.phases_recorded(result);
        if let Some(e) = ran.failure {
            return Err(e);
        }
    }
    Ok(())
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
    count: usize,
    table: &YcsbTable,
) -> Result<()> {
    while connections.len() < count {
        let mut store = clients.open(connections.len()).await?;
        store.ycsb_use(table).await?;
        connections.push(store);
    }
    Ok(())
}

/// One run's outcome: its phase runs (one per operation type, and the whole run), and
/// its first failure.
struct Ran {
    runs: Vec<PhaseRun>,
    failure: Option<anyhow::Error>,
}

/// What one task brings back.
pub(super) struct TaskOutcome<S> {
    store: S,
    /// Per operation type ([`OpKind::ALL`]'s order; a read-modify-write's read and
    /// update counted as well).
    histograms: Vec<Histogram<u64>>,
    /// Every operation once, and the run over time.
    overall: Recorder,
    errors: Errors,
    stopped: bool,
    pacer: Option<Pacer>,
}

/// Runs `ops` over `concurrency` tasks (operation `i` on task `i mod concurrency`, each on
/// its own connection and its connection's event loop), checking every answer.
#[allow(clippy::too_many_arguments)]
async fn execute<C: Connect<Store: YcsbStore> + Send + 'static>(
    clients: &Clients<C>,
    connections: &mut Vec<C::Store>,
    workload: &Workload,
    truth: &Arc<Truth>,
    ops: Vec<Op>,
    concurrency: usize,
    rate: Option<f64>,
    name: &str,
    observer: &mut dyn Observer,
) -> Result<Ran> {
    let total_ops = ops.len() as u64;
    observer.phase_started(
        PhaseKind::Ycsb,
        &Size {
            name: name.to_string(),
            records: total_ops,
        },
        total_ops,
    );
    let ops = Arc::new(ops);
    let workload = Arc::new(workload.clone());
    let done = Arc::new(AtomicU64::new(0));
    let live = Arc::new(Mutex::new(measure::new_histogram()));
    let counted = super::counters_now(&mut connections[0]).await;
    // Progress from a thread: a timer on the run's loop would time every wait for an answer.
    let mut ticker = Ticker::start(Duration::from_millis(250))?;
    let stores: Vec<C::Store> = connections.drain(..concurrency).collect();
    let meter = Meter::start();
    let start = tokio::time::Instant::now();
    let handles: Vec<_> = stores
        .into_iter()
        .enumerate()
        .map(|(task, store)| {
            let run = ops::Task {
                store,
                workload: Arc::clone(&workload),
                truth: Arc::clone(truth),
                ops: Arc::clone(&ops),
                task,
                tasks: concurrency,
                pacer: rate.map(|r| Pacer::new(r, start)),
                done: Arc::clone(&done),
                live: Arc::clone(&live),
                started: meter.started(),
            };
            clients.spawn(task, run.run())
        })
        .collect();
    let _abort = AbortOnDrop::new(&handles);
    let mut joined = futures::future::join_all(handles);
    let mut last_status = (tokio::time::Instant::now(), 0_u64);
    let outcomes = loop {
        tokio::select! {
            outcomes = &mut joined => break outcomes,
            _ = ticker.tick() => {
                let n = done.load(Ordering::Relaxed);
                observer.progress(n);
                let (at, before) = last_status;
                if at.elapsed() >= STATUS_EVERY {
                    let rate = (n - before) as f64 / at.elapsed().as_secs_f64();
                    let p99 = live.lock().map_or(0.0, |h| measure::latency(&h).p99);
                    observer.status(&format!(
                        "{name}: {n} of {total_ops} operations, {rate:.0} ops/s over the last \
                         {}s, p99 so far {} us", STATUS_EVERY.as_secs(), crate::report::format::human_us(p99)
                    ));
                    last_status = (tokio::time::Instant::now(), n);
                }
            }
        }
    };
    let mut histograms: Vec<Histogram<u64>> = OpKind::ALL
        .iter()
        .map(|_| measure::new_histogram())
        .collect();
    let mut all = Recorder::new(meter.started());
    let mut errors: std::collections::BTreeMap<String, u64> = Default::default();
    let mut first_error = None;
    let mut stopped = false;
    let mut open_loop: Option<OpenLoopRun> = None;
    let mut returned = Vec::with_capacity(concurrency);
    let mut panicked = None;
    for outcome in outcomes {
        match outcome {
            Ok(t) => {
                for (merged, h) in histograms.iter_mut().zip(&t.histograms) {
                    merged.add(h).expect("histograms of one shape merge");
                }
                all.add(&t.overall);
                for (k, n) in t.errors.by_kind {
                    *errors.entry(k).or_default() += n;
                }
                if first_error.is_none() {
                    first_error = t.errors.first;
                }
                stopped |= t.stopped;
                if let Some(p) = t.pacer {
                    p.add_to(&mut open_loop);
                }
                returned.push(t.store);
            }
            Err(e) => panicked = Some(e),
        }
    }
    let started = meter.started();
    let (figures, alloc_sites) = meter.finish(all.len(), &all.histogram);
    returned.append(connections);
    *connections = returned;
    if let Some(e) = panicked {
        anyhow::bail!("a YCSB task failed: {e}");
    }
    let counters = match connections.first_mut() {
        Some(store) => super::counters_since(&counted, super::counters_now(store).await),
        None => Default::default(),
    };
    observer.progress(all.len());
    // One phase per operation type, sharing the run's wall time and CPU, then the whole run.
    let wall_s = figures.wall_ms / 1e3;
    let kinds = histograms.iter().filter(|h| !h.is_empty()).count();
    let mut runs = Vec::new();
    for (kind, h) in OpKind::ALL.iter().zip(histograms) {
        if h.is_empty() {
            continue;
        }
        let mut f = figures.clone();
        f.ops_per_s = if wall_s > 0.0 {
            h.len() as f64 / wall_s
        } else {
            0.0
        };
        let l = measure::latency(&h);
        (f.p50_us, f.p99_us) = (l.p50, l.p99);
        runs.push(PhaseRun {
            kind: PhaseKind::Ycsb,
            size: Size {
                name: format!("{name} {}", kind.name()),
                records: h.len(),
            },
            concurrency: concurrency as u32,
            ops: h.len(),
            errors: Default::default(),
            incomplete: stopped,
            figures: f,
            histogram: h,
            // The series is the whole run's (below).
            series: Series::new(started),
            open_loop: None,
            retries: 0,
            counters: Default::default(),
            // The sites are the whole run's (below).
            alloc_sites: None,
        });
    }
    let total = PhaseRun {
        kind: PhaseKind::Ycsb,
        size: Size {
            name: name.to_string(),
            records: total_ops,
        },
        concurrency: concurrency as u32,
        ops: all.len(),
        errors: errors.clone(),
        incomplete: stopped,
        figures,
        histogram: all.histogram,
        series: all.series,
        open_loop,
        retries: 0,
        counters,
        alloc_sites,
    };
    match runs.as_mut_slice() {
        // One operation type (a load, workload C): it is the whole run, with its errors.
        [only] if kinds == 1 => {
            only.errors = total.errors;
            only.open_loop = total.open_loop;
            only.series = total.series;
            only.counters = total.counters;
            only.alloc_sites = total.alloc_sites;
        }
        _ => runs.push(total),
    }
    let errors_total: u64 = errors.values().sum();
    let reached = runs.last().map_or(0, |r| r.ops);
    for run in &runs {
        observer.phase_finished(&measure::aggregate(std::slice::from_ref(run)));
    }
    let failure = match (first_error, stopped) {
        (Some(first), _) => Some(anyhow::anyhow!(
            "{name}: failed after {reached} operations ({errors_total} error(s)); first: {first}"
        )),
        (None, true) => Some(anyhow::anyhow!("{name}: interrupted")),
        (None, false) => None,
    };
    Ok(Ran { runs, failure })
}
