//! `provisioning/SERVICES.md`, run as written where this machine allows it: a long-lived
//! server set up by its instructions, then `dbcompare check` on it, ready.
//!
//! PostgreSQL only: Debian's cluster tools let the instructions make a cluster of the test's
//! own, beside any the machine has. The test needs root (as the instructions need sudo); it
//! removes its cluster when it ends.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The shell block of a section of SERVICES.md.
fn block(section: &str) -> String {
    let doc = std::fs::read_to_string(root().join("provisioning/SERVICES.md")).unwrap();
    let start = doc
        .find(section)
        .unwrap_or_else(|| panic!("SERVICES.md has no section {section}"));
    let open = start + doc[start..].find("```sh\n").expect("a shell block") + 6;
    let close = open + doc[open..].find("```").expect("the block's end");
    doc[open..close].to_string()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The newest PostgreSQL major version Debian's packages installed.
fn postgres_version() -> String {
    std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is installed: provisioning/install.sh postgres")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .max()
        .expect("a PostgreSQL version under /usr/lib/postgresql")
        .to_string()
}

/// Drops the test's cluster, whatever happened.
struct Cluster {
    version: String,
    name: String,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("pg_dropcluster")
            .args(["--stop", &self.version, &self.name])
            .status();
    }
}

/// A directory holding `sudo` for a root without it: the command itself, as another user
/// through runuser when `-u` is given.
fn sudo_for_root(dir: &Path) {
    let sudo = dir.join("sudo");
    std::fs::write(
        &sudo,
        "#!/bin/sh\nif [ \"$1\" = -u ]; then user=$2; shift 2; exec runuser -u \"$user\" -- \"$@\"; fi\nexec \"$@\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&sudo, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
#[cfg_attr(
    not(as_root),
    ignore = "NOT RUN: needs root, to create a PostgreSQL cluster as provisioning/SERVICES.md does"
)]
fn postgres_as_services_md_says_is_ready() {
    let cluster = Cluster {
        version: postgres_version(),
        name: format!("dbcompare_services_{}", std::process::id()),
    };
    let port = dbcompare::server::free_port().unwrap();
    let tools = tempfile::tempdir().unwrap();
    let has_sudo = Command::new("sh")
        .args(["-c", "command -v sudo"])
        .status()
        .unwrap()
        .success();
    if !has_sudo {
        sudo_for_root(tools.path());
    }
    let binary = assert_cmd::cargo::cargo_bin("dbcompare");
    let path = format!(
        "{}:{}:{}",
        tools.path().display(),
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .arg("-ec")
        .arg(block("## PostgreSQL"))
        .current_dir(root())
        .env("PATH", path)
        .env("version", &cluster.version)
        .env("cluster", &cluster.name)
        .env("port", port.to_string())
        .env_remove("DBCOMPARE_POSTGRES_URL")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let row = stdout
        .lines()
        .find(|l| l.starts_with("postgres "))
        .unwrap_or_else(|| panic!("no postgres row:\n{stdout}\n{stderr}"));
    assert!(
        row.contains(&format!("127.0.0.1:{port}/dbcompare")),
        "{row}"
    );
    assert!(row.contains("as configs/postgresql.conf asks"), "{row}");
    assert!(row.trim_end().ends_with("yes"), "{row}");
}
