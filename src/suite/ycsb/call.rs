//! One YCSB operation's store calls, each timed around the call alone, and the checks of
//! what each answered against [`Truth`]: a read's fields, an update's and an insert's
//! versions, a scan's records in key order.

use std::time::{Duration, Instant};

use anyhow::Result;

use super::shared::Versions;
use super::truth::{Insert, Truth};
use crate::store::{YcsbFields, YcsbStore};
use crate::suite::executor::Problem;
use crate::workload::ycsb::{self, Op, OpKind, Workload};

pub(super) fn problem(kind: &'static str, message: impl Into<String>) -> Problem {
    Problem::new(kind, message)
}

pub(super) fn store_error(what: &str, e: &anyhow::Error) -> Problem {
    problem("store error", format!("{what}: {}", crate::error::chain(e)))
}

/// One operation's store calls and checks, on a task's connection.
pub(super) struct Call<'a, S> {
    pub(super) store: &'a mut S,
    pub(super) workload: &'a Workload,
    pub(super) truth: &'a Truth,
    pub(super) versions: Versions,
}

impl<S: YcsbStore> Call<'_, S> {
    pub(super) async fn perform(&mut self, op: Op, timed: &mut Timed) -> Result<(), Problem> {
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

/// The store calls of one operation, timed: each part by its kind, with when it ended, and
/// their total.
#[derive(Default)]
pub(super) struct Timed {
    pub(super) parts: Vec<(OpKind, Duration, Instant)>,
    pub(super) total: Duration,
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
