//! One task of a YCSB run: the operations dealt to it (a run's drawn as the task makes
//! them, over the acknowledged records), each timed around the store's calls alone and each
//! answer checked against [`Truth`]. As in YCSB, a read-modify-write's read
//! and update are also counted as a READ and an UPDATE.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Result;
use hdrhistogram::Histogram;

use super::call::{Call, Timed, problem};
use super::shared::Versions;
use super::truth::{Insert, Truth};
use crate::measure;
use crate::store::YcsbStore;
use crate::suite::clients::Connect;
use crate::suite::executor::{Deal, Done, Operation, Problem, Timing};
use crate::workload::ycsb::{Draw, Op, OpKind, Workload};

/// The operations of one YCSB phase: the load's, given up front, or a run's, drawn as they
/// are made.
pub(super) struct Operations<C> {
    pub workload: Arc<Workload>,
    pub truth: Arc<Truth>,
    pub source: Source,
    /// The operations' numbers (with the given ones), dealt to whichever task is free.
    pub deal: Deal<(u64, Option<Op>)>,
    /// The versions of a field this client writes and accepts.
    pub versions: Versions,
    pub store: std::marker::PhantomData<fn() -> C>,
}

/// Where a phase's operations come from.
pub(super) enum Source {
    /// Given up front, handed out in order.
    Given(Arc<Vec<Op>>),
    /// `count` operations, each drawn by the task that makes it when its turn comes, over
    /// the records whose insert is acknowledged then (YCSB's threads share one generator
    /// so).
    Drawn { draw: Box<Mutex<Draw>>, count: u64 },
}

impl Source {
    /// The phase's operations, numbered, as its tasks take them: the given ones, or only
    /// the numbers of those drawn when made.
    pub fn deal(&self) -> Deal<(u64, Option<Op>)> {
        match self {
            Source::Given(ops) => {
                let ops = Arc::clone(ops);
                Deal::new((0..ops.len()).map(move |i| (i as u64, Some(ops[i]))))
            }
            Source::Drawn { count, .. } => Deal::new((0..*count).map(|i| (i, None))),
        }
    }

    /// A run's operations, drawn from `draw`.
    pub fn drawn(draw: Draw, count: u64) -> Self {
        Source::Drawn {
            draw: Box::new(Mutex::new(draw)),
            count,
        }
    }

    /// The records inserted or handed out to insert once the phase is over.
    pub fn issued(&self) -> Option<i64> {
        match self {
            Source::Given(_) => None,
            Source::Drawn { draw, .. } => {
                Some(draw.lock().expect("no panics under the lock").issued())
            }
        }
    }

    /// The inserts drawn in the phase.
    pub fn inserts(&self) -> u64 {
        match self {
            Source::Given(ops) => ops.len() as u64,
            Source::Drawn { draw, .. } => draw.lock().expect("no panics under the lock").inserts(),
        }
    }
}

/// Where the record an operation works on stands.
enum Record {
    Ready,
    /// Its insert failed (an error already counted): the operation is left out.
    Skip,
}

/// One task's latencies per operation type, in [`OpKind::ALL`]'s order (a
/// read-modify-write's read and update counted as well).
pub struct Kinds {
    /// Each store call's own.
    pub calls: Vec<Histogram<u64>>,
    /// An open loop's, as YCSB's intended latencies: from when the operation was due to
    /// the end of each of its parts.
    pub responses: Vec<Histogram<u64>>,
    /// The parts of the operation last made, with when each ended.
    last: Vec<(OpKind, Instant)>,
}

impl<C: Connect<Store: YcsbStore> + Send + 'static> Operation for Operations<C> {
    type Conn = C::Store;
    type Task = Kinds;
    /// The operation, when given up front; `None`: drawn when made.
    type Item = Option<Op>;

    async fn counters(store: &mut C::Store) -> Option<BTreeMap<String, u64>> {
        crate::suite::counters_now(store).await
    }

    fn task(&self, _task: usize) -> Kinds {
        let histograms = || {
            OpKind::ALL
                .iter()
                .map(|_| measure::new_histogram())
                .collect()
        };
        Kinds {
            calls: histograms(),
            responses: histograms(),
            last: Vec::with_capacity(3),
        }
    }

    fn items(
        &self,
        _task: usize,
        _tasks: usize,
    ) -> impl Iterator<Item = (u64, Option<Op>)> + Send + 'static {
        self.deal.hand()
    }

    async fn perform(
        &self,
        store: &mut C::Store,
        kinds: &mut Kinds,
        i: u64,
        item: Option<Op>,
    ) -> Done {
        if self.truth.given_up() {
            return Done::Stop;
        }
        let op = match (item, &self.source) {
            (Some(op), _) => op,
            (None, Source::Drawn { draw, .. }) => {
                let acknowledged = self.truth.acknowledged();
                let truth = &self.truth;
                draw.lock()
                    .expect("no panics under the lock")
                    .next_among(acknowledged - 1, &|record| truth.choosable(record))
            }
            (None, Source::Given(_)) => unreachable!("given operations come with their item"),
        };
        match record_of(&self.truth, op) {
            Ok(Record::Ready) => {}
            Ok(Record::Skip) => return Done::Skipped,
            Err(p) => {
                let message = format!(
                    "operation {i} ({}): {}: {}",
                    describe(op),
                    p.kind,
                    p.message
                );
                return Done::Untimed(Problem::new(p.kind, message));
            }
        }
        let mut call = Call {
            store,
            workload: &self.workload,
            truth: &self.truth,
            versions: self.versions,
        };
        let started = Instant::now();
        let mut timed = Timed::default();
        let outcome = call.perform(op, &mut timed).await;
        let ended = Instant::now();
        kinds.last.clear();
        for &(kind, took, end) in &timed.parts {
            measure::record(&mut kinds.calls[kind_index(kind)], took);
            kinds.last.push((kind, end));
        }
        let outcome = outcome.map_err(|p| {
            let message = format!(
                "operation {i} ({}): {}: {}",
                describe(op),
                p.kind,
                p.message
            );
            Problem::new(p.kind, message)
        });
        // The operation ends with its last store call, as each of its types' does: the
        // check after it is the client's (YCSB's intended latency has none).
        let end = timed.parts.iter().map(|&(_, _, end)| end).max();
        Done::timed(
            Timing {
                start: started,
                end: end.unwrap_or(ended),
                took: timed.total,
            },
            outcome,
        )
    }

    fn stopped(&self) {
        self.truth.give_up();
    }

    fn responded(&self, kinds: &mut Kinds, due: Instant) {
        for (kind, end) in kinds.last.drain(..) {
            let response = end.saturating_duration_since(due);
            measure::record(&mut kinds.responses[kind_index(kind)], response);
        }
    }
}

/// Where the record `op` works on stands. Records are drawn among the acknowledged ones, so
/// that no operation waits for an insert: one that is not is an error of the run.
fn record_of(truth: &Truth, op: Op) -> Result<Record, Problem> {
    let record = match op {
        Op::Read { key, .. } | Op::Update { key, .. } => key,
        Op::ReadModifyWrite { key, .. } => key,
        Op::Insert { .. } | Op::Scan { .. } => return Ok(Record::Ready),
    };
    let state = truth
        .insert_state(record)
        .map_err(|e| problem("run error", format!("{e:#}")))?;
    match state {
        Insert::Done => Ok(Record::Ready),
        Insert::Failed => Ok(Record::Skip),
        Insert::NotStarted | Insert::Running | Insert::Others | Insert::Never => Err(problem(
            "unacknowledged record",
            format!("record {record} was chosen before its insert was acknowledged"),
        )),
    }
}

/// `READ of record 92 (every field)`, `SCAN of 40 from record 7 (field 3)`.
fn describe(op: Op) -> String {
    let fields =
        |f: Option<u16>| f.map_or_else(|| "every field".to_string(), |f| format!("field {f}"));
    match op {
        Op::Read { key, field } => format!("READ of record {key} ({})", fields(field)),
        Op::Update { key, field } => format!("UPDATE of record {key} ({})", fields(field)),
        Op::Insert { key } => format!("INSERT of record {key}"),
        Op::Scan { start, len, field } => {
            format!("SCAN of {len} from record {start} ({})", fields(field))
        }
        Op::ReadModifyWrite {
            key,
            read_field,
            write_field,
        } => format!(
            "READ-MODIFY-WRITE of record {key} (reading {}, writing {})",
            fields(read_field),
            fields(write_field)
        ),
    }
}

fn kind_index(kind: OpKind) -> usize {
    OpKind::ALL
        .iter()
        .position(|&k| k == kind)
        .expect("every kind is in ALL")
}
