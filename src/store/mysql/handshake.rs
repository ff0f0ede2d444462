//! The handshake of dbcompare's own MySQL connection ([`Wire`]): the socket, TLS after an
//! SSLRequest when the URL asks for it, and authentication with `mysql_native_password` or
//! `caching_sha2_password` (its full authentication over TLS or a Unix socket, or with the
//! server's RSA key), with a switch to either when the server asks.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use mysql_common::constants::{CapabilityFlags, MariadbCapabilities};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{
    AuthPlugin, AuthSwitchRequest, HandshakePacket, HandshakeResponse, SslRequest,
};
use mysql_common::proto::MySerialize;

use super::wire::{MAX_PACKET, Packets, Wire, frame, server_error};
use crate::store::conn::{self, BoxedStream, Conn};
use crate::store::tls::Tls;

/// The collation asked for at the handshake, as the handshake's response asks for it
/// (mysql_common's `HandshakeResponse`): `utf8mb4_general_ci` from MySQL 5.5.3 on, else
/// `utf8_general_ci`.
fn collation(version: (u16, u16, u16)) -> u8 {
    if version >= (5, 5, 3) { 45 } else { 33 }
}

/// Where and how to connect: the URL's parts the connection uses.
pub struct Target<'a> {
    pub host: &'a str,
    pub port: u16,
    /// The Unix socket to use instead of TCP.
    pub socket: Option<&'a str>,
    pub user: &'a str,
    pub password: Option<&'a str>,
    pub database: Option<&'a str>,
    /// TLS after an SSLRequest, when asked for.
    pub tls: Option<&'a Tls>,
}

/// The capabilities the client asks for (those the server has too are used).
fn wanted() -> CapabilityFlags {
    CapabilityFlags::CLIENT_PROTOCOL_41
        | CapabilityFlags::CLIENT_SECURE_CONNECTION
        | CapabilityFlags::CLIENT_LONG_PASSWORD
        | CapabilityFlags::CLIENT_LONG_FLAG
        | CapabilityFlags::CLIENT_TRANSACTIONS
        | CapabilityFlags::CLIENT_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PS_MULTI_RESULTS
        | CapabilityFlags::CLIENT_DEPRECATE_EOF
        | CapabilityFlags::CLIENT_PLUGIN_AUTH
        | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
}

/// Connects to `target` within `timeout` (socket, TLS and authentication).
pub async fn connect(target: &Target<'_>, timeout: Duration) -> Result<Wire> {
    let place = match target.socket {
        Some(path) => path.to_string(),
        None => format!("{}:{}", target.host, target.port),
    };
    match tokio::time::timeout(timeout, open(target)).await {
        Ok(Ok(wire)) => Ok(wire),
        Ok(Err(e)) => Err(e.context(format!("connecting to {place}"))),
        Err(_) => bail!("connecting to {place}: no answer within {timeout:?}"),
    }
}

/// The password XORed with the nonce, as caching_sha2_password encrypts it.
fn scrambled(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    password
        .iter()
        .enumerate()
        .map(|(i, byte)| byte ^ nonce[i % nonce.len()])
        .collect()
}

/// The socket, TLS if asked, the handshake and authentication.
async fn open(target: &Target<'_>) -> Result<Wire> {
    let (stream, mut secure): (BoxedStream, bool) = match target.socket {
        Some(path) => {
            if target.tls.is_some() {
                bail!("TLS over a Unix socket: use the socket without require_ssl, or TCP");
            }
            (
                Box::pin(conn::unix(std::path::Path::new(path)).await?),
                true,
            )
        }
        None => (Box::pin(conn::tcp(target.host, target.port).await?), false),
    };
    let mut wire = Wire {
        conn: Conn::new(stream, Packets::default()),
        out: Vec::new(),
        payload: Vec::new(),
        capabilities: CapabilityFlags::empty(),
        mariadb: MariadbCapabilities::empty(),
    };
    let greeting = wire.conn.next().await?;
    if greeting.body.first() == Some(&0xFF) {
        return Err(server_error(&greeting.body, CapabilityFlags::empty()));
    }
    let handshake = ParseBuf(&greeting.body)
        .parse::<HandshakePacket>(())
        .context("a malformed greeting from the server")?;
    let mut nonce = handshake.scramble_1_ref().to_vec();
    nonce.extend_from_slice(handshake.scramble_2_ref().unwrap_or_default());
    nonce.resize(20, 0);
    let mariadb_version = handshake.maria_db_server_version_parsed();
    let version = mariadb_version
        .or_else(|| handshake.server_version_parsed())
        .unwrap_or((0, 0, 0));
    let mut capabilities = handshake.capabilities() & wanted();
    if !capabilities.contains(CapabilityFlags::CLIENT_PROTOCOL_41) {
        bail!("the server does not speak the 4.1 protocol");
    }
    // MariaDB's extended capabilities, when it says it has them.
    let mariadb = if mariadb_version.is_some()
        && !handshake
            .capabilities()
            .contains(CapabilityFlags::CLIENT_LONG_PASSWORD)
    {
        handshake.mariadb_ext_capabilities() & MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA
    } else {
        MariadbCapabilities::empty()
    };
    // Said in the SSLRequest too: the server reads the database by these flags.
    if target.database.is_some() {
        capabilities |= CapabilityFlags::CLIENT_CONNECT_WITH_DB;
    }
    let mut seq = greeting.seq.wrapping_add(1);
    if let Some(tls) = target.tls {
        if !handshake
            .capabilities()
            .contains(CapabilityFlags::CLIENT_SSL)
        {
            bail!("the server does not accept TLS (the URL's require_ssl asks for it)");
        }
        capabilities |= CapabilityFlags::CLIENT_SSL;
        let mut payload = Vec::new();
        SslRequest::new(capabilities, MAX_PACKET, collation(version))
            .with_mariadb_capabilities(mariadb)
            .serialize(&mut payload);
        wire.out.clear();
        seq = frame(&payload, seq, &mut wire.out);
        wire.conn.decoder_mut().next = seq;
        wire.conn.write(&wire.out).await?;
        wire.conn = wire.conn.upgrade(target.host, tls).await?;
        secure = true;
    }
    let mut plugin = match handshake.auth_plugin() {
        Some(AuthPlugin::CachingSha2Password) => AuthPlugin::CachingSha2Password,
        _ => AuthPlugin::MysqlNativePassword,
    };
    let data = plugin.gen_data(target.password, &nonce);
    let mut payload = Vec::new();
    HandshakeResponse::new(
        data.as_deref(),
        version,
        Some(target.user.as_bytes()),
        target.database.map(str::as_bytes),
        Some(plugin.clone()),
        capabilities,
        None,
        MAX_PACKET,
    )
    .with_mariadb_ext_capabilities(mariadb)
    .serialize(&mut payload);
    wire.out.clear();
    wire.conn.decoder_mut().next = frame(&payload, seq, &mut wire.out);
    wire.conn.write(&wire.out).await?;
    let mut switched = false;
    loop {
        let packet = wire.conn.next().await?;
        let reply = |wire: &mut Wire, payload: &[u8]| {
            wire.out.clear();
            wire.conn.decoder_mut().next =
                frame(payload, packet.seq.wrapping_add(1), &mut wire.out);
        };
        match packet.body.first() {
            Some(0x00) => break,
            Some(0xFF) => return Err(server_error(&packet.body, capabilities)),
            Some(0xFE) if !switched => {
                switched = true;
                let switch = ParseBuf(&packet.body)
                    .parse::<AuthSwitchRequest>(())
                    .context("a malformed authentication switch")?;
                plugin = match switch.auth_plugin() {
                    AuthPlugin::CachingSha2Password => AuthPlugin::CachingSha2Password,
                    AuthPlugin::MysqlNativePassword => AuthPlugin::MysqlNativePassword,
                    other => bail!(
                        "the server asks for the {} authentication, which dbcompare's MySQL \
                         connection does not speak (it speaks mysql_native_password and \
                         caching_sha2_password)",
                        String::from_utf8_lossy(other.as_bytes())
                    ),
                };
                nonce = switch.plugin_data().to_vec();
                let mut payload = Vec::new();
                if let Some(data) = plugin.gen_data(target.password, &nonce) {
                    data.serialize(&mut payload);
                }
                reply(&mut wire, &payload);
            }
            // caching_sha2_password's next step.
            Some(0x01) if plugin == AuthPlugin::CachingSha2Password => match packet.body.get(1) {
                // The fast path: an OK follows.
                Some(0x03) => continue,
                // The full authentication: the password in clear over TLS or a socket,
                // else encrypted with the server's public key.
                Some(0x04) => {
                    let mut password = target.password.unwrap_or_default().as_bytes().to_vec();
                    password.push(0);
                    if secure {
                        reply(&mut wire, &password);
                    } else {
                        reply(&mut wire, &[0x02]);
                        wire.conn.write(&wire.out).await?;
                        let key = wire.conn.next().await?;
                        match key.body.first() {
                            Some(0x01) => {}
                            Some(0xFF) => return Err(server_error(&key.body, capabilities)),
                            _ => bail!("the server answered the request for its key unexpectedly"),
                        }
                        let key_pem = &key.body[1..];
                        let encrypted =
                            mysql_common::crypto::encrypt(&scrambled(&password, &nonce), key_pem);
                        wire.out.clear();
                        wire.conn.decoder_mut().next =
                            frame(&encrypted, key.seq.wrapping_add(1), &mut wire.out);
                    }
                }
                _ => bail!("an unexpected step of caching_sha2_password"),
            },
            _ => bail!("an unexpected packet during authentication"),
        }
        wire.conn.write(&wire.out).await?;
    }
    wire.capabilities = capabilities;
    wire.mariadb = mariadb;
    Ok(wire)
}

#[cfg(test)]
#[path = "handshake_tests.rs"]
mod tests;
