//! The classic suite's operations: an insert of one record (one transaction) and a search
//! by unique_id, every answer checked; the executor runs them on one connection or spread
//! over several tasks (closed loop or on an open-loop schedule).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;

use crate::interrupt;
use crate::store::Store;
use crate::suite::clients::Connect;
use crate::suite::executor::{Deal, Done, Operation, Problem, Timing};
use crate::workload::record::{Record, Records, SearchOrder};
use crate::workload::share::Share;

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
pub(super) struct Retry<C> {
    pub(super) connector: Arc<C>,
    pub(super) retries: u32,
}

/// The insert of one record, in its own transaction.
pub(super) struct Insert<C> {
    retry: Retry<C>,
    records: Arc<Records>,
    share: Share,
}

impl<C> Insert<C> {
    /// The inserts of `records`, this client's `share` of them.
    pub(super) fn new(retry: Retry<C>, records: &Arc<Records>, share: Share) -> Self {
        Insert {
            retry,
            records: Arc::clone(records),
            share,
        }
    }
}

impl<C: Connect + Send + 'static> Operation for Insert<C> {
    type Conn = C::Store;
    /// The record being inserted, filled in place.
    type Task = Record;
    /// The record's index.
    type Item = usize;

    async fn counters(store: &mut C::Store) -> Option<BTreeMap<String, u64>> {
        crate::suite::counters_now(store).await
    }

    fn task(&self, _task: usize) -> Record {
        Record::blank()
    }

    fn items(
        &self,
        task: usize,
        tasks: usize,
    ) -> impl Iterator<Item = (u64, usize)> + Send + 'static {
        let indexes = self.share.of(0..self.records.len()).enumerate();
        indexes
            .skip(task)
            .step_by(tasks)
            .map(|(i, index)| (i as u64, index))
    }

    async fn perform(
        &self,
        store: &mut C::Store,
        r: &mut Record,
        _number: u64,
        index: usize,
    ) -> Done {
        self.records.fill(index, r);
        let r = &*r;
        let t = Instant::now();
        let (mut outcome, made) =
            with_retries!(self.retry.connector, store, self.retry.retries, |s| s
                .insert(r)
                .await);
        if made > 0 && outcome.is_err() {
            // The first attempt may have committed before its connection dropped: then the
            // retry found the record there (a duplicate key), and the insert is done.
            if let Ok(Some(found)) = store.find(&r.unique_id).await
                && found == *r
            {
                outcome = Ok(());
            }
        }
        let timing = Timing::around(t, Instant::now());
        let outcome = outcome.map_err(|e| {
            let chain = crate::error::chain(&e);
            let message = format!("inserting {}: {chain}", r.unique_id);
            Problem::new(format!("store error: {chain}"), message)
        });
        Done::Timed {
            timing,
            outcome,
            retries: made,
        }
    }
}

/// A search by unique_id, its answer checked; the searches dealt to whichever task is free.
pub(super) struct Search<C> {
    retry: Retry<C>,
    records: Arc<Records>,
    /// This client's searches: each one's number in its share and its record's index.
    deal: Deal<(u64, usize)>,
}

impl<C> Search<C> {
    /// The searches of `records` in `order`, this client's `share` of them.
    pub(super) fn new(
        retry: Retry<C>,
        (records, order): (&Arc<Records>, &Arc<SearchOrder>),
        share: Share,
    ) -> Self {
        let searches = share.of(order.iter()).enumerate();
        Search {
            retry,
            records: Arc::clone(records),
            deal: Deal::new(searches.map(|(i, index)| (i as u64, index as usize))),
        }
    }
}

impl<C: Connect + Send + 'static> Operation for Search<C> {
    type Conn = C::Store;
    /// The unique_id searched for, written in place.
    type Task = String;
    /// The index of the record searched for.
    type Item = usize;

    async fn counters(store: &mut C::Store) -> Option<BTreeMap<String, u64>> {
        crate::suite::counters_now(store).await
    }

    fn task(&self, _task: usize) -> String {
        String::new()
    }

    fn items(
        &self,
        _task: usize,
        _tasks: usize,
    ) -> impl Iterator<Item = (u64, usize)> + Send + 'static {
        self.deal.hand()
    }

    async fn perform(
        &self,
        store: &mut C::Store,
        id: &mut String,
        _number: u64,
        index: usize,
    ) -> Done {
        self.records.unique_id(index, id);
        let id = &*id;
        let t = Instant::now();
        let (outcome, made) = with_retries!(self.retry.connector, store, self.retry.retries, |s| s
            .find(id)
            .await);
        let timing = Timing::around(t, Instant::now());
        Done::Timed {
            timing,
            outcome: check(&self.records, index, outcome),
            retries: made,
        }
    }
}

/// Checks one answer, to record `index` of `records`. The record is made again only to
/// say what was wrong.
fn check(records: &Records, index: usize, outcome: Result<Option<Record>>) -> Result<(), Problem> {
    let (kind, detail) = match outcome {
        Ok(Some(found)) if records.is(index, &found) => return Ok(()),
        Ok(Some(found)) => (
            "wrong record",
            format!("expected {:?}, got {found:?}", records.get(index)),
        ),
        Ok(None) => ("missing record", "no record found".to_string()),
        Err(e) => ("store error", crate::error::chain(&e)),
    };
    let mut id = String::new();
    records.unique_id(index, &mut id);
    Err(Problem::new(
        kind,
        format!("{kind} for unique_id {id}: {detail}"),
    ))
}
