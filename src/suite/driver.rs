//! The driver suite, after the Go SQL driver benchmark (seeds 000 and 001): tiny queries
//! that measure the driver and the protocol rather than the server, each with its
//! queries/s, allocations and bytes per query, repeated, at concurrency 1 to 16 for the
//! prepared ones. SQL stores run the seed's SQL; stores without SQL run the nearest native
//! operation, named in the report; a test a store has no operation for is reported as not
//! applicable, never as zero.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;

use super::Observer;
use super::clients::{Clients, Connect};
use super::executor::{self, Deal, Done, Operation, Phase, Problem, Timing};
use crate::measure;
use crate::report::model::{PhaseKind, StoreResult};
use crate::store::{DriverStore, Store};
use crate::workload::driver::{DriverOp, DriverTest};
use crate::workload::levels::Repetitions;
use crate::workload::record::Size;

/// What the driver suite runs.
#[derive(Debug, Clone, PartialEq)]
pub struct DriverPlan {
    /// Multiplies the seed's iteration counts (0.1 by default).
    pub scale: f64,
    pub repetitions: Repetitions,
}

impl DriverPlan {
    pub fn iterations(&self, test: DriverTest) -> u64 {
        ((test.seed_iterations() as f64 * self.scale).round() as u64).max(1)
    }

    /// Iterations of the test with this name (0 for an unknown name).
    pub fn iterations_of(&self, name: &str) -> u64 {
        DriverTest::all()
            .into_iter()
            .find(|t| t.name() == name)
            .map_or(0, |t| self.iterations(t))
    }
}

/// Runs every test on a store, filling `result.phases` (kind `driver`, size = the test and
/// its iterations) and `result.not_applicable`.
pub async fn run<C: Connect<Store: DriverStore> + Send + 'static>(
    clients: &Clients<C>,
    plan: &DriverPlan,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    let mut connections = vec![clients.open(0).await?];
    let outcome = run_tests(clients, &mut connections, plan, result, observer).await;
    clients.close(connections).await;
    outcome
}

/// [`run`]'s tests, on `connections` (opened as they are needed).
async fn run_tests<C: Connect<Store: DriverStore> + Send + 'static>(
    clients: &Clients<C>,
    connections: &mut Vec<C::Store>,
    plan: &DriverPlan,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    connections[0].reset().await?;
    result.info = Some(super::per_test_paths(connections[0].describe().await?));
    observer.store_described(result);
    for test in DriverTest::all() {
        let Some(operation) = connections[0].driver_operation(test.operation()) else {
            result.not_applicable.push(test.name());
            observer.not_applicable(&test.name());
            continue;
        };
        let concurrency = test.concurrency();
        while connections.len() < concurrency.tasks() {
            connections.push(clients.open(connections.len()).await?);
        }
        let size = Size {
            name: test.name(),
            records: plan.iterations(test),
        };
        let phase = Phase::new(PhaseKind::Driver, size.clone(), size.records, concurrency);
        let mut runs = Vec::new();
        let mut failure = None;
        for rep in plan.repetitions.iter() {
            super::turns::next_run(|| format!("{}: {}", test.name(), rep.label)).await;
            executor::announce(&rep, Some(&test.name()), observer);
            let op = Arc::new(Iteration::<C> {
                operation: test.operation(),
                deal: Deal::new((0..size.records).map(|i| (i, i))),
                store: std::marker::PhantomData,
            });
            let ran = executor::execute(clients, connections, &phase, op, observer).await?;
            observer.phase_finished(&measure::aggregate(std::slice::from_ref(&ran.run)));
            failure = ran.failure(&test.name());
            if rep.counted() || failure.is_some() {
                runs.push(ran.run);
            }
            if failure.is_some() {
                break;
            }
        }
        let mut phase = measure::aggregate(&runs);
        phase.operation = Some(operation.to_string());
        result.phases.push(phase);
        observer.phases_recorded(result);
        if let Some(e) = failure {
            return Err(e);
        }
    }
    Ok(())
}

/// One iteration of a driver test; the iterations are dealt to whichever task is free,
/// each on its connection's event loop.
struct Iteration<C> {
    operation: DriverOp,
    deal: Deal<(u64, u64)>,
    store: std::marker::PhantomData<fn() -> C>,
}

impl<C: Connect<Store: DriverStore> + Send + 'static> Operation for Iteration<C> {
    type Conn = C::Store;
    type Task = ();
    /// The iteration's number.
    type Item = u64;

    async fn counters(store: &mut C::Store) -> Option<BTreeMap<String, u64>> {
        super::counters_now(store).await
    }

    fn task(&self, _task: usize) {}

    fn items(
        &self,
        _task: usize,
        _tasks: usize,
    ) -> impl Iterator<Item = (u64, u64)> + Send + 'static {
        self.deal.hand()
    }

    async fn perform(&self, store: &mut C::Store, _task: &mut (), _number: u64, i: u64) -> Done {
        let t = Instant::now();
        let outcome = store.driver(self.operation, i).await;
        let timing = Timing::around(t, Instant::now());
        let outcome = outcome.map_err(|e| Problem::new("error", format!("iteration {i}: {e:#}")));
        Done::timed(timing, outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::driver::DriverOp;

    #[test]
    fn the_seeds_tests_and_iterations() {
        let all = DriverTest::all();
        assert_eq!(all.len(), 22);
        assert_eq!(all[0].name(), "SimpleExec");
        assert_eq!(all[21].name(), "PreparedQueryConcurrent16");
        let plan = DriverPlan {
            scale: 0.1,
            repetitions: Repetitions::ONCE,
        };
        assert_eq!(plan.iterations(DriverOp::SimpleExec.into()), 25_000);
        assert_eq!(plan.iterations(DriverOp::SelectLargeRaw.into()), 5_000);
        assert_eq!(
            plan.iterations(DriverTest::PreparedQueryConcurrent(8)),
            50_000
        );
        assert_eq!(
            DriverTest::PreparedQueryConcurrent(8).operation(),
            DriverOp::PreparedQueryRow
        );
        assert_eq!(DriverTest::PreparedExecConcurrent(4).concurrency().get(), 4);
    }
}
