//! The variants of a store side by side, as plain cells for the renderers: for each store
//! run as several variants (`postgres@sync`, `postgres@async`), the settings read back that
//! differ between them (and only those) and the order their runs took; each variant's name
//! with those settings, as the verdict ranks it beside the stores; and for each pair of variants of
//! one store, whether they differ, by the test `dbcompare compare` judges two runs by
//! (Welch's, on the per-run figures), here inside the one run.

use std::collections::BTreeSet;

use super::compare::{ROW_HEADERS, compare_store, row_cells};
use super::model::{Report, StoreResult};

/// Significance level of the tests between variants.
pub const ALPHA: f64 = 0.05;

/// Runs of a group shown in its order line before the rest is counted.
const ORDER_SHOWN: usize = 12;

/// A store run as several variants.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantGroup {
    /// The store's kind (`postgres`).
    pub store: String,
    /// Its variants, in run order.
    pub variants: Vec<String>,
    /// The settings read back that differ between them: name, then each variant's value
    /// (`-` where it read none).
    pub differing: Vec<(String, Vec<String>)>,
    /// The order their runs took (`postgres@sync run 1/3, postgres@async run 1/3, ...`),
    /// when run.json has it.
    pub order: Option<String>,
}

impl VariantGroup {
    /// `synchronous_commit=off` for a variant: its differing settings, as one line.
    pub fn settings_of(&self, variant: &str) -> String {
        let Some(i) = self.variants.iter().position(|v| v == variant) else {
            return String::new();
        };
        let pairs: Vec<String> = self
            .differing
            .iter()
            .map(|(key, values)| format!("{key}={}", values[i]))
            .collect();
        pairs.join(", ")
    }

    /// The settings that differ between two of its variants: `synchronous_commit: on / off`.
    fn separating(&self, a: usize, b: usize) -> String {
        let keys: Vec<String> = self
            .differing
            .iter()
            .filter(|(_, values)| values[a] != values[b])
            .map(|(key, values)| format!("{key}: {} / {}", values[a], values[b]))
            .collect();
        if keys.is_empty() {
            "no setting read back differs".to_string()
        } else {
            keys.join("; ")
        }
    }
}

/// The kind part of a store's name (`postgres` of `postgres@sync`).
pub(crate) fn kind_of(store: &str) -> &str {
    store.split_once('@').map_or(store, |(kind, _)| kind)
}

/// Every store run as several variants, in run order.
pub fn groups(report: &Report) -> Vec<VariantGroup> {
    let mut kinds: Vec<&str> = Vec::new();
    for s in &report.stores {
        if s.store.contains('@') && !kinds.contains(&kind_of(&s.store)) {
            kinds.push(kind_of(&s.store));
        }
    }
    kinds
        .into_iter()
        .filter_map(|kind| {
            let members: Vec<&StoreResult> = report
                .stores
                .iter()
                .filter(|s| kind_of(&s.store) == kind)
                .collect();
            (members.len() > 1).then(|| group(report, kind, &members))
        })
        .collect()
}

fn group(report: &Report, kind: &str, members: &[&StoreResult]) -> VariantGroup {
    let keys: BTreeSet<&String> = members
        .iter()
        .filter_map(|s| s.info.as_ref())
        .flat_map(|i| i.settings.keys())
        .collect();
    let differing = keys
        .into_iter()
        .filter_map(|key| {
            let values: Vec<String> = members
                .iter()
                .map(|s| {
                    s.info
                        .as_ref()
                        .and_then(|i| i.settings.get(key))
                        .map_or_else(|| "-".to_string(), Clone::clone)
                })
                .collect();
            let differ = values.iter().any(|v| *v != values[0]);
            differ.then(|| (key.clone(), values))
        })
        .collect();
    let variants: Vec<String> = members.iter().map(|s| s.store.clone()).collect();
    let runs: Vec<String> = report
        .interleaved
        .iter()
        .filter(|t| variants.contains(&t.store))
        .map(|t| format!("{} {}", t.store, t.run))
        .collect();
    let order = (!runs.is_empty()).then(|| {
        let mut line = runs
            .iter()
            .take(ORDER_SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if runs.len() > ORDER_SHOWN {
            line.push_str(&format!(
                ", and {} more (run.json's `interleaved`)",
                runs.len() - ORDER_SHOWN
            ));
        }
        line
    });
    VariantGroup {
        store: kind.to_string(),
        variants,
        differing,
        order,
    }
}

/// Each variant's name with the settings that set it apart from its store's others
/// (`postgres@async (synchronous_commit=off)`), by store name: the verdict ranks variants
/// beside stores under these names. Empty unless a store ran as variants.
pub fn labels(report: &Report) -> std::collections::BTreeMap<String, String> {
    let mut labels = std::collections::BTreeMap::new();
    for g in groups(report) {
        for v in &g.variants {
            let settings = g.settings_of(v);
            if !settings.is_empty() {
                labels.insert(v.clone(), format!("{v} ({settings})"));
            }
        }
    }
    labels
}

/// Two variants of one store, phase by phase.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// `postgres@sync against postgres@async (synchronous_commit: on / off)`.
    pub title: String,
    /// The first variant and the second, which is judged against it.
    pub first: String,
    pub second: String,
    /// Cells under [`Pair::headers`]: the second variant against the first.
    pub rows: Vec<Vec<String>>,
}

impl Pair {
    /// The headers of its rows: `dbcompare compare`'s, the two variants for base and new.
    pub fn headers(&self) -> Vec<&str> {
        let mut headers = ROW_HEADERS.to_vec();
        headers[2] = &self.first;
        headers[3] = &self.second;
        headers
    }
}

/// Every pair of variants of each store, each with the test of every figure.
pub fn pairs(report: &Report) -> Vec<Pair> {
    let mut out = Vec::new();
    for g in groups(report) {
        let of = |name: &str| report.stores.iter().find(|s| s.store == name);
        for a in 0..g.variants.len() {
            for b in a + 1..g.variants.len() {
                let (Some(x), Some(y)) = (of(&g.variants[a]), of(&g.variants[b])) else {
                    continue;
                };
                let compared = compare_store(x, y, ALPHA);
                out.push(Pair {
                    first: x.store.clone(),
                    second: y.store.clone(),
                    title: format!("{} against {} ({})", x.store, y.store, g.separating(a, b)),
                    rows: compared.rows.iter().map(row_cells).collect(),
                });
            }
        }
    }
    out
}

/// What a pair's table says, for the renderers: each value is the mean of the runs with
/// its interval, the change is the second variant against the first, the verdict Welch's.
pub fn pairs_note(report: &Report) -> String {
    format!(
        "Each value is the mean of the {} runs +- its {:.0}% confidence interval; the change \
         is the second variant against the first, with its interval; the verdict is Welch's \
         t-test on the per-run figures at p < {ALPHA}, as `dbcompare compare` judges two runs, \
         here inside one run whose variants took their runs in turn.",
        report.plan.runs,
        super::compare::CONFIDENCE * 100.0
    )
}
