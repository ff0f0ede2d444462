//! What each phase cost, as plain cells every renderer lays out: the client's and the
//! server's CPU per operation, the bytes the server moved to and from storage, write and
//! space amplification, durable writes and the server's memory. A figure that was not
//! measured is `n/a`, never zero.

use super::format::{human_size, human_us};
use super::model::{CostSource, PhaseKind, PhaseResult, Report, StoreResult};

/// Headers of the cost table.
pub const COST_HEADERS: [&str; 13] = [
    "store",
    "phase",
    "size",
    "conc",
    "client cpu us/op",
    "server cpu us/op",
    "total cpu us/op",
    "written/op",
    "read/op",
    "write amp",
    "syncs/op",
    "server peak mem",
    "server figures from",
];

const NA: &str = "n/a";

/// What the cost table says of itself.
pub const COST_NOTE: &str = "What each phase cost, per operation: the client's and the \
    server's CPU time (user + system) in microseconds, the bytes the server sent to and \
    fetched from storage, write amplification (bytes written over the logical bytes of the \
    records inserted), the server's durable writes and its peak memory. n/a: not measured \
    (see docs/methodology.md).";

/// The cost table's rows: every phase whose server was read, in run order; none when no
/// phase's was (a report from before the figures were taken).
pub fn cost_rows(report: &Report) -> Vec<Vec<String>> {
    report
        .stores
        .iter()
        .flat_map(|s| {
            s.phases
                .iter()
                .filter(|p| p.server.is_some())
                .map(move |p| cost_row(s, p))
        })
        .collect()
}

fn cost_row(s: &StoreResult, p: &PhaseResult) -> Vec<String> {
    let cost = p.server.as_ref().expect("rows are of phases with a cost");
    let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or_else(|| NA.to_string(), f);
    let embedded = cost.source == CostSource::ClientProcess;
    let server_cpu = cost.cpu_us_per_op();
    let total = total_cpu_us_per_op(p);
    vec![
        s.store.clone(),
        p.kind.label().to_string(),
        p.size.name.clone(),
        p.concurrency.to_string(),
        human_us(p.cpu_us_per_op),
        if embedded {
            "in client".to_string()
        } else {
            opt(server_cpu, &|v| human_us(v))
        },
        opt(total, &|v| human_us(v)),
        opt(cost.write_bytes_per_op, &per_op_bytes),
        opt(cost.read_bytes_per_op, &per_op_bytes),
        opt(cost.write_amplification, &|v| format!("{v:.1}x")),
        opt(cost.syncs_per_op, &|v| format!("{v:.2}")),
        cost.peak_memory_bytes
            .map_or_else(|| NA.to_string(), human_size),
        source_name(cost.source).to_string(),
    ]
}

/// The CPU time a phase cost per operation, the client's and the server's together (an
/// embedded store's is the client's own); absent where the server's was not read.
pub fn total_cpu_us_per_op(p: &PhaseResult) -> Option<f64> {
    let cost = p.server.as_ref()?;
    if cost.source == CostSource::ClientProcess {
        return Some(p.cpu_us_per_op);
    }
    Some(p.cpu_us_per_op + cost.cpu_us_per_op()?)
}

/// Where the figures were read, in a table's few words.
fn source_name(source: CostSource) -> &'static str {
    match source {
        CostSource::Processes => "processes",
        CostSource::ClientProcess => "client process",
        CostSource::ServerCounters => "server counters",
    }
}

/// Bytes per operation: `0`, `12 B`, `3.4 kB`, `263 kB`, `1.2 MB`.
pub fn per_op_bytes(bytes: f64) -> String {
    const KIB: f64 = 1024.0;
    if bytes < 0.05 {
        "0".to_string()
    } else if bytes < KIB {
        format!("{bytes:.1} B")
    } else if bytes < 10.0 * KIB {
        format!("{:.1} kB", bytes / KIB)
    } else if bytes < KIB * KIB {
        format!("{:.0} kB", bytes / KIB)
    } else {
        format!("{:.1} MB", bytes / (KIB * KIB))
    }
}

/// The on-disk size the records took over their logical bytes: the final size less the
/// initial one, over the logical bytes of every insert phase (one run of each); absent
/// when a size or the logical bytes were not measured, or the size did not grow (the
/// store had allocated the room before: InnoDB's first pages hold a micro run's records).
pub fn space_amplification(s: &StoreResult) -> Option<f64> {
    let grown = s.final_size_bytes?.checked_sub(s.initial_size_bytes?)?;
    if grown == 0 {
        return None;
    }
    let logical: u64 = s
        .phases
        .iter()
        .filter(|p| p.kind == PhaseKind::Insert)
        .map(|p| p.server.as_ref()?.logical_bytes)
        .sum::<Option<u64>>()?;
    (logical > 0).then(|| grown as f64 / logical as f64)
}

/// One line per store of what its records took on disk: `postgres: 1.2 MB on disk for
/// 167 kB of records, space amplification 7.4x`. None in one load client's run of several:
/// the database holds every client's records, the run only its own share (the merged run
/// has the line).
pub fn space_lines(report: &Report) -> Vec<String> {
    if report.plan.client.as_ref().is_some_and(|c| c.of > 1) {
        return Vec::new();
    }
    report
        .stores
        .iter()
        .filter_map(|s| {
            let logical: u64 = s
                .phases
                .iter()
                .filter(|p| p.kind == PhaseKind::Insert)
                .filter_map(|p| p.server.as_ref()?.logical_bytes)
                .sum();
            let grown = s.final_size_bytes?.checked_sub(s.initial_size_bytes?)?;
            if grown == 0 && logical > 0 {
                return Some(format!(
                    "{}: no growth on disk for {} of records (the room was allocated before \
                     them): no space amplification to tell",
                    s.store,
                    human_size(logical)
                ));
            }
            let amp = space_amplification(s)?;
            Some(format!(
                "{}: {} on disk for {} of records, space amplification {amp:.1}x",
                s.store,
                human_size(grown),
                human_size(logical)
            ))
        })
        .collect()
}

/// The row that holds the cost of a YCSB row per operation type (`a READ`): its
/// workload's own (`a`), at the same concurrency. The server's cost of a mixed workload
/// cannot be split by operation type, so it is only the workload's as a whole. `None` for
/// any other row.
pub fn whole_workload<'a>(s: &'a StoreResult, p: &PhaseResult) -> Option<&'a PhaseResult> {
    if p.kind != PhaseKind::Ycsb || p.server.is_some() {
        return None;
    }
    let (workload, _) = p.size.name.split_once(' ')?;
    s.phases.iter().find(|w| {
        w.kind == PhaseKind::Ycsb
            && w.size.name == workload
            && w.concurrency == p.concurrency
            && w.server.is_some()
    })
}

/// The lines under the cost table: for one load client's share, that the server's figures
/// are the whole server's over this client's operations; what each store's records took on
/// disk (see [`space_lines`]); and why YCSB's rows per operation type have no row there.
pub fn cost_lines(report: &Report) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(c) = &report.plan.client {
        lines.push(format!(
            "This is load client {} of {}: the server's figures per operation are the whole \
             server's, which served every client's operations, over this client's alone, \
             about {} times each; `dbcompare merge` of the clients' run.json gives them per \
             operation of all.",
            c.index, c.of, c.of
        ));
    }
    lines.extend(space_lines(report));
    let split: Vec<&str> = report
        .stores
        .iter()
        .flat_map(|s| {
            s.phases
                .iter()
                .filter(|p| whole_workload(s, p).is_some())
                .map(|p| p.size.name.as_str())
        })
        .collect();
    if let Some(first) = split.first() {
        let (workload, _) = first.split_once(' ').unwrap_or((first, ""));
        lines.push(format!(
            "YCSB's rows per operation type ({first}, ...) have no cost of their own: the \
             server's cost of a mixed workload, and the client's CPU and allocations, cannot \
             be split by operation type, so each workload's row ({workload}) is its cost for \
             all its operations together."
        ));
    }
    lines
}

/// The phase's cost in a few words for its console summary: `server cpu 17.5 us/op,
/// 263 kB written/op`; none when the server was not read.
pub fn summary(p: &PhaseResult) -> Option<String> {
    let cost = p.server.as_ref()?;
    let mut parts = Vec::new();
    if let Some(cpu) = cost.cpu_us_per_op() {
        parts.push(format!("server cpu {} us/op", human_us(cpu)));
    }
    if let Some(w) = cost.write_bytes_per_op {
        parts.push(format!("{} written/op", per_op_bytes(w)));
    }
    if let Some(a) = cost.write_amplification {
        parts.push(format!("write amp {a:.1}x"));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_per_operation_read_at_their_magnitude() {
        assert_eq!(per_op_bytes(0.0), "0");
        assert_eq!(per_op_bytes(1.024), "1.0 B");
        assert_eq!(per_op_bytes(4382.7), "4.3 kB");
        assert_eq!(per_op_bytes(262_881.0), "257 kB");
        assert_eq!(per_op_bytes(3.0 * 1024.0 * 1024.0), "3.0 MB");
    }
}
