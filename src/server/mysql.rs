//! A throw-away MariaDB (or MySQL) server with configs/my.cnf.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result};

use super::host::{Installation, is_root, version_of, which, write_file};
use super::launch::Launch;
use super::process::{INIT_LIMIT, Process, STDERR_FILE, run_setup_within, spawn_server};
use crate::catalog::{Durability, Launcher};

/// The settings every throw-away server starts with.
pub const CONFIG: &str = Launcher::Mysql.config().text;

fn sbin() -> Vec<PathBuf> {
    vec![
        "/usr/sbin".into(),
        "/usr/local/sbin".into(),
        "/usr/local/mysql/bin".into(),
    ]
}

pub fn find() -> Option<Installation> {
    let server = which(&["mariadbd", "mysqld"], &sbin())?;
    let version = version_of(&server)?;
    let mut tools = Vec::new();
    if version.contains("MariaDB") {
        tools.push((
            "install_db",
            which(&["mariadb-install-db", "mysql_install_db"], &sbin())?,
        ));
    }
    Some(Installation {
        server,
        tools,
        version,
    })
}

/// The statements the server runs at start: the benchmark database, and the password on
/// every account TCP can reach (the socket stays in a directory only this user enters).
fn start_sql(password: &str) -> String {
    let mut sql = String::from("CREATE DATABASE IF NOT EXISTS dbcompare;\n");
    // The installer also makes root@<this machine's name>, which skip-name-resolve makes
    // unreachable: it gets the password all the same.
    let machine = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_string();
    let machine = machine
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        .then_some(machine)
        .filter(|m| !m.is_empty());
    for host in ["localhost", "127.0.0.1", "::1", "%"]
        .into_iter()
        .chain(machine.as_deref())
    {
        sql.push_str(&format!(
            "ALTER USER IF EXISTS 'root'@'{host}' IDENTIFIED BY '{password}';\n"
        ));
    }
    // Accounts without a name (older installers make them) would take any password.
    sql.push_str("DROP USER IF EXISTS ''@'localhost', ''@'127.0.0.1', ''@'%';\n");
    sql
}

pub(super) fn launch(inst: &Installation, launch: &Launch) -> Result<Process> {
    let Launch {
        dir,
        port,
        durability,
        ..
    } = *launch;
    let data = dir.join("data");
    let defaults = dir.join("my.cnf");
    // Each instance keeps its temporary files in its own directory: a starting server
    // deletes every `#sql*` file in its tmpdir, so instances sharing /tmp lose each
    // other's temporary tables (a parallel bootstrap then fails).
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    write_file(
        &defaults,
        &format!(
            "{CONFIG}
# Per instance.
tmpdir = {}
{}",
            tmp.display(),
            launch.config_lines()
        ),
    )?;
    let defaults_arg = format!("--defaults-file={}", defaults.display());
    let datadir_arg = format!("--datadir={}", data.display());
    let root = is_root();

    if inst.version.contains("MariaDB") {
        let mut init = Command::new(inst.tool("install_db"));
        init.args([&defaults_arg, &datadir_arg]).args([
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
        ]);
        if root {
            init.arg("--user=root");
        }
        run_setup_within(init, "initialising the MariaDB data directory", INIT_LIMIT)?;
    } else {
        let mut init = Command::new(&inst.server);
        init.args([&defaults_arg, &datadir_arg, "--initialize-insecure"]);
        if root {
            init.arg("--user=root");
        }
        run_setup_within(init, "initialising the MySQL data directory", INIT_LIMIT)?;
    }

    let init_sql = dir.join("init.sql");
    write_file(&init_sql, &start_sql(launch.password))?;
    let mut server = Command::new(&inst.server);
    server
        .args([&defaults_arg, &datadir_arg])
        .arg(format!("--port={port}"))
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--socket={}", dir.join("mysqld.sock").display()))
        .arg(format!("--pid-file={}", dir.join("mysqld.pid").display()))
        .arg(format!("--log-error={}", dir.join("server.log").display()))
        .arg(format!("--init-file={}", init_sql.display()));
    if root {
        server.arg("--user=root");
    }
    if durability == Durability::Relaxed {
        server.arg("--innodb-flush-log-at-trx-commit=2");
    }
    // After the durability mode's: the variant's own settings win.
    for (key, value) in launch.settings {
        server.arg(format!("--{key}={value}"));
    }
    if let Some(tls) = launch.tls {
        server
            .arg(format!("--ssl-cert={}", tls.cert.display()))
            .arg(format!("--ssl-key={}", tls.key.display()))
            .arg(format!("--ssl-ca={}", tls.ca.display()))
            .arg("--require-secure-transport=ON");
    }
    spawn_server(server, 0, &launch.dir.join(STDERR_FILE))
}
