//! The pool suite, after the asyncmy benchmark suite (seed 003): the seed's `benchmark_data`
//! table (100,000 rows, indexes on user_id and created_at) loaded once, then Large Result
//! Set (about 33,000 rows, every column decoded into typed values), Concurrent Queries (50
//! SELECTs at once, each on its own new connection, connection setup included), Connection
//! Pool (2,000 queries over a pool of 5 to 20 connections) and Batch Insert (10,000 rows with
//! the store's batch path, named in the report). Every answer is checked.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use futures::stream::{FuturesUnordered, StreamExt};
use tokio::sync::Semaphore;

use super::Observer;
use super::clients::{self, Connect};
use crate::interrupt;
use crate::measure::{self, Meter, PhaseRun, Recorder};
use crate::report::model::{PhaseKind, StoreResult};
use crate::store::{PoolStore, Store};
use crate::workload::pool::{
    BenchRow, CONCURRENT, POOL_MAX, POOL_MIN, POOL_QUERIES, PoolSizes, PoolTest, rows,
};
use crate::workload::record::Size;

/// What the pool suite runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolPlan {
    pub seed: u64,
    pub warmup_runs: u32,
    pub runs: u32,
    /// Connections (Concurrent Queries) and workers (Connection Pool) at once: the seed's
    /// 50, or each `--concurrency` level.
    pub concurrency: Vec<u32>,
}

impl PoolPlan {
    /// The levels the concurrent tests run at: `--concurrency`, or the seed's 50 when it was
    /// left at its default of 1.
    pub fn levels(&self) -> Vec<usize> {
        if self.concurrency.is_empty() || self.concurrency == [1] {
            vec![CONCURRENT]
        } else {
            self.concurrency
                .iter()
                .map(|&c| c.max(1) as usize)
                .collect()
        }
    }
}

/// A tiny pool: up to `max` connections, `min` opened up front, handed out in turn.
struct Pool<S> {
    idle: Mutex<Vec<S>>,
    permits: Semaphore,
}

/// Runs the suite on a store (every test it has an operation for), filling `result`.
pub async fn run<C: Connect<Store: PoolStore>>(
    connector: &C,
    plan: &PoolPlan,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    run_sized(connector, plan, PoolSizes::SEED, result, observer).await
}

/// [`run`] at other sizes: the integration tests use small ones on an in-memory test server
/// whose inserts and lookups scan every document.
pub async fn run_sized<C: Connect<Store: PoolStore>>(
    connector: &C,
    plan: &PoolPlan,
    sizes: PoolSizes,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    if sizes.large_result > sizes.rows || sizes.rows == 0 || sizes.batch_rows == 0 {
        bail!("pool suite sizes out of range: {sizes:?}");
    }
    let mut main = connector.connect().await?;
    let outcome = run_tests(connector, &mut main, plan, sizes, result, observer).await;
    clients::close(main).await;
    outcome
}

/// [`run_sized`]'s tests, `main` being the connection that loads the table.
async fn run_tests<C: Connect<Store: PoolStore>>(
    connector: &C,
    main: &mut C::Store,
    plan: &PoolPlan,
    sizes: PoolSizes,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    main.reset().await?;
    result.info = Some(super::per_test_paths(main.describe().await?));
    observer.store_described(result);
    if main.pool_operation(PoolTest::LargeResultSet).is_none() {
        result
            .not_applicable
            .extend(PoolTest::ALL.map(|t| t.name().to_string()));
        for t in PoolTest::ALL {
            observer.not_applicable(t.name());
        }
        return Ok(());
    }
    let table = rows(plan.seed, sizes.rows, 1);
    main.pool_load(&table)
        .await
        .with_context(|| format!("loading benchmark_data ({} rows)", sizes.rows))?;
    let batch = rows(plan.seed ^ 0xba7c, sizes.batch_rows, 1);
    let total = plan.warmup_runs + plan.runs.max(1);
    for test in PoolTest::ALL {
        let Some(operation) = main.pool_operation(test) else {
            result.not_applicable.push(test.name().to_string());
            observer.not_applicable(test.name());
            continue;
        };
        let levels = match test {
            PoolTest::ConcurrentQueries | PoolTest::ConnectionPool => plan.levels(),
            _ => vec![1],
        };
        for level in levels {
            let mut runs = Vec::new();
            for rep in 0..total {
                if interrupt::requested() {
                    bail!("{}: interrupted", test.name());
                }
                let run = match test {
                    PoolTest::LargeResultSet => {
                        large_result_set(main, &table, sizes.large_result, observer).await
                    }
                    PoolTest::ConcurrentQueries => {
                        concurrent_queries(connector, &table, level, observer).await
                    }
                    PoolTest::ConnectionPool => {
                        connection_pool(connector, &table, rep, level, observer).await
                    }
                    PoolTest::BatchInsert => batch_insert(main, &batch, observer).await,
                }
                .with_context(|| test.name().to_string())?;
                observer.phase_finished(&measure::aggregate(std::slice::from_ref(&run)));
                if rep >= plan.warmup_runs {
                    runs.push(run);
                }
            }
            let mut phase = measure::aggregate(&runs);
            phase.operation = Some(operation.to_string());
            result.phases.push(phase);
            observer.phases_recorded(result);
        }
    }
    Ok(())
}

fn phase_run(
    test: PoolTest,
    ops: u64,
    concurrency: usize,
    recorder: Recorder,
    meter: Meter,
) -> PhaseRun {
    let (figures, alloc_sites) = meter.finish(ops, &recorder.histogram);
    PhaseRun {
        kind: PhaseKind::Pool,
        size: Size {
            name: test.name().to_string(),
            records: ops,
        },
        concurrency: concurrency as u32,
        ops,
        errors: BTreeMap::new(),
        incomplete: false,
        figures,
        histogram: recorder.histogram,
        series: recorder.series,
        open_loop: None,
        retries: 0,
        counters: BTreeMap::new(),
        alloc_sites,
    }
}

/// One query fetching `large_result` rows (the seed's `LARGE_RESULT`), every column decoded
/// and compared.
async fn large_result_set<S: PoolStore>(
    store: &mut S,
    table: &[BenchRow],
    large_result: u32,
    observer: &mut dyn Observer,
) -> Result<PhaseRun> {
    observer.phase_started(
        PhaseKind::Pool,
        &Size {
            name: PoolTest::LargeResultSet.name().into(),
            records: 1,
        },
        1,
    );
    let meter = Meter::start();
    let mut recorder = Recorder::new(meter.started());
    let t = Instant::now();
    let fetched = store.pool_large(large_result).await?;
    recorder.record(t, Instant::now());
    if fetched.len() != large_result as usize {
        bail!("fetched {} rows, not {large_result}", fetched.len());
    }
    if let Some((got, want)) = fetched.iter().zip(table).find(|(g, w)| g != w) {
        bail!("row {} differs: expected {want:?}, got {got:?}", want.id);
    }
    Ok(phase_run(PoolTest::LargeResultSet, 1, 1, recorder, meter))
}

fn check_row(table: &[BenchRow], id: i32, got: Option<BenchRow>) -> Result<()> {
    let want = &table[(id - 1) as usize];
    match got {
        Some(row) if row == *want => Ok(()),
        Some(row) => Err(anyhow!("row {id}: expected {want:?}, got {row:?}")),
        None => Err(anyhow!("row {id} is missing")),
    }
}

/// SELECTs at once (the seed's 50), each opening its own connection first; the connections
/// are closed after the timing.
async fn concurrent_queries<C: Connect<Store: PoolStore>>(
    connector: &C,
    table: &[BenchRow],
    connections: usize,
    observer: &mut dyn Observer,
) -> Result<PhaseRun> {
    observer.phase_started(
        PhaseKind::Pool,
        &Size {
            name: PoolTest::ConcurrentQueries.name().into(),
            records: connections as u64,
        },
        connections as u64,
    );
    let meter = Meter::start();
    let mut tasks: FuturesUnordered<_> = (0..connections)
        .map(|i| async move {
            let id = 1 + (i as i32 * 1_999) % table.len() as i32;
            let t = Instant::now();
            let mut store = connector.connect().await?;
            let got = store.pool_point(id).await?;
            let end = Instant::now();
            check_row(table, id, got)?;
            anyhow::Ok(((t, end), store))
        })
        .collect();
    let mut recorder = Recorder::new(meter.started());
    let mut opened = Vec::with_capacity(connections);
    let mut failure = None;
    while let Some(done) = tasks.next().await {
        match done {
            Ok(((start, end), store)) => {
                recorder.record(start, end);
                opened.push(store);
            }
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }
    let run = phase_run(
        PoolTest::ConcurrentQueries,
        connections as u64,
        connections,
        recorder,
        meter,
    );
    clients::close_all(opened).await;
    match failure {
        Some(e) => Err(e),
        None => Ok(run),
    }
}

/// 2,000 point SELECTs from `workers` tasks (the seed's 50) over a pool of 5 to 20
/// connections.
async fn connection_pool<C: Connect<Store: PoolStore>>(
    connector: &C,
    table: &[BenchRow],
    rep: u32,
    workers: usize,
    observer: &mut dyn Observer,
) -> Result<PhaseRun> {
    observer.phase_started(
        PhaseKind::Pool,
        &Size {
            name: PoolTest::ConnectionPool.name().into(),
            records: u64::from(POOL_QUERIES),
        },
        u64::from(POOL_QUERIES),
    );
    let meter = Meter::start();
    // The pool starts with its minimum, as a pool does, inside the timing.
    let mut idle = Vec::with_capacity(POOL_MAX);
    for _ in 0..POOL_MIN {
        idle.push(connector.connect().await?);
    }
    let pool = Pool {
        idle: Mutex::new(idle),
        permits: Semaphore::new(POOL_MAX),
    };
    let next = std::sync::atomic::AtomicU32::new(0);
    let tasks: FuturesUnordered<_> = (0..workers)
        .map(|_| async {
            let mut recorder = Recorder::new(meter.started());
            loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if n >= POOL_QUERIES {
                    return anyhow::Ok(recorder);
                }
                let id = 1 + ((n + rep * POOL_QUERIES) as i32 * 7_919) % table.len() as i32;
                let t = Instant::now();
                let _permit = pool
                    .permits
                    .acquire()
                    .await
                    .expect("the semaphore stays open");
                let taken = pool.idle.lock().expect("no panics under the lock").pop();
                let mut store = match taken {
                    Some(s) => s,
                    None => connector.connect().await?,
                };
                let got = store.pool_point(id).await;
                pool.idle
                    .lock()
                    .expect("no panics under the lock")
                    .push(store);
                recorder.record(t, Instant::now());
                check_row(table, id, got?)?;
            }
        })
        .collect();
    let mut recorder = Recorder::new(meter.started());
    let done: Vec<Result<_>> = tasks.collect().await;
    for r in done {
        recorder.add(&r?);
    }
    let run = phase_run(
        PoolTest::ConnectionPool,
        u64::from(POOL_QUERIES),
        workers,
        recorder,
        meter,
    );
    let idle = pool.idle.into_inner().expect("no panics under the lock");
    let opened = idle.len();
    clients::close_all(idle).await;
    if !(POOL_MIN..=POOL_MAX).contains(&opened) {
        bail!("the pool ended with {opened} connections, outside {POOL_MIN} to {POOL_MAX}");
    }
    Ok(run)
}

/// 10,000 rows into `benchmark_batch` with the store's batch path.
async fn batch_insert<S: PoolStore>(
    store: &mut S,
    batch: &[BenchRow],
    observer: &mut dyn Observer,
) -> Result<PhaseRun> {
    observer.phase_started(
        PhaseKind::Pool,
        &Size {
            name: PoolTest::BatchInsert.name().into(),
            records: batch.len() as u64,
        },
        batch.len() as u64,
    );
    store.pool_batch_reset().await?;
    let meter = Meter::start();
    let mut recorder = Recorder::new(meter.started());
    let t = Instant::now();
    store.pool_batch_insert(batch).await?;
    // One sample: the latency of the whole batch (ops counts its rows).
    recorder.record(t, Instant::now());
    let run = phase_run(
        PoolTest::BatchInsert,
        batch.len() as u64,
        1,
        recorder,
        meter,
    );
    let count = store.pool_batch_count().await?;
    if count != batch.len() as u64 {
        bail!(
            "benchmark_batch holds {count} rows after inserting {}",
            batch.len()
        );
    }
    Ok(run)
}
