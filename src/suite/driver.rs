//! The driver suite, after the Go SQL driver benchmark (seeds 000 and 001): tiny queries
//! that measure the driver and the protocol rather than the server, each with its
//! queries/s, allocations and bytes per query, repeated, at concurrency 1 to 16 for the
//! prepared ones. SQL stores run the seed's SQL; stores without SQL run the nearest native
//! operation, named in the report; a test a store has no operation for is reported as not
//! applicable, never as zero.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::{Context, Result, anyhow};

use super::Observer;
use super::clients::{Clients, Connect};
use super::watchdog::AbortOnDrop;
use crate::interrupt;
use crate::measure::{self, Errors, Meter, PhaseRun, Recorder};
use crate::report::model::{PhaseKind, StoreResult};
use crate::store::{DriverStore, Store};
use crate::workload::driver::DriverTest;
use crate::workload::record::Size;

/// What the driver suite runs.
#[derive(Debug, Clone, PartialEq)]
pub struct DriverPlan {
    /// Multiplies the seed's iteration counts (0.1 by default).
    pub scale: f64,
    pub warmup_runs: u32,
    pub runs: u32,
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
        let concurrency = test.concurrency() as usize;
        while connections.len() < concurrency {
            connections.push(clients.open(connections.len()).await?);
        }
        let size = Size {
            name: test.name(),
            records: plan.iterations(test),
        };
        let mut runs = Vec::new();
        let total = plan.warmup_runs + plan.runs.max(1);
        let mut failure = None;
        for rep in 0..total {
            observer.phase_started(PhaseKind::Driver, &size, size.records);
            let (run, first_error) =
                run_test(clients, connections, test, concurrency, size.clone()).await?;
            observer.phase_finished(&measure::aggregate(std::slice::from_ref(&run)));
            let stopped = run.incomplete;
            if rep >= plan.warmup_runs || first_error.is_some() {
                runs.push(run);
            }
            if let Some(e) = first_error {
                failure = Some(anyhow!("{}: {e}", test.name()));
                break;
            }
            if stopped {
                failure = Some(anyhow!("{}: interrupted", test.name()));
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

/// One run of one test over `concurrency` connections, each task on its connection's event
/// loop; the iterations are shared out.
async fn run_test<C: Connect<Store: DriverStore> + Send + 'static>(
    clients: &Clients<C>,
    connections: &mut Vec<C::Store>,
    test: DriverTest,
    concurrency: usize,
    size: Size,
) -> Result<(PhaseRun, Option<String>)> {
    let iterations = size.records;
    let operation = test.operation();
    let stores: Vec<C::Store> = connections.drain(..concurrency).collect();
    let meter = Meter::start();
    let handles: Vec<_> = stores
        .into_iter()
        .enumerate()
        .map(|(task, mut store)| {
            let started = meter.started();
            clients.spawn(task, async move {
                let mut recorder = Recorder::new(started);
                let mut errors = Errors::default();
                let mut stopped = false;
                let mut i = task as u64;
                while i < iterations {
                    if interrupt::requested() {
                        stopped = true;
                        break;
                    }
                    let t = Instant::now();
                    let outcome = store.driver(operation, i).await;
                    recorder.record(t, Instant::now());
                    if let Err(e) = outcome {
                        recorder.failed();
                        if errors.count("error", || format!("iteration {i}: {e:#}")) {
                            stopped = true;
                            break;
                        }
                    }
                    i += concurrency as u64;
                }
                (store, recorder, errors, stopped)
            })
        })
        .collect();
    let _abort = AbortOnDrop::new(&handles);
    let mut recorder = Recorder::new(meter.started());
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let mut first_error = None;
    let mut stopped = false;
    let mut returned = Vec::new();
    for handle in handles {
        let (store, r, e, s) = handle.await.context("a driver task panicked")?;
        recorder.add(&r);
        for (k, n) in e.by_kind {
            *errors.entry(k).or_default() += n;
        }
        if first_error.is_none() {
            first_error = e.first;
        }
        stopped |= s;
        returned.push(store);
    }
    let ops = recorder.len();
    let (figures, alloc_sites) = meter.finish(ops, &recorder.histogram);
    returned.append(connections);
    *connections = returned;
    Ok((
        PhaseRun {
            kind: PhaseKind::Driver,
            size,
            concurrency: concurrency as u32,
            ops,
            errors,
            incomplete: stopped,
            figures,
            histogram: recorder.histogram,
            series: recorder.series,
            open_loop: None,
            retries: 0,
            counters: Default::default(),
            alloc_sites,
        },
        first_error,
    ))
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
            warmup_runs: 0,
            runs: 1,
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
        assert_eq!(DriverTest::PreparedExecConcurrent(4).concurrency(), 4);
    }
}
