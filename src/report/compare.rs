//! `dbcompare compare`: two saved runs side by side. Per store and phase, the change in
//! throughput, p50 and p99 with its confidence interval and a verdict from Welch's t-test
//! on the per-run figures; before that, every difference between the runs that could
//! explain a change (plan, settings, durability, versions, machine). Pure: reports in,
//! a [`Comparison`] and its markdown out.

pub use super::differences::Difference;
use super::differences::differences;
use super::format::human_us;
use super::model::{PhaseKind, PhaseResult, Report, StoreResult};
use super::stats::{Estimate, Welch};
use crate::catalog::Suite;
use crate::workload::levels::Concurrency;

/// The headers of [`row_cells`].
pub const ROW_HEADERS: [&str; 7] = ["phase", "figure", "base", "new", "change", "p", "verdict"];

/// Runs per side below which no verdict is given.
pub const MIN_RUNS: usize = 3;

/// Confidence of the intervals shown.
pub const CONFIDENCE: f64 = 0.95;

/// A figure compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    Throughput,
    P50,
    P99,
    /// An open-loop phase's response times, from when each operation was due (where both
    /// runs kept them per run); `P50` and `P99` are then the calls' own.
    ResponseP50,
    ResponseP99,
    /// The server's CPU time per operation (where both runs read it).
    ServerCpu,
    /// The bytes the server wrote to storage per operation (where both runs read them).
    Written,
}

impl Figure {
    const ALL: [Figure; 7] = [
        Figure::Throughput,
        Figure::P50,
        Figure::P99,
        Figure::ResponseP50,
        Figure::ResponseP99,
        Figure::ServerCpu,
        Figure::Written,
    ];

    fn label(self) -> &'static str {
        match self {
            Figure::Throughput => "ops/s",
            Figure::P50 => "p50 us",
            Figure::P99 => "p99 us",
            Figure::ResponseP50 => "response p50 us",
            Figure::ResponseP99 => "response p99 us",
            Figure::ServerCpu => "server cpu us/op",
            Figure::Written => "written B/op",
        }
    }

    /// Whether a larger value is better (throughput) or worse (latency, cost).
    fn higher_is_better(self) -> bool {
        self == Figure::Throughput
    }

    /// The per-run figures of a phase; its one figure when it ran once; none when a run
    /// did not measure it. A merged run's percentiles are the whole phase's in every run
    /// (a client's run keeps no histogram of its own): one figure, not a run's each.
    fn samples(self, p: &PhaseResult) -> Vec<f64> {
        let percentile = matches!(
            self,
            Figure::P50 | Figure::P99 | Figure::ResponseP50 | Figure::ResponseP99
        );
        if p.runs.is_empty() || (percentile && !p.client_wall_ms.is_empty()) {
            let server = p.server.as_ref();
            let one = match self {
                Figure::Throughput => Some(p.ops_per_s),
                Figure::P50 => Some(p.latency_us.p50),
                Figure::P99 => Some(p.latency_us.p99),
                Figure::ResponseP50 => p.open_loop.as_ref().map(|o| o.response_us.p50),
                Figure::ResponseP99 => p.open_loop.as_ref().map(|o| o.response_us.p99),
                Figure::ServerCpu => server.and_then(|c| c.cpu_us_per_op()),
                Figure::Written => server.and_then(|c| c.write_bytes_per_op),
            };
            return one.into_iter().collect();
        }
        p.runs
            .iter()
            .map(|r| match self {
                Figure::Throughput => Some(r.ops_per_s),
                Figure::P50 => Some(r.p50_us),
                Figure::P99 => Some(r.p99_us),
                Figure::ResponseP50 => r.response_p50_us,
                Figure::ResponseP99 => r.response_p99_us,
                Figure::ServerCpu => r.server_cpu_us_per_op,
                Figure::Written => r.write_bytes_per_op,
            })
            .collect::<Option<Vec<f64>>>()
            .unwrap_or_default()
    }

    fn format(self, v: f64) -> String {
        match self {
            Figure::Throughput | Figure::Written => format!("{v:.0}"),
            _ => human_us(v),
        }
    }
}

/// What the test says of one figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Better,
    Worse,
    NoChange,
    NotEnoughRuns,
}

impl Verdict {
    fn label(self, figure: Figure) -> &'static str {
        match (self, figure.higher_is_better()) {
            (Verdict::Better, true) => "faster",
            (Verdict::Better, false) => "lower",
            (Verdict::Worse, true) => "slower",
            (Verdict::Worse, false) => "higher",
            (Verdict::NoChange, _) => "no significant change",
            (Verdict::NotEnoughRuns, _) => "not enough runs",
        }
    }
}

/// One figure of one phase in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub phase: String,
    pub figure: Figure,
    pub base: Estimate,
    pub new: Estimate,
    /// `(new - base) / base` in percent, of the means.
    pub change_pct: f64,
    /// The half-width of the change's confidence interval, in percent of the base.
    pub change_half_width_pct: Option<f64>,
    pub p_value: Option<f64>,
    pub verdict: Verdict,
}

/// One store in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreComparison {
    pub store: String,
    pub rows: Vec<Row>,
    /// Phases only one run has (`base: SEARCH small`).
    pub unmatched: Vec<String>,
    /// Why a side has no figures (failed, skipped).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub suite: Suite,
    pub alpha: f64,
    pub differences: Vec<Difference>,
    pub stores: Vec<StoreComparison>,
    /// Stores only one run has (`only in base: redis`).
    pub unmatched_stores: Vec<String>,
    /// What the base run measured and the new one did not: its stores with figures, their
    /// phases and a phase's figures (`redis`, `postgres SEARCH micro`, `postgres INSERT
    /// micro server cpu us/op`).
    pub lacking: Vec<String>,
}

impl Comparison {
    /// The worst significant change for the worse, in percent, over every store and figure
    /// (throughput down or latency up), with where it is.
    pub fn worst_regression(&self) -> Option<(f64, String)> {
        self.stores
            .iter()
            .flat_map(|s| s.rows.iter().map(move |r| (s, r)))
            .filter(|(_, r)| r.verdict == Verdict::Worse)
            .map(|(s, r)| {
                (
                    r.change_pct.abs(),
                    format!("{} {} {}", s.store, r.phase, r.figure.label()),
                )
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
    }

    /// The throughputs and latencies the runs were too few to judge (`sqlite SEARCH micro
    /// ops/s`).
    pub fn unjudged(&self) -> Vec<String> {
        self.stores
            .iter()
            .flat_map(|s| s.rows.iter().map(move |r| (s, r)))
            .filter(|(_, r)| {
                matches!(
                    r.figure,
                    Figure::Throughput
                        | Figure::P50
                        | Figure::P99
                        | Figure::ResponseP50
                        | Figure::ResponseP99
                )
            })
            .filter(|(_, r)| r.verdict == Verdict::NotEnoughRuns)
            .map(|(s, r)| format!("{} {} {}", s.store, r.phase, r.figure.label()))
            .collect()
    }
}

/// Compares `new` against `base`. Runs of different suites are refused.
pub fn compare(base: &Report, new: &Report, alpha: f64) -> Result<Comparison, String> {
    if base.plan.suite != new.plan.suite {
        return Err(format!(
            "the runs are of different suites ({} and {}): their phases do not correspond",
            base.plan.suite, new.plan.suite
        ));
    }
    // One load client's share does a part of its run's work: beside a whole run (or another
    // share of another count) its figures would read as a change.
    let share = |r: &Report| r.plan.client.as_ref().map(|c| (c.index, c.of));
    if share(base) != share(new) {
        let what = |r: &Report| match share(r) {
            Some((k, n)) => format!("client {k}/{n}'s share of a run"),
            None => "a whole run".to_string(),
        };
        return Err(format!(
            "base is {} and new is {}: a share does only its part of the run's work; merge \
             each run's shares first (dbcompare merge) and compare the merged runs",
            what(base),
            what(new)
        ));
    }
    let mut stores = Vec::new();
    let mut unmatched_stores = Vec::new();
    let mut lacking = Vec::new();
    for b in &base.stores {
        match new.stores.iter().find(|n| n.store == b.store) {
            Some(n) => {
                for p in &b.phases {
                    match n.phases.iter().find(|q| same_phase(p, q)) {
                        None => lacking.push(format!("{} {}", b.store, phase_name(p))),
                        // A figure the base measured and the new run did not (a server's
                        // CPU too short to read): it cannot be judged either.
                        Some(q) => lacking.extend(
                            Figure::ALL
                                .iter()
                                .filter(|f| !f.samples(p).is_empty() && f.samples(q).is_empty())
                                .map(|f| format!("{} {} {}", b.store, phase_name(p), f.label())),
                        ),
                    }
                }
                stores.push(compare_store(b, n, alpha));
            }
            None => {
                if !b.phases.is_empty() {
                    lacking.push(b.store.clone());
                }
                unmatched_stores.push(format!("only in base: {}", b.store));
            }
        }
    }
    for n in &new.stores {
        if !base.stores.iter().any(|b| b.store == n.store) {
            unmatched_stores.push(format!("only in new: {}", n.store));
        }
    }
    Ok(Comparison {
        suite: base.plan.suite,
        alpha,
        differences: differences(base, new),
        stores,
        unmatched_stores,
        lacking,
    })
}

/// A phase's name in the comparison: `SEARCH tiny`, `SEARCH tiny x4`, `a READ`.
fn phase_name(p: &PhaseResult) -> String {
    let name = match p.kind {
        PhaseKind::Insert | PhaseKind::Search => format!("{} {}", p.kind.label(), p.size.name),
        _ => p.size.name.clone(),
    };
    if p.concurrency > Concurrency::ONE {
        format!("{name} x{}", p.concurrency)
    } else {
        name
    }
}

fn same_phase(a: &PhaseResult, b: &PhaseResult) -> bool {
    a.kind == b.kind && a.size.name == b.size.name && a.concurrency == b.concurrency
}

/// One store in two runs (or two variants in one run: `base` against `new`), phase by
/// phase.
pub fn compare_store(base: &StoreResult, new: &StoreResult, alpha: f64) -> StoreComparison {
    let mut notes = Vec::new();
    for (side, s) in [("base", base), ("new", new)] {
        if let Some(error) = &s.error {
            notes.push(format!("{side}: {}: {error}", s.status));
        }
    }
    let mut rows = Vec::new();
    let mut unmatched = Vec::new();
    for b in &base.phases {
        let Some(n) = new.phases.iter().find(|n| same_phase(b, n)) else {
            unmatched.push(format!("only in base: {}", phase_name(b)));
            continue;
        };
        rows.extend(
            Figure::ALL
                .iter()
                .filter(|f| !f.samples(b).is_empty() && !f.samples(n).is_empty())
                .map(|&f| compare_figure(b, n, f, alpha)),
        );
    }
    for n in &new.phases {
        if !base.phases.iter().any(|b| same_phase(b, n)) {
            unmatched.push(format!("only in new: {}", phase_name(n)));
        }
    }
    StoreComparison {
        store: base.store.clone(),
        rows,
        unmatched,
        notes,
    }
}

/// One figure of a phase measured twice (two runs of a store, or two stores in one run):
/// `new` against `base`, judged by Welch's t-test on their per-run figures at `alpha`.
pub fn compare_figure(base: &PhaseResult, new: &PhaseResult, figure: Figure, alpha: f64) -> Row {
    let (a, b) = (figure.samples(base), figure.samples(new));
    let estimate = |v: &[f64]| {
        Estimate::of(v, CONFIDENCE).unwrap_or(Estimate {
            n: 0,
            mean: f64::NAN,
            half_width: None,
        })
    };
    let (base_est, new_est) = (estimate(&a), estimate(&b));
    let change_pct = (new_est.mean - base_est.mean) / base_est.mean * 100.0;
    let enough = a.len() >= MIN_RUNS && b.len() >= MIN_RUNS;
    let welch = Welch::test(&a, &b, CONFIDENCE).filter(|_| enough);
    let verdict = match welch {
        None => Verdict::NotEnoughRuns,
        Some(w) if w.p_value >= alpha => Verdict::NoChange,
        Some(w) if (w.difference > 0.0) == figure.higher_is_better() => Verdict::Better,
        Some(_) => Verdict::Worse,
    };
    Row {
        phase: phase_name(base),
        figure,
        base: base_est,
        new: new_est,
        change_pct,
        change_half_width_pct: welch.map(|w| w.half_width / base_est.mean.abs() * 100.0),
        p_value: welch.map(|w| w.p_value),
        verdict,
    }
}

/// The comparison in markdown, to paste into an issue: the differences between the runs
/// first (a warning when some of them change what was measured), then a table per store.
/// Significant changes are in bold.
pub fn markdown(c: &Comparison, base_name: &str, new_name: &str) -> String {
    let mut out = format!("# dbcompare compare: {base_name} -> {new_name}\n\n");
    out += &format!(
        "Suite `{}`. Each value is the mean of the runs +- its {:.0}% confidence interval; the \
         change is new against base with its interval; the verdict is Welch's t-test on the \
         per-run figures at p < {} (\"not enough runs\" below {MIN_RUNS} runs per side).\n\n",
        c.suite,
        CONFIDENCE * 100.0,
        c.alpha
    );
    out += "## Differences between the runs\n\n";
    if c.differences.is_empty() {
        out += "None: same plan, machine, versions and settings.\n\n";
    } else {
        let confounding: Vec<&str> = c
            .differences
            .iter()
            .filter(|d| d.confounds)
            .map(|d| d.what.as_str())
            .collect();
        if !confounding.is_empty() {
            out += &format!(
                "**Warning: the runs differ in what was measured ({}).** A change below may be \
                 that difference's doing, not the store's or the driver's.\n\n",
                confounding.join(", ")
            );
        }
        out += "| | base | new |\n|---|---|---|\n";
        for d in &c.differences {
            out += &format!(
                "| {} | {} | {} |\n",
                cell(&d.what),
                cell(&d.base),
                cell(&d.new)
            );
        }
        out.push('\n');
    }
    for line in &c.unmatched_stores {
        out += &format!("- {line}\n");
    }
    if !c.unmatched_stores.is_empty() {
        out.push('\n');
    }
    for s in &c.stores {
        out += &format!("## {}\n\n", s.store);
        for note in &s.notes {
            out += &format!("- {}\n", cell(note));
        }
        if !s.notes.is_empty() {
            out.push('\n');
        }
        if !s.rows.is_empty() {
            out += "| phase | figure | base | new | change | p | verdict |\n";
            out += "|---|---|---:|---:|---:|---:|---|\n";
            for r in &s.rows {
                out += &format!("| {} |\n", row_cells(r).join(" | "));
            }
            out.push('\n');
        }
        for line in &s.unmatched {
            out += &format!("- {line}\n");
        }
        if !s.unmatched.is_empty() {
            out.push('\n');
        }
    }
    out
}

/// A row's cells: phase, figure, base, new, change, p, verdict (markdown: significant
/// changes in bold).
pub fn row_cells(r: &Row) -> Vec<String> {
    // An interval from fewer runs than a verdict needs is too wide to read: the runs then.
    let value = |e: &Estimate| match e.half_width {
        Some(h) if e.n >= MIN_RUNS => {
            format!("{} +- {}", r.figure.format(e.mean), r.figure.format(h))
        }
        _ => format!(
            "{} ({} run{})",
            r.figure.format(e.mean),
            e.n,
            if e.n == 1 { "" } else { "s" }
        ),
    };
    // A change from a base of 0 has no percentage: `-`, not NaN or inf.
    let mut change = match r.change_half_width_pct {
        _ if !r.change_pct.is_finite() => "-".to_string(),
        Some(h) if h.is_finite() => format!("{:+.1}% +- {h:.1}%", r.change_pct),
        _ => format!("{:+.1}%", r.change_pct),
    };
    let mut verdict = r.verdict.label(r.figure).to_string();
    if matches!(r.verdict, Verdict::Better | Verdict::Worse) {
        change = format!("**{change}**");
        verdict = format!("**{verdict}**");
    }
    let p = r.p_value.map_or_else(
        || "-".to_string(),
        |p| {
            if p < 0.001 {
                "<0.001".to_string()
            } else {
                format!("{p:.3}")
            }
        },
    );
    vec![
        cell(&r.phase),
        r.figure.label().to_string(),
        value(&r.base),
        value(&r.new),
        change,
        p,
        verdict,
    ]
}

/// Text safe in a markdown table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}
