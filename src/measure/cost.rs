//! What a phase run cost the server: what is read for a store ([`Watch`]), the reading
//! around one run ([`Watching`], begun before the phase's clocks start and ended after they
//! stop, so it costs the measured operations nothing), and how the runs of a phase become
//! its [`ServerCost`] per operation.

use std::collections::BTreeMap;
use std::time::Duration;

use super::processes::{Processes, SAMPLE_EVERY, Sample, Sampler, Usage, clock_tick, own_io};
use crate::counters;
use crate::report::model::{CostSource, RunFigures, ServerCost, ServerPoint};
use crate::report::stats::Spread;

/// What is read of a store's server around each phase.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Watch {
    /// A throw-away server's process tree.
    Processes(Processes),
    /// An embedded store: the client's own process's bytes to and from storage.
    ClientProcess,
    /// A server given by URL: only its own counters (see `Store::counters`).
    #[default]
    ServerCounters,
}

/// A reading begun at a phase run's start.
pub enum Watching {
    Processes(Sampler),
    ClientProcess(Usage),
    ServerCounters,
    /// The server could not be read (said once, as a warning): its figures are n/a.
    Unread,
}

/// What a phase run cost the server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerRun {
    pub source: CostSource,
    /// What was spent over the run (absent from a server given by URL).
    pub spent: Option<Usage>,
    pub peak_memory_bytes: Option<u64>,
    pub end_memory_bytes: Option<u64>,
    /// The server's readings during the run.
    pub samples: Vec<Sample>,
    /// The CPU time the readings during the run cost the client's process.
    pub reading_cpu: Duration,
}

impl Watch {
    /// Begins a reading; a server that cannot be read is a warning and n/a, not a failure
    /// of the phase.
    pub fn begin(&self) -> Watching {
        let read = match self {
            Watch::Processes(p) => Sampler::start(p.clone(), SAMPLE_EVERY).map(Watching::Processes),
            Watch::ClientProcess => own_io().map(Watching::ClientProcess),
            Watch::ServerCounters => Ok(Watching::ServerCounters),
        };
        read.unwrap_or_else(|e| {
            crate::output::errln!("warning: the server's cost is not measured: {e:#}");
            Watching::Unread
        })
    }
}

impl Watching {
    /// Ends the reading at the run's end.
    pub fn end(self) -> Option<ServerRun> {
        let none = |source| ServerRun {
            source,
            spent: None,
            peak_memory_bytes: None,
            end_memory_bytes: None,
            samples: Vec::new(),
            reading_cpu: Duration::ZERO,
        };
        match self {
            Watching::Processes(sampler) => match sampler.finish() {
                Ok(w) => Some(ServerRun {
                    source: CostSource::Processes,
                    spent: Some(w.spent()),
                    peak_memory_bytes: Some(w.peak_memory_bytes),
                    end_memory_bytes: Some(w.end.memory_bytes),
                    samples: w.samples,
                    reading_cpu: w.reading_cpu,
                }),
                Err(e) => {
                    crate::output::errln!("warning: the server's cost is not measured: {e:#}");
                    None
                }
            },
            Watching::ClientProcess(start) => match own_io() {
                Ok(end) => Some(ServerRun {
                    spent: Some(end.since(&start)),
                    ..none(CostSource::ClientProcess)
                }),
                Err(e) => {
                    crate::output::errln!(
                        "warning: the store's bytes to storage are not measured: {e:#}"
                    );
                    None
                }
            },
            Watching::ServerCounters => Some(none(CostSource::ServerCounters)),
            Watching::Unread => None,
        }
    }
}

impl ServerRun {
    /// Adds the server's figures per operation to a run's, and takes the readings' own CPU
    /// time off the client's.
    pub fn apply(&self, figures: &mut RunFigures, ops: u64) {
        if ops == 0 {
            return;
        }
        let per_op = |v: f64| v / ops as f64;
        figures.cpu_us_per_op =
            (figures.cpu_us_per_op - per_op(self.reading_cpu.as_secs_f64() * 1e6)).max(0.0);
        if let Some(spent) = &self.spent {
            if self.source == CostSource::Processes && spent.cpu() >= clock_tick() * MIN_CPU_TICKS {
                figures.server_cpu_us_per_op = Some(per_op(spent.cpu().as_secs_f64() * 1e6));
            }
            figures.write_bytes_per_op = Some(per_op(spent.write_bytes as f64));
        }
    }

    /// The server's CPU and memory over the run, a point per reading.
    fn points(&self) -> Vec<ServerPoint> {
        let mut before = (Duration::ZERO, Duration::ZERO);
        self.samples
            .iter()
            .map(|s| {
                let span = s.at.saturating_sub(before.0).as_secs_f64();
                let busy = s.cpu.saturating_sub(before.1).as_secs_f64();
                before = (s.at, s.cpu);
                ServerPoint {
                    t_ms: s.at.as_secs_f64() * 1e3,
                    cpu_cores: if span > 0.0 { busy / span } else { 0.0 },
                    memory_bytes: s.memory_bytes,
                }
            })
            .collect()
    }
}

/// The clock ticks a server must have spent over every run of a phase for its CPU time read
/// from /proc to be given: /proc counts in whole ticks (10 ms), so a run under ten would be
/// off by more than a tenth for each busy process (a phase of 100 inserts on Redis read 0).
/// Under it the figure is n/a.
pub const MIN_CPU_TICKS: u32 = 10;

/// The server's cost of a phase from its measured runs (`(ops, server run)` each, and
/// what the server's counters rose by over all of them); `None` when no run was read.
pub fn server_cost(
    runs: &[(u64, Option<&ServerRun>)],
    counters: &BTreeMap<String, u64>,
    logical_bytes: Option<u64>,
) -> Option<ServerCost> {
    let read: Vec<(u64, &ServerRun)> = runs
        .iter()
        .filter_map(|(ops, r)| Some((*ops, (*r)?)))
        .filter(|(ops, _)| *ops > 0)
        .collect();
    let (_, first) = read.first()?;
    let all_ops: u64 = runs.iter().map(|(ops, _)| ops).sum();
    let median = |f: &dyn Fn(&Usage) -> f64| -> Option<f64> {
        let values: Vec<f64> = read
            .iter()
            .filter_map(|(ops, r)| Some(f(r.spent.as_ref()?) / *ops as f64))
            .collect();
        (values.len() == read.len())
            .then(|| Spread::of(&values).map(|s| s.median))
            .flatten()
    };
    // CPU time from /proc, where every run spent enough of it to be told.
    let resolved = first.source == CostSource::Processes
        && read.iter().all(|(_, r)| {
            r.spent
                .as_ref()
                .is_some_and(|u| u.cpu() >= clock_tick() * MIN_CPU_TICKS)
        });
    let cpu = |f: fn(&Usage) -> Duration| {
        resolved
            .then(|| median(&|u| f(u).as_secs_f64() * 1e6))
            .flatten()
    };
    let write_bytes_per_op = median(&|u| u.write_bytes as f64);
    let per_op = |n: u64| n as f64 / all_ops.max(1) as f64;
    // What the server counted of a figure, per operation (a server given by URL has no
    // other source).
    let counted = |figure: &str| -> Option<f64> {
        counters
            .iter()
            .filter(|(name, _)| counters::figure_of(name) == figure)
            .map(|(_, n)| *n)
            .reduce(|a, b| a + b)
            .map(per_op)
    };
    let write_bytes_per_op = write_bytes_per_op.or_else(|| counted(counters::BYTES_WRITTEN));
    // The server's own count of its CPU time where /proc is not read (a server given by
    // URL); a figure from /proc too short to tell is n/a, not another source's under the
    // processes' label.
    let counted_cpu = |figure: &str| {
        (first.source != CostSource::Processes)
            .then(|| counted(figure))
            .flatten()
    };
    Some(ServerCost {
        source: first.source,
        cpu_user_us_per_op: cpu(|u| u.user).or_else(|| counted_cpu(counters::CPU_USER_US)),
        cpu_system_us_per_op: cpu(|u| u.system).or_else(|| counted_cpu(counters::CPU_SYSTEM_US)),
        read_bytes_per_op: median(&|u| u.read_bytes as f64)
            .or_else(|| counted(counters::BYTES_READ)),
        write_bytes_per_op,
        peak_memory_bytes: read.iter().filter_map(|(_, r)| r.peak_memory_bytes).max(),
        end_memory_bytes: read.last().and_then(|(_, r)| r.end_memory_bytes),
        logical_bytes,
        write_amplification: match (write_bytes_per_op, logical_bytes, read.first()) {
            (Some(w), Some(l), Some((ops, _))) if l > 0 => Some(w * *ops as f64 / l as f64),
            _ => None,
        },
        syncs_per_op: counted(counters::SYNCS),
        reported_per_op: counters
            .iter()
            .map(|(n, v)| (n.clone(), per_op(*v)))
            .collect(),
        series: read
            .iter()
            .map(|(_, r)| r.points())
            .filter(|p| !p.is_empty())
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run's figures with 50 us of client CPU per operation and no server figures yet.
    fn figures() -> RunFigures {
        RunFigures {
            wall_ms: 1.0,
            ops_per_s: 1.0,
            cpu_us_per_op: 50.0,
            allocs_per_op: None,
            bytes_per_op: None,
            p50_us: 1.0,
            p99_us: 1.0,
            response_p50_us: None,
            response_p99_us: None,
            server_cpu_us_per_op: None,
            write_bytes_per_op: None,
        }
    }

    fn run(cpu_ms: u64, written: u64) -> ServerRun {
        ServerRun {
            source: CostSource::Processes,
            spent: Some(Usage {
                user: Duration::from_millis(cpu_ms),
                system: Duration::from_millis(cpu_ms / 2),
                write_bytes: written,
                ..Usage::default()
            }),
            peak_memory_bytes: Some(cpu_ms * 1000),
            end_memory_bytes: Some(5),
            samples: vec![
                Sample {
                    at: Duration::from_millis(500),
                    cpu: Duration::from_millis(250),
                    memory_bytes: 7,
                },
                Sample {
                    at: Duration::from_millis(1000),
                    cpu: Duration::from_millis(1000),
                    memory_bytes: 9,
                },
            ],
            reading_cpu: Duration::from_millis(1),
        }
    }

    #[test]
    fn runs_become_medians_per_operation_and_the_largest_peak() {
        let (a, b, c) = (run(100, 1000), run(300, 3000), run(200, 2000));
        let runs = [(100, Some(&a)), (100, Some(&b)), (100, Some(&c))];
        let counters = BTreeMap::from([("syncs (test)".to_string(), 30)]);
        let cost = server_cost(&runs, &counters, Some(500)).unwrap();
        assert_eq!(cost.cpu_user_us_per_op, Some(2000.0));
        assert_eq!(cost.cpu_system_us_per_op, Some(1000.0));
        assert_eq!(cost.cpu_us_per_op(), Some(3000.0));
        assert_eq!(cost.write_bytes_per_op, Some(20.0));
        // 20 bytes per operation, 100 operations, over 500 logical bytes.
        assert_eq!(cost.write_amplification, Some(4.0));
        assert_eq!(cost.peak_memory_bytes, Some(300_000));
        assert_eq!(cost.syncs_per_op, Some(0.1));
        assert_eq!(cost.series.len(), 3);
        let points = &cost.series[0];
        assert_eq!(points[0].cpu_cores, 0.5);
        assert_eq!(points[1].cpu_cores, 1.5);
    }

    #[test]
    fn cpu_under_ten_clock_ticks_is_not_given() {
        let tick_ms = clock_tick().as_millis() as u64;
        // 9 ticks in all (6 user, 3 system) in one run: /proc cannot tell it closely enough.
        let (short, long) = (run(6 * tick_ms, 10), run(20 * tick_ms, 10));
        let runs = [(100, Some(&long)), (100, Some(&short))];
        let cost = server_cost(&runs, &BTreeMap::new(), None).unwrap();
        assert_eq!(cost.cpu_us_per_op(), None);
        assert_eq!(
            cost.write_bytes_per_op,
            Some(0.1),
            "the rest is still given"
        );
        let counted = BTreeMap::from([
            ("cpu user us (INFO used_cpu_user)".to_string(), 3000),
            ("cpu system us (INFO used_cpu_sys)".to_string(), 1000),
        ]);
        let cost = server_cost(&runs, &counted, None).unwrap();
        assert_eq!(
            cost.cpu_us_per_op(),
            None,
            "nor the server's own count under the processes' label"
        );
        let cost = server_cost(&[(100, Some(&long))], &BTreeMap::new(), None).unwrap();
        assert_eq!(cost.cpu_us_per_op(), Some(30.0 * tick_ms as f64 * 10.0));
        let mut figures = figures();
        short.apply(&mut figures, 100);
        assert_eq!(figures.server_cpu_us_per_op, None);
        long.apply(&mut figures, 100);
        assert_eq!(figures.server_cpu_us_per_op, Some(300.0 * tick_ms as f64));
    }

    #[test]
    fn a_server_given_by_url_has_what_it_counted_itself() {
        let url = ServerRun {
            source: CostSource::ServerCounters,
            spent: None,
            peak_memory_bytes: None,
            end_memory_bytes: None,
            samples: Vec::new(),
            reading_cpu: Duration::ZERO,
        };
        let counted = BTreeMap::from([
            ("cpu user us (INFO used_cpu_user)".to_string(), 300),
            ("cpu system us (INFO used_cpu_sys)".to_string(), 100),
            ("bytes written (Innodb_data_written)".to_string(), 4000),
        ]);
        let cost = server_cost(&[(10, Some(&url)), (10, Some(&url))], &counted, Some(400)).unwrap();
        assert_eq!(cost.cpu_us_per_op(), Some(20.0));
        assert_eq!(cost.write_bytes_per_op, Some(200.0));
        assert_eq!(cost.write_amplification, Some(5.0));
        assert_eq!(cost.syncs_per_op, None);
        assert_eq!(cost.read_bytes_per_op, None);
    }

    #[test]
    fn a_server_given_by_url_has_no_cpu_and_a_missing_run_leaves_nothing_made_up() {
        let url = ServerRun {
            source: CostSource::ServerCounters,
            spent: None,
            peak_memory_bytes: None,
            end_memory_bytes: None,
            samples: Vec::new(),
            reading_cpu: Duration::ZERO,
        };
        let cost = server_cost(&[(10, Some(&url))], &BTreeMap::new(), None).unwrap();
        assert_eq!(cost.cpu_us_per_op(), None);
        assert_eq!(cost.write_bytes_per_op, None);
        assert_eq!(cost.syncs_per_op, None);
        assert!(server_cost(&[(10, None)], &BTreeMap::new(), None).is_none());
    }

    #[test]
    fn the_readings_cpu_is_taken_off_the_clients() {
        let mut figures = figures();
        run(100, 1000).apply(&mut figures, 100);
        assert_eq!(figures.cpu_us_per_op, 40.0);
        assert_eq!(figures.server_cpu_us_per_op, Some(1500.0));
        assert_eq!(figures.write_bytes_per_op, Some(10.0));
    }
}
