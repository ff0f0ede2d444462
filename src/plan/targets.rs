//! Where each store of a run comes from: `--url` entries and `DBCOMPARE_<STORE>_URL`
//! variables, the installed servers, and what sharing a run between load clients asks of
//! them; a store of the run with its target ([`PlannedStore`]).

use std::collections::BTreeMap;

use crate::catalog::{StoreKind, StoreOptions, Suite};
use crate::cli::ServerArgs;
use crate::error::UsageError;
use crate::server::{self, Installation};
use crate::store::registry::{built, not_built, parse_url};
use crate::store::url::{StoreUrl, mask_userinfo};
use crate::variant::{StoreId, Variant};

/// A store of the run: which one, where its server comes from, what it runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedStore {
    pub id: StoreId,
    pub target: Target,
    pub variant: Variant,
}

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

/// `--url STORE=URL` entries (`STORE@LABEL=URL` for one variant) and
/// `DBCOMPARE_<STORE>_URL` variables, checked; `--url` wins.
pub fn resolve_urls(
    args: &ServerArgs,
    env: Env<'_>,
) -> Result<BTreeMap<StoreId, StoreUrl>, UsageError> {
    let mut urls = BTreeMap::new();
    // A variable for a store this build lacks is not an error: the store is reported as not
    // built when it is asked for (a `--url` for it is refused).
    for &kind in StoreKind::all()
        .iter()
        .filter(|&&k| !k.is_embedded() && built(k))
    {
        if let Some(raw) = env(&kind.url_env()) {
            // Named as the variable it came from, not as a flag that was not given.
            let url = parse_url(kind, &raw).map_err(|e| {
                let flag = format!("--url {kind}=...: ");
                let why = e.0.strip_prefix(&flag).unwrap_or(&e.0);
                UsageError::new(format!("{}: {why}", kind.url_env()))
            })?;
            urls.insert(StoreId::of(kind), url);
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
        let id = StoreId::parse(name).map_err(|e| UsageError::new(format!("--url: {e}")))?;
        if id.kind.is_embedded() {
            return Err(UsageError::new(format!(
                "--url {id}: {} is embedded: it needs no server",
                id.kind
            )));
        }
        let url = parse_url(id.kind, raw)?;
        urls.insert(id, url);
    }
    Ok(urls)
}

/// Where `id` runs, given the URLs (its own, else its kind's) and the installed servers.
pub fn target(id: &StoreId, urls: &BTreeMap<StoreId, StoreUrl>, locate: Locate<'_>) -> Target {
    let kind = id.kind;
    if !built(kind) {
        return Target::Unavailable(not_built(kind).0);
    }
    if kind.is_embedded() {
        return Target::Embedded;
    }
    if let Some(url) = urls.get(id).or_else(|| urls.get(&StoreId::of(kind))) {
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

/// `target` as the servers are to serve: with `--tls` (`tls`), dbcompare starts no Redis
/// Cluster (with `tls-cluster yes` the nodes never agreed), so a local one cannot run.
pub fn served(target: Target, kind: StoreKind, tls: bool) -> Target {
    if tls && kind == StoreKind::RedisCluster && matches!(target, Target::Local(_)) {
        return Target::Unavailable(
            "dbcompare does not start a Redis Cluster serving TLS (--tls) yet: give one with \
             --url redis-cluster=rediss+cluster://h1:7000,h2:7001/"
                .to_string(),
        );
    }
    target
}

/// With `--client`: the classic or the YCSB suite, and every store on a server all the
/// clients reach.
pub(super) fn client_targets(
    suite: Suite,
    stores: &[PlannedStore],
    options: &StoreOptions,
) -> Result<(), UsageError> {
    if !matches!(suite, Suite::Classic | Suite::Ycsb) {
        return Err(UsageError::new(format!(
            "--client: the classic and YCSB suites are shared between load clients; the {} \
             suite has nothing to split (each client would measure its own copy)",
            suite
        )));
    }
    for store in stores {
        let kind = &store.id;
        match &store.target {
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
