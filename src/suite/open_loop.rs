//! Open-loop pacing: operation `i` is due at `start + i / rate`, whatever happened before
//! it. Each operation's response time is measured from when it was due, not from when the
//! client got round to it, so a stall is charged to every operation queued behind it
//! (coordinated omission corrected), and the report says how far the client fell behind.
//!
//! An operation is woken at its time by a timer of the kernel's (a timerfd on the task's
//! event loop), not by tokio's: tokio's timers fire on whole milliseconds, which at 5,000
//! operations a second started each one up to a millisecond late and charged that to the
//! store's response time (a Redis answering in 35 us read 1.2 ms at p50).

use std::io;
use std::os::fd::OwnedFd;
use std::time::Duration;

use hdrhistogram::Histogram;
use rustix::time::{
    Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec, timerfd_create,
    timerfd_settime,
};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::time::Instant;

use crate::measure;

/// The schedule of one task and what it measured.
#[derive(Debug)]
pub struct Pacer {
    start: Instant,
    rate: f64,
    response: Histogram<u64>,
    max_behind: Duration,
    /// Made on the task's own event loop, at its first wait.
    timer: Option<Timer>,
}

impl Pacer {
    /// Operations at `rate` per second from `start`.
    pub fn new(rate: f64, start: Instant) -> Self {
        Pacer {
            start,
            rate,
            response: measure::new_histogram(),
            max_behind: Duration::ZERO,
            timer: None,
        }
    }

    /// When operation `i` is due.
    pub fn due(&self, i: u64) -> Instant {
        self.start + Duration::from_secs_f64(i as f64 / self.rate)
    }

    /// Waits until operation `i` is due (at once if it is late); returns when it was due.
    /// Fails only when the kernel gives no timer (no file descriptor left).
    pub async fn wait_turn(&mut self, i: u64) -> io::Result<Instant> {
        let due = self.due(i);
        let now = Instant::now();
        if due > now {
            let timer = match &mut self.timer {
                Some(t) => t,
                None => self.timer.insert(Timer::new()?),
            };
            timer.sleep(due - now).await?;
        }
        Ok(due)
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

/// A one-shot timer of the kernel's, armed for each wait, read on the event loop it was
/// made on.
#[derive(Debug)]
struct Timer(AsyncFd<OwnedFd>);

impl Timer {
    fn new() -> io::Result<Self> {
        let flags = TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC;
        let fd = timerfd_create(TimerfdClockId::Monotonic, flags)?;
        // SAFETY: the OwnedFd is open, owned by the AsyncFd and never replaced.
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }?;
        Ok(Timer(fd))
    }

    /// Sleeps for `d` (more than zero: a zero time disarms the timer).
    async fn sleep(&self, d: Duration) -> io::Result<()> {
        let when = Itimerspec {
            it_interval: Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: Timespec {
                tv_sec: d.as_secs().try_into().unwrap_or(i64::MAX),
                tv_nsec: d.subsec_nanos().into(),
            },
        };
        timerfd_settime(self.0.get_ref(), TimerfdTimerFlags::empty(), &when)?;
        loop {
            let mut ready = self.0.readable().await?;
            let mut expirations = [0u8; 8];
            match ready.try_io(|fd| Ok(rustix::io::read(fd.get_ref(), &mut expirations)?)) {
                Ok(read) => return read.map(drop),
                Err(_would_block) => continue,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 operations at 1,000/s, each served in 100 us, except operation 10 which stalls
    /// for 50 ms. A closed-loop timer sees one slow operation; the pacer charges the stall
    /// to the operations that were due while it lasted.
    #[tokio::test]
    async fn a_stall_is_charged_to_every_operation_behind_it() {
        let mut pacer = Pacer::new(1000.0, Instant::now());
        let mut service = measure::new_histogram();
        for i in 0..100u64 {
            let due = pacer.wait_turn(i).await.unwrap();
            let started = Instant::now();
            let work = if i == 10 {
                Duration::from_millis(50)
            } else {
                Duration::from_micros(100)
            };
            std::thread::sleep(work);
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
        // The stall's 50 ms and the timer's lateness, not a schedule lost track of.
        assert!(
            pacer.max_behind() <= Duration::from_millis(80),
            "{:?}",
            pacer.max_behind()
        );
    }

    #[tokio::test]
    async fn an_operation_waits_for_its_turn() {
        let start = Instant::now();
        let mut pacer = Pacer::new(200.0, start);
        let due = pacer.wait_turn(3).await.unwrap();
        assert_eq!(due - start, Duration::from_millis(15));
        assert!(Instant::now() >= due);
        // One already late goes at once.
        let late = pacer.wait_turn(0).await.unwrap();
        assert_eq!(late, start);
    }

    /// Operations due every 300 us, answered at once: the kernel's timer started 180 to
    /// 298 of 300 within 250 us of their time (2 cores, three other busy processes or
    /// none), where tokio's timer, which fires on whole milliseconds, started 59 (p50 673
    /// us).
    #[tokio::test]
    async fn operations_start_on_time_not_on_the_next_millisecond() {
        let mut pacer = Pacer::new(1e6 / 300.0, Instant::now());
        for i in 0..300u64 {
            let due = pacer.wait_turn(i).await.unwrap();
            let now = Instant::now();
            pacer.finished(due, now, now);
        }
        let on_time = pacer.response().count_between(0, 250_000);
        assert!(
            on_time >= 100,
            "{on_time} of 300 operations started within 250 us of their time; p50 {} us",
            pacer.response().value_at_quantile(0.5) / 1000
        );
    }
}
