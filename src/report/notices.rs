//! What a reader must see before trusting a figure, in every report: each store's
//! warnings (how it ended, its phases' errors, retries, drift, client-bound figures), their
//! count, and the one line naming the stores that did not run and why.

use super::lines::{floor_ratio, retried};

/// A phase's p50 under this share of its floor is a floor read in a slow spell.
const BELOW_FLOOR: f64 = 0.8;
use super::model::{Report, StoreResult, StoreStatus};
use super::verdict::{phase_name, ran};
use super::warnings::{schedule_warning, series_warnings};

/// Every warning a reader must see before trusting a figure, grouped by store: how a
/// store that did not finish well ended, and its phases' errors, retries, early stops,
/// open loops that fell behind, drift, warm-up and client-bound figures. A skipped store
/// is in [`skipped_line`] instead.
pub fn warnings(report: &Report) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for s in report.stores.iter().filter(|s| ran(s)) {
        let mut lines = Vec::new();
        if s.status != StoreStatus::Ok {
            let why = s.error.as_deref().unwrap_or("no reason recorded");
            lines.push(format!("{}: {why}", s.status));
        }
        if let Some(w) = durability_warning(s) {
            lines.push(w);
        }
        for p in &s.phases {
            let phase = phase_name(p);
            if p.errors > 0 {
                lines.push(format!(
                    "{phase}: {} error(s) in {} operations",
                    p.errors, p.ops
                ));
            }
            if p.retries > 0 {
                lines.push(format!("{phase}: {}", retried(p)));
            }
            if p.incomplete {
                lines.push(format!("{phase}: stopped before its last operation"));
            }
            if let Some(w) = schedule_warning(p) {
                lines.push(format!("{phase}: {w}"));
            }
            for w in series_warnings(p) {
                lines.push(format!("{phase}: {w}"));
            }
            if let Some(why) = &p.client_bound {
                lines.push(format!("{phase}: client-bound: {why}"));
            }
            // A phase faster than the least the machine allowed: the floor was read in a
            // slower spell than the phase ran in.
            if let Some((m, what)) = floor_ratio(report.floor.as_ref(), s, p)
                && m < BELOW_FLOOR
            {
                lines.push(if what == "fsync" {
                    format!(
                        "{phase}: its p50 is {m:.1}x the fsync measured before the stores: its \
                         commits did not each wait for a sync of their own (a relaxed \
                         setting), or the floor was read in a slower spell"
                    )
                } else {
                    format!(
                        "{phase}: its p50 is {m:.1}x the loopback round trip measured before \
                         the stores (read in a slower spell, or the floor's echo woke more \
                         slowly than this server does): this run's multiples of the floor are \
                         not to be compared with another machine's"
                    )
                });
            }
        }
        if !lines.is_empty() {
            out.push((s.store.clone(), lines));
        }
    }
    out
}

/// The durability mode a server given by URL ran in, read back from it, where it is not the
/// one asked for: such a server is used as it is, so every figure is of the mode it was in.
/// (Asked only of one given no settings of its own: with --config or --set the mode is the
/// user's to set, as on a server dbcompare starts.)
fn durability_warning(s: &StoreResult) -> Option<String> {
    let asked = s.deployment.as_ref()?.durability_asked.as_deref()?;
    let found = &s.info.as_ref()?.durability;
    (found != asked).then(|| {
        format!(
            "it ran {found} where {asked} was asked (a server given by URL is used as it is): \
             every figure is {found}"
        )
    })
}

/// The warnings' heading with their count and each store's: `5 warnings: postgres 3,
/// sqlite 2`; a store that failed is counted apart, its failure first: `1 failure and 2
/// warnings: postgres 1, sqlite 2`.
pub fn warnings_summary(report: &Report, warnings: &[(String, Vec<String>)]) -> String {
    let total: usize = warnings.iter().map(|(_, w)| w.len()).sum();
    let failures = report
        .stores
        .iter()
        .filter(|s| s.status == StoreStatus::Failed && warnings.iter().any(|(w, _)| *w == s.store))
        .count();
    let each: Vec<String> = warnings
        .iter()
        .map(|(store, w)| format!("{store} {}", w.len()))
        .collect();
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let counted = match failures {
        0 => plural(total, "warning"),
        f if f == total => plural(f, "failure"),
        f => format!(
            "{} and {}",
            plural(f, "failure"),
            plural(total - f, "warning")
        ),
    };
    format!("{counted}: {}", each.join(", "))
}

/// The stores that did not run, once, in one line with why: `Skipped (not run, so in no
/// table): mongodb (no local server ...); aerospike (...).`; none when every store ran.
/// Stores skipped for the same reason share one entry, and so do those not built in, whose
/// reasons differ only in the cargo feature named as the store: `mongodb, couchbase (not
/// in this build: `cargo build --release --features mongodb,couchbase` ...)`.
pub fn skipped_line(report: &Report) -> Option<String> {
    // (the stores, the reason split where it names the store's own feature)
    let mut groups: Vec<(Vec<&str>, Option<Vec<&str>>)> = Vec::new();
    for s in report.stores.iter().filter(|s| !ran(s)) {
        let feature = format!("--features {}`", s.store);
        let why: Option<Vec<&str>> = s.error.as_deref().map(|e| e.split(&feature).collect());
        match groups.iter_mut().find(|(_, w)| *w == why) {
            Some((stores, _)) => stores.push(&s.store),
            None => groups.push((vec![&s.store], why)),
        }
    }
    let skipped: Vec<String> = groups
        .iter()
        .map(|(stores, why)| match why {
            Some(parts) => {
                let feature = format!("--features {}`", stores.join(","));
                format!("{} ({})", stores.join(", "), parts.join(&feature))
            }
            None => stores.join(", "),
        })
        .collect();
    (!skipped.is_empty())
        .then(|| format!("Skipped (not run, so in no table): {}.", skipped.join("; ")))
}
