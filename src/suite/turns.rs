//! Turns between the variants of one store, which run interleaved: run 1 of each, then
//! run 2 of each, so that the machine's drift falls on all of them alike. The runner runs
//! every variant's suite at once, each inside [`take_turns`]; one of them holds the turn at
//! a time, and a suite hands it on where a run of it starts ([`next_run`]), to the next
//! variant still running. Outside [`take_turns`] (a store without variants, the tests),
//! [`next_run`] does nothing.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

tokio::task_local! {
    static TURN: Arc<Turn>;
}

/// The turn shared by the variants of one store, and the order their runs were made in.
#[derive(Debug)]
pub struct Turns {
    state: Mutex<State>,
    changed: Notify,
}

#[derive(Debug)]
struct State {
    /// The variant whose turn it is.
    holder: usize,
    /// The variants whose suite has not ended.
    running: Vec<bool>,
    /// Every run started, in order: (variant, the run's label).
    order: Vec<(usize, String)>,
}

impl Turns {
    /// Turns for `variants` variants; the first one's turn first.
    pub fn new(variants: usize) -> Arc<Turns> {
        Arc::new(Turns {
            state: Mutex::new(State {
                holder: 0,
                running: vec![true; variants],
                order: Vec::new(),
            }),
            changed: Notify::new(),
        })
    }

    /// Every run started so far, in order: (variant, the run's label).
    pub fn order(&self) -> Vec<(usize, String)> {
        self.lock().order.clone()
    }

    /// The order as lines `VARIANT LABEL`, for tests.
    #[cfg(test)]
    pub(super) fn order_lines(&self) -> Vec<String> {
        self.order()
            .into_iter()
            .map(|(i, label)| format!("{i} {label}"))
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere leaves the state as it was: still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until it is `me`'s turn.
    async fn wait_for(&self, me: usize) {
        loop {
            // Made before the look, so that a change in between still wakes it.
            let changed = self.changed.notified();
            if self.lock().holder == me {
                return;
            }
            changed.await;
        }
    }

    /// Hands the turn from `me` to the next variant still running (back to `me` when
    /// there is none).
    fn pass(&self, me: usize) {
        let mut state = self.lock();
        let n = state.running.len();
        if let Some(next) = (1..=n)
            .map(|step| (me + step) % n)
            .find(|&i| state.running[i])
        {
            state.holder = next;
        }
        drop(state);
        self.changed.notify_waiters();
    }

    /// `me`'s suite ended: the turn goes on without it.
    fn leave(&self, me: usize) {
        let holder = {
            let mut state = self.lock();
            state.running[me] = false;
            state.holder
        };
        if holder == me {
            self.pass(me);
        }
    }
}

/// One variant's place in its [`Turns`].
#[derive(Debug)]
struct Turn {
    turns: Arc<Turns>,
    me: usize,
    /// Whether it started a run since it got the turn first.
    ran: AtomicBool,
    /// Whether it is waiting for its turn (the stall watchdog does not count that time).
    waiting: Arc<AtomicBool>,
}

/// Ends a variant's turns when its suite ends, however it ends (an abandoned suite too).
struct Leave(Arc<Turn>);

impl Drop for Leave {
    fn drop(&mut self) {
        self.0.turns.leave(self.0.me);
    }
}

/// Runs variant `me`'s `suite` in its turns: it starts when its turn comes, and hands the
/// turn on at each run's start after its first ([`next_run`]) and when it ends.
pub async fn take_turns<F: Future>(turns: Arc<Turns>, me: usize, suite: F) -> F::Output {
    let turn = Arc::new(Turn {
        turns,
        me,
        ran: AtomicBool::new(false),
        waiting: Arc::new(AtomicBool::new(false)),
    });
    let _leave = Leave(Arc::clone(&turn));
    turn.turns.wait_for(me).await;
    TURN.scope(turn, suite).await
}

/// A run of the suite (`label`) starts: inside [`take_turns`], after the variant's first
/// run, the turn goes to the next variant first, and comes back; the run is written down in
/// the order. Elsewhere, nothing.
pub async fn next_run(label: impl FnOnce() -> String) {
    let Ok(turn) = TURN.try_with(Arc::clone) else {
        return;
    };
    if turn.ran.swap(true, Ordering::Relaxed) {
        turn.waiting.store(true, Ordering::Relaxed);
        turn.turns.pass(turn.me);
        turn.turns.wait_for(turn.me).await;
        turn.waiting.store(false, Ordering::Relaxed);
    }
    turn.turns.lock().order.push((turn.me, label()));
}

/// Inside [`take_turns`], the flag that says whether this variant is waiting for its turn;
/// elsewhere `None`.
pub fn waiting() -> Option<Arc<AtomicBool>> {
    TURN.try_with(|turn| Arc::clone(&turn.waiting)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A suite of `runs` runs that notes each one where all can see it.
    async fn suite(name: &'static str, runs: u32, log: Arc<Mutex<Vec<String>>>) {
        for run in 1..=runs {
            next_run(|| format!("run {run}")).await;
            log.lock().unwrap().push(format!("{name} {run}"));
            // Another variant could run here if the turn were not held.
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn variants_take_their_runs_in_turn() {
        let turns = Turns::new(3);
        let log = Arc::new(Mutex::new(Vec::new()));
        tokio::join!(
            take_turns(Arc::clone(&turns), 0, suite("a", 3, Arc::clone(&log))),
            take_turns(Arc::clone(&turns), 1, suite("b", 1, Arc::clone(&log))),
            take_turns(Arc::clone(&turns), 2, suite("c", 3, Arc::clone(&log))),
        );
        let log = log.lock().unwrap().clone();
        assert_eq!(log, ["a 1", "b 1", "c 1", "a 2", "c 2", "a 3", "c 3"]);
        assert_eq!(
            turns.order_lines(),
            [
                "0 run 1", "1 run 1", "2 run 1", "0 run 2", "2 run 2", "0 run 3", "2 run 3"
            ]
        );
    }

    #[tokio::test]
    async fn outside_turns_a_run_starts_at_once() {
        let log = Arc::new(Mutex::new(Vec::new()));
        suite("alone", 2, Arc::clone(&log)).await;
        assert_eq!(log.lock().unwrap().len(), 2);
    }
}
