//! The runner: a resolved plan in, a report out. Every store of the plan in turn: where its
//! server comes from (a URL, a throw-away local server, or embedded), its connections and
//! the client's event loops, its suite under the stall watchdog, then the server stopped;
//! the report written after every store.

use std::sync::Arc;

use anyhow::{Context, Result};
use chrono::{SecondsFormat, Utc};

use crate::catalog::{StoreKind, StoreOptions};
use crate::cli::Suite;
use crate::interrupt;
use crate::machine::Machine;
use crate::plan::{RunPlan, Target};
use crate::report::OutputDir;
use crate::report::model::{Deployment, Report, RunStatus, StoreResult, StoreStatus, Tool};
use crate::server::{self, LocalServer};
use crate::store::ConnectSpec;
use crate::store::url::{StoreUrl, mask_userinfo};
use crate::suite::clients::Clients;
use crate::suite::{Observer, classic, driver, pool, watchdog};

/// Now, as RFC 3339 (seconds).
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
    let workload = match plan.suite {
        Suite::Classic => classic::Workload::generate(&plan.classic),
        _ => classic::Workload::generate(&classic::ClassicPlan::once(Vec::new(), 1, 0)),
    };
    let secrets = plan.secrets();
    for (kind, target) in &plan.stores {
        if interrupt::requested() {
            break;
        }
        let mut result = StoreResult::new(kind.name());
        observer.store_started(kind.name());
        if let Err(e) = run_store(*kind, target, plan, &workload, &mut result, observer).await {
            result.status = if interrupt::requested() {
                StoreStatus::Interrupted
            } else if matches!(target, Target::Unavailable(_)) {
                StoreStatus::Skipped
            } else {
                StoreStatus::Failed
            };
            result.error = Some(scrub(&format!("{e:#}"), &secrets));
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

/// Secrets shorter than this are masked only inside URLs: replacing every `p` of a
/// message would make it unreadable, and a password that short guards nothing.
const MIN_SCRUBBED_SECRET: usize = 4;

/// `text` with every URL's password, and every secret, replaced by `***`.
fn scrub(text: &str, secrets: &[String]) -> String {
    let masked = mask_userinfo(text);
    secrets
        .iter()
        .filter(|s| s.len() >= MIN_SCRUBBED_SECRET)
        .fold(masked, |t, s| t.replace(s.as_str(), "***"))
}

/// One store: start its server if it needs one, connect, run the suite, stop the server.
async fn run_store(
    kind: StoreKind,
    target: &Target,
    plan: &RunPlan,
    workload: &classic::Workload,
    result: &mut StoreResult,
    observer: &mut dyn Observer,
) -> Result<()> {
    let local: Option<LocalServer>;
    let url: Option<StoreUrl>;
    match target {
        Target::Unavailable(why) => anyhow::bail!("{why}"),
        Target::Embedded => {
            local = None;
            url = None;
            result.deployment = Some(deployment("embedded", None));
        }
        Target::Url(u) => {
            local = None;
            url = Some(u.clone());
            result.deployment = Some(deployment("url", Some(u)));
        }
        Target::Local(installation) => {
            let installation = installation.clone();
            let (durability, keep) = (plan.durability, plan.keep_data);
            let server = tokio::task::spawn_blocking(move || {
                server::start(kind, &installation, durability, keep)
            })
            .await
            .context("the server start panicked")??;
            let u = StoreUrl::parse(kind, &server.url())?;
            let mut d = deployment("local server", Some(&u));
            d.server = Some(server.installation.version.clone());
            d.start_ms = Some(server.start_time.as_secs_f64() * 1e3);
            d.data_dir = Some(server.dir().display().to_string());
            result.deployment = Some(d);
            url = Some(u);
            local = Some(server);
        }
    }
    let data_dir = local.as_ref().map(LocalServer::data_dir);
    // Every connection of an embedded store opens the same file.
    let sqlite_dir = match (kind.is_embedded(), &plan.options.sqlite_path) {
        (true, None) => Some(
            tempfile::Builder::new()
                .prefix("dbcompare-sqlite-")
                .tempdir()
                .context("creating a temporary directory for the SQLite database")?,
        ),
        _ => None,
    };
    let sqlite_path = match &sqlite_dir {
        Some(dir) => Some(dir.path().join("dbcompare.sqlite")),
        None => plan.options.sqlite_path.clone(),
    };
    let spec = Arc::new(ConnectSpec {
        url,
        data_dir,
        durability: plan.durability,
        connect_timeout: plan.connect_timeout,
        options: StoreOptions {
            sqlite_path,
            ..plan.options.clone()
        },
    });
    let connector = move || {
        let spec = Arc::clone(&spec);
        async move { kind.connect(&spec).await }
    };
    let clients = Clients::start(connector, plan.client_threads)?;
    let suite = async {
        match plan.suite {
            Suite::Classic => classic::run(&clients, workload, result, observer).await,
            Suite::Driver => driver::run(&clients, &plan.driver, result, observer).await,
            Suite::Pool => pool::run(clients.connector(), &plan.pool, result, observer).await,
        }
    };
    let outcome = watchdog::guard(plan.stall_timeout, suite).await;
    drop(clients);
    if let Some(server) = local {
        // Stopping takes a moment (a final fsync); a failure to stop is reported but does
        // not undo the figures.
        let stopped = tokio::task::spawn_blocking(move || server.stop()).await;
        match stopped {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("warning: stopping the local {kind} server: {e:#}"),
            Err(e) => eprintln!("warning: stopping the local {kind} server panicked: {e}"),
        }
    }
    outcome
}

fn deployment(kind: &str, url: Option<&StoreUrl>) -> Deployment {
    Deployment {
        kind: kind.to_string(),
        url: url.map(|u| u.masked().to_string()),
        server: None,
        start_ms: None,
        data_dir: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_scrubbed_from_messages() {
        let secrets = vec!["hunter2".to_string(), "p".to_string()];
        assert_eq!(
            scrub(
                "auth hunter2 failed for redis://:p@h:1/0 (http://h)",
                &secrets
            ),
            "auth *** failed for redis://:***@h:1/0 (http://h)"
        );
    }
}
