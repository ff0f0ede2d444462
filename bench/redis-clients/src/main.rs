//! Bare GET loops, to split what the Redis driver costs from what dbcompare adds: the redis
//! crate's blocking connection (a thread per connection), its multiplexed async connection
//! as `get_multiplexed_async_connection` gives it (the connection's driver a task of its
//! own, each command handed to it over a channel: how dbcompare connects), and the same
//! connection with its driver polled inside the task that sends the commands (no second
//! task). Each GETs one 100-byte key, as redis-benchmark's GET does; values fetched, not
//! decoded.
//! Usage: redis-clients sync|async|inline URL SECONDS [CONNECTIONS [LOOPS]]; connections 1
//! and loops 1 by default (async ones only: connection i on loop i mod LOOPS).
//! Prints `mode operations/s CPU-us/operation`.
use std::future::Future;
use std::pin::pin;
use std::task::Poll;
use std::time::{Duration, Instant};

const KEY: &str = "redis-clients:key";

/// User and system CPU seconds of this process.
fn cpu() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (mode, url, secs) = (&args[1], &args[2], args[3].parse::<u64>().unwrap());
    let connections: u64 = args.get(4).map_or(1, |a| a.parse().unwrap());
    let loops: u64 = args.get(5).map_or(1, |a| a.parse().unwrap());
    let limit = Duration::from_secs(secs);
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut setup = client.get_connection().unwrap();
    redis::cmd("SET")
        .arg(KEY)
        .arg(vec![b'x'; 100])
        .query::<()>(&mut setup)
        .unwrap();
    let (t0, c0) = (Instant::now(), cpu());
    let n: u64 = if mode == "sync" {
        let threads: Vec<_> = (0..connections)
            .map(|_| {
                let client = client.clone();
                std::thread::spawn(move || sync_loop(&client, limit))
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).sum()
    } else {
        let threads: Vec<_> = (0..loops)
            .map(|l| {
                let (client, mode) = (client.clone(), mode.clone());
                let mine = (0..connections).filter(|c| c % loops == l).count();
                std::thread::spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap();
                    rt.block_on(async {
                        let tasks: Vec<_> = (0..mine)
                            .map(|_| {
                                let (client, inline) = (client.clone(), mode == "inline");
                                tokio::spawn(async_loop(client, inline, limit))
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
    };
    let (wall, cpu_s) = (t0.elapsed().as_secs_f64(), cpu() - c0);
    println!(
        "{mode} {:.0} {:.2}",
        n as f64 / wall,
        cpu_s / n as f64 * 1e6
    );
}

/// One blocking connection GETting until `limit` has passed; returns its command count.
fn sync_loop(client: &redis::Client, limit: Duration) -> u64 {
    let mut conn = client.get_connection().unwrap();
    let (t0, mut n) = (Instant::now(), 0);
    while t0.elapsed() < limit {
        let value: Option<Vec<u8>> = redis::cmd("GET").arg(KEY).query(&mut conn).unwrap();
        assert!(value.is_some());
        n += 1;
    }
    n
}

/// One multiplexed connection GETting until `limit` has passed; returns its command count.
/// `inline`: the connection's driver is polled by this task, not spawned.
async fn async_loop(client: redis::Client, inline: bool, limit: Duration) -> u64 {
    let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
    if !inline {
        let conn = client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .unwrap();
        return get_loop(conn, limit).await;
    }
    let info = client.get_connection_info();
    let addr = match info.addr() {
        redis::ConnectionAddr::Tcp(host, port) => format!("{host}:{port}"),
        other => panic!("a TCP address, not {other:?}"),
    };
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (conn, driver) =
        redis::aio::MultiplexedConnection::new_with_config(info.redis_settings(), stream, config)
            .await
            .unwrap();
    let mut driver = pin!(driver);
    let mut work = pin!(get_loop(conn, limit));
    // Both polled on every wake of this task; the commands' futures come first.
    std::future::poll_fn(|cx| {
        if let Poll::Ready(n) = work.as_mut().poll(cx) {
            return Poll::Ready(n);
        }
        if driver.as_mut().poll(cx).is_ready() {
            panic!("the connection closed");
        }
        work.as_mut().poll(cx)
    })
    .await
}

async fn get_loop(mut conn: redis::aio::MultiplexedConnection, limit: Duration) -> u64 {
    let (t0, mut n) = (Instant::now(), 0);
    while t0.elapsed() < limit {
        let value: Option<Vec<u8>> = redis::cmd("GET")
            .arg(KEY)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert!(value.is_some());
        n += 1;
    }
    n
}
