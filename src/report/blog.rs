//! The 2016 blog's own figures, beside ours: the classic suite at the blog's sizes can show,
//! per phase and store, the wall time then (on the blog's machine and versions), now, their
//! ratio, and the stores' rank order then and now. What a blogger rerunning the comparison
//! wants to see first.

use super::model::{PhaseKind, Report};
use crate::catalog::Suite;
use crate::workload::levels::Concurrency;

/// The blog's machine, as it described it.
pub const MACHINE: &str = "i7-4700MQ, 16 GB RAM, a non-SSD hard disk, 64-bit Linux";

/// One store as the blog measured it: wall times in ms per phase (`None`: no figure, the
/// blog printed `-`), sizes as it printed them.
pub struct BlogStore {
    /// Our store name.
    pub store: &'static str,
    /// What the blog ran.
    pub product: &'static str,
    /// INSERT micro, tiny, small.
    pub insert_ms: [Option<f64>; 3],
    /// SEARCH micro, tiny, small (40 searches per record).
    pub search_ms: [Option<f64>; 3],
    pub initial_size: &'static str,
    pub final_size: &'static str,
    /// The blog's own caveat about its figures.
    pub caveat: Option<&'static str>,
}

/// The blog's sizes, in its order.
pub const SIZES: [(&str, u64); 3] = [("micro", 100), ("tiny", 1_000), ("small", 10_000)];

/// Every store of the blog, in its order.
pub const STORES: [BlogStore; 6] = [
    BlogStore {
        store: "postgres",
        product: "PostgreSQL 9.5.1",
        insert_ms: [Some(983.62), Some(13223.53), Some(119006.15)],
        search_ms: [Some(354.34), Some(3499.50), Some(35499.98)],
        initial_size: "7192 kB",
        final_size: "10 MB",
        caveat: None,
    },
    BlogStore {
        store: "mysql",
        product: "Percona 5.7.10",
        insert_ms: [Some(3258.85), Some(32297.04), Some(341951.99)],
        search_ms: [Some(282.32), Some(2843.62), Some(28404.53)],
        initial_size: "0",
        final_size: "2.02 MB",
        caveat: None,
    },
    BlogStore {
        store: "mongodb",
        product: "MongoDB 3.2.3",
        insert_ms: [Some(10.19), Some(83.58), Some(894.40)],
        search_ms: [Some(321.75), Some(3183.75), Some(33069.50)],
        initial_size: "78 MB",
        final_size: "78 MB",
        caveat: None,
    },
    BlogStore {
        store: "couchbase",
        product: "Couchbase 4.0.0",
        insert_ms: [Some(132.29), Some(1317.61), Some(13082.86)],
        search_ms: [None, Some(69020.08), None],
        initial_size: "4.06 MB",
        final_size: "-",
        caveat: Some("the blog marked its Couchbase figures incorrect"),
    },
    BlogStore {
        store: "aerospike",
        product: "Aerospike 3.7.4",
        insert_ms: [Some(4.63), Some(40.75), Some(426.20)],
        search_ms: [Some(113.93), Some(1086.70), Some(11259.24)],
        initial_size: "1 GB",
        final_size: "1 GB",
        caveat: Some("the blog ran Aerospike without a secondary index"),
    },
    BlogStore {
        store: "redis",
        product: "Redis 3.0.7",
        insert_ms: [Some(3.94), Some(38.28), Some(377.24)],
        search_ms: [Some(424.79), Some(4263.79), Some(42904.11)],
        initial_size: "18 bytes",
        final_size: "3.9 MB",
        caveat: None,
    },
];

impl BlogStore {
    fn wall_ms(&self, kind: PhaseKind, size: usize) -> Option<f64> {
        match kind {
            PhaseKind::Insert => self.insert_ms[size],
            _ => self.search_ms[size],
        }
    }
}

/// Whether a run can be read against the blog: the classic suite with 40 searches per
/// record on one connection as fast as it goes (the blog's), every size one of the blog's
/// (by its records: `--sizes 100` is micro), one store of the blog's at least; and the plan
/// did not turn the reference off.
pub fn applies(report: &Report) -> bool {
    let p = &report.plan;
    // One client's share, or several clients merged, is not the blog's one connection; an
    // open loop's time is its schedule's.
    p.blog_reference
        && p.client.is_none()
        && report.shares.is_empty()
        && p.rate.is_none()
        && p.concurrency.contains(&Concurrency::ONE)
        && p.suite == Suite::Classic
        && p.searches_per_insert == 40
        && !p.sizes.is_empty()
        && p.sizes.iter().all(|s| blog_size(s).is_some())
        && report
            .stores
            .iter()
            .any(|s| ran(s) && STORES.iter().any(|b| b.store == s.store))
}

/// The blog's size of the same records: its place in [`SIZES`].
fn blog_size(size: &crate::workload::record::Size) -> Option<usize> {
    SIZES.iter().position(|(_, r)| *r == size.records)
}

/// The phase set beside the blog's: on one connection, every operation done, no error.
fn blog_phase<'a>(
    s: &'a super::model::StoreResult,
    kind: PhaseKind,
    size: &str,
) -> Option<&'a super::model::PhaseResult> {
    s.phase_at(kind, size, Concurrency::ONE)
        .filter(|p| p.errors == 0 && !p.incomplete)
}

/// Whether a store has figures to set beside the blog's (a skipped one has none).
fn ran(s: &super::model::StoreResult) -> bool {
    !s.phases.is_empty()
}

/// The table beside the recap: one row per phase of the run's sizes, per store of the
/// blog's in the run `now ms`, `2016 ms` and `now / 2016` (below 1: faster now); then a
/// row of sizes. `None` when the run cannot be read against the blog.
pub fn reference_rows(report: &Report) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    if !applies(report) {
        return None;
    }
    let stores: Vec<(&super::model::StoreResult, &BlogStore)> = report
        .stores
        .iter()
        .filter(|s| ran(s))
        .filter_map(|s| STORES.iter().find(|b| b.store == s.store).map(|b| (s, b)))
        .collect();
    let mut headers = vec!["phase".to_string()];
    for (s, b) in &stores {
        headers.push(format!("{} now ms", s.store));
        headers.push(format!("{} 2016 ms", b.product));
        headers.push(format!("{} now/2016", s.store));
    }
    let mut rows = Vec::new();
    for kind in [PhaseKind::Insert, PhaseKind::Search] {
        for size in &report.plan.sizes {
            let index = blog_size(size)?;
            let mut row = vec![format!("{} {} {}", kind.label(), size.name, size.records)];
            for (s, b) in &stores {
                let now = blog_phase(s, kind, &size.name);
                let then = b.wall_ms(kind, index);
                row.push(now.map_or_else(|| "-".into(), |p| format!("{:.2}", p.wall_ms)));
                row.push(then.map_or_else(|| "-".into(), |t| format!("{t:.2}")));
                row.push(match (now, then) {
                    (Some(p), Some(t)) if t > 0.0 => ratio(p.wall_ms / t),
                    _ => "-".into(),
                });
            }
            rows.push(row);
        }
    }
    let mut sizes = vec!["initial / final size".to_string()];
    for (s, b) in &stores {
        let size = |v: Option<u64>| v.map_or_else(|| "-".into(), super::format::human_size);
        sizes.push(format!(
            "{} / {}",
            size(s.initial_size_bytes),
            size(s.final_size_bytes)
        ));
        sizes.push(format!("{} / {}", b.initial_size, b.final_size));
        sizes.push(String::new());
    }
    rows.push(sizes);
    Some((headers, rows))
}

/// The rank order of the stores in both (fastest first) per phase, then and now:
/// `(phase, now, 2016)`. Stores without a figure on either side are left out of both.
pub fn rank_rows(report: &Report) -> Vec<(String, String, String)> {
    if !applies(report) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for kind in [PhaseKind::Insert, PhaseKind::Search] {
        for size in &report.plan.sizes {
            let Some(index) = blog_size(size) else {
                continue;
            };
            let mut both: Vec<(&str, f64, f64)> = report
                .stores
                .iter()
                .filter_map(|s| {
                    let b = STORES.iter().find(|b| b.store == s.store)?;
                    let now = blog_phase(s, kind, &size.name)?;
                    Some((s.store.as_str(), now.wall_ms, b.wall_ms(kind, index)?))
                })
                .collect();
            if both.len() < 2 {
                continue;
            }
            let order = |both: &mut Vec<(&str, f64, f64)>, then: bool| {
                both.sort_by(|a, b| {
                    let (x, y) = if then { (a.2, b.2) } else { (a.1, b.1) };
                    x.total_cmp(&y)
                });
                both.iter().map(|s| s.0).collect::<Vec<_>>().join(" < ")
            };
            let now = order(&mut both, false);
            let then = order(&mut both, true);
            out.push((format!("{} {}", kind.label(), size.name), now, then));
        }
    }
    out
}

/// The caveats the blog gave about the figures shown, and what the comparison is.
pub fn notes(report: &Report) -> Vec<String> {
    let mut notes = vec![format!(
        "2016: the blog's figures, on its machine ({MACHINE}) and versions, with its settings \
         (PostgreSQL and MySQL syncing every commit, MongoDB and Redis not); now: this run, \
         durability `{}`. A ratio below 1 is faster now.",
        report.plan.durability
    )];
    for s in report.stores.iter().filter(|s| ran(s)) {
        if let Some(caveat) = STORES
            .iter()
            .find(|b| b.store == s.store)
            .and_then(|b| b.caveat)
        {
            notes.push(format!("{}: {caveat}.", s.store));
        }
    }
    notes
}

fn ratio(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}x")
    } else if r >= 0.1 {
        format!("{r:.2}x")
    } else {
        format!("{r:.3}x")
    }
}
