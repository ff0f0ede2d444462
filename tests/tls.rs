//! TLS and credentials against real throw-away servers: PostgreSQL, MariaDB and Redis
//! started serving TLS only (`--tls`), each with a certificate made for it, and a fresh
//! random password. The classic suite runs over TLS with the certificate verified; a wrong
//! CA, a plain connection and a wrong password are refused with the driver's or server's
//! reason; the directories are private. (MongoDB's TLS is in url_stores.rs, through a TLS
//! proxy in front of jongodb.)

#![recursion_limit = "256"]

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

use dbcompare::catalog::{Durability, StoreKind, StoreOptions};
use dbcompare::server::LocalServer;
use dbcompare::store::url::StoreUrl;
use dbcompare::store::{ConnectSpec, Store};

const SERVERS: [StoreKind; 3] = [StoreKind::Postgres, StoreKind::Mysql, StoreKind::Redis];

/// Connects to `url` the way a run does; the error as text.
async fn try_connect(
    kind: StoreKind,
    url: &str,
) -> Result<dbcompare::store::registry::AnyStore, String> {
    let url = StoreUrl::parse(kind, url).map_err(|e| e.to_string())?;
    let spec = ConnectSpec {
        url: Some(url),
        data_dir: None,
        durability: Durability::Relaxed,
        connect_timeout: Duration::from_secs(10),
        options: StoreOptions::default(),
    };
    kind.connect(&spec).await.map_err(|e| format!("{e:#}"))
}

/// `url` with its query's `from` replaced by `to`.
fn with(url: &str, from: &str, to: &str) -> String {
    assert!(url.contains(from), "{url} has no {from}");
    url.replace(from, to)
}

/// A CA file of another certificate authority than the server's.
fn other_ca(dir: &Path) -> String {
    let made = dbcompare::server::tls::make_certificates().unwrap();
    let path = dir.join("other-ca.pem");
    std::fs::write(&path, made.ca).unwrap();
    path.display().to_string()
}

fn ca_of(server: &LocalServer) -> String {
    server.tls_ca().unwrap().display().to_string()
}

/// The URL's CA setting, percent-encoded as the URL holds it.
fn encoded(path: &str) -> String {
    url::form_urlencoded::byte_serialize(path.as_bytes()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_classic_suite_runs_over_verified_tls() {
    for kind in SERVERS {
        let server = common::start_tls(kind);
        let url = server.url();
        assert!(url.contains(&encoded(&ca_of(&server))), "{kind}: {url}");
        let mut store = common::connect_url(kind, &url, Durability::Relaxed, None).await;
        store.reset().await.unwrap();
        let tls = store.describe().await.unwrap().settings["tls"].clone();
        assert!(
            tls.contains("certificate and host name verified"),
            "{kind}: {tls}"
        );
        if kind != StoreKind::Redis {
            // The server's own view of the connection: PostgreSQL's pg_stat_ssl, MariaDB's
            // Ssl_version.
            assert!(tls.starts_with("TLSv1."), "{kind}: {tls}");
        }
        drop(store);
        let connector =
            common::connector_url(kind, &url, Durability::Relaxed, Some(&server.data_dir()));
        common::classic_micro(connector, kind.name()).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_of_another_ca_is_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let other = encoded(&other_ca(scratch.path()));
    for kind in SERVERS {
        let server = common::start_tls(kind);
        let url = with(&server.url(), &encoded(&ca_of(&server)), &other);
        let e = try_connect(kind, &url).await.err().unwrap_or_else(|| {
            panic!("{kind}: a server whose certificate another CA signed was accepted")
        });
        // rustls: "invalid peer certificate: BadSignature" (the other CA has the same name)
        // or "UnknownIssuer".
        assert!(e.contains("invalid peer certificate"), "{kind}: {e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_serving_tls_only_refuses_a_plain_connection() {
    for kind in SERVERS {
        let server = common::start_tls(kind);
        let url = server.url();
        let plain = match kind {
            StoreKind::Postgres => url.split('?').next().unwrap().to_string(),
            StoreKind::Mysql => url.split('?').next().unwrap().to_string(),
            _ => url
                .split('?')
                .next()
                .unwrap()
                .replace("rediss://", "redis://"),
        };
        let e = try_connect(kind, &plain)
            .await
            .err()
            .unwrap_or_else(|| panic!("{kind}: a plain connection was accepted"));
        let expected = match kind {
            StoreKind::Postgres => "no encryption",
            // MariaDB refuses it as it refuses a wrong password.
            StoreKind::Mysql => "Access denied",
            // Redis's TLS port drops a plain client at its first bytes.
            _ => "Connection reset by peer",
        };
        assert!(e.contains(expected), "{kind}: {e}");
        assert!(!e.contains(server.password()), "{kind}: {e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unverified_tls_says_so() {
    for kind in SERVERS {
        let server = common::start_tls(kind);
        let url = server.url();
        let base = url.split('?').next().unwrap();
        let unverified = match kind {
            StoreKind::Postgres => format!("{base}?sslmode=require"),
            StoreKind::Mysql => format!("{base}?require_ssl=true&verify_ca=false"),
            _ => format!("{base}#insecure"),
        };
        let mut store = try_connect(kind, &unverified)
            .await
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        store.reset().await.unwrap();
        let tls = store.describe().await.unwrap().settings["tls"].clone();
        assert!(tls.contains("certificate not verified"), "{kind}: {tls}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_server_has_its_own_password_and_refuses_another() {
    for kind in SERVERS {
        let (a, b) = (
            common::start(kind, Durability::Relaxed),
            common::start(kind, Durability::Relaxed),
        );
        assert_ne!(a.password(), b.password(), "{kind}");
        assert_eq!(a.password().len(), 32, "{kind}: 128 bits in hex");
        let wrong = with(&a.url(), a.password(), b.password());
        let e = try_connect(kind, &wrong)
            .await
            .err()
            .unwrap_or_else(|| panic!("{kind}: another server's password was accepted"));
        let expected = match kind {
            StoreKind::Postgres => "password authentication failed",
            StoreKind::Mysql => "Access denied",
            _ => "Password authentication failed",
        };
        assert!(e.contains(expected), "{kind}: {e}");
        assert!(
            !e.contains(a.password()) && !e.contains(b.password()),
            "{kind}: {e}"
        );
        // No password at all is refused too.
        let none = with(&a.url(), &format!(":{}@", a.password()), "@");
        assert!(
            try_connect(kind, &none).await.is_err(),
            "{kind}: no password accepted"
        );
    }
}

/// The throw-away directory and everything holding a secret are private to the server's
/// user, also where PostgreSQL runs as another user than dbcompare (as root).
#[test]
fn the_directories_and_secrets_are_private() {
    for kind in SERVERS {
        let server = common::start_tls(kind);
        let dir = server.dir();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(dir), 0o700, "{kind}: {}", dir.display());
        let owner = std::fs::metadata(dir).unwrap().uid();
        let own: &[&str] = match kind {
            StoreKind::Postgres => &[],
            StoreKind::Mysql => &["init.sql", "my.cnf"],
            _ => &["redis.conf"],
        };
        let certificate = ["tls/server.key", "tls/server.pem", "tls/ca.pem"];
        for file in certificate.iter().chain(own) {
            let path = dir.join(file);
            assert_eq!(mode(&path), 0o600, "{kind}: {}", path.display());
            assert_eq!(
                std::fs::metadata(&path).unwrap().uid(),
                owner,
                "{kind}: {file}"
            );
        }
        assert_eq!(mode(&dir.join("tls")), 0o700, "{kind}");
        // initdb's password file is gone once the cluster is made.
        assert!(!dir.join("pwfile").exists(), "{kind}");
        if kind == StoreKind::Postgres {
            assert_eq!(
                mode(&server.data_dir()),
                0o700,
                "{kind}: its data directory"
            );
        }
        let dir = dir.to_path_buf();
        drop(server);
        assert!(!dir.exists(), "{kind}: {} left behind", dir.display());
    }
}

/// Every file under `dir`, as text (lossy), with its path.
fn files_under(dir: &Path) -> Vec<(std::path::PathBuf, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            let bytes = std::fs::read(&path).unwrap();
            found.push((path, String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    found
}

/// Runs dbcompare with `args` and an output directory: its exit code, and its stdout, its
/// stderr and every file it wrote, by name.
fn run_outputs(args: &[&str]) -> (i32, Vec<(String, String)>) {
    let out = tempfile::tempdir().unwrap();
    let o = assert_cmd::Command::cargo_bin("dbcompare")
        .unwrap()
        .args(args)
        .args([
            "--sizes",
            "micro",
            "--searches-per-insert",
            "2",
            "--verbose",
            "--out",
        ])
        .arg(out.path())
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let mut texts = vec![
        (
            "stdout".into(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        ),
        (
            "stderr".into(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        ),
    ];
    texts.extend(
        files_under(out.path())
            .into_iter()
            .map(|(p, t)| (p.display().to_string(), t)),
    );
    // run.json, results.md, report.html, results.csv and the charts.
    assert!(texts.len() > 6, "{texts:?}");
    (o.status.code().unwrap_or(-1), texts)
}

fn assert_hidden(texts: &[(String, String)], passwords: &[String]) {
    assert!(!passwords.is_empty());
    for (what, text) in texts {
        for password in passwords {
            assert!(
                !text.contains(password.as_str()),
                "{what} shows a password:\n{text}"
            );
        }
    }
}

/// The passwords dbcompare made for the servers whose directories are kept under `dir`.
fn passwords_kept_in(dir: &Path) -> Vec<String> {
    let mut made = Vec::new();
    for (path, text) in files_under(dir) {
        match path.file_name().unwrap().to_string_lossy().as_ref() {
            "redis.conf" => made.extend(
                text.lines()
                    .filter_map(|l| l.strip_prefix("requirepass "))
                    .map(str::to_string),
            ),
            "init.sql" => made.extend(
                text.split("IDENTIFIED BY '")
                    .skip(1)
                    .filter_map(|rest| rest.split('\'').next())
                    .map(str::to_string),
            ),
            _ => {}
        }
    }
    made.sort();
    made.dedup();
    made
}

/// No password of a server reaches stdout, stderr, run.json, results.md, the CSV, the HTML
/// report or a chart: for servers given by URL (one of them failing, so that its error is
/// shown), and for throw-away servers serving TLS, whose passwords dbcompare made.
#[test]
fn no_password_reaches_any_output() {
    let servers: Vec<LocalServer> = SERVERS
        .iter()
        .map(|&k| common::start(k, Durability::Relaxed))
        .collect();
    let mut urls: Vec<String> = servers
        .iter()
        .map(|s| format!("{}={}", s.kind().name(), s.url()))
        .collect();
    // MariaDB's refusal of a database that does not exist names the URL.
    urls[1] = urls[1].replace("/dbcompare", "/nosuchdb");
    let passwords: Vec<String> = servers.iter().map(|s| s.password().to_string()).collect();
    let mut args = vec!["--store", "postgres,mysql,redis"];
    for url in &urls {
        args.extend(["--url", url]);
    }
    let (code, texts) = run_outputs(&args);
    assert_eq!(code, 1, "mysql fails: {texts:?}");
    assert_hidden(&texts, &passwords);

    // Throw-away servers, their directories kept so that their passwords can be read back.
    let data = tempfile::tempdir().unwrap();
    let data_arg = data.path().display().to_string();
    let (code, texts) = run_outputs(&[
        "--store",
        "mysql,redis",
        "--tls",
        "--keep-data",
        "--data-dir",
        &data_arg,
    ]);
    assert_eq!(code, 0, "{texts:?}");
    let made = passwords_kept_in(data.path());
    assert_eq!(made.len(), 2, "one password per server: {made:?}");
    assert_hidden(&texts, &made);
}
