//! What a server's processes spent, read from /proc: CPU time (user and system), bytes
//! sent to and fetched from storage, and resident memory, over the whole process tree of a
//! throw-away server (PostgreSQL forks a backend per connection; a Redis child saves a
//! snapshot). A [`Sampler`] on a thread of its own reads the tree at a phase's start, every
//! [`SAMPLE_EVERY`] while it runs (less often for a server whose reading takes long; for its
//! peak memory and its time series) and at its end.
//!
//! What each figure misses is said in docs/methodology.md: CPU time is counted in the
//! kernel's clock ticks (10 ms per process per reading); a process that exits inside the
//! phase is counted through its parent (a reaped child's CPU time is in the parent's
//! `cutime`/`cstime`, its I/O in the parent's /proc/PID/io); memory is the sum of the
//! processes' proportional set sizes, so memory they share is counted once.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// How often a running phase's server is read, at most.
/// (Reading a PostgreSQL server's tree takes about 3 ms of the reader's CPU, most of it the
/// kernel summing each process's memory: once a second keeps it near 0.3% of a core.)
pub const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// A reading takes at most this share of the time between readings: a server whose memory
/// takes longer to sum is read less often than every [`SAMPLE_EVERY`]. (The kernel walks
/// every page a process maps, holding that process's memory map; a MariaDB server holding
/// 650 MB took 20 ms a reading, which once a second took 2% of a core from a 2-core machine
/// and stalled the server's own memory mapping for as long.)
const READING_SHARE: u32 = 300;

/// However long a reading takes, the readings are at most this many `every`s apart.
const MAX_SPACING: u32 = 10;

/// The wait before the next reading, when the last one took `took` of the reader's CPU.
fn next_wait(every: Duration, took: Duration) -> Duration {
    every.max(took * READING_SHARE).min(every * MAX_SPACING)
}

/// A server's processes: its main ones and, at each reading, all their descendants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processes {
    roots: Vec<i32>,
}

/// What a process tree had spent, in all, when it was read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub user: Duration,
    pub system: Duration,
    /// Bytes the processes caused to be fetched from storage.
    pub read_bytes: u64,
    /// Bytes the processes caused to be sent to storage.
    pub write_bytes: u64,
    /// Resident memory now (proportional set size, summed).
    pub memory_bytes: u64,
    /// Processes in the tree.
    pub processes: u32,
}

impl Usage {
    /// CPU time, user and system.
    pub fn cpu(&self) -> Duration {
        self.user + self.system
    }

    /// What was spent from `before` to `self` (memory is `self`'s).
    pub fn since(&self, before: &Usage) -> Usage {
        Usage {
            user: self.user.saturating_sub(before.user),
            system: self.system.saturating_sub(before.system),
            read_bytes: self.read_bytes.saturating_sub(before.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(before.write_bytes),
            memory_bytes: self.memory_bytes,
            processes: self.processes,
        }
    }
}

/// The least CPU time a reading of a process tree can tell from none: one of the kernel's
/// clock ticks (10 ms at 100 Hz). A process's count is cut to whole ticks at each reading,
/// so what a phase spent is off by up to a tick for each busy process.
pub fn clock_tick() -> Duration {
    Duration::from_secs(1) / u32::try_from(ticks_per_second()).unwrap_or(100)
}

/// The kernel's clock ticks per second, in which /proc/PID/stat counts CPU time.
fn ticks_per_second() -> u64 {
    // SAFETY: sysconf reads a constant.
    match unsafe { libc::sysconf(libc::_SC_CLK_TCK) } {
        n if n > 0 => n as u64,
        _ => 100,
    }
}

impl Processes {
    /// The processes `roots` and their descendants.
    pub fn of(roots: Vec<i32>) -> Self {
        Processes { roots }
    }

    /// The main processes.
    pub fn roots(&self) -> &[i32] {
        &self.roots
    }

    /// Reads every process of the tree now. A process that ended since its parent listed
    /// it is left out (its time is then in its parent's); a root that cannot be read is an
    /// error.
    pub fn read(&self) -> Result<Usage> {
        let tick = ticks_per_second();
        let mut usage = Usage::default();
        let mut pending: Vec<(i32, bool)> = self.roots.iter().map(|&p| (p, true)).collect();
        while let Some((pid, root)) = pending.pop() {
            match read_process(pid, tick) {
                Ok(one) => {
                    usage.user += one.user;
                    usage.system += one.system;
                    usage.read_bytes += one.read_bytes;
                    usage.write_bytes += one.write_bytes;
                    usage.memory_bytes += one.memory_bytes;
                    usage.processes += 1;
                    pending.extend(children(pid).into_iter().map(|c| (c, false)));
                }
                Err(e) if root => return Err(e),
                Err(_) => {}
            }
        }
        Ok(usage)
    }
}

/// One process's own figures, its reaped children's CPU time included.
fn read_process(pid: i32, tick: u64) -> Result<Usage> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("reading /proc/{pid}/stat"))?;
    // The fields after the parenthesised command name, from the state (field 3) on.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let field = |n: usize| -> u64 { fields.get(n - 3).and_then(|f| f.parse().ok()).unwrap_or(0) };
    let ticks = |t: u64| Duration::from_nanos(t * (1_000_000_000 / tick));
    let io = std::fs::read_to_string(format!("/proc/{pid}/io"))
        .with_context(|| format!("reading /proc/{pid}/io"))?;
    let io_field = |name: &str| -> u64 {
        io.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    Ok(Usage {
        // utime, stime, cutime, cstime: fields 14 to 17.
        user: ticks(field(14) + field(16)),
        system: ticks(field(15) + field(17)),
        read_bytes: io_field("read_bytes"),
        write_bytes: io_field("write_bytes").saturating_sub(io_field("cancelled_write_bytes")),
        memory_bytes: memory_bytes(pid),
        processes: 1,
    })
}

/// A process's proportional set size (`Pss` of smaps_rollup), or its resident set size
/// where the kernel has no rollup; 0 when neither can be read.
fn memory_bytes(pid: i32) -> u64 {
    let kb = |text: String, key: &str| -> Option<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(key))?
            .trim()
            .strip_suffix("kB")?
            .trim()
            .parse::<u64>()
            .ok()
    };
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|t| kb(t, "Pss:"))
        .or_else(|| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            kb(status, "VmRSS:")
        })
        .map_or(0, |kb| kb * 1024)
}

/// A process's children, from every thread's list (a child belongs to the thread that
/// forked it).
fn children(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|c| c.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

/// The processes listening on this machine's TCP `port` (the server of a URL on the
/// loopback), outermost only: a child that inherited its parent's socket is in the parent's
/// tree already. None when no process this user may read listens there.
pub fn listening_on(port: u16) -> Vec<i32> {
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // local_address is `ADDR:PORT` in hex; state 0A is LISTEN; the inode is field 9.
            let listening = fields.get(3) == Some(&"0A");
            let on_port = fields
                .get(1)
                .and_then(|a| a.rsplit_once(':'))
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok())
                == Some(port);
            if let (true, true, Some(inode)) = (listening, on_port, fields.get(9)) {
                inodes.push(format!("socket:[{inode}]"));
            }
        }
    }
    if inodes.is_empty() {
        return Vec::new();
    }
    let Ok(all) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let holders: Vec<i32> = all
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
                fds.filter_map(Result::ok).any(|fd| {
                    std::fs::read_link(fd.path())
                        .is_ok_and(|l| inodes.iter().any(|i| l.as_os_str() == i.as_str()))
                })
            })
        })
        .collect();
    let parent = |pid: i32| -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    holders
        .iter()
        .copied()
        .filter(|&pid| parent(pid).is_none_or(|p| !holders.contains(&p)))
        .collect()
}

/// One reading of a running phase's server: when, and its CPU time so far and memory now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Since the phase's start.
    pub at: Duration,
    pub cpu: Duration,
    pub memory_bytes: u64,
}

/// What a phase's server spent, read at its start and end, and its readings in between.
#[derive(Debug, Clone, PartialEq)]
pub struct Watched {
    pub start: Usage,
    pub end: Usage,
    /// The largest memory read, at the start, the end or in between.
    pub peak_memory_bytes: u64,
    pub samples: Vec<Sample>,
    /// The CPU time the readings between the start's and the end's cost this process (its
    /// reading thread's), inside the phase's clocks and not the client's work: it is taken
    /// off the client's CPU time.
    pub reading_cpu: Duration,
}

impl Watched {
    /// What the server spent over the phase.
    pub fn spent(&self) -> Usage {
        self.end.since(&self.start)
    }
}

/// Reads a server's processes on a thread of its own while a phase runs.
pub struct Sampler {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<Result<Watched>>>,
}

impl Sampler {
    /// Reads the processes once (the phase's start) and then every `every` until
    /// [`Sampler::finish`]; fails if they cannot be read now.
    pub fn start(processes: Processes, every: Duration) -> Result<Sampler> {
        let (ready_tx, ready) = mpsc::channel::<Result<()>>();
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("server-reader".to_string())
            .spawn(move || -> Result<Watched> {
                // What a reading costs is the reader's CPU time, not the wall time a busy
                // machine stretches it to.
                let reading = thread_cpu_time();
                let start = match processes.read() {
                    Ok(u) => u,
                    Err(e) => {
                        let _ = ready_tx.send(Err(anyhow::anyhow!("{e:#}")));
                        return Err(e);
                    }
                };
                let read_took = thread_cpu_time().saturating_sub(reading);
                let t0 = Instant::now();
                // The readings between the start's and the end's fall inside the phase's
                // clocks: their CPU time is what the client's is to be relieved of.
                let began = thread_cpu_time();
                let _ = ready_tx.send(Ok(()));
                let mut peak = start.memory_bytes;
                let mut samples = Vec::new();
                let mut between = Duration::ZERO;
                let mut wait = next_wait(every, read_took);
                let end = loop {
                    let last = stopped.recv_timeout(wait) != Err(RecvTimeoutError::Timeout);
                    if last {
                        between = thread_cpu_time().saturating_sub(began);
                    }
                    let reading = thread_cpu_time();
                    let now = processes.read()?;
                    wait = next_wait(every, thread_cpu_time().saturating_sub(reading));
                    peak = peak.max(now.memory_bytes);
                    if last {
                        break now;
                    }
                    samples.push(Sample {
                        at: t0.elapsed(),
                        cpu: now.cpu().saturating_sub(start.cpu()),
                        memory_bytes: now.memory_bytes,
                    });
                };
                Ok(Watched {
                    start,
                    end,
                    peak_memory_bytes: peak,
                    samples,
                    reading_cpu: between,
                })
            })
            .context("starting the server reader's thread")?;
        match ready.recv() {
            Ok(Ok(())) => Ok(Sampler {
                stop: Some(stop),
                thread: Some(thread),
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(anyhow::anyhow!("the server reader's thread ended at once")),
        }
    }

    /// Reads the processes a last time (the phase's end) and gives what was read.
    pub fn finish(mut self) -> Result<Watched> {
        self.stop.take();
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(watched)) => watched,
            _ => Err(anyhow::anyhow!("the server reader's thread panicked")),
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The calling thread's CPU time so far.
fn thread_cpu_time() -> Duration {
    // SAFETY: clock_gettime only writes into the struct we pass.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// This process's own bytes to and from storage (an embedded store's are the client's).
pub fn own_io() -> Result<Usage> {
    let pid = std::process::id() as i32;
    let mut own = read_process(pid, ticks_per_second())?;
    // The CPU and memory of the client are reported as the client's.
    own.user = Duration::ZERO;
    own.system = Duration::ZERO;
    own.memory_bytes = 0;
    Ok(own)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Child, Command, Stdio};

    /// A shell whose child (a subshell) counts to `n` and ends; the shell then prints its
    /// `times` (its own and its reaped children's CPU) and waits for a line.
    fn burner(n: u64) -> Child {
        let script = format!("(i=0; while [ $i -lt {n} ]; do i=$((i+1)); done); times; read _");
        Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh")
    }

    /// The CPU time `times` printed: `0m0.01s 0m0.00s`, the shell's, then its children's.
    fn times(shell: &mut Child) -> Duration {
        let mut lines = BufReader::new(shell.stdout.as_mut().unwrap()).lines();
        let mut total = Duration::ZERO;
        for _ in 0..2 {
            let line = lines.next().unwrap().unwrap();
            for t in line.split_whitespace() {
                let (m, s) = t.trim_end_matches('s').split_once('m').unwrap();
                let secs = m.parse::<f64>().unwrap() * 60.0 + s.parse::<f64>().unwrap();
                total += Duration::from_secs_f64(secs);
            }
        }
        total
    }

    #[test]
    fn a_childs_cpu_time_is_counted_through_its_parent_after_it_ends() {
        let mut shell = burner(300_000);
        let tree = Processes::of(vec![shell.id() as i32]);
        // The child has ended once `times` printed: only its parent's cutime/cstime has it.
        let printed = times(&mut shell);
        let read = tree.read().expect("the shell is readable");
        shell.stdin.take().unwrap().write_all(b"\n").unwrap();
        shell.wait().unwrap();
        assert!(printed >= Duration::from_millis(50), "burnt {printed:?}");
        let diff = read.cpu().as_secs_f64() - printed.as_secs_f64();
        // Both count in clock ticks of 10 ms, a few of them per reading.
        assert!(
            diff.abs() <= 0.05,
            "read {:?}, times {printed:?}",
            read.cpu()
        );
    }

    #[test]
    fn bytes_written_and_synced_by_the_tree_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out");
        let mut shell = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "read _; dd if=/dev/zero of={} bs=1M count=4 conv=fsync 2>/dev/null; echo done; read _",
                file.display()
            ))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let tree = Processes::of(vec![shell.id() as i32]);
        let before = tree.read().unwrap();
        let mut stdin = shell.stdin.take().unwrap();
        stdin.write_all(b"\n").unwrap();
        // dd has ended and been reaped by the shell once it says so.
        let mut line = String::new();
        BufReader::new(shell.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "done");
        let after = tree.read().unwrap();
        stdin.write_all(b"\n").unwrap();
        shell.wait().unwrap();
        let written = after.since(&before).write_bytes;
        assert!(written >= 4 << 20, "wrote {written} bytes");
        assert!(after.memory_bytes > 0);
    }

    #[test]
    fn a_sampler_reads_the_start_the_end_and_the_peak() {
        let mut shell = burner(200_000);
        let sampler = Sampler::start(
            Processes::of(vec![shell.id() as i32]),
            Duration::from_millis(20),
        )
        .unwrap();
        let printed = times(&mut shell);
        // Readings of a small process take well under a millisecond: 300 times that apart
        // at most, several fit in a second.
        std::thread::sleep(Duration::from_secs(1));
        let watched = sampler.finish().unwrap();
        shell.stdin.take().unwrap().write_all(b"\n").unwrap();
        shell.wait().unwrap();
        assert!(
            watched.samples.len() >= 3,
            "{} samples",
            watched.samples.len()
        );
        assert!(watched.peak_memory_bytes >= watched.end.memory_bytes);
        let spent = watched.spent().cpu().as_secs_f64();
        assert!(
            spent <= printed.as_secs_f64() + 0.05 && spent >= printed.as_secs_f64() - 0.1,
            "spent {spent} s, times {printed:?}"
        );
        let last = watched.samples.last().unwrap();
        assert!(last.cpu <= watched.spent().cpu());
    }

    #[test]
    fn a_reading_that_takes_long_spaces_the_next_ones() {
        let second = Duration::from_secs(1);
        assert_eq!(next_wait(second, Duration::from_millis(3)), second);
        assert_eq!(
            next_wait(second, Duration::from_millis(20)),
            Duration::from_secs(6)
        );
        assert_eq!(
            next_wait(second, Duration::from_millis(200)),
            Duration::from_secs(10)
        );
    }

    #[test]
    fn the_process_listening_on_a_port_is_found_and_no_other() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert_eq!(listening_on(port), vec![std::process::id() as i32]);
        drop(listener);
        assert!(listening_on(port).is_empty());
    }

    #[test]
    fn a_process_that_is_gone_cannot_be_read() {
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id() as i32;
        child.wait().unwrap();
        assert!(Processes::of(vec![pid]).read().is_err());
        assert!(Sampler::start(Processes::of(vec![pid]), SAMPLE_EVERY).is_err());
    }
}
