//! Where each store of a run comes from: `--url` entries and `DBCOMPARE_<STORE>_URL`
//! variables, the installed servers, and what sharing a run between load clients asks of
//! them.

use std::collections::{BTreeMap, HashSet};

use crate::catalog::{StoreKind, StoreOptions, Suite};
use crate::cli::{ServerArgs, StoreSelector};
use crate::error::UsageError;
use crate::server::{self, Installation};
use crate::store::registry::parse_url;
use crate::store::url::{StoreUrl, mask_userinfo};

/// Where a store's server comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An embedded store: no server.
    Embedded,
    /// A server given with `--url` or `DBCOMPARE_<STORE>_URL`, used as it is.
    Url(StoreUrl),
    /// A throw-away local server started from this installation.
    Local(Installation),
    /// Cannot run here; says what would fix it.
    Unavailable(String),
}

impl Target {
    /// One line for `dbcompare list`.
    pub fn describe(&self) -> (&'static str, String) {
        match self {
            Target::Embedded => ("available", crate::store::sqlite::availability()),
            Target::Url(u) => ("available", format!("url {}", u.masked())),
            Target::Local(i) => {
                let cli = i.tools.iter().find(|(role, _)| *role == "cli");
                let what = match cli {
                    Some((_, cli)) => format!(
                        "local throw-away cluster: {} nodes joined by {}",
                        i.server.display(),
                        cli.display()
                    ),
                    None => format!("local throw-away server: {}", i.server.display()),
                };
                ("available", format!("{what} ({})", i.version))
            }
            Target::Unavailable(why) => ("unavailable", why.clone()),
        }
    }
}

/// Reads the environment (a function, so tests can give their own).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Finds a store's installed server (a function, so tests can give their own).
pub type Locate<'a> = &'a dyn Fn(StoreKind) -> Option<Installation>;

/// The process environment and the installed servers: what a real run uses.
pub fn system_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// `--url STORE=URL` entries and `DBCOMPARE_<STORE>_URL` variables, checked; `--url` wins.
pub fn resolve_urls(
    args: &ServerArgs,
    env: Env<'_>,
) -> Result<BTreeMap<StoreKind, StoreUrl>, UsageError> {
    let mut urls = BTreeMap::new();
    for &kind in StoreKind::all().iter().filter(|k| !k.is_embedded()) {
        if let Some(raw) = env(&kind.url_env()) {
            let url = parse_url(kind, &raw)
                .map_err(|e| UsageError::new(format!("{} (from {})", e.0, kind.url_env())))?;
            urls.insert(kind, url);
        }
    }
    for entry in &args.urls {
        let expected = || {
            UsageError::new(format!(
                "--url: expected STORE=URL (for example postgres=postgres://user@host/db), got '{}'",
                mask_userinfo(entry)
            ))
        };
        let (name, raw) = entry.split_once('=').ok_or_else(expected)?;
        // A URL given without its store (`--url postgres://u:pw@h/db?sslmode=x`): its first
        // '=' is in the query, and the "name" holds the password.
        if name.contains("://") {
            return Err(expected());
        }
        let kind = crate::cli::parse_store(name)
            .ok()
            .and_then(|s| match s {
                StoreSelector::One(k) => Some(k),
                StoreSelector::All => None,
            })
            .ok_or_else(|| {
                let names: Vec<&str> = StoreKind::all().iter().map(|k| k.name()).collect();
                UsageError::new(format!(
                    "--url: unknown store '{name}'; valid names: {}",
                    names.join(", ")
                ))
            })?;
        urls.insert(kind, parse_url(kind, raw)?);
    }
    Ok(urls)
}

/// The stores `--store` names, in order and each once, and whether they were named (rather
/// than `all`).
pub fn select(stores: &[StoreSelector]) -> (bool, Vec<StoreKind>) {
    let named = !stores.contains(&StoreSelector::All);
    if !named {
        return (false, StoreKind::all().to_vec());
    }
    let mut seen = HashSet::new();
    let kinds = stores
        .iter()
        .filter_map(|s| match s {
            StoreSelector::One(k) => seen.insert(*k).then_some(*k),
            StoreSelector::All => None,
        })
        .collect();
    (true, kinds)
}

/// Where `kind` runs, given the URLs and the installed servers.
pub fn target(kind: StoreKind, urls: &BTreeMap<StoreKind, StoreUrl>, locate: Locate<'_>) -> Target {
    if kind.is_embedded() {
        return Target::Embedded;
    }
    if let Some(url) = urls.get(&kind) {
        return Target::Url(url.clone());
    }
    match locate(kind) {
        Some(installation) => Target::Local(installation),
        None if server::can_start(kind) => Target::Unavailable(format!(
            "no {kind} server is installed here: {}",
            server::install_hint(kind)
        )),
        None => Target::Unavailable(server::install_hint(kind)),
    }
}

/// With `--client`: the classic suite, and every store on a server all the clients reach.
pub(super) fn client_targets(
    suite: Suite,
    stores: &[(StoreKind, Target)],
    options: &StoreOptions,
) -> Result<(), UsageError> {
    if suite != Suite::Classic {
        return Err(UsageError::new(format!(
            "--client: the classic suite is shared between load clients; the {} suite \
             checks each answer against what this client alone wrote",
            suite
        )));
    }
    for (kind, target) in stores {
        match target {
            Target::Url(_) => {}
            Target::Embedded if options.sqlite_path.is_some() => {}
            Target::Embedded => {
                return Err(UsageError::new(format!(
                    "--client: the clients must share one {kind} database: give it with \
                     --sqlite-path FILE"
                )));
            }
            // Skipped (named, it was refused already).
            Target::Unavailable(_) => {}
            Target::Local(_) => {
                return Err(UsageError::new(format!(
                    "--client: every client must use the same {kind} server: give it with \
                     --url {kind}=URL (a throw-away server would be this client's alone)"
                )));
            }
        }
    }
    Ok(())
}
