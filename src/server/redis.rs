//! A throw-away Redis server with configs/redis.conf.

use std::process::Command;

use anyhow::{Context, Result};

use super::{Installation, Launch, Process, spawn_server, version_of, which, write_file};
use crate::catalog::{Durability, Launcher};

/// The settings every throw-away Redis starts with.
pub const CONFIG: &str = Launcher::Redis.config().text;

pub fn find() -> Option<Installation> {
    let server = which(
        &["redis-server"],
        &["/usr/sbin".into(), "/usr/local/bin".into()],
    )?;
    Some(Installation {
        version: version_of(&server).unwrap_or_else(|| "Redis (unknown version)".into()),
        tools: Vec::new(),
        server,
    })
}

pub(super) fn launch(inst: &Installation, launch: &Launch) -> Result<Process> {
    let Launch {
        dir,
        port,
        durability,
        password,
        ..
    } = *launch;
    let data = dir.join("data");
    std::fs::create_dir(&data).with_context(|| format!("creating {}", data.display()))?;
    let mut conf = CONFIG.to_string();
    conf.push_str(&format!(
        "\n# --- dbcompare: this instance ---\nbind 127.0.0.1\ndir {}\nlogfile {}\nrequirepass {password}\n",
        data.display(),
        dir.join("server.log").display()
    ));
    match launch.tls {
        // TLS only: no plain port.
        Some(tls) => conf.push_str(&format!(
            "port 0\ntls-port {port}\ntls-cert-file {}\ntls-key-file {}\ntls-ca-cert-file {}\ntls-auth-clients no\n",
            tls.cert.display(),
            tls.key.display(),
            tls.ca.display()
        )),
        None => conf.push_str(&format!("port {port}\n")),
    }
    if durability == Durability::Relaxed {
        conf.push_str("appendfsync everysec\n");
    }
    let conf_path = dir.join("redis.conf");
    write_file(&conf_path, &conf)?;
    let mut server = Command::new(&inst.server);
    server.arg(&conf_path);
    spawn_server(server)
}
