//! Sets `cfg(<store>_url)` for each store of [`URL_ONLY`] (`cfg(mongodb_url)`, ...) when
//! `DBCOMPARE_<STORE>_URL` names a real server at build time, so that the integration tests
//! of those stores run then and are listed as ignored (with the reason) otherwise; and
//! `cfg(as_root)` when the build runs as root, for the tests that install or start system
//! services as `provisioning/SERVICES.md` does.

/// The stores dbcompare starts no server of (`launcher: None` in `src/catalog.rs`), whose
/// real-server tests run by URL. `tests/url_stores.rs` checks this list against the catalog.
const URL_ONLY: &[&str] = &["mongodb", "aerospike", "couchbase"];

fn main() {
    for store in URL_ONLY {
        let var = format!("DBCOMPARE_{}_URL", store.to_uppercase());
        println!("cargo::rerun-if-env-changed={var}");
        println!("cargo::rustc-check-cfg=cfg({store}_url)");
        if std::env::var_os(&var).is_some_and(|v| !v.is_empty()) {
            println!("cargo::rustc-cfg={store}_url");
        }
    }
    println!("cargo::rustc-check-cfg=cfg(as_root)");
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().next().map(str::to_string));
    if uid.as_deref() == Some("0") {
        println!("cargo::rustc-cfg=as_root");
    }
}
