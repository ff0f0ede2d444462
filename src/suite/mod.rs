//! Suites and the runner that drives every store of a plan through them. The classic suite
//! is the blog's; later suites plug in beside it.

use anyhow::Result;
use chrono::{SecondsFormat, Utc};

use crate::interrupt;
use crate::machine::Machine;
use crate::plan::RunPlan;
use crate::record::Size;
use crate::report::OutputDir;
use crate::report::model::{
    PhaseKind, PhaseResult, Report, RunStatus, StoreInfo, StoreResult, StoreStatus, Tool,
};
use crate::store::Availability;

pub mod classic;

/// Hears about a run as it goes: the console prints lines and draws progress bars from these.
pub trait Observer {
    fn store_started(&mut self, _store: &str) {}
    fn store_described(&mut self, _store: &str, _info: &StoreInfo) {}
    /// `which` is `initial` or `final`.
    fn size_measured(&mut self, _which: &str, _bytes: u64) {}
    fn phase_started(&mut self, _kind: PhaseKind, _size: &Size, _ops: u64) {}
    /// Operations done so far in the current phase (called every few hundred operations).
    fn progress(&mut self, _done: u64) {}
    fn phase_finished(&mut self, _phase: &PhaseResult) {}
    fn store_finished(&mut self, _result: &StoreResult) {}
}

/// An observer that ignores everything.
pub struct Silent;

impl Observer for Silent {}

fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Runs every store of the plan in turn. A store that fails is reported as failed and the
/// next one runs; Ctrl-C stops the run after the current operation. After each store the
/// report so far is written to `out` (marked partial until the run ends).
pub async fn run_plan(
    plan: &RunPlan,
    out: Option<&OutputDir>,
    observer: &mut dyn Observer,
) -> Result<Report> {
    let mut report = Report {
        schema_version: crate::report::model::SCHEMA_VERSION,
        tool: Tool::current(),
        status: RunStatus::Partial,
        started_at: now(),
        finished_at: now(),
        plan: plan.summary(),
        machine: Machine::detect(),
        stores: Vec::new(),
    };
    let workload = classic::Workload::generate(&plan.classic);
    for &kind in &plan.stores {
        if interrupt::requested() {
            break;
        }
        let mut result = StoreResult::new(kind.name());
        observer.store_started(kind.name());
        match kind.availability(&plan.store_options) {
            Availability::Unavailable(why) => {
                result.status = StoreStatus::Skipped;
                result.error = Some(why);
            }
            Availability::Available(_) => {
                let outcome = match kind.connect(&plan.store_options).await {
                    Ok(mut store) => {
                        classic::run(&mut store, &workload, &mut result, observer).await
                    }
                    Err(e) => Err(e.context(format!("connecting to {kind}"))),
                };
                if let Err(e) = outcome {
                    result.status = if interrupt::requested() {
                        StoreStatus::Interrupted
                    } else {
                        StoreStatus::Failed
                    };
                    result.error = Some(format!("{e:#}"));
                }
            }
        }
        observer.store_finished(&result);
        report.stores.push(result);
        report.finished_at = now();
        if let Some(Err(e)) = out.map(|o| o.write(&report)) {
            eprintln!("warning: could not write the partial results: {e:#}");
        }
    }
    report.status = if interrupt::requested() {
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    };
    report.finished_at = now();
    if let Some(out) = out {
        out.write(&report)?;
    }
    Ok(report)
}
