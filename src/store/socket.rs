//! The sockets of the connections dbcompare drives itself (Redis's and PostgreSQL's): TCP
//! with Nagle's algorithm off (as the stores' drivers and their benchmark tools set it), a
//! Unix socket, and TLS over TCP with the rustls configuration `--url` asked for.

use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use anyhow::{Context, Result};
use tokio::io::{AsyncRead, AsyncWrite};

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
