//! One server's connection, on the stores' own connection core ([`Conn`]: one command, or
//! one pipeline, at a time, written and answered by the task that sends it): a command is
//! packed by the redis crate, and its reply parsed by redis-protocol and made into the
//! crate's value ([`Resp2`]). The crate's multiplexed connection hands every command over
//! a channel to a task of its own and the reply back over another; that cost about 2 us of
//! client CPU and 10% of the throughput per GET at concurrency 1 (`bench/redis-clients.sh`),
//! which neither redis-benchmark nor the other stores' drivers pay. Each of dbcompare's
//! connections is driven by one task at a time, so nothing is lost by not multiplexing.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use futures::FutureExt;
use redis::aio::ConnectionLike;
use redis::{
    Cmd, ConnectionAddr, ConnectionInfo, ErrorKind, Pipeline, RedisError, RedisFuture, RedisResult,
    Value,
};

use super::resp2::Resp2;
use crate::store::conn::{self, BoxedStream, Conn};
use crate::store::tls::Tls;

pub(super) struct Direct {
    conn: Conn<Resp2>,
    /// The packed command or pipeline being sent (kept: no allocation per command).
    out: Vec<u8>,
    db: i64,
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
            conn: Conn::new(opened, Resp2),
            out: Vec::new(),
            db: settings.db(),
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
        let mut request = self.conn.begin()?;
        let read = async {
            request.send(&self.out).await?;
            for index in 0..replies {
                each(index, request.next().await?);
            }
            Ok(())
        }
        .await;
        request.finish(read)
    }
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

/// The socket to `addr`, TLS over TCP for a `rediss://` address.
async fn open(addr: &ConnectionAddr, tls: Option<&Tls>) -> Result<BoxedStream> {
    match addr {
        ConnectionAddr::Tcp(host, port) => Ok(Box::pin(conn::tcp(host, *port).await?)),
        ConnectionAddr::TcpTls { host, port, .. } => {
            let tls = tls.context("a rediss:// address without its TLS settings")?;
            let tcp = conn::tcp(host, *port).await?;
            conn::tls_over(tcp, host, tls)
                .await
                .with_context(|| format!("{host}:{port}"))
        }
        ConnectionAddr::Unix(path) => Ok(Box::pin(conn::unix(path).await?)),
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
    use crate::catalog::StoreKind;
    use crate::server;

    /// A throw-away Redis (installed by provisioning/install.sh: a missing one fails).
    fn redis() -> server::LocalServer {
        redis_serving(server::Serve::default())
    }

    fn redis_serving(serve: server::Serve) -> server::LocalServer {
        server::throwaway(StoreKind::Redis, serve)
    }

    async fn connect(server: &server::LocalServer) -> Direct {
        let info = redis::IntoConnectionInfo::into_connection_info(server.url().as_str()).unwrap();
        Direct::connect(&info, None, Duration::from_secs(10))
            .await
            .unwrap()
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
