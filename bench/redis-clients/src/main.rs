//! Bare GET loops, to split what the Redis driver costs from what dbcompare adds: the redis
//! crate's blocking connection (a thread per connection), its multiplexed async connection
//! as `get_multiplexed_async_connection` gives it (the connection's driver a task of its
//! own, each command handed to it over a channel: how dbcompare connects), and the same
//! connection with its driver polled inside the task that sends the commands (no second
//! task), and a direct connection as dbcompare's: the socket read and written by the task
//! that sends the command (the crate packs the command; redis-protocol parses a reply that
//! came whole), with no second task and no channel. Each GETs one 100-byte key, as redis-benchmark's GET does;
//! values fetched, not decoded.
//! Usage: redis-clients sync|async|inline|direct URL SECONDS [CONNECTIONS [LOOPS]]; connections 1
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
                                let (client, mode) = (client.clone(), mode.clone());
                                tokio::spawn(async move {
                                    if mode == "direct" {
                                        direct_loop(client, limit).await
                                    } else {
                                        async_loop(client, mode == "inline", limit).await
                                    }
                                })
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

/// One direct connection GETting until `limit` has passed; returns its command count. The
/// socket is read and written by this task; a reply whole in the first read is parsed by
/// redis-protocol, one spread over several reads by the crate's own resumable decoder
/// (`ValueCodec`, as its multiplexed connection's task does): dbcompare's Redis connection.
async fn direct_loop(client: redis::Client, limit: Duration) -> u64 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_util::codec::Decoder;
    let addr = match client.get_connection_info().addr() {
        redis::ConnectionAddr::Tcp(host, port) => format!("{host}:{port}"),
        other => panic!("a TCP address, not {other:?}"),
    };
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (mut out, mut buf) = (Vec::new(), bytes::BytesMut::with_capacity(16 * 1024));
    let mut parser = redis::ValueCodec::default();
    let mut ask = async |cmd: &redis::Cmd| {
        out.clear();
        cmd.write_packed_command(&mut out);
        stream.write_all(&out).await.unwrap();
        let mut resuming = false;
        loop {
            if !buf.is_empty() {
                // As dbcompare: a whole RESP2 reply by redis-protocol, the rest by the crate.
                if !resuming
                    && let Some((frame, used)) =
                        redis_protocol::resp2::decode::decode(&buf).unwrap()
                {
                    use redis_protocol::resp2::types::OwnedFrame;
                    let value = match frame {
                        OwnedFrame::BulkString(b) => redis::Value::BulkString(b),
                        OwnedFrame::SimpleString(s) if s == b"OK" => redis::Value::Okay,
                        OwnedFrame::Null => redis::Value::Nil,
                        _ => redis::parse_redis_value(&buf[..used]).unwrap(),
                    };
                    bytes::Buf::advance(&mut buf, used);
                    break value;
                }
                resuming = true;
                if let Some(v) = parser.decode(&mut buf).unwrap() {
                    break v;
                }
            }
            buf.reserve(4096);
            let read = stream.read_buf(&mut buf).await.unwrap();
            assert!(read > 0, "the connection closed");
        }
    };
    if let Some(password) = client.get_connection_info().redis_settings().password() {
        let reply = ask(redis::cmd("AUTH").arg(password)).await;
        assert_eq!(reply, redis::Value::Okay, "AUTH");
    }
    let cmd = redis::cmd("GET").arg(KEY).clone();
    let (t0, mut n) = (Instant::now(), 0);
    while t0.elapsed() < limit {
        let value: Option<Vec<u8>> = redis::from_redis_value(ask(&cmd).await).unwrap();
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
