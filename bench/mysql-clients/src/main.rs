//! Bare point-select loops at concurrency 1, to split what the MySQL driver costs from what
//! dbcompare adds: the blocking `mysql` crate and mysql_async (on a current-thread runtime,
//! as dbcompare's one event loop), both from the same project and protocol code, each running
//! dbcompare's prepared search on dbcompare's table over TCP; rows fetched, not decoded.
//! Usage: mysql-clients sync|async URL SECONDS; prints `mode queries/s CPU-us/query`.
use std::time::{Duration, Instant};

const FIND: &str = "SELECT id, unique_id, created_by, updated_by, deleted_by, created_at, data \
                    FROM dbcompare_records WHERE unique_id = ?";

/// User and system CPU seconds of this process.
fn cpu() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// Keys `small-1` .. `small-N`, drawn by xorshift.
struct Keys(u64, u64);
impl Keys {
    fn next(&mut self) -> String {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        format!("small-{}", 1 + self.0 % self.1)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (mode, url, secs) = (&args[1], &args[2], args[3].parse::<u64>().unwrap());
    let mut keys = Keys(0x9e3779b97f4a7c15, 10_000);
    let limit = Duration::from_secs(secs);
    let (n, wall, cpu_s) = match mode.as_str() {
        "sync" => {
            use mysql::prelude::Queryable;
            let opts = mysql::Opts::from_url(url).unwrap();
            let opts = mysql::OptsBuilder::from_opts(opts)
                .prefer_socket(false)
                .tcp_nodelay(true);
            let mut conn = mysql::Conn::new(opts).unwrap();
            let stmt = conn.prep(FIND).unwrap();
            let (t0, c0) = (Instant::now(), cpu());
            let mut n = 0u64;
            while t0.elapsed() < limit {
                let row: Option<mysql::Row> = conn.exec_first(&stmt, (keys.next(),)).unwrap();
                assert!(row.is_some());
                n += 1;
            }
            (n, t0.elapsed().as_secs_f64(), cpu() - c0)
        }
        _ => {
            use mysql_async::prelude::Queryable;
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                let opts = mysql_async::Opts::from_url(url).unwrap();
                let opts = mysql_async::OptsBuilder::from_opts(opts).prefer_socket(false);
                let mut conn = mysql_async::Conn::new(opts).await.unwrap();
                let stmt = conn.prep(FIND).await.unwrap();
                let (t0, c0) = (Instant::now(), cpu());
                let mut n = 0u64;
                while t0.elapsed() < limit {
                    let row: Option<mysql_async::Row> =
                        conn.exec_first(&stmt, (keys.next(),)).await.unwrap();
                    assert!(row.is_some());
                    n += 1;
                }
                (n, t0.elapsed().as_secs_f64(), cpu() - c0)
            })
        }
    };
    println!(
        "{mode} {:.0} {:.2}",
        n as f64 / wall,
        cpu_s / n as f64 * 1e6
    );
}
