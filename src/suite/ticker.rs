//! A tick from a thread of its own, for a phase's progress: the run's event loop is woken
//! at each tick, and waits for its stores' answers without a timer in between. A tokio
//! interval on that loop would make every wait for an answer a timed one, about 0.7 us of
//! client CPU per round trip on a virtual machine (see `watchdog`, which watches from a
//! thread for the same reason).

use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::mpsc;

/// Ticks every `every` until dropped; a tick not yet taken is not doubled.
pub struct Ticker {
    ticks: mpsc::Receiver<()>,
    /// Dropped first when the ticker is, which wakes its thread to end at once.
    running: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Ticker {
    pub fn start(every: Duration) -> Result<Ticker> {
        let (tick, ticks) = mpsc::channel(1);
        let (running, ended) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("ticker".to_string())
            .spawn(move || {
                while ended.recv_timeout(every) == Err(RecvTimeoutError::Timeout) {
                    if let Err(mpsc::error::TrySendError::Closed(())) = tick.try_send(()) {
                        break;
                    }
                }
            })
            .context("starting the progress ticker's thread")?;
        Ok(Ticker {
            ticks,
            running: Some(running),
            thread: Some(thread),
        })
    }

    /// The next tick.
    pub async fn tick(&mut self) {
        // The sender lives as long as the thread, which lives as long as `self`.
        let _ = self.ticks.recv().await;
    }
}

impl Drop for Ticker {
    /// Ends the thread: its wait returns as soon as the sender is gone.
    fn drop(&mut self) {
        self.running.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[tokio::test]
    async fn ticks_at_its_pace() {
        let started = Instant::now();
        let mut ticker = Ticker::start(Duration::from_millis(20)).unwrap();
        for _ in 0..3 {
            ticker.tick().await;
        }
        // Three ticks 20 ms apart take at least 60 ms (an upper bound would time the machine).
        assert!(started.elapsed() >= Duration::from_millis(60));
    }

    #[test]
    fn dropping_it_ends_its_thread_without_waiting_for_a_tick() {
        let ticker = Ticker::start(Duration::from_secs(600)).unwrap();
        let dropped = Instant::now();
        drop(ticker);
        // Joined in drop: waiting for the thread's next tick would take ten minutes.
        assert!(dropped.elapsed() < Duration::from_secs(60));
    }
}
