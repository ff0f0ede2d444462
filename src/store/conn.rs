//! The connections dbcompare drives itself (PostgreSQL's and Redis's): their socket (TCP
//! with Nagle's algorithm off, as the stores' drivers and their benchmark tools set it, a
//! Unix socket, or TLS over TCP with the rustls configuration `--url` asked for) and
//! [`Conn`], the core both protocols run on: one request at a time, written, flushed and
//! answered by the task that sends it, with no second task between them. A driver that
//! hands every request over a channel to a connection task of its own and the answer back
//! over another costs the client CPU per request, which the benchmark measures. A protocol
//! says only how its messages are decoded ([`Decode`]) and what its requests are.
//!
//! One request at a time: a request whose future is dropped before its answer is read
//! (Ctrl-C, a timeout) would leave that answer on the socket for the next request to read
//! as its own, so the connection then refuses every request: a wrong answer is never read
//! as a right one.

use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::store::tls::Tls;

/// What a connection reads and writes: TCP, TLS over TCP, or a Unix socket.
pub trait Stream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Stream for T {}

/// A connection's socket, whatever it is.
pub type BoxedStream = Pin<Box<dyn Stream>>;

/// A TCP connection to `host:port`, Nagle's algorithm off.
pub async fn tcp(host: &str, port: u16) -> Result<tokio::net::TcpStream> {
    let socket = tokio::net::TcpStream::connect((host, port))
        .await
        .with_context(|| format!("connecting to {host}:{port}"))?;
    socket.set_nodelay(true)?;
    Ok(socket)
}

/// A connection to the Unix socket at `path`.
#[cfg(unix)]
pub async fn unix(path: &Path) -> Result<tokio::net::UnixStream> {
    tokio::net::UnixStream::connect(path)
        .await
        .with_context(|| format!("connecting to {}", path.display()))
}

#[cfg(not(unix))]
pub async fn unix(path: &Path) -> Result<tokio::net::TcpStream> {
    anyhow::bail!("no Unix sockets on this system: {}", path.display())
}

/// TLS over `socket` to `host` (the name the certificate is checked against when `tls`
/// verifies it), with the handshake done.
pub async fn tls_over<S>(socket: S, host: &str, tls: &Tls) -> Result<BoxedStream>
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let config = Arc::new(tls.client_config()?);
    let name = rustls::pki_types::ServerName::try_from(host.to_string())
        .with_context(|| format!("{host} as a TLS server name"))?;
    let stream = tokio_rustls::TlsConnector::from(config)
        .connect(name, socket)
        .await
        .with_context(|| format!("the TLS handshake with {host}"))?;
    Ok(Box::pin(stream))
}

/// Bytes read from the socket at a time, at least (the buffer grows for larger answers).
const READ_AHEAD: usize = 16 * 1024;

/// How a protocol's messages are read off the bytes a connection received.
pub trait Decode {
    /// One message (a PostgreSQL backend message, a Redis reply).
    type Frame;
    /// The protocol's errors, which the socket's errors become.
    type Error: From<std::io::Error> + std::fmt::Display;

    /// The first whole message at the front of `input`, taken off it; `None` while its end
    /// is still to be read. An error is the connection's: it can no longer be used.
    fn decode(&mut self, input: &mut BytesMut) -> Result<Option<Self::Frame>, Self::Error>;
}

/// A connection driven by the task that sends its requests, one request at a time.
pub struct Conn<D> {
    stream: BoxedStream,
    /// Bytes read and not yet decoded.
    input: BytesMut,
    decoder: D,
    /// Set while a request is on the wire; still set when the next one starts means the
    /// last one's answer was never read.
    busy: bool,
    /// Why the connection can no longer be used, once it cannot.
    broken: Option<String>,
}

impl<D: Decode> Conn<D> {
    pub fn new(stream: BoxedStream, decoder: D) -> Self {
        Conn {
            stream,
            input: BytesMut::with_capacity(READ_AHEAD),
            decoder,
            busy: false,
            broken: None,
        }
    }

    /// The protocol's decoder, for a protocol whose decoding follows what was sent (MySQL's
    /// sequence numbers).
    pub fn decoder_mut(&mut self) -> &mut D {
        &mut self.decoder
    }

    /// Writes `bytes` and flushes them, outside any request (a handshake's messages).
    pub async fn write(&mut self, bytes: &[u8]) -> Result<(), D::Error> {
        self.stream.write_all(bytes).await?;
        // TLS may hold the end of a large request in its own buffer until flushed (a no-op
        // on plain TCP).
        self.stream.flush().await?;
        Ok(())
    }

    /// The connection over TLS to `host` from here on, for a protocol that asks for TLS in
    /// the middle of its handshake; nothing may be left unread.
    pub async fn upgrade(self, host: &str, tls: &Tls) -> Result<Self> {
        if !self.input.is_empty() {
            anyhow::bail!("the server sent more than asked before TLS began");
        }
        let stream = tls_over(self.stream, host, tls).await?;
        Ok(Conn { stream, ..self })
    }

    /// The next message on the socket, read as far as it takes.
    pub async fn next(&mut self) -> Result<D::Frame, D::Error> {
        loop {
            if !self.input.is_empty()
                && let Some(frame) = self.decoder.decode(&mut self.input)?
            {
                return Ok(frame);
            }
            self.input.reserve(READ_AHEAD);
            if self.stream.read_buf(&mut self.input).await? == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                )
                .into());
            }
        }
    }

    /// Starts a request, or refuses it when the connection can no longer be used (an
    /// earlier request failed it, or was abandoned before its answer was read).
    pub fn begin(&mut self) -> Result<Request<'_, D>, D::Error> {
        if self.busy && self.broken.is_none() {
            self.broken = Some("a request was abandoned before its answer was read".into());
        }
        if let Some(why) = &self.broken {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                format!("the connection is closed: {why}"),
            )
            .into());
        }
        self.busy = true;
        Ok(Request { conn: self })
    }

    /// Sends `goodbye` and shuts the socket down, when the connection can still be used
    /// (else it is simply dropped).
    pub async fn close(mut self, goodbye: &[u8]) -> Result<(), D::Error> {
        if self.broken.is_some() || self.busy {
            return Ok(());
        }
        self.stream.write_all(goodbye).await?;
        self.stream.shutdown().await?;
        Ok(())
    }
}

/// A request under way on a [`Conn`]: sent, then its answer read, then finished.
pub struct Request<'a, D> {
    conn: &'a mut Conn<D>,
}

impl<D: Decode> Request<'_, D> {
    /// Writes `out` and flushes it. An error is the connection's (for [`Request::finish`]).
    pub async fn send(&mut self, out: &[u8]) -> Result<(), D::Error> {
        self.conn.write(out).await
    }

    /// The protocol's decoder (see [`Conn::decoder_mut`]).
    pub fn decoder_mut(&mut self) -> &mut D {
        self.conn.decoder_mut()
    }

    /// The answer's next message.
    pub async fn next(&mut self) -> Result<D::Frame, D::Error> {
        self.conn.next().await
    }

    /// The first message still to be read that `pick` keeps, waiting at most `within` for
    /// it: what a server said before it closed the connection. `None` when there is none.
    pub async fn leftover<T>(
        &mut self,
        within: Duration,
        mut pick: impl FnMut(D::Frame) -> Option<T>,
    ) -> Option<T> {
        let read = tokio::time::timeout(within, async {
            loop {
                if let Some(kept) = pick(self.conn.next().await.ok()?) {
                    return Some(kept);
                }
            }
        });
        read.await.ok().flatten()
    }

    /// Ends the request with how reading its answer went: `Ok` when it was read to its end
    /// (the connection takes the next request), an error when the connection can no longer
    /// be used (it refuses every request after, with this error as the reason).
    pub fn finish<T>(self, read: Result<T, D::Error>) -> Result<T, D::Error> {
        match &read {
            Ok(_) => self.conn.busy = false,
            Err(e) => self.conn.broken = Some(format!("{e:#}")),
        }
        read
    }
}
