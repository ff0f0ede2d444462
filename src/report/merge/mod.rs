//! `dbcompare merge`: the run.json files of N load clients (`--client K/N`, one
//! `--start-at`) as one run. Counts add up; latency histograms are merged exactly (never
//! averaged percentiles); the clients began every phase together, so a phase's wall time is
//! its slowest client's and its throughput every client's operations over it; time series
//! add up interval by interval from the common start. What cannot be one run is refused:
//! another plan, seed, schema or dbcompare version, a share missing or given twice.

//!
//! Here the run and each store; one phase from every client's in `phase.rs`.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};

use super::model::{self, MergedShare, PhaseResult, Report, RunStatus, StoreResult, StoreStatus};
use crate::workload::levels::Concurrency;
use crate::workload::record::Size;

mod phase;

/// Merges the reports (each with the file it came from, for messages), in any order.
pub fn merge(inputs: Vec<(String, Report)>) -> Result<Report> {
    let Some((_, first)) = inputs.first() else {
        bail!("merge: no run to merge");
    };
    let n = client_of(&inputs[0])?.of;
    let mut by_share: BTreeMap<u32, (String, Report)> = BTreeMap::new();
    for (file, report) in inputs.iter().cloned() {
        let share = client_of(&(file.clone(), report.clone()))?;
        if share.of != n {
            bail!(
                "merge: {file} is client {}/{} but {} is one of {n}",
                share.index,
                share.of,
                inputs[0].0
            );
        }
        same_run(&inputs[0].0, first, &file, &report)?;
        if let Some((other, _)) = by_share.get(&share.index) {
            bail!(
                "merge: client {}/{n} is given twice ({other} and {file})",
                share.index
            );
        }
        by_share.insert(share.index, (file, report));
    }
    let missing: Vec<String> = (1..=n)
        .filter(|k| !by_share.contains_key(k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        bail!(
            "merge: client(s) {} missing: every one of the {n} clients' run.json is needed",
            missing.join(", ")
        );
    }
    let shares: Vec<(String, Report)> = by_share.into_values().collect();
    let lead = &shares[0].1;
    let mut plan = lead.plan.clone();
    plan.client = None;
    // N clients at concurrency c are N x c tasks at once, on N schedules.
    for level in &mut plan.concurrency {
        *level = level
            .times(n)
            .ok_or_else(|| anyhow!("merge: concurrency {level} times {n} clients is too many"))?;
    }
    plan.rate = plan.rate.map(|r| r * f64::from(n));
    let mut stores = Vec::new();
    for name in &lead.plan.stores {
        // By name: a client stopped early (Ctrl-C, a kill) has fewer stores.
        let theirs: Vec<Option<&StoreResult>> = shares
            .iter()
            .map(|(_, r)| r.stores.iter().find(|s| s.store == *name))
            .collect();
        let Some(first) = theirs.iter().flatten().next() else {
            continue;
        };
        stores.push(merge_store(first, &theirs).with_context(|| name.clone())?);
    }
    let status = shares
        .iter()
        .map(|(_, r)| r.status)
        .max_by_key(|s| match s {
            RunStatus::Complete => 0,
            RunStatus::Partial => 1,
            RunStatus::Interrupted => 2,
        })
        .unwrap_or(RunStatus::Complete);
    // What stopped the interrupted clients, each signal once.
    let mut signals: Vec<&str> = shares
        .iter()
        .filter_map(|(_, r)| r.stopped_by.as_deref())
        .collect();
    signals.sort_unstable();
    signals.dedup();
    Ok(Report {
        schema_version: lead.schema_version,
        tool: lead.tool.clone(),
        status,
        stopped_by: (!signals.is_empty()).then(|| signals.join(" and ")),
        started_at: shares
            .iter()
            .map(|(_, r)| r.started_at.clone())
            .min()
            .unwrap_or_default(),
        finished_at: shares
            .iter()
            .map(|(_, r)| r.finished_at.clone())
            .max()
            .unwrap_or_default(),
        plan,
        machine: lead.machine.clone(),
        floor: lead.floor.clone(),
        client_peak_rss_bytes: shares
            .iter()
            .filter_map(|(_, r)| r.client_peak_rss_bytes)
            .max(),
        stores,
        interleaved: lead.interleaved.clone(),
        shares: shares
            .iter()
            .map(|(file, r)| MergedShare {
                index: r.plan.client.as_ref().map_or(0, |c| c.index),
                file: file.clone(),
                started_at: r.started_at.clone(),
                finished_at: r.finished_at.clone(),
                machine: r.machine.clone(),
                floor: r.floor.clone(),
            })
            .collect(),
    })
}

/// Reads the run.json files and merges them.
pub fn merge_files(paths: &[impl AsRef<Path>]) -> Result<Report> {
    let inputs = paths
        .iter()
        .map(|p| {
            let p = p.as_ref();
            Ok((p.display().to_string(), super::json::load(p)?))
        })
        .collect::<Result<Vec<_>>>()?;
    merge(inputs)
}

fn client_of((file, report): &(String, Report)) -> Result<model::ClientShare> {
    report.plan.client.clone().ok_or_else(|| {
        anyhow!(
            "merge: {file} is not one client's share of a run (it was not made with --client K/N)"
        )
    })
}

/// Refuses two shares that are not of one run.
fn same_run(a_file: &str, a: &Report, b_file: &str, b: &Report) -> Result<()> {
    let differ = |what: &str, x: String, y: String| -> Result<()> {
        if x == y {
            Ok(())
        } else {
            Err(anyhow!(
                "merge: {a_file} and {b_file} are not shares of one run: {what} {x} against {y}"
            ))
        }
    };
    differ(
        "schema version",
        a.schema_version.to_string(),
        b.schema_version.to_string(),
    )?;
    differ("dbcompare", a.tool.version.clone(), b.tool.version.clone())?;
    let start = |r: &Report| r.plan.client.as_ref().map(|c| c.start_at.clone());
    differ(
        "--start-at",
        start(a).unwrap_or_default(),
        start(b).unwrap_or_default(),
    )?;
    let plan = |r: &Report| {
        let mut p = r.plan.clone();
        p.client = None;
        // Each machine may run its own number of event loops.
        p.client_threads = None;
        serde_json::to_string(&p).unwrap_or_default()
    };
    if plan(a) != plan(b) {
        let (pa, pb) = (&a.plan, &b.plan);
        let fields = [
            ("suite", pa.suite.to_string(), pb.suite.to_string()),
            ("stores", pa.stores.join(","), pb.stores.join(",")),
            ("seed", pa.seed.to_string(), pb.seed.to_string()),
            ("sizes", sizes(&pa.sizes), sizes(&pb.sizes)),
            (
                "searches per insert",
                pa.searches_per_insert.to_string(),
                pb.searches_per_insert.to_string(),
            ),
            ("durability", pa.durability.clone(), pb.durability.clone()),
            ("runs", pa.runs.to_string(), pb.runs.to_string()),
            (
                "warm-up runs",
                pa.warmup_runs.to_string(),
                pb.warmup_runs.to_string(),
            ),
            (
                "concurrency",
                levels(&pa.concurrency),
                levels(&pb.concurrency),
            ),
            ("rate", rate(pa.rate), rate(pb.rate)),
        ];
        for (what, x, y) in fields {
            differ(what, x, y)?;
        }
        differ("the plan", plan(a), plan(b))?;
    }
    Ok(())
}

/// Sizes as a plan names them: `micro=100,tiny=1000`.
fn sizes(sizes: &[Size]) -> String {
    let named: Vec<String> = sizes
        .iter()
        .map(|s| format!("{}={}", s.name, s.records))
        .collect();
    named.join(",")
}

/// Concurrency levels as `--concurrency` takes them: `1,8`.
fn levels(levels: &[Concurrency]) -> String {
    let named: Vec<String> = levels.iter().map(Concurrency::to_string).collect();
    named.join(",")
}

/// An open-loop rate, or none.
fn rate(rate: Option<f64>) -> String {
    rate.map_or_else(
        || "none (closed loop)".to_string(),
        |r| format!("{r} ops/s"),
    )
}

/// One store's result from every client's (`None`: that client has no result for it).
fn merge_store(lead: &StoreResult, theirs: &[Option<&StoreResult>]) -> Result<StoreResult> {
    let mut merged = lead.clone();
    let n = theirs.len();
    let failures: Vec<String> = theirs
        .iter()
        .enumerate()
        .filter_map(|(k, s)| match s {
            None => Some(format!(
                "client {}/{n}: no result for this store (its run stopped before it)",
                k + 1
            )),
            Some(s) if s.status != StoreStatus::Ok => Some(format!(
                "client {}/{n}: {}",
                k + 1,
                s.error.as_deref().unwrap_or("no reason recorded")
            )),
            Some(_) => None,
        })
        .collect();
    let missing = theirs.iter().any(Option::is_none);
    let theirs: Vec<&StoreResult> = theirs.iter().flatten().copied().collect();
    // A client that skipped a store another one ran is a failure of the store's run, whose
    // measured phases are kept (a skipped store would be in no table).
    let ran = theirs.iter().any(|s| s.status != StoreStatus::Skipped);
    merged.status = theirs
        .iter()
        .map(|s| match s.status {
            StoreStatus::Skipped if ran => StoreStatus::Failed,
            status => status,
        })
        .chain(missing.then_some(StoreStatus::Failed))
        .max_by_key(|s| match s {
            StoreStatus::Ok => 0,
            StoreStatus::Skipped => 1,
            StoreStatus::Interrupted => 2,
            StoreStatus::Failed => 3,
        })
        .unwrap_or(StoreStatus::Ok);
    merged.error = (!failures.is_empty()).then(|| failures.join("; "));
    // Each client's own loops, kept when every client ran as many.
    if theirs
        .iter()
        .any(|s| s.client_threads != lead.client_threads)
    {
        merged.client_threads = None;
    }
    // Every phase any client ran, in the lead's order, then the others' (a YCSB client
    // whose share of a run drew no insert has no INSERT phase of it).
    let mut phases: Vec<&PhaseResult> = Vec::new();
    for p in theirs.iter().flat_map(|s| &s.phases) {
        let same = |q: &&PhaseResult| {
            q.kind == p.kind && q.size.name == p.size.name && q.concurrency == p.concurrency
        };
        if !phases.iter().any(same) {
            phases.push(p);
        }
    }
    merged.phases = phases
        .into_iter()
        .map(|p| {
            let same: Vec<&PhaseResult> = theirs
                .iter()
                .filter_map(|s| {
                    s.phases.iter().find(|q| {
                        q.kind == p.kind
                            && q.size.name == p.size.name
                            && q.concurrency == p.concurrency
                    })
                })
                .collect();
            phase::merge_phase(&same, n)
                .with_context(|| format!("{} {}", p.kind.label(), p.size.name))
        })
        .collect::<Result<_>>()?;
    Ok(merged)
}
