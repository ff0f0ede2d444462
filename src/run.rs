//! The runner: a resolved plan in, a report out. First every store with settings of its
//! own (a variant's `--config` and `--set`) is started and its settings read back, so that
//! a setting its server refuses stops the run before anything is measured. Then every store
//! in turn, the variants of one store together (`group.rs`): where its server comes from
//! (a URL, a throw-away local server, or embedded), its connections and the client's event
//! loops, its suite under the stall watchdog (the variants' suites taking turns run by run),
//! then the server stopped; the report written after every phase, so a run killed at any
//! point keeps what it finished.

use anyhow::Result;

use crate::interrupt;
use crate::machine::Machine;
use crate::plan::RunPlan;
use crate::report::OutputDir;
use crate::report::model::{Report, RunStatus, StoreResult, StoreStatus, Tool};
use crate::suite::Observer;

mod group;

pub use group::UNFINISHED;
use group::{Work, now, prepare, run_group, store_groups};

/// Runs every store of the plan in turn (the variants of one store together). A store that
/// fails is reported as failed and the next one runs; Ctrl-C stops the run after the current
/// operation. After each phase and each store the report so far is written to `out` (marked
/// partial until the run ends). A setting a store's server refuses is a usage error, before
/// anything is measured.
pub async fn run_plan(
    plan: &RunPlan,
    out: Option<&OutputDir>,
    observer: &mut dyn Observer,
) -> Result<Report> {
    let mut report = Report {
        schema_version: crate::report::model::SCHEMA_VERSION,
        tool: Tool::current(crate::store::registry::built_on_request()),
        status: RunStatus::Partial,
        stopped_by: None,
        started_at: now(),
        finished_at: now(),
        plan: plan.summary(),
        machine: Machine::detect(),
        floor: None,
        client_peak_rss_bytes: None,
        stores: Vec::new(),
        interleaved: Vec::new(),
        shares: Vec::new(),
    };
    if plan.alloc_sites {
        if crate::measure::allocations().is_none() {
            anyhow::bail!(
                "--alloc-sites needs the counting allocator, which is off \
                 (DBCOMPARE_ALLOC_COUNTING=off)"
            );
        }
        crate::measure::sites::enable();
    }
    let secrets = plan.secrets();
    let mut prepared = prepare(plan, &secrets).await?;
    if plan.floor {
        // The directory the throw-away servers (and SQLite's temporary file) keep data in.
        let dir = plan.data_dirs.under.clone();
        match tokio::task::spawn_blocking(move || crate::measure::floor::measure(&dir)).await {
            Ok(Ok(floor)) => {
                observer.floor_measured(&floor);
                report.floor = Some(floor);
            }
            Ok(Err(e)) => {
                crate::output::errln!("warning: the machine's floor was not measured: {e:#}")
            }
            Err(e) => crate::output::errln!("warning: the machine's floor was not measured: {e}"),
        }
    }
    let work = Work::of(plan);
    for group in store_groups(plan) {
        if interrupt::requested() {
            break;
        }
        let members = group.into_iter().map(|i| (i, prepared[i].take()));
        run_group(
            members.collect(),
            plan,
            &work,
            &mut report,
            out,
            observer,
            &secrets,
        )
        .await;
    }
    report.status = if interrupt::requested() {
        // The stores whose turn never came are named, as skipped (with why they could not
        // have run, where that was known), not left out; in plan order.
        let mut all = Vec::new();
        for store in &plan.stores {
            let name = store.id.to_string();
            match report.stores.iter().position(|s| s.store == name) {
                Some(i) => all.push(report.stores.swap_remove(i)),
                None => {
                    let mut result = StoreResult::new(&name);
                    result.status = StoreStatus::Skipped;
                    result.error = Some(match &store.target {
                        crate::plan::Target::Unavailable(why) => why.clone(),
                        _ => "the run was interrupted before its turn".to_string(),
                    });
                    all.push(result);
                }
            }
        }
        all.append(&mut report.stores);
        report.stores = all;
        report.stopped_by = crate::interrupt::stopped_by().map(str::to_string);
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    };
    report.finished_at = now();
    report.client_peak_rss_bytes = crate::measure::peak_rss_bytes();
    if let Some(out) = out {
        out.write(&report)?;
    }
    Ok(report)
}
