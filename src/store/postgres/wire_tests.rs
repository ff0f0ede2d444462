//! The tests of dbcompare's own PostgreSQL connection ([`super`]): against a throw-away
//! server, and on messages made as the server writes them.

use super::*;
use crate::catalog::StoreKind;
use crate::server;
use bytes::BufMut;
use std::str::FromStr;

/// A throw-away PostgreSQL (installed by provisioning/install.sh: a missing one fails).
fn postgres() -> server::LocalServer {
    server::throwaway(StoreKind::Postgres, server::Serve::default())
}

async fn connect(url: &str) -> Result<Wire> {
    Wire::connect(&Config::from_str(url)?, None, Duration::from_secs(10)).await
}

#[tokio::test]
async fn an_error_leaves_the_connection_usable_and_answers_larger_than_a_read_arrive_whole() {
    let server = postgres();
    let mut wire = connect(&server.url()).await.unwrap();
    let e = wire
        .simple("SELECT * FROM no_such_table")
        .await
        .unwrap_err();
    let text = format!("{e:#}");
    assert!(
        text.contains("ERROR: relation \"no_such_table\" does not exist"),
        "{text}"
    );
    assert!(text.contains("SQLSTATE 42P01"), "{text}");
    // 300 kB in one row, then a small answer: the buffer grows and nothing is left over.
    let rows = wire.simple("SELECT repeat('x', 300000), 7").await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][0].as_deref().map(str::len), Some(300_000));
    assert_eq!(rows[0][1].as_deref(), Some("7"));
    // A prepared statement with a binary parameter, and a failing execution of it.
    wire.prepare("half", "SELECT 10 / $1::int8", &[Type::INT8])
        .await
        .unwrap();
    let mut got = Vec::new();
    let rows = wire
        .execute("half", &[&2_i64], &[Type::INT8], |row| {
            let [v] = columns::<1>(row)?;
            got.push(i64::from_be_bytes(v.unwrap().try_into()?));
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!((rows, got), (1, vec![5]));
    let e = wire
        .execute("half", &[&0_i64], &[Type::INT8], |_| Ok(()))
        .await;
    assert!(format!("{:#}", e.unwrap_err()).contains("division by zero"));
    assert_eq!(
        wire.simple("SELECT 1").await.unwrap(),
        vec![vec![Some("1".into())]]
    );
    wire.close().await.unwrap();
}

#[tokio::test]
async fn an_abandoned_request_closes_the_connection_for_good() {
    let server = postgres();
    let mut wire = connect(&server.url()).await.unwrap();
    let slow = wire.simple("SELECT pg_sleep(5)");
    assert!(
        tokio::time::timeout(Duration::from_millis(200), slow)
            .await
            .is_err()
    );
    // Its answer would be read as the next request's: refused instead, every time.
    for _ in 0..2 {
        let e = wire.simple("SELECT 1").await.unwrap_err().to_string();
        assert!(e.contains("abandoned"), "{e}");
    }
}

#[tokio::test]
async fn a_wrong_password_and_a_terminated_session_give_the_servers_words() {
    let server = postgres();
    let wrong = server.url().replace(server.password(), "not-the-password");
    let e = format!("{:#}", connect(&wrong).await.err().unwrap());
    assert!(e.contains("password authentication failed"), "{e}");
    assert!(!e.contains(server.password()), "{e}");
    let mut wire = connect(&server.url()).await.unwrap();
    let pid = wire.simple("SELECT pg_backend_pid()").await.unwrap()[0][0]
        .clone()
        .unwrap();
    let mut other = connect(&server.url()).await.unwrap();
    other
        .simple(&format!("SELECT pg_terminate_backend({pid})"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let e = format!("{:#}", wire.simple("SELECT 1").await.unwrap_err());
    assert!(
        e.contains("terminating connection due to administrator command"),
        "{e}"
    );
    assert!(e.contains("the server ended the connection"), "{e}");
}

/// An ErrorResponse as the server writes it, with these fields.
fn error_response(fields: &[(u8, &str)]) -> Message {
    let mut body = BytesMut::new();
    for (kind, value) in fields {
        body.put_u8(*kind);
        body.put_slice(value.as_bytes());
        body.put_u8(0);
    }
    body.put_u8(0);
    let mut message = BytesMut::new();
    message.put_u8(b'E');
    message.put_i32(body.len() as i32 + 4);
    message.put_slice(&body);
    Message::parse(&mut message).unwrap().unwrap()
}

#[test]
fn a_server_error_keeps_its_fields_and_fatal_is_the_unlocalized_severity() {
    let Message::ErrorResponse(body) = error_response(&[
        (b'S', "FATAL"),
        (b'V', "FATAL"),
        (b'C', "57P01"),
        (b'M', "terminating connection due to administrator command"),
    ]) else {
        panic!("not an error");
    };
    let e = server_error(&body).unwrap();
    assert!(e.fatal);
    assert_eq!(
        e.to_string(),
        "FATAL: terminating connection due to administrator command (SQLSTATE 57P01)"
    );
    let Message::ErrorResponse(body) = error_response(&[
        (b'S', "ERREUR"),
        (b'V', "ERROR"),
        (b'C', "42P01"),
        (b'M', "la relation « x » n'existe pas"),
        (b'D', "a detail"),
        (b'H', "a hint"),
    ]) else {
        panic!("not an error");
    };
    let e = server_error(&body).unwrap();
    assert!(!e.fatal);
    assert_eq!(
        e.to_string(),
        "ERROR: la relation « x » n'existe pas (SQLSTATE 42P01)\nDETAIL: a detail\nHINT: a hint"
    );
}

/// A DataRow as the server writes it.
fn data_row(values: &[Option<&[u8]>]) -> DataRowBody {
    let mut body = BytesMut::new();
    body.put_i16(values.len() as i16);
    for v in values {
        match v {
            None => body.put_i32(-1),
            Some(v) => {
                body.put_i32(v.len() as i32);
                body.put_slice(v);
            }
        }
    }
    let mut message = BytesMut::new();
    message.put_u8(b'D');
    message.put_i32(body.len() as i32 + 4);
    message.put_slice(&body);
    match Message::parse(&mut message).unwrap().unwrap() {
        Message::DataRow(row) => row,
        _ => panic!("not a row"),
    }
}

#[test]
fn a_row_has_exactly_the_columns_asked_for() {
    let row = data_row(&[Some(b"a"), None, Some(b"")]);
    let [a, b, c] = columns::<3>(&row).unwrap();
    assert_eq!((a, b, c), (Some(&b"a"[..]), None, Some(&b""[..])));
    assert!(
        columns::<2>(&row)
            .unwrap_err()
            .to_string()
            .contains("3 columns")
    );
    assert!(
        columns::<4>(&row)
            .unwrap_err()
            .to_string()
            .contains("3 columns")
    );
    assert_eq!(
        text_row(&row).unwrap(),
        vec![Some("a".to_string()), None, Some(String::new())]
    );
}
