//! The one measured phase under every suite. A suite says what one operation is (an
//! [`Operation`]) and how the phase is named (a [`Phase`]); the executor does the rest:
//! the tasks over the client's event loops, closed-loop or open-loop pacing, the timing of
//! each operation into the phase's histogram and time series, the errors by kind, the
//! progress and status lines, the join, the connections handed back, and the [`PhaseRun`]
//! with the phase's wall time, CPU and allocations; and the console line that says which
//! of a suite's repetitions starts.
//!
//! Nothing here runs on the timed path but the timing itself and one relaxed load per
//! operation: progress and the live latency are handed over when the ticker's thread asks
//! for them, not per operation.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};

mod deal;
mod progress;

pub use self::deal::Deal;

use self::progress::{Live, Status, TICK};
use super::Observer;
use super::clients::{Clients, Connect};
use super::open_loop::Pacer;
use super::ticker::Ticker;
use super::watchdog::AbortOnDrop;
use crate::interrupt;
use crate::measure::{self, Errors, Meter, OpenLoopRun, PhaseRun, Recorder};
use crate::report::model::PhaseKind;
use crate::workload::levels::{Concurrency, Repetition};
use crate::workload::record::Size;

/// What a suite says of one phase run.
#[derive(Debug, Clone)]
pub struct Phase {
    pub kind: PhaseKind,
    /// Its name and the records (or iterations) it is about, as reported.
    pub size: Size,
    /// The operations it is to make (the progress bar's length).
    pub ops: u64,
    /// Tasks at once, each on its own connection.
    pub concurrency: Concurrency,
    /// Open loop: operations per second on a fixed schedule, shared out over the tasks.
    pub rate: Option<f64>,
    /// Where the tasks run.
    pub placement: Placement,
    /// Operations one timed call counts as (a batch of rows is one call and many rows).
    pub ops_per_call: u64,
    /// The logical bytes of the records the phase inserts (none for a phase that inserts
    /// none): what its bytes written to storage are compared with.
    pub logical_bytes: Option<u64>,
}

impl Phase {
    /// A closed-loop phase of `ops` operations over `concurrency` tasks, each task on its
    /// connection's event loop, one operation per call.
    pub fn new(kind: PhaseKind, size: Size, ops: u64, concurrency: Concurrency) -> Self {
        Phase {
            kind,
            size,
            ops,
            concurrency,
            rate: None,
            placement: Placement::Spread,
            ops_per_call: 1,
            logical_bytes: None,
        }
    }

    /// How the phase is named in its messages: `INSERT small`, `a`, `SimpleExec`.
    fn label(&self) -> String {
        match self.kind {
            PhaseKind::Insert | PhaseKind::Search => {
                format!("{} {}", self.kind.label(), self.size.name)
            }
            _ => self.size.name.clone(),
        }
    }
}

/// Which event loop each task of a phase runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Task `i` on the loop of connection `i` (see [`Clients::spawn`]).
    Spread,
    /// Every task on the first loop: tasks that share connections among them (a pool).
    OneLoop,
}

/// A wrong or failed operation: its kind (`store error`, `wrong record`, ...) and what
/// happened, naming the operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub kind: Cow<'static, str>,
    pub message: String,
}

impl Problem {
    pub fn new(kind: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Problem {
            kind: kind.into(),
            message: message.into(),
        }
    }
}

/// The timed part of one operation: when it started and ended, and how long it took
/// (less than the span when only the store's calls are timed, not what is done between
/// them).
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub start: Instant,
    pub end: Instant,
    pub took: Duration,
}

impl Timing {
    /// An operation timed as a whole, from `start` to `end`.
    pub fn around(start: Instant, end: Instant) -> Self {
        Timing {
            start,
            end,
            took: end.saturating_duration_since(start),
        }
    }
}

/// What one operation came to.
#[derive(Debug)]
pub enum Done {
    /// Made and timed; `Err` when it failed or answered wrong. `retries`: the times it was
    /// made again on a new connection (`--retries`).
    Timed {
        timing: Timing,
        outcome: Result<(), Problem>,
        retries: u64,
    },
    /// Not made, and counted as an error (a record it needed never came).
    Untimed(Problem),
    /// Not made, not counted (it depended on an operation that failed, already counted).
    Skipped,
    /// Not made: the run is stopping (another task gave up).
    Stop,
}

impl Done {
    /// A timed operation, made once.
    pub fn timed(timing: Timing, outcome: Result<(), Problem>) -> Self {
        Done::Timed {
            timing,
            outcome,
            retries: 0,
        }
    }
}

/// What one operation of a phase is. Shared by the phase's tasks; each task has a
/// connection (`Conn`) and a state of its own (`Task`: buffers, per-kind figures).
pub trait Operation: Send + Sync + 'static {
    type Conn: Send + 'static;
    type Task: Send + 'static;
    /// What one operation is about (a record's index, an operation drawn up front).
    type Item: Send;

    /// The state of task `task`.
    fn task(&self, task: usize) -> Self::Task;

    /// The operations task `task` of `tasks` makes, in order, each with its number in the
    /// phase (by which open-loop pacing schedules it). Where the operations do not belong
    /// to a task, a [`Deal`] hands each to the task that is free.
    fn items(
        &self,
        task: usize,
        tasks: usize,
    ) -> impl Iterator<Item = (u64, Self::Item)> + Send + 'static;

    /// Makes one operation on `conn`, timing its store calls, and checks its answer.
    fn perform(
        &self,
        conn: &mut Self::Conn,
        task: &mut Self::Task,
        number: u64,
        item: Self::Item,
    ) -> impl Future<Output = Done> + Send;

    /// What the phase does first, inside its timing, before its tasks start (a pool opens
    /// its first connections).
    fn open(&self) -> impl Future<Output = Result<()>> + Send {
        async { Ok(()) }
    }

    /// A task stopped before its last operation (too many errors, an interruption).
    fn stopped(&self) {}

    /// An open loop: the operation `task` just made was due at `due` (its response time
    /// runs from then), for an operation that keeps figures of its parts.
    fn responded(&self, _task: &mut Self::Task, _due: std::time::Instant) {}

    /// The store's own counters (see `Store::counters`), read on the first task's
    /// connection before and after the phase; `None` where there are none.
    fn counters(
        _conn: &mut Self::Conn,
    ) -> impl Future<Output = Option<BTreeMap<String, u64>>> + Send {
        async { None }
    }
}

/// A phase run, measured: its run, its first error, and each task's state.
pub struct Executed<T> {
    pub run: PhaseRun,
    pub first_error: Option<String>,
    pub tasks: Vec<T>,
}

impl<T> Executed<T> {
    /// Why the run failed: its first wrong answer or error, or an interruption.
    pub fn failure(&self, label: &str) -> Option<anyhow::Error> {
        let errors: u64 = self.run.errors.values().sum();
        match (&self.first_error, self.run.incomplete) {
            (Some(first), _) => Some(anyhow!(
                "{label}: failed after {} operations ({errors} error(s)); first: {first}",
                self.run.ops
            )),
            (None, true) => Some(anyhow!("{label}: interrupted")),
            (None, false) => None,
        }
    }
}

/// What one task brings back.
struct TaskRun<C, T> {
    conn: C,
    state: T,
    recorder: Recorder,
    errors: Errors,
    retries: u64,
    ops: u64,
    stopped: bool,
    pacer: Option<Pacer>,
}

/// One task of a phase: the operations it is given or dealt, one after another on its
/// connection.
async fn run_task<O: Operation>(
    op: Arc<O>,
    mut conn: O::Conn,
    (task, tasks): (usize, usize),
    live: Arc<Live>,
    mut pacer: Option<Pacer>,
    started: Instant,
) -> TaskRun<O::Conn, O::Task> {
    let mut state = op.task(task);
    let mut recorder = Recorder::new(started);
    let mut errors = Errors::default();
    let (mut retries, mut ops, mut seen) = (0, 0, 0);
    let mut stopped = false;
    for (number, item) in op.items(task, tasks) {
        if interrupt::requested() {
            stopped = true;
            break;
        }
        let due = match &mut pacer {
            Some(p) => match p.wait_turn(number).await {
                Ok(due) => Some(due),
                Err(e) => {
                    errors.count("open-loop timer", || {
                        format!("the open loop's timer failed: {e}")
                    });
                    stopped = true;
                    break;
                }
            },
            None => None,
        };
        let problem = match op.perform(&mut conn, &mut state, number, item).await {
            Done::Timed {
                timing,
                outcome,
                retries: made,
            } => {
                recorder.record_took(timing.end, timing.took);
                ops += 1;
                retries += made;
                if let (Some(p), Some(due)) = (pacer.as_mut(), due) {
                    let at = tokio::time::Instant::from_std;
                    p.finished(due, at(timing.start), at(timing.end));
                    op.responded(&mut state, due.into_std());
                }
                outcome.err().inspect(|_| recorder.failed())
            }
            Done::Untimed(problem) => Some(problem),
            Done::Skipped => None,
            Done::Stop => {
                stopped = true;
                break;
            }
        };
        if let Some(p) = problem
            && errors.count(p.kind, || p.message)
        {
            stopped = true;
            break;
        }
        live.hand_over(task, &mut seen, ops, &recorder);
    }
    if stopped {
        op.stopped();
    }
    live.finished(task, ops);
    TaskRun {
        conn,
        state,
        recorder,
        errors,
        retries,
        ops,
        stopped,
        pacer,
    }
}

/// Runs `phase` with `op` over the first `phase.concurrency` connections of `conns` (which
/// get them back, in task order, before the ones not used), and measures it.
pub async fn execute<C, O>(
    clients: &Clients<C>,
    conns: &mut Vec<O::Conn>,
    phase: &Phase,
    op: Arc<O>,
    observer: &mut dyn Observer,
) -> Result<Executed<O::Task>>
where
    C: Connect + Send + 'static,
    O: Operation,
{
    let tasks = phase.concurrency.tasks();
    if conns.len() < tasks {
        bail!(
            "{}: {tasks} connections needed, {} open",
            phase.label(),
            conns.len()
        );
    }
    observer.phase_started(phase.kind, &phase.size, phase.ops);
    let counted = O::counters(&mut conns[0]).await;
    let live = Arc::new(Live::new(tasks));
    // Progress from a thread: a timer on the run's loop would time every wait for an answer.
    let mut ticker = Ticker::start(TICK)?;
    let taken: Vec<O::Conn> = conns.drain(..tasks).collect();
    // What the phase needs is allocated before its clocks start: the allocations counted
    // (and their sites) are the operations'.
    let mut status = Status::new(phase.label(), phase.ops, phase.ops_per_call.max(1));
    let mut outcomes = Vec::with_capacity(tasks);
    let mut states = Vec::with_capacity(tasks);
    let mut returned = Vec::with_capacity(tasks);
    // The server is read before the clocks start and after they stop, on a thread of its
    // own in between.
    let watching = clients.watch().begin();
    let meter = Meter::start();
    if let Err(e) = op.open().await {
        let mut rest = std::mem::take(conns);
        *conns = taken;
        conns.append(&mut rest);
        return Err(e.context(phase.label()));
    }
    let start = tokio::time::Instant::now();
    let handles: Vec<_> = taken
        .into_iter()
        .enumerate()
        .map(|(task, conn)| {
            // Each task paces its own operations, numbered in the whole phase's schedule.
            let pacer = phase.rate.map(|r| Pacer::new(r, start));
            let work = run_task(
                Arc::clone(&op),
                conn,
                (task, tasks),
                Arc::clone(&live),
                pacer,
                meter.started(),
            );
            match phase.placement {
                Placement::Spread => clients.spawn(task, work),
                Placement::OneLoop => clients.spawn(0, work),
            }
        })
        .collect();
    let _abort = AbortOnDrop::new(&handles);
    for mut handle in handles {
        let outcome = loop {
            tokio::select! {
                outcome = &mut handle => break outcome,
                // The console's drawing is not the phase's: its allocations are not counted.
                _ = ticker.tick() => measure::uncounted(|| status.tick(&live, observer)),
            }
        };
        outcomes.push(outcome);
    }
    let started = meter.started();
    let clocks = meter.stop();
    let server = watching.end();
    let mut recorder = Recorder::new(started);
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let mut first_error = None;
    let (mut stopped, mut retries, mut calls) = (false, 0, 0);
    let mut open_loop: Option<OpenLoopRun> = None;
    let mut panicked = None;
    for outcome in outcomes {
        match outcome {
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
                calls += t.ops;
                if let Some(p) = t.pacer {
                    p.add_to(&mut open_loop);
                }
                states.push(t.state);
                returned.push(t.conn);
            }
            Err(e) => panicked = Some(e),
        }
    }
    let ops = calls * phase.ops_per_call.max(1);
    let (mut figures, alloc_sites) = clocks.figures(ops, &recorder.histogram);
    if let Some(ol) = &open_loop {
        let response = crate::report::model::latency(&ol.response);
        figures.response_p50_us = Some(response.p50);
        figures.response_p99_us = Some(response.p99);
    }
    if let Some(server) = &server {
        server.apply(&mut figures, ops);
    }
    // Connections go back in task order; one lost to a panic is not reused.
    returned.append(conns);
    *conns = returned;
    if let Some(e) = panicked {
        bail!("{}: a task failed: {e}", phase.label());
    }
    let counters = match conns.first_mut() {
        Some(conn) => super::counters_since(&counted, O::counters(conn).await),
        None => BTreeMap::new(),
    };
    observer.progress(ops);
    Ok(Executed {
        run: PhaseRun {
            kind: phase.kind,
            size: phase.size.clone(),
            concurrency: phase.concurrency,
            ops,
            errors,
            incomplete: stopped,
            figures,
            histogram: recorder.histogram,
            series: recorder.series,
            open_loop,
            retries,
            counters,
            alloc_sites,
            server,
            logical_bytes: phase.logical_bytes,
        },
        first_error,
        tasks: states,
    })
}

/// Says which run of a suite starts (`-- run 2/3 --`, `-- workload a, concurrency 8: run
/// 2/3 --`), when there is more than one; `of`: what is repeated, when not the whole suite.
pub fn announce(rep: &Repetition, of: Option<&str>, observer: &mut dyn Observer) {
    if rep.total > 1 {
        match of {
            Some(what) => observer.run_started(&format!("{what}: {}", rep.label)),
            None => observer.run_started(&rep.label.to_string()),
        }
    }
}
