//! One server's connection, read and written by the task that sends the commands: a command
//! is packed by the redis crate, written to the socket, and its reply read back and parsed
//! by the crate's own resumable decoder in the same task, with no second task between
//! them. The crate's multiplexed connection hands every command over a channel to a task
//! of its own and the reply back over another; that cost about 2 us of client CPU and 10%
//! of the throughput per GET at concurrency 1 (`bench/redis-clients.sh`), which neither
//! redis-benchmark nor the other stores' drivers pay. Each of dbcompare's connections is
//! driven by one task at a time, so nothing is lost by not multiplexing.
//!
//! The connection is strictly one command (or one pipeline) at a time. A command whose
//! future is dropped before its reply is read (Ctrl-C, a timeout) would leave that reply on
//! the socket for the next command to read as its own, so the connection then refuses
//! every command: a wrong answer is never read as a right one.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use bytes::{Buf, BytesMut};
use futures::FutureExt;
use redis::aio::ConnectionLike;
use redis::{
    Cmd, ConnectionAddr, ConnectionInfo, ErrorKind, Pipeline, RedisError, RedisFuture, RedisResult,
    Value,
};
use redis_protocol::resp2::types::OwnedFrame;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::codec::Decoder;

use crate::store::socket::{self, BoxedStream};
use crate::store::tls::Tls;

/// Bytes read from the socket at a time, at least (the buffer grows for larger replies).
const READ_AHEAD: usize = 16 * 1024;

pub(super) struct Direct {
    stream: BoxedStream,
    /// The packed command or pipeline being sent (kept: no allocation per command).
    out: Vec<u8>,
    /// Bytes read and not yet parsed.
    input: BytesMut,
    parser: redis::ValueCodec,
    db: i64,
    /// Set while a command is on the wire; still set when the next one starts means the
    /// last one's reply was never read.
    busy: bool,
    /// Why the connection can no longer be used, once it cannot.
    broken: Option<String>,
}

impl Direct {
    /// Connects to the server `info` names, with TLS when it is a `rediss://` address
    /// (`tls` then holds the verification asked for), and authenticates and selects its
    /// database as the redis crate does (AUTH, then SELECT). RESP2 only: the store's URL
    /// check refuses `protocol=resp3`.
    pub(super) async fn connect(
        info: &ConnectionInfo,
        tls: Option<&Tls>,
        timeout: Duration,
    ) -> Result<Direct> {
        let settings = info.redis_settings();
        if settings.protocol().supports_resp3() {
            bail!(
                "this connection speaks RESP2 only, not {:?}",
                settings.protocol()
            );
        }
        let opened = tokio::time::timeout(timeout, open(info.addr(), tls))
            .await
            .map_err(|_| {
                anyhow::anyhow!("no connection to {} within {timeout:?}", info.addr())
            })??;
        let mut conn = Direct {
            stream: opened,
            out: Vec::new(),
            input: BytesMut::with_capacity(READ_AHEAD),
            parser: redis::ValueCodec::default(),
            db: settings.db(),
            busy: false,
            broken: None,
        };
        let handshake = async {
            if let Some(password) = settings.password() {
                let mut auth = redis::cmd("AUTH");
                if let Some(user) = settings.username() {
                    auth.arg(user);
                }
                auth.arg(password)
                    .query_async::<()>(&mut conn)
                    .await
                    .map_err(refused)?;
            }
            if settings.db() != 0 {
                redis::cmd("SELECT")
                    .arg(settings.db())
                    .query_async::<()>(&mut conn)
                    .await?;
            }
            Ok::<_, RedisError>(())
        };
        match tokio::time::timeout(timeout, handshake).await {
            Ok(done) => done?,
            Err(_) => bail!(
                "{} did not answer AUTH/SELECT within {timeout:?}",
                info.addr()
            ),
        }
        Ok(conn)
    }

    /// Sends what `out` holds and reads `replies` replies, each given to `each` with its
    /// index.
    async fn exchange(
        &mut self,
        replies: usize,
        mut each: impl FnMut(usize, Value),
    ) -> RedisResult<()> {
        if let Some(why) = &self.broken {
            return Err(closed(why));
        }
        if self.busy {
            let why = "a command was abandoned before its reply was read";
            self.broken = Some(why.to_string());
            return Err(closed(why));
        }
        self.busy = true;
        let done = self.exchange_now(replies, &mut each).await;
        match &done {
            Ok(()) => self.busy = false,
            Err(e) if e.is_io_error() || e.kind() == ErrorKind::Parse => {
                self.broken = Some(e.to_string());
            }
            Err(_) => self.busy = false,
        }
        done
    }

    async fn exchange_now(
        &mut self,
        replies: usize,
        each: &mut impl FnMut(usize, Value),
    ) -> RedisResult<()> {
        self.stream.write_all(&self.out).await?;
        // TLS may hold the end of a large command in its own buffer until flushed (a no-op
        // on plain TCP).
        self.stream.flush().await?;
        for index in 0..replies {
            let value = self.reply().await?;
            each(index, value);
        }
        Ok(())
    }

    /// The next reply on the socket. A reply that is whole in the first bytes read
    /// (nearly every one) is parsed by redis-protocol and made into the crate's value
    /// ([`value_of`]): a third of the instructions of the crate's parser, whose partial
    /// state machine is what a reply spread over several reads needs, and gets.
    async fn reply(&mut self) -> RedisResult<Value> {
        let mut resuming = false;
        loop {
            if !self.input.is_empty() {
                if !resuming {
                    let whole =
                        redis_protocol::resp2::decode::decode(&self.input).map_err(|e| {
                            RedisError::from((ErrorKind::Parse, "a malformed reply", e.to_string()))
                        })?;
                    if let Some((frame, used)) = whole {
                        let value = match value_of(frame) {
                            Some(value) => value,
                            None => redis::parse_redis_value(&self.input[..used])?,
                        };
                        self.input.advance(used);
                        return Ok(value);
                    }
                }
                // Part of a reply: the crate's decoder takes it from here to its end.
                resuming = true;
                if let Some(value) = self.parser.decode(&mut self.input)? {
                    return Ok(value);
                }
            }
            self.input.reserve(READ_AHEAD);
            if self.stream.read_buf(&mut self.input).await? == 0 {
                return Err(RedisError::from(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                )));
            }
        }
    }
}

/// The redis crate's value of a RESP2 reply, as its own parser makes it; `None` for a reply
/// holding an error, whose value (a `ServerError`) only the crate's parser can make.
fn value_of(frame: OwnedFrame) -> Option<Value> {
    Some(match frame {
        OwnedFrame::SimpleString(s) if s == b"OK" => Value::Okay,
        OwnedFrame::SimpleString(s) => Value::SimpleString(String::from_utf8(s).ok()?),
        OwnedFrame::Error(_) => return None,
        OwnedFrame::Integer(i) => Value::Int(i),
        OwnedFrame::BulkString(b) => Value::BulkString(b),
        OwnedFrame::Array(items) => {
            Value::Array(items.into_iter().map(value_of).collect::<Option<_>>()?)
        }
        OwnedFrame::Null => Value::Nil,
    })
}

/// A refused AUTH as the redis crate reports it, with the server's
/// reason kept.
fn refused(e: RedisError) -> RedisError {
    let refusal = matches!(e.kind(), ErrorKind::Server(_) | ErrorKind::Extension)
        && matches!(e.code(), Some("WRONGPASS" | "NOAUTH" | "ERR"));
    if !refusal {
        return e;
    }
    let why = format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or(""));
    RedisError::from((
        ErrorKind::AuthenticationFailed,
        "Password authentication failed",
        why.trim().to_string(),
    ))
}

/// The error of a connection that can no longer be used.
fn closed(why: &str) -> RedisError {
    RedisError::from(std::io::Error::new(
        std::io::ErrorKind::NotConnected,
        format!("the connection is closed: {why}"),
    ))
}

/// The socket to `addr`, TLS over TCP for a `rediss://` address.
async fn open(addr: &ConnectionAddr, tls: Option<&Tls>) -> Result<BoxedStream> {
    match addr {
        ConnectionAddr::Tcp(host, port) => Ok(Box::pin(socket::tcp(host, *port).await?)),
        ConnectionAddr::TcpTls { host, port, .. } => {
            let tls = tls.context("a rediss:// address without its TLS settings")?;
            let tcp = socket::tcp(host, *port).await?;
            socket::tls_over(tcp, host, tls)
                .await
                .with_context(|| format!("{host}:{port}"))
        }
        ConnectionAddr::Unix(path) => Ok(Box::pin(socket::unix(path).await?)),
        other => bail!("{other} is not an address this store connects to"),
    }
}

impl Direct {
    /// Sends `cmd` and reads its reply: [`ConnectionLike::req_packed_command`] without the
    /// boxed future that trait returns (one allocation of about 300 bytes a command).
    pub(super) async fn request(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        self.out.clear();
        cmd.write_packed_command(&mut self.out);
        let mut reply = None;
        self.exchange(1, |_, value| reply = Some(value)).await?;
        Ok(reply.expect("one reply was read"))
    }
}

impl ConnectionLike for Direct {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        self.request(cmd).boxed()
    }

    /// The replies after the first `offset`, `count` of them; in a transaction (an offset)
    /// the first command the server refused to queue fails the whole, as EXEC then did.
    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        async move {
            self.out = pipeline.get_packed_pipeline();
            let mut kept = Vec::with_capacity(count);
            let mut refused = None;
            self.exchange(offset + count, |index, value| {
                if index >= offset {
                    kept.push(value);
                } else if let Value::ServerError(e) = value
                    && refused.is_none()
                {
                    refused = Some(e);
                }
            })
            .await?;
            match refused {
                Some(e) => Err(RedisError::from(e)),
                None => Ok(kept),
            }
        }
        .boxed()
    }

    fn get_db(&self) -> i64 {
        self.db
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Durability, StoreKind};
    use crate::server;

    /// A throw-away Redis (installed by provisioning/install.sh: a missing one fails).
    fn redis() -> server::LocalServer {
        redis_serving(server::Serve::default())
    }

    fn redis_serving(serve: server::Serve) -> server::LocalServer {
        let installation = server::find(StoreKind::Redis)
            .expect("no redis server is installed: run 'provisioning/install.sh redis'");
        server::start(
            StoreKind::Redis,
            &installation,
            Durability::Relaxed,
            &server::DataDirs::temporary(),
            serve,
        )
        .expect("starting a local redis server")
    }

    async fn connect(server: &server::LocalServer) -> Direct {
        let info = redis::IntoConnectionInfo::into_connection_info(server.url().as_str()).unwrap();
        Direct::connect(&info, None, Duration::from_secs(10))
            .await
            .unwrap()
    }

    /// A RESP2 reply as the server writes it.
    fn resp2() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let line = "[ -~]{0,12}";
        let leaf = prop_oneof![
            line.prop_map(|s| format!("+{s}\r\n").into_bytes()),
            Just(b"+OK\r\n".to_vec()),
            "(ERR|WRONGTYPE|MOVED) [ -~]{0,12}".prop_map(|s| format!("-{s}\r\n").into_bytes()),
            any::<i64>().prop_map(|i| format!(":{i}\r\n").into_bytes()),
            proptest::collection::vec(any::<u8>(), 0..300).prop_map(|b| {
                let mut out = format!("${}\r\n", b.len()).into_bytes();
                out.extend_from_slice(&b);
                out.extend_from_slice(b"\r\n");
                out
            }),
            Just(b"$-1\r\n".to_vec()),
            Just(b"*-1\r\n".to_vec()),
        ];
        leaf.prop_recursive(3, 40, 6, |inner| {
            proptest::collection::vec(inner, 0..6).prop_map(|items| {
                let mut out = format!("*{}\r\n", items.len()).into_bytes();
                items.iter().for_each(|i| out.extend_from_slice(i));
                out
            })
        })
    }

    proptest::proptest! {
        /// The fast path makes every RESP2 reply into the value the crate's parser makes.
        #[test]
        fn replies_are_the_values_the_crate_parses(reply in resp2()) {
            let (frame, used) = redis_protocol::resp2::decode::decode(&reply).unwrap().unwrap();
            proptest::prop_assert_eq!(used, reply.len());
            let ours = value_of(frame).map_or_else(|| redis::parse_redis_value(&reply), Ok);
            proptest::prop_assert_eq!(ours.unwrap(), redis::parse_redis_value(&reply).unwrap());
            // Any proper prefix is incomplete, not a shorter reply.
            let cut = reply.len() / 2;
            proptest::prop_assert!(redis_protocol::resp2::decode::decode(&reply[..cut]).unwrap().is_none());
        }
    }

    #[tokio::test]
    async fn replies_larger_than_a_read_arrive_whole_and_in_order() {
        let server = redis();
        let mut conn = connect(&server).await;
        // 3 MB in one reply, then a small one: the buffer grows and nothing is left over.
        let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        redis::cmd("SET")
            .arg("dbcompare:big")
            .arg(&big)
            .query_async::<()>(&mut conn)
            .await
            .unwrap();
        let got: Vec<u8> = redis::cmd("GET")
            .arg("dbcompare:big")
            .query_async(&mut conn)
            .await
            .unwrap();
        assert!(got == big, "{} bytes back of {}", got.len(), big.len());
        let echo: String = redis::cmd("ECHO")
            .arg("after")
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(echo, "after");
        // A pipeline's replies, each to its own command.
        let (a, b, c): (String, i64, Option<String>) = redis::pipe()
            .cmd("ECHO")
            .arg("a")
            .cmd("STRLEN")
            .arg("dbcompare:big")
            .cmd("GET")
            .arg("dbcompare:none")
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!((a.as_str(), b, c), ("a", 3_000_000, None));
    }

    #[tokio::test]
    async fn large_commands_and_replies_cross_tls_whole() {
        let server = redis_serving(server::Serve {
            tls: true,
            ..Default::default()
        });
        let ca = server
            .tls_ca()
            .expect("a CA for the TLS server")
            .to_path_buf();
        let url = server.url();
        let url = url.split('?').next().unwrap();
        let info = redis::IntoConnectionInfo::into_connection_info(url).unwrap();
        let tls = Tls {
            verify: crate::store::tls::Verify::Full,
            ca: Some(ca),
        };
        let mut conn = Direct::connect(&info, Some(&tls), Duration::from_secs(10))
            .await
            .unwrap();
        let big: Vec<u8> = (0..4_000_000u32).map(|i| (i % 253) as u8).collect();
        let round_trip = async {
            redis::cmd("SET")
                .arg("dbcompare:tls")
                .arg(&big)
                .query_async::<()>(&mut conn)
                .await
                .unwrap();
            redis::cmd("GET")
                .arg("dbcompare:tls")
                .query_async::<Vec<u8>>(&mut conn)
                .await
                .unwrap()
        };
        let got = tokio::time::timeout(Duration::from_secs(60), round_trip)
            .await
            .expect("a 4 MB SET and GET over TLS did not finish within 60 s");
        assert!(got == big, "{} bytes back of {}", got.len(), big.len());
    }

    #[tokio::test]
    async fn a_transaction_the_server_refused_is_an_error_and_the_connection_goes_on() {
        let server = redis();
        let mut conn = connect(&server).await;
        // SET with one argument is refused when queued: EXEC then discards the whole.
        let refused = redis::pipe()
            .atomic()
            .cmd("SET")
            .arg("dbcompare:t")
            .arg("1")
            .ignore()
            .cmd("SET")
            .arg("dbcompare:u")
            .ignore()
            .query_async::<()>(&mut conn)
            .await
            .unwrap_err();
        assert!(refused.to_string().contains("wrong number"), "{refused}");
        let written: Option<String> = redis::cmd("GET")
            .arg("dbcompare:t")
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(written, None, "the refused transaction wrote nothing");
        // A transaction that runs gives its commands' replies.
        let (n,): (i64,) = redis::pipe()
            .atomic()
            .cmd("SET")
            .arg("dbcompare:t")
            .arg("1")
            .ignore()
            .cmd("INCR")
            .arg("dbcompare:t")
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(n, 2);
        // A command error is the command's, not the connection's.
        let wrong = redis::cmd("HGET")
            .arg("dbcompare:t")
            .arg("f")
            .query_async::<Option<String>>(&mut conn)
            .await
            .unwrap_err();
        assert!(wrong.to_string().contains("WRONGTYPE"), "{wrong}");
        let pong: String = redis::cmd("PING").query_async(&mut conn).await.unwrap();
        assert_eq!(pong, "PONG");
    }

    #[tokio::test]
    async fn an_abandoned_command_closes_the_connection_rather_than_misread_its_reply() {
        let server = redis();
        let mut conn = connect(&server).await;
        // A command dropped while the server still works on it: its reply comes later.
        let slow = redis::cmd("BLPOP").arg("dbcompare:empty").arg(0.3).clone();
        let abandoned = tokio::time::timeout(
            Duration::from_millis(50),
            slow.query_async::<Option<Vec<String>>>(&mut conn),
        )
        .await;
        assert!(abandoned.is_err(), "BLPOP of 0.3 s answered within 50 ms");
        tokio::time::sleep(Duration::from_millis(400)).await;
        // The late nil is on the socket: reading it as this ECHO's answer would be a lie.
        let next = redis::cmd("ECHO")
            .arg("mine")
            .query_async::<String>(&mut conn)
            .await
            .unwrap_err();
        assert!(next.to_string().contains("abandoned"), "{next}");
        let again = redis::cmd("PING")
            .query_async::<String>(&mut conn)
            .await
            .unwrap_err();
        assert!(again.to_string().contains("closed"), "{again}");
    }

    #[tokio::test]
    async fn a_server_gone_is_an_error_on_this_command_and_the_next() {
        let server = redis();
        let mut conn = connect(&server).await;
        let mut other = connect(&server).await;
        redis::cmd("CLIENT")
            .arg("KILL")
            .arg("SKIPME")
            .arg("yes")
            .query_async::<i64>(&mut other)
            .await
            .unwrap();
        let gone = redis::cmd("PING")
            .query_async::<String>(&mut conn)
            .await
            .unwrap_err();
        assert!(gone.is_io_error(), "{gone}");
        let after = redis::cmd("PING")
            .query_async::<String>(&mut conn)
            .await
            .unwrap_err();
        assert!(after.to_string().contains("closed"), "{after}");
    }

    #[tokio::test]
    async fn the_url_s_database_is_selected_and_a_wrong_password_refused() {
        let server = redis();
        let url = server.url();
        let db = |n: u8| {
            let base = url.trim_end_matches(|c: char| c.is_ascii_digit());
            let base = base.trim_end_matches('/');
            redis::IntoConnectionInfo::into_connection_info(format!("{base}/{n}").as_str()).unwrap()
        };
        let timeout = Duration::from_secs(10);
        let mut three = Direct::connect(&db(3), None, timeout).await.unwrap();
        assert_eq!(three.get_db(), 3);
        redis::cmd("SET")
            .arg("dbcompare:db")
            .arg("3")
            .query_async::<()>(&mut three)
            .await
            .unwrap();
        let mut zero = Direct::connect(&db(0), None, timeout).await.unwrap();
        let seen: Option<String> = redis::cmd("GET")
            .arg("dbcompare:db")
            .query_async(&mut zero)
            .await
            .unwrap();
        assert_eq!(seen, None, "database 0 sees database 3's key");
        let wrong = url.replace(server.password(), "not-the-password");
        let info = redis::IntoConnectionInfo::into_connection_info(wrong.as_str()).unwrap();
        let refused = Direct::connect(&info, None, timeout).await.err().unwrap();
        assert!(
            format!("{refused:#}").contains("Password authentication failed"),
            "{refused:#}"
        );
    }
}
