//! The stores of a run as `--store` and `--durability` name them, each a kind or a labelled
//! variant of one ([`StoreId`]), with where its server comes from and what it runs with
//! ([`Variant`]): its durability mode, `--config`'s file and `--set`'s settings, every one
//! checked before anything starts.

use std::collections::{BTreeMap, HashSet};

use crate::catalog::{Durability, StoreKind};
use crate::cli::{ServerArgs, StoreSelector};
use crate::error::UsageError;
use crate::store::url::StoreUrl;
use crate::variant::{ConfigLayer, StoreId, Variant, check_setting_name, check_setting_value};

use super::targets::{Locate, PlannedStore, Target, served, target};

/// The stores `--store` names, in order and each once, and whether they were named (rather
/// than `all`). With several durability modes every store becomes one variant per mode,
/// labelled with its name (`postgres@durable`, `postgres@relaxed`).
pub fn select(
    stores: &[StoreSelector],
    durabilities: &[Durability],
) -> Result<(bool, Vec<(StoreId, Durability)>), UsageError> {
    let named = !stores.contains(&StoreSelector::All);
    let mut seen = HashSet::new();
    let ids: Vec<StoreId> = if named {
        stores
            .iter()
            .filter_map(|s| match s {
                StoreSelector::One(id) => seen.insert(id.clone()).then(|| id.clone()),
                StoreSelector::All => None,
            })
            .collect()
    } else {
        if let Some(StoreSelector::One(id)) = stores
            .iter()
            .find(|s| matches!(s, StoreSelector::One(id) if id.is_variant()))
        {
            return Err(UsageError::new(format!(
                "--store {id}: name every store when you name variants (`all` runs each \
                 store once)"
            )));
        }
        StoreKind::all().iter().map(|&k| StoreId::of(k)).collect()
    };
    let mut modes: Vec<Durability> = Vec::new();
    for &d in durabilities {
        if !modes.contains(&d) {
            modes.push(d);
        }
    }
    let [first, ..] = modes[..] else {
        return Err(UsageError::new(
            "--durability: give durable, relaxed or both",
        ));
    };
    if modes.len() == 1 {
        return Ok((named, ids.into_iter().map(|id| (id, first)).collect()));
    }
    if let Some(id) = ids.iter().find(|id| id.is_variant()) {
        return Err(UsageError::new(format!(
            "--durability {}: every store then runs as one variant per mode (@durable, \
             @relaxed); {id} is a variant already: name plain stores, or give one mode",
            modes.iter().map(|d| d.name()).collect::<Vec<_>>().join(",")
        )));
    }
    let expanded = ids
        .iter()
        .flat_map(|id| {
            modes.iter().map(move |&d| {
                let label = StoreId::variant(id.kind, d.name()).expect("a mode's name is a label");
                (label, d)
            })
        })
        .collect();
    Ok((named, expanded))
}

/// Every store of the run with its target, `--config` file and `--set` settings, checked:
/// a label that no store of the run has, a file that cannot be read, a setting for a store
/// that has no server or no way to take it, are usage errors naming their flag.
pub fn plan_stores(
    selected: Vec<(StoreId, Durability)>,
    server: &ServerArgs,
    urls: &BTreeMap<StoreId, StoreUrl>,
    locate: Locate<'_>,
) -> Result<Vec<PlannedStore>, UsageError> {
    let ids: Vec<&StoreId> = selected.iter().map(|(id, _)| id).collect();
    // `--url`'s stores (a DBCOMPARE_<STORE>_URL variable for a store not in the run is
    // the environment's, not an error).
    for id in server
        .urls
        .iter()
        .filter_map(|e| StoreId::parse(e.split_once('=')?.0).ok())
    {
        known(&ids, &id, "--url")?;
    }
    given_once(&server.urls, '=', "--url")?;
    given_once(&server.configs, '=', "--config")?;
    let configs = configs(&server.configs, &ids)?;
    let sets = sets(&server.sets, &ids)?;
    let mut planned = Vec::new();
    for (id, durability) in selected {
        let target = served(target(&id, urls, locate), id.kind, server.serve.tls);
        let mut variant = Variant::plain(durability);
        // The kind's first, then the variant's own (which win).
        for key in [StoreId::of(id.kind), id.clone()] {
            if let Some(config) = configs.get(&key) {
                if let Target::Url(_) = target {
                    return Err(UsageError::new(format!(
                        "--config {key}: {id}'s server is given by URL; a configuration file \
                         is for the throw-away servers dbcompare starts (set it on that server, \
                         or --set single settings)"
                    )));
                }
                variant.config = Some(config.clone());
            }
            if let Some(settings) = sets.get(&key) {
                variant.settings.extend(settings.clone());
            }
        }
        planned.push(PlannedStore {
            id,
            target,
            variant,
        });
    }
    shared_servers(&planned)?;
    // The variants of a store side by side, where its first one was named.
    let mut kinds: Vec<StoreKind> = Vec::new();
    for p in &planned {
        if !kinds.contains(&p.id.kind) {
            kinds.push(p.id.kind);
        }
    }
    planned.sort_by_key(|p| kinds.iter().position(|&k| k == p.id.kind));
    Ok(planned)
}

/// The variants `--url`, `--config` and `--set` name, in order, each once (for `dbcompare
/// list`, which has no `--store`).
pub fn named_variants(server: &ServerArgs) -> Vec<StoreId> {
    let urls = server
        .urls
        .iter()
        .filter_map(|e| e.split_once('=').map(|(n, _)| n));
    let configs = server
        .configs
        .iter()
        .filter_map(|e| e.split_once('=').map(|(n, _)| n));
    let sets = server
        .sets
        .iter()
        .filter_map(|e| e.split_once(':').map(|(n, _)| n));
    let mut ids: Vec<StoreId> = Vec::new();
    for id in urls
        .chain(configs)
        .chain(sets)
        .filter_map(|n| StoreId::parse(n).ok())
    {
        if id.is_variant() && !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// A store that `--store` does not name is an error: a labelled one that is not in the
/// run, or a store of which the run has no variant at all (with `all`, every store is in
/// the run, those that cannot run here too).
fn known(ids: &[&StoreId], id: &StoreId, flag: &str) -> Result<(), UsageError> {
    if ids.contains(&id) || (!id.is_variant() && ids.iter().any(|i| i.kind == id.kind)) {
        return Ok(());
    }
    let of_kind: Vec<String> = ids
        .iter()
        .filter(|i| i.kind == id.kind)
        .map(|i| i.to_string())
        .collect();
    let run = if of_kind.is_empty() {
        format!("the run has no {} store", id.kind)
    } else {
        format!("the run's {} stores are {}", id.kind, of_kind.join(", "))
    };
    Err(UsageError::new(format!(
        "{flag} {id}: no store of --store is {id} ({run})"
    )))
}

/// The same store named twice in `entries` of a flag (`STORE[@LABEL]` before `separator`)
/// is an error: the second would silently replace the first.
fn given_once(entries: &[String], separator: char, flag: &str) -> Result<(), UsageError> {
    let mut seen: Vec<StoreId> = Vec::new();
    for name in entries.iter().filter_map(|e| e.split_once(separator)) {
        let Ok(id) = StoreId::parse(name.0) else {
            continue;
        };
        if seen.contains(&id) {
            return Err(UsageError::new(format!(
                "{flag} {id}: given twice; give each store one"
            )));
        }
        seen.push(id);
    }
    Ok(())
}

/// `--config STORE[@LABEL]=FILE` entries, each file read.
fn configs(
    entries: &[String],
    ids: &[&StoreId],
) -> Result<BTreeMap<StoreId, ConfigLayer>, UsageError> {
    let mut out = BTreeMap::new();
    for entry in entries {
        let (name, file) = entry.split_once('=').ok_or_else(|| {
            UsageError::new(format!(
                "--config: expected STORE=FILE (for example postgres@tuned=my-postgresql.conf), \
                 got '{entry}'"
            ))
        })?;
        let id = StoreId::parse(name).map_err(|e| UsageError::new(format!("--config: {e}")))?;
        known(ids, &id, "--config")?;
        if id.kind.is_embedded() {
            return Err(UsageError::new(format!(
                "--config {id}: {} is embedded: it has no server to configure",
                id.kind
            )));
        }
        if id.kind.launcher().is_none() {
            return Err(UsageError::new(format!(
                "--config {id}: dbcompare starts no {} server; a configuration file is for \
                 the servers it starts",
                id.kind
            )));
        }
        let path = std::path::PathBuf::from(file);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| UsageError::new(format!("--config {id}={file}: cannot read it: {e}")))?;
        out.insert(id, ConfigLayer { path, text });
    }
    Ok(out)
}

/// `--set STORE[@LABEL]:KEY=VALUE` entries, by store.
fn sets(
    entries: &[String],
    ids: &[&StoreId],
) -> Result<BTreeMap<StoreId, BTreeMap<String, String>>, UsageError> {
    let mut out: BTreeMap<StoreId, BTreeMap<String, String>> = BTreeMap::new();
    for entry in entries {
        let expected = || {
            UsageError::new(format!(
                "--set: expected STORE:KEY=VALUE (for example \
                 postgres@async:synchronous_commit=off), got '{entry}'"
            ))
        };
        let (name, setting) = entry.split_once(':').ok_or_else(expected)?;
        let (key, value) = setting.split_once('=').ok_or_else(expected)?;
        let (key, value) = (key.trim(), value.trim());
        let id = StoreId::parse(name).map_err(|e| UsageError::new(format!("--set: {e}")))?;
        known(ids, &id, "--set")?;
        let refuse = |why: String| UsageError::new(format!("--set {entry}: {why}"));
        if out.get(&id).is_some_and(|s| s.contains_key(key)) {
            return Err(refuse(format!(
                "{key} is set twice for {id}; give each setting once"
            )));
        }
        check_setting_name(key).map_err(refuse)?;
        check_setting_value(value).map_err(refuse)?;
        if id.kind.is_embedded() {
            return Err(refuse(format!(
                "{} is embedded: it has no server setting",
                id.kind
            )));
        }
        if id.kind.launcher().is_none() {
            return Err(refuse(format!(
                "dbcompare has no way to set {}'s settings: set it on the server",
                id.kind
            )));
        }
        out.entry(id)
            .or_default()
            .insert(key.to_string(), value.to_string());
    }
    Ok(out)
}

/// Two stores on one server given by URL cannot each have server-wide settings of their
/// own (MySQL's `SET GLOBAL`, Redis's `CONFIG SET`): the second would change the first's.
fn shared_servers(planned: &[PlannedStore]) -> Result<(), UsageError> {
    for (i, a) in planned.iter().enumerate() {
        for b in &planned[i + 1..] {
            let (Target::Url(x), Target::Url(y)) = (&a.target, &b.target) else {
                continue;
            };
            let global = a.id.kind != StoreKind::Postgres;
            let own = !a.variant.settings.is_empty() || !b.variant.settings.is_empty();
            if a.id.kind == b.id.kind && global && own && x.address() == y.address() {
                return Err(UsageError::new(format!(
                    "--set: {} and {} are the same server ({}), whose settings are \
                     server-wide: give each variant its own server (--url {}=URL), or let \
                     dbcompare start them",
                    a.id,
                    b.id,
                    x.address(),
                    b.id
                )));
            }
        }
    }
    Ok(())
}
