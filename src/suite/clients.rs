//! The client side of a run: how connections to the store under test are opened, and the
//! event loops that drive them.
//!
//! One event loop (a current-thread runtime) per client thread, the first being the run's
//! own: connection `i` is opened on loop `i mod threads`, and every task that uses it runs
//! there. A connection's socket is registered with the loop it was opened on, and a driver's
//! background task (tokio-postgres's connection, the redis multiplexer) is spawned on it; so
//! an answer wakes the task waiting for it on the same thread, never across threads, and no
//! loop steals another's tasks (work stealing cost more client CPU per query than it gained
//! on a machine whose cores the server shares). A concurrency of 8 on 2 threads is 4
//! connections per loop.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::measure::cost::Watch;
use crate::store::Store;

/// How long closing a connection may take: the goodbye of a server that no longer answers
/// is given up after it (the connection is dropped all the same).
const CLOSE_LIMIT: Duration = Duration::from_secs(2);

/// Opens connections to the store under test.
pub trait Connect: Sync {
    type Store: Store + 'static;
    fn connect(&self) -> impl Future<Output = Result<Self::Store>> + Send;
}

impl<F, Fut, S> Connect for F
where
    F: Fn() -> Fut + Sync,
    Fut: Future<Output = Result<S>> + Send,
    S: Store + 'static,
{
    type Store = S;
    fn connect(&self) -> impl Future<Output = Result<S>> + Send {
        self()
    }
}

/// A connector and the client's event loops.
pub struct Clients<C> {
    connector: Arc<C>,
    loops: Vec<Handle>,
    /// The loops started here (all but the first); each ends when this is dropped.
    _threads: Vec<LoopThread>,
    /// What is read of the store's server around each phase.
    watch: Watch,
}

impl<C: Connect + Send + 'static> Clients<C> {
    /// `threads` event loops (at least one): the caller's own (this must be called inside a
    /// tokio runtime) and `threads - 1` new threads, each running one.
    pub fn start(connector: C, threads: usize) -> Result<Self> {
        let mut loops = vec![Handle::current()];
        let mut started = Vec::new();
        for index in 1..threads.max(1) {
            let (thread, handle) = LoopThread::start(index)?;
            started.push(thread);
            loops.push(handle);
        }
        Ok(Clients {
            connector: Arc::new(connector),
            loops,
            _threads: started,
            watch: Watch::default(),
        })
    }

    /// Reads `watch` of the store's server around each phase (by default, only the
    /// server's own counters).
    pub fn watching(mut self, watch: Watch) -> Self {
        self.watch = watch;
        self
    }

    /// What is read of the store's server around each phase.
    pub fn watch(&self) -> &Watch {
        &self.watch
    }

    /// How many event loops drive the connections.
    pub fn threads(&self) -> usize {
        self.loops.len()
    }

    /// Opens connections on the caller's loop (for work that stays on one loop).
    pub fn connector(&self) -> &C {
        &self.connector
    }

    /// The connector, for tasks that open connections on their own loop (a reconnect).
    pub fn shared_connector(&self) -> Arc<C> {
        Arc::clone(&self.connector)
    }

    /// Opens connection `index` (0-based) on its event loop.
    pub async fn open(&self, index: usize) -> Result<C::Store> {
        let connector = Arc::clone(&self.connector);
        self.spawn(index, async move { connector.connect().await })
            .await
            .map_err(|e| anyhow!("opening connection {} panicked: {e}", index + 1))?
            .with_context(|| format!("opening connection {}", index + 1))
    }

    /// Runs `task` on the event loop of connection `index`: the task must use no other
    /// connection than that one.
    pub fn spawn<F>(&self, index: usize, task: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.loops[index % self.loops.len()].spawn(task)
    }

    /// Closes `connections` (connection `i` being the one opened as `i`), each on its own
    /// event loop, so that a driver's goodbye goes out on the loop its socket belongs to,
    /// while that loop still runs; waits for all.
    pub async fn close(&self, connections: Vec<C::Store>) {
        let closing: Vec<_> = connections
            .into_iter()
            .enumerate()
            .map(|(i, store)| self.spawn(i, close(store)))
            .collect();
        for task in closing {
            let _ = task.await;
        }
    }
}

/// Closes `store` (see [`Store::close`]) on the caller's loop. A connection that fails to
/// close, or takes longer than `CLOSE_LIMIT`, is dropped: the figures are taken by then.
pub async fn close<S: Store>(store: S) {
    let _ = tokio::time::timeout(CLOSE_LIMIT, store.close()).await;
}

/// Closes `stores` at once, on the caller's loop.
pub async fn close_all<S: Store>(stores: impl IntoIterator<Item = S>) {
    futures::future::join_all(stores.into_iter().map(close)).await;
}

/// A thread running one event loop until it is dropped.
struct LoopThread {
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LoopThread {
    fn start(index: usize) -> Result<(LoopThread, Handle)> {
        let (handle_tx, handle_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("client-{index}"))
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = handle_tx.send(Err(e));
                        return;
                    }
                };
                let _ = handle_tx.send(Ok(runtime.handle().clone()));
                runtime.block_on(async {
                    let _ = stopped.await;
                });
            })
            .context("starting a client thread")?;
        let thread = LoopThread {
            stop: Some(stop),
            thread: Some(thread),
        };
        let handle = handle_rx
            .recv()
            .context("a client thread ended as it started")?
            .context("starting a client event loop")?;
        Ok((thread, handle))
    }
}

impl Drop for LoopThread {
    /// Ends the loop (tasks still on it are dropped there, with their connections) and
    /// waits for its thread.
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Raises this process's limit of open files to the most it may have: each connection is a
/// file, and an open loop's task has a timer too, where the usual soft limit is 1,024. A
/// limit that cannot be raised is left as it is (a run past it fails with the system's own
/// error, named).
pub fn raise_open_file_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write the struct given, nothing else.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Durability, StoreOptions};
    use crate::store::ConnectSpec;
    use crate::store::sqlite::SqliteStore;
    use std::sync::Mutex;
    use std::thread::ThreadId;

    /// Opens SQLite connections, noting the thread each was opened on.
    fn connector(
        dir: &std::path::Path,
        opened_on: Arc<Mutex<Vec<ThreadId>>>,
    ) -> impl Connect<Store = SqliteStore> + Send + 'static {
        let path = dir.join("clients.sqlite");
        move || {
            opened_on.lock().unwrap().push(std::thread::current().id());
            let spec = ConnectSpec {
                url: None,
                data_dir: None,
                durability: Durability::Relaxed,
                connect_timeout: std::time::Duration::from_secs(5),
                options: StoreOptions {
                    sqlite_path: Some(path.clone()),
                    ..Default::default()
                },
            };
            async move { SqliteStore::open(&spec) }
        }
    }

    #[tokio::test]
    async fn connection_i_is_opened_and_driven_on_loop_i_mod_threads() {
        let dir = tempfile::tempdir().unwrap();
        let opened_on = Arc::new(Mutex::new(Vec::new()));
        let clients = Clients::start(connector(dir.path(), Arc::clone(&opened_on)), 2).unwrap();
        assert_eq!(clients.threads(), 2);
        let mut ran_on = Vec::new();
        for i in 0..4 {
            let store = clients.open(i).await.unwrap();
            let thread = clients
                .spawn(i, async move {
                    drop(store);
                    std::thread::current().id()
                })
                .await
                .unwrap();
            ran_on.push(thread);
        }
        let here = std::thread::current().id();
        assert_eq!(*opened_on.lock().unwrap(), ran_on);
        assert_eq!(ran_on[0], here, "loop 0 is the caller's");
        assert_ne!(ran_on[1], here, "loop 1 is a thread of its own");
        assert_eq!(ran_on[2], ran_on[0]);
        assert_eq!(ran_on[3], ran_on[1]);
    }

    #[tokio::test]
    async fn one_thread_is_the_callers_loop_alone() {
        let dir = tempfile::tempdir().unwrap();
        let opened_on = Arc::new(Mutex::new(Vec::new()));
        let clients = Clients::start(connector(dir.path(), Arc::clone(&opened_on)), 1).unwrap();
        let here = std::thread::current().id();
        for i in 0..3 {
            let ran_on = clients
                .spawn(i, async { std::thread::current().id() })
                .await
                .unwrap();
            assert_eq!(ran_on, here);
        }
    }
}
