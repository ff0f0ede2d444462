//! The suites, each driving one store through its sequence: classic (the blog's), driver
//! (the Go SQL driver benchmark) and pool (the asyncmy suite); the client's event loops
//! they run on, open-loop pacing, the stall watchdog, the turns the variants of one store
//! take run by run ([`turns`]), and where several load clients meet ([`rendezvous`]). The
//! runner (`run`) calls them.

use std::collections::BTreeMap;

use crate::catalog::StoreInfo;
use crate::report::model::{PhaseKind, PhaseResult, StoreResult};
use crate::store::Store;
use crate::workload::record::Size;

pub mod classic;
pub mod clients;
pub mod driver;
pub mod executor;
pub mod open_loop;
pub mod pool;
pub mod rendezvous;
pub mod ticker;
pub mod turns;
pub mod watchdog;
pub mod ycsb;

/// Hears about a run as it goes: the console prints lines and draws progress bars from these.
pub trait Observer: Send {
    /// The machine's floor was measured, before any store.
    fn floor_measured(&mut self, _floor: &crate::report::model::Floor) {}
    fn store_started(&mut self, _store: &str) {}
    /// A new run of the suite starts (`warm-up run 1/1 (discarded)`, `run 2/3`); only
    /// said when there is more than one.
    fn run_started(&mut self, _label: &str) {}
    /// The store's version and settings are known (`result.info`).
    fn store_described(&mut self, _result: &StoreResult) {}
    /// `which` is `initial` or `final`; `None` when the store could not tell.
    fn size_measured(&mut self, _which: &str, _bytes: Option<u64>) {}
    fn phase_started(&mut self, _kind: PhaseKind, _size: &Size, _ops: u64) {}
    /// Operations done so far in the current phase (called every few hundred operations).
    fn progress(&mut self, _done: u64) {}
    fn phase_finished(&mut self, _phase: &PhaseResult) {}
    /// `result.phases` now holds every phase finished so far (the runner saves them then,
    /// so a run killed later keeps them).
    fn phases_recorded(&mut self, _result: &StoreResult) {}
    fn store_finished(&mut self, _result: &StoreResult) {}
    /// A test the store has no operation for.
    fn not_applicable(&mut self, _test: &str) {}
    /// A line on how a long phase is going (a progress bar cannot be drawn everywhere).
    fn status(&mut self, _line: &str) {}
}

/// An observer that ignores everything.
pub struct Silent;

impl Observer for Silent {}

/// A store's description for a suite other than the classic one: its search and write
/// paths are the classic table's, so they give way to each test's own operation.
pub fn per_test_paths(mut info: StoreInfo) -> StoreInfo {
    let per_test = "per test: the operation named beside each test".to_string();
    info.search_path = per_test.clone();
    info.write_path = per_test;
    info
}

/// The store's own counters now (see [`Store::counters`]); `None` when it cannot tell:
/// they annotate a phase, and a store that fails shows that in the phase itself.
pub async fn counters_now<S: Store>(store: &mut S) -> Option<BTreeMap<String, u64>> {
    store.counters().await.ok()
}

/// What each counter rose by from `before` to `after`; none unless both were read (a
/// counter read after the phase alone would give all since the server started).
pub fn counters_since(
    before: &Option<BTreeMap<String, u64>>,
    after: Option<BTreeMap<String, u64>>,
) -> BTreeMap<String, u64> {
    let (Some(before), Some(after)) = (before, after) else {
        return BTreeMap::new();
    };
    after
        .into_iter()
        .filter_map(|(name, n)| {
            let from = *before.get(&name)?;
            Some((name, n.saturating_sub(from)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_rise_from_before_and_never_below_zero() {
        let before = BTreeMap::from([("MOVED".to_string(), 5), ("ASK".to_string(), 9)]);
        let after = BTreeMap::from([
            ("MOVED".to_string(), 12),
            ("ASK".to_string(), 3),
            ("new".to_string(), 4),
        ]);
        let rose = counters_since(&Some(before.clone()), Some(after.clone()));
        assert_eq!(rose["MOVED"], 7);
        assert_eq!(rose["ASK"], 0, "a restarted server's counter starts again");
        assert!(
            !rose.contains_key("new"),
            "not read before the phase: unknown"
        );
        assert!(counters_since(&None, Some(after)).is_empty());
        assert!(counters_since(&Some(before), None).is_empty());
    }
}
