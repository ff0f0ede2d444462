//! The authentication steps a MariaDB server here never takes (caching_sha2_password is
//! MySQL's), against a server that speaks each step's packets as MySQL 8 documents them;
//! the connection to a real MariaDB server is tested by the store's tests.

use mysql_common::constants::StatusFlags;
use mysql_common::packets::HandshakeResponse;
use mysql_common::scramble::{scramble_native, scramble_sha256};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::*;

const NONCE: [u8; 20] = *b"abcdefghijklmnopqrst";
const PASSWORD: &str = "Pw-sha2";

/// How the server goes on after the client's handshake response.
#[derive(Clone, Copy)]
enum Step {
    /// caching_sha2_password's fast path: the scramble is known.
    Fast,
    /// Its full authentication: the password in clear over a Unix socket, else the
    /// server's public key asked for (the server then hangs up here).
    Full,
    /// A switch to mysql_native_password with a new nonce.
    SwitchToNative,
    /// The password is refused.
    Refuse,
}

async fn read_packet(s: &mut (impl AsyncRead + Unpin)) -> (u8, Vec<u8>) {
    let mut header = [0u8; 4];
    s.read_exact(&mut header).await.unwrap();
    let len = usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
    let mut body = vec![0; len];
    s.read_exact(&mut body).await.unwrap();
    (header[3], body)
}

async fn write_packet(s: &mut (impl AsyncWrite + Unpin), seq: u8, body: &[u8]) {
    let mut out = Vec::new();
    frame(body, seq, &mut out);
    s.write_all(&out).await.unwrap();
}

/// A MySQL 8 server's side of the handshake, up to the client's COM_QUIT; what the client
/// sent as its authentication, step by step.
async fn serve(mut s: impl AsyncRead + AsyncWrite + Unpin, step: Step) -> Vec<Vec<u8>> {
    let capabilities = wanted() | CapabilityFlags::CLIENT_CONNECT_WITH_DB;
    let mut second = NONCE[8..].to_vec();
    second.push(0);
    let mut greeting = Vec::new();
    HandshakePacket::new(
        10,
        &b"8.4.3"[..],
        7,
        NONCE[..8].try_into().unwrap(),
        Some(second),
        capabilities,
        collation((8, 4, 3)),
        StatusFlags::empty(),
        Some(&b"caching_sha2_password"[..]),
    )
    .serialize(&mut greeting);
    write_packet(&mut s, 0, &greeting).await;
    let (seq, body) = read_packet(&mut s).await;
    assert_eq!(seq, 1);
    let response = ParseBuf(&body).parse::<HandshakeResponse>(()).unwrap();
    assert_eq!(response.user(), b"app");
    assert_eq!(response.db_name(), Some(&b"bench"[..]));
    let mut sent = vec![response.scramble_buf().to_vec()];
    const OK: [u8; 7] = [0x00, 0, 0, 2, 0, 0, 0];
    match step {
        Step::Fast => {
            write_packet(&mut s, 2, &[0x01, 0x03]).await;
            write_packet(&mut s, 3, &OK).await;
        }
        Step::Full => {
            write_packet(&mut s, 2, &[0x01, 0x04]).await;
            let (seq, body) = read_packet(&mut s).await;
            assert_eq!(seq, 3);
            let asks_key = body == [0x02];
            sent.push(body);
            if asks_key {
                return sent;
            }
            write_packet(&mut s, 4, &OK).await;
        }
        Step::SwitchToNative => {
            let mut switch = vec![0xFE];
            switch.extend_from_slice(b"mysql_native_password\0");
            switch.extend_from_slice(b"ABCDEFGHIJKLMNOPQRST\0");
            write_packet(&mut s, 2, &switch).await;
            let (seq, body) = read_packet(&mut s).await;
            assert_eq!(seq, 3);
            sent.push(body);
            write_packet(&mut s, 4, &OK).await;
        }
        Step::Refuse => {
            let mut error = vec![0xFF, 0x15, 0x04, b'#'];
            error.extend_from_slice(b"28000Access denied for user 'app'");
            write_packet(&mut s, 2, &error).await;
            return sent;
        }
    }
    // COM_QUIT from a new exchange.
    assert_eq!(read_packet(&mut s).await, (0, vec![0x01]));
    sent
}

fn target(port: u16, socket: Option<&str>) -> Target<'_> {
    Target {
        host: "127.0.0.1",
        port,
        socket,
        user: "app",
        password: Some(PASSWORD),
        database: Some("bench"),
        tls: None,
    }
}

/// Connects to a server taking `step` over TCP; what the client sent, and its result.
async fn over_tcp(step: Step) -> (Vec<Vec<u8>>, Result<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        serve(socket, step).await
    });
    let client = async {
        let wire = connect(&target(port, None), Duration::from_secs(10)).await?;
        wire.close().await
    };
    let result = client.await;
    (server.await.unwrap(), result)
}

#[tokio::test]
async fn caching_sha2_passwords_fast_path_sends_the_sha256_scramble() {
    let (sent, result) = over_tcp(Step::Fast).await;
    result.unwrap();
    assert_eq!(
        sent,
        [scramble_sha256(&NONCE, PASSWORD.as_bytes())
            .unwrap()
            .to_vec()]
    );
}

#[tokio::test]
async fn a_switch_to_native_password_answers_with_the_new_nonce() {
    let (sent, result) = over_tcp(Step::SwitchToNative).await;
    result.unwrap();
    assert_eq!(
        sent[1],
        scramble_native(b"ABCDEFGHIJKLMNOPQRST", PASSWORD.as_bytes()).unwrap()
    );
}

#[tokio::test]
async fn a_refused_password_is_the_servers_error() {
    let (_, result) = over_tcp(Step::Refuse).await;
    let e = format!("{:#}", result.unwrap_err());
    assert!(
        e.contains("ERROR 1045 (28000): Access denied for user 'app'"),
        "{e}"
    );
    assert!(e.contains("connecting to 127.0.0.1:"), "{e}");
}

#[cfg(unix)]
#[tokio::test]
async fn the_full_authentication_sends_the_password_in_clear_only_over_a_socket() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mysqld.sock");
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    let server = tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        serve(socket, Step::Full).await
    });
    let path = path.to_str().unwrap();
    let wire = connect(&target(0, Some(path)), Duration::from_secs(10))
        .await
        .unwrap();
    wire.close().await.unwrap();
    let sent = server.await.unwrap();
    assert_eq!(sent[1], format!("{PASSWORD}\0").as_bytes());
    // Over plain TCP the client asks for the server's key instead.
    let (sent, result) = over_tcp(Step::Full).await;
    assert_eq!(sent[1], [0x02]);
    assert!(result.is_err(), "the server hung up");
}
