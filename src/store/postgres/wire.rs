//! dbcompare's own PostgreSQL connection, for the classic suite: the frontend/backend
//! protocol's messages written and read by postgres-protocol's codecs on the stores' own
//! connection core ([`Conn`]: one request at a time, in the task that sends it).
//! tokio-postgres hands every request over a channel to a connection task of its own and
//! the answer back over another, and builds a row object per row; beside pgbench running
//! the same query, that cost dbcompare about a fifth more client CPU per search than a loop
//! of these codecs (`bench/postgres-protocol.sh`). The driver, pool and YCSB suites keep
//! tokio-postgres.
//!
//! What it speaks: startup with cleartext, MD5 or SCRAM-SHA-256 authentication; TLS after
//! an SSLRequest (`sslmode` in the URL); the hosts of the URL tried in order; the simple
//! query protocol (text rows), and the extended one for prepared statements with every
//! parameter and result in binary. Errors keep the server's severity, message, detail and
//! hint; a FATAL one (`terminating connection due to administrator command`) is the
//! connection's end and says so.

use std::fmt::Write as _;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication::sasl::{self, ChannelBinding, ScramSha256};
use postgres_protocol::message::backend::{DataRowBody, ErrorResponseBody, Message};
use postgres_protocol::message::frontend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_postgres::config::{Config, Host, TargetSessionAttrs};
use tokio_postgres::types::{IsNull, ToSql, Type};

use crate::store::conn::{self, BoxedStream, Conn, Decode, Request};
use crate::store::tls::Tls;

/// Binary, for every parameter and result column.
const BINARY: i16 = 1;

/// A text row of the simple query protocol: a column's text, `None` for NULL.
pub type TextRow = Vec<Option<String>>;

pub struct Wire {
    conn: Conn<Messages>,
    /// The messages being sent (kept: no allocation per request).
    out: BytesMut,
}

/// What the TLS part of the URL asks for.
pub struct TlsAsk<'a> {
    pub tls: &'a Tls,
    /// `sslmode=prefer`: plain when the server does not offer TLS.
    pub optional: bool,
}

/// The backend's messages, less the asynchronous ones (notices, parameter changes,
/// notifications), which no request waits for.
struct Messages;

impl Decode for Messages {
    type Frame = Message;
    type Error = anyhow::Error;

    fn decode(&mut self, input: &mut BytesMut) -> Result<Option<Message>> {
        loop {
            match Message::parse(input).context("a malformed message")? {
                Some(
                    Message::NoticeResponse(_)
                    | Message::ParameterStatus(_)
                    | Message::NotificationResponse(_),
                ) => continue,
                message => return Ok(message),
            }
        }
    }
}

impl Wire {
    /// Connects to the first host of `config` that answers, each given `timeout` for its
    /// socket, TLS and authentication.
    pub async fn connect(
        config: &Config,
        tls: Option<TlsAsk<'_>>,
        timeout: Duration,
    ) -> Result<Wire> {
        if !config.get_hostaddrs().is_empty() {
            bail!("hostaddr is not supported by dbcompare's PostgreSQL connection: use host");
        }
        if config.get_target_session_attrs() != TargetSessionAttrs::Any {
            bail!("target_session_attrs is not supported by dbcompare's PostgreSQL connection");
        }
        let (hosts, ports) = (config.get_hosts(), config.get_ports());
        if hosts.is_empty() {
            bail!("the URL names no host");
        }
        if ports.len() > 1 && ports.len() != hosts.len() {
            bail!(
                "the URL gives {} ports for {} hosts",
                ports.len(),
                hosts.len()
            );
        }
        let mut last = None;
        for (i, host) in hosts.iter().enumerate() {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            let name = match host {
                Host::Tcp(h) => format!("{h}:{port}"),
                #[cfg(unix)]
                Host::Unix(dir) => dir.join(format!(".s.PGSQL.{port}")).display().to_string(),
            };
            let attempt = tokio::time::timeout(timeout, connect_host(config, host, port, &tls));
            match attempt.await {
                Ok(Ok(wire)) => return Ok(wire),
                Ok(Err(e)) => last = Some(e.context(format!("connecting to {name}"))),
                Err(_) => {
                    last = Some(anyhow!(
                        "connecting to {name}: no answer within {timeout:?}"
                    ))
                }
            }
        }
        Err(last.expect("one host at least was tried"))
    }

    /// Runs `sql` (one statement or several) over the simple query protocol and returns
    /// every row it gave, as text.
    pub async fn simple(&mut self, sql: &str) -> Result<Vec<TextRow>> {
        self.out.clear();
        frontend::query(sql, &mut self.out)?;
        let mut rows = Vec::new();
        self.exchange(|message| {
            if let Message::DataRow(row) = message {
                rows.push(text_row(&row)?);
            }
            Ok(())
        })
        .await?;
        Ok(rows)
    }

    /// Prepares `sql` as the statement `name` (closing any statement of that name first),
    /// and returns the types of its result columns.
    pub async fn prepare(&mut self, name: &str, sql: &str, params: &[Type]) -> Result<Vec<u32>> {
        self.out.clear();
        frontend::close(b'S', name, &mut self.out)?;
        frontend::parse(name, sql, params.iter().map(Type::oid), &mut self.out)?;
        frontend::describe(b'S', name, &mut self.out)?;
        frontend::sync(&mut self.out);
        let mut columns = Vec::new();
        self.exchange(|message| {
            if let Message::RowDescription(body) = message {
                columns = body.fields().map(|f| Ok(f.type_oid())).collect()?;
            }
            Ok(())
        })
        .await?;
        Ok(columns)
    }

    /// Executes the prepared statement `name` with `params` (of the `types` it was prepared
    /// with), every value in binary; each row it returns goes to `row`. Returns the rows.
    pub async fn execute(
        &mut self,
        name: &str,
        params: &[&(dyn ToSql + Sync)],
        types: &[Type],
        mut row: impl FnMut(&DataRowBody) -> Result<()>,
    ) -> Result<u64> {
        self.out.clear();
        let bound = frontend::bind(
            "",
            name,
            [BINARY],
            params.iter().zip(types),
            |(value, ty), buf| {
                value.to_sql_checked(ty, buf).map(|null| match null {
                    IsNull::Yes => postgres_protocol::IsNull::Yes,
                    IsNull::No => postgres_protocol::IsNull::No,
                })
            },
            [BINARY],
            &mut self.out,
        );
        if let Err(e) = bound {
            self.out.clear();
            let e = match e {
                frontend::BindError::Conversion(e) => anyhow!(e),
                frontend::BindError::Serialization(e) => e.into(),
            };
            return Err(e.context(format!("binding the parameters of {name}")));
        }
        frontend::execute("", 0, &mut self.out)?;
        frontend::sync(&mut self.out);
        let mut rows = 0;
        self.exchange(|message| {
            if let Message::DataRow(body) = message {
                rows += 1;
                row(&body)?;
            }
            Ok(())
        })
        .await?;
        Ok(rows)
    }

    /// Says goodbye (Terminate) and closes the socket.
    pub async fn close(mut self) -> Result<()> {
        self.out.clear();
        frontend::terminate(&mut self.out);
        self.conn.close(&self.out).await
    }

    /// Sends what `out` holds and reads the answer up to ReadyForQuery, each message of it
    /// to `each`. The first error the server sent is the result, after its ReadyForQuery:
    /// the connection stays usable.
    async fn exchange(&mut self, mut each: impl FnMut(Message) -> Result<()>) -> Result<()> {
        let mut request = self.conn.begin()?;
        let read = async {
            if let Err(e) = request.send(&self.out).await {
                return Err(last_words(&mut request, e).await);
            }
            let mut failed: Option<anyhow::Error> = None;
            loop {
                match request.next().await? {
                    Message::ReadyForQuery(_) => return Ok(failed.map_or(Ok(()), Err)),
                    Message::ErrorResponse(body) => {
                        let error = server_error(&body)?;
                        if error.fatal {
                            bail!("the server ended the connection: {error}");
                        }
                        failed.get_or_insert(anyhow::Error::new(error));
                    }
                    message if failed.is_none() => {
                        if let Err(e) = each(message) {
                            failed = Some(e);
                        }
                    }
                    _ => {}
                }
            }
        }
        .await;
        // The outer error is the connection's (it can no longer be used), the inner one
        // the request's.
        request.finish(read)?
    }
}

/// Why the server ended the connection, when a request could not be sent: the FATAL error
/// it sent before closing, if it is still to be read (waiting a moment for it), else `e`.
async fn last_words(request: &mut Request<'_, Messages>, e: anyhow::Error) -> anyhow::Error {
    let said = request.leftover(Duration::from_millis(500), |message| match message {
        Message::ErrorResponse(body) => Some(server_error(&body).ok()),
        _ => None,
    });
    match said.await.flatten() {
        Some(error) => anyhow::Error::new(error).context("the server ended the connection"),
        None => e,
    }
}

/// Connects to one host: its socket, TLS if asked, startup and authentication.
async fn connect_host(
    config: &Config,
    host: &Host,
    port: u16,
    tls: &Option<TlsAsk<'_>>,
) -> Result<Wire> {
    let stream: BoxedStream = match host {
        Host::Tcp(name) => {
            let mut tcp = conn::tcp(name, port).await?;
            match tls {
                None => Box::pin(tcp),
                Some(ask) => match ssl_request(&mut tcp).await? {
                    true => conn::tls_over(tcp, name, ask.tls).await?,
                    false if ask.optional => Box::pin(tcp),
                    false => {
                        bail!("the server does not accept TLS (the URL's sslmode asks for it)")
                    }
                },
            }
        }
        #[cfg(unix)]
        Host::Unix(dir) => {
            if tls.as_ref().is_some_and(|ask| !ask.optional) {
                bail!("TLS over a Unix socket: PostgreSQL offers none there");
            }
            Box::pin(conn::unix(&dir.join(format!(".s.PGSQL.{port}"))).await?)
        }
    };
    let mut wire = Wire {
        conn: Conn::new(stream, Messages),
        out: BytesMut::new(),
    };
    startup(&mut wire, config).await?;
    Ok(wire)
}

/// Asks the server for TLS; whether it accepted.
async fn ssl_request(tcp: &mut tokio::net::TcpStream) -> Result<bool> {
    let mut out = BytesMut::new();
    frontend::ssl_request(&mut out);
    tcp.write_all(&out).await?;
    match tcp.read_u8().await.context("the answer to SSLRequest")? {
        b'S' => Ok(true),
        b'N' => Ok(false),
        other => bail!("the server answered SSLRequest with {other:#04x}"),
    }
}

/// The startup message, authentication, and the wait for the first ReadyForQuery.
async fn startup(wire: &mut Wire, config: &Config) -> Result<()> {
    let user = match config.get_user() {
        Some(user) => user.to_string(),
        None => std::env::var("USER").context("the URL names no user")?,
    };
    let mut params = vec![("client_encoding", "UTF8"), ("user", user.as_str())];
    if let Some(db) = config.get_dbname() {
        params.push(("database", db));
    }
    if let Some(options) = config.get_options() {
        params.push(("options", options));
    }
    if let Some(name) = config.get_application_name() {
        params.push(("application_name", name));
    }
    frontend::startup_message(params, &mut wire.out)?;
    let password = || {
        config
            .get_password()
            .context("the server asks for a password and the URL gives none")
    };
    let mut scram: Option<ScramSha256> = None;
    loop {
        wire.conn.write(&wire.out).await?;
        wire.out.clear();
        match wire.conn.next().await? {
            Message::AuthenticationOk | Message::BackendKeyData(_) => {}
            Message::AuthenticationCleartextPassword => {
                frontend::password_message(password()?, &mut wire.out)?;
            }
            Message::AuthenticationMd5Password(body) => {
                let hash = postgres_protocol::authentication::md5_hash(
                    user.as_bytes(),
                    password()?,
                    body.salt(),
                );
                frontend::password_message(hash.as_bytes(), &mut wire.out)?;
            }
            Message::AuthenticationSasl(body) => {
                let mut mechanisms = body.mechanisms();
                let mut offered = Vec::new();
                while let Some(m) = mechanisms.next()? {
                    offered.push(m.to_string());
                }
                if !offered.iter().any(|m| m == sasl::SCRAM_SHA_256) {
                    bail!("the server offers SASL with {offered:?}, not SCRAM-SHA-256");
                }
                let s = ScramSha256::new(password()?, ChannelBinding::unsupported());
                frontend::sasl_initial_response(sasl::SCRAM_SHA_256, s.message(), &mut wire.out)?;
                scram = Some(s);
            }
            Message::AuthenticationSaslContinue(body) => {
                let s = scram.as_mut().context("SASL continued before it began")?;
                s.update(body.data())?;
                frontend::sasl_response(s.message(), &mut wire.out)?;
            }
            Message::AuthenticationSaslFinal(body) => scram
                .take()
                .context("SASL ended before it began")?
                .finish(body.data())
                .context("the server's SCRAM proof")?,
            Message::ErrorResponse(body) => return Err(server_error(&body)?.into()),
            Message::ReadyForQuery(_) => return Ok(()),
            Message::AuthenticationKerberosV5
            | Message::AuthenticationScmCredential
            | Message::AuthenticationGss
            | Message::AuthenticationSspi => {
                bail!(
                    "the server asks for an authentication dbcompare does not speak (GSS, SSPI, Kerberos)"
                )
            }
            _ => bail!("an unexpected message during startup"),
        }
    }
}

/// A row of the simple query protocol as text.
fn text_row(row: &DataRowBody) -> Result<TextRow> {
    let buffer = row.buffer();
    row.ranges()
        .map(|r| Ok(r.map(|r| String::from_utf8_lossy(&buffer[r]).into_owned())))
        .collect()
        .context("a malformed row")
}

/// The columns of a binary row, each `None` for NULL; exactly `N` of them.
pub fn columns<const N: usize>(row: &DataRowBody) -> Result<[Option<&[u8]>; N]> {
    let buffer = row.buffer();
    let mut out = [None; N];
    let mut ranges = row.ranges();
    let mut n = 0;
    while let Some(range) = ranges.next().context("a malformed row")? {
        if n < N {
            out[n] = range.map(|r| &buffer[r]);
        }
        n += 1;
    }
    if n != N {
        bail!("a row of {n} columns, not {N}");
    }
    Ok(out)
}

/// An error the server sent, with what its fields say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    pub severity: String,
    pub code: String,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// FATAL or PANIC: the server ends the connection after it.
    pub fatal: bool,
}

impl std::fmt::Display for ServerError {
    /// As tokio-postgres shows it (`ERROR: relation "x" does not exist`), detail and hint
    /// on lines of their own.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.severity, self.message)?;
        if let Some(detail) = &self.detail {
            write!(f, "\nDETAIL: {detail}")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\nHINT: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ServerError {}

/// The fields of an ErrorResponse.
fn server_error(body: &ErrorResponseBody) -> Result<ServerError> {
    let mut error = ServerError {
        severity: String::new(),
        code: String::new(),
        message: String::new(),
        detail: None,
        hint: None,
        fatal: false,
    };
    let mut localized = String::new();
    let mut fields = body.fields();
    while let Some(field) = fields.next().context("a malformed error")? {
        let value = || String::from_utf8_lossy(field.value_bytes()).into_owned();
        match field.type_() {
            // Not localized (PostgreSQL 9.6 and later): what decides FATAL.
            b'V' => error.severity = value(),
            b'S' => localized = value(),
            b'C' => error.code = value(),
            b'M' => error.message = value(),
            b'D' => error.detail = Some(value()),
            b'H' => error.hint = Some(value()),
            _ => {}
        }
    }
    if error.severity.is_empty() {
        error.severity = localized;
    }
    error.fatal = matches!(error.severity.as_str(), "FATAL" | "PANIC");
    if !error.code.is_empty() {
        let _ = write!(error.message, " (SQLSTATE {})", error.code);
    }
    Ok(error)
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
