//! A throw-away PostgreSQL cluster: initdb, then pg_ctl start (as the `postgres` user when
//! dbcompare runs as root, since initdb refuses root).

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::host::{Installation, is_root, version_of, which, write_file};
use super::launch::Launch;
use super::process::{INIT_LIMIT, Process, run_setup, run_setup_within, wait_for_exit};
use crate::catalog::Launcher;

/// The settings appended to the cluster's postgresql.conf.
pub const CONFIG: &str = Launcher::Postgres.config().text;

/// The unprivileged user the cluster runs as when dbcompare is root.
const RUN_AS: &str = "postgres";

/// Debian keeps initdb and pg_ctl in a per-version directory that is not on PATH.
fn debian_bin_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((version, e.path().join("bin")))
        })
        .collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.0));
    dirs.into_iter().map(|(_, d)| d).collect()
}

pub fn find() -> Option<Installation> {
    // The newest Debian version first, then PATH: initdb, pg_ctl and postgres must match.
    let candidates = debian_bin_dirs();
    let bin = candidates
        .into_iter()
        .find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
        .or_else(|| which(&["initdb"], &[]).and_then(|p| p.parent().map(Path::to_path_buf)))?;
    let server = bin.join("postgres");
    let pg_ctl = bin.join("pg_ctl");
    if !server.is_file() || !pg_ctl.is_file() {
        return None;
    }
    Some(Installation {
        version: version_of(&server).unwrap_or_else(|| "PostgreSQL (unknown version)".into()),
        tools: vec![("initdb", bin.join("initdb")), ("pg_ctl", pg_ctl)],
        server,
    })
}

/// `command` run as `user` (through runuser) when `user` is given.
fn as_user(user: Option<&str>, program: &Path) -> Command {
    match user {
        Some(user) => {
            let mut c = Command::new("runuser");
            c.args(["-u", user, "--"]).arg(program);
            c
        }
        None => Command::new(program),
    }
}

pub(super) fn chown_to(path: &Path, user: &str) -> Result<()> {
    let name = CString::new(user)?;
    // SAFETY: getpwnam returns a pointer into static storage or null; we copy out at once.
    let ids = unsafe {
        let pw = libc::getpwnam(name.as_ptr());
        if pw.is_null() {
            None
        } else {
            Some(((*pw).pw_uid, (*pw).pw_gid))
        }
    };
    let Some((uid, gid)) = ids else {
        bail!(
            "PostgreSQL refuses to run as root and there is no '{user}' user to run it as: \
             run dbcompare as another user, or install the server package \
             ('provisioning/install.sh postgres'), which creates it"
        );
    };
    std::os::unix::fs::chown(path, Some(uid), Some(gid))
        .with_context(|| format!("giving {} to {user}", path.display()))
}

pub(super) fn launch(inst: &Installation, launch: &Launch) -> Result<Process> {
    let Launch { dir, port, .. } = *launch;
    let user = is_root().then_some(RUN_AS);
    // initdb reads the password from a file, made for it alone and deleted at once.
    let pwfile = dir.join("pwfile");
    write_file(&pwfile, launch.password)?;
    if let Some(user) = user {
        chown_to(dir, user)?;
        chown_to(&pwfile, user)?;
        if let Some(tls) = launch.tls {
            tls.give_to(|path| chown_to(path, user))?;
        }
    }
    let data = dir.join("data");
    let mut initdb = as_user(user, inst.tool("initdb"));
    initdb
        .arg("-D")
        .arg(&data)
        .arg(format!("--pwfile={}", pwfile.display()))
        .args([
            "-U",
            "bench",
            // TCP asks for the password; the socket, in a directory only the server's
            // user can enter, is trusted.
            "--auth-host=scram-sha-256",
            "--auth-local=trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ]);
    let initialised = run_setup_within(initdb, "initialising the PostgreSQL cluster", INIT_LIMIT);
    std::fs::remove_file(&pwfile).with_context(|| format!("deleting {}", pwfile.display()))?;
    initialised?;

    let conf = data.join("postgresql.conf");
    let mut settings =
        std::fs::read_to_string(&conf).with_context(|| format!("reading {}", conf.display()))?;
    settings.push_str("\n# --- dbcompare: configs/postgresql.conf ---\n");
    settings.push_str(CONFIG);
    settings.push_str(&launch.variant_lines(|key, value| format!("{key} = '{value}'")));
    write_file(&conf, &settings)?;

    let mut options = format!(
        "-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={}",
        dir.display()
    );
    if let Some(tls) = launch.tls {
        // TLS only: pg_hba's `hostssl` lines are the only ones TCP may use.
        options.push_str(&format!(
            " -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
            tls.cert.display(),
            tls.key.display()
        ));
        let hba = data.join("pg_hba.conf");
        write_file(
            &hba,
            "local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n",
        )?;
    }
    let mut start = as_user(user, inst.tool("pg_ctl"));
    start
        .arg("-D")
        .arg(&data)
        .arg("-l")
        .arg(dir.join("server.log"))
        .args(["-w", "-t", "60", "-o", &options, "start"]);
    run_setup(start, "starting PostgreSQL")?;
    let pid = std::fs::read_to_string(data.join("postmaster.pid"))
        .ok()
        .and_then(|s| s.lines().next()?.trim().parse::<i32>().ok())
        .context("reading postmaster.pid after the start")?;
    Ok(Process::PgCtl {
        pg_ctl: inst.tool("pg_ctl").to_path_buf(),
        data,
        as_user: user.map(str::to_string),
        pid,
    })
}

/// `pg_ctl stop -m fast`; if that fails, SIGKILL the postmaster.
pub(super) fn stop(pg_ctl: &Path, data: &Path, user: Option<&str>, pid: i32) -> Result<()> {
    let mut stop = as_user(user, pg_ctl);
    stop.arg("-D")
        .arg(data)
        .args(["-m", "fast", "-w", "-t", "30", "stop"]);
    let stopped = run_setup(stop, "stopping PostgreSQL");
    // pg_ctl returns once postmaster.pid is gone, a moment before the process itself.
    if !wait_for_exit(pid, Duration::from_secs(10)) {
        // SAFETY: kill(2) on the postmaster we started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        wait_for_exit(pid, Duration::from_secs(5));
    }
    stopped
}
