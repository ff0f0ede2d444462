//! The machine's floor, measured before the stores: what a loopback TCP round trip costs
//! (at concurrency 1 and 8) and what a durable write costs in the directory the throw-away
//! servers keep their data in. A store's latency is then read as a multiple of what the
//! machine allows: "the durable insert took 2.1x the disk's fdatasync".

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::{latency, new_histogram, record};
use crate::report::model::{Floor, FloorFigure};

/// Round trips timed per connection (after as many untimed).
const PINGS: u32 = 2_000;

/// Durable writes timed at most, and for at most this long.
const SYNCS: u32 = 200;
const SYNC_BUDGET: Duration = Duration::from_secs(2);

/// The block a durable write writes: a small record's worth.
const BLOCK: usize = 4096;

/// Measures the floor: loopback round trips at concurrency 1 and 8, then `fdatasync` in
/// `dir`. A few seconds at most.
pub fn measure(dir: &Path) -> Result<Floor> {
    Ok(Floor {
        loopback_c1: round_trips(1).context("timing loopback round trips")?,
        loopback_c8: round_trips(8).context("timing loopback round trips at concurrency 8")?,
        fsync: durable_writes(dir)
            .with_context(|| format!("timing durable writes in {}", dir.display()))?,
        fsync_dir: dir.display().to_string(),
    })
}

/// `connections` clients, each on its own thread, each pinging its own echo thread over
/// 127.0.0.1 one byte at a time; every client's round trips in one histogram.
fn round_trips(connections: usize) -> Result<FloorFigure> {
    let listener = TcpListener::bind("127.0.0.1:0").context("binding 127.0.0.1")?;
    let address = listener.local_addr()?;
    let echoes = std::thread::spawn(move || -> std::io::Result<()> {
        let mut threads = Vec::new();
        for _ in 0..connections {
            let (mut socket, _) = listener.accept()?;
            socket.set_nodelay(true)?;
            threads.push(std::thread::spawn(move || {
                let mut byte = [0u8; 1];
                while socket.read_exact(&mut byte).is_ok() {
                    if socket.write_all(&byte).is_err() {
                        break;
                    }
                }
            }));
        }
        for t in threads {
            let _ = t.join();
        }
        Ok(())
    });
    let clients: Vec<_> = (0..connections)
        .map(|_| {
            std::thread::spawn(move || -> std::io::Result<hdrhistogram::Histogram<u64>> {
                let mut socket = TcpStream::connect(address)?;
                socket.set_nodelay(true)?;
                let mut histogram = new_histogram();
                let mut byte = [7u8; 1];
                for i in 0..PINGS * 2 {
                    let t = Instant::now();
                    socket.write_all(&byte)?;
                    socket.read_exact(&mut byte)?;
                    if i >= PINGS {
                        record(&mut histogram, t.elapsed());
                    }
                }
                Ok(histogram)
            })
        })
        .collect();
    let mut all = new_histogram();
    for c in clients {
        let h = c
            .join()
            .map_err(|_| anyhow::anyhow!("a ping thread panicked"))??;
        all.add(&h).expect("histograms of one shape merge");
    }
    echoes
        .join()
        .map_err(|_| anyhow::anyhow!("the echo thread panicked"))??;
    Ok(figure(&all, connections as u32))
}

/// Writes of one block at the start of a file, each followed by `fdatasync`, as a
/// database's log does.
fn durable_writes(dir: &Path) -> Result<FloorFigure> {
    let file = tempfile::Builder::new()
        .prefix(".dbcompare-floor")
        .tempfile_in(dir)?;
    let block = vec![0x5au8; BLOCK];
    let mut histogram = new_histogram();
    let started = Instant::now();
    for i in 0..=SYNCS {
        let t = Instant::now();
        std::os::unix::fs::FileExt::write_all_at(file.as_file(), &block, 0)
            .context("writing a block")?;
        file.as_file().sync_data().context("fdatasync")?;
        // The first write allocates the block: untimed.
        if i > 0 {
            record(&mut histogram, t.elapsed());
        }
        if started.elapsed() > SYNC_BUDGET && histogram.len() >= 10 {
            break;
        }
    }
    Ok(figure(&histogram, 1))
}

fn figure(h: &hdrhistogram::Histogram<u64>, concurrency: u32) -> FloorFigure {
    let l = latency(h);
    FloorFigure {
        concurrency,
        samples: h.len(),
        p50_us: l.p50,
        p99_us: l.p99,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_is_measured_and_plausible() {
        let dir = tempfile::tempdir().unwrap();
        let floor = measure(dir.path()).unwrap();
        assert_eq!(floor.loopback_c1.samples, u64::from(PINGS));
        assert_eq!(floor.loopback_c8.samples, u64::from(PINGS) * 8);
        assert_eq!(floor.loopback_c8.concurrency, 8);
        // A round trip takes some microseconds, never nothing and never seconds.
        for f in [&floor.loopback_c1, &floor.loopback_c8, &floor.fsync] {
            assert!(f.p50_us > 0.0 && f.p50_us <= f.p99_us, "{f:?}");
            assert!(f.p99_us < 1_000_000.0, "{f:?}");
        }
        assert!(floor.fsync.samples >= 10, "{:?}", floor.fsync);
        assert_eq!(floor.fsync_dir, dir.path().display().to_string());
        // Nothing is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_unusable_directory_is_an_error_naming_it() {
        let err = measure(Path::new("/nonexistent/dbcompare-floor")).unwrap_err();
        assert!(
            format!("{err:#}").contains("/nonexistent/dbcompare-floor"),
            "{err:#}"
        );
    }
}
