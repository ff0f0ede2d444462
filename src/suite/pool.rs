//! The pool suite, after the asyncmy benchmark suite (seed 003): the seed's `benchmark_data`
//! table (100,000 rows, indexes on user_id and created_at) loaded once, then Large Result
//! Set (about 33,000 rows, every column decoded into typed values), Concurrent Queries (50
//! SELECTs at once, each on its own new connection, connection setup included), Connection
//! Pool (2,000 queries over a pool of 5 to 20 connections) and Batch Insert (10,000 rows with
//! the store's batch path, named in the report). Every answer is checked.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use tokio::sync::Semaphore;

use super::Observer;
use super::clients::{Clients, Connect};
use super::executor::{self, Deal, Done, Operation, Phase, Placement, Problem, Timing};
use crate::interrupt;
use crate::measure;
use crate::report::model::{PhaseKind, StoreResult};
use crate::store::{PoolStore, Store};
use crate::workload::levels::{Concurrency, Repetitions};
use crate::workload::pool::{
    BenchRow, CONCURRENT, POOL_MAX, POOL_MIN, POOL_QUERIES, PoolSizes, PoolTest, rows,
};
use crate::workload::record::Size;

/// What the pool suite runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolPlan {
    pub seed: u64,
    pub repetitions: Repetitions,
    /// Connections (Concurrent Queries) and workers (Connection Pool) at once, each level
    /// in turn: the seed's 50 ([`SEED_LEVEL`]) unless other levels are asked for.
    pub concurrency: Vec<Concurrency>,
}

/// The seed's connections and workers at once: 50.
pub const SEED_LEVEL: Concurrency = Concurrency::new(CONCURRENT as u32).expect("50 > 0");

/// Runs the suite on a store (every test it has an operation for), filling `result`.
pub async fn run<C: Connect<Store: PoolStore> + Send + 'static>(
    clients: &Clients<C>,
    plan: &PoolPlan,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    run_sized(clients, plan, PoolSizes::SEED, result, observer).await
}

/// [`run`] at other sizes: the integration tests use small ones on an in-memory test server
/// whose inserts and lookups scan every document.
pub async fn run_sized<C: Connect<Store: PoolStore> + Send + 'static>(
    clients: &Clients<C>,
    plan: &PoolPlan,
    sizes: PoolSizes,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    if sizes.large_result > sizes.rows || sizes.rows == 0 || sizes.batch_rows == 0 {
        bail!("pool suite sizes out of range: {sizes:?}");
    }
    let mut main = vec![clients.open(0).await?];
    let outcome = run_tests(clients, &mut main, plan, sizes, result, observer).await;
    clients.close(main).await;
    outcome
}

/// [`run_sized`]'s tests, `main` holding the connection that loads the table.
async fn run_tests<C: Connect<Store: PoolStore> + Send + 'static>(
    clients: &Clients<C>,
    main: &mut Vec<C::Store>,
    plan: &PoolPlan,
    sizes: PoolSizes,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    main[0].reset().await?;
    result.info = Some(super::per_test_paths(main[0].describe().await?));
    observer.store_described(result);
    if main[0].pool_operation(PoolTest::LargeResultSet).is_none() {
        result
            .not_applicable
            .extend(PoolTest::ALL.map(|t| t.name().to_string()));
        for t in PoolTest::ALL {
            observer.not_applicable(t.name());
        }
        return Ok(());
    }
    let table = Arc::new(rows(plan.seed, sizes.rows, 1));
    main[0]
        .pool_load(&table)
        .await
        .with_context(|| format!("loading benchmark_data ({} rows)", sizes.rows))?;
    let batch = Arc::new(rows(plan.seed ^ 0xba7c, sizes.batch_rows, 1));
    for test in PoolTest::ALL {
        let Some(operation) = main[0].pool_operation(test) else {
            result.not_applicable.push(test.name().to_string());
            observer.not_applicable(test.name());
            continue;
        };
        let levels = match test {
            PoolTest::ConcurrentQueries | PoolTest::ConnectionPool => plan.concurrency.clone(),
            _ => vec![Concurrency::ONE],
        };
        for level in levels {
            let mut runs = Vec::new();
            let mut failure = None;
            for rep in plan.repetitions.iter() {
                if interrupt::requested() {
                    bail!("{}: interrupted", test.name());
                }
                super::turns::next_run(|| format!("{}: {}", test.name(), rep.label)).await;
                executor::announce(&rep, Some(test.name()), observer);
                let run = match test {
                    PoolTest::LargeResultSet => {
                        let op = OneCall::<C>::new(Call::LargeResult {
                            table: Arc::clone(&table),
                            large_result: sizes.large_result,
                        });
                        let phase = phase(test, 1, Concurrency::ONE);
                        executor::execute(clients, main, &phase, op, observer).await?
                    }
                    PoolTest::ConcurrentQueries => {
                        let op = ConcurrentQuery {
                            connector: clients.shared_connector(),
                            table: Arc::clone(&table),
                        };
                        let mut opened: Vec<Option<C::Store>> =
                            (0..level.tasks()).map(|_| None).collect();
                        let phase = phase(test, u64::from(level.get()), level);
                        let ran =
                            executor::execute(clients, &mut opened, &phase, Arc::new(op), observer)
                                .await?;
                        // Closed after the timing.
                        super::clients::close_all(opened.into_iter().flatten()).await;
                        ran
                    }
                    PoolTest::ConnectionPool => {
                        connection_pool(clients, &table, rep.index, level, observer).await?
                    }
                    PoolTest::BatchInsert => {
                        main[0].pool_batch_reset().await.with_context(|| {
                            format!("{}: emptying benchmark_batch", test.name())
                        })?;
                        let op = OneCall::<C>::new(Call::Batch {
                            batch: Arc::clone(&batch),
                        });
                        let mut phase = phase(test, batch.len() as u64, Concurrency::ONE);
                        // One call, timed as one sample; it counts as its rows.
                        phase.ops_per_call = batch.len() as u64;
                        let ran = executor::execute(clients, main, &phase, op, observer).await?;
                        if ran.first_error.is_none() {
                            let count = main[0].pool_batch_count().await.with_context(|| {
                                format!("{}: counting benchmark_batch's rows", test.name())
                            })?;
                            if count != batch.len() as u64 {
                                bail!(
                                    "{}: benchmark_batch holds {count} rows after inserting {}",
                                    test.name(),
                                    batch.len()
                                );
                            }
                        }
                        ran
                    }
                };
                observer.phase_finished(&measure::aggregate(std::slice::from_ref(&run.run)));
                failure = run.failure(test.name());
                if rep.counted() || failure.is_some() {
                    runs.push(run.run);
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
    }
    Ok(())
}

/// A pool test's phase: `ops` operations over `tasks` tasks.
fn phase(test: PoolTest, ops: u64, tasks: Concurrency) -> Phase {
    let size = Size {
        name: test.name().to_string(),
        records: ops,
    };
    Phase::new(PhaseKind::Pool, size, ops, tasks)
}

fn check_row(table: &[BenchRow], id: i32, got: Result<Option<BenchRow>>) -> Result<(), Problem> {
    let want = &table[(id - 1) as usize];
    match got {
        Ok(Some(row)) if row == *want => Ok(()),
        Ok(Some(row)) => Err(Problem::new(
            "wrong row",
            format!("row {id}: expected {want:?}, got {row:?}"),
        )),
        Ok(None) => Err(Problem::new("missing row", format!("row {id} is missing"))),
        Err(e) => Err(Problem::new(
            "store error",
            format!("row {id}: {}", crate::error::chain(&e)),
        )),
    }
}

/// A SELECT on a connection of its own, opened first (inside the timing): the seed's 50 at
/// once, one per task. The connection is kept, to be closed after the timing.
struct ConcurrentQuery<C> {
    connector: Arc<C>,
    table: Arc<Vec<BenchRow>>,
}

impl<C: Connect<Store: PoolStore> + Send + 'static> Operation for ConcurrentQuery<C> {
    type Conn = Option<C::Store>;
    type Task = ();
    type Item = ();

    fn task(&self, _task: usize) {}

    fn items(
        &self,
        task: usize,
        _tasks: usize,
    ) -> impl Iterator<Item = (u64, ())> + Send + 'static {
        std::iter::once((task as u64, ()))
    }

    async fn perform(
        &self,
        conn: &mut Option<C::Store>,
        _task: &mut (),
        i: u64,
        _item: (),
    ) -> Done {
        let id = 1 + (i as i32 * 1_999) % self.table.len() as i32;
        let t = Instant::now();
        let got = match self.connector.connect().await {
            Ok(store) => conn.insert(store).pool_point(id).await,
            Err(e) => Err(e.context("opening its connection")),
        };
        let timing = Timing::around(t, Instant::now());
        Done::timed(timing, check_row(&self.table, id, got))
    }
}

/// A tiny pool: up to `max` connections, `min` opened up front, handed out in turn.
struct Pool<S> {
    idle: Mutex<Vec<S>>,
    permits: Semaphore,
}

/// A point SELECT on a connection taken from a pool shared by the phase's workers (all on
/// one event loop, as the pool's connections are).
struct PooledQuery<C: Connect> {
    connector: Arc<C>,
    pool: Arc<Pool<C::Store>>,
    table: Arc<Vec<BenchRow>>,
    /// The queries to make, each taken by whichever worker is free.
    deal: Deal<(u64, u32)>,
    /// Which repetition: each draws other rows.
    rep: u32,
}

impl<C: Connect<Store: PoolStore> + Send + 'static> Operation for PooledQuery<C> {
    type Conn = ();
    type Task = ();
    type Item = u32;

    /// The pool starts with its minimum, as a pool does, inside the timing.
    async fn open(&self) -> Result<()> {
        for _ in 0..POOL_MIN {
            let store = self.connector.connect().await?;
            self.pool
                .idle
                .lock()
                .expect("no panics under the lock")
                .push(store);
        }
        Ok(())
    }

    fn task(&self, _task: usize) {}

    fn items(
        &self,
        _task: usize,
        _tasks: usize,
    ) -> impl Iterator<Item = (u64, u32)> + Send + 'static {
        self.deal.hand()
    }

    async fn perform(&self, _conn: &mut (), _task: &mut (), _number: u64, n: u32) -> Done {
        let id = 1 + ((n + self.rep * POOL_QUERIES) as i32 * 7_919) % self.table.len() as i32;
        let t = Instant::now();
        let _permit = self
            .pool
            .permits
            .acquire()
            .await
            .expect("the semaphore stays open");
        let taken = self
            .pool
            .idle
            .lock()
            .expect("no panics under the lock")
            .pop();
        let store = match taken {
            Some(s) => Ok(s),
            None => self.connector.connect().await,
        };
        let got = match store {
            Ok(mut store) => {
                let got = store.pool_point(id).await;
                self.pool
                    .idle
                    .lock()
                    .expect("no panics under the lock")
                    .push(store);
                got
            }
            Err(e) => Err(e.context("opening a pooled connection")),
        };
        let timing = Timing::around(t, Instant::now());
        Done::timed(timing, check_row(&self.table, id, got))
    }
}

/// 2,000 point SELECTs from `workers` tasks (the seed's 50) over a pool of 5 to 20
/// connections.
async fn connection_pool<C: Connect<Store: PoolStore> + Send + 'static>(
    clients: &Clients<C>,
    table: &Arc<Vec<BenchRow>>,
    rep: u32,
    workers: Concurrency,
    observer: &mut dyn Observer,
) -> Result<executor::Executed<()>> {
    let pool = Arc::new(Pool {
        idle: Mutex::new(Vec::with_capacity(POOL_MAX)),
        permits: Semaphore::new(POOL_MAX),
    });
    let op = PooledQuery {
        connector: clients.shared_connector(),
        pool: Arc::clone(&pool),
        table: Arc::clone(table),
        deal: Deal::new((0..POOL_QUERIES).map(|n| (u64::from(n), n))),
        rep,
    };
    let mut phase = phase(PoolTest::ConnectionPool, u64::from(POOL_QUERIES), workers);
    phase.placement = Placement::OneLoop;
    let mut workers: Vec<()> = vec![(); workers.tasks()];
    let ran = executor::execute(clients, &mut workers, &phase, Arc::new(op), observer).await?;
    let idle = std::mem::take(&mut *pool.idle.lock().expect("no panics under the lock"));
    let opened = idle.len();
    super::clients::close_all(idle).await;
    if ran.first_error.is_none() && !(POOL_MIN..=POOL_MAX).contains(&opened) {
        bail!(
            "{}: the pool ended with {opened} connections, outside {POOL_MIN} to {POOL_MAX}",
            PoolTest::ConnectionPool.name()
        );
    }
    Ok(ran)
}

/// A test made of one call on the main connection.
enum Call {
    /// One query fetching `large_result` rows (the seed's `LARGE_RESULT`), every column
    /// decoded and compared with `table`'s.
    LargeResult {
        table: Arc<Vec<BenchRow>>,
        large_result: u32,
    },
    /// 10,000 rows into `benchmark_batch` with the store's batch path.
    Batch { batch: Arc<Vec<BenchRow>> },
}

/// A [`Call`], on the stores of `C`.
struct OneCall<C> {
    call: Call,
    store: std::marker::PhantomData<fn() -> C>,
}

impl<C> OneCall<C> {
    fn new(call: Call) -> Arc<Self> {
        Arc::new(OneCall {
            call,
            store: std::marker::PhantomData,
        })
    }
}

impl<C: Connect<Store: PoolStore> + Send + 'static> Operation for OneCall<C> {
    type Conn = C::Store;
    type Task = ();
    type Item = ();

    fn task(&self, _task: usize) {}

    fn items(
        &self,
        _task: usize,
        _tasks: usize,
    ) -> impl Iterator<Item = (u64, ())> + Send + 'static {
        std::iter::once((0, ()))
    }

    async fn perform(&self, store: &mut C::Store, _task: &mut (), _number: u64, _item: ()) -> Done {
        let store_error = |e: anyhow::Error| Problem::new("store error", crate::error::chain(&e));
        match &self.call {
            Call::LargeResult {
                table,
                large_result,
            } => {
                let t = Instant::now();
                let fetched = store.pool_large(*large_result).await;
                let timing = Timing::around(t, Instant::now());
                let outcome = match fetched {
                    Err(e) => Err(store_error(e)),
                    Ok(rows) if rows.len() != *large_result as usize => Err(Problem::new(
                        "wrong rows",
                        format!("fetched {} rows, not {large_result}", rows.len()),
                    )),
                    Ok(rows) => match rows.iter().zip(table.iter()).find(|(g, w)| g != w) {
                        Some((got, want)) => Err(Problem::new(
                            "wrong row",
                            format!("row {} differs: expected {want:?}, got {got:?}", want.id),
                        )),
                        None => Ok(()),
                    },
                };
                Done::timed(timing, outcome)
            }
            Call::Batch { batch } => {
                let t = Instant::now();
                let outcome = store.pool_batch_insert(batch).await;
                let timing = Timing::around(t, Instant::now());
                Done::timed(timing, outcome.map_err(store_error))
            }
        }
    }
}
