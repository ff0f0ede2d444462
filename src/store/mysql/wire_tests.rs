use super::*;

/// `payload` as packets from sequence number `seq` on.
fn framed(payload: &[u8], seq: u8) -> BytesMut {
    let mut out = Vec::new();
    frame(payload, seq, &mut out);
    BytesMut::from(&out[..])
}

#[test]
fn a_packet_is_decoded_once_whole_and_not_before() {
    let whole = framed(b"hello", 3);
    for cut in 0..whole.len() {
        let mut part = BytesMut::from(&whole[..cut]);
        let mut packets = Packets { next: 3 };
        assert!(packets.decode(&mut part).unwrap().is_none(), "cut at {cut}");
        assert_eq!(part.len(), cut, "nothing is taken off a part");
    }
    let mut input = whole.clone();
    input.extend_from_slice(&framed(b"next", 4));
    let mut packets = Packets { next: 3 };
    let packet = packets.decode(&mut input).unwrap().unwrap();
    assert_eq!((packet.seq, &packet.body[..]), (3, &b"hello"[..]));
    let packet = packets.decode(&mut input).unwrap().unwrap();
    assert_eq!((packet.seq, &packet.body[..]), (4, &b"next"[..]));
    assert!(input.is_empty());
    assert_eq!(packets.next, 5);
}

#[test]
fn a_packet_out_of_order_is_the_connections_end() {
    // A packet left over from an earlier exchange, or one the server sent unasked.
    let mut input = framed(b"stray", 2);
    let e = Packets { next: 1 }
        .decode(&mut input)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("out of order (sequence number 2 where 1 was due)"),
        "{e}"
    );
    // The second piece of a split payload must follow the first.
    let mut out = Vec::new();
    frame(&vec![0; MAX_PAYLOAD], 0, &mut out);
    out[MAX_PAYLOAD + 4 + 3] = 5;
    let e = Packets::default()
        .decode(&mut BytesMut::from(&out[..]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("sequence number 5 where 1 was due"), "{e}");
}

#[test]
fn a_payload_longer_than_a_packet_is_split_and_joined_again() {
    for len in [
        MAX_PAYLOAD - 1,
        MAX_PAYLOAD,
        MAX_PAYLOAD + 1,
        2 * MAX_PAYLOAD,
    ] {
        let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let mut out = Vec::new();
        let next = frame(&payload, 0, &mut out);
        // A payload of whole packets ends with an empty one.
        let packets = len / MAX_PAYLOAD + 1;
        assert_eq!(usize::from(next), packets, "{len}");
        assert_eq!(out.len(), len + 4 * packets, "{len}");
        let mut input = BytesMut::from(&out[..]);
        let mut decoder = Packets::default();
        let packet = decoder.decode(&mut input).unwrap().unwrap();
        assert_eq!(decoder.next, next);
        assert_eq!(packet.body.len(), len);
        assert!(packet.body[..] == payload[..], "{len}: the payload changed");
        assert_eq!(usize::from(packet.seq), packets - 1);
        assert!(input.is_empty());
    }
}

#[test]
fn an_empty_payload_is_one_empty_packet() {
    let mut out = Vec::new();
    assert_eq!(frame(&[], 7, &mut out), 8);
    assert_eq!(out, [0, 0, 0, 7]);
}

#[test]
fn text_rows_keep_null_apart_from_empty() {
    let row = [1, b'a', 0xFB, 0, 3, b'x', b'y', b'z'];
    assert_eq!(
        text_row(&row).unwrap(),
        vec![
            Some("a".to_string()),
            None,
            Some(String::new()),
            Some("xyz".to_string())
        ]
    );
    assert!(text_row(&[5, b'a']).is_err(), "a column cut short");
}

#[test]
fn server_errors_read_as_the_mysql_client_shows_them() {
    // ERR, code 1062, '#', SQL state, message.
    let mut body = vec![0xFF, 0x26, 0x04, b'#'];
    body.extend_from_slice(b"23000Duplicate entry 'x' for key 'k'");
    let e = server_error(&body, CapabilityFlags::CLIENT_PROTOCOL_41);
    let server = e.downcast_ref::<ServerError>().unwrap();
    assert_eq!(server.code, 1062);
    assert_eq!(
        e.to_string(),
        "ERROR 1062 (23000): Duplicate entry 'x' for key 'k'"
    );
    // Before the handshake's answer the server sends no SQL state.
    let mut body = vec![0xFF, 0x10, 0x04];
    body.extend_from_slice(b"Too many connections");
    let e = server_error(&body, CapabilityFlags::empty());
    assert_eq!(e.to_string(), "ERROR 1040: Too many connections");
}

#[test]
fn the_end_of_a_result_is_told_from_a_row() {
    assert!(terminates(&[0xFE, 0, 0, 2, 0, 0, 0]));
    // A text row whose first column is a string of 2^24 bytes or more also starts with 0xFE.
    let mut long = vec![0xFE];
    long.resize(MAX_PAYLOAD, 0);
    assert!(!terminates(&long));
    assert!(!terminates(&[0x00, 1]));
}
