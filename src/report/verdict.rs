//! The verdict a report opens with ("At a glance"): per phase, the stores ranked by
//! throughput as a share of the best, with p99, CPU per operation and the durability each
//! ran in, told apart only where the spread of their runs allows (the test `dbcompare
//! compare` makes), with a line of the standings over all phases and notes under the table
//! (the run's warnings and the stores that did not run are [`super::notices`]). Plain cells
//! and lines: every renderer lays them out in its own markup.

use super::compare::{Figure, MIN_RUNS, Verdict, compare_figure};
use super::costs::total_cpu_us_per_op;
use super::format::human_us;
use super::model::{CostSource, PhaseKind, PhaseResult, Report, StoreResult, StoreStatus};
use crate::workload::levels::Concurrency;

/// The section's heading.
pub const HEADING: &str = "At a glance";

/// The level at which two stores' throughputs count as told apart.
pub const ALPHA: f64 = 0.05;

/// The title of the verdict's chart (the renderers find it in the run's charts by it).
pub const CHART_TITLE: &str = "At a glance: throughput as a share of the fastest store";

/// The verdict chart's file.
pub const CHART_FILE: &str = "glance.svg";

/// One store in one phase's ranking.
#[derive(Debug, Clone)]
pub struct Entry<'r> {
    /// The store's index in the report.
    pub index: usize,
    /// The store, and its figures of the phase.
    pub store: &'r StoreResult,
    pub phase: &'r PhaseResult,
    /// 1 for the fastest; stores the runs do not tell apart share the rank of the first
    /// of them.
    pub rank: usize,
    /// Whether another store shares the rank.
    pub tied: bool,
    /// Its throughput over the best store's.
    pub ratio: f64,
    /// CPU per operation, client and server together; absent where not measured.
    pub cpu_us_per_op: Option<f64>,
    /// The least CPU per operation of the phase, marked where every store's was measured.
    pub cheapest: bool,
}

/// One phase (or YCSB workload and operation, or test) with its stores, fastest first.
#[derive(Debug, Clone)]
pub struct PhaseVerdict<'r> {
    /// What tells the phase from another across stores.
    pub kind: PhaseKind,
    pub size: String,
    pub concurrency: Concurrency,
    /// `INSERT tiny`, `SEARCH tiny x4`, `a READ`, `a total`.
    pub name: String,
    pub entries: Vec<Entry<'r>>,
    /// Whether every store had the runs to be told apart from the one ranked above it.
    pub judged: bool,
    /// The fewest measured runs of any of its stores.
    pub runs: usize,
}

/// The verdict of a run.
#[derive(Debug, Clone)]
pub struct Glance<'r> {
    pub phases: Vec<PhaseVerdict<'r>>,
    /// Phases left out of the ranking for their errors or for stopping early:
    /// `other SEARCH micro (1 error)`.
    pub unranked: Vec<String>,
    /// Whether any store's CPU per operation was measured (else no such column).
    pub cpu: bool,
    /// A variant's name with the settings that set it apart from its store's others
    /// (`postgres@async (synchronous_commit=off)`), by store name.
    pub labels: std::collections::BTreeMap<String, String>,
}

/// Whether a store ran (a skipped store is listed once and gets no column or row).
pub fn ran(s: &StoreResult) -> bool {
    s.status != StoreStatus::Skipped
}

/// A phase's name in the verdict and the warnings: `INSERT tiny`, `SEARCH tiny x4`,
/// `a READ`, `a total` (the whole workload), a driver or pool test's own name.
pub fn phase_name(p: &PhaseResult) -> String {
    let mut name = match p.kind {
        PhaseKind::Insert | PhaseKind::Search => format!("{} {}", p.kind.label(), p.size.name),
        PhaseKind::Ycsb if !p.size.name.trim().contains(' ') => format!("{} total", p.size.name),
        _ => p.size.name.clone(),
    };
    // A driver or pool test's name already says its concurrency.
    if p.concurrency > Concurrency::ONE && !matches!(p.kind, PhaseKind::Driver | PhaseKind::Pool) {
        name.push_str(&format!(" x{}", p.concurrency));
    }
    if p.open_loop.is_some() {
        name.push_str(" (open loop)");
    }
    name
}

/// The runs a phase's figures are from.
fn runs_of(p: &PhaseResult) -> usize {
    p.runs.len().max(1)
}

/// The run's verdict: every phase that some store measured without errors, in the order
/// the phases first ran (the first store's, then what the others ran besides).
pub fn glance(report: &Report) -> Glance<'_> {
    let mut phases: Vec<PhaseVerdict<'_>> = Vec::new();
    let mut unranked = Vec::new();
    for (index, store) in report.stores.iter().enumerate().filter(|(_, s)| ran(s)) {
        for p in &store.phases {
            if p.errors > 0 || p.incomplete {
                let why = match p.errors {
                    0 => "stopped early".to_string(),
                    1 => "1 error".to_string(),
                    n => format!("{n} errors"),
                };
                unranked.push(format!("{} {} ({why})", store.store, phase_name(p)));
                continue;
            }
            let entry = Entry {
                index,
                store,
                phase: p,
                rank: 0,
                tied: false,
                ratio: f64::NAN,
                cpu_us_per_op: total_cpu_us_per_op(p),
                cheapest: false,
            };
            match phases.iter_mut().find(|v| {
                v.kind == p.kind && v.size == p.size.name && v.concurrency == p.concurrency
            }) {
                Some(v) => v.entries.push(entry),
                None => phases.push(PhaseVerdict {
                    kind: p.kind,
                    size: p.size.name.clone(),
                    concurrency: p.concurrency,
                    name: phase_name(p),
                    entries: vec![entry],
                    judged: true,
                    runs: 1,
                }),
            }
        }
    }
    for v in &mut phases {
        rank(v);
    }
    let cpu = phases
        .iter()
        .flat_map(|v| &v.entries)
        .any(|e| e.cpu_us_per_op.is_some());
    Glance {
        phases,
        unranked,
        cpu,
        labels: super::variants::labels(report),
    }
}

/// Orders a phase's stores fastest first and ranks them: a store the runs do not tell
/// apart from the first of the rank above it shares that rank.
fn rank(v: &mut PhaseVerdict<'_>) {
    v.entries
        .sort_by(|a, b| b.phase.ops_per_s.total_cmp(&a.phase.ops_per_s));
    v.runs = v
        .entries
        .iter()
        .map(|e| runs_of(e.phase))
        .min()
        .unwrap_or(1);
    let best = v.entries.first().map_or(f64::NAN, |e| e.phase.ops_per_s);
    let mut leader = 0;
    for i in 0..v.entries.len() {
        v.entries[i].ratio = if best > 0.0 {
            v.entries[i].phase.ops_per_s / best
        } else {
            f64::NAN
        };
        v.entries[i].rank = i + 1;
        if i == 0 {
            continue;
        }
        let row = compare_figure(
            v.entries[leader].phase,
            v.entries[i].phase,
            Figure::Throughput,
            ALPHA,
        );
        match row.verdict {
            Verdict::NoChange => {
                v.entries[i].rank = leader + 1;
                v.entries[i].tied = true;
                v.entries[leader].tied = true;
            }
            Verdict::Better | Verdict::Worse => leader = i,
            Verdict::NotEnoughRuns => {
                v.judged = false;
                leader = i;
            }
        }
    }
    if !v.judged {
        // Without the test no store shares a rank: the order is the figures' alone.
        for (i, e) in v.entries.iter_mut().enumerate() {
            e.rank = i + 1;
            e.tied = false;
        }
    }
    let costs: Option<Vec<f64>> = v.entries.iter().map(|e| e.cpu_us_per_op).collect();
    if let Some(costs) = costs.filter(|c| c.len() > 1) {
        let cheapest = (0..costs.len()).min_by(|&a, &b| costs[a].total_cmp(&costs[b]));
        if let Some(i) = cheapest {
            v.entries[i].cheapest = true;
        }
    }
}

/// Whether `p` is a YCSB row of one operation type of a mixed workload (`a READ`), whose
/// cost is its workload's, on the workload's total row (`a total`). The load's row and a
/// workload of one type carry their own cost.
fn shares_workload_cost(p: &PhaseResult) -> bool {
    p.kind == PhaseKind::Ycsb && p.size.name.trim().contains(' ') && p.server.is_none()
}

/// The verdict table's headers: the cpu column only where some store's was measured.
pub fn headers(g: &Glance<'_>) -> Vec<&'static str> {
    let mut h = vec![
        "phase",
        "rank",
        "store",
        "durability",
        "vs best",
        "ops/s",
        "p99 us",
    ];
    if g.cpu {
        h.push("cpu us/op");
    }
    h
}

/// The first numeric column of the verdict table.
pub const NUMERIC_FROM: usize = 4;

/// The verdict table's rows: each phase's stores, fastest first, its name on its first.
pub fn rows(g: &Glance<'_>) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for v in &g.phases {
        for (i, e) in v.entries.iter().enumerate() {
            let star = if e.phase.client_bound.is_some() {
                "*"
            } else {
                ""
            };
            let mut row = vec![
                if i == 0 {
                    v.name.clone()
                } else {
                    String::new()
                },
                if e.tied {
                    format!("={}", e.rank)
                } else {
                    e.rank.to_string()
                },
                format!(
                    "{}{star}",
                    g.labels.get(&e.store.store).unwrap_or(&e.store.store)
                ),
                e.store
                    .info
                    .as_ref()
                    .map_or("-", |info| info.durability.as_str())
                    .to_string(),
                if e.ratio.is_finite() {
                    format!("{:.2}x", e.ratio)
                } else {
                    "-".to_string()
                },
                format!("{:.0}", e.phase.ops_per_s),
                human_us(e.phase.response_us().p99),
            ];
            if g.cpu {
                row.push(match (e.cpu_us_per_op, e.cheapest) {
                    (Some(cpu), true) => format!("{} cheapest", human_us(cpu)),
                    (Some(cpu), false) => human_us(cpu),
                    (None, _) if shares_workload_cost(e.phase) => "-".to_string(),
                    (None, _) => "n/a".to_string(),
                });
            }
            rows.push(row);
        }
    }
    rows
}

/// The whole verdict in one sentence, for a run of several phases: each store's geometric
/// mean of its `vs best` over the phases every ranked store measured without errors (a YCSB
/// workload of several operations counted once, by its total), best first, with the phases it ranked first in
/// (a shared first rank counts). The geometric mean, as benchmark suites sum up ratios: a
/// store twice as fast in one phase and half as fast in another comes out even. None with
/// fewer than two stores or two such phases.
pub fn standings(report: &Report, g: &Glance<'_>) -> Option<String> {
    // A YCSB operation's row where its workload has a total row (`a READ` beside `a total`).
    let summed = |v: &&PhaseVerdict<'_>| {
        let workload = v.size.trim().split_once(' ').map(|(w, _)| w);
        !(v.kind == PhaseKind::Ycsb
            && workload.is_some_and(|w| {
                g.phases.iter().any(|t| {
                    t.kind == PhaseKind::Ycsb
                        && t.size.trim() == w
                        && t.concurrency == v.concurrency
                })
            }))
    };
    let mut stores: Vec<usize> = Vec::new();
    for e in g.phases.iter().filter(summed).flat_map(|v| &v.entries) {
        if !stores.contains(&e.index) {
            stores.push(e.index);
        }
    }
    let phases: Vec<&PhaseVerdict<'_>> = g
        .phases
        .iter()
        .filter(summed)
        .filter(|v| {
            v.entries.len() == stores.len()
                && v.entries
                    .iter()
                    .all(|e| e.ratio.is_finite() && e.ratio > 0.0)
        })
        .collect();
    if stores.len() < 2 || phases.len() < 2 {
        return None;
    }
    let mut each: Vec<(&str, f64, usize)> = stores
        .iter()
        .map(|&index| {
            let entries = phases
                .iter()
                .filter_map(|v| v.entries.iter().find(|e| e.index == index));
            let (mut logs, mut first, mut name) = (0.0, 0, "");
            for e in entries {
                logs += e.ratio.ln();
                first += usize::from(e.rank == 1);
                name = e.store.store.as_str();
            }
            (name, (logs / phases.len() as f64).exp(), first)
        })
        .collect();
    each.sort_by(|a, b| b.1.total_cmp(&a.1));
    let listed: Vec<String> = each
        .iter()
        .map(|(name, mean, first)| match first {
            0 => format!("{name} {mean:.2}x"),
            n => format!("{name} {mean:.2}x (first in {n})"),
        })
        .collect();
    let left_out = g.phases.iter().filter(summed).count() - phases.len();
    let absent: Vec<&str> = report
        .stores
        .iter()
        .enumerate()
        .filter(|(i, s)| ran(s) && !stores.contains(i))
        .map(|(_, s)| s.store.as_str())
        .collect();
    let mut line = format!(
        "Over the {} phases every store ran, each store's geometric mean of its vs best: {}.",
        phases.len(),
        listed.join(", ")
    );
    if left_out > 0 {
        line.push_str(&format!(
            " {left_out} phase{} left out: not every store has a figure of {} (not run, not \
             applicable, or errors).",
            if left_out == 1 { "" } else { "s" },
            if left_out == 1 { "it" } else { "them" }
        ));
    }
    if !absent.is_empty() {
        line.push_str(&format!(
            " Not in it: {} (no phase without errors).",
            absent.join(", ")
        ));
    }
    Some(line)
}

/// What the verdict table says of itself, a sentence or two each: how it ranks, whether
/// the order is a finding, what the cost column is and where it is missing.
pub fn notes(g: &Glance<'_>) -> Vec<String> {
    let mut notes = Vec::new();
    let contested: Vec<&PhaseVerdict<'_>> =
        g.phases.iter().filter(|v| v.entries.len() > 1).collect();
    let unjudged: Vec<&PhaseVerdict<'_>> =
        contested.iter().copied().filter(|v| !v.judged).collect();
    let mut ranking = "Fastest first, by median throughput; vs best: a store's throughput \
                       over the phase's fastest; p99 us: the 99th percentile of the latency \
                       per operation over every run."
        .to_string();
    if unjudged.len() < contested.len() {
        ranking.push_str(&format!(
            " A shared rank (=1) means the runs' spread does not tell those stores apart \
             (Welch's t-test on the per-run throughput at p < {ALPHA}, as `dbcompare \
             compare` judges): their order is not a finding."
        ));
    }
    notes.push(ranking);
    if let Some(fewest) = unjudged.iter().map(|v| v.runs).min() {
        let scope = if unjudged.len() < contested.len() {
            format!(
                "In {} of the phases the order is",
                if unjudged.len() == 1 {
                    "one".to_string()
                } else {
                    unjudged.len().to_string()
                }
            )
        } else {
            "The order is".to_string()
        };
        notes.push(if fewest <= 1 {
            format!(
                "{scope} from one run: its spread is unknown, so stores a few percent apart \
                 may change places in another run (`--runs {MIN_RUNS}` or more lets the \
                 ranking tell them apart)."
            )
        } else {
            format!(
                "{scope} from {fewest} runs, too few to tell close stores apart ({MIN_RUNS} \
                 or more are needed): stores a few percent apart may change places in \
                 another run."
            )
        });
    }
    if g.cpu {
        let mut cost = "cpu us/op: the CPU time an operation cost, the client's and the \
                        server's together (an embedded store's is all the client's); the \
                        cheapest of each phase is marked."
            .to_string();
        let mut missing: Vec<(&str, &str)> = Vec::new();
        for e in g.phases.iter().flat_map(|v| &v.entries) {
            if e.cpu_us_per_op.is_some() {
                continue;
            }
            let why = match &e.phase.server {
                Some(c) if c.source == CostSource::ServerCounters => {
                    "a server given by URL that does not report its CPU time"
                }
                Some(_) => {
                    "its server spent too little CPU time over the phase for /proc's clock \
                     ticks to tell"
                }
                // Its workload's total row holds its cost (the cell says `-`).
                None if shares_workload_cost(e.phase) => continue,
                None => "not measured in this run",
            };
            if !missing.contains(&(e.store.store.as_str(), why)) {
                missing.push((e.store.store.as_str(), why));
            }
        }
        if !missing.is_empty() {
            let each: Vec<String> = missing
                .iter()
                .map(|(store, why)| format!("{store} ({why})"))
                .collect();
            cost.push_str(&format!(
                " n/a: {}; no store is marked cheapest in a phase with an n/a.",
                each.join(", ")
            ));
        }
        if g.phases
            .iter()
            .flat_map(|v| &v.entries)
            .any(|e| e.cpu_us_per_op.is_none() && shares_workload_cost(e.phase))
        {
            cost.push_str(
                " -: a YCSB operation type's row, whose cost is on its workload's total row.",
            );
        }
        notes.push(cost);
    }
    if g.phases
        .iter()
        .flat_map(|v| &v.entries)
        .any(|e| e.phase.client_bound.is_some())
    {
        notes.push(
            "*: client-bound: the figure is the client's limit, not the store's.".to_string(),
        );
    }
    if g.phases.iter().any(|v| v.name.ends_with("(open loop)")) {
        notes.push(
            "open loop: operations issued at a fixed rate, so a store that kept it has the \
             rate for its throughput; its p99 tells it apart, each operation timed from when \
             it was due (a stall counts for every operation queued behind it)."
                .to_string(),
        );
    }
    if !g.unranked.is_empty() {
        notes.push(format!(
            "Not ranked (errors, or stopped early): {}.",
            g.unranked.join(", ")
        ));
    }
    notes
}
