//! Bare point-select loops, to split what the MySQL driver costs from what dbcompare adds:
//! the blocking `mysql` crate (a thread per connection, as sysbench) and mysql_async (tasks
//! on current-thread runtimes, as dbcompare's event loops), both from the same project and
//! protocol code, each running dbcompare's prepared search on dbcompare's table over TCP;
//! rows fetched, not decoded; and mysql_async again with each row decoded as dbcompare
//! decodes it (its columns, the JSON document) and digested (`checked`): the least a client
//! that checks every answer adds to the driver.
//! Usage: mysql-clients sync|async|checked URL SECONDS [CONNECTIONS [LOOPS]]; connections 1
//! and loops 1 by default (async and checked: connection i on loop i mod LOOPS).
//! Prints `mode queries/s CPU-us/query`.
use std::time::{Duration, Instant};

// dbcompare's allocator (without its counting), so that the loops differ from dbcompare
// only in what they do.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    let connections: u64 = args.get(4).map_or(1, |a| a.parse().unwrap());
    let loops: u64 = args.get(5).map_or(1, |a| a.parse().unwrap());
    let limit = Duration::from_secs(secs);
    let keys = |c: u64| {
        Keys(
            0x9e3779b97f4a7c15 ^ (c + 1).wrapping_mul(0x2545f4914f6cdd1d),
            10_000,
        )
    };
    let (t0, c0) = (Instant::now(), cpu());
    let n: u64 = match mode.as_str() {
        "sync" => {
            let threads: Vec<_> = (0..connections)
                .map(|c| {
                    let url = url.clone();
                    std::thread::spawn(move || sync_loop(&url, keys(c), limit))
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).sum()
        }
        _ => {
            let threads: Vec<_> = (0..loops)
                .map(|l| {
                    let url = url.clone();
                    let mine: Vec<u64> = (0..connections).filter(|c| c % loops == l).collect();
                    let check = mode == "checked";
                    std::thread::spawn(move || {
                        let rt = tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()
                            .unwrap();
                        rt.block_on(async {
                            let tasks: Vec<_> = mine
                                .into_iter()
                                .map(|c| {
                                    tokio::spawn(async_loop(url.clone(), keys(c), limit, check))
                                })
                                .collect();
                            let mut n = 0;
                            for t in tasks {
                                n += t.await.unwrap();
                            }
                            n
                        })
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).sum()
        }
    };
    let (wall, cpu_s) = (t0.elapsed().as_secs_f64(), cpu() - c0);
    println!(
        "{mode} {:.0} {:.2}",
        n as f64 / wall,
        cpu_s / n as f64 * 1e6
    );
}

/// One blocking connection searching until `limit` has passed; returns its query count.
fn sync_loop(url: &str, mut keys: Keys, limit: Duration) -> u64 {
    use mysql::prelude::Queryable;
    let opts = mysql::Opts::from_url(url).unwrap();
    let opts = mysql::OptsBuilder::from_opts(opts)
        .prefer_socket(false)
        .tcp_nodelay(true);
    let mut conn = mysql::Conn::new(opts).unwrap();
    let stmt = conn.prep(FIND).unwrap();
    let (t0, mut n) = (Instant::now(), 0);
    while t0.elapsed() < limit {
        let row: Option<mysql::Row> = conn.exec_first(&stmt, (keys.next(),)).unwrap();
        assert!(row.is_some());
        n += 1;
    }
    n
}

/// One mysql_async connection searching until `limit` has passed, each row decoded and
/// digested if `check`; returns its query count.
async fn async_loop(url: String, mut keys: Keys, limit: Duration, check: bool) -> u64 {
    use mysql_async::prelude::Queryable;
    let opts = mysql_async::Opts::from_url(&url).unwrap();
    let opts = mysql_async::OptsBuilder::from_opts(opts).prefer_socket(false);
    let mut conn = mysql_async::Conn::new(opts).await.unwrap();
    let stmt = conn.prep(FIND).await.unwrap();
    let (t0, mut n) = (Instant::now(), 0);
    while t0.elapsed() < limit {
        // The result stream, as dbcompare reads it: `exec_first` boxes one more future.
        let mut result = conn.exec_iter(&stmt, (keys.next(),)).await.unwrap();
        let row: Option<mysql_async::Row> = result.next().await.unwrap();
        result.drop_result().await.unwrap();
        let row = row.expect("every key is in the table");
        if check {
            use std::hash::BuildHasher;
            const STATE: foldhash::quality::FixedState =
                foldhash::quality::FixedState::with_seed(2016);
            std::hint::black_box(STATE.hash_one(decode(row)));
        }
        n += 1;
    }
    n
}

/// The JSON document of dbcompare's records.
#[derive(Hash, serde::Deserialize)]
struct Data {
    name: String,
    age: i64,
}

/// A row of dbcompare's table, decoded as dbcompare decodes it.
#[derive(Hash)]
struct Record {
    id: i64,
    unique_id: String,
    created_by: i64,
    updated_by: i64,
    deleted_by: i64,
    created_at: chrono::DateTime<chrono::Utc>,
    data: Data,
}

fn decode(row: mysql_async::Row) -> Record {
    type Columns = (i64, String, i64, i64, i64, chrono::NaiveDateTime, String);
    let (id, unique_id, created_by, updated_by, deleted_by, created_at, data): Columns =
        mysql_async::from_row_opt(row).expect("the row has the table's columns");
    Record {
        id,
        unique_id,
        created_by,
        updated_by,
        deleted_by,
        created_at: created_at.and_utc(),
        data: serde_json::from_str(&data).expect("the data column holds the document"),
    }
}
