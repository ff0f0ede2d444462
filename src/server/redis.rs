//! A throw-away Redis server with configs/redis.conf, or a throw-away Redis Cluster: N
//! masters with the same settings and `cluster-enabled yes`, joined with
//! `redis-cli --cluster create`.

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::host::{Installation, version_of, which, write_file};
use super::launch::{Launch, free_port};
use super::leftovers;
use super::process::{
    Process, READY_TIMEOUT, STDERR_FILE, run_setup_within, spawn_server, wait_until_listening,
};
use super::registry::{track, untrack};
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

/// redis-server and the redis-cli that makes a cluster of its instances.
pub fn find_cluster() -> Option<Installation> {
    let mut installation = find()?;
    let cli = which(
        &["redis-cli"],
        &["/usr/bin".into(), "/usr/local/bin".into()],
    )?;
    installation.tools.push(("cli", cli));
    Some(installation)
}

/// The configuration of one instance: configs/redis.conf, then where this one keeps its
/// data and listens.
fn config(launch: &Launch, data: &Path, port: u16) -> String {
    let mut conf = CONFIG.to_string();
    conf.push_str(&format!(
        "\n# --- dbcompare: this instance ---\nbind 127.0.0.1\ndir {}\nlogfile {}\nrequirepass {}\n",
        data.display(),
        launch.dir.join("server.log").display(),
        launch.password
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
    if launch.durability == Durability::Relaxed {
        conf.push_str("appendfsync everysec\n");
    }
    conf.push_str(&launch.variant_lines(|key, value| match value {
        "" => format!("{key} \"\""),
        _ => format!("{key} {value}"),
    }));
    conf
}

pub(super) fn launch(inst: &Installation, launch: &Launch) -> Result<Process> {
    let data = launch.dir.join("data");
    std::fs::create_dir(&data).with_context(|| format!("creating {}", data.display()))?;
    let conf_path = launch.dir.join("redis.conf");
    write_file(&conf_path, &config(launch, &data, launch.port))?;
    let mut server = Command::new(&inst.server);
    server.arg(&conf_path);
    spawn_server(server, 0, &launch.dir.join(STDERR_FILE))
}

/// Nodes started so far: killed (and reaped) on drop unless handed over; their process
/// group is where a second Ctrl-C's cleanup finds it meanwhile.
struct Nodes {
    children: Vec<Child>,
    tracked: Option<u64>,
}

impl Drop for Nodes {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(id) = self.tracked.take() {
            untrack(id);
        }
    }
}

/// Starts `launch.masters` instances, the first on `launch.port`, each in `data/<port>`
/// (all in the first one's process group, so that one signal reaches every node), waits
/// until each listens, joins them into a cluster and waits until every node serves every
/// slot.
pub(super) fn launch_cluster(inst: &Installation, launch: &Launch) -> Result<Process> {
    if launch.tls.is_some() {
        // Tried: with `tls-cluster yes` the nodes never agreed (redis-cli --cluster create
        // waited for the join forever).
        bail!(
            "dbcompare does not start a Redis Cluster serving TLS yet; give one with \
             --url redis-cluster=rediss+cluster://:PASSWORD@h1:7000,h2:7001/"
        );
    }
    if major_version(&inst.version).is_some_and(|v| v < 7) {
        bail!(
            "the throw-away Redis Cluster needs Redis 7.0 or later (for cluster-port); this is {}",
            inst.version
        );
    }
    let data = launch.dir.join("data");
    std::fs::create_dir(&data).with_context(|| format!("creating {}", data.display()))?;
    // Every node's port and cluster bus port, each a different one.
    let mut taken = std::collections::HashSet::from([launch.port]);
    let mut other_port = || -> Result<u16> {
        loop {
            let port = free_port()?;
            if taken.insert(port) {
                return Ok(port);
            }
        }
    };
    let mut ports = vec![launch.port];
    while ports.len() < usize::from(launch.masters) {
        ports.push(other_port()?);
    }
    let mut nodes = Nodes {
        children: Vec::new(),
        tracked: None,
    };
    let mut group = 0;
    for &port in &ports {
        let node = data.join(port.to_string());
        std::fs::create_dir(&node).with_context(|| format!("creating {}", node.display()))?;
        let mut conf = config(launch, &node, port);
        // The cluster bus on a port of its own (not port + 10000, which may be taken or
        // out of range).
        conf.push_str(&format!(
            "cluster-enabled yes\ncluster-config-file nodes.conf\ncluster-port {}\n",
            other_port()?
        ));
        let conf_path = launch.dir.join(format!("redis-{port}.conf"));
        write_file(&conf_path, &conf)?;
        let mut server = Command::new(&inst.server);
        server.arg(&conf_path);
        let stderr = launch.dir.join(format!("redis-{port}.stderr"));
        let Process::Child(child) = spawn_server(server, group, &stderr)? else {
            unreachable!("spawn_server starts a child");
        };
        if group == 0 {
            group = child.id() as i32;
            let dir = (!launch.keep_data).then(|| launch.dir.to_path_buf());
            nodes.tracked = Some(track(group, true, dir));
            // For `dbcompare clean` after a kill -9, from now on: the first node leads
            // every node's process group.
            if let Err(e) = leftovers::mark_server(launch.dir, group) {
                crate::output::errln!("warning: {e:#}");
            }
        }
        nodes.children.push(child);
    }
    for (child, &port) in nodes.children.iter_mut().zip(&ports) {
        wait_until_listening(child, port, launch.dir)
            .with_context(|| format!("the node on port {port}"))?;
    }
    let addresses: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let mut create = cli(inst, launch);
    create.args(["--cluster", "create"]).args(&addresses).args([
        "--cluster-replicas",
        "0",
        "--cluster-yes",
    ]);
    run_setup_within(create, "joining the nodes into a cluster", READY_TIMEOUT)?;
    let deadline = Instant::now() + READY_TIMEOUT;
    for &port in &ports {
        loop {
            let mut info = cli(inst, launch);
            info.args(["-p", &port.to_string(), "CLUSTER", "INFO"]);
            let out = info
                .stdin(std::process::Stdio::null())
                .output()
                .context("running redis-cli CLUSTER INFO")?;
            let text = String::from_utf8_lossy(&out.stdout);
            if text.lines().any(|l| l.trim() == "cluster_state:ok")
                && text.lines().any(|l| l.trim() == "cluster_slots_ok:16384")
            {
                break;
            }
            if crate::interrupt::requested() {
                bail!("interrupted while the cluster was being made");
            }
            if Instant::now() > deadline {
                bail!(
                    "the node on port {port} did not serve every slot within {READY_TIMEOUT:?}: {}",
                    text.trim()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let children = std::mem::take(&mut nodes.children);
    Ok(Process::Group(children.into_iter().zip(ports).collect()))
}

/// The major version in redis-server's `--version` line (`Redis server v=7.0.15 ...`).
fn major_version(line: &str) -> Option<u32> {
    let v = line.split("v=").nth(1)?;
    v.split('.').next()?.parse().ok()
}

/// redis-cli for the throw-away nodes: the password from the environment (never on a
/// command line), TLS verified against their CA.
fn cli(inst: &Installation, launch: &Launch) -> Command {
    let mut cli = Command::new(inst.tool("cli"));
    cli.env("REDISCLI_AUTH", launch.password)
        .args(["-h", "127.0.0.1"]);
    if let Some(tls) = launch.tls {
        cli.arg("--tls").arg("--cacert").arg(&tls.ca);
    }
    cli
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_major_version_is_read_from_the_version_line() {
        let line = "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64";
        assert_eq!(super::major_version(line), Some(7));
        assert_eq!(super::major_version("Redis server v=6.0.16 sha=0"), Some(6));
        assert_eq!(super::major_version("Redis (unknown version)"), None);
    }
}
