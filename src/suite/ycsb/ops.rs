//! One task of a YCSB run: the operations dealt to it (a run's drawn as the task makes
//! them, over the acknowledged records), each timed around the store's calls alone and each
//! answer checked against [`Truth`]. As in YCSB, a read-modify-write's read
//! and update are also counted as a READ and an UPDATE.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use hdrhistogram::Histogram;

use super::shared::Versions;
use super::truth::{Insert, Truth};
use crate::measure;
use crate::store::{YcsbFields, YcsbStore};
use crate::suite::clients::Connect;
use crate::suite::executor::{Deal, Done, Operation, Problem, Timing};
use crate::workload::ycsb::{self, Draw, Op, OpKind, Workload};

fn problem(kind: &'static str, message: impl Into<String>) -> Problem {
    Problem::new(kind, message)
}

fn store_error(what: &str, e: &anyhow::Error) -> Problem {
    problem("store error", format!("{what}: {}", crate::error::chain(e)))
}

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

/// One operation's store calls and checks, on a task's connection.
struct Call<'a, S> {
    store: &'a mut S,
    workload: &'a Workload,
    truth: &'a Truth,
    versions: Versions,
}

impl<S: YcsbStore> Call<'_, S> {
    async fn perform(&mut self, op: Op, timed: &mut Timed) -> Result<(), Problem> {
        match op {
            Op::Insert { key } => self.insert(key, timed).await,
            Op::Read { key, field } => self.read(key, field, OpKind::Read, timed).await,
            Op::Update { key, field } => self.update(key, field, OpKind::Update, timed).await,
            Op::Scan { start, len, field } => self.scan(start, len, field, timed).await,
            Op::ReadModifyWrite {
                key,
                read_field,
                write_field,
            } => {
                let read = self.read(key, read_field, OpKind::Read, timed).await;
                // The update runs even after a wrong read, as YCSB's does.
                let update = self.update(key, write_field, OpKind::Update, timed).await;
                // The whole ends with the update's call.
                let (total, end) = (timed.total, timed.parts.last().map(|p| p.2));
                timed.parts.push((
                    OpKind::ReadModifyWrite,
                    total,
                    end.unwrap_or_else(Instant::now),
                ));
                read.and(update)
            }
        }
    }

    async fn insert(&mut self, record: i64, timed: &mut Timed) -> Result<(), Problem> {
        let w = self.workload;
        let key = w.key_name(record);
        let values: Vec<String> = (0..w.field_count)
            .map(|f| ycsb::value(&key, f, 0, w.field_length))
            .collect();
        self.truth
            .insert_started(record, &key)
            .map_err(|e| problem("run error", format!("{e:#}")))?;
        let t = Instant::now();
        let outcome = self.store.ycsb_insert(&key, &values).await;
        timed.add(OpKind::Insert, t);
        self.truth
            .insert_ended(record, outcome.is_ok())
            .map_err(|e| problem("run error", format!("{e:#}")))?;
        outcome.map_err(|e| store_error(&format!("inserting {key}"), &e))
    }

    async fn read(
        &mut self,
        record: i64,
        field: Option<u16>,
        kind: OpKind,
        timed: &mut Timed,
    ) -> Result<(), Problem> {
        let key = self.workload.key_name(record);
        let windows = self.windows(record, field)?;
        let t = Instant::now();
        let outcome = self.store.ycsb_read(&key, field).await;
        timed.add(kind, t);
        let found = outcome.map_err(|e| store_error(&format!("reading {key}"), &e))?;
        let Some(fields) = found else {
            return Err(problem(
                "missing record",
                format!("{key} (record {record}) was inserted, the store has no such record"),
            ));
        };
        self.check_fields(record, &key, field, &fields, &windows)
    }

    async fn update(
        &mut self,
        record: i64,
        field: Option<u16>,
        kind: OpKind,
        timed: &mut Timed,
    ) -> Result<(), Problem> {
        let w = self.workload;
        let key = w.key_name(record);
        let fields: Vec<u16> = match field {
            Some(f) => vec![f],
            None => (0..w.field_count).collect(),
        };
        let mut writes = Vec::with_capacity(fields.len());
        let mut values = Vec::with_capacity(fields.len());
        for &f in &fields {
            let write = self
                .truth
                .write_started(record, f)
                .map_err(|e| problem("run error", format!("{e:#}")))?;
            let version = self
                .versions
                .written(write.version)
                .map_err(|e| problem("run error", e))?;
            values.push((f, ycsb::value(&key, f, version, w.field_length)));
            writes.push((f, write));
        }
        let t = Instant::now();
        let outcome = self.store.ycsb_update(&key, &values).await;
        timed.add(kind, t);
        for (f, write) in writes {
            self.truth
                .write_ended(record, f, write, outcome.is_ok())
                .map_err(|e| problem("run error", format!("{e:#}")))?;
        }
        outcome.map_err(|e| store_error(&format!("updating {key}"), &e))
    }

    async fn scan(
        &mut self,
        start_record: i64,
        len: u32,
        field: Option<u16>,
        timed: &mut Timed,
    ) -> Result<(), Problem> {
        let start = self.workload.key_name(start_record);
        let run_error = |e: anyhow::Error| problem("run error", format!("{e:#}"));
        // What must come back: the records surely present now, in key order, with their
        // fields' windows.
        let expected = self
            .truth
            .present_from(&start, len as usize)
            .map_err(run_error)?;
        let before = expected
            .iter()
            .map(|&(_, record)| self.windows(record, field))
            .collect::<Result<Vec<_>, _>>()?;
        let t = Instant::now();
        let outcome = self.store.ycsb_scan(&start, len, field).await;
        timed.add(OpKind::Scan, t);
        let rows = outcome.map_err(|e| store_error(&format!("scanning from {start}"), &e))?;
        let wrong = |message: String| {
            problem(
                "wrong scan",
                format!("scan of {len} from {start}: {message}"),
            )
        };
        if rows.len() > len as usize {
            return Err(wrong(format!("{} records returned", rows.len())));
        }
        let missing = |key: &str| {
            wrong(format!(
                "{key} is missing ({} records returned)",
                rows.len()
            ))
        };
        // Walked beside the rows, both in key order: the next expected record.
        let mut next = 0;
        let mut previous: Option<&str> = None;
        for (key, fields) in &rows {
            if key.as_str() < start.as_str() || previous.is_some_and(|p| key.as_str() <= p) {
                return Err(wrong(format!(
                    "{key} out of order (after {})",
                    previous.unwrap_or(&start)
                )));
            }
            previous = Some(key);
            // A record surely present before the scan, ordered before one returned, must
            // have come back.
            if let Some((passed, _)) = expected.get(next).filter(|(e, _)| e < key) {
                return Err(missing(passed));
            }
            let inserted_during;
            let (record, windows) = match expected.get(next) {
                Some((e, record)) if e == key => {
                    next += 1;
                    (*record, &before[next - 1])
                }
                _ => {
                    // Inserted during the scan: any version since the load.
                    let never =
                        |record| matches!(self.truth.insert_state(record), Ok(Insert::Never));
                    let Some(record) = self.truth.record_of(key).filter(|&r| !never(r)) else {
                        return Err(wrong(format!("{key} was never inserted")));
                    };
                    inserted_during = self
                        .windows(record, field)?
                        .into_iter()
                        .map(|(f, _, high)| (f, 0, high))
                        .collect::<Vec<_>>();
                    (record, &inserted_during)
                }
            };
            self.check_fields(record, key, field, fields, windows)?;
        }
        // Fewer came back than asked: every record surely present must have.
        if rows.len() < len as usize
            && let Some((key, _)) = expected.get(next)
        {
            return Err(missing(key));
        }
        Ok(())
    }

    /// Per field a read of `field` returns: the field, the lowest version it may be now, the
    /// highest.
    fn windows(&self, record: i64, field: Option<u16>) -> Result<Vec<(u16, u32, u32)>, Problem> {
        let fields: Vec<u16> = match field {
            Some(f) => vec![f],
            None => (0..self.workload.field_count).collect(),
        };
        fields
            .into_iter()
            .map(|f| {
                let w = self.truth.window(record, f)?;
                Ok((f, w.lowest, w.highest))
            })
            .collect::<Result<_>>()
            .map_err(|e| problem("run error", format!("{e:#}")))
    }

    /// Checks a record's fields as read against the versions each may be (`windows`, from
    /// before the read; the highest is looked up again now, after it).
    fn check_fields(
        &self,
        record: i64,
        key: &str,
        field: Option<u16>,
        fields: &YcsbFields,
        windows: &[(u16, u32, u32)],
    ) -> Result<(), Problem> {
        let w = self.workload;
        let wrong = |message: String| problem("wrong value", format!("{key}: {message}"));
        if fields.len() != usize::from(w.field_count) {
            return Err(wrong(format!(
                "{} fields, the table has {}",
                fields.len(),
                w.field_count
            )));
        }
        for (i, value) in fields.iter().enumerate() {
            let asked = field.is_none_or(|f| usize::from(f) == i);
            match (asked, value) {
                (true, None) => return Err(wrong(format!("field {i} is missing"))),
                (false, Some(_)) => return Err(wrong(format!("field {i} came back unasked"))),
                _ => {}
            }
        }
        for &(f, lowest, _) in windows {
            let Some(found) = &fields[usize::from(f)] else {
                continue;
            };
            let highest = self
                .truth
                .highest(record, f)
                .map_err(|e| problem("run error", format!("{e:#}")))?;
            if !self
                .versions
                .fits(found, key, f, w.field_length, (lowest, highest))
            {
                let shown: String = found.chars().take(24).collect();
                return Err(wrong(format!(
                    "field {f} is {shown:?}{} ({} characters), not one of its versions \
                     {lowest} to {highest}",
                    if found.len() > 24 { "..." } else { "" },
                    found.len()
                )));
            }
        }
        Ok(())
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

/// The store calls of one operation, timed: each part by its kind, with when it ended, and
/// their total.
#[derive(Default)]
struct Timed {
    parts: Vec<(OpKind, Duration, Instant)>,
    total: Duration,
}

impl Timed {
    /// A part of `kind` that started at `started` ends now.
    fn add(&mut self, kind: OpKind, started: Instant) {
        let end = Instant::now();
        let took = end - started;
        self.parts.push((kind, took, end));
        self.total += took;
    }
}
