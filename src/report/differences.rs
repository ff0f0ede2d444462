//! What differs between two saved runs outside their figures (plan, settings,
//! durability, versions, machine): what `dbcompare compare` lists before the figures, and
//! whether each difference could explain a change in them.

use std::collections::BTreeSet;

use super::facts::client_threads;
use super::format::human_size;
use super::model::{Report, StoreResult};
use crate::workload::levels::Concurrency;

/// A difference between the two runs outside the figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub what: String,
    pub base: String,
    pub new: String,
    /// Whether it changes what was measured (plan, settings, durability, machine), so that
    /// a change in the figures may be its doing; versions are what one usually compares.
    pub confounds: bool,
}

/// Every difference between the runs outside the figures, plan first.
pub fn differences(base: &Report, new: &Report) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut differ = |what: &str, a: String, b: String, confounds: bool| {
        if a != b {
            out.push(Difference {
                what: what.to_string(),
                base: a,
                new: b,
                confounds,
            });
        }
    };
    let (p, q) = (&base.plan, &new.plan);
    let sizes = |s: &[crate::workload::record::Size]| {
        s.iter()
            .map(|s| format!("{}={}", s.name, s.records))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let list = |v: &[Concurrency]| {
        let levels: Vec<String> = v.iter().map(Concurrency::to_string).collect();
        levels.join(", ")
    };
    let opt = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    differ("sizes", sizes(&p.sizes), sizes(&q.sizes), true);
    differ(
        "searches per insert",
        p.searches_per_insert.to_string(),
        q.searches_per_insert.to_string(),
        true,
    );
    differ(
        "durability",
        p.durability.clone(),
        q.durability.clone(),
        true,
    );
    differ(
        "concurrency",
        list(&p.concurrency),
        list(&q.concurrency),
        true,
    );
    differ("rate", opt(p.rate), opt(q.rate), true);
    differ("scale", opt(p.scale), opt(q.scale), true);
    differ(
        "workloads",
        p.workloads.join("; "),
        q.workloads.join("; "),
        true,
    );
    differ("seed", p.seed.to_string(), q.seed.to_string(), true);
    differ(
        "client threads",
        client_threads(base).map_or("-".into(), |(t, _)| t),
        client_threads(new).map_or("-".into(), |(t, _)| t),
        true,
    );
    let sites = |on: bool| if on { "captured (slowed)" } else { "no" }.to_string();
    differ(
        "allocation sites",
        sites(p.alloc_sites),
        sites(q.alloc_sites),
        true,
    );
    differ("runs", p.runs.to_string(), q.runs.to_string(), false);
    differ(
        "warm-up runs",
        p.warmup_runs.to_string(),
        q.warmup_runs.to_string(),
        false,
    );
    let (m, n) = (&base.machine, &new.machine);
    differ("CPU", m.cpu_model.clone(), n.cpu_model.clone(), true);
    differ("cores", m.cores.to_string(), n.cores.to_string(), true);
    differ(
        "memory",
        human_size(m.memory_bytes),
        human_size(n.memory_bytes),
        true,
    );
    differ("OS", m.os.clone(), n.os.clone(), true);
    differ("kernel", m.kernel.clone(), n.kernel.clone(), true);
    differ("dbcompare", base.tool.build(), new.tool.build(), false);
    for b in &base.stores {
        let Some(s) = new.stores.iter().find(|s| s.store == b.store) else {
            continue;
        };
        let name = &b.store;
        differ(
            &format!("{name} status"),
            b.status.to_string(),
            s.status.to_string(),
            false,
        );
        let kind = |r: &StoreResult| r.deployment.as_ref().map_or("-".into(), |d| d.kind.clone());
        differ(&format!("{name} deployment"), kind(b), kind(s), true);
        let (Some(x), Some(y)) = (&b.info, &s.info) else {
            continue;
        };
        differ(
            &format!("{name} version"),
            x.version.clone(),
            y.version.clone(),
            false,
        );
        differ(
            &format!("{name} durability"),
            x.durability.clone(),
            y.durability.clone(),
            true,
        );
        let keys: BTreeSet<&String> = x.settings.keys().chain(y.settings.keys()).collect();
        for key in keys {
            let get = |i: &crate::catalog::StoreInfo| {
                i.settings.get(key).cloned().unwrap_or_else(|| "-".into())
            };
            differ(&format!("{name} {key}"), get(x), get(y), true);
        }
    }
    out
}
