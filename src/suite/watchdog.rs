//! The stall watchdog. A store that stops answering in the middle of an operation would
//! otherwise hold the run for ever: no timeout covers an operation (a timer per operation
//! costs client CPU on every one of them), and Ctrl-C asks the run to stop after the
//! current operation, which never ends. Every timed operation of every suite marks the
//! run alive (`liveness::alive`, called by `measure::record`), and so does every chunk of
//! an untimed bulk load (the pool suite's table); when nothing did for the stall
//! timeout, or for a few seconds after Ctrl-C, the store's run is abandoned: it fails with
//! a message saying so, the phases it finished are kept, and the next store runs.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use tokio::task::{AbortHandle, JoinHandle};

use crate::interrupt;
use crate::liveness::ALIVE;

/// How long an operation may still take once Ctrl-C asked the run to stop.
const AFTER_INTERRUPT: Duration = Duration::from_secs(3);

/// Why a run was abandoned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stall {
    /// No operation finished for this long.
    Silent(Duration),
    /// Ctrl-C was pressed and the current operation did not end.
    Interrupted,
}

/// Runs `work` (a store's whole suite), abandoning it when the store stalls: no operation
/// finished for `limit` (`None`: wait for ever, unless Ctrl-C was pressed).
pub async fn guard(limit: Option<Duration>, work: impl Future<Output = Result<()>>) -> Result<()> {
    guard_on(&ALIVE, limit, work).await
}

/// [`guard`] watching the flag `alive`. The watching is done by a thread of its own, which
/// tells the run's event loop only when the run stalled: a timer on the event loop would
/// make every wait for an answer a timed one, which cost about 0.7 us of client CPU per
/// round trip on a virtual machine (a PostgreSQL client loop with and without one pending
/// timer, docs/lab/2026-12-03-event-loop-timer.md).
async fn guard_on(
    alive: &'static AtomicBool,
    limit: Option<Duration>,
    work: impl Future<Output = Result<()>>,
) -> Result<()> {
    // A variant waiting for its turn is not stalled: the one whose turn it is may be.
    let waiting = super::turns::waiting();
    let (stalled, stall) = tokio::sync::oneshot::channel();
    // Dropped when the work ends, which ends the thread at once.
    let (_running, ended) = std::sync::mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("watchdog".to_string())
        .spawn(move || {
            if let Some(stall) = watch(alive, waiting.as_deref(), limit, &ended) {
                let _ = stalled.send(stall);
            }
        })
        .context("starting the stall watchdog's thread")?;
    tokio::select! {
        biased;
        outcome = work => outcome,
        Ok(stall) = stall => Err(match stall {
            Stall::Silent(silent) => anyhow!(
                "no operation finished for {}s: the store stopped answering, and its run was \
                 abandoned (--stall-timeout {}); the phases it finished before are kept",
                silent.as_secs(),
                limit.map_or(0, |l| l.as_secs())
            ),
            Stall::Interrupted => anyhow!(
                "interrupted: the current operation did not end within {}s, and was abandoned",
                AFTER_INTERRUPT.as_secs()
            ),
        }),
    }
}

/// Returns once the run stalled, or `None` once `ended` says the work ended. While
/// `waiting` is set, the run waits for its turn and counts as alive.
fn watch(
    alive: &AtomicBool,
    waiting: Option<&AtomicBool>,
    limit: Option<Duration>,
    ended: &Receiver<()>,
) -> Option<Stall> {
    let check = limit.map_or(Duration::from_secs(1), |l| {
        (l / 8).clamp(Duration::from_millis(50), Duration::from_secs(1))
    });
    alive.store(false, Ordering::Relaxed);
    let mut last = Instant::now();
    let mut interrupted_at: Option<Instant> = None;
    loop {
        if ended.recv_timeout(check) != Err(RecvTimeoutError::Timeout) {
            return None;
        }
        let turn_awaited = waiting.is_some_and(|w| w.load(Ordering::Relaxed));
        if alive.swap(false, Ordering::Relaxed) || turn_awaited {
            last = Instant::now();
        }
        let silent = last.elapsed();
        if limit.is_some_and(|l| silent >= l) {
            return Some(Stall::Silent(silent));
        }
        if interrupt::requested() {
            let since = *interrupted_at.get_or_insert_with(Instant::now);
            // Operations that still finish after Ctrl-C are the last ones of their tasks;
            // the run stops at the next check of its own.
            if since.elapsed() >= AFTER_INTERRUPT && silent >= AFTER_INTERRUPT {
                return Some(Stall::Interrupted);
            }
        }
    }
}

/// The tasks of a concurrent phase, aborted if the phase is dropped before they end: a
/// store abandoned by the watchdog must not go on sending operations during the next
/// store's run.
pub struct AbortOnDrop(Vec<AbortHandle>);

impl AbortOnDrop {
    pub fn new<T>(handles: &[JoinHandle<T>]) -> Self {
        AbortOnDrop(handles.iter().map(JoinHandle::abort_handle).collect())
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for handle in &self.0 {
            handle.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    // A flag of the test's own: other tests mark the process-wide one. Real time (the
    // watchdog is a thread), in tenths of a second.
    static FLAG: AtomicBool = AtomicBool::new(false);

    #[tokio::test]
    async fn a_stalled_run_is_abandoned_and_a_live_one_is_not() {
        let alive = || FLAG.store(true, Ordering::Relaxed);
        let limit = Some(Duration::from_millis(1_000));
        let tick = Duration::from_millis(100);

        // Operations every tenth of a second for 3 s, longer than the limit: never
        // abandoned, and the guard ends as soon as the work does.
        let busy = async {
            for _ in 0..30 {
                tokio::time::sleep(tick).await;
                alive();
            }
            Ok(())
        };
        let started = Instant::now();
        guard_on(&FLAG, limit, busy).await.unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "{:?}",
            started.elapsed()
        );

        // Ten operations, then an answer that never comes.
        let started = Instant::now();
        let stalls = async {
            for _ in 0..10 {
                tokio::time::sleep(tick).await;
                alive();
            }
            std::future::pending::<()>().await;
            Ok(())
        };
        let message = guard_on(&FLAG, limit, stalls)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("no operation finished for 1s"),
            "{message}"
        );
        assert!(message.contains("--stall-timeout 1"), "{message}");
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(2) && waited <= Duration::from_secs(5),
            "abandoned after {waited:?}"
        );

        // A failure of the work itself comes through unchanged.
        let fails = async { Err::<(), _>(anyhow!("wrong answer")) };
        assert_eq!(
            guard_on(&FLAG, limit, fails).await.unwrap_err().to_string(),
            "wrong answer"
        );
    }

    static TURNS_FLAG: AtomicBool = AtomicBool::new(false);

    /// A variant of `runs` runs that marks the run alive in each, and stalls in run
    /// `stall_in` if given.
    async fn variant(runs: u32, stall_in: Option<u32>) -> Result<()> {
        for run in 1..=runs {
            super::super::turns::next_run(|| format!("run {run}")).await;
            if stall_in == Some(run) {
                std::future::pending::<()>().await;
            }
            for _ in 0..3 {
                tokio::time::sleep(Duration::from_millis(50)).await;
                TURNS_FLAG.store(true, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    #[tokio::test]
    async fn a_variant_waiting_for_its_turn_is_not_abandoned_with_the_one_that_stalled() {
        use super::super::turns::{Turns, take_turns};
        let limit = Some(Duration::from_millis(1_000));
        let turns = Turns::new(2);
        let (stalled, waited) = tokio::join!(
            take_turns(
                Arc::clone(&turns),
                0,
                guard_on(&TURNS_FLAG, limit, variant(3, Some(2)))
            ),
            take_turns(
                Arc::clone(&turns),
                1,
                guard_on(&TURNS_FLAG, limit, variant(3, None))
            ),
        );
        let message = stalled.unwrap_err().to_string();
        assert!(message.contains("no operation finished"), "{message}");
        waited.unwrap();
        assert_eq!(
            turns.order_lines(),
            ["0 run 1", "1 run 1", "0 run 2", "1 run 2", "1 run 3"]
        );
    }
}
