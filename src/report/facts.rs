//! What the run was and where it ran, a line each (heading results.md and report.html),
//! and the per-phase notes outside the tables: client-bound phases, the stores' own
//! counters and a merged run's load clients.

use std::fmt::Write;

use super::format::human_size;
use super::lines::floor_line;
use super::model::{PhaseKind, Report, StoreResult};
use crate::catalog::Suite;
use crate::workload::levels::Concurrency;

/// The client's threads (one event loop each) the run's stores ran on, and whether every
/// store ran on as many: `2` then, else `2 for postgres, mysql; 1 for redis`; from the plan
/// in reports before each store recorded its own. `None` when nothing recorded them.
pub fn client_threads(report: &Report) -> Option<(String, bool)> {
    let mut groups: Vec<(u32, Vec<&str>)> = Vec::new();
    for s in &report.stores {
        let Some(n) = s.client_threads else { continue };
        match groups.iter_mut().find(|(m, _)| *m == n) {
            Some((_, names)) => names.push(&s.store),
            None => groups.push((n, vec![&s.store])),
        }
    }
    match groups.as_slice() {
        [] => report.plan.client_threads.map(|n| (n.to_string(), true)),
        [(n, _)] => Some((n.to_string(), true)),
        _ => {
            let each: Vec<String> = groups
                .iter()
                .map(|(n, names)| format!("{n} for {}", names.join(", ")))
                .collect();
            Some((each.join("; "), false))
        }
    }
}

/// What the run was and where it ran, a line each (with markdown code spans): shared by
/// results.md and report.html.
pub fn run_facts(report: &Report) -> Vec<String> {
    let p = &report.plan;
    let m = &report.machine;
    let sizes: Vec<String> = p
        .sizes
        .iter()
        .map(|s| format!("{} ({})", s.name, s.records))
        .collect();
    let mut facts = vec![format!(
        "run: {} {}, suite `{}`, stores {}, {}seed {}, durability mode `{}`, {} warm-up and {} measured runs (figures are medians), concurrency {}{}{}",
        report.tool.name,
        report.tool.build(),
        p.suite,
        p.stores.join(", "),
        match (p.suite, p.scale) {
            (Suite::Classic, _) => format!(
                "sizes {}, {} searches per inserted record, ",
                sizes.join(", "),
                p.searches_per_insert
            ),
            (Suite::Driver, Some(scale)) => format!("scale {scale} (of the tests' counts), "),
            _ => String::new(),
        },
        p.seed,
        p.durability,
        p.warmup_runs,
        p.runs,
        if p.suite == Suite::Driver {
            "each test's own".to_string()
        } else {
            p.concurrency
                .iter()
                .map(Concurrency::to_string)
                .collect::<Vec<_>>()
                .join(",")
        },
        p.rate.map_or_else(String::new, |r| format!(
            ", open loop at {r:.0} operations/s"
        )),
        client_threads(report).map_or_else(String::new, |(n, uniform)| if uniform {
            format!(", {n} client thread(s), one event loop each")
        } else {
            format!(", client threads (one event loop each): {n}")
        })
    )];
    if !p.workloads.is_empty() {
        let mut line = "workloads, after a load of the records:".to_string();
        for w in &p.workloads {
            let _ = write!(line, "\n  - {w}");
        }
        facts.push(line);
    }
    facts.push(format!(
        "started {}, finished {}{}",
        report.started_at,
        report.finished_at,
        report
            .client_peak_rss_bytes
            .map_or_else(String::new, |b| format!(
                "; dbcompare's own peak memory (RSS) {}",
                human_size(b)
            ))
    ));
    facts.push(format!(
        "machine: {}, {} cores, {} memory, {}, kernel {} ({})",
        m.cpu_model,
        m.cores,
        human_size(m.memory_bytes),
        m.os,
        m.kernel,
        m.arch
    ));
    if let Some(f) = &report.floor {
        facts.push(floor_line(f).replace(&f.fsync_dir, &format!("`{}`", f.fsync_dir)));
    }
    if p.alloc_sites {
        let shown = !super::alloc_sites::phases(report).is_empty();
        facts.push(format!(
            "**allocation sites captured** (`--alloc-sites`): every allocation's stack was \
             taken, so this run's times are slowed and not for comparing{}",
            if shown {
                " (where the allocations come from: the last section)"
            } else {
                ""
            }
        ));
    }
    if let Some(c) = &p.client {
        facts.push(format!(
            "load client {}/{} of the run that began at {} (its share alone: `dbcompare merge` \
             makes one run of the {} clients' run.json files)",
            c.index, c.of, c.start_at, c.of
        ));
    }
    if !report.shares.is_empty() {
        let mut line = format!(
            "merged from {} load clients (the machine and floor above are client 1's):",
            report.shares.len()
        );
        for s in &report.shares {
            let _ = write!(
                line,
                "\n  - client {}: `{}`, {}, {} cores, from {} to {}",
                s.index, s.file, s.machine.cpu_model, s.machine.cores, s.started_at, s.finished_at
            );
        }
        facts.push(line);
    }
    facts
}

/// Every client-bound phase, a line each: `redis SEARCH tiny x8: the client used ...`.
pub fn client_bound_lines(report: &Report) -> Vec<String> {
    report
        .stores
        .iter()
        .flat_map(|s| {
            s.phases.iter().filter_map(move |p| {
                p.client_bound.as_ref().map(|why| {
                    format!(
                        "{} {} {} x{}: {why}",
                        s.store,
                        p.kind.label(),
                        p.size.name,
                        p.concurrency
                    )
                })
            })
        })
        .collect()
}

/// What the stores' own counters rose by in each phase, a line each:
/// `redis-cluster INSERT tiny x1: ASK redirects 0, MOVED redirects 2`.
pub fn counter_lines(report: &Report) -> Vec<String> {
    report
        .stores
        .iter()
        .flat_map(|s| {
            s.phases
                .iter()
                .filter(|p| !p.server_counters.is_empty())
                .map(move |p| {
                    let counts: Vec<String> = p
                        .server_counters
                        .iter()
                        .map(|(name, n)| format!("{name} {n}"))
                        .collect();
                    format!(
                        "{} {} {} x{}: {}",
                        s.store,
                        p.kind.label(),
                        p.size.name,
                        p.concurrency,
                        counts.join(", ")
                    )
                })
        })
        .collect()
}

/// A merged run's phases, a line each: how long each load client took and the throughput
/// over the slowest one's time and while every one ran:
/// `redis SEARCH tiny x2: clients 291.2, 286.9 ms; 12633 ops/s over the slowest, 13010 while all ran`.
pub fn client_lines(report: &Report) -> Vec<String> {
    report
        .stores
        .iter()
        .flat_map(|s| {
            s.phases
                .iter()
                .filter(|p| !p.client_wall_ms.is_empty())
                .map(move |p| {
                    let walls: Vec<String> =
                        p.client_wall_ms.iter().map(|w| format!("{w:.1}")).collect();
                    let common = p
                        .common_ops_per_s
                        .map_or(String::new(), |r| format!(", {r:.0} while all ran"));
                    format!(
                        "{} {} {} x{}: clients {} ms; {:.0} ops/s over the slowest{common}",
                        s.store,
                        p.kind.label(),
                        p.size.name,
                        p.concurrency,
                        walls.join(", "),
                        p.ops_per_s
                    )
                })
        })
        .collect()
}

/// The heading of [`client_lines`].
pub const CLIENTS_HEADING: &str =
    "Load clients per phase (each one's wall time; they began every phase together)";

/// The per-phase notes that are not in the tables, each section with its heading: the
/// stores' own counters and a merged run's load clients (the empty ones left out).
pub fn phase_notes(report: &Report) -> Vec<(&'static str, Vec<String>)> {
    [
        (COUNTERS_HEADING, counter_lines(report)),
        (CLIENTS_HEADING, client_lines(report)),
        (BATCH_HEADING, batch_lines(&report.stores)),
    ]
    .into_iter()
    .filter(|(_, lines)| !lines.is_empty())
    .collect()
}

/// The heading of [`batch_lines`].
pub const BATCH_HEADING: &str = "Phases that count rows, not calls";

/// The pool suite's batch insert, a line per store that ran it: its operations are the rows
/// of one call per run, so its rate is rows per second and its latency is the whole call's.
pub fn batch_lines(stores: &[StoreResult]) -> Vec<String> {
    let batch = crate::workload::pool::PoolTest::BatchInsert.name();
    stores
        .iter()
        .flat_map(|s| s.phases.iter().map(move |p| (s, p)))
        .filter(|(_, p)| p.kind == PhaseKind::Pool && p.size.name == batch)
        .map(|(s, p)| {
            format!(
                "{} {batch}: its {} operations are the rows one call inserts: its ops/s are \
                 rows per second, its latency percentiles the whole call's",
                s.store, p.ops
            )
        })
        .collect()
}

/// The heading of [`counter_lines`].
pub const COUNTERS_HEADING: &str =
    "Server counters per phase (what each store's own counters rose by, summed over the runs)";
