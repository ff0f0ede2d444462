//! Sets `cfg(mongodb_url)`, `cfg(aerospike_url)` and `cfg(couchbase_url)` when
//! `DBCOMPARE_<STORE>_URL` names a real server at build time, so that the integration tests
//! of those stores run then and are listed as ignored (with the reason) otherwise.

fn main() {
    for store in ["mongodb", "aerospike", "couchbase"] {
        let var = format!("DBCOMPARE_{}_URL", store.to_uppercase());
        println!("cargo::rerun-if-env-changed={var}");
        println!("cargo::rustc-check-cfg=cfg({store}_url)");
        if std::env::var_os(&var).is_some_and(|v| !v.is_empty()) {
            println!("cargo::rustc-cfg={store}_url");
        }
    }
}
