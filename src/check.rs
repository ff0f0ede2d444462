//! `dbcompare check`: each store's setup, checked without benchmarking it. Per store: how it
//! would run (embedded, a local throw-away server from which binary, a URL), whether it
//! answers and as which server, the durability it runs in against the one asked for, its
//! settings read back against the file of `configs/` its server starts with, and the
//! privileges the suites need, tried for real with the calls a run makes (the reset of the
//! benchmark's own table and the size measurement). A variant (`postgres@async`) is checked
//! as a store of its own, with its `--config` and `--set`: each setting it asks for read
//! back. Every problem comes with what fixes it.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::catalog::{ConfigFile, Durability, StoreInfo, StoreKind, parse_settings};
use crate::cli::CheckArgs;
use crate::interrupt;
use crate::plan::{self, PlannedStore, Target};
use crate::report::text;
use crate::server;
use crate::setup::Setup;
use crate::store::Store;
use crate::store::registry::AnyStore;
use crate::store::url::scrub;
use crate::variant::Variant;

/// One thing that keeps a store from running as asked, and what fixes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub what: String,
    pub fix: String,
}

/// What the check found for one store.
#[derive(Debug, Clone)]
pub struct Checked {
    pub kind: StoreKind,
    /// The store's name: its kind's, or a variant's (`postgres@async`).
    pub name: String,
    /// How it would run.
    pub how: String,
    /// The server that answered, or why none did.
    pub answers: String,
    pub durability: String,
    /// The settings read back against `configs/`.
    pub settings: String,
    /// The reset and the size measurement, tried.
    pub privileges: String,
    /// How each insert is written (a transaction, or the store's atomic single write).
    pub writes: String,
    pub problems: Vec<Problem>,
    /// Not checked: `all` was asked and the store cannot run here (why, in `how`).
    pub skipped: bool,
}

impl Checked {
    fn new(kind: StoreKind, how: String) -> Self {
        let dash = || "-".to_string();
        Checked {
            kind,
            name: kind.name().to_string(),
            how,
            answers: dash(),
            durability: dash(),
            settings: dash(),
            privileges: dash(),
            writes: dash(),
            problems: Vec::new(),
            skipped: false,
        }
    }

    fn problem(&mut self, what: impl Into<String>, fix: impl Into<String>) {
        self.problems.push(Problem {
            what: what.into(),
            fix: fix.into(),
        });
    }

    /// Ready: checked, and nothing keeps it from running as asked.
    pub fn ready(&self) -> bool {
        !self.skipped && self.problems.is_empty()
    }
}

/// Runs `dbcompare check`: prints the table and every problem with its fix; exit 0 when
/// every checked store is ready, 1 otherwise.
pub fn run(args: &CheckArgs) -> Result<u8> {
    let (named, selected) = plan::select(&args.stores, &args.durability)?;
    let urls = plan::resolve_urls(&args.server, &plan::system_env)?;
    let stores = plan::plan_stores(selected, &args.server, &urls, &server::find)?;
    let kinds: Vec<StoreKind> = stores.iter().map(|s| s.id.kind).collect();
    plan::store_flags(&args.options, &args.server.serve, &kinds)?;
    let secrets: Vec<String> = urls
        .values()
        .filter_map(|u| u.password().map(str::to_string))
        .collect();
    interrupt::install(server::kill_all);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let mut checked = Vec::new();
    for store in &stores {
        if interrupt::requested() {
            break;
        }
        let mut one = runtime.block_on(check_store(store, named, args));
        for p in &mut one.problems {
            p.what = scrub(&p.what, &secrets);
        }
        checked.push(one);
    }
    crate::output::out!("{}", render(&checked))?;
    let unchecked: Vec<String> = stores
        .iter()
        .skip(checked.len())
        .map(|s| s.id.to_string())
        .collect();
    if !unchecked.is_empty() {
        crate::output::outln!("not checked (interrupted): {}", unchecked.join(", "))?;
    }
    let ready = !interrupt::requested() && checked.iter().all(|c| c.ready() || c.skipped);
    Ok(if ready {
        0
    } else if interrupt::requested() {
        interrupt::exit_code()
    } else {
        1
    })
}

/// The table, then each store's problems with their fixes.
pub fn render(checked: &[Checked]) -> String {
    let rows: Vec<Vec<String>> = checked
        .iter()
        .map(|c| {
            let ready = match (c.skipped, c.problems.len()) {
                (true, _) => "skipped".to_string(),
                (false, 0) => "yes".to_string(),
                (false, 1) => "no: 1 problem".to_string(),
                (false, n) => format!("no: {n} problems"),
            };
            let how = if c.skipped { "unavailable" } else { &c.how };
            vec![
                c.name.clone(),
                how.to_string(),
                c.answers.clone(),
                c.durability.clone(),
                c.settings.clone(),
                c.privileges.clone(),
                ready,
            ]
        })
        .collect();
    let mut out = text::table(
        &[
            "store",
            "how",
            "answers",
            "durability",
            "settings",
            "reset and size",
            "ready",
        ],
        &rows,
        &[],
    );
    let writes: Vec<&Checked> = checked.iter().filter(|c| c.writes != "-").collect();
    if !writes.is_empty() {
        out.push_str("\nHow each insert is written:\n");
        for c in writes {
            out.push_str(&format!("  {}: {}\n", c.name, c.writes));
        }
    }
    let skipped: Vec<&Checked> = checked.iter().filter(|c| c.skipped).collect();
    if !skipped.is_empty() {
        out.push_str("\nNot checked (they cannot run here):\n");
        for c in skipped {
            out.push_str(&format!("  {}: {}\n", c.name, c.how));
        }
    }
    for c in checked.iter().filter(|c| !c.problems.is_empty()) {
        out.push_str(&format!("\n{}:\n", c.name));
        for p in &c.problems {
            out.push_str(&format!("  problem: {}\n  fix:     {}\n", p.what, p.fix));
        }
    }
    out
}

/// Checks one store.
async fn check_store(store: &PlannedStore, named: bool, args: &CheckArgs) -> Checked {
    let (kind, target) = (store.id.kind, &store.target);
    let how = match target {
        Target::Embedded => "embedded".to_string(),
        Target::Url(u) => format!("url {}", u.masked()),
        Target::Local(i) => format!("local server {}", i.server.display()),
        Target::Unavailable(why) => why.clone(),
    };
    let mut checked = Checked::new(kind, how);
    checked.name = store.id.to_string();
    if let Target::Unavailable(why) = target {
        if named {
            checked.how = "unavailable".to_string();
            checked.problem("it cannot run here", why.clone());
        } else {
            checked.skipped = true;
        }
        return checked;
    }
    let timeout = Duration::from_secs(args.connect_timeout.get());
    let setup = Setup::start(
        store,
        timeout,
        &crate::server::DataDirs::temporary(),
        args.server.serve.serve(),
        &args.options,
    )
    .await;
    let setup = match setup {
        Ok(setup) => setup,
        Err(e) => {
            checked.answers = "no: the local server did not start".to_string();
            // The chain begins with what was being done ("starting a local ... server").
            let fix = if store.variant.has_own_settings() {
                format!(
                    "if its message names a setting given for {} (--set, --config), mend or \
                     drop it; else 'dbcompare server {kind}' starts one by hand",
                    store.id
                )
            } else {
                format!(
                    "'dbcompare server {kind}' starts one by hand and shows why it stops, or \
                     give a server with '--url {kind}=URL'"
                )
            };
            checked.problem(crate::error::chain(&e), fix);
            return checked;
        }
    };
    match kind.connect(&setup.spec).await {
        Ok(connected) => {
            check_connected(connected, &mut checked, &store.variant).await;
            check_own_settings(&setup, &store.variant, &mut checked).await;
        }
        Err(e) => {
            checked.answers = "no".to_string();
            let fix = match &setup.spec.url {
                Some(url) => format!(
                    "the server at {} must answer: check that it runs, and the URL's user, \
                     password and database ('--url {kind}=URL' or {})",
                    url.address(),
                    kind.url_env()
                ),
                None => "see the error".to_string(),
            };
            checked.problem(crate::error::chain(&e), fix);
        }
    }
    setup.stop().await;
    checked
}

/// The checks that need a connection: the server, durability, settings, privileges.
async fn check_connected(mut store: AnyStore, checked: &mut Checked, variant: &Variant) {
    let asked = variant.durability;
    let kind = checked.kind;
    let mut steps = Vec::new();
    // The reset first, as in a run: a store describes its search path on its own table.
    match store.reset().await {
        Ok(()) => steps.push("reset ok"),
        Err(e) => {
            steps.push("reset refused");
            checked.problem(
                format!(
                    "resetting the benchmark's table: {}",
                    crate::error::chain(&e)
                ),
                format!(
                    "the user needs to drop and create the benchmark's own table and its \
                     indexes; provisioning/SERVICES.md shows the grants for {kind}"
                ),
            );
        }
    }
    match store.describe().await {
        Ok(info) => {
            checked.answers = format!("yes: {}", info.version);
            checked.writes = info.write_path.clone();
            if variant.has_own_settings() {
                // Its own settings may choose another mode: they are checked one by one.
                checked.durability = format!("{} (with its own settings)", info.durability);
            } else {
                check_durability(&info, asked, checked);
            }
            check_settings(&info, variant, checked);
        }
        Err(e) => {
            checked.answers = "yes, but its settings cannot be read".to_string();
            checked.problem(
                format!(
                    "reading the server's version and settings: {}",
                    crate::error::chain(&e)
                ),
                "the user the URL names needs to read the server's settings (the error says \
                 which)",
            );
        }
    }
    match store.disk_usage().await {
        Ok(_) => steps.push("size ok"),
        Err(e) => {
            steps.push("size refused");
            checked.problem(
                format!("measuring the on-disk size: {}", crate::error::chain(&e)),
                "the size is measured after the server flushes what it buffers (the error \
                 names the privilege); without it the sizes show as -",
            );
        }
    }
    checked.privileges = steps.join(", ");
    let _ = tokio::time::timeout(Duration::from_secs(2), store.close()).await;
}

/// The durability the store runs in, against the one asked for; with durable asked, also
/// each durability setting of `configs/` the store reads back otherwise.
fn check_durability(info: &StoreInfo, asked: Durability, checked: &mut Checked) {
    let kind = checked.kind;
    let config = kind.launcher().map(|l| l.config());
    let differ: Vec<(String, String, String)> = match (asked, config) {
        (Durability::Durable, Some(c)) => differences(&c, &info.settings, Setting::Durability),
        _ => Vec::new(),
    };
    checked.durability = info.durability.clone();
    if info.durability == asked.name() && differ.is_empty() {
        return;
    }
    if info.durability != asked.name() {
        checked.durability = format!("{} (asked: {})", info.durability, asked.name());
    }
    let what = if differ.is_empty() {
        format!(
            "it runs {} where {} was asked ({})",
            info.durability,
            asked.name(),
            settings_line(&info.settings)
        )
    } else {
        let found: Vec<String> = differ
            .iter()
            .map(|(key, _, found)| format!("{key}={found}"))
            .collect();
        format!(
            "it runs {} where {} was asked: {}",
            info.durability,
            asked.name(),
            found.join(", ")
        )
    };
    let fix = match (asked, config) {
        (Durability::Durable, Some(c)) if !differ.is_empty() => {
            let asks: Vec<String> = differ
                .iter()
                .map(|(key, asks, _)| format!("{key} = {asks}"))
                .collect();
            format!(
                "set {} on the server (as {} does), or check and run with --durability relaxed",
                asks.join(", "),
                c.path
            )
        }
        (Durability::Durable, _) => format!(
            "set the durable mode the stores table of docs/stores.md gives for {kind}, or check \
             and run with --durability relaxed"
        ),
        (Durability::Relaxed, _) => format!(
            "with a URL dbcompare changes no server-wide setting: set {kind}'s relaxed mode \
             on the server (the stores table of docs/stores.md), or check and run with \
             --durability durable"
        ),
    };
    checked.problem(what, fix);
}

/// Each setting the variant asks for (`--set`), read back.
async fn check_own_settings(setup: &Setup, variant: &Variant, checked: &mut Checked) {
    if variant.settings.is_empty() {
        return;
    }
    let found = match setup.read_back(variant.settings.keys()).await {
        Ok(found) => found,
        Err(e) => {
            checked.problem(
                format!(
                    "reading its --set settings back: {}",
                    crate::error::chain(&e)
                ),
                "the server must know each setting --set names (check its name)",
            );
            return;
        }
    };
    for (key, asked) in &variant.settings {
        match found.get(key) {
            Some(Some(read)) if same_value(asked, read) => {}
            Some(Some(read)) => checked.problem(
                format!("{key} is {read}; --set {} asks {asked}", checked.name),
                format!(
                    "the server did not take {key} = {asked}: see its log, or what else sets it"
                ),
            ),
            _ => checked.problem(
                format!(
                    "{key} cannot be read back; --set {} asks {asked}",
                    checked.name
                ),
                "dbcompare reads a store's settings back by name: this store has none",
            ),
        }
    }
}

/// The settings read back (other than durability's), against the file of `configs/` the
/// store's server starts with (leaving out what the variant sets itself).
fn check_settings(info: &StoreInfo, variant: &Variant, checked: &mut Checked) {
    let Some(config) = checked.kind.launcher().map(|l| l.config()) else {
        checked.settings = format!("read back: {}", settings_line(&info.settings));
        return;
    };
    let own = |key: &str| {
        variant.settings.contains_key(key)
            || variant
                .config
                .as_ref()
                .is_some_and(|c| parse_settings(&c.text).iter().any(|s| s.key == key))
    };
    let mut differ = differences(&config, &info.settings, Setting::Other);
    differ.retain(|(key, _, _)| !own(key));
    // How the client reaches the server is a setting too (MySQL's driver would switch to a
    // Unix socket unasked): shown beside the comparison.
    // So is TLS, when the connection uses it.
    let tls = info.settings.get("tls").filter(|t| *t != "off");
    let transport = match (info.settings.get("transport"), tls) {
        (Some(t), Some(tls)) => format!("; transport {t} over {tls}"),
        (Some(t), None) => format!("; transport {t}"),
        (None, Some(tls)) => format!("; {tls}"),
        (None, None) => String::new(),
    };
    if differ.is_empty() {
        checked.settings = format!("as {} asks{transport}", config.path);
        return;
    }
    checked.settings = format!("{} differ from {}{transport}", differ.len(), config.path);
    for (key, asks, found) in differ {
        checked.problem(
            format!("{key} is {found}; {} asks {asks}", config.path),
            format!("set {key} = {asks} on the server (as {} does)", config.path),
        );
    }
}

fn settings_line(settings: &BTreeMap<String, String>) -> String {
    let pairs: Vec<String> = settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.join(", ")
}

/// Which settings of a config file [`differences`] compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// Those after its `# Durability` line.
    Durability,
    /// The others (memory limits and the like).
    Other,
}

/// The settings of `config` of one sort that the store, read back, holds otherwise: (key,
/// asked, found). Only the settings the store reads back are compared.
pub fn differences(
    config: &ConfigFile,
    settings: &BTreeMap<String, String>,
    which: Setting,
) -> Vec<(String, String, String)> {
    config
        .settings()
        .into_iter()
        .filter(|s| s.durability == (which == Setting::Durability))
        .filter_map(|s| {
            let found = settings.get(&s.key)?;
            (!same_value(&s.value, found)).then(|| (s.key, s.value, found.clone()))
        })
        .collect()
}

/// Whether a setting's value in a config file and the one a server reports are the same:
/// `ON`, `on`, `yes`, `true` and `1` are; so are `4G`, `4gb` and `4294967296`.
pub fn same_value(asked: &str, found: &str) -> bool {
    let (a, f) = (asked.trim().to_lowercase(), found.trim().to_lowercase());
    if a == f {
        return true;
    }
    let flag = |v: &str| match v {
        "on" | "yes" | "true" | "1" => Some(true),
        "off" | "no" | "false" | "0" => Some(false),
        _ => None,
    };
    if let (Some(x), Some(y)) = (flag(&a), flag(&f)) {
        return x == y;
    }
    matches!((bytes(&a), bytes(&f)), (Some(x), Some(y)) if x == y)
}

/// A size such as `4G`, `4gb`, `800M`, `32MB`, `8kB` or `4294967296`, in bytes (binary
/// multiples, as PostgreSQL, MySQL and Redis read `gb`).
fn bytes(value: &str) -> Option<u64> {
    let digits = value.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &value[digits.len()..];
    let n: u64 = digits.trim().parse().ok()?;
    let multiple: u64 = match unit {
        "" | "b" => 1,
        "k" | "kb" => 1 << 10,
        "m" | "mb" => 1 << 20,
        "g" | "gb" => 1 << 30,
        "t" | "tb" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(multiple)
}

#[cfg(test)]
mod tests;
