//! What the charts group and compare: the suites that share a throughput chart, what tells
//! one phase from another across stores and its label, which phases measured one kind of
//! operation, and the whisker of a phase's runs.

use super::axis::{positive, positive_range};
use crate::report::model::{PhaseKind, PhaseResult, Report, StoreResult};
use crate::workload::levels::Concurrency;

/// The suites whose phases share a throughput chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Suite {
    Classic,
    Driver,
    Pool,
    Ycsb,
}

impl Suite {
    pub(super) const ALL: [Suite; 4] = [Suite::Classic, Suite::Driver, Suite::Pool, Suite::Ycsb];

    pub(super) fn of(kind: PhaseKind) -> Suite {
        match kind {
            PhaseKind::Insert | PhaseKind::Search => Suite::Classic,
            PhaseKind::Driver => Suite::Driver,
            PhaseKind::Pool => Suite::Pool,
            PhaseKind::Ycsb => Suite::Ycsb,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Suite::Classic => "classic",
            Suite::Driver => "driver",
            Suite::Pool => "pool",
            Suite::Ycsb => "ycsb",
        }
    }

    pub(super) fn x_desc(self) -> &'static str {
        match self {
            Suite::Classic => "phase",
            Suite::Driver | Suite::Pool => "test",
            Suite::Ycsb => "workload and operation",
        }
    }
}

/// What tells one phase from another across stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PhaseKey {
    pub(super) kind: PhaseKind,
    pub(super) size: String,
    pub(super) concurrency: Concurrency,
}

impl PhaseKey {
    pub(super) fn find<'r>(&self, store: &'r StoreResult) -> Option<&'r PhaseResult> {
        store.phase_at(self.kind, &self.size, self.concurrency)
    }

    /// `SEARCH tiny`, `YCSB a READ`, `PreparedQueryRow`.
    pub(super) fn name(&self) -> String {
        Self::name_of(self.kind, &self.size)
    }

    pub(super) fn name_of(kind: PhaseKind, size: &str) -> String {
        match kind {
            PhaseKind::Driver | PhaseKind::Pool => size.to_string(),
            _ => format!("{} {size}", kind.label()),
        }
    }

    /// The label under a bar group: `INSERT micro`, `SEARCH tiny c=4`, `a READ`, `a total`.
    pub(super) fn label(&self) -> String {
        phase_label(self.kind, &self.size, self.concurrency)
    }
}

pub(super) fn phase_label(kind: PhaseKind, size: &str, concurrency: Concurrency) -> String {
    let mut label = match kind {
        PhaseKind::Insert | PhaseKind::Search => format!("{} {size}", kind.label()),
        PhaseKind::Ycsb if !size.trim().contains(' ') => format!("{size} total"),
        _ => size.to_string(),
    };
    // A driver test such as `PreparedExecConcurrent16` already says its concurrency.
    let n = concurrency.to_string();
    let says_it = size
        .strip_suffix(&n)
        .is_some_and(|rest| !rest.ends_with(|c: char| c.is_ascii_digit()));
    if concurrency > Concurrency::ONE && !says_it {
        label.push_str(&format!(" c={concurrency}"));
    }
    label
}

/// The report's distinct phases that `keep` accepts, in the order they first ran.
pub(super) fn phase_keys(report: &Report, keep: impl Fn(&PhaseResult) -> bool) -> Vec<PhaseKey> {
    let mut keys: Vec<PhaseKey> = Vec::new();
    for p in report.stores.iter().flat_map(|s| &s.phases) {
        if !keep(p) {
            continue;
        }
        let key = PhaseKey {
            kind: p.kind,
            size: p.size.name.clone(),
            concurrency: p.concurrency,
        };
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

/// Whether a phase measured one kind of operation: the classic suite's inserts and
/// searches, YCSB's per-operation phases (`a READ`, not the workload's total `a`).
pub(super) fn per_operation(p: &PhaseResult) -> bool {
    match p.kind {
        PhaseKind::Insert | PhaseKind::Search => true,
        PhaseKind::Ycsb => p.size.name.trim().contains(' '),
        PhaseKind::Driver | PhaseKind::Pool => false,
    }
}

/// The min and max of a phase's runs (ops/s), when it ran at least twice.
pub(super) fn whisker(p: &PhaseResult) -> Option<(f64, f64)> {
    let runs: Vec<f64> = p
        .runs
        .iter()
        .map(|r| r.ops_per_s)
        .filter(|v| positive(*v))
        .collect();
    if runs.len() < 2 {
        return None;
    }
    positive_range(&runs)
}
