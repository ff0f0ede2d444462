//! The classic suite's phases: the inserts on one connection, and the searches on one
//! connection or spread over several tasks (closed loop or on an open-loop schedule), every
//! answer checked.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail};

use super::{PROGRESS_EVERY, SizeWork};
use crate::interrupt;
use crate::measure::{Errors, Meter, OpenLoopRun, PhaseRun, Recorder};
use crate::report::model::PhaseKind;
use crate::store::Store;
use crate::suite::Observer;
use crate::suite::clients::{Clients, Connect};
use crate::suite::open_loop::Pacer;
use crate::suite::watchdog::AbortOnDrop;
use crate::workload::record::{Record, Records, SearchOrder, Size};
use crate::workload::share::Share;

/// The outcome of a phase run, before it is checked.
pub(super) struct Measured {
    pub(super) run: PhaseRun,
    pub(super) first_error: Option<String>,
}

/// Evaluates `$op` with `$s` bound to the connection `$store` (a `&mut` binding); after an
/// error, up to `$retries` times, a new connection from `$connector` replaces it and `$op`
/// runs again. Gives the last outcome and the retries made (each one counted, whatever its
/// outcome). A macro, not a function taking an async closure: the spawned search tasks must
/// be `Send`, which a generic async closure over a borrowed connection cannot yet promise.
macro_rules! with_retries {
    ($connector:expr, $store:ident, $retries:expr, |$s:ident| $op:expr) => {{
        let mut outcome = {
            let $s = &mut *$store;
            $op
        };
        let mut made: u64 = 0;
        let mut first: Option<String> = None;
        while outcome.is_err() && made < u64::from($retries) && !interrupt::requested() {
            if let Err(e) = &outcome {
                first.get_or_insert_with(|| format!("{e:#}"));
            }
            // A server that restarts refuses connections for a moment: back off, 50 ms
            // doubling to 1.6 s (in the operation's latency, where the wait belongs).
            tokio::time::sleep(RETRY_BACKOFF * (1 << made.min(5))).await;
            made += 1;
            outcome = match $connector.connect().await {
                Ok(fresh) => {
                    // The old connection is broken: dropped, not closed politely.
                    *$store = fresh;
                    let $s = &mut *$store;
                    $op
                }
                Err(e) => Err(e.context("opening a new connection to retry on")),
            };
        }
        let outcome = match (outcome, first) {
            (Err(e), Some(first)) => {
                Err(e.context(format!("after {made} retries; the first error: {first}")))
            }
            (outcome, _) => outcome,
        };
        (outcome, made)
    }};
}

/// The first wait before a retry (`--retries`); it doubles with each one.
const RETRY_BACKOFF: std::time::Duration = std::time::Duration::from_millis(50);

/// How the phases of a run reconnect: the connector and `--retries`.
#[derive(Clone, Copy)]
pub(super) struct Retry<'a, C> {
    pub(super) connector: &'a C,
    pub(super) retries: u32,
}

pub(super) async fn insert_phase<C: Connect>(
    store: &mut C::Store,
    retry: Retry<'_, C>,
    work: &SizeWork,
    observer: &mut dyn Observer,
) -> Measured {
    let ops = work.share.len_of(work.records.len() as u64);
    observer.phase_started(PhaseKind::Insert, &work.size, ops);
    let mut r = Record::blank();
    let mut errors = Errors::default();
    let mut stopped = false;
    let mut retries = 0;
    let meter = Meter::start();
    let mut recorder = Recorder::new(meter.started());
    for (done, i) in work.share.of(0..work.records.len()).enumerate() {
        if interrupt::requested() {
            stopped = true;
            break;
        }
        work.records.fill(i, &mut r);
        let r = &r;
        let t = Instant::now();
        let (mut outcome, made) =
            with_retries!(retry.connector, store, retry.retries, |s| s.insert(r).await);
        if made > 0 && outcome.is_err() {
            // The first attempt may have committed before its connection dropped: then the
            // retry found the record there (a duplicate key), and the insert is done.
            if let Ok(Some(found)) = store.find(&r.unique_id).await
                && found == *r
            {
                outcome = Ok(());
            }
        }
        recorder.record(t, Instant::now());
        retries += made;
        if let Err(e) = outcome {
            recorder.failed();
            let message = || format!("inserting {}: {}", r.unique_id, crate::error::chain(&e));
            if errors.count(format!("store error: {}", crate::error::chain(&e)), message) {
                stopped = true;
                break;
            }
        }
        if done % PROGRESS_EVERY == 0 {
            observer.progress(done as u64);
        }
    }
    one_connection_run(
        PhaseKind::Insert,
        &work.size,
        (errors, retries),
        stopped,
        meter,
        recorder,
    )
}

/// Checks one answer, to record `index` of `records`; `Some((kind, message))` when it is
/// wrong. The record is made again only to say what was wrong.
fn check(
    records: &Records,
    index: usize,
    outcome: Result<Option<Record>>,
) -> Option<(&'static str, String)> {
    let (kind, detail) = match outcome {
        Ok(Some(found)) if records.is(index, &found) => return None,
        Ok(Some(found)) => (
            "wrong record",
            format!("expected {:?}, got {found:?}", records.get(index)),
        ),
        Ok(None) => ("missing record", "no record found".to_string()),
        Err(e) => ("store error", crate::error::chain(&e)),
    };
    let mut id = String::new();
    records.unique_id(index, &mut id);
    Some((kind, format!("{kind} for unique_id {id}: {detail}")))
}

/// The blog's search phase: one connection, one search after another.
pub(super) async fn search_phase_closed<C: Connect>(
    store: &mut C::Store,
    retry: Retry<'_, C>,
    work: &SizeWork,
    observer: &mut dyn Observer,
) -> Measured {
    observer.phase_started(
        PhaseKind::Search,
        &work.size,
        work.share.len_of(work.order.len()),
    );
    let mut errors = Errors::default();
    let mut stopped = false;
    let mut retries = 0;
    let mut id = String::new();
    let meter = Meter::start();
    let mut recorder = Recorder::new(meter.started());
    for (i, index) in work.share.of(work.order.iter()).enumerate() {
        if interrupt::requested() {
            stopped = true;
            break;
        }
        let index = index as usize;
        work.records.unique_id(index, &mut id);
        let id = &id;
        let t = Instant::now();
        let (outcome, made) =
            with_retries!(retry.connector, store, retry.retries, |s| s.find(id).await);
        recorder.record(t, Instant::now());
        retries += made;
        if let Some((kind, message)) = check(&work.records, index, outcome) {
            recorder.failed();
            if errors.count(kind, || message) {
                stopped = true;
                break;
            }
        }
        if i % PROGRESS_EVERY == 0 {
            observer.progress(i as u64);
        }
    }
    one_connection_run(
        PhaseKind::Search,
        &work.size,
        (errors, retries),
        stopped,
        meter,
        recorder,
    )
}

/// The run of a phase made on one connection, one operation after another.
fn one_connection_run(
    kind: PhaseKind,
    size: &Size,
    (errors, retries): (Errors, u64),
    stopped: bool,
    meter: Meter,
    recorder: Recorder,
) -> Measured {
    let ops = recorder.len();
    let (figures, alloc_sites) = meter.finish(ops, &recorder.histogram);
    Measured {
        run: PhaseRun {
            kind,
            size: size.clone(),
            concurrency: 1,
            ops,
            errors: errors.by_kind,
            incomplete: stopped,
            figures,
            histogram: recorder.histogram,
            series: recorder.series,
            open_loop: None,
            retries,
            counters: BTreeMap::new(),
            alloc_sites,
        },
        first_error: errors.first,
    }
}

/// What one search task brings back.
struct TaskResult<S> {
    store: S,
    recorder: Recorder,
    errors: Errors,
    retries: u64,
    stopped: bool,
    pacer: Option<Pacer>,
}

/// One task of a concurrent or open-loop search phase: searches `task`, `task + tasks`, ...
async fn search_task<C: Connect>(
    mut store: C::Store,
    (connector, retries_allowed): (Arc<C>, u32),
    records: Arc<Records>,
    (order, share): (Arc<SearchOrder>, Share),
    (task, tasks): (usize, usize),
    mut pacer: Option<Pacer>,
    started: std::time::Instant,
) -> TaskResult<C::Store> {
    let mut recorder = Recorder::new(started);
    let mut errors = Errors::default();
    let mut stopped = false;
    let mut retries = 0;
    let mut id = String::new();
    for (i, index) in share.of(order.iter()).enumerate().skip(task).step_by(tasks) {
        if interrupt::requested() {
            stopped = true;
            break;
        }
        let index = index as usize;
        records.unique_id(index, &mut id);
        let id = &id;
        let intended = match &pacer {
            Some(p) => Some(p.wait_turn(i as u64).await),
            None => None,
        };
        let start = tokio::time::Instant::now();
        let conn = &mut store;
        let (outcome, made) = with_retries!(connector, conn, retries_allowed, |s| s.find(id).await);
        let end = tokio::time::Instant::now();
        recorder.record(start.into_std(), end.into_std());
        retries += made;
        if let (Some(p), Some(intended)) = (pacer.as_mut(), intended) {
            p.finished(intended, start, end);
        }
        if let Some((kind, message)) = check(&records, index, outcome) {
            recorder.failed();
            if errors.count(kind, || message) {
                stopped = true;
                break;
            }
        }
    }
    TaskResult {
        store,
        recorder,
        errors,
        retries,
        stopped,
        pacer,
    }
}

/// A search phase over `concurrency` tasks, each on its own connection (and that
/// connection's event loop), closed loop or on the open-loop schedule of `rate`.
pub(super) async fn search_phase_tasks<C: Connect + Send + 'static>(
    clients: &Clients<C>,
    connections: &mut Vec<C::Store>,
    concurrency: usize,
    work: &SizeWork,
    (rate, retries_allowed): (Option<f64>, u32),
    observer: &mut dyn Observer,
) -> Result<Measured> {
    observer.phase_started(
        PhaseKind::Search,
        &work.size,
        work.share.len_of(work.order.len()),
    );
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
                    (clients.shared_connector(), retries_allowed),
                    Arc::clone(&work.records),
                    (Arc::clone(&work.order), work.share),
                    (task, concurrency),
                    pacer,
                    meter.started(),
                ),
            )
        })
        .collect();
    let _abort = AbortOnDrop::new(&handles);
    let mut recorder = Recorder::new(meter.started());
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let mut first_error = None;
    let mut stopped = false;
    let mut retries = 0;
    let mut open_loop: Option<OpenLoopRun> = None;
    let mut returned = Vec::with_capacity(concurrency);
    let mut panicked = None;
    for handle in handles {
        match handle.await {
            Ok(t) => {
                recorder.add(&t.recorder);
                for (k, n) in t.errors.by_kind {
                    *errors.entry(k).or_default() += n;
                }
                if first_error.is_none() {
                    first_error = t.errors.first;
                }
                stopped |= t.stopped;
                retries += t.retries;
                if let Some(p) = t.pacer {
                    p.add_to(&mut open_loop);
                }
                returned.push(t.store);
            }
            Err(e) => panicked = Some(e),
        }
    }
    let ops = recorder.len();
    let (figures, alloc_sites) = meter.finish(ops, &recorder.histogram);
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
            histogram: recorder.histogram,
            series: recorder.series,
            open_loop,
            retries,
            counters: BTreeMap::new(),
            alloc_sites,
        },
        first_error,
    })
}
