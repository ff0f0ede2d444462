//! The classic suite, the blog's sequence: reset, initial size, INSERT per size (one record
//! per transaction), final size, SEARCH 40 x N random lookups per size, every answer checked.

use std::time::Instant;

use anyhow::{Result, anyhow, bail};

use super::Observer;
use crate::interrupt;
use crate::measure::Meter;
use crate::record::{self, Record, Size};
use crate::report::model::{PhaseKind, StoreResult};
use crate::store::Store;

/// A phase stops after this many errors: the store has failed by then, and a dead
/// connection should not cost a timeout per remaining operation.
pub const MAX_ERRORS_PER_PHASE: u64 = 10;

/// Operations between two progress updates.
const PROGRESS_EVERY: usize = 512;

/// What the classic suite runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassicPlan {
    pub sizes: Vec<Size>,
    pub searches_per_insert: u64,
    pub seed: u64,
}

/// The records and search orders of a plan, generated before anything is timed.
pub struct Workload {
    sizes: Vec<(Size, Vec<Record>, Vec<u32>)>,
}

impl Workload {
    pub fn generate(plan: &ClassicPlan) -> Self {
        let mut next_id = 1;
        let sizes = plan
            .sizes
            .iter()
            .map(|size| {
                let records = record::generate(plan.seed, size, next_id);
                next_id += records.len() as i64;
                let order =
                    record::search_order(plan.seed, size, size.records * plan.searches_per_insert);
                (size.clone(), records, order)
            })
            .collect();
        Workload { sizes }
    }
}

/// Runs the suite on one open store, filling `result` as each step completes (so a failure
/// keeps what was measured before it). An error fails the store's run; a wrong or missing
/// answer is an error naming the unique_id it was searched by.
pub async fn run<S: Store>(
    store: &mut S,
    workload: &Workload,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    store.reset().await?;
    result.info = Some(store.describe().await?);
    observer.store_described(result);

    result.initial_size_bytes = measure_size(store, "initial", result, observer).await;

    for (size, records, _) in &workload.sizes {
        observer.phase_started(PhaseKind::Insert, size, records.len() as u64);
        let mut meter = Meter::start(PhaseKind::Insert, size);
        let mut first_error = None;
        let mut stopped = false;
        for (i, r) in records.iter().enumerate() {
            if interrupt::requested() {
                stopped = true;
                break;
            }
            let t = Instant::now();
            let outcome = store.insert(r).await;
            meter.record(t.elapsed());
            if let Err(e) = outcome {
                meter.error(format!("store error: {e:#}"));
                first_error.get_or_insert_with(|| format!("inserting {}: {e:#}", r.unique_id));
                if meter.error_count() >= MAX_ERRORS_PER_PHASE {
                    stopped = true;
                    break;
                }
            }
            if i % PROGRESS_EVERY == 0 {
                observer.progress(i as u64);
            }
        }
        finish_phase(meter, stopped, first_error, result, observer)?;
    }

    result.final_size_bytes = measure_size(store, "final", result, observer).await;
    // Read the store again now that it holds data: planners choose their search path by it.
    result.info = Some(store.describe().await?);

    for (size, records, order) in &workload.sizes {
        observer.phase_started(PhaseKind::Search, size, order.len() as u64);
        let mut meter = Meter::start(PhaseKind::Search, size);
        let mut first_error = None;
        let mut stopped = false;
        for (i, &index) in order.iter().enumerate() {
            if interrupt::requested() {
                stopped = true;
                break;
            }
            let expected = &records[index as usize];
            let t = Instant::now();
            let outcome = store.find(&expected.unique_id).await;
            meter.record(t.elapsed());
            let problem = match outcome {
                Ok(Some(found)) if found == *expected => None,
                Ok(Some(found)) => Some((
                    "wrong record",
                    format!("expected {expected:?}, got {found:?}"),
                )),
                Ok(None) => Some(("missing record", "no record found".to_string())),
                Err(e) => Some(("store error", format!("{e:#}"))),
            };
            if let Some((kind, detail)) = problem {
                meter.error(kind);
                first_error.get_or_insert_with(|| {
                    format!("{kind} for unique_id {}: {detail}", expected.unique_id)
                });
                if meter.error_count() >= MAX_ERRORS_PER_PHASE {
                    stopped = true;
                    break;
                }
            }
            if i % PROGRESS_EVERY == 0 {
                observer.progress(i as u64);
            }
        }
        finish_phase(meter, stopped, first_error, result, observer)?;
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
) -> Option<u64> {
    match store.disk_usage().await {
        Ok(usage) => {
            observer.size_measured(which, Some(usage.bytes));
            if which == "final" {
                result.final_size_extra = usage.extra;
            }
            Some(usage.bytes)
        }
        Err(e) => {
            observer.size_measured(which, None);
            result
                .size_error
                .get_or_insert_with(|| format!("{which} size: {e:#}"));
            None
        }
    }
}

fn finish_phase(
    meter: Meter,
    stopped: bool,
    first_error: Option<String>,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    let phase = meter.finish(stopped);
    observer.phase_finished(&phase);
    let label = format!("{} {}", phase.kind.label(), phase.size.name);
    let errors = phase.errors;
    result.phases.push(phase);
    if let Some(first) = first_error {
        return Err(anyhow!("{label}: {errors} error(s); first: {first}"));
    }
    if stopped {
        bail!("{label}: interrupted");
    }
    Ok(())
}
