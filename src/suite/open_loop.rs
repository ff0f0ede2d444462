//! Open-loop pacing: operation `i` is due at `start + i / rate`, whatever happened before
//! it. Each operation's response time is measured from when it was due, not from when the
//! client got round to it, so a stall is charged to every operation queued behind it
//! (coordinated omission corrected), and the report says how far the client fell behind.

use std::time::Duration;

use hdrhistogram::Histogram;
use tokio::time::Instant;

use crate::measure;

/// The schedule of one task and what it measured.
#[derive(Debug, Clone)]
pub struct Pacer {
    start: Instant,
    rate: f64,
    response: Histogram<u64>,
    max_behind: Duration,
}

impl Pacer {
    /// Operations at `rate` per second from `start`.
    pub fn new(rate: f64, start: Instant) -> Self {
        Pacer {
            start,
            rate,
            response: measure::new_histogram(),
            max_behind: Duration::ZERO,
        }
    }

    /// When operation `i` is due.
    pub fn due(&self, i: u64) -> Instant {
        self.start + Duration::from_secs_f64(i as f64 / self.rate)
    }

    /// Waits until operation `i` is due (at once if it is late); returns when it was due.
    pub async fn wait_turn(&self, i: u64) -> Instant {
        let due = self.due(i);
        tokio::time::sleep_until(due).await;
        due
    }

    /// Records an operation that was due at `due`, started at `started`, ended at `ended`.
    pub fn finished(&mut self, due: Instant, started: Instant, ended: Instant) {
        measure::record(&mut self.response, ended.saturating_duration_since(due));
        self.max_behind = self.max_behind.max(started.saturating_duration_since(due));
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Response times (from when each operation was due), nanoseconds.
    pub fn response(&self) -> &Histogram<u64> {
        &self.response
    }

    /// The furthest an operation started behind its schedule.
    pub fn max_behind(&self) -> Duration {
        self.max_behind
    }

    /// Adds this task's schedule to its run's (started by the first task added).
    pub fn add_to(&self, run: &mut Option<measure::OpenLoopRun>) {
        let run = run.get_or_insert_with(|| measure::OpenLoopRun {
            rate: self.rate,
            response: measure::new_histogram(),
            max_behind: Duration::ZERO,
        });
        run.response
            .add(&self.response)
            .expect("histograms of one shape merge");
        run.max_behind = run.max_behind.max(self.max_behind);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 operations at 1,000/s, each served in 100 us, except operation 10 which stalls
    /// for 50 ms. A closed-loop timer sees one slow operation; the pacer charges the stall
    /// to the operations that were due while it lasted.
    #[tokio::test(start_paused = true)]
    async fn a_stall_is_charged_to_every_operation_behind_it() {
        let mut pacer = Pacer::new(1000.0, Instant::now());
        let mut service = measure::new_histogram();
        for i in 0..100u64 {
            let due = pacer.wait_turn(i).await;
            let started = Instant::now();
            let work = if i == 10 {
                Duration::from_millis(50)
            } else {
                Duration::from_micros(100)
            };
            tokio::time::sleep(work).await;
            let ended = Instant::now();
            measure::record(&mut service, ended - started);
            pacer.finished(due, started, ended);
        }
        let slow = |h: &Histogram<u64>| h.count_between(10_000_000, u64::MAX);
        assert_eq!(slow(&service), 1, "service time sees the stall once");
        // Operations 10..=59 were due while operation 10 stalled (50 ms at 1 per ms); the
        // ones due in its first 40 ms answered at least 10 ms late.
        assert!(slow(pacer.response()) >= 40, "{}", slow(pacer.response()));
        assert!(
            pacer.max_behind() >= Duration::from_millis(49),
            "{:?}",
            pacer.max_behind()
        );
        assert!(
            pacer.max_behind() <= Duration::from_millis(51),
            "{:?}",
            pacer.max_behind()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_operation_waits_for_its_turn() {
        let start = Instant::now();
        let pacer = Pacer::new(200.0, start);
        let due = pacer.wait_turn(3).await;
        assert_eq!(due - start, Duration::from_millis(15));
        assert!(Instant::now() >= due);
    }
}
