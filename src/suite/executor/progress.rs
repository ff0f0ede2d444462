//! A phase's progress while it runs: the tasks hand their operation counts and latencies
//! over when the ticker's thread asks (one relaxed load per operation), and the progress
//! bar and the status lines are drawn from what was handed over.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::measure::{self, Recorder};
use crate::report::format::human_us;
use crate::suite::Observer;

/// How often the progress bar moves.
pub(super) const TICK: Duration = Duration::from_millis(250);

/// How often a long phase says how far it is (a line where no progress bar is drawn).
const STATUS_EVERY: Duration = Duration::from_secs(10);

/// Progress and live latency, handed from the tasks to the phase's caller when it asks
/// (each tick), so that the tasks pay one relaxed load per operation for it.
pub(super) struct Live {
    /// Bumped at each tick; a task seeing a new value hands over its figures.
    tick: AtomicU64,
    /// The tick at which the latencies are wanted too.
    latency_wanted: AtomicU64,
    /// Operations done, per task, as of the task's last hand-over.
    done: Vec<AtomicU64>,
    /// Each task's latencies, as of the last time they were wanted.
    latencies: Mutex<Vec<Option<Histogram<u64>>>>,
}

impl Live {
    pub(super) fn new(tasks: usize) -> Self {
        Live {
            tick: AtomicU64::new(0),
            latency_wanted: AtomicU64::new(u64::MAX),
            done: (0..tasks).map(|_| AtomicU64::new(0)).collect(),
            latencies: Mutex::new(vec![None; tasks]),
        }
    }

    /// Operations done so far, as handed over.
    fn done(&self) -> u64 {
        self.done.iter().map(|d| d.load(Ordering::Relaxed)).sum()
    }

    /// The 99th percentile of the latencies handed over so far, in microseconds.
    fn p99(&self) -> f64 {
        let Ok(latencies) = self.latencies.lock() else {
            return 0.0;
        };
        let mut all = measure::new_histogram();
        for h in latencies.iter().flatten() {
            measure::uncounted(|| all.add(h).expect("histograms of one shape merge"));
        }
        measure::latency(&all).p99
    }

    /// Task `task` ended, having made `ops` operations.
    pub(super) fn finished(&self, task: usize, ops: u64) {
        self.done[task].store(ops, Ordering::Relaxed);
    }

    /// Task `task` hands over its figures if a tick came since `seen`.
    #[inline]
    pub(super) fn hand_over(&self, task: usize, seen: &mut u64, done: u64, recorder: &Recorder) {
        let now = self.tick.load(Ordering::Relaxed);
        if now == *seen {
            return;
        }
        *seen = now;
        self.done[task].store(done, Ordering::Relaxed);
        if self.latency_wanted.load(Ordering::Relaxed) == now
            && let Ok(mut latencies) = self.latencies.lock()
        {
            measure::uncounted(|| latencies[task] = Some(recorder.histogram.clone()));
        }
    }
}

/// The progress bar's moves and, every [`STATUS_EVERY`], a status line.
pub(super) struct Status {
    label: String,
    total: u64,
    /// Operations in each call a task makes.
    per_call: u64,
    last: (Instant, u64),
    /// The tick at which the live latencies were asked for, not yet shown.
    asked: Option<u64>,
    ticks: u64,
}

impl Status {
    /// For the phase named `label`, of `total` operations, `per_call` of them in each
    /// call a task makes.
    pub(super) fn new(label: String, total: u64, per_call: u64) -> Self {
        Status {
            label,
            total,
            per_call,
            last: (Instant::now(), 0),
            asked: None,
            ticks: 0,
        }
    }

    /// One tick: the tasks are asked for their figures (handed over by the next tick).
    pub(super) fn tick(&mut self, live: &Live, observer: &mut dyn Observer) {
        let done = live.done() * self.per_call;
        observer.progress(done);
        if self.asked.is_some_and(|at| self.ticks >= at) {
            self.asked = None;
            let (at, before) = self.last;
            let seconds = at.elapsed().as_secs_f64();
            let rate = done.saturating_sub(before) as f64 / seconds;
            // No latency handed over yet (an open loop's first seconds): none said.
            let p99 = live.p99();
            let p99 = if p99 > 0.0 {
                format!(", p99 so far {} us", human_us(p99))
            } else {
                String::new()
            };
            observer.status(&format!(
                "{}: {done} of {} operations, {rate:.0} ops/s over the last {seconds:.0}s{p99}",
                self.label, self.total,
            ));
            self.last = (Instant::now(), done);
        } else if self.asked.is_none() && self.last.0.elapsed() >= STATUS_EVERY {
            self.asked = Some(self.ticks + 1);
            live.latency_wanted.store(self.ticks + 1, Ordering::Relaxed);
        }
        self.ticks += 1;
        live.tick.store(self.ticks, Ordering::Relaxed);
    }
}
