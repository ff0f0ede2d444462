//! A bare PostgreSQL client loop, for `bench/postgres-protocol.sh`: the classic search's
//! query (prepared once, then bound and executed with a random `small-N` key, one at a time)
//! over one connection, written with postgres-protocol's message codecs on a current-thread
//! tokio runtime: one task, no channels, no row objects. It measures what an event-loop
//! client built on that crate costs per query beside pgbench and beside dbcompare's store
//! (tokio-postgres), before such a connection is built into the store. Every answer must be
//! one row of seven non-null columns whose key is the one asked for; anything else stops it.
//!
//! Usage: postgres-clients PORT USER PASSWORD QUERIES (the server on 127.0.0.1, the
//! table made by a classic run of `--sizes small`). Prints queries/s and CPU us per query.

use anyhow::{Context, Result, anyhow, bail};
use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres_protocol::IsNull;
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256};
use postgres_protocol::message::{backend::Message, frontend};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const FIND: &str = "SELECT id, unique_id, created_by, updated_by, deleted_by, created_at, data \
    FROM dbcompare_records WHERE unique_id = $1";
/// PostgreSQL's `text` type.
const TEXT: u32 = 25;

struct Conn {
    socket: TcpStream,
    out: BytesMut,
    input: BytesMut,
}

impl Conn {
    async fn send(&mut self) -> Result<()> {
        self.socket.write_all(&self.out).await?;
        self.out.clear();
        Ok(())
    }

    async fn next(&mut self) -> Result<Message> {
        loop {
            if let Some(message) = Message::parse(&mut self.input)? {
                if let Message::ErrorResponse(body) = &message {
                    let mut fields = body.fields();
                    let mut text = String::new();
                    while let Some(field) = fields.next()? {
                        if field.type_() == b'M' {
                            text = String::from_utf8_lossy(field.value_bytes()).into_owned();
                        }
                    }
                    bail!("the server refused: {text}");
                }
                return Ok(message);
            }
            if self.socket.read_buf(&mut self.input).await? == 0 {
                bail!("the server closed the connection");
            }
        }
    }

    async fn ready(&mut self) -> Result<()> {
        while !matches!(self.next().await?, Message::ReadyForQuery(_)) {}
        Ok(())
    }
}

async fn connect(port: u16, user: &str, password: &str) -> Result<Conn> {
    let socket = TcpStream::connect(("127.0.0.1", port)).await?;
    socket.set_nodelay(true)?;
    let mut conn = Conn {
        socket,
        out: BytesMut::new(),
        input: BytesMut::with_capacity(8192),
    };
    frontend::startup_message([("user", user), ("database", "postgres")], &mut conn.out)?;
    conn.send().await?;
    let mut scram = None;
    loop {
        match conn.next().await? {
            Message::AuthenticationSasl(_) => {
                let s = ScramSha256::new(password.as_bytes(), ChannelBinding::unsupported());
                frontend::sasl_initial_response("SCRAM-SHA-256", s.message(), &mut conn.out)?;
                conn.send().await?;
                scram = Some(s);
            }
            Message::AuthenticationSaslContinue(body) => {
                let s = scram.as_mut().context("SASL continue before SASL")?;
                s.update(body.data())?;
                frontend::sasl_response(s.message(), &mut conn.out)?;
                conn.send().await?;
            }
            Message::AuthenticationSaslFinal(body) => scram
                .take()
                .context("SASL final before SASL")?
                .finish(body.data())?,
            Message::AuthenticationMd5Password(body) => {
                let hash = postgres_protocol::authentication::md5_hash(
                    user.as_bytes(),
                    password.as_bytes(),
                    body.salt(),
                );
                frontend::password_message(hash.as_bytes(), &mut conn.out)?;
                conn.send().await?;
            }
            Message::ReadyForQuery(_) => return Ok(conn),
            _ => {}
        }
    }
}

/// User plus system CPU time of this process, in microseconds.
fn cpu_us() -> f64 {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let us = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    us(usage.ru_utime) + us(usage.ru_stime)
}

async fn run(port: u16, user: &str, password: &str, queries: u64) -> Result<()> {
    let mut conn = connect(port, user, password).await?;
    frontend::parse("find", FIND, [TEXT], &mut conn.out)?;
    frontend::sync(&mut conn.out);
    conn.send().await?;
    conn.ready().await?;
    let mut key = String::new();
    // xorshift64: the key drawn without a generator crate's cost in the loop.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let (cpu, wall) = (cpu_us(), std::time::Instant::now());
    for _ in 0..queries {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        key.clear();
        std::fmt::Write::write_fmt(&mut key, format_args!("small-{}", x % 10_000 + 1))?;
        frontend::bind(
            "",
            "find",
            [0_i16],
            [&key],
            |k, buf| {
                buf.extend_from_slice(k.as_bytes());
                Ok(IsNull::No)
            },
            [1_i16],
            &mut conn.out,
        )
        .map_err(|_| anyhow!("binding the key"))?;
        frontend::execute("", 0, &mut conn.out)?;
        frontend::sync(&mut conn.out);
        conn.send().await?;
        let mut rows = 0;
        loop {
            match conn.next().await? {
                Message::DataRow(row) => {
                    rows += 1;
                    let buffer = row.buffer();
                    let fields: Vec<_> = row.ranges().collect()?;
                    let found = fields.get(1).cloned().flatten().map(|r| &buffer[r]);
                    if fields.len() != 7 || fields.iter().any(Option::is_none) {
                        bail!("{key}: a row of {} fields, or a null", fields.len());
                    }
                    if found != Some(key.as_bytes()) {
                        bail!("{key}: the row of another key");
                    }
                }
                Message::ReadyForQuery(_) => break,
                _ => {}
            }
        }
        if rows != 1 {
            bail!("{key}: {rows} rows");
        }
    }
    let (cpu, wall) = (cpu_us() - cpu, wall.elapsed().as_secs_f64());
    println!(
        "postgres-protocol loop {:.0} {:.2}",
        queries as f64 / wall,
        cpu / queries as f64
    );
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [port, user, password, queries] = args.as_slice() else {
        bail!("usage: postgres-clients PORT USER PASSWORD QUERIES");
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(
        port.parse().context("PORT")?,
        user,
        password,
        queries.parse().context("QUERIES")?,
    ))
}
